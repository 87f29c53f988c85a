package otf2_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// python is the interpreter that has Debian's python3-otf2.
const python = "/usr/bin/python3"

// needOTF2 skips a test when python3-otf2 (the reference writer) is
// missing, except under CI=true, where that is a failure.
func needOTF2(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import otf2").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3-otf2 is not installed (apt-get install -y python3-otf2 otf2-tools); CI must run the OTF2 tests: %v", err)
		}
		t.Skipf("python3-otf2 not installed: %v", err)
	}
}

// dumpTrace writes a ptrace trace as the text the OTF2 writer script reads,
// streaming every file chunk by chunk.
func dumpTrace(t *testing.T, dir, out string) {
	t.Helper()
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for i := range d.Files {
		dumpProcess(t, d.FilePath(i), w)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func dumpProcess(t *testing.T, path string, w io.Writer) {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := trace.NewReader(fh, path)
	if err != nil {
		t.Fatal(err)
	}
	var evs bytes.Buffer
	for c, err := range r.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range c.Events {
			fmt.Fprintf(&evs, "ev %d %d %d", c.Thread, e.Kind, e.Time)
			for _, a := range e.Args {
				fmt.Fprintf(&evs, " %d", a)
			}
			evs.WriteByte('\n')
		}
	}
	tb := r.Tables()
	fmt.Fprintf(w, "proc %d %d %s\n", r.Header().Rank, len(tb.Threads), r.Header().Host)
	for _, cm := range tb.Comms {
		fmt.Fprintf(w, "comm %d %d %s", cm.Index, cm.ID, cm.Name)
		for _, m := range cm.MemberList() {
			fmt.Fprintf(w, " %d", m)
		}
		fmt.Fprintln(w)
	}
	for _, o := range tb.ClockOffsets {
		fmt.Fprintf(w, "clock %s %d %d %d\n", o.When, o.LocalNS, o.OffsetNS, o.ErrorNS)
	}
	for _, l := range tb.Locations {
		fmt.Fprintf(w, "loc %d %s %d %s\n", l.ID, l.File, l.Line, l.Func)
	}
	for id, s := range tb.Strings {
		fmt.Fprintf(w, "str %d %s\n", id, s)
	}
	w.Write(evs.Bytes())
}

// writeOTF2 converts the ptrace trace in dir into an OTF2 archive in out
// with python3-otf2, with a timer of hz ticks per second, and returns the
// anchor file.
func writeOTF2(t *testing.T, dir, out string, hz int64) string {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "dump.txt")
	dumpTrace(t, dir, dump)
	cmd := exec.Command(python, "testdata/write_otf2.py", dump, out, fmt.Sprint(hz))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write_otf2.py: %v\n%s", err, b)
	}
	return filepath.Join(out, "traces.otf2")
}

// analyze runs the whole pipeline on k in-process ranks and returns the
// report's JSON.
func analyze(t *testing.T, dir string, k int) []byte {
	t.Helper()
	return analyzeWith(t, driver.Options{Dir: dir}, k)
}

func analyzeWith(t *testing.T, o driver.Options, k int) []byte {
	t.Helper()
	dir := o.Dir
	var rep *report.Report
	err := inproc.Run(k, func(c comm.Comm) error {
		r, err := driver.Run(c, o)
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatalf("analyze %s on %d ranks: %v", dir, k, err)
	}
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// analyzeOn1And2 analyses the archive at anchor on 1 and 2 analysis
// ranks, asks for the same JSON, and returns the report with its JSON.
func analyzeOn1And2(t *testing.T, anchor string) (report.Report, []byte) {
	t.Helper()
	js := analyzeWith(t, driver.Options{Dir: anchor}, 1)
	if js2 := analyzeWith(t, driver.Options{Dir: anchor}, 2); !bytes.Equal(js, js2) {
		t.Error("the report differs on 1 and 2 ranks")
	}
	var rep report.Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, js
}

// sections are the report parts an OTF2 copy must reproduce exactly.
var sections = []string{"breakdown", "pop", "clocksync", "critical_path", "graph", "tasks"}

// TestRoundTrip: gen workloads written as OTF2 by python3-otf2 analyse to
// the same report sections as the native trace, and both match
// expected.json; timers of 1 GHz and 2.1 GHz convert exactly.
func TestRoundTrip(t *testing.T) {
	needOTF2(t)
	cases := []struct {
		name string
		cfg  gen.Config
		hz   int64
	}{
		{"halo-skew-drift", gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 6, SkewNS: 2_000_000, DriftPPM: 30, LatencyNS: 2000, Seed: 3}, 1_000_000_000},
		{"halo-allreduce-2.1GHz", gen.Config{Workload: "halo", Ranks: 2, Threads: 3, Iterations: 5, Exchange: "allreduce", SkewNS: 500_000, LatencyNS: 2000, Seed: 4}, 2_100_000_000},
		{"imbalance", gen.Config{Workload: "imbalance", Ranks: 1, Threads: 4, Iterations: 5}, 1_000_000_000},
		{"forkjoin-2.1GHz", gen.Config{Workload: "forkjoin", Ranks: 2, Threads: 3, Width: 6, Steps: 4, Jitter: 0.3, Seed: 5}, 2_100_000_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "native")
			if _, err := gen.Generate(dir, tc.cfg); err != nil {
				t.Fatal(err)
			}
			exp, err := gen.ReadExpected(filepath.Join(dir, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "otf2")
			anchor := writeOTF2(t, dir, out, tc.hz)
			k := min(2, tc.cfg.Ranks)
			native := analyze(t, dir, k)
			for _, src := range []string{anchor, out} {
				conv := analyze(t, src, k)
				nd, err := gen.Compare(native, exp)
				if err != nil {
					t.Fatal(err)
				}
				cd, err := gen.Compare(conv, exp)
				if err != nil {
					t.Fatal(err)
				}
				cd = dropParallelLoc(dropColumnOnly(cd))
				// The OTF2 copy must match expected.json exactly where the
				// native trace does (drift rounding may cost both 1 ns).
				if strings.Join(cd, "\n") != strings.Join(nd, "\n") {
					t.Errorf("%s vs expected.json:\n%s\nnative trace vs expected.json:\n%s", src, strings.Join(cd, "\n"), strings.Join(nd, "\n"))
				}
				var a, b map[string]any
				if err := json.Unmarshal(native, &a); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(conv, &b); err != nil {
					t.Fatal(err)
				}
				for _, s := range []string{"breakdown", "pop", "clocksync"} {
					if b[s] == nil {
						t.Errorf("%s: the report has no %s section", src, s)
					}
				}
				// The converted times are on the archive's own time base
				// (its ClockOffsets applied, as OTF2's readers do), so the
				// OTF2 copy reports offset 0 and no violations before the
				// interpolation, where the native trace reports the offsets
				// and the violations of its raw clocks; from the
				// interpolation on, both are the same.
				for _, d := range clockDiff(a["clocksync"], b["clocksync"]) {
					t.Errorf("%s: clocksync: %s", src, d)
				}
				for _, s := range sections {
					if s == "clocksync" {
						continue
					}
					for _, d := range jsonDiff(s, a[s], b[s]) {
						t.Errorf("%s: differs from the native trace: %s", src, d)
					}
				}
			}
		})
	}
}

// TestNoClockSyncKeepsOffsets: the archive's ClockOffsets are its time
// base, applied with or without --no-clocksync (as OTF2's readers and
// Scalasca apply them): on an archive whose clocks are skewed and drift,
// --no-clocksync gives the wait states of the offset-corrected native
// trace, where dropping the offsets would move every message.
func TestNoClockSyncKeepsOffsets(t *testing.T) {
	needOTF2(t)
	dir := filepath.Join(t.TempDir(), "native")
	if _, err := gen.Generate(dir, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 6, SkewNS: 2_000_000, DriftPPM: 30, LatencyNS: 2000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	anchor := writeOTF2(t, dir, filepath.Join(t.TempDir(), "otf2"), 1_000_000_000)
	var native, conv map[string]any
	if err := json.Unmarshal(analyze(t, dir, 1), &native); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(analyzeWith(t, driver.Options{Dir: anchor, NoClockSync: true}, 1), &conv); err != nil {
		t.Fatal(err)
	}
	cs, _ := conv["clocksync"].(map[string]any)
	ns, _ := native["clocksync"].(map[string]any)
	if cs["method"] != "none" || cs["violations_before"] != ns["violations_interpolated"] {
		t.Errorf("--no-clocksync on the archive: method %v, %v violations; want none and the native trace's %v after interpolation",
			cs["method"], cs["violations_before"], ns["violations_interpolated"])
	}
	if ns["max_correction_ns"] != 0.0 {
		t.Skipf("the CLC moved events of the native trace (%v ns): the comparison needs a workload it leaves alone", ns["max_correction_ns"])
	}
	for _, s := range []string{"breakdown", "pop"} {
		for _, d := range jsonDiff(s, native[s], conv[s]) {
			t.Errorf("--no-clocksync: %s", d)
		}
	}
	// The wait states' times (the parallel regions' names differ: the
	// python writer records no parallel region for a fork to take).
	nw, _ := native["wait_states"].(map[string]any)
	cw, _ := conv["wait_states"].(map[string]any)
	if nw == nil || cw == nil {
		t.Fatal("no wait states")
	}
	for _, k := range []string{"per_process", "call_sites", "late_sender_ns", "wait_nxn_ns", "mpi_ns"} {
		for _, d := range jsonDiff("wait_states."+k, nw[k], cw[k]) {
			t.Errorf("--no-clocksync: %s", d)
		}
	}
}

// clockDiff compares the clocksync sections of a native trace (a) and its
// OTF2 copy (b): equal but for what the raw clocks showed.
func clockDiff(a, b any) []string {
	x, _ := a.(map[string]any)
	y, _ := b.(map[string]any)
	if x == nil || y == nil {
		return []string{"missing"}
	}
	var out []string
	if v := y["violations_before"]; v != y["violations_interpolated"] {
		out = append(out, fmt.Sprintf("otf2 copy: violations_before %v, want its violations_interpolated %v", v, y["violations_interpolated"]))
	}
	pa, _ := x["per_process"].([]any)
	pb, _ := y["per_process"].([]any)
	if len(pa) != len(pb) {
		return append(out, fmt.Sprintf("%d vs %d processes", len(pa), len(pb)))
	}
	for i := range pb {
		p, _ := pb[i].(map[string]any)
		for _, k := range []string{"offset_init_ns", "offset_final_ns", "drift_ppm"} {
			if p[k] != 0.0 {
				out = append(out, fmt.Sprintf("otf2 copy: per_process[%d].%s = %v, want 0", i, k, p[k]))
			}
		}
		if p["violations"] != p["violations_interpolated"] {
			out = append(out, fmt.Sprintf("otf2 copy: per_process[%d].violations %v, want its violations_interpolated %v", i, p["violations"], p["violations_interpolated"]))
		}
		q, _ := pa[i].(map[string]any)
		for _, k := range []string{"offset_init_ns", "offset_final_ns", "drift_ppm", "violations", "offset_source"} {
			delete(p, k)
			delete(q, k)
		}
	}
	for _, k := range []string{"violations_before"} {
		delete(x, k)
		delete(y, k)
	}
	return append(out, jsonDiff("clocksync", x, y)...)
}

// jsonDiff lists the paths where two decoded JSON values differ.
func jsonDiff(path string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v vs %v", path, a, b)}
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var out []string
		for _, k := range ks {
			out = append(out, jsonDiff(path+"."+k, x[k], y[k])...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{fmt.Sprintf("%s: %.200v vs %.200v", path, a, b)}
		}
		var out []string
		for i := range x {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])...)
		}
		return out
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok && (stripCol(x) == y || stripCallSite(x) == y) {
			return nil
		}
		if b == nil && strings.HasSuffix(path, ".site") {
			return nil // an MPI call site: OTF2 carries none
		}
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: native %v, otf2 %v", path, a, b)}
	}
	return nil
}

// OTF2 regions carry a source file and line but no column, so construct
// names of a converted trace are file:line where ptrace's are file:line:col.
var colRE = regexp.MustCompile(`^(.+:[0-9]+):[0-9]+$`)

func stripCol(s string) string { return colRE.ReplaceAllString(s, "$1") }

// OTF2's MPI region enters carry no call site (format version 4 has one,
// "MPI_Send at halo.c:57:3"): a converted trace names MPI calls by function.
func stripCallSite(s string) string {
	if fn, _, ok := strings.Cut(s, " at "); ok && strings.HasPrefix(fn, "MPI_") {
		return fn
	}
	return s
}

var wantGotRE = regexp.MustCompile(`want (\S+), got (\S+)$`)

// OTF2's ThreadFork names no region, so a converted parallel region has no
// location and the OpenMP wait states name none for the constructs in it.
var parallelLocRE = regexp.MustCompile(`^wait_states\.openmp\.constructs\[[0-9]+\]\.region: missing in the report`)

// dropParallelLoc removes the mismatches of the parallel regions' locations.
func dropParallelLoc(diffs []string) []string {
	var out []string
	for _, d := range diffs {
		if !parallelLocRE.MatchString(d) {
			out = append(out, d)
		}
	}
	return out
}

// dropColumnOnly removes mismatches that are only a construct name's column.
func dropColumnOnly(diffs []string) []string {
	var out []string
	for _, d := range diffs {
		if m := wantGotRE.FindStringSubmatch(d); m != nil && stripCol(m[1]) == m[2] && m[1] != m[2] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// TestDependencesUnavailable: a task workload with dependences converts,
// and the report warns that OTF2 carried none.
func TestDependencesUnavailable(t *testing.T) {
	needOTF2(t)
	dir := filepath.Join(t.TempDir(), "native")
	if _, err := gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 1, Threads: 2, Width: 4, Steps: 3, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	anchor := writeOTF2(t, dir, filepath.Join(t.TempDir(), "otf2"), 1_000_000_000)
	js := analyze(t, anchor, 1)
	if !strings.Contains(string(js), "OTF2 records no task dependences") {
		t.Errorf("the report does not warn that task dependences are unavailable:\n%.2000s", js)
	}
	if !strings.Contains(string(js), `"unavailable": [
      "task_dependences"
    ]`) {
		t.Errorf("the report does not mark task dependences unavailable:\n%.2000s", js)
	}
}
