package compare_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/compare"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
)

func analyze(t testing.TB, dir string) *report.Report {
	t.Helper()
	var rep *report.Report
	err := inproc.Run(1, func(c comm.Comm) error {
		r, err := driver.Run(c, driver.Options{Dir: dir})
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatalf("analyze %s: %v", dir, err)
	}
	return rep
}

// family generates a family of runs and analyses every member.
func family(t testing.TB, cfg gen.Config, threads []int) (*gen.FamilyResult, []compare.Input) {
	t.Helper()
	fr, err := gen.GenerateFamily(filepath.Join(t.TempDir(), "fam"), cfg, threads)
	if err != nil {
		t.Fatal(err)
	}
	var in []compare.Input
	for _, d := range fr.Dirs {
		in = append(in, compare.Input{Arg: d, Report: analyze(t, d)})
	}
	return fr, in
}

func jsonOf(t testing.TB, r *compare.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := compare.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A generated family with known work-time inflation and a serial task:
// compare recovers computation scalability, per-construct inflation and
// the work/span bounds exactly (expected-compare.json), single- and
// multi-rank, with and without jitter.
func TestFamilyGroundTruth(t *testing.T) {
	for _, tc := range []struct {
		cfg     gen.Config
		threads []int
	}{
		{gen.Config{Workload: "stencil", Width: 32, Steps: 12, Inflation: 0.1, SerialNS: 500_000}, []int{1, 2, 4, 8}},
		{gen.Config{Workload: "stencil", Ranks: 2, Width: 24, Steps: 8, Inflation: 0.25, SerialNS: 200_000, Jitter: 0.3, LatencyNS: 2000}, []int{1, 3, 6}},
		{gen.Config{Workload: "nearest", Width: 16, Steps: 10, Radix: 5, Inflation: 0.05}, []int{2, 4}},
	} {
		name := fmt.Sprintf("%s/%d ranks/%v", tc.cfg.Workload, max(tc.cfg.Ranks, 1), tc.threads)
		fr, in := family(t, tc.cfg, tc.threads)
		res, err := compare.Compare(in, compare.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diffs, err := gen.Compare(jsonOf(t, res), fr.Expected)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("%s: %s", name, d)
		}
		if len(res.Problems) != 0 || res.Reference != fr.Dirs[0] {
			t.Errorf("%s: problems %v, reference %s", name, res.Problems, res.Reference)
		}
		// Without jitter the configured factor itself comes back.
		if tc.cfg.Jitter == 0 {
			cons := res.Constructs[0]
			for i, run := range res.Runs {
				want := 1 + tc.cfg.Inflation*float64(run.Cores/max(tc.cfg.Ranks, 1)-1) // inflation vs threads
				ref := 1 + tc.cfg.Inflation*float64(res.Runs[0].Cores/max(tc.cfg.Ranks, 1)-1)
				if got := cons.Runs[i].MeanInflation; math.Abs(got-want/ref) > 1e-12 {
					t.Errorf("%s: run %d mean inflation %v, configured %v", name, i, got, want/ref)
				}
			}
		}
	}
}

// Reports read back from their JSON compare exactly like the reports the
// analysis returned.
func TestJSONRoundTrip(t *testing.T) {
	_, in := family(t, gen.Config{Workload: "stencil", Width: 16, Steps: 6, Inflation: 0.2, SerialNS: 100_000}, []int{1, 2, 4})
	want, err := compare.Compare(in, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	back := make([]compare.Input, len(in))
	for i, x := range in {
		var b bytes.Buffer
		if err := report.WriteJSON(&b, x.Report); err != nil {
			t.Fatal(err)
		}
		r, err := report.ReadJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		back[i] = compare.Input{Arg: x.Arg + ".json", Report: r}
	}
	got, err := compare.Compare(back, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := jsonOf(t, want), jsonOf(t, got); !bytes.Equal(a, b) {
		t.Errorf("comparison of read-back reports differs:\n%s\nvs\n%s", a, b)
	}
	var ta, tb bytes.Buffer
	compare.WriteText(&ta, want, compare.TextOptions{})
	compare.WriteText(&tb, got, compare.TextOptions{})
	if ta.String() != tb.String() {
		t.Errorf("text differs")
	}
}

// A run of another program, a run that failed to load: each is named in
// Problems and the others are still compared; --ref picks the group.
func TestProblemsLeaveOthers(t *testing.T) {
	_, in := family(t, gen.Config{Workload: "stencil", Width: 16, Steps: 6, Inflation: 0.1}, []int{1, 2, 4})
	other := filepath.Join(t.TempDir(), "forkjoin")
	if _, err := gen.Generate(other, gen.Config{Workload: "forkjoin", Threads: 2, Width: 4, Steps: 3}); err != nil {
		t.Fatal(err)
	}
	halo := filepath.Join(t.TempDir(), "halo")
	if _, err := gen.Generate(halo, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3}); err != nil {
		t.Fatal(err)
	}
	in = append(in, compare.Input{Arg: other, Report: analyze(t, other)}, compare.Input{Arg: halo, Report: analyze(t, halo)},
		compare.Input{Arg: "broken", Err: fmt.Errorf("rank-000000.ptrace: offset 123: truncated chunk")})
	res, err := compare.Compare(in, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Errorf("compared %d runs, want the 3 stencil runs", len(res.Runs))
	}
	msgs := map[string]string{}
	for _, p := range res.Problems {
		msgs[p.Run] = p.Message
	}
	if m := msgs[other]; !strings.Contains(m, "shares no task construct") {
		t.Errorf("forkjoin run: %q", m)
	}
	if m := msgs[halo]; !strings.Contains(m, "has no tasks") {
		t.Errorf("halo run: %q", m)
	}
	if m := msgs["broken"]; !strings.Contains(m, "offset 123") {
		t.Errorf("broken run: %q", m)
	}
	// With the odd run as reference, the stencil runs are the ones left out.
	res, err = compare.Compare(in, compare.Options{Ref: other})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Name != other || len(res.Problems) != 5 {
		t.Errorf("--ref %s: runs %d, problems %v", other, len(res.Runs), res.Problems)
	}
	if _, err := compare.Compare(in, compare.Options{Ref: "nowhere"}); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("--ref nowhere: %v", err)
	}
	if _, err := compare.Compare(in[5:], compare.Options{}); err == nil {
		t.Error("no usable run: no error")
	}
}

// Weak scaling divides useful and construct time by the problem size.
func TestWeakScaling(t *testing.T) {
	_, in := family(t, gen.Config{Workload: "stencil", Width: 16, Steps: 6, Inflation: 0.1}, []int{1, 2, 4})
	for i := range in {
		in[i].Size = float64(int(1) << i) // 1, 2, 4
	}
	res, err := compare.Compare(in, compare.Options{Weak: true})
	if err != nil {
		t.Fatal(err)
	}
	u0 := float64(res.Runs[0].UsefulSumNS)
	for i, run := range res.Runs {
		s := in[i].Size
		if want := u0 / (float64(run.UsefulSumNS) / s); math.Abs(run.Efficiencies.ComputationScalability-want) > 1e-12 {
			t.Errorf("run %d: computation scalability %v, want %v", i, run.Efficiencies.ComputationScalability, want)
		}
		c := res.Constructs[0]
		if want := float64(c.Runs[i].SumNS) / (float64(c.Runs[0].SumNS) * s); math.Abs(c.Runs[i].Inflation-want) > 1e-12 {
			t.Errorf("run %d: inflation %v, want %v", i, c.Runs[i].Inflation, want)
		}
	}
	if res.Scaling != "weak" || res.Runs[1].ProblemSize != 2 {
		t.Errorf("scaling %s, size %v", res.Scaling, res.Runs[1].ProblemSize)
	}
	in[0].Size = 0
	if _, err := compare.Compare(in, compare.Options{Weak: true}); err == nil {
		t.Error("--weak without a size: no error")
	}
}

// The time off the critical path whose share of the run grew most between
// two runs is named in their change: halo's master waking after each
// region's join is no node of the path, so off_path's wake-ups are
// exactly the iterations' join times (driver's TestOffPathForkJoin), here
// growing from 5 µs to 40 µs a region as if with the threads. Two runs
// of one configuration name none.
func TestChangesOffPath(t *testing.T) {
	const iters = 10
	run := func(threads int, join int64) compare.Input {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("halo-%d", threads))
		cfg := gen.Config{Workload: "halo", Ranks: 2, Threads: threads, Iterations: iters, ForkNS: 10_000, JoinNS: join}
		if _, err := gen.Generate(dir, cfg); err != nil {
			t.Fatal(err)
		}
		return compare.Input{Arg: dir, Report: analyze(t, dir)}
	}
	a, b := run(2, 5_000), run(4, 40_000)
	res, err := compare.Compare([]compare.Input{a, b}, compare.Options{})
	if err != nil || len(res.Changes) != 1 {
		t.Fatalf("%v, changes %v", err, res.Changes)
	}
	was := float64(iters*5_000) / float64(a.Report.CriticalPath.RunTimeNS)
	is := float64(iters*40_000) / float64(b.Report.CriticalPath.RunTimeNS)
	ch := res.Changes[0]
	if ch.OffPath != "wake_up_ns" || math.Abs(ch.OffPathWas-was) > 1e-12 || math.Abs(ch.OffPathIs-is) > 1e-12 ||
		!strings.Contains(ch.Text, "off the critical path, wake-ups after barriers and joins grew most: "+report.Pct(was)+" → "+report.Pct(is)+" of the run time (50 µs → 400 µs)") {
		t.Errorf("change %+v, want wake-ups %.4f → %.4f of the run time", ch, was, is)
	}
	// changes.csv has it in its last columns.
	dir := t.TempDir()
	if _, err := compare.WriteCSV(dir, res); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(must(os.ReadFile(filepath.Join(dir, compare.CSVChanges)))))).ReadAll()
	if err != nil || len(recs) != 2 || strings.Join(recs[0][11:], ",") != "off_path,off_path_was,off_path_is" ||
		strings.Join(recs[1][11:], ",") != "wake_up_ns,"+strconv.FormatFloat(was, 'g', -1, 64)+","+strconv.FormatFloat(is, 'g', -1, 64) {
		t.Errorf("changes.csv %q (%v)", recs, err)
	}
	res, err = compare.Compare([]compare.Input{a, run(2, 5_000)}, compare.Options{})
	if err != nil || len(res.Changes) != 1 || res.Changes[0].OffPath != "" || strings.Contains(res.Changes[0].Text, "off the critical path") {
		t.Errorf("one configuration twice: %v, changes %+v", err, res.Changes)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
