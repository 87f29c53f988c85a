package ompt

import (
	"math/bits"

	"github.com/ptrace-dev/ptrace/internal/lists"
	"github.com/ptrace-dev/ptrace/trace"
)

// depTracker resolves OpenMP depend clauses into task→task edges among the
// sibling tasks of one parent (OpenMP 5.2 §15.9.5): per (parent, address)
// it keeps the last "writer" (an out/inout task, or the members of the
// current mutexinoutset / inoutset group) and the readers (in) since.
//
//	in            after the last out/inout/mutexinoutset/inoutset group
//	out, inout    after the previous writers and every reader since
//	mutexinoutset after writers of other kinds and readers since; members of
//	              one group exclude each other but need no order, so the
//	              simulator gives them none
//	inoutset      like mutexinoutset, with members fully concurrent
//
// Layout: one 32-byte state per (parent, address) in a dense slice, found
// through a uint64-keyed map; readers and set members live in a shared pool
// of singly linked 8-byte cells. States whose tasks have all completed carry
// no information (a dependence on a completed task is no edge), and states
// of a completed parent are never looked up again: both are swept, so
// memory follows the live tasks rather than every address used (with keep,
// which reports edges from completed tasks too, only the second).
type depTracker struct {
	index  addrTable // address → first state of its chain
	states []addrState
	free   []int32
	cells  lists.Pool // readers, set members and predecessors of the states

	live, sweepAt int
	doneAtSweep   int64 // completed tasks at the last sweep
	// keep disables sweeping: the task graph needs edges from completed
	// tasks too.
	keep bool
}

type addrState struct {
	addr    uint64
	parent  int32
	next    int32 // next state with the same address (another parent), -1 none
	writer  int32 // last out/inout task, -1 none (when setKind == 0)
	readers int32 // cell list: in tasks since the last writer
	set     int32 // cell list: members of the current set group (setKind != 0)
	setKind uint8 // 0, DepMutexInoutset or DepInoutset
	preds   int32 // cell list: predecessors of the current set group
}

// newDepTracker returns a tracker with a small table: Model.Prepare sizes
// it from the process's dependence entries (reserve), most processes of an
// MPI code have none, and a table that outgrows its size doubles.
func newDepTracker() *depTracker {
	d := &depTracker{sweepAt: 1 << 12}
	d.index.init(0)
	return d
}

// reserve pre-sizes the tracker for about n dependence entries. Most
// entries read an address another task wrote: distinct addresses, hence
// states, are about a quarter of the entries (one per task on the gen
// workloads), reader cells most of them.
// A tracker used before (Spare) is emptied and keeps its arrays where they
// are large enough.
func (d *depTracker) reserve(n int) {
	if cap(d.states) >= n/4 {
		d.states = d.states[:0]
	} else {
		d.states = make([]addrState, 0, n/4)
	}
	d.free = d.free[:0]
	d.cells.Reset()
	d.cells.Reserve(n)
	d.index.reset(n / 4)
	d.live, d.sweepAt, d.doneAtSweep = 0, 1<<12, 0
}

func (d *depTracker) appendList(out []int32, list int32) []int32 {
	for ; list != lists.None; list = d.cells.Next(list) {
		out = append(out, d.cells.Value(list))
	}
	return out
}

func (d *depTracker) lookup(parent int32, addr uint64) *addrState {
	head, ok := d.index.get(addr)
	for i := head; ok && i >= 0; i = d.states[i].next {
		if d.states[i].parent == parent {
			return &d.states[i]
		}
	}
	var i int32
	if n := len(d.free); n > 0 {
		i = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		d.states = append(d.states, addrState{})
		i = int32(len(d.states) - 1)
	}
	next := int32(-1)
	if ok {
		next = head
	}
	d.states[i] = addrState{addr: addr, parent: parent, next: next, writer: -1, readers: -1, set: -1, preds: -1}
	d.index.put(addr, i)
	d.live++
	return &d.states[i]
}

// resolve returns the predecessors of task (child of parent) for its
// dependence list, updating the per-address state. Predecessors may repeat.
// done reports completed tasks and completed counts them, for sweeping: a
// sweep runs only when the states outgrew the last sweep's survivors and
// enough tasks completed since for it to free much.
func (d *depTracker) resolve(parent, task int32, deps []trace.Dep, out []int32, done func(int32) bool, completed int64) []int32 {
	if d.live >= d.sweepAt && completed-d.doneAtSweep >= int64(d.live/2) {
		d.sweep(done)
		d.doneAtSweep = completed
	}
	for _, dep := range deps {
		a := d.lookup(parent, dep.Addr)
		switch dep.Type {
		case trace.DepIn:
			out = d.writers(out, a)
			a.readers = d.cells.Push(a.readers, task)
		case trace.DepOut, trace.DepInout:
			out = d.writers(out, a)
			out = d.appendList(out, a.readers)
			d.cells.Release(a.readers)
			d.cells.Release(a.set)
			d.cells.Release(a.preds)
			a.readers, a.set, a.preds, a.setKind = -1, -1, -1, 0
			a.writer = task
		case trace.DepMutexInoutset, trace.DepInoutset:
			if a.setKind == dep.Type && a.readers < 0 {
				// Joins the current group: same predecessors as its members.
				out = d.appendList(out, a.preds)
				a.set = d.cells.Push(a.set, task)
				break
			}
			start := len(out)
			out = d.writers(out, a)
			out = d.appendList(out, a.readers)
			d.cells.Release(a.readers)
			d.cells.Release(a.set)
			d.cells.Release(a.preds)
			a.readers, a.set, a.preds, a.writer = -1, -1, -1, -1
			for _, p := range out[start:] {
				a.preds = d.cells.Push(a.preds, p)
			}
			a.set = d.cells.Push(lists.None, task)
			a.setKind = dep.Type
		default:
			// source/sink (doacross) order loop iterations, not tasks.
		}
	}
	return out
}

// writers appends the current writer or set members of a.
func (d *depTracker) writers(out []int32, a *addrState) []int32 {
	if a.setKind != 0 {
		return d.appendList(out, a.set)
	}
	if a.writer >= 0 {
		out = append(out, a.writer)
	}
	return out
}

// sweep frees the states whose tasks have all completed and rebuilds the
// address table with the survivors. When a sweep frees little, the next
// waits longer, keeping the cost amortised O(1) even when every task is
// created before any runs.
func (d *depTracker) sweep(done func(int32) bool) {
	deadList := func(l int32) bool {
		for ; l != lists.None; l = d.cells.Next(l) {
			if !done(d.cells.Value(l)) {
				return false
			}
		}
		return true
	}
	old := d.index
	d.index.init(max(2*d.live, 1<<10))
	for slot, addr := range old.keys {
		head := old.vals[slot]
		if head < 0 {
			continue
		}
		first, prev := int32(-1), int32(-1)
		for i := head; i >= 0; {
			a := &d.states[i]
			next := a.next
			// A completed parent creates no more children, so nothing
			// looks its states up again; with keep, that is the only way
			// a state dies (a completed predecessor is still an edge of
			// the task graph).
			parentDone := a.parent >= 0 && done(a.parent)
			if parentDone || !d.keep && (a.writer < 0 || done(a.writer)) && deadList(a.readers) && deadList(a.set) && deadList(a.preds) {
				d.cells.Release(a.readers)
				d.cells.Release(a.set)
				d.cells.Release(a.preds)
				d.free = append(d.free, i)
				d.live--
			} else {
				if prev >= 0 {
					d.states[prev].next = i
				} else {
					first = i
				}
				a.next = -1
				prev = i
			}
			i = next
		}
		if first >= 0 {
			d.index.put(addr, first)
		}
	}
	d.sweepAt = max(2*d.live, 1<<12)
}

// addrTable is an open-addressing hash table from addresses to state
// indices (linear probing, Fibonacci hashing, no deletion: sweeps rebuild
// it). Dependence addresses are looked up several times per task, and a
// flat table with one probe beats a general map on this hot path.
type addrTable struct {
	keys  []uint64
	vals  []int32 // -1: empty slot
	shift uint
	n     int
}

// tableSize is the number of slots for capacity entries: a power of two,
// at most half full.
func tableSize(capacity int) int {
	size := 1 << 4
	for size < 2*capacity {
		size <<= 1
	}
	return size
}

func (t *addrTable) init(capacity int) {
	size := tableSize(capacity)
	t.keys = make([]uint64, size)
	t.vals = make([]int32, size)
	t.shift = uint(64 - bits.Len64(uint64(size-1)))
	t.empty()
}

// empty marks every slot free.
func (t *addrTable) empty() {
	for i := range t.vals {
		t.vals[i] = -1
	}
	t.n = 0
}

// reset empties the table for at least capacity entries, in place when it
// is large enough and not much larger (emptying costs its size; init
// allocates: a sweep reads the old table while it fills the new one).
func (t *addrTable) reset(capacity int) {
	if size := tableSize(capacity); len(t.keys) < size || len(t.keys) > 8*size {
		t.init(capacity)
		return
	}
	t.empty()
}

func (t *addrTable) slot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> t.shift) }

func (t *addrTable) get(k uint64) (int32, bool) {
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		v := t.vals[i]
		if v < 0 {
			return 0, false
		}
		if t.keys[i] == k {
			return v, true
		}
	}
}

func (t *addrTable) put(k uint64, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		if t.vals[i] < 0 {
			t.keys[i], t.vals[i] = k, v
			t.n++
			return
		}
		if t.keys[i] == k {
			t.vals[i] = v
			return
		}
	}
}

func (t *addrTable) grow() {
	old := *t
	t.init(len(old.keys))
	for i, v := range old.vals {
		if v >= 0 {
			t.put(old.keys[i], v)
		}
	}
}
