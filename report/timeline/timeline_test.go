package timeline

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

func genTrace(t *testing.T, cfg gen.Config) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	return dir
}

func export(t *testing.T, dir string, o Options) ([]byte, *Stats) {
	t.Helper()
	var b bytes.Buffer
	st, err := Export(&b, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), st
}

// countKinds counts events of the given kinds in a trace, by streaming it.
func countKinds(t *testing.T, dir string, kinds ...trace.Kind) map[trace.Kind]int {
	t.Helper()
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[trace.Kind]int{}
	for r := 0; r < d.NRanks(); r++ {
		f, err := os.Open(d.FilePath(r))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := trace.NewReader(f, d.FilePath(r))
		if err != nil {
			t.Fatal(err)
		}
		for c, err := range rd.Chunks() {
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range c.Events {
				for _, k := range kinds {
					if e.Kind == k {
						out[k]++
					}
				}
			}
		}
		f.Close()
	}
	return out
}

// Every workload exports to valid trace-event JSON with one arrow per
// message, per runtime-reported dependence and per remote dependence, and
// with clock skew and drift corrected every arrow goes forward in time.
func TestExportValid(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "stencil", Ranks: 3, Threads: 3, Width: 18, Steps: 12, Jitter: 0.3, LatencyNS: 2000, SkewNS: 1_000_000, DriftPPM: 50},
		{Workload: "nearest", Ranks: 2, Threads: 4, Width: 16, Steps: 10, Radix: 5, Fraction: 0.5, LatencyNS: 2000, SkewNS: 500_000},
		{Workload: "halo", Ranks: 4, Threads: 3, Iterations: 12, RankImbalance: 0.5, LatencyNS: 5000, SkewNS: 2_000_000, DriftPPM: 100},
		{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 5, Exchange: "allreduce"},
		{Workload: "forkjoin", Ranks: 2, Threads: 4, Width: 10, Steps: 5, Jitter: 0.5},
		{Workload: "imbalance", Ranks: 1, Threads: 4, Iterations: 5},
	} {
		t.Run(cfg.Workload, func(t *testing.T) {
			dir := genTrace(t, cfg)
			data, st := export(t, dir, Options{})
			c := check(data, false)
			for _, p := range c.problems {
				t.Error(p)
			}
			n := countKinds(t, dir, trace.MPISend, trace.MPIRecv, trace.TaskDependence, trace.RemoteDepOut, trace.TaskCreate)
			if got := len(c.pairs("message")); got != n[trace.MPISend] || n[trace.MPISend] != n[trace.MPIRecv] {
				t.Errorf("%d message arrows, %d sends, %d receives", got, n[trace.MPISend], n[trace.MPIRecv])
			}
			if got := len(c.pairs("task_dependence")); got != n[trace.TaskDependence] {
				t.Errorf("%d dependence arrows, %d task_dependence events", got, n[trace.TaskDependence])
			}
			if got := len(c.pairs("remote_dependence")); got != n[trace.RemoteDepOut] {
				t.Errorf("%d remote arrows, %d remote_dep_out events", got, n[trace.RemoteDepOut])
			}
			if st.Flows != int64(len(c.flows)) {
				t.Errorf("stats count %d arrows, output has %d", st.Flows, len(c.flows))
			}
			for _, cat := range []string{"message", "remote_dependence", "task_dependence"} {
				for _, p := range c.pairs(cat) {
					if p[1].ts < p[0].ts {
						t.Errorf("%s arrow goes back in time: %.3f → %.3f µs", cat, p[0].ts, p[1].ts)
						break
					}
				}
			}
			if len(c.pids) != cfg.Ranks {
				t.Errorf("%d processes, want %d", len(c.pids), cfg.Ranks)
			}
			tasks := 0
			for name, k := range c.byName {
				if strings.HasPrefix(name, cfg.Workload+".c:") && !strings.Contains(name, "parallel") {
					tasks += k
				}
			}
			if tasks != n[trace.TaskCreate] {
				t.Errorf("%d task slices named by construct, %d tasks created", tasks, n[trace.TaskCreate])
			}
			if c.minTS != 0 {
				t.Errorf("first ts %.3f, want 0 (the origin)", c.minTS)
			}
		})
	}
}

type rawClock struct{}

type identity struct{}

func (identity) Map(_ int, t int64) int64 { return t }

func (rawClock) Process(ProcessClock) (Mapping, error) { return identity{}, nil }

// The correction matters: without it, skewed clocks make message arrows go
// back in time; with it, none do, and the task slices have their planned
// durations (drift corrected).
func TestExportClockCorrection(t *testing.T) {
	dir := genTrace(t, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 10, LatencyNS: 1000, SkewNS: 3_000_000, DriftPPM: 200, Seed: 3})
	raw, _ := export(t, dir, Options{Clock: rawClock{}})
	back := 0
	for _, p := range check(raw, false).pairs("message") {
		if p[1].ts < p[0].ts {
			back++
		}
	}
	if back == 0 {
		t.Error("uncorrected skewed clocks give no backward arrow: the test cannot see the correction")
	}
	fixed, _ := export(t, dir, Options{})
	for _, p := range check(fixed, false).pairs("message") {
		// Latency is 1 µs; interpolation is exact on gen's linear clocks up
		// to rounding (a nanosecond on each side).
		if d := p[1].ts - p[0].ts; d < 0.995 {
			t.Errorf("corrected message takes %.3f µs, latency is 1 µs", d)
		}
	}
}

// Task slices last as long as the tasks ran (no jitter: 50 µs each, and an
// injected outlier 8× that).
func TestExportTaskDurations(t *testing.T) {
	dir := genTrace(t, gen.Config{Workload: "stencil", Ranks: 2, Threads: 2, Width: 8, Steps: 6, Outliers: 1, DriftPPM: 100, SkewNS: 10_000})
	data, _ := export(t, dir, Options{})
	c := check(data, false)
	durs := map[float64]int{}
	for tr, ss := range c.slices {
		_ = tr
		for _, s := range ss {
			durs[roundUS(s[1]-s[0])]++
		}
	}
	if durs[50] != 8*6-1 || durs[400] != 1 {
		t.Errorf("task slice durations %v: want 47 of 50 µs and one of 400 µs", durs)
	}
}

func roundUS(v float64) float64 {
	if v < 0 {
		return -roundUS(-v)
	}
	return float64(int64(v + 0.5))
}

// --ranks and --window cut the export: only those processes, only events in
// the window (slices clipped to it), still well nested.
func TestExportCut(t *testing.T) {
	dir := genTrace(t, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 20, LatencyNS: 1000, SkewNS: 100_000})
	w, err := ParseWindow("5ms:12ms")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := export(t, dir, Options{Ranks: []int{1, 2}, Window: w})
	c := check(data, true)
	for _, p := range c.problems {
		t.Error(p)
	}
	if len(c.pids) != 2 || !c.pids[2] || !c.pids[3] {
		t.Errorf("processes %v, want ranks 1 and 2 (pids 2, 3)", c.pids)
	}
	if c.minTS < 5000 || c.maxTS > 12000 {
		t.Errorf("events from %.3f to %.3f µs, window is 5000..12000", c.minTS, c.maxTS)
	}
	if len(c.pairs("message")) == 0 {
		t.Error("no message arrow between ranks 1 and 2 in the window")
	}
	if _, err := Export(io.Discard, dir, Options{Ranks: []int{7}}); err == nil {
		t.Error("rank 7 of 4 accepted")
	}
}

// The critical path is drawn on its own track per rank with an arrow from
// each segment to the next.
func TestExportCriticalPath(t *testing.T) {
	dir := genTrace(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 4})
	first, _, err := firstEvent(dir + "/" + trace.FileName(0))
	if err != nil {
		t.Fatal(err)
	}
	segs := []report.PathNode{
		{Rank: 0, Thread: 0, Kind: "task", Construct: "a.c:1", StartNS: first + 1000, DurNS: 5000},
		{Rank: 1, Thread: 1, Kind: "message", StartNS: first + 6000, DurNS: 1000},
		{Rank: 1, Thread: 1, Kind: "task", Construct: "a.c:1", StartNS: first + 7000, DurNS: 3000},
		{Rank: 2, Thread: 0, Kind: "task", Construct: "b.c:2", StartNS: first + 10000, DurNS: 0},
	}
	data, _ := export(t, dir, Options{CriticalPath: segs})
	c := check(data, false)
	for _, p := range c.problems {
		t.Error(p)
	}
	if c.byName["a.c:1"] != 2 || c.byName["b.c:2"] != 1 || c.byName["message"] != 1 {
		t.Errorf("critical path slices %v", c.byName)
	}
	if n := len(c.pairs("critical_path")); n != 3 {
		t.Errorf("%d critical-path arrows, want 3", n)
	}
	var xs [][2]float64
	for tr, ss := range c.slices {
		if tr.tid == critTID && tr.pid == 2 {
			xs = ss
		}
	}
	if len(xs) != 2 || xs[0] != [2]float64{6, 7} || xs[1] != [2]float64{7, 10} {
		t.Errorf("rank 1's critical-path track %v, want [6,7] [7,10] µs", xs)
	}
}

func TestParse(t *testing.T) {
	w, err := ParseWindow("1.5ms:2000000")
	if err != nil || w.Start != 1_500_000 || w.End != 2_000_000 {
		t.Errorf("window %+v %v", w, err)
	}
	if w, err := ParseWindow(":3s"); err != nil || w.Start != 0 || w.End != 3e9 {
		t.Errorf("open window %+v %v", w, err)
	}
	for _, bad := range []string{"5ms", "2ms:1ms", "x:1"} {
		if _, err := ParseWindow(bad); err == nil {
			t.Errorf("window %q accepted", bad)
		}
	}
	r, err := ParseRanks("0, 3,5-7")
	if err != nil || len(r) != 5 || r[0] != 0 || r[1] != 3 || r[4] != 7 {
		t.Errorf("ranks %v %v", r, err)
	}
	for _, bad := range []string{"", "a", "3-1", "-2"} {
		if _, err := ParseRanks(bad); err == nil {
			t.Errorf("ranks %q accepted", bad)
		}
	}
}

// Names with quotes, backslashes, control characters and invalid UTF-8
// still give valid JSON.
func TestJSONString(t *testing.T) {
	for _, s := range []string{`a"b\c`, "tab\there\x01", "bad \xff utf8", "µs ✓"} {
		var got string
		b := appendJSONString(nil, s)
		if err := jsonUnmarshalString(b, &got); err != nil {
			t.Errorf("%q → %s: %v", s, b, err)
		}
	}
}

// A POSIX threads mutex (ptrace's mutex kind 256, OTF2 archives of
// Score-P's pthread adapter) is named as such on the timeline, its wait
// drawn (its acquire always has an acquired), not "mutex 256".
func TestPthreadMutexName(t *testing.T) {
	if got := mutexName(trace.MutexPthread); got != "pthread mutex" || !waitSlice(trace.MutexPthread) {
		t.Errorf("mutex kind %d: %q, wait drawn %v", trace.MutexPthread, got, waitSlice(trace.MutexPthread))
	}
}
