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
	s := sim.New(p, false)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestImbalanceQuick(t *testing.T) {
	dir := t.TempDir()
	res, err := gen.Generate(dir, gen.Config{Workload: "imbalance", Ranks: 1, Threads: 4, GrainNS: 1000, Iterations: 10})
	if err != nil {
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
	t.Logf("warnings: %v %v", s.Warn.Count, s.Warn.Examples)
	t.Logf("got %+v expected %v", tot, res.Expected["breakdown"])
}
