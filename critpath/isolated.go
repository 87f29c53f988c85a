package critpath

import (
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// A process whose tasks have no remote dependence (an OpenMP program, or
// an MPI code whose tasks depend only on its own) has a task graph of its
// own, joined to no other process's: its longest paths need neither the
// distributed DAG's build (two passes over the edges, and its adjacency)
// nor the replay's pending counts and ready stack. Its dependence pairs
// come in creation order: the model records a task's edges as it creates
// the task, from predecessors created before it (an address's writer and
// readers exist when a later task names the address), each successor's
// edges in one run (sim.PairCheck). Read from the last pair to the first,
// every task's outputs are then read before its own run of inputs: at that
// run its longest path from it is final, and it passes that on to its
// predecessors. One pass over the packed pairs, backward, and a value a
// task. Pairs from a runtime-reported dependence (task_dependence) may
// come later than that order; the pass finds out (a successor whose run
// comes after one of its outputs', or in two runs) and the process's graph
// takes the general way.

// creationOrderBL computes BL, the heaviest path starting with each task
// (its own run time w.At(t) included; −1, a task that never ran, weighs 0), for a process's task graph whose
// edges are deps (each (predecessor, successor) joining tasks that ran,
// those with their bit set in ran, none repeated), over n task slots. It writes into val (n values, scratch)
// the BL of each task with no input (a root), in task order, at the
// front, and returns how many, with the number of tasks that ran and have
// no output (the leaves). ok is false, with val and the counts
// meaningless, when the pairs are not in creation order (see above) or
// name a task outside 0..n−1.
func creationOrderBL(deps *packed.Pairs, n int, w *narrow.Framed, ran []uint64, val []int64) (roots int, leaves int64, ok bool) {
	val = val[:n]
	words := (n + 63) / 64
	bits := make([]uint64, 2*words)
	// in: the task's run was read, its value is final; out: it has an
	// output, val holds the best of those read so far.
	in, out := bits[:words], bits[words:]
	var as, bs [256]int32
	cur := int32(-1)
	r := deps.Backward()
	for k := r.Read(as[:], bs[:]); k > 0; k = r.Read(as[:], bs[:]) {
		for j := range k {
			p, s := as[j], bs[j]
			if uint(p) >= uint(n) || uint(s) >= uint(n) {
				return 0, 0, false
			}
			if s != cur {
				// s's run, read from its last pair: every output of s came
				// after it, so its value is final.
				if bitAt(in, s) {
					return 0, 0, false // a second run of s
				}
				setBit(in, s)
				val[s] = heaviest(max(w.At(int(s)), 0), val[s], bitAt(out, s))
				cur = s
			}
			switch {
			case bitAt(in, p):
				return 0, 0, false // p's own run came after this output of p
			case !bitAt(out, p):
				setBit(out, p)
				val[p] = val[s]
			default:
				val[p] = max(val[p], val[s])
			}
		}
	}
	// The roots' values, final now, move to the front in task order (a
	// root's lands at or before its own slot).
	for t := range int32(n) {
		if !bitAt(ran, t) {
			continue
		}
		hasOut := bitAt(out, t)
		if !hasOut {
			leaves++
		}
		if !bitAt(in, t) {
			val[roots] = heaviest(max(w.At(int(t)), 0), val[t], hasOut)
			roots++
		}
	}
	return roots, leaves, true
}

// heaviest is the value of a node of weight w whose heaviest output gives
// best (when it has one), as graph's replays with weights compute it.
func heaviest(w, best int64, has bool) int64 {
	if has {
		return w + best
	}
	return w
}

// bitAt reports whether bit i of the set b is set; setBit sets it. The
// index is unsigned: an int32's /64 and %64 are several instructions each.
func bitAt(b []uint64, i int32) bool { return b[uint32(i)>>6]&(1<<(uint32(i)&63)) != 0 }

func setBit(b []uint64, i int32) { b[uint32(i)>>6] |= 1 << (uint32(i) & 63) }
