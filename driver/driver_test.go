package driver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/internal/fuzzbound"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
	"go.uber.org/goleak"
)

// TestMain checks that no analysis leaves goroutines behind, failed ones
// included (inproc ranks must all return), and bounds fuzzing's
// minimisation (fuzzbound).
func TestMain(m *testing.M) {
	fuzzbound.Apply()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { removeFuzzDirs() }))
}

// runWith runs the whole pipeline with opts on k in-process ranks and
// returns rank 0's report.
func runWith(k int, opts driver.Options) (*report.Report, error) {
	var rep *report.Report
	err := inproc.Run(k, func(c comm.Comm) error {
		r, err := driver.Run(c, opts)
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	return rep, err
}

// reportJSON returns rep as WriteJSON writes it.
func reportJSON(t testing.TB, rep *report.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// analyze runs the whole pipeline on k in-process ranks and returns rank 0's
// report and its JSON.
func analyze(t testing.TB, dir string, k int) (*report.Report, []byte) {
	t.Helper()
	rep, err := runWith(k, driver.Options{Dir: dir})
	if err != nil {
		t.Fatalf("analyze %s on %d ranks: %v", dir, k, err)
	}
	return rep, reportJSON(t, rep)
}

func generate(t testing.TB, cfg gen.Config) (string, gen.Expected) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	res, err := gen.Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dir, res.Expected
}

func checkExpected(t *testing.T, name string, js []byte, e gen.Expected) {
	t.Helper()
	diffs, err := gen.Compare(js, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s", name, d)
	}
}

// POT's load-imbalance microbenchmark: work, idleness and overhead equal the
// ideal values exactly for every thread count, grain and rank count.
func TestImbalanceGroundTruth(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8, 16} {
		for _, g := range []int64{1_000, 16_000, 1_000_000} {
			cfg := gen.Config{Workload: "imbalance", Ranks: 3, Threads: n, GrainNS: g, Iterations: 7}
			dir, exp := generate(t, cfg)
			for k := 1; k <= 3; k++ {
				_, js := analyze(t, dir, k)
				checkExpected(t, fmt.Sprintf("n=%d g=%d k=%d", n, g, k), js, exp)
			}
		}
	}
}

// Every workload's expected values, and the report is byte-identical for
// 1..4 analysis ranks.
func TestWorkloadsExpected(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "imbalance", Ranks: 4, Threads: 3},
		{Workload: "stencil", Ranks: 4, Threads: 3, Jitter: 0.3, LatencyNS: 1500},
		{Workload: "stencil", Ranks: 2, Threads: 3, SerialNS: 300_000, Inflation: 0.2, Jitter: 0.1, LatencyNS: 1000},
		{Workload: "nearest", Ranks: 4, Threads: 2, Radix: 4, Fraction: 0.5, Period: 3, LatencyNS: 1000},
		// As libomp records it: the dependences from the addresses alone.
		{Workload: "stencil", Ranks: 2, Threads: 3, Jitter: 0.3, LatencyNS: 1500, Lean: true},
		{Workload: "spread", Ranks: 4, Threads: 4, Radix: 3, LatencyNS: 0},
		{Workload: "forkjoin", Ranks: 4, Threads: 3, Width: 7, Jitter: 0.5},
		{Workload: "halo", Ranks: 4, Threads: 3, RankImbalance: 0.5, ThreadImbalance: 0.3, LatencyNS: 5000},
		{Workload: "halo", Ranks: 5, Threads: 2, Exchange: "allreduce", RankImbalance: 1, Jitter: 0.1, LatencyNS: 3000},
		{Workload: "halo", Ranks: 3, Threads: 1, RankImbalance: 0.2},
		// Team fork and join: overhead of the master inside the region
		// (fork_join_ns), the workers idle serially meanwhile.
		{Workload: "halo", Ranks: 3, Threads: 3, ThreadImbalance: 0.4, ForkNS: 40_000, JoinNS: 15_000, LatencyNS: 2000},
		{Workload: "halo", Ranks: 2, Threads: 1, ForkNS: 30_000, JoinNS: 5_000, Exchange: "allreduce"},
		// A pure MPI program: work is the time outside MPI, the waits and
		// their delay costs are the schedule's, the critical path the window.
		{Workload: "mpi", Ranks: 4, LatencyNS: 5000},
		{Workload: "mpi", Ranks: 5, Iterations: 12, RankImbalance: 0.3, LatencyNS: 2000},
		{Workload: "mpi", Ranks: 2, Iterations: 3, RankImbalance: 2},
		// No latency: a send ends as its late receive begins, no Late Receiver.
		{Workload: "mpi", Ranks: 2, Iterations: 6},
		// Receives completed by MPI_Test loops (polled waits).
		{Workload: "mpi", Ranks: 5, Iterations: 12, RankImbalance: 0.3, LatencyNS: 2000, PollNS: 5000, PollGapNS: 11_000},
		// Task-heavy OpenMP-only programs: one process, so every rank
		// but the first idles.
		{Workload: "tree", Ranks: 1, Threads: 3, Steps: 6, Jitter: 0.3},
		{Workload: "stencil", Ranks: 1, Threads: 4, Jitter: 0.3, Lean: true},
	}
	for _, cfg := range cfgs {
		dir, exp := generate(t, cfg)
		name := fmt.Sprintf("%s/%d×%d", cfg.Workload, cfg.Ranks, cfg.Threads)
		rep, first := analyze(t, dir, 1)
		checkExpected(t, name, first, exp)
		checkInvariants(t, name, first)
		checkOMPWaitInvariants(t, name, rep)
		ks := idleRankCounts(cfg.Ranks)
		for k := min(4, cfg.Ranks); k >= 2; k-- {
			ks = append([]int{k}, ks...)
		}
		for _, k := range ks {
			_, js := analyze(t, dir, k)
			if !bytes.Equal(js, first) {
				t.Errorf("%s: report on %d ranks differs from 1 rank", name, k)
			}
		}
	}
}

// idleRankCounts are analysis rank counts above a trace's n processes
// (n+1, n+3 and 2n): the ranks past the n-th own no process and idle
// through every collective step, and the report is the same.
func idleRankCounts(n int) []int {
	ks := []int{n + 1, n + 3}
	if 2*n > n+3 {
		ks = append(ks, 2*n)
	}
	return ks
}

// checkInvariants: every process's categories add up to its thread time;
// efficiencies are in [0,1]; OMP_Eff = Serial × LB × Sched and MPI_Eff =
// LB × Comm (seed talp-pop-hybrid-metrics.txt); Hyb = MPI_Eff with 1 thread;
// the critical path is no longer than the window.
func checkInvariants(t *testing.T, name string, js []byte) {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Breakdown.PerProcess {
		if sum := p.WorkNS + p.MPINS + p.OverheadNS + p.IdlenessNS; sum != p.ThreadTimeNS {
			t.Errorf("%s: rank %d: work+mpi+overhead+idle = %d, thread time %d", name, p.Rank, sum, p.ThreadTimeNS)
		}
	}
	p := r.POP
	for k, v := range map[string]float64{"hybrid": p.HybridEfficiency, "mpi": p.MPIParallelEfficiency, "mpi_lb": p.MPILoadBalance,
		"mpi_comm": p.MPICommunicationEfficiency, "omp": p.OMPParallelEfficiency, "omp_serial": p.OMPSerializationEfficiency,
		"omp_lb": p.OMPLoadBalance, "omp_sched": p.OMPSchedulingEfficiency} {
		if v < 0 || v > 1 || math.IsNaN(v) {
			t.Errorf("%s: %s efficiency %v outside [0,1]", name, k, v)
		}
	}
	if d := p.OMPParallelEfficiency - p.OMPSerializationEfficiency*p.OMPLoadBalance*p.OMPSchedulingEfficiency; math.Abs(d) > 1e-9 {
		t.Errorf("%s: OMP_Eff %v != Serial×LB×Sched (diff %g)", name, p.OMPParallelEfficiency, d)
	}
	if d := p.MPIParallelEfficiency - p.MPILoadBalance*p.MPICommunicationEfficiency; math.Abs(d) > 1e-9 {
		t.Errorf("%s: MPI_Eff %v != LB×Comm (diff %g)", name, p.MPIParallelEfficiency, d)
	}
	// With one thread the only OpenMP time is the runtime's own (team fork
	// and join): the seed's Hyb_Eff = MPI_Eff holds up to it.
	if p.ThreadsPerProcess == 1 && math.Abs(p.HybridEfficiency-(p.MPIParallelEfficiency-float64(p.ForkJoinNS)/float64(p.ElapsedNS))) > 1e-6 {
		t.Errorf("%s: one thread per process but Hyb_Eff %v != MPI_Eff %v − fork/join %d ns / T", name, p.HybridEfficiency, p.MPIParallelEfficiency, p.ForkJoinNS)
	}
	// A path through the run's events cannot outlast the run: each node's
	// weighed part begins after its inputs' ends.
	if cp := r.CriticalPath; cp != nil && (cp.LengthNS > cp.RunTimeNS || r.Trace.Window != nil && cp.RunTimeNS != r.Trace.Window.DurationNS) {
		t.Errorf("%s: critical path %d ns over a run time of %d (window %+v)", name, cp.LengthNS, cp.RunTimeNS, r.Trace.Window)
	}
	// The time off the path is accounted for exactly: before its first
	// node, between its nodes (the classes), after its last.
	if cp := r.CriticalPath; cp != nil && cp.LengthNS > 0 {
		op := cp.OffPath
		if op == nil {
			t.Errorf("%s: a path of %d ns without off_path", name, cp.LengthNS)
		} else if classes := op.WakeUp + op.Fork + op.Tasks + op.Threads + op.Processes + op.MPI + op.StartSkew; op.NS != cp.RunTimeNS-cp.LengthNS ||
			op.Before+op.Between+op.After != op.NS || classes != op.Between || op.Before < 0 || op.After < 0 {
			t.Errorf("%s: off the path %+v (classes %d) for a path of %d ns in %d", name, *op, classes, cp.LengthNS, cp.RunTimeNS)
		}
	}
	// The raw components lie inside the categories they are parts of.
	for _, q := range r.Breakdown.PerProcess {
		if q.ForkJoinNS < 0 || q.ForkJoinNS > q.OverheadNS || q.IdleSerialDuringMPINS < 0 || q.IdleSerialDuringMPINS > q.IdleDuringMPINS ||
			q.IdleDuringMPINS > q.IdlenessNS+q.OverheadNS-q.ForkJoinNS {
			t.Errorf("%s: rank %d: fork/join %d (overhead %d), idle during MPI %d (serial %d; idle+overhead %d)", name, q.Rank,
				q.ForkJoinNS, q.OverheadNS, q.IdleDuringMPINS, q.IdleSerialDuringMPINS, q.IdlenessNS+q.OverheadNS)
		}
	}
}

// Outliers injected by gen are exactly what the anomaly detection reports,
// whatever the number of analysis ranks; clean traces report (almost) none.
func TestAnomaliesGroundTruth(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "stencil", Ranks: 4, Threads: 3, Jitter: 0.2, Outliers: 7, Steps: 40},
		{Workload: "spread", Ranks: 3, Threads: 2, Radix: 2, Jitter: 0.1, Outliers: 3, Steps: 60},
	} {
		dir, exp := generate(t, cfg)
		for k := 1; k <= 3; k++ {
			_, js := analyze(t, dir, k)
			checkExpected(t, fmt.Sprintf("%s outliers k=%d", cfg.Workload, k), js, exp)
		}
	}
	for _, wl := range []string{"stencil", "nearest", "forkjoin"} {
		dir, _ := generate(t, gen.Config{Workload: wl, Ranks: 2, Threads: 4, Jitter: 0.3, Steps: 80})
		rep, _ := analyze(t, dir, 2)
		a := rep.Anomalies
		if a == nil || a.Tested == 0 {
			t.Fatalf("%s: no tasks tested", wl)
		}
		if float64(a.Found) > 0.01*float64(a.Tested) {
			t.Errorf("%s: %d false positives among %d clean tasks", wl, a.Found, a.Tested)
		}
	}
}

// analyzePath is analyze keeping the whole critical path.
func analyzePath(t testing.TB, dir string, k int) (*report.Report, []byte, []report.PathNode) {
	t.Helper()
	var src report.PathSource
	rep, err := runWith(k, driver.Options{Dir: dir, Path: &src})
	if err != nil {
		t.Fatalf("analyze %s on %d ranks: %v", dir, k, err)
	}
	var path []report.PathNode
	if err := src(func(n report.PathNode) { path = append(path, n) }); err != nil {
		t.Fatalf("analyze %s on %d ranks: reading the path: %v", dir, k, err)
	}
	return rep, reportJSON(t, rep), path
}

// Task patterns from 1 to 256 processes, with and without jitter: span,
// T1 and the per-root metrics equal expected.json exactly, and the path
// found weighs the span.
func TestCriticalPathGroundTruth(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "stencil", Ranks: 1, Threads: 4},
		{Workload: "stencil", Ranks: 7, Threads: 2, Jitter: 0.4, LatencyNS: 3000},
		{Workload: "nearest", Ranks: 5, Threads: 3, Radix: 5, Fraction: 0.4, Period: 4, Jitter: 0.3, LatencyNS: 500},
		{Workload: "spread", Ranks: 6, Threads: 2, Radix: 4, Jitter: 0.2, LatencyNS: 2000},
		{Workload: "forkjoin", Ranks: 3, Threads: 4, Width: 9, Steps: 12, Jitter: 0.5},
		{Workload: "forkjoin", Ranks: 2, Threads: 2},
		{Workload: "stencil", Ranks: 256, Threads: 1, Width: 512, Steps: 6, Jitter: 0.3, LatencyNS: 1000},
	}
	for _, cfg := range cfgs {
		dir, exp := generate(t, cfg)
		name := fmt.Sprintf("%s/%d×%d", cfg.Workload, cfg.Ranks, cfg.Threads)
		var first []byte
		for _, k := range []int{1, 3} {
			k = min(k, cfg.Ranks)
			rep, js, path := analyzePath(t, dir, k)
			checkExpected(t, name, js, exp)
			var sum int64
			for _, n := range path {
				sum += n.DurNS
			}
			if cp := rep.CriticalPath; sum != cp.LengthNS || int64(len(path)) != cp.Nodes {
				t.Errorf("%s k=%d: path of %d nodes weighs %d, span %d over %d nodes", name, k, len(path), sum, cp.LengthNS, cp.Nodes)
			}
			if first == nil {
				first = js
			} else if !bytes.Equal(first, js) {
				t.Errorf("%s: report on %d ranks differs", name, k)
			}
		}
	}
}

// A pipeline over 1024 processes whose critical path crosses processes
// thousands of times: exact span, identical reports for 1..4 ranks and for
// 1024 in-process ranks, one per process (over 6000 supersteps of clock
// synchronization, critical path and walk-back).
func TestPipeline1024(t *testing.T) {
	if testing.Short() {
		t.Skip("1024 processes")
	}
	dir, exp := generate(t, gen.Config{Workload: "pipeline", Ranks: 1024, Threads: 1, Steps: 3, LatencyNS: 700})
	var first []byte
	for _, k := range []int{1, 2, 3, 4, 1024} {
		rep, js := analyze(t, dir, k)
		checkExpected(t, fmt.Sprintf("pipeline k=%d", k), js, exp)
		if c := rep.CriticalPath.RankCrossings; c != 3*1024-1 {
			t.Errorf("k=%d: %d rank crossings, want %d", k, c, 3*1024-1)
		}
		if first == nil {
			first = js
		} else if !bytes.Equal(first, js) {
			t.Errorf("pipeline: report on %d ranks differs from 1 rank", k)
		}
	}
}

// Clock skew and drift are undone: after synchronization the POP values
// are within 1% of those of the same run recorded with one clock, the
// critical path's length within 1%, and no receive precedes its send.
func TestSkewedMatchesUnskewed(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 8, Threads: 3, RankImbalance: 0.6, ThreadImbalance: 0.2, LatencyNS: 4000},
		{Workload: "halo", Ranks: 5, Threads: 2, Exchange: "allreduce", RankImbalance: 0.3, LatencyNS: 3000},
		{Workload: "stencil", Ranks: 6, Threads: 2, Jitter: 0.2, LatencyNS: 2000},
		{Workload: "pipeline", Ranks: 32, Threads: 1, LatencyNS: 1000},
	} {
		dir, _ := generate(t, cfg)
		skewed := cfg
		skewed.SkewNS, skewed.DriftPPM = 2_000_000, 40
		sdir, _ := generate(t, skewed)
		want, _ := analyze(t, dir, 2)
		got, _ := analyze(t, sdir, 3)
		name := fmt.Sprintf("%s/%d", cfg.Workload, cfg.Ranks)
		if got.ClockSync.ViolationsBefore == 0 {
			t.Errorf("%s: the skew made no violation: the test proves nothing", name)
		}
		if got.ClockSync.ViolationsAfter != 0 {
			t.Errorf("%s: %d violations after synchronization", name, got.ClockSync.ViolationsAfter)
		}
		near := func(what string, a, b float64) {
			if math.Abs(a-b) > 0.01*math.Max(math.Abs(b), 1e-12) {
				t.Errorf("%s: %s %v with skew, %v without", name, what, a, b)
			}
		}
		p, q := got.POP, want.POP
		near("hybrid efficiency", p.HybridEfficiency, q.HybridEfficiency)
		near("MPI efficiency", p.MPIParallelEfficiency, q.MPIParallelEfficiency)
		near("MPI load balance", p.MPILoadBalance, q.MPILoadBalance)
		near("OpenMP efficiency", p.OMPParallelEfficiency, q.OMPParallelEfficiency)
		near("OpenMP load balance", p.OMPLoadBalance, q.OMPLoadBalance)
		near("critical path", float64(got.CriticalPath.LengthNS), float64(want.CriticalPath.LengthNS))
	}
}

// A corrupt or missing process file fails the analysis on every rank with
// that file's message, and (TestMain) leaves no goroutine behind.
func TestBrokenRankFailsEverywhere(t *testing.T) {
	src, _ := generate(t, gen.Config{Workload: "stencil", Ranks: 4, Threads: 2})
	for _, how := range []string{"corrupt", "missing"} {
		dir := filepath.Join(t.TempDir(), how)
		os.MkdirAll(dir, 0o755)
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(src, e.Name()))
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
		victim := filepath.Join(dir, trace.FileName(3))
		if how == "missing" {
			os.Remove(victim)
		} else {
			b, _ := os.ReadFile(victim)
			b[len(b)/3] ^= 0xff
			os.WriteFile(victim, b, 0o644)
		}
		for k := 1; k <= 4; k++ {
			err := inproc.Run(k, func(c comm.Comm) error {
				_, err := driver.Run(c, driver.Options{Dir: dir})
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "rank-00003.ptrace") {
				t.Errorf("%s, %d ranks: %v", how, k, err)
			}
		}
	}
}

// By default the analysis measures MPI_Init's end to MPI_Finalize's start
// (the halo workload's expected values hold only there); --whole-run adds
// exactly the time spent in those two calls to the MPI time and accounts
// the whole span.
func TestWholeRun(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "halo", Ranks: 3, Threads: 2, RankImbalance: 0.5, LatencyNS: 2000})
	win, _ := analyze(t, dir, 2)
	whole, err := runWith(2, driver.Options{Dir: dir, WholeRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := win.Trace.Window; w == nil || w.Bounds != "mpi" || w.DurationNS >= win.Trace.DurationNS || win.POP.ElapsedNS != w.DurationNS {
		t.Fatalf("default window %+v, span %d, POP elapsed %d", w, win.Trace.DurationNS, win.POP.ElapsedNS)
	}
	if w := whole.Trace.Window; w == nil || w.Bounds != "trace" || w.DurationNS != whole.Trace.DurationNS || whole.POP.ElapsedNS != w.DurationNS {
		t.Fatalf("whole-run window %+v, span %d, POP elapsed %d", w, whole.Trace.DurationNS, whole.POP.ElapsedNS)
	}
	// Time inside MPI_Init and MPI_Finalize, read off the trace itself.
	var initFin int64
	for i := 0; i < 3; i++ {
		p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(i)), trace.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var enter int64
		evs, _ := p.Decode(0, nil)
		for _, e := range evs {
			if name := p.String(e.Args[0]); name == "MPI_Init" || name == "MPI_Finalize" {
				switch e.Kind {
				case trace.MPIEnter:
					enter = e.Time
				case trace.MPIExit:
					initFin += e.Time - enter
				}
			}
		}
	}
	if initFin == 0 {
		t.Fatal("the halo trace spends no time in MPI_Init or MPI_Finalize")
	}
	if d := whole.Breakdown.MPINS - win.Breakdown.MPINS; d != initFin {
		t.Errorf("whole-run MPI time exceeds the window's by %d ns, want %d (time in MPI_Init and MPI_Finalize)", d, initFin)
	}
	if whole.Breakdown.WorkNS != win.Breakdown.WorkNS {
		t.Errorf("work %d in the whole run, %d in the window: the window cut off work", whole.Breakdown.WorkNS, win.Breakdown.WorkNS)
	}
}

// analyze --window: every thread is accounted over exactly the window asked
// for, cut to the trace; a window past the end is an error on every rank.
func TestUserWindow(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "imbalance", Ranks: 2, Threads: 3, GrainNS: 10_000, Iterations: 20})
	run := func(w driver.Window) (*report.Report, error) {
		return runWith(2, driver.Options{Dir: dir, Window: &w})
	}
	full, _ := analyze(t, dir, 1)
	span := full.Trace.DurationNS
	for _, w := range []driver.Window{{StartNS: 100_000, EndNS: 400_000}, {StartNS: 0, EndNS: span}, {StartNS: span / 2, EndNS: span * 3}} {
		rep, err := run(w)
		if err != nil {
			t.Fatal(err)
		}
		want := min(w.EndNS, span) - w.StartNS
		if got := rep.Trace.Window; got == nil || got.Bounds != "user" || got.DurationNS != want || got.StartNS != full.Trace.FirstNS+w.StartNS {
			t.Errorf("window %+v: report window %+v, want %d ns from %d", w, got, want, full.Trace.FirstNS+w.StartNS)
		}
		if tt := rep.Breakdown.ThreadTimeNS; tt != 6*want {
			t.Errorf("window %+v: thread time %d, want 6 threads × %d", w, tt, want)
		}
		if rep.POP.ElapsedNS != want {
			t.Errorf("window %+v: POP elapsed %d, want %d", w, rep.POP.ElapsedNS, want)
		}
	}
	if _, err := run(driver.Window{StartNS: span + 1, EndNS: span + 10}); err == nil || !strings.Contains(err.Error(), "after the end of the trace") {
		t.Errorf("window past the end: %v", err)
	}
}

// A rank given several cores (Options.Workers) loads a process's file on
// them and tests the anomalies beside the critical path's start: the
// report is the one of a rank given one, on one analysis rank or two. The
// trace is large enough (a few MB a file) for the load to decode on
// workers.
func TestWorkersSameReport(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "stencil", Ranks: 2, Threads: 4, Jitter: 0.2, LatencyNS: 1000, Events: 600_000})
	var want []byte
	for _, ranks := range []int{1, 2} {
		for _, workers := range []int{1, 3} {
			rep, err := runWith(ranks, driver.Options{Dir: dir, Workers: workers})
			if err != nil {
				t.Fatalf("%d ranks, %d workers: %v", ranks, workers, err)
			}
			js := reportJSON(t, rep)
			if want == nil {
				want = js
			} else if !bytes.Equal(js, want) {
				t.Errorf("the report with %d ranks and %d workers differs from one rank's with one worker", ranks, workers)
			}
		}
	}
	fi, err := os.Stat(filepath.Join(dir, trace.FileName(0)))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 1<<20 {
		t.Fatalf("rank 0's file has %d bytes: too few to decode on workers (1 MiB)", fi.Size())
	}
}

// A user window that begins inside the computation between two polling
// tests where the polled message's sender enters its send: that
// fragment is split at the send's time like one inside the window, so the
// critical path is never longer than the window (before, the edge entered
// the whole fragment, and the path was 4 µs longer than a 48 µs window on
// the receiver's first polled message). Every start from 6 240 µs to
// 6 270 µs, in steps of 1 µs, with and without an end.
func TestUserWindowPolled(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "mpi", Ranks: 3, LatencyNS: 2000, Iterations: 6, PollNS: 7_000, PollGapNS: 20_000})
	for start := int64(6_240_000); start <= 6_270_000; start += 1000 {
		for _, end := range []int64{start + 48_000, math.MaxInt64} {
			w := driver.Window{StartNS: start, EndNS: end}
			rep, err := runWith(1, driver.Options{Dir: dir, Window: &w})
			if err != nil {
				t.Fatal(err)
			}
			if cp := rep.CriticalPath; cp == nil || cp.LengthNS > rep.Trace.Window.DurationNS {
				t.Errorf("window %+v: critical path %+v longer than the window's %d ns", w, cp, rep.Trace.Window.DurationNS)
			}
		}
	}
}

// halo's team fork and join are no node of the path (the runtime's delays
// before a region's implicit tasks begin and after they end): on a path
// that stays on one process, off_path holds I forks (the first before the
// path's first node, the window beginning at MPI_Init's exit) and I joins,
// the master's wake-up after each region, and nothing else.
func TestOffPathForkJoin(t *testing.T) {
	const iters, fork, join = 10, 40_000, 15_000
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 2, Threads: 3, Iterations: iters, ForkNS: fork, JoinNS: join},
		{Workload: "halo", Ranks: 1, Threads: 2, Iterations: iters, ForkNS: fork},
	} {
		dir, _ := generate(t, cfg)
		for k := 1; k <= cfg.Ranks; k++ {
			rep, _ := analyze(t, dir, k)
			cp := rep.CriticalPath
			want := report.OffPath{NS: iters * (cfg.ForkNS + cfg.JoinNS), Before: cfg.ForkNS, Between: (iters-1)*cfg.ForkNS + iters*cfg.JoinNS,
				Fork: (iters - 1) * cfg.ForkNS, WakeUp: iters * cfg.JoinNS}
			want.Share = float64(want.NS) / float64(cp.RunTimeNS)
			if cp.OffPath == nil || *cp.OffPath != want || cp.RunTimeNS-cp.LengthNS != want.NS {
				t.Errorf("%d×%d fork %d join %d on %d ranks: off_path %+v, want %+v (path %d of %d)", cfg.Ranks, cfg.Threads, cfg.ForkNS, cfg.JoinNS, k, cp.OffPath, want, cp.LengthNS, cp.RunTimeNS)
			}
		}
	}
}

// On every gen workload the time off the path adds up exactly
// (checkInvariants) and is the same on 1 to 3 analysis ranks.
func TestOffPathEveryWorkload(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "imbalance", Ranks: 2, Threads: 3},
		{Workload: "stencil", Ranks: 3, Threads: 2, Jitter: 0.3, LatencyNS: 1500},
		{Workload: "nearest", Ranks: 3, Threads: 2, Radix: 3, LatencyNS: 1000},
		{Workload: "spread", Ranks: 3, Threads: 2, Radix: 3, LatencyNS: 1000},
		{Workload: "forkjoin", Ranks: 3, Threads: 3, Width: 5, Jitter: 0.5},
		{Workload: "pipeline", Ranks: 3, Threads: 2, LatencyNS: 2000},
		{Workload: "halo", Ranks: 3, Threads: 3, RankImbalance: 0.5, ForkNS: 20_000, JoinNS: 5_000, LatencyNS: 3000},
		{Workload: "untied", Ranks: 1, Threads: 3},
		{Workload: "mpi", Ranks: 3, RankImbalance: 0.3, LatencyNS: 2000},
		{Workload: "nbc", Ranks: 3, LatencyNS: 2000},
		{Workload: "tree", Ranks: 2, Threads: 3, Steps: 5},
	} {
		dir, _ := generate(t, cfg)
		name := fmt.Sprintf("%s/%d×%d", cfg.Workload, cfg.Ranks, cfg.Threads)
		var first *report.OffPath
		for k := 1; k <= 3; k++ {
			rep, js := analyze(t, dir, k)
			checkInvariants(t, fmt.Sprintf("%s k=%d", name, k), js)
			op := rep.CriticalPath.OffPath
			if op == nil {
				t.Fatalf("%s k=%d: no off_path", name, k)
			}
			if k == 1 {
				first = op
			} else if *op != *first {
				t.Errorf("%s: off_path on %d ranks %+v, on 1 %+v", name, k, *op, *first)
			}
		}
	}
}
