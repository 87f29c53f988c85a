package graph

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

func ev(t int64, k trace.Kind, args ...int64) trace.Event {
	e := trace.Event{Time: t, Kind: k}
	copy(e.Args[:], args)
	return e
}

// nbcTrace: three processes on one communicator, in this order on each:
// an MPI_Allreduce (instance 0), an MPI_Iallreduce and an MPI_Ibarrier
// started (instances 1 and 2, both outstanding), an MPI_Barrier (3), then
// the two completions, process 1's MPI_Ibarrier on its second thread.
// Process 2 starts the MPI_Iallreduce last, process 0 the MPI_Ibarrier.
func nbcTrace() []*trace.Process {
	procs := make([]*trace.Process, 3)
	ar, bar := int64(trace.CollAllreduce), int64(trace.CollBarrier)
	for r := range procs {
		comms := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1, 2}}}
		d := int64(r)
		reqA, reqB := trace.MakeID(0, 1), trace.MakeID(0, 2)
		th0 := []trace.Event{
			ev(100+d, trace.CollBegin, ar, 0, -1, 8, 8),
			ev(200, trace.CollEnd, ar, 0, -1),
			ev(300+100*d, trace.CollStart, ar, 0, -1, 8, reqA),
			ev(700-100*d, trace.CollStart, bar, 0, -1, 0, reqB),
			ev(800, trace.CollBegin, bar, 0, -1, 0, 0),
			ev(900, trace.CollEnd, bar, 0, -1),
			ev(1000, trace.CollComplete, ar, 0, -1, 8, reqA),
		}
		var th1 []trace.Event
		done := ev(1100, trace.CollComplete, bar, 0, -1, 0, reqB)
		if r == 1 {
			th1 = []trace.Event{done}
		} else {
			th0 = append(th0, done)
		}
		procs[r] = mkProc(trace.Header{Rank: r, NRanks: 3}, trace.Tables{Comms: comms}, [][]trace.Event{th0, th1})
	}
	return procs
}

// TestNonblockingCollectives: coll_start and coll_complete pair by request
// (two outstanding on one communicator, one completed on another thread),
// are numbered with the blocking collectives of their communicator, and
// each completion follows the latest relevant start, as a coll_end its
// coll_begins.
func TestNonblockingCollectives(t *testing.T) {
	for k := 1; k <= 3; k++ {
		procs := nbcTrace()
		m := runMatch(t, procs, k)
		if m.stats.Collectives != 4 || m.stats.BadCollectives != 0 || m.stats.BadEvents != 0 || m.count != 0 || m.stats.CollectiveCalls != 12 {
			t.Fatalf("k=%d: %+v, warnings %v", k, m.stats, m.warns)
		}
		if rows := checkEdges(t, procs, m); rows != 12 {
			t.Errorf("k=%d: %d rows, want 4 per process", k, rows)
		}
		for r := range procs {
			e := &m.edges[r]
			for i := 0; i < e.Len(); i++ {
				want := int32(2) // the blocking ones' and the Iallreduce's latest enter
				switch {
				case e.KindAt(i) == trace.CollComplete && e.PredKindAt(i) == trace.CollStart && e.PredEventAt(i) == 3:
					want = 0 // the Ibarrier's
				case e.KindAt(i) == trace.CollEnd && e.PredKindAt(i) == trace.CollBegin && e.PredEventAt(i) == 4:
					want = -2 // the MPI_Barrier: all enter at 800, any
				}
				if want >= 0 && e.PredProcAt(i) != want {
					t.Errorf("k=%d: process %d row %d (%s, thread %d event %d) follows process %d (%s event %d), want %d", k, r, i,
						e.KindAt(i), e.ThreadAt(i), e.EventAt(i), e.PredProcAt(i), e.PredKindAt(i), e.PredEventAt(i), want)
				}
			}
		}
	}
}

// TestNonblockingCollectivesBad: hostile coll_start/coll_complete values
// are counted and listed, never fatal: a completion of no start, a start
// never completed (its instance still matches: the others wait for its
// start), a completion that disagrees with its start, a start on an
// unknown communicator (its completion then silent), a request started
// again while open, values out of any range.
func TestNonblockingCollectivesBad(t *testing.T) {
	ar := int64(trace.CollAllreduce)
	comms := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1}}}
	mk := func(evs ...[]trace.Event) []*trace.Process {
		procs := make([]*trace.Process, len(evs))
		for r := range evs {
			procs[r] = mkProc(trace.Header{Rank: r, NRanks: len(evs)}, trace.Tables{Comms: comms}, [][]trace.Event{evs[r]})
		}
		return procs
	}
	ok := []trace.Event{ev(100, trace.CollStart, ar, 0, -1, 8, 5), ev(300, trace.CollComplete, ar, 0, -1, 8, 5)}
	cases := []struct {
		name       string
		p0         []trace.Event
		coll, bad  int64
		badColl    int64
		warn       string
		p1Rows     int
		p0RowsWant int
	}{
		{"unknown request", append([]trace.Event{ev(50, trace.CollComplete, ar, 0, -1, 8, 99)}, ok...), 1, 1, 0, "request 0x63 completes no coll_start", 1, 1},
		{"never completed", ok[:1], 1, 1, 0, "MPI_Allreduce on communicator 0 has no coll_complete", 1, 0},
		{"op differs", []trace.Event{ok[0], ev(300, trace.CollComplete, int64(trace.CollBcast), 0, -1, 8, 5)}, 1, 1, 0, "completes MPI_Bcast on communicator 0, started as MPI_Allreduce on communicator 0", 1, 0},
		{"communicator differs", []trace.Event{ok[0], ev(300, trace.CollComplete, ar, 7, -1, 8, 5)}, 1, 1, 0, "on communicator index 7 (unknown)", 1, 0},
		{"unknown communicator", append([]trace.Event{ev(50, trace.CollStart, ar, 9, -1, 8, 6), ev(60, trace.CollComplete, ar, 9, -1, 8, 6)}, ok...), 1, 1, 0, "unknown communicator index 9", 1, 1},
		{"request reused", []trace.Event{ok[0], ev(200, trace.CollStart, ar, 0, -1, 8, 5), ok[1]}, 1, 1, 1, "has no coll_complete before the request starts again", 1, 0},
		{"wild values", append([]trace.Event{ev(50, trace.CollStart, -1<<62, -3, 1<<40, -1, -1<<63), ev(60, trace.CollComplete, 1<<62, 1<<62, -5, -1, 1<<63-1)}, ok...), 1, 2, 0, "unknown communicator index -3", 1, 1},
	}
	for _, c := range cases {
		for k := 1; k <= 2; k++ {
			procs := mk(c.p0, ok)
			m := runMatch(t, procs, k)
			if m.stats.Collectives != c.coll || m.stats.BadEvents != c.bad || m.stats.BadCollectives != c.badColl ||
				!strings.Contains(strings.Join(m.warns, "\n"), c.warn) {
				t.Errorf("%s, k=%d: %+v, warnings %v, want %d matched, %d bad events with %q", c.name, k, m.stats, m.warns, c.coll, c.bad, c.warn)
				continue
			}
			checkEdges(t, procs, m)
			if m.edges[1].Len() != c.p1Rows || m.edges[0].Len() != c.p0RowsWant {
				t.Errorf("%s, k=%d: rows %d and %d, want %d and %d", c.name, k, m.edges[0].Len(), m.edges[1].Len(), c.p0RowsWant, c.p1Rows)
			}
		}
	}
}
