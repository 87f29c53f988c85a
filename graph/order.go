package graph

import "github.com/ptrace-dev/ptrace/trace"

// MergeOrder returns a process's merged event order: all threads' events by
// time, then thread index, then index within the thread. Entry i is the
// thread of the i-th event in that order; walking it with one cursor per
// thread visits every event once. Two bytes per event, where a list of
// (thread, index) pairs would take eight or more.
//
// The merge takes runs: it emits from the thread with the smallest head for
// as long as it stays ahead of the second smallest, so interleavings of a
// few threads cost O(threads) per run, not per event.
func MergeOrder(p *trace.Process) []uint16 {
	evs := p.Events
	n := p.NumEvents()
	order := make([]uint16, n)
	cur := make([]int, len(evs))
	// less reports whether thread a's head comes before thread b's.
	less := func(a, b int) bool {
		ta, tb := evs[a][cur[a]].Time, evs[b][cur[b]].Time
		return ta < tb || ta == tb && a < b
	}
	for pos := int64(0); pos < n; {
		best, second := -1, -1
		for t := range evs {
			if cur[t] == len(evs[t]) {
				continue
			}
			switch {
			case best < 0 || less(t, best):
				best, second = t, best
			case second < 0 || less(t, second):
				second = t
			}
		}
		ev := evs[best]
		i := cur[best]
		if second < 0 {
			for ; i < len(ev); i++ {
				order[pos] = uint16(best)
				pos++
			}
		} else {
			st := evs[second][cur[second]].Time
			for ; i < len(ev) && (ev[i].Time < st || ev[i].Time == st && best < second); i++ {
				order[pos] = uint16(best)
				pos++
			}
		}
		cur[best] = i
	}
	return order
}
