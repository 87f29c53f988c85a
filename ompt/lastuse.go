package ompt

import (
	"math/bits"

	"github.com/ptrace-dev/ptrace/trace"
)

// lastUses marks the dependence entries of p after which no entry of the
// process names their address, numbered in the order its threads made
// them (thread 0's, then thread 1's, …): the tracker drops such an
// address's state at its last entry (depTracker.last), where with keep it
// held every address's state, and its readers, until the tasks' parent
// completed. On the 10 M-event spread, whose tasks each write a block of
// their own that three tasks of the next step read, that was 2.5 M states
// and 7 M reader cells (120 MB) at the end of its creations, the
// analysis's peak.
// An address that the entries of two threads name is not marked: the
// simulation interleaves the threads' events as their times say, so which
// entry comes last is its to know. nil when there is nothing to mark or a
// thread's events cannot be read (the simulation reports that); stay is
// the addresses left unmarked, whose states stay to the end.
// The work is a pass over the chunks holding task_dependences events
// (trace.Process.EachDeps: a lean task trace's chunks of task starts and
// ends, half of them, are not decoded) and a table of the distinct
// addresses (12 bytes a slot), dropped before the simulation begins.
// bases gives each thread's first entry in that numbering: the model
// counts a thread's entries from it (Model.depAt), so that a thread's
// entry finds its own mark, not another thread's.
func lastUses(p *trace.Process, scans *trace.Scans, entries int64) (last []uint64, stay int64, bases []int64) {
	u := newUseTable(entries / 4)
	var total int64
	bases = make([]int64, p.NumThreads())
	for th := range p.NumThreads() {
		base := total
		bases[th] = base
		over := false
		err := p.EachDeps(th, scans, func(deps []trace.Dep) {
			if over || total+int64(len(deps)) >= 1<<31-1 {
				over = true // beyond an int32 index: the states stay
				return
			}
			for k := range deps {
				if deps[k].AllMemory() {
					// omp_all_memory reads every address's state
					// (depTracker.allMemory): none is last before it.
					over = true
					return
				}
				u.use(deps[k].Addr, int32(total)+int32(k), int32(base))
			}
			total += int64(len(deps))
		})
		if over || err != nil {
			return nil, 0, nil
		}
	}
	if total == 0 {
		return nil, 0, nil
	}
	last = make([]uint64, (total+63)/64)
	for _, v := range u.vals {
		switch {
		case v > 0:
			last[(v-1)/64] |= 1 << ((v - 1) % 64)
		case v < 0:
			stay++
		}
	}
	return last, stay, bases
}

// useTable maps addresses to their last entry (+1; 0: an empty slot; −1:
// named by two threads): open addressing, linear probing, at most 3/4
// full. Its size is what the claim asks, not rounded up to a power of
// two (which made Task Bench's stencil_1d's table 6.3 MB, half empty, the
// largest thing its simulation held: thirty-fourth round).
type useTable struct {
	keys []uint64
	vals []int32
	n    int
}

// newUseTable returns a table for about n addresses, 2/3 full with n (at
// most 2^22 slots at first: n is the census's claim).
func newUseTable(n int64) *useTable {
	size := max(1024, min(n*3/2, 1<<22))
	return &useTable{keys: make([]uint64, size), vals: make([]int32, size)}
}

// use records entry x (≥ 0) naming addr, made by the thread whose entries
// start at base.
func (u *useTable) use(addr uint64, x, base int32) {
	for i := u.home(addr); ; i = u.next(i) {
		switch v := u.vals[i]; {
		case v == 0:
			if 4*(u.n+1) > 3*len(u.keys) {
				u.grow()
				u.use(addr, x, base)
				return
			}
			u.keys[i], u.vals[i] = addr, x+1
			u.n++
			return
		case u.keys[i] != addr:
			continue
		case v > base: // this thread's before: x comes after it
			u.vals[i] = x + 1
		default: // another thread's, or already shared
			u.vals[i] = -1
		}
		return
	}
}

// home is where addr's probe starts: its 4 KiB page's slot, spread by
// Fibonacci hashing and mapped onto the table by a multiply (Lemire's
// fast range), plus its 8-byte word in the page, so that the blocks of
// an array, named one after another, are looked up in slots one after
// another (a hash of the whole address put each in a cache line of its
// own: the pass took 0.3 s more on the 10 M-event lean spread).
func (u *useTable) home(addr uint64) int {
	page, _ := bits.Mul64((addr>>12)*0x9E3779B97F4A7C15, uint64(len(u.keys)))
	i := int(page) + int(addr>>3&511)
	if i >= len(u.keys) { // at least 1024 slots: once round
		i -= len(u.keys)
	}
	return i
}

// next is the slot after i, round the table's end.
func (u *useTable) next(i int) int {
	if i++; i == len(u.keys) {
		return 0
	}
	return i
}

// grow doubles the table.
func (u *useTable) grow() {
	keys, vals := u.keys, u.vals
	u.keys, u.vals = make([]uint64, 2*len(keys)), make([]int32, 2*len(vals))
	for k, v := range vals {
		if v == 0 {
			continue
		}
		i := u.home(keys[k])
		for u.vals[i] != 0 {
			i = u.next(i)
		}
		u.keys[i], u.vals[i] = keys[k], v
	}
}
