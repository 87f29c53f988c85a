package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// A pure MPI process (its code is work outside MPI, from its first event)
// flushes its trace
// buffer three times: 10..30 while it computes, 65..70 inside an MPI call
// (60..80) and 85..95 inside the last call (80..100), which the window cuts
// at 90. The flush in work is taken out of it into Instrumentation (left
// in work with the correction off); the others stay in MPI. A window from
// 15 counts the first flush from 15.
func TestBufferFlushes(t *testing.T) {
	for _, c := range []struct {
		begin                     int64
		keep                      bool
		work, instr, mpi          int64
		flushes, flush, fwork, fm int64
	}{
		{0, false, 40, 20, 30, 3, 30, 20, 10},
		{0, true, 60, 0, 30, 3, 30, 20, 10},
		{15, false, 30, 15, 30, 3, 25, 15, 10},
	} {
		g := newProg(1)
		g.ev(0, trace.FlushBegin, 10)
		g.ev(0, trace.FlushEnd, 30)
		g.ev(0, trace.MPIEnter, 60, 0)
		g.ev(0, trace.FlushBegin, 65)
		g.ev(0, trace.FlushEnd, 70)
		g.ev(0, trace.MPIExit, 80, 0)
		g.ev(0, trace.MPIEnter, 80, 0)
		g.ev(0, trace.FlushBegin, 85)
		g.ev(0, trace.FlushEnd, 95)
		g.ev(0, trace.MPIExit, 100, 0)
		// The initial thread's first event starts the program at 0.
		g.events[0] = append([]trace.Event{{Time: 0, Kind: trace.ThreadBegin, Args: [5]int64{1}}}, g.events[0]...)
		s := sim.New(g.proc(), nil, false)
		s.SetWindow(c.begin, 90)
		s.KeepRecordingCost = c.keep
		if err := s.Run(ompt.NewModel()); err != nil {
			t.Fatal(err)
		}
		noWarnings(t, s)
		tt := s.Breakdown.Threads[0]
		if tt.Work != c.work || tt.Instrumentation != c.instr || tt.MPI != c.mpi || tt.Total() != 90-c.begin {
			t.Errorf("window from %d, keep %v: work %d, instrumentation %d, MPI %d, total %d; want %d, %d, %d, %d",
				c.begin, c.keep, tt.Work, tt.Instrumentation, tt.MPI, tt.Total(), c.work, c.instr, c.mpi, 90-c.begin)
		}
		if tt.Flushes != c.flushes || tt.Flush != c.flush || tt.FlushWork != c.fwork || tt.FlushMPI != c.fm {
			t.Errorf("window from %d, keep %v: %d flushes, %d ns, %d in work, %d in MPI; want %d, %d, %d, %d",
				c.begin, c.keep, tt.Flushes, tt.Flush, tt.FlushWork, tt.FlushMPI, c.flushes, c.flush, c.fwork, c.fm)
		}
	}
}
