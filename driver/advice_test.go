package driver_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
)

// Each advice branch on a gen workload built to trigger it, and the Tallent
// class read from the idleness inside parallel regions: a run whose
// idleness is all serial is LL, not "threads starve for ready tasks".
func TestAdviceBranches(t *testing.T) {
	for _, c := range []struct {
		cfg      gen.Config
		dominant string
		class    string
	}{
		// Workers wait while the master runs 1 ms of serial code per 100 µs region.
		{gen.Config{Workload: "halo", Threads: 4, ComputeNS: 100_000, SerialNS: 1_000_000, Iterations: 5}, "serial", "LL"},
		// The last thread computes 4× the first.
		{gen.Config{Workload: "halo", Threads: 4, ThreadImbalance: 3, SerialNS: 1_000, Iterations: 5}, "imbalance", "HL"},
		// One chain of tasks for four threads: three always lack a ready task.
		{gen.Config{Workload: "pipeline", Threads: 4}, "starvation", "HL"},
		// One thread, team fork and join ten times the region's compute.
		{gen.Config{Workload: "halo", Threads: 1, ForkNS: 1_000_000, JoinNS: 200_000, ComputeNS: 100_000, SerialNS: 1_000, Iterations: 5}, "overhead", "LH"},
		// Dependent tasks that keep every thread busy.
		{gen.Config{Workload: "stencil", Threads: 4}, "none", "LL"},
	} {
		dir, _ := generate(t, c.cfg)
		r, _ := analyze(t, dir, 1)
		b := r.Breakdown
		a := b.Advice
		if a == nil {
			t.Fatalf("%s: no advice", c.cfg.Workload)
		}
		if a.Dominant != c.dominant || b.Class != c.class {
			t.Errorf("%s %+v: advice %q (%s), class %s; want %s, %s", c.cfg.Workload, c.cfg, a.Dominant, a.Text, b.Class, c.dominant, c.class)
		}
		if b.Interpretation != a.Text {
			t.Errorf("%s: interpretation %q is not the advice %q", c.cfg.Workload, b.Interpretation, a.Text)
		}
		// The advice's parts partition the non-working time.
		if sum := a.SerialNS + a.ImbalanceNS + a.StarvationNS + a.OverheadNS; sum != b.IdlenessNS+b.OverheadNS {
			t.Errorf("%s: advice parts sum to %d, idleness + overhead %d", c.cfg.Workload, sum, b.IdlenessNS+b.OverheadNS)
		}
	}
}

// The worked example of docs/report-schema.md ("Recomputing TALP's
// hybrid-v2 values"): the JSON values it starts from, and the identity its
// step 3 relies on — useful + MPI + serialization without the workers' wait
// during MPI + load balance + scheduling = all thread time − that wait.
func TestHybridV2WorkedExample(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 2, ComputeNS: 1_000_000, SerialNS: 200_000,
		ForkNS: 10_000, JoinNS: 5_000, ThreadImbalance: 0.5, RankImbalance: 0.2, LatencyNS: 2000})
	r, _ := analyze(t, dir, 2)
	p := r.POP
	if p.ElapsedNS != 4_034_000 {
		t.Errorf("elapsed %d, the doc says 4034000", p.ElapsedNS)
	}
	want := [][7]int64{
		{2_700_000, 302_000, 517_000, 500_000, 15_000, 15_000, 302_000},
		{3_200_000, 2_000, 217_000, 600_000, 15_000, 15_000, 2_000},
	}
	var all, w, active int64
	for i, q := range p.PerProcess {
		got := [7]int64{q.UsefulNS, q.MPINS, q.IdleSerialNS, q.IdleLBNS, q.IdleSchedNS, q.ForkJoinNS, q.IdleSerialDuringMPINS}
		if got != want[i] {
			t.Errorf("rank %d: %v, the doc's table says %v", q.Rank, got, want[i])
		}
		m := int64(q.Threads)
		all += m * q.ElapsedNS
		w += m * q.IdleSerialDuringMPINS
		active += m * (q.UsefulNS + q.MPINS + q.IdleSerialNS - q.IdleSerialDuringMPINS + q.IdleLBNS + q.IdleSchedNS)
	}
	if active != all-w {
		t.Errorf("ΣU+ΣC+ΣS+ΣL+ΣH = %d, N_cpu·T − ΣW = %d", active, all-w)
	}
}
