package driver_test

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
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
		// The last rank computes 3× the first: the others' workers idle
		// while their master waits in the exchange (not serial code).
		{gen.Config{Workload: "halo", Ranks: 4, Threads: 4, RankImbalance: 2, SerialNS: 1_000, Iterations: 5}, "mpi", "LL"},
		// A pure MPI program that spends over a third of its time in MPI
		// calls: no idleness or overhead at all, yet not "effectively
		// parallel".
		{gen.Config{Workload: "mpi", Ranks: 4, RankImbalance: 3}, "mpi_calls", "LL"},
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
		sum := a.SerialNS + a.MPIWaitNS + a.ImbalanceNS + a.StarvationNS + a.OverheadNS + a.MPICallsNS
		if want := b.IdlenessNS + b.OverheadNS + b.MPINS - b.InitFinalizeNS; sum != want {
			t.Errorf("%s: advice parts sum to %d, idleness + overhead + MPI calls %d", c.cfg.Workload, sum, want)
		}
		if a.Dominant == "mpi_calls" && !strings.Contains(a.Text, "MPI load balance") {
			t.Errorf("%s: %q names no POP factor", c.cfg.Workload, a.Text)
		}
	}
}

// The worked example of docs/report-schema.md ("Recomputing TALP's
// hybrid-v2 values"): the JSON values it starts from, and the identity its
// step 3 relies on — useful + MPI + serialization (the workers' wait during
// MPI included, as DLB keeps it) + load balance + scheduling = all thread
// time, N_cpu·T.
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
	var all, active int64
	for i, q := range p.PerProcess {
		got := [7]int64{q.UsefulNS, q.MPINS, q.IdleSerialNS, q.IdleLBNS, q.IdleSchedNS, q.ForkJoinNS, q.IdleSerialDuringMPINS}
		if got != want[i] {
			t.Errorf("rank %d: %v, the doc's table says %v", q.Rank, got, want[i])
		}
		m := int64(q.Threads)
		all += m * q.ElapsedNS
		active += m * (q.UsefulNS + q.MPINS + q.IdleSerialNS + q.IdleLBNS + q.IdleSchedNS)
	}
	if active != all {
		t.Errorf("ΣU+ΣC+ΣS+ΣL+ΣH = %d, N_cpu·T = %d", active, all)
	}
	// The doc's figures, recomputed from these values (fork-as-useful).
	var U, C, W, S, L, H int64
	for _, q := range p.PerProcess {
		m := int64(q.Threads)
		U += m * (q.UsefulNS + q.ForkJoinNS)
		C += m * q.MPINS
		W += m * q.IdleSerialDuringMPINS
		S += m * q.IdleSerialNS
		L += m * q.IdleLBNS
		H += m * (q.IdleSchedNS - q.ForkJoinNS)
	}
	A := U + C
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"MPI parallel", float64(p.ElapsedNS-(C+W)/4) / float64(p.ElapsedNS), 0.925},
		{"serialization", float64(A) / float64(A+S), 0.895},
		{"OpenMP load balance", float64(A+S) / float64(A+S+L), 0.864},
		{"parallel", float64(U) / float64(A+S+L+H), 0.735},
	} {
		if math.Abs(c.got-c.want) > 0.0005 {
			t.Errorf("%s efficiency %.4f, the doc says %.3f", c.name, c.got, c.want)
		}
	}
}

// A pure MPI program has no OpenMP: the report says so, and its text and
// HTML leave out Tallent's class and the OpenMP efficiencies; a hybrid one
// keeps them.
func TestPureMPIReportsNoOpenMP(t *testing.T) {
	for _, c := range []struct {
		cfg    gen.Config
		openmp bool
	}{
		{gen.Config{Workload: "mpi", Ranks: 4}, false},
		{gen.Config{Workload: "halo", Ranks: 2, Threads: 2, Iterations: 3}, true},
	} {
		dir, _ := generate(t, c.cfg)
		r, _ := analyze(t, dir, 2)
		if r.Trace.NoOpenMP == c.openmp {
			t.Errorf("%s: no_openmp %v", c.cfg.Workload, r.Trace.NoOpenMP)
		}
		var txt, html bytes.Buffer
		report.WriteText(&txt, r, report.TextOptions{})
		if err := report.WriteHTML(&html, r, report.HTMLOptions{MaxRows: 10}); err != nil {
			t.Fatal(err)
		}
		for what, out := range map[string]string{"text": txt.String(), "html": html.String()} {
			has := strings.Contains(out, "OpenMP scheduling efficiency")
			says := strings.Contains(out, "no OpenMP in the trace")
			if has != c.openmp || says == c.openmp {
				t.Errorf("%s %s: OpenMP rows %v, says none %v", c.cfg.Workload, what, has, says)
			}
		}
		// Nor the per-process POP table's OpenMP columns (1 and 0 ns).
		if cols := strings.Contains(html.String(), "<th>OpenMP parallel</th>"); cols != c.openmp {
			t.Errorf("%s html: per-process OpenMP columns %v", c.cfg.Workload, cols)
		}
		if !c.openmp && !strings.Contains(txt.String(), "anomalies  none tested") {
			t.Errorf("%s: the anomalies' line does not say none were tested", c.cfg.Workload)
		}
	}
}

// Score-P's archives of pure MPI programs are not OpenMP either, though
// the conversion gives each process an initial task as an OpenMP runtime
// would; its archives of OpenMP programs (OMPT or OPARI2) are.
func TestScorepPureMPIReportsNoOpenMP(t *testing.T) {
	for name, openmp := range map[string]bool{
		"scorep-8.4-halo-mpi-nc": false, "scorep-8.4-halo-mpi-f-nc": false, "scorep-8.4-comd-nc": false,
		"scorep-8.4-mpi-waits": false, "scorep-7.1-pingpong": false,
		"scorep-8.4-fib-ompt": true, "scorep-8.4-halo-opari2": true, "scorep-8.4-imbalance-ompt": true,
	} {
		r, _ := analyze(t, filepath.Join("..", "otf2", "testdata", name), 1)
		if r.Trace.NoOpenMP == openmp {
			t.Errorf("%s: no_openmp %v", name, r.Trace.NoOpenMP)
		}
	}
}
