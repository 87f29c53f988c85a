package driver_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
)

// Wait states of halo runs equal the schedule's (expected.json) on 1..3
// analysis ranks, with skewed and drifting clocks too, and the patterns
// are disjoint parts of the MPI time, which is the breakdown's.
func TestWaitStatesGroundTruth(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "halo", Ranks: 4, Threads: 2, RankImbalance: 0.7, LatencyNS: 4000, Iterations: 20},
		{Workload: "halo", Ranks: 5, Threads: 3, RankImbalance: 0.4, ThreadImbalance: 0.2, Jitter: 0.2, LatencyNS: 2000,
			SkewNS: 1_000_000, DriftPPM: 20, Iterations: 20},
		{Workload: "halo", Ranks: 3, Threads: 2, Exchange: "allreduce", RankImbalance: 0.5, Jitter: 0.3, LatencyNS: 3000,
			SkewNS: 500_000, DriftPPM: 10, Iterations: 20},
		{Workload: "halo", Ranks: 1, Threads: 2, Iterations: 5},
	}
	for _, cfg := range cfgs {
		dir, exp := generate(t, cfg)
		if cfg.SkewNS > 0 {
			exp = waitsOnly(exp)
		}
		for k := 1; k <= min(3, cfg.Ranks); k++ {
			name := fmt.Sprintf("%s %s/%d×%d skew=%d k=%d", cfg.Workload, cfg.Exchange, cfg.Ranks, cfg.Threads, cfg.SkewNS, k)
			_, js := analyze(t, dir, k)
			checkExpected(t, name, js, exp)
			checkWaitInvariants(t, name, js)
		}
	}
}

// Traces without MPI calls in the window have no wait_states section.
func TestWaitStatesAbsentWithoutMPI(t *testing.T) {
	for _, wl := range []string{"imbalance", "stencil"} {
		dir, _ := generate(t, gen.Config{Workload: wl, Ranks: 2, Threads: 2, Steps: 5, Iterations: 3})
		rep, _ := analyze(t, dir, 2)
		if rep.WaitStates != nil && rep.WaitStates.MPINS != 0 {
			t.Errorf("%s: wait states with %d ns of MPI time in a trace without MPI calls", wl, rep.WaitStates.MPINS)
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
		parts := []int64{w.LateSenderNS, w.LateReceiverNS, w.WaitNxNNS, w.WaitBarrierNS, w.LateBroadcastNS, w.EarlyReduceNS, w.OtherNS}
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
