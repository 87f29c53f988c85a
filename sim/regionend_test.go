package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// A worker leaves the region's last barrier before its encountering thread
// ends the region, and LLVM libomp reports the worker's implicit-task end
// only at exit. The region's end finishes the worker's implicit task, so
// its fragment after the barrier ends there (20..22) and joins the
// master's continuation (FragPass sees Sim.touched, which the breakdown
// pass used to clear first); it does not run on to the worker's late event.
//
// thread 0: region code 0..10, barrier 10..20, region code 20..22,
// parallel_end 22, serial code 22..30, end 30.
// thread 1: region code 0..5, barrier 5..20, implicit-task end at 100.
// Longest path: 10 (master before the barrier) + 2 (after it) + 8
// (serial) = 20; work T1 = 10 + 5 + 2 + 2 + 8 = 27.
func TestFragsClosedAtRegionEnd(t *testing.T) {
	g := newProg(2).region(2, 0)
	g.barrier(0, 10, 20)
	g.barrier(1, 5, 20)
	g.ev(0, trace.ImplicitTaskEnd, 22, id(0, 2), implicit(0), 2, 0, ompt.TaskImplicit)
	g.ev(0, trace.ParallelEnd, 22, id(0, 2), id(0, 1), 0, 0)
	g.ev(0, trace.ImplicitTaskEnd, 30, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ThreadEnd, 30)
	g.ev(1, trace.ImplicitTaskEnd, 100, 0, implicit(1), 0, 1, ompt.TaskImplicit)
	g.ev(1, trace.ThreadEnd, 100)
	s, m, f := runFrags(t, g)
	noWarnings(t, s)
	span, work := longest(t, f)
	if span != 20 || work != 27 {
		t.Errorf("span %d work %d, want 20 and 27", span, work)
	}
	last := f.LastOf(m.Task(implicit(1)))
	if last < 0 || f.Weight[last] != 2 || f.Attr(last).Start != 20 {
		t.Fatalf("worker's last fragment %d, want one of 2 ns from 20", last)
	}
	joined := false
	for _, e := range fragEdges(f) {
		joined = joined || e[0] == last && f.Attr(e[1]).Kind == sim.FragSerial
	}
	if !joined {
		t.Errorf("worker's last fragment does not join the serial code after the region")
	}
}
