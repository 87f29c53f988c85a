package critpath

import (
	"cmp"
	"slices"
	"sort"

	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/sim"
)

// The fragment pass (sim.FragPass) gives a receive-like event of a
// process the final time of its predecessor on another process: the
// critical path's cross-process edges enter the simulation's fragment
// graph here.

// PredTimes returns the lookup of process i's receive-like events'
// predecessor times (nil without edges): per thread, the events in order
// and their predecessors' times, searched by bisection (16 bytes an edge
// and no hashing where a map took 30–40). An event with several
// predecessors (a completion that waited for a member's progress: its
// matched predecessor and the progress point, waitstate) gets the latest
// of their times. The lists are made in *buf, which the next process's
// lookup reuses once this one's simulation is done.
func PredTimes(edges []graph.RemoteEdges, i int, buf *PredBuf) sim.PredTime {
	if i >= len(edges) || edges[i].Len() == 0 {
		return nil
	}
	e := &edges[i]
	byThread := *buf
	for th := range byThread {
		byThread[th] = byThread[th][:0]
	}
	for k := range e.Len() {
		th := int(e.ThreadAt(k))
		if th < 0 {
			continue
		}
		for len(byThread) <= th {
			byThread = append(byThread, nil)
		}
		byThread[th] = append(byThread[th], predAt{e.EventAt(k), e.PredTimeAt(k)})
	}
	*buf = byThread
	byEvent := func(a, b predAt) int { return cmp.Compare(a.event, b.event) }
	for _, l := range byThread {
		// The rows come nearly in event order, which the stable sort's
		// insertion runs and merges take at little cost (pdqsort by
		// event and time: 0.5 % more of the 64-process pure MPI trace's
		// instructions, in 2026-11-30's callgrind).
		if !slices.IsSortedFunc(l, byEvent) {
			slices.SortStableFunc(l, byEvent)
		}
	}
	// The simulation asks in each thread's event order: a lookup starts
	// where the thread's last one ended (every entry before next[th] is
	// of an event before the last asked) and scans a few entries before it
	// bisects.
	next := make([]int, len(byThread))
	return func(th int, idx int64) (int64, bool) {
		if th < 0 || th >= len(byThread) {
			return 0, false
		}
		l := byThread[th]
		if k := next[th]; k == 0 || l[k-1].event < idx {
			for j := k; j < len(l) && j < k+8; j++ {
				if l[j].event > idx {
					next[th] = j
					return 0, false
				}
				if l[j].event == idx {
					t := l[j].time
					for j+1 < len(l) && l[j+1].event == idx {
						j++
						t = max(t, l[j].time)
					}
					next[th] = j + 1
					return t, true
				}
			}
		}
		k := sort.Search(len(l), func(j int) bool { return l[j].event > idx }) - 1
		next[th] = k + 1
		if k < 0 || l[k].event != idx {
			return 0, false
		}
		t := l[k].time
		for j := k - 1; j >= 0 && l[j].event == idx; j-- {
			t = max(t, l[j].time)
		}
		return t, true
	}
}

// predAt is a receive-like event and its predecessor's final time.
type predAt struct{ event, time int64 }

// PredBuf holds PredTimes' lists for reuse from one process to the next.
type PredBuf [][]predAt
