package driver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// Wait states of halo runs equal the schedule's (expected.json) on 1..3
// analysis ranks, with skewed and drifting clocks too, and the patterns
// are disjoint parts of the MPI time, which is the breakdown's; the OpenMP
// wait states split the breakdown's overhead and idleness (with team fork
// and join and idleness during MPI).
func TestWaitStatesGroundTruth(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "halo", Ranks: 4, Threads: 2, RankImbalance: 0.7, LatencyNS: 4000, Iterations: 20},
		{Workload: "halo", Ranks: 5, Threads: 3, RankImbalance: 0.4, ThreadImbalance: 0.2, Jitter: 0.2, LatencyNS: 2000,
			SkewNS: 1_000_000, DriftPPM: 20, Iterations: 20},
		{Workload: "halo", Ranks: 3, Threads: 2, Exchange: "allreduce", RankImbalance: 0.5, Jitter: 0.3, LatencyNS: 3000,
			SkewNS: 500_000, DriftPPM: 10, Iterations: 20},
		{Workload: "halo", Ranks: 1, Threads: 2, Iterations: 5},
		// Pure MPI: Late Sender and Late Receiver (a blocking MPI_Ssend,
		// and the MPI_Wait of an MPI_Isend whose MPI_Irecv came late, but
		// not an MPI_Send whose MPI_Irecv was posted early), Wait at N×N
		// and at Barrier, with their short-term delay costs.
		{Workload: "mpi", Ranks: 4, RankImbalance: 0.6, LatencyNS: 3000, Iterations: 12, SkewNS: 800_000, DriftPPM: 15},
		// Polled waits: the receives posted early complete in a loop of
		// MPI_Test calls; a late sender's Late Sender is the polling
		// tests' time before its send (not the computation between
		// them), one instance at the completing test, which holds the
		// whole wait for the cause and the delay costs.
		{Workload: "mpi", Ranks: 4, RankImbalance: 0.6, LatencyNS: 3000, Iterations: 12, PollNS: 10_000, PollGapNS: 37_000},
		{Workload: "mpi", Ranks: 3, LatencyNS: 2000, Iterations: 6, PollNS: 7_000},
		{Workload: "mpi", Ranks: 4, RankImbalance: 0.6, LatencyNS: 3000, Iterations: 12, PollNS: 10_000, SkewNS: 800_000, DriftPPM: 15},
		// Nonblocking collectives: the late start of an MPI_Iallreduce
		// (Wait at N×N) and of an MPI_Ibcast's root (Late Broadcast), and
		// a wait for progress, each in the MPI_Wait completing it; some
		// MPI_Waits whose late start is shorter than their wait for
		// progress (5 ranks: the overlap passes the start's spread), with
		// their delay costs: the waits at N×N and the late broadcasts
		// charged to the cause's time before its start, the waits for
		// progress to its time before its MPI_Wait.
		{Workload: "nbc", Ranks: 3, LatencyNS: 3000, Iterations: 9},
		{Workload: "nbc", Ranks: 5, RankImbalance: 0.1, LatencyNS: 60_000, Iterations: 9},
		{Workload: "nbc", Ranks: 4, RankImbalance: 0.6, LatencyNS: 2000, Iterations: 9, SkewNS: 800_000, DriftPPM: 15},
		// An MPI_Ibcast root late by less than the overlap (0.01 of the
		// computation against 0.05): the non-roots wait for its progress
		// (the latency, cut by its lateness), each charged to the root's
		// time up to its MPI_Wait, at a point the root gets for them.
		{Workload: "nbc", Ranks: 4, RankImbalance: 0.01, LatencyNS: 20_000, Iterations: 9},
	}
	for _, cfg := range cfgs {
		dir := filepath.Join(t.TempDir(), "trace")
		res, err := gen.Generate(dir, cfg)
		if err != nil {
			t.Fatal(err)
		}
		exp := res.Expected
		if cfg.SkewNS > 0 {
			exp = waitsOnly(exp)
		}
		ks := []int{cfg.Ranks + 1} // a rank without a process
		for k := min(3, cfg.Ranks); k >= 1; k-- {
			ks = append([]int{k}, ks...)
		}
		for _, k := range ks {
			name := fmt.Sprintf("%s %s/%d×%d skew=%d k=%d", cfg.Workload, cfg.Exchange, cfg.Ranks, cfg.Threads, cfg.SkewNS, k)
			rep, js := analyze(t, dir, k)
			checkExpected(t, name, js, exp)
			checkWaitInvariants(t, name, js)
			checkOMPWaitInvariants(t, name, rep)
			checkLongTerm(t, name, rep, exp)
			if res.Causes != nil {
				checkCauses(t, name, rep, res.Causes)
			}
		}
	}
}

// checkCauses: the waiting each rank caused, by pattern, is the
// schedule's (1 ns a call with skewed clocks).
func checkCauses(t *testing.T, name string, r *report.Report, want map[gen.WaitCause]int64) {
	t.Helper()
	got := map[gen.WaitCause]int64{}
	for _, c := range r.WaitStates.Causes {
		got[gen.WaitCause{Rank: c.Rank, Pattern: c.Pattern}] += c.NS
	}
	tol := r.WaitStates.Calls
	for k, v := range want {
		if d := got[k] - v; d > tol || d < -tol {
			t.Errorf("%s: rank %d caused %d ns of %s, want %d", name, k.Rank, got[k], k.Pattern, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s: rank %d caused %d ns of %s, want none", name, k.Rank, v, k.Pattern)
		}
	}
}

// checkLongTerm: every process's long-term delay cost is the schedule's,
// also where that is 0 (the report omits it then, and so does gen).
func checkLongTerm(t *testing.T, name string, r *report.Report, e gen.Expected) {
	t.Helper()
	want := map[int]int64{}
	tol := int64(0)
	if ws, ok := e["wait_states"].(map[string]any); ok {
		for _, row := range ws["per_process"].([]any) {
			m := row.(map[string]any)
			if v, ok := m["long_term_ns"]; ok {
				want[toInt(m["rank"])] = toInt64(v)
			}
		}
		if c, ok := ws["calls"]; ok {
			tol = toInt64(c)
		}
	}
	if tol == 0 {
		tol = 1_000 // waitsOnly dropped the call count: 1 ns per call of any run here
	}
	for _, p := range r.WaitStates.PerProcess {
		if d := p.LongTermNS - want[p.Rank]; d > tol || d < -tol {
			t.Errorf("%s: rank %d: long-term delay cost %d, want %d", name, p.Rank, p.LongTermNS, want[p.Rank])
		}
	}
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case float64:
		return int64(x)
	case json.Number:
		n, _ := x.Int64()
		return n
	}
	return 0
}

func toInt(v any) int { return int(toInt64(v)) }

// A chain of waits in halo (3 ranks, one thread, no jitter, rank i
// computing C·(1 + r·i/2) per iteration, latency L < r·C/4, two
// iterations and the final barrier; a = r·C/2). Iteration 0: rank 1 waits
// a for rank 2 and rank 0 a for rank 1, each the cause's extra compute
// since MPI_Init (short-term). Iteration 1, each side's interval from its
// previous synchronization with the other: rank 0 waits 2a for rank 1,
// whose interval holds a of extra compute and its own wait a in iteration
// 0: a short-term cost of rank 1, and a passed to that wait, which
// rank 2's compute caused (long-term cost of rank 2); rank 1 waits a − L
// for rank 2 (short-term). At the barrier rank 0 waits a − L for rank 1,
// whose interval holds nothing in excess but its wait of iteration 1: all
// passed to it, rank 2's long-term cost; rank 2 waits L for rank 1, whose
// MPI_Waitall went on L longer after rank 2's Isend than rank 2's own
// (rank 1's short-term cost, in MPI time). So rank 1: short-term
// r·C + L, rank 2: short-term and long-term r·C − L each; the waits sum
// to 3·r·C − L, all traced to a delay.
//
// With C of 10 s the waits and gaps pass 2³¹ ns, which the wait states keep
// in 32-bit columns with an escape for wider values.
func TestDelayCostsChain(t *testing.T) {
	for _, C := range []int64{1_000_000, 10_000_000_000} {
		testDelayCostsChain(t, C)
	}
}

func testDelayCostsChain(t *testing.T, C int64) {
	const L, r = 10_000, 0.4
	rc := int64(r * float64(C))
	cfg := gen.Config{Workload: "halo", Ranks: 3, Threads: 1, ComputeNS: C, RankImbalance: r, LatencyNS: L, Iterations: 2}
	dir, exp := generate(t, cfg)
	wantShort := []int64{0, rc + L, rc - L}
	wantLong := []int64{0, 0, rc - L}
	for k := 1; k <= 3; k++ {
		name := fmt.Sprintf("chain C=%d k=%d", C, k)
		rep, js := analyze(t, dir, k)
		checkExpected(t, name, js, exp)
		checkWaitInvariants(t, name, js)
		checkLongTerm(t, name, rep, exp)
		ws := rep.WaitStates
		var short, long, prop int64
		for _, p := range ws.PerProcess {
			if p.DelayNS != wantShort[p.Rank] || p.LongTermNS != wantLong[p.Rank] {
				t.Errorf("%s: rank %d: short-term %d, long-term %d; want %d, %d", name, p.Rank, p.DelayNS, p.LongTermNS, wantShort[p.Rank], wantLong[p.Rank])
			}
		}
		for _, d := range ws.Delays {
			short += d.NS
			long += d.LongTermNS
			prop += d.PropagatedNS
		}
		if short+long != 3*rc-L || prop != 0 {
			t.Errorf("%s: delays explain %d short-term + %d long-term (%d untraced), want %d in all", name, short, long, prop, 3*rc-L)
		}
		var text bytes.Buffer
		report.WriteText(&text, rep, report.TextOptions{})
		if !bytes.Contains(text.Bytes(), []byte("more through the waits it propagated")) {
			t.Errorf("%s: the text report does not name the long-term cost:\n%s", name, text.String())
		}
	}
}

// Traces without MPI calls in the window have no MPI wait states: their
// wait_states section holds the OpenMP part alone.
func TestWaitStatesAbsentWithoutMPI(t *testing.T) {
	for _, wl := range []string{"imbalance", "stencil"} {
		dir, _ := generate(t, gen.Config{Workload: wl, Ranks: 2, Threads: 2, Steps: 5, Iterations: 3})
		rep, _ := analyze(t, dir, 2)
		ws := rep.WaitStates
		if ws == nil || ws.OpenMP == nil {
			t.Fatalf("%s: no OpenMP wait states", wl)
		}
		if ws.WaitTimes != (report.WaitTimes{}) || len(ws.CallSites)+len(ws.PerProcess)+len(ws.Causes)+len(ws.Delays) > 0 {
			t.Errorf("%s: MPI wait states (%+v) in a trace without MPI calls", wl, ws.WaitTimes)
		}
	}
}

// OpenMP wait states of forkjoin (implicit barrier, taskwait or taskgroup
// end, no task ready) and the task patterns (implicit barrier, waits on dependences
// then on nothing) equal the schedule's on 1..3 analysis ranks, and split
// exactly the breakdown's overhead and idleness.
func TestOMPWaitStatesGroundTruth(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "forkjoin", Ranks: 3, Threads: 3, Width: 7, Steps: 6, Jitter: 0.5},
		{Workload: "forkjoin", Ranks: 1, Threads: 4, Width: 5, Steps: 4, Jitter: 0.3},
		{Workload: "forkjoin", Ranks: 3, Threads: 2, Width: 5, Steps: 5, Jitter: 0.4, Taskgroup: true},
		{Workload: "stencil", Ranks: 3, Threads: 3, Steps: 8, Jitter: 0.4, LatencyNS: 2000},
		{Workload: "nearest", Ranks: 2, Threads: 2, Steps: 6, Radix: 4, Fraction: 0.5, LatencyNS: 1000},
		{Workload: "spread", Ranks: 3, Threads: 2, Steps: 5, SerialNS: 200_000, Jitter: 0.2, LatencyNS: 500},
	}
	for _, cfg := range cfgs {
		dir, exp := generate(t, cfg)
		for k := 1; k <= min(3, cfg.Ranks); k++ {
			name := fmt.Sprintf("%s %d×%d k=%d", cfg.Workload, cfg.Ranks, cfg.Threads, k)
			rep, js := analyze(t, dir, k)
			checkExpected(t, name, js, exp)
			checkOMPWaitInvariants(t, name, rep)
		}
	}
}

// checkOMPWaitInvariants: both splits of the OpenMP waiting are partitions
// of it, per process and over constructs, and it is the breakdown's
// overhead + idleness − fork/join − sync runtime, its overhead − fork/join
// − sync runtime having a task ready.
func checkOMPWaitInvariants(t *testing.T, name string, r *report.Report) {
	t.Helper()
	if r.WaitStates == nil || r.WaitStates.OpenMP == nil {
		if b := r.Breakdown; b.IdlenessNS+b.OverheadNS == 0 {
			return // no thread ever waited outside MPI (a pure MPI program)
		}
		t.Fatalf("%s: no OpenMP wait states", name)
	}
	o := r.WaitStates.OpenMP
	check := func(what string, w *report.OMPWaitTimes) {
		for _, v := range []int64{w.BarrierImplicitNS, w.BarrierExplicitNS, w.TaskwaitNS, w.TaskgroupNS, w.OtherSyncNS, w.OutsideSyncNS, w.TaskReadyNS, w.DependencesNS, w.NoTaskNS} {
			if v < 0 {
				t.Errorf("%s: %s: negative part in %+v", name, what, *w)
			}
		}
		if s := w.BarrierImplicitNS + w.BarrierExplicitNS + w.TaskwaitNS + w.TaskgroupNS + w.OtherSyncNS + w.OutsideSyncNS; s != w.WaitingNS {
			t.Errorf("%s: %s: places add up to %d, waiting %d", name, what, s, w.WaitingNS)
		}
		if s := w.TaskReadyNS + w.DependencesNS + w.NoTaskNS; s != w.WaitingNS {
			t.Errorf("%s: %s: reasons add up to %d, waiting %d", name, what, s, w.WaitingNS)
		}
	}
	check("total", &o.OMPWaitTimes)
	var cons report.OMPWaitTimes
	for _, c := range o.Constructs {
		if c.TaskReadyNS+c.DependencesNS+c.NoTaskNS != c.WaitingNS {
			t.Errorf("%s: construct %+v: reasons do not add up", name, c)
		}
		cons.WaitingNS += c.WaitingNS
		cons.TaskReadyNS += c.TaskReadyNS
		cons.DependencesNS += c.DependencesNS
		cons.NoTaskNS += c.NoTaskNS
	}
	if cons.WaitingNS != o.WaitingNS || cons.TaskReadyNS != o.TaskReadyNS || cons.DependencesNS != o.DependencesNS || cons.NoTaskNS != o.NoTaskNS {
		t.Errorf("%s: constructs add up to %+v, total %+v", name, cons, o.OMPWaitTimes)
	}
	bp := r.Breakdown.PerProcess
	if len(o.PerProcess) != len(bp) {
		t.Fatalf("%s: %d processes with OpenMP wait states, %d in the breakdown", name, len(o.PerProcess), len(bp))
	}
	for i := range o.PerProcess {
		p, b := &o.PerProcess[i], &bp[i]
		check(fmt.Sprintf("rank %d", p.Rank), &p.OMPWaitTimes)
		over := b.OverheadNS - b.ForkJoinNS - b.SyncRuntimeNS
		if p.Rank != b.Rank || p.WaitingNS != over+b.IdlenessNS || p.TaskReadyNS != over {
			t.Errorf("%s: rank %d: waiting %d (task ready %d), breakdown (rank %d) overhead %d idleness %d fork/join %d sync runtime %d",
				name, p.Rank, p.WaitingNS, p.TaskReadyNS, b.Rank, b.OverheadNS, b.IdlenessNS, b.ForkJoinNS, b.SyncRuntimeNS)
		}
	}
}

// checkWaitInvariants: per call site and per process, the patterns and
// other add up to the MPI time, none is negative, and every process's MPI
// time is the breakdown's.
func checkWaitInvariants(t *testing.T, name string, js []byte) {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	ws := r.WaitStates
	if ws == nil {
		t.Fatalf("%s: no wait_states section", name)
	}
	check := func(what string, w *report.WaitTimes) {
		parts := []int64{w.LateSenderNS, w.LateReceiverNS, w.WaitNxNNS, w.WaitBarrierNS, w.LateBroadcastNS, w.EarlyReduceNS,
			w.WaitAtFenceNS, w.WaitAtWinCreateNS, w.WaitAtWinFreeNS, w.LatePostNS, w.EarlyWaitNS, w.WaitForProgressNS, w.OtherNS}
		var sum int64
		for _, v := range parts {
			if v < 0 {
				t.Errorf("%s: %s: negative part in %+v", name, what, *w)
			}
			sum += v
		}
		if sum != w.MPINS {
			t.Errorf("%s: %s: patterns + other = %d, MPI time %d", name, what, sum, w.MPINS)
		}
	}
	check("total", &ws.WaitTimes)
	var sites, procs report.WaitTimes
	for i := range ws.CallSites {
		s := &ws.CallSites[i]
		check(s.Func, &s.WaitTimes)
		sites.MPINS += s.MPINS
	}
	for i := range ws.PerProcess {
		p := &ws.PerProcess[i]
		check(fmt.Sprintf("rank %d", p.Rank), &p.WaitTimes)
		procs.MPINS += p.MPINS
		if bp := r.Breakdown.PerProcess[i]; bp.Rank != p.Rank || bp.MPINS != p.MPINS {
			t.Errorf("%s: rank %d: wait states' MPI time %d, breakdown's %d (rank %d)", name, p.Rank, p.MPINS, bp.MPINS, bp.Rank)
		}
	}
	if sites.MPINS != ws.MPINS || procs.MPINS != ws.MPINS {
		t.Errorf("%s: MPI time %d, over call sites %d, over processes %d", name, ws.MPINS, sites.MPINS, procs.MPINS)
	}
	// Every wait charged to a cause, a late receiver's included, is split
	// into short-term and long-term delay costs and what could not be
	// traced back (propagated_ns), a wait for progress's too (until
	// 2026-12 it had none).
	var caused, delays, long, procLong, short, procShort int64
	for _, c := range ws.Causes {
		caused += c.NS
	}
	for _, d := range ws.Delays {
		if d.NS < 0 || d.LongTermNS < 0 || d.PropagatedNS < 0 {
			t.Errorf("%s: negative delay cost %+v", name, d)
		}
		delays += d.NS + d.LongTermNS + d.PropagatedNS
		long += d.LongTermNS
		short += d.NS
	}
	for _, p := range ws.PerProcess {
		procLong += p.LongTermNS
		procShort += p.DelayNS
	}
	if delays != caused || long != procLong || short != procShort {
		t.Errorf("%s: delays' short-term + long-term + untraced = %d, waiting with a cause %d; long-term %d, over processes %d; short-term %d, over processes %d",
			name, delays, caused, long, procLong, short, procShort)
	}
}

// waitsOnly keeps the wait states' times of e. With skewed and drifting
// clocks the corrected times round once per event, so the other sections'
// exact values (which have no tolerance) and the call counts (a call at
// the window's end may fall 1 ns inside it) are not compared.
func waitsOnly(e gen.Expected) gen.Expected {
	ws := e["wait_states"].(map[string]any)
	delete(ws, "calls")
	for _, row := range ws["per_process"].([]any) {
		delete(row.(map[string]any), "calls")
	}
	return gen.Expected{"wait_states": ws, "tolerance": e["tolerance"]}
}

// One call of each pattern gen does not write, on three processes with
// one thread each (times in ns, one clock): a Bcast whose root comes last
// (Late Broadcast 50 and 20), a Reduce whose root comes first (Early
// Reduce 60, until the last sender, as Scalasca 2.6 counts it), an
// MPI_Ssend blocked until its receive began (Late Receiver 50) and an
// MPI_Recv posted before its send (Late Sender 40); an eager MPI_Send that
// returned before its receive began waits for nothing.
func TestWaitStatePatterns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	type ev struct {
		k    trace.Kind
		time int64
		args []int64
	}
	bc, rd := int64(trace.CollBcast), int64(trace.CollReduce)
	type mpiCall struct {
		fn          string
		enter, exit int64
		evs         []ev
	}
	progs := [][]mpiCall{
		{ // rank 0: Bcast root, Reduce root, Recv from 2
			{"MPI_Bcast", 100, 120, []ev{{trace.CollBegin, 100, []int64{bc, 0, 0, 8, 0}}, {trace.CollEnd, 120, []int64{bc, 0, 0}}}},
			{"MPI_Reduce", 200, 270, []ev{{trace.CollBegin, 200, []int64{rd, 0, 0, 8, 24}}, {trace.CollEnd, 270, []int64{rd, 0, 0}}}},
			{"MPI_Recv", 410, 500, []ev{{trace.MPIRecv, 500, []int64{2, 5, 0, 8, 0}}}},
		},
		{ // rank 1: Bcast early, Reduce, Ssend to 2
			{"MPI_Bcast", 50, 120, []ev{{trace.CollBegin, 50, []int64{bc, 0, 0, 0, 8}}, {trace.CollEnd, 120, []int64{bc, 0, 0}}}},
			{"MPI_Reduce", 230, 235, []ev{{trace.CollBegin, 230, []int64{rd, 0, 0, 8, 0}}, {trace.CollEnd, 235, []int64{rd, 0, 0}}}},
			{"MPI_Ssend", 300, 400, []ev{{trace.MPISend, 300, []int64{2, 4, 0, 8, 0}}}},
		},
		{ // rank 2: Bcast, Reduce last, Recv from 1, eager Send to 0
			{"MPI_Bcast", 80, 120, []ev{{trace.CollBegin, 80, []int64{bc, 0, 0, 0, 8}}, {trace.CollEnd, 120, []int64{bc, 0, 0}}}},
			{"MPI_Reduce", 260, 265, []ev{{trace.CollBegin, 260, []int64{rd, 0, 0, 8, 0}}, {trace.CollEnd, 265, []int64{rd, 0, 0}}}},
			{"MPI_Recv", 350, 400, []ev{{trace.MPIRecv, 395, []int64{1, 4, 0, 8, 0}}}},
			{"MPI_Send", 450, 452, []ev{{trace.MPISend, 450, []int64{0, 5, 0, 8, 0}}}},
		},
	}
	for r, prog := range progs {
		writeMPIRank(t, dir, r, 3, 600, func(w *trace.Writer, emit emitFunc) {
			for _, c := range prog {
				emit(trace.MPIEnter, c.enter, w.String(c.fn))
				for _, e := range c.evs {
					emit(e.k, e.time, e.args...)
				}
				emit(trace.MPIExit, c.exit, w.String(c.fn))
			}
		})
	}
	for k := 1; k <= 3; k++ {
		rep := analyzeNoSync(t, dir, k)
		ws := rep.WaitStates
		if ws == nil {
			t.Fatalf("k=%d: no wait states", k)
		}
		want := report.WaitTimes{MPINS: 70 + 40 + 20 + 70 + 5 + 5 + 90 + 100 + 50 + 2, Calls: 10, LateSenderNS: 40, LateReceiverNS: 50,
			LateBroadcastNS: 70, EarlyReduceNS: 60, WaitingCalls: 5}
		want.OtherNS = want.MPINS - 40 - 50 - 70 - 60
		if ws.WaitTimes != want {
			t.Errorf("k=%d: wait states\n%+v, want\n%+v", k, ws.WaitTimes, want)
		}
		// Rank 0 is the late root of the Bcast; rank 2 the late sender,
		// the late receiver of the Ssend and the last sender of the
		// Reduce.
		caused := map[int]int64{0: 70, 1: 0, 2: 40 + 50 + 60}
		for _, p := range ws.PerProcess {
			if p.Rank == 1 && (p.LateReceiverNS != 50 || p.LateBroadcastNS != 50) {
				t.Errorf("k=%d: rank 1: %+v, want late receiver 50 and late broadcast 50", k, p.WaitTimes)
			}
			if p.CausedNS != caused[p.Rank] {
				t.Errorf("k=%d: rank %d caused %d ns of waiting, want %d", k, p.Rank, p.CausedNS, caused[p.Rank])
			}
		}
		if c := ws.Causes; len(c) != 4 || c[0].Rank != 0 || c[0].Pattern != "late_broadcast" || c[0].Func != "MPI_Bcast" || c[0].NS != 70 || c[0].Calls != 2 {
			t.Errorf("k=%d: causes %+v, want rank 0's late broadcast (70 ns, 2 calls) first of 4", k, c)
		}
		var js bytes.Buffer
		report.WriteJSON(&js, rep)
		checkWaitInvariants(t, fmt.Sprintf("patterns k=%d", k), js.Bytes())
	}
}

// TestCollectiveWaitEndsAtCollEnd: a collective's wait ends at its
// coll_end at the latest, not at the call's exit, as Scalasca 2.6 ends it
// at the MpiCollectiveEnd record: where unsynchronized clocks put the
// others' enters after a member's coll_end (analysed without clock
// synchronization), the time between the coll_end and the exit is no
// wait. Two processes, one clock each: a Bcast whose root enters after
// rank 1's coll_end (Late Broadcast 40, not 50), a Barrier (30, not 50),
// a Reduce whose last sender enters after the root's coll_end (Early
// Reduce 20, not 30), an Allreduce (Wait at N×N 10, not 20) and a Bcast
// whose coll_end comes 199 µs before its exit (Late Broadcast 500, not
// 99 500).
func TestCollectiveWaitEndsAtCollEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bc, bar, rd, ar := int64(trace.CollBcast), int64(trace.CollBarrier), int64(trace.CollReduce), int64(trace.CollAllreduce)
	type call struct {
		fn                   string
		op, root             int64
		enter, collEnd, exit int64
		sent, received       int64
	}
	progs := [][]call{
		{ // rank 0: Bcast root, Barrier last, Reduce root, Allreduce first
			{"MPI_Bcast", bc, 0, 100, 120, 125, 8, 0},
			{"MPI_Barrier", bar, -1, 200, 210, 215, 0, 0},
			{"MPI_Reduce", rd, 0, 300, 320, 340, 8, 16},
			{"MPI_Allreduce", ar, -1, 400, 410, 430, 8, 8},
			{"MPI_Bcast", bc, 0, 100_000, 100_010, 100_020, 8, 0},
		},
		{ // rank 1: every call's coll_end before the other's enter
			{"MPI_Bcast", bc, 0, 50, 90, 110, 0, 8},
			{"MPI_Barrier", bar, -1, 150, 180, 205, 0, 0},
			{"MPI_Reduce", rd, 0, 330, 335, 336, 8, 0},
			{"MPI_Allreduce", ar, -1, 420, 440, 445, 8, 8},
			{"MPI_Bcast", bc, 0, 500, 1000, 200_000, 0, 8}, // a tail past 2 bytes (nodeOp's)
		},
	}
	for r, prog := range progs {
		writeMPIRank(t, dir, r, 2, 300_000, func(w *trace.Writer, emit emitFunc) {
			for _, c := range prog {
				emit(trace.MPIEnter, c.enter, w.String(c.fn))
				emit(trace.CollBegin, c.enter, c.op, 0, c.root, c.sent, c.received)
				emit(trace.CollEnd, c.collEnd, c.op, 0, c.root)
				emit(trace.MPIExit, c.exit, w.String(c.fn))
			}
		})
	}
	for k := 1; k <= 2; k++ {
		ws := analyzeNoSync(t, dir, k).WaitStates
		if ws == nil {
			t.Fatalf("k=%d: no wait states", k)
		}
		got := [4]int64{ws.LateBroadcastNS, ws.WaitBarrierNS, ws.EarlyReduceNS, ws.WaitNxNNS}
		if want := [4]int64{40 + 500, 30, 20, 10}; got != want {
			t.Errorf("k=%d: late broadcast, wait at barrier, early reduce, wait at N×N %v, want %v", k, got, want)
		}
	}
}

// TestLateReceiverRounds: more blocking sends than one round of Late
// Receiver records carries (waitstate's rounds of 1 MiB, 28 bytes a
// record): every one of them is charged, on 1 and 2 analysis ranks.
func TestLateReceiverRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("80 k messages")
	}
	const n = 40_000 // > 1 MiB / 28 B
	dir := t.TempDir()
	for r := range 2 {
		writeMPIRank(t, dir, r, 2, 1000+100*n, func(w *trace.Writer, emit emitFunc) {
			for j := range int64(n) {
				at := 1000 + 100*j
				if r == 0 { // Ssend from at to at+50; the receive begins at at+20
					emit(trace.MPIEnter, at, w.String("MPI_Ssend"))
					emit(trace.MPISend, at, 1, 4, 0, 8, 0)
					emit(trace.MPIExit, at+50, w.String("MPI_Ssend"))
				} else {
					emit(trace.MPIEnter, at+20, w.String("MPI_Recv"))
					emit(trace.MPIRecv, at+40, 0, 4, 0, 8, 0)
					emit(trace.MPIExit, at+45, w.String("MPI_Recv"))
				}
			}
		})
	}
	for k := 1; k <= 2; k++ {
		if ws := analyzeNoSync(t, dir, k).WaitStates; ws == nil || ws.LateReceiverNS != 20*n || ws.LateSenderNS != 0 {
			t.Fatalf("k=%d: wait states %+v, want late receiver %d ns and no late sender", k, ws, 20*n)
		}
	}
}

type emitFunc func(k trace.Kind, time int64, args ...int64)

// writeMPIRank writes rank r of an nranks-process MPI trace in dir: one
// thread, MPI_Init over [0, 10], body's events, MPI_Finalize over
// [end, end+10].
func writeMPIRank(t *testing.T, dir string, r, nranks int, end int64, body func(w *trace.Writer, emit emitFunc)) {
	t.Helper()
	w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: nranks, Host: "node", ClockSrc: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	members := make([]int, nranks)
	for i := range members {
		members[i] = i
	}
	w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: members})
	emit := func(k trace.Kind, time int64, args ...int64) {
		if err := w.E(0, k, time, args...); err != nil {
			t.Fatal(err)
		}
	}
	emit(trace.ThreadBegin, 0, trace.ThreadInitial)
	emit(trace.ImplicitTaskBegin, 0, 0, trace.MakeID(0, 1), 1, 0, 1)
	emit(trace.MPIEnter, 0, w.String("MPI_Init"))
	emit(trace.MPIExit, 10, w.String("MPI_Init"))
	body(w, emit)
	emit(trace.MPIEnter, end, w.String("MPI_Finalize"))
	emit(trace.MPIExit, end+10, w.String("MPI_Finalize"))
	emit(trace.ImplicitTaskEnd, end+10, 0, trace.MakeID(0, 1), 1, 0, 1)
	emit(trace.ThreadEnd, end+10)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// analyzeNoSync analyses dir on k in-process ranks without clock
// synchronization and returns rank 0's report.
func analyzeNoSync(t *testing.T, dir string, k int) *report.Report {
	t.Helper()
	rep, err := runWith(k, driver.Options{Dir: dir, NoClockSync: true})
	if err != nil {
		t.Fatalf("k=%d: %v", k, err)
	}
	return rep
}

// TestLateReceiverSenderPastFirstWord: the Late Receiver records go only
// to senders with a blocking send site (a bit a process, summed over the
// ranks); a blocking sender of world rank past 64 (the set's second word)
// is still charged, and an Isend's receive, which travels nowhere now,
// charges nothing, on 1 to 3 analysis ranks.
func TestLateReceiverSenderPastFirstWord(t *testing.T) {
	const procs = 70
	dir := t.TempDir()
	for r := range procs {
		writeMPIRank(t, dir, r, procs, 1000, func(w *trace.Writer, emit emitFunc) {
			switch r {
			case 67: // Ssend from 100 to 150; the receive begins at 120
				emit(trace.MPIEnter, 100, w.String("MPI_Ssend"))
				emit(trace.MPISend, 100, 3, 4, 0, 8, 0)
				emit(trace.MPIExit, 150, w.String("MPI_Ssend"))
			case 5: // Isend to 3, received late: no Late Receiver
				emit(trace.MPIEnter, 100, w.String("MPI_Isend"))
				emit(trace.MPISend, 100, 3, 6, 0, 8, 0)
				emit(trace.MPIExit, 150, w.String("MPI_Isend"))
			case 3:
				emit(trace.MPIEnter, 120, w.String("MPI_Recv"))
				emit(trace.MPIRecv, 140, 67, 4, 0, 8, 0)
				emit(trace.MPIExit, 145, w.String("MPI_Recv"))
				emit(trace.MPIEnter, 160, w.String("MPI_Recv"))
				emit(trace.MPIRecv, 170, 5, 6, 0, 8, 0)
				emit(trace.MPIExit, 175, w.String("MPI_Recv"))
			}
		})
	}
	for k := 1; k <= 3; k++ {
		ws := analyzeNoSync(t, dir, k).WaitStates
		if ws == nil || ws.LateReceiverNS != 20 {
			t.Fatalf("k=%d: wait states %+v, want late receiver 20 ns", k, ws)
		}
		for _, p := range ws.PerProcess {
			if want := map[int]int64{67: 20}[p.Rank]; p.LateReceiverNS != want {
				t.Errorf("k=%d: rank %d: late receiver %d ns, want %d", k, p.Rank, p.LateReceiverNS, want)
			}
		}
	}
}

// TestLateReceiverEdgeOnlyWhereCharged: a wait for several requests
// that waited for a sender is a Late Sender, and the Late Receiver of one
// of its sends is not charged (Scalasca's rule for MPI_Waitall); no Late
// Receiver edge enters it either, so that the critical path leaves out
// the Late Sender's wait alone and follows the sender, as Scalasca's
// does. Rank 1's Waitall [80, 1000] completes rank 0's message (its
// MPI_Isend entered at 100: Late Sender 20 ns) and its own MPI_Isend to
// rank 2, whose receive began at 300 (a Late Receiver of 220 ns, had no
// Late Sender come first). With the edge, the path came through rank 2's
// code up to 300 and weighed the Waitall 700 ns; now it comes through
// rank 0's, the Waitall weighing its 900 ns after the Late Sender.
func TestLateReceiverEdgeOnlyWhereCharged(t *testing.T) {
	dir := t.TempDir()
	req := func(n int64) int64 { return trace.MakeID(0, n) }
	for r := range 3 {
		end := int64(600)
		if r == 1 {
			end = 1100
		}
		writeMPIRank(t, dir, r, 3, end, func(w *trace.Writer, emit emitFunc) {
			isend, irecv, waitall := w.String("MPI_Isend"), w.String("MPI_Irecv"), w.String("MPI_Waitall")
			switch r {
			case 0:
				emit(trace.MPIEnter, 100, isend)
				emit(trace.MPISend, 100, 1, 7, 0, 8, req(1))
				emit(trace.MPIExit, 110, isend)
				emit(trace.MPIEnter, 120, waitall)
				emit(trace.MPIRequestDone, 125, req(1))
				emit(trace.MPIExit, 130, waitall)
			case 1:
				emit(trace.MPIEnter, 50, irecv)
				emit(trace.MPIRecvPost, 52, -1, -1, 0, req(1))
				emit(trace.MPIExit, 55, irecv)
				emit(trace.MPIEnter, 60, isend)
				emit(trace.MPISend, 60, 2, 7, 0, 8, req(2))
				emit(trace.MPIExit, 70, isend)
				emit(trace.MPIEnter, 80, waitall)
				emit(trace.MPIRecv, 990, 0, 7, 0, 8, req(1))
				emit(trace.MPIRequestDone, 995, req(2))
				emit(trace.MPIExit, 1000, waitall)
			case 2:
				emit(trace.MPIEnter, 300, irecv)
				emit(trace.MPIRecvPost, 302, -1, -1, 0, req(1))
				emit(trace.MPIExit, 305, irecv)
				emit(trace.MPIEnter, 320, waitall)
				emit(trace.MPIRecv, 325, 1, 7, 0, 8, req(1))
				emit(trace.MPIExit, 330, waitall)
			}
		})
	}
	for k := 1; k <= 3; k++ {
		rep, _, path := analyzePath(t, dir, k)
		ws := rep.WaitStates
		if ws == nil || ws.LateSenderNS != 20 || ws.LateReceiverNS != 0 {
			t.Fatalf("k=%d: wait states %+v, want late sender 20 ns and no late receiver", k, ws)
		}
		var byRank [3]int64
		waitall := int64(-1)
		for _, n := range path {
			byRank[n.Rank] += n.DurNS
			if n.Rank == 1 && n.Construct == "MPI_Waitall" && n.DurNS > 0 {
				waitall = n.DurNS
			}
		}
		if want := [3]int64{90, 1000, 0}; byRank != want || waitall != 900 {
			t.Errorf("k=%d: path by rank %v ns, rank 1's MPI_Waitall %d ns on it; want %v and 900 (path %+v)", k, byRank, waitall, want, path)
		}
	}
}

// The wait states phase allocates what it keeps once, not per wait
// (issue 44): on a pure-MPI trace of 32 processes its delay costs built
// every wait's time map in two maps, grew the record buffers anew each
// round and its largest arrays by a quarter at a time (four times their
// size in copies), and kept every wait twice: 544 bytes a call, 312 once
// that was fixed, 275 with narrower points, tasks and requests; 326 at
// session 41's start, 356 once Late Post and Early Wait had delay costs
// (each per-pattern cost array of a wait, its inflow and its ready task
// two int64 longer: waitstate.delayPatterns from 10 to 12).
// The bound is the phase's heap allocations (runtime/metrics, from the end
// of the phase before it to its end) per MPI call, which neither the
// collector's timing nor the machine's load changes.
func TestWaitStatesAllocatePerProcess(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "mpi", Ranks: 32, Events: 400_000, Seed: 7})
	read := func() (objects, bytes uint64) {
		s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	var obj0, bytes0, objects, bytes uint64
	rep, err := runWith(1, driver.Options{Dir: dir, AfterPhase: func(_ int, phase string) {
		switch phase {
		case "summarize":
			obj0, bytes0 = read()
		case "wait states":
			o, b := read()
			objects, bytes = o-obj0, b-bytes0
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.WaitStates == nil {
		t.Fatal("no wait states")
	}
	calls := rep.WaitStates.Calls
	if calls < 100_000 {
		t.Fatalf("%d MPI calls, want a trace of more than 100000", calls)
	}
	perObj, perByte := float64(objects)/float64(calls), float64(bytes)/float64(calls)
	t.Logf("%d MPI calls: %.3f objects, %.0f bytes allocated a call", calls, perObj, perByte)
	if perObj > 0.1 {
		t.Errorf("the wait states phase allocated %.3f objects an MPI call, want at most 0.1 (allocations per call)", perObj)
	}
	if perByte > 370 {
		t.Errorf("the wait states phase allocated %.0f bytes an MPI call, want at most 370", perByte)
	}
}

// TestGeneralActiveTargetWaits: MPI_Win_post, _start, _complete and _wait
// recorded as the collector records them (messages under the reserved
// tags trace.TagWinPost and trace.TagWinComplete): target 0 posts at 100
// to origins 1 and 2, which entered MPI_Win_start at 20 and 50 (Late Post
// 80 and 50 ns, caused by rank 0); they enter MPI_Win_complete at 150
// and 300, and the target's MPI_Win_wait, entered at 110, waits until the
// last of them (Early Wait 190 ns, caused by rank 2). A program message
// received late in the same trace stays a Late Sender; patterns + other
// = MPI time; delay costs charge rank 0's time before its post and rank
// 2's before its complete; the same on 1 and 2 analysis ranks.
func TestGeneralActiveTargetWaits(t *testing.T) {
	dir := t.TempDir()
	post, done := int64(trace.TagWinPost), int64(trace.TagWinComplete)
	progs := []func(w *trace.Writer, emit emitFunc){
		func(w *trace.Writer, emit emitFunc) { // target
			emit(trace.MPIEnter, 100, w.String("MPI_Win_post"))
			emit(trace.MPISend, 100, 1, post, 0, 0, 0)
			emit(trace.MPISend, 100, 2, post, 0, 0, 0)
			emit(trace.MPIExit, 105, w.String("MPI_Win_post"))
			emit(trace.MPIEnter, 110, w.String("MPI_Win_wait"))
			emit(trace.MPIRecv, 395, 1, done, 0, 0, 0)
			emit(trace.MPIRecv, 395, 2, done, 0, 0, 0)
			emit(trace.MPIExit, 400, w.String("MPI_Win_wait"))
			emit(trace.MPIEnter, 500, w.String("MPI_Recv")) // a Late Sender of 40 ns
			emit(trace.MPIRecv, 560, 1, 7, 0, 8, 0)
			emit(trace.MPIExit, 561, w.String("MPI_Recv"))
		},
		func(w *trace.Writer, emit emitFunc) { // origin 1
			emit(trace.MPIEnter, 20, w.String("MPI_Win_start"))
			emit(trace.MPIRecv, 105, 0, post, 0, 0, 0)
			emit(trace.MPIExit, 106, w.String("MPI_Win_start"))
			emit(trace.MPIEnter, 150, w.String("MPI_Win_complete"))
			emit(trace.MPISend, 150, 0, done, 0, 0, 0)
			emit(trace.MPIExit, 155, w.String("MPI_Win_complete"))
			emit(trace.MPIEnter, 540, w.String("MPI_Send"))
			emit(trace.MPISend, 540, 0, 7, 0, 8, 0)
			emit(trace.MPIExit, 545, w.String("MPI_Send"))
		},
		func(w *trace.Writer, emit emitFunc) { // origin 2
			emit(trace.MPIEnter, 50, w.String("MPI_Win_start"))
			emit(trace.MPIRecv, 104, 0, post, 0, 0, 0)
			emit(trace.MPIExit, 107, w.String("MPI_Win_start"))
			emit(trace.MPIEnter, 300, w.String("MPI_Win_complete"))
			emit(trace.MPISend, 300, 0, done, 0, 0, 0)
			emit(trace.MPIExit, 305, w.String("MPI_Win_complete"))
		},
	}
	for r, body := range progs {
		writeMPIRank(t, dir, r, len(progs), 1000, body)
	}
	for k := 1; k <= 2; k++ {
		rep := analyzeNoSync(t, dir, k)
		ws := rep.WaitStates
		if ws == nil || len(ws.PerProcess) != 3 {
			t.Fatalf("k=%d: wait states %+v", k, ws)
		}
		type pw struct{ lp, ew, ls int64 }
		var got []pw
		for _, p := range ws.PerProcess {
			got = append(got, pw{p.LatePostNS, p.EarlyWaitNS, p.LateSenderNS})
		}
		if want := []pw{{0, 190, 40}, {80, 0, 0}, {50, 0, 0}}; !slices.Equal(got, want) {
			t.Errorf("k=%d: late post, early wait, late sender per process %v, want %v", k, got, want)
		}
		causes := map[string]int{}
		for _, c := range ws.Causes {
			causes[c.Pattern] = c.Rank
			if c.Pattern == "late_post" && (c.Rank != 0 || c.Func != "MPI_Win_start") ||
				c.Pattern == "early_wait" && (c.Rank != 2 || c.Func != "MPI_Win_wait") {
				t.Errorf("k=%d: cause %+v", k, c)
			}
		}
		if len(causes) != 3 {
			t.Errorf("k=%d: causes %+v, want late post, early wait and late sender", k, ws.Causes)
		}
		// The short-term delay costs are the waits, charged to the cause:
		// all 130 ns of Late Post to rank 0, all 190 ns of Early Wait to
		// rank 2 (its serial code before MPI_Win_complete, and 2 ns of
		// its MPI_Win_start that ran past rank 1's).
		delayed := map[string]int64{}
		for _, d := range ws.Delays {
			delayed[fmt.Sprintf("%d %s", d.Rank, d.Pattern)] += d.NS
		}
		if delayed["0 late_post"] != 130 || delayed["2 early_wait"] != 190 || len(delayed) != 3 {
			t.Errorf("k=%d: delay costs %+v, want 130 ns of rank 0's for the late post and 190 of rank 2's for the early wait", k, ws.Delays)
		}
		js, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		checkWaitInvariants(t, fmt.Sprintf("k=%d", k), js)
	}
}
