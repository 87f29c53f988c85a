package sim_test

import (
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

func simulate(t *testing.T, path string) *sim.Sim {
	t.Helper()
	p, err := trace.LoadProcess(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, false)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	return s
}

// POT's imbalance benchmark (seed §4.2): thread t of n runs one task of t·g
// per iteration and waits, so work is I·g·n(n+1)/2, idleness I·g·n(n−1)/2
// and overhead 0.
func TestImbalanceQuick(t *testing.T) {
	const n, g, iters = 4, 1000, 10
	dir := t.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "imbalance", Ranks: 1, Threads: n, GrainNS: g, Iterations: iters}); err != nil {
		t.Fatal(err)
	}
	s := simulate(t, filepath.Join(dir, trace.FileName(0)))
	var tot sim.ThreadTimes
	for _, tt := range s.Breakdown.Threads {
		tot.Work += tt.Work
		tot.Idle += tt.Idle + tt.IdleSerial
		tot.Overhead += tt.Overhead + tt.OverheadSerial
		tot.MPI += tt.MPI
	}
	want := sim.ThreadTimes{Work: iters * g * n * (n + 1) / 2, Idle: iters * g * n * (n - 1) / 2}
	if tot != want || s.Warn.Total() != 0 {
		t.Errorf("breakdown %+v, want %+v (warnings %v)", tot, want, s.Warn.Examples)
	}
}
