package graph

import "github.com/ptrace-dev/ptrace/trace"

// tieClass orders events of different threads with equal timestamps:
// send-like events first, receive-like events last. A clock that cannot
// tell two threads' events apart says nothing about their order, and a
// receive placed before a send it (indirectly) depends on would close a
// false cycle; a send placed first never can.
func tieClass(k trace.Kind) int8 {
	switch k {
	case trace.MPISend, trace.CollBegin, trace.RemoteDepOut, trace.CollStart:
		return 0
	case trace.MPIRecv, trace.CollEnd, trace.RemoteDepIn, trace.CollComplete:
		return 2
	}
	return 1
}

// MergedTimes returns a process's merged event order and the events'
// recorded times in that order: what the CLC's sweeps read (clocksync),
// made when they are needed rather than kept from the match. The order is
// all threads' events by time; among different threads' events with equal
// times, send-like before others before receive-like (see tieClass), then
// by thread index; each thread's own events in their order. Entry i is the
// thread of the i-th event; walking it with one cursor per thread visits
// every event once. Two bytes per event, where a list of (thread, index)
// pairs would take eight or more. Point-to-point channels match in this
// order; since a channel's events are all sends or all receives, the tie
// classes do not change which messages match.
//
// The merge takes runs: it emits from the thread with the smallest head for
// as long as it stays ahead of the second smallest, so interleavings of a
// few threads cost O(threads) per run, not per event.
func MergedTimes(p *trace.Process, pool *trace.Scans) ([]uint16, []int64, error) {
	times := make([]int64, p.NumEvents())
	order, err := mergeWalk(p, pool, true, false, func(pos int64, _ int, _ int64, e *trace.Event) { times[pos] = e.Time })
	if err != nil {
		return nil, nil, err
	}
	return order, times, nil
}

// mergeWalk walks p's events in merged order and, when visit is not nil,
// calls it for every event (its position, thread, index in the thread): one
// decode of the process serves the order and the visit. With keep it
// returns the order (the thread of each position). With commOnly it reads
// only the threads that have communication events (trace.ThreadEvents.Comm):
// the merged order restricted to them is the same, since a merge that takes
// the smallest head orders two threads' events by the comparator alone, but
// positions then count their events only. A scan that fails (a file re-read
// that changed) is the error.
func mergeWalk(p *trace.Process, pool *trace.Scans, keep, commOnly bool, visit func(pos int64, th int, idx int64, e *trace.Event)) ([]uint16, error) {
	nth := p.NumThreads()
	scans := make([]*trace.ThreadScan, nth)
	live := make([]bool, nth)
	defer pool.Put(scans...)
	var n int64
	for t := range scans {
		if commOnly && p.Events[t].Comm == 0 {
			continue
		}
		n += p.Events[t].N
		scans[t] = pool.Get(p, t, nil)
		live[t] = scans[t].Next()
	}
	var order []uint16
	if keep {
		order = make([]uint16, n)
	}
	// before reports whether event e of thread a comes before the head of
	// thread b (a ≠ b).
	before := func(e *trace.Event, a, b int) bool {
		h := scans[b].Event()
		if e.Time != h.Time {
			return e.Time < h.Time
		}
		if ca, cb := tieClass(e.Kind), tieClass(h.Kind); ca != cb {
			return ca < cb
		}
		return a < b
	}
	for pos := int64(0); pos < n; {
		best, second := -1, -1
		for t := range scans {
			if !live[t] {
				continue
			}
			switch {
			case best < 0 || before(scans[t].Event(), t, best):
				best, second = t, best
			case second < 0 || before(scans[t].Event(), t, second):
				second = t
			}
		}
		if best < 0 {
			break // a scan ended early: its error follows
		}
		sc := scans[best]
		for {
			if keep {
				order[pos] = uint16(best)
			}
			if visit != nil {
				visit(pos, best, sc.Index(), sc.Event())
			}
			pos++
			if live[best] = sc.Next(); !live[best] {
				break
			}
			if second >= 0 && !before(sc.Event(), best, second) {
				break
			}
		}
	}
	for _, sc := range scans {
		if sc == nil {
			continue
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// commWalk calls visit for every communication event of p in merged order
// (mergeWalk's order restricted to them), from the communication log the
// load kept when it did (trace.Process.CommScan), else by a merged walk of
// the threads that communicate.
//
// Threads are in time order (the load checks it), so the merged walk takes
// every event of a time before any event of a later one, and the order of
// two threads' events at one time is that of merging the two threads'
// events at that time by (tie class, thread), up to the two events: it
// depends on the events at that time before them, and on nothing else. The
// log counts those (CommScan.Pre; all have tie class 1), so merging the
// logs with those counts as events of their own gives the merged walk's
// order of the communication events without decoding anything else.
func commWalk(p *trace.Process, pool *trace.Scans, visit func(th int, idx int64, e *trace.Event)) error {
	if !p.HasCommLog() {
		_, err := mergeWalk(p, pool, false, true, func(_ int64, th int, idx int64, e *trace.Event) { visit(th, idx, e) })
		return err
	}
	nth := p.NumThreads()
	scans := make([]trace.CommScan, nth)
	live := make([]bool, nth)
	pre := make([]int64, nth) // other events still ahead of the head
	for t := range scans {
		scans[t], _ = p.CommScan(t)
		if live[t] = scans[t].Next(); live[t] {
			pre[t] = scans[t].Pre()
		}
	}
	class := func(t int) int8 {
		if pre[t] > 0 {
			return 1
		}
		return tieClass(scans[t].Event().Kind)
	}
	for {
		best := -1
		var bt int64
		var bc int8
		for t := range scans {
			if !live[t] {
				continue
			}
			tt, c := scans[t].Event().Time, class(t)
			if best < 0 || tt < bt || tt == bt && c < bc {
				best, bt, bc = t, tt, c
			}
		}
		if best < 0 {
			return nil
		}
		if pre[best] > 0 {
			pre[best]--
			continue
		}
		sc := &scans[best]
		visit(best, sc.Index(), sc.Event())
		if live[best] = sc.Next(); live[best] {
			pre[best] = sc.Pre()
		}
	}
}
