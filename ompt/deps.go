package ompt

import "github.com/ptrace-dev/ptrace/trace"

// depTracker resolves OpenMP depend clauses into task→task edges among the
// sibling tasks of one parent (OpenMP 5.2 §15.9.5): per address it keeps the
// last "writer" set (out/inout; or the current mutexinoutset / inoutset
// group) and the readers (in) since. Tasks are dense indices.
//
//	in            after the last out/inout/mutexinoutset/inoutset group
//	out, inout    after the previous writers and every reader since
//	mutexinoutset after writers of other kinds and readers since; tasks of one
//	              mutexinoutset group exclude each other but need no order, so
//	              the simulator gives them none
//	inoutset      like mutexinoutset, with members fully concurrent
type depTracker struct {
	index  map[depKey]int32 // (parent, address) → state
	states []addrState
}

type depKey struct {
	parent int32
	addr   uint64
}

type addrState struct {
	writers  []int32 // last out/inout task, or the members of the current set group
	setKind  uint8   // 0: writers is a single out/inout; else DepMutexInoutset/DepInoutset
	readers  []int32 // in tasks since the last writer (group)
	setPreds []int32 // what the current set group's members depend on
}

func newDepTracker() *depTracker { return &depTracker{index: map[depKey]int32{}} }

// resolve returns the predecessors of task (child of parent) for its
// dependence list, updating the per-address state. Predecessors may repeat.
func (d *depTracker) resolve(parent, task int32, deps []trace.Dep, out []int32) []int32 {
	for _, dep := range deps {
		k := depKey{parent, dep.Addr}
		i, ok := d.index[k]
		if !ok {
			i = int32(len(d.states))
			d.states = append(d.states, addrState{})
			d.index[k] = i
		}
		a := &d.states[i]
		switch dep.Type {
		case trace.DepIn:
			out = append(out, a.writers...)
			a.readers = append(a.readers, task)
		case trace.DepOut, trace.DepInout:
			out = append(out, a.writers...)
			out = append(out, a.readers...)
			a.writers = append(a.writers[:0], task)
			a.readers = a.readers[:0]
			a.setKind = 0
			a.setPreds = a.setPreds[:0]
		case trace.DepMutexInoutset, trace.DepInoutset:
			if a.setKind == dep.Type && len(a.readers) == 0 {
				// Joins the current set group: same predecessors as its members.
				out = append(out, a.setPreds...)
				a.writers = append(a.writers, task)
			} else {
				preds := append(append([]int32{}, a.writers...), a.readers...)
				out = append(out, preds...)
				a.setPreds = preds
				a.writers = append(a.writers[:0], task)
				a.readers = a.readers[:0]
				a.setKind = dep.Type
			}
		default:
			// source/sink (doacross) order loop iterations, not tasks.
		}
	}
	return out
}
