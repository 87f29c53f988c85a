package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// One thread works 0..90 in its implicit task, recording three events in the
// middle of that work (a worksharing begin and end, a barrier's sync_begin),
// then waits 90..100. The correction takes 3 × cost out of the work
// interval, never more than its 90 ns, and leaves the rest alone.
func TestInstrumentationCorrection(t *testing.T) {
	for _, c := range []struct{ cost, work, instr int64 }{
		{0, 90, 0},
		{3, 81, 9},
		{60, 0, 90}, // 180 ns of recording in 90 ns of work: all of it
	} {
		g := newProg(1).region(1, 0)
		g.ev(0, trace.WorkBegin, 20, 2, 10, 0)
		g.ev(0, trace.WorkEnd, 40, 2, 10, 0)
		g.ev(0, trace.SyncBegin, 80, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
		g.ev(0, trace.SyncWaitBegin, 90, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
		g.ev(0, trace.SyncWaitEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
		g.ev(0, trace.SyncEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
		g.end(1, 100)
		s, _, err := g.runCost(t, c.cost)
		if err != nil {
			t.Fatal(err)
		}
		noWarnings(t, s)
		tt := s.Breakdown.Threads[0]
		if tt.Work != c.work || tt.Instrumentation != c.instr || tt.Total() != 100 {
			t.Errorf("cost %d: work %d, instrumentation %d, total %d; want %d, %d, 100", c.cost, tt.Work, tt.Instrumentation, tt.Total(), c.work, c.instr)
		}
		if ev := s.Breakdown.InstrumentedEvents(); (c.cost == 0) != (ev == 0) || (c.cost > 0 && ev < 3) {
			t.Errorf("cost %d: %d events corrected", c.cost, ev)
		}
	}
}
