package gen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// Every workload writes a trace that validates cleanly, with a manifest and
// an expected.json, with and without clock skew.
func TestWorkloadsValidate(t *testing.T) {
	for _, wl := range Workloads {
		for _, cfg := range []Config{
			{Workload: wl, Ranks: 3, Threads: ThreadsFor(wl, 2), Jitter: 0.2, LatencyNS: 1000},
			{Workload: wl, Ranks: 2, Threads: ThreadsFor(wl, 3), SkewNS: 1_000_000, DriftPPM: 50, LatencyNS: 1000},
			{Workload: wl, Ranks: 1, Threads: 1},
		} {
			dir := filepath.Join(t.TempDir(), wl)
			res, err := Generate(dir, cfg)
			if err != nil {
				t.Fatalf("%s %+v: %v", wl, cfg, err)
			}
			problems, st, err := trace.ValidateDir(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("%s: %v", wl, p)
			}
			if st.Events != res.Events || res.Events == 0 {
				t.Errorf("%s: validate saw %d events, gen wrote %d", wl, st.Events, res.Events)
			}
			b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["schema"] != "ptrace.report/v1" {
				t.Errorf("%s: expected.json schema %v", wl, m["schema"])
			}
		}
	}
}

// --events scales a workload to roughly the asked size.
func TestEventsTarget(t *testing.T) {
	for _, wl := range Workloads {
		res, err := Generate(t.TempDir(), Config{Workload: wl, Ranks: 2, Threads: ThreadsFor(wl, 4), Events: 200_000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Events < 100_000 || res.Events > 400_000 {
			t.Errorf("%s: asked 200000 events, got %d", wl, res.Events)
		}
	}
}

// The imbalance workload's expected values are POT's formulas.
func TestImbalanceExpected(t *testing.T) {
	res, err := Generate(t.TempDir(), Config{Workload: "imbalance", Ranks: 2, Threads: 4, GrainNS: 1000, Iterations: 10})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Expected["breakdown"].(map[string]any)
	// per rank: work = I·g·n(n+1)/2 = 10·1000·10, idle = I·g·n(n−1)/2 = 10·1000·6
	if b["work_ns"] != int64(2*100_000) || b["idleness_ns"] != int64(2*60_000) {
		t.Errorf("breakdown %v", b)
	}
}

// --outliers lists the injected tasks in expected.json, lengthens the run
// accordingly, and is refused where there are no explicit tasks.
func TestOutliers(t *testing.T) {
	base, err := Generate(t.TempDir(), Config{Workload: "stencil", Ranks: 2, Threads: 2, Width: 8, Steps: 10})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generate(t.TempDir(), Config{Workload: "stencil", Ranks: 2, Threads: 2, Width: 8, Steps: 10, Outliers: 3})
	if err != nil {
		t.Fatal(err)
	}
	inj := res.Expected["anomalies"].(map[string]any)["tasks"].([]any)
	if len(inj) != 3 {
		t.Errorf("injected %v, want 3 entries", inj)
	}
	work := func(r *Result) int64 { return r.Expected["breakdown"].(map[string]any)["work_ns"].(int64) }
	// Each outlier adds 7 nominal durations (50 µs, no jitter) of work.
	if got, want := work(res)-work(base), int64(3*7*50_000); got != want {
		t.Errorf("outliers added %d ns of work, want %d", got, want)
	}
	if _, err := Generate(t.TempDir(), Config{Workload: "halo", Outliers: 1}); err == nil {
		t.Error("halo accepted --outliers")
	}
	if _, err := Generate(t.TempDir(), Config{Workload: "stencil", Width: 4, Steps: 1, Outliers: 5}); err == nil {
		t.Error("more outliers than tasks accepted")
	}
}

// --inflation and --serial apply where they mean something; --family needs
// a task pattern and two distinct thread counts; a family member's tasks
// are InflationFactor× longer and the serial task is its own construct.
func TestFamilyOptions(t *testing.T) {
	for _, cfg := range []Config{
		{Workload: "halo", Inflation: 0.1},
		{Workload: "forkjoin", SerialNS: 1000},
		{Workload: "stencil", Threads: 3, Inflation: -0.6},
	} {
		if _, err := Generate(t.TempDir(), cfg); err == nil {
			t.Errorf("%+v: accepted", cfg)
		}
	}
	for _, threads := range [][]int{{4}, {2, 2}} {
		if _, err := GenerateFamily(t.TempDir(), Config{Workload: "stencil"}, threads); err == nil {
			t.Errorf("family %v: accepted", threads)
		}
	}
	if _, err := GenerateFamily(t.TempDir(), Config{Workload: "halo"}, []int{1, 2}); err == nil {
		t.Error("halo family: accepted")
	}
	fr, err := GenerateFamily(t.TempDir(), Config{Workload: "stencil", Width: 8, Steps: 3, Inflation: 0.5, SerialNS: 7000}, []int{3, 1})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(fr.Dirs[0]) != "threads-1" || filepath.Base(fr.Dirs[1]) != "threads-3" {
		t.Errorf("dirs %v, want increasing thread counts", fr.Dirs)
	}
	cons := fr.Runs[1].Expected["tasks"].(map[string]any)["constructs"].([]any)
	if len(cons) != 2 {
		t.Fatalf("constructs %v", cons)
	}
	pat, ser := cons[0].(map[string]any), cons[1].(map[string]any)
	if pat["mean_ns"] != int64(100_000) || ser["name"] != SerialConstruct("stencil") || ser["sum_ns"] != int64(7000) {
		t.Errorf("3 threads: pattern %v, serial %v (want 50 µs × 2 and one 7 µs task)", pat, ser)
	}
}

// mpi --poll: the receives posted early complete in MPI_Test loops, each
// loop's first test carrying the request's mpi_polled (the loops whose
// message arrived before their first test have none); the trace
// validates; the options apply to mpi only and are non-negative.
func TestMPIPoll(t *testing.T) {
	cfg := Config{Workload: "mpi", Ranks: 3, Iterations: 6, LatencyNS: 2000, PollNS: 7000}
	dir := filepath.Join(t.TempDir(), "mpi")
	if _, err := Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	problems, _, err := trace.ValidateDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	w := newPureMPI(new(Defaults(cfg)))
	if err := w.plan(); err != nil {
		t.Fatal(err)
	}
	// Iterations 1 and 4 exchange by an early MPI_Irecv (rank 1 from 0):
	// in 1 the sender computes 1.5 ms, the receiver 1 ms, so the receiver
	// tests every 35 µs (7 µs + a 28 µs gap) from 1 ms on: 15 tests
	// before the send at 1.5 ms, each wholly before it (105 µs of Late
	// Sender), the message (2 µs) in before the 16th, which completes
	// it; in 4 the receiver is the later one: its first test completes.
	var tests, polled int
	var wait int64
	for _, cl := range w.calls[1] {
		if cl.fn != "MPI_Test" {
			continue
		}
		tests++
		for _, e := range cl.evs {
			if e.k == trace.MPIPolled {
				polled++
			}
		}
		wait += cl.wait
	}
	if tests != 17 || polled != 1 || wait != 15*7000 {
		t.Errorf("rank 1: %d MPI_Test calls, %d mpi_polled, Late Sender %d ns; want 17, 1, %d", tests, polled, wait, 15*7000)
	}
	for _, bad := range []Config{
		{Workload: "nbc", PollNS: 1000},
		{Workload: "mpi", PollNS: -1},
		{Workload: "mpi", PollGapNS: 1000},
	} {
		if _, err := Generate(t.TempDir(), bad); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}
