package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// One thread works 0..80 in its implicit task, recording two events in the
// middle of that work (a worksharing begin and end), runs the barrier's
// code 80..90 (from its sync_begin to its wait) and waits 90..100. The
// correction takes 2 × cost out of the work interval, never more than its
// 80 ns, and leaves the rest alone. With the runtime code booked as work
// (POT), the sync_begin is a third event inside 90 ns of work.
func TestInstrumentationCorrection(t *testing.T) {
	for _, c := range []struct {
		cost, work, instr, events int64
		asWork                    bool
	}{
		{0, 80, 0, 0, false},
		{3, 74, 6, 2, false},
		{60, 0, 80, 2, false}, // 120 ns of recording in 80 ns of work: all of it
		{0, 90, 0, 0, true},
		{3, 81, 9, 3, true},
		{60, 0, 90, 3, true},
	} {
		g := newProg(1).region(1, 0)
		g.ev(0, trace.WorkBegin, 20, 2, 10, 0)
		g.ev(0, trace.WorkEnd, 40, 2, 10, 0)
		g.ev(0, trace.SyncBegin, 80, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
		g.ev(0, trace.SyncWaitBegin, 90, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
		g.ev(0, trace.SyncWaitEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
		g.ev(0, trace.SyncEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
		g.end(1, 100)
		s := g.runBooking(t, c.cost, c.asWork)
		tt := s.Breakdown.Threads[0]
		if tt.Work != c.work || tt.Instrumentation != c.instr || tt.Total() != 100 {
			t.Errorf("cost %d, runtime as work %v: work %d, instrumentation %d, total %d; want %d, %d, 100", c.cost, c.asWork, tt.Work, tt.Instrumentation, tt.Total(), c.work, c.instr)
		}
		if ev := s.Breakdown.InstrumentedEvents(); (c.events == 0) != (ev == 0) || ev < c.events {
			t.Errorf("cost %d, runtime as work %v: %d events corrected, want %d or more", c.cost, c.asWork, ev, c.events)
		}
	}
}
