package ompt

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"unsafe"

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
// Layout: the 20-byte states are the slots of an open-addressing table
// keyed by (address, parent), so a lookup touches one slot, not an index,
// its key and then the state. The table is sized for its states to fill 3/5
// of it and grows past 3/4: linear probing's runs lengthen fast beyond that
// (filled to 4/5, as a power-of-two table sized at most 7/8 full was on the
// 10 M-event stencil, lookups took 7.5 % of the analysis's CPU; at 3/5,
// 2 %; a table grown to what its entries will make, grown, is filled to
// 5/7 at their end). A state's readers are a lists.Short: the tasks a loop
// creates one after another are a run, kept in the slot (where the run
// took two 8-byte cells: 40 MB less on the 10 M-event lean stencil);
// other readers and set members live in a shared pool of singly linked
// 8-byte cells; the rare set groups (mutexinoutset, inoutset) keep their
// members and predecessors aside.
// States whose tasks have all completed carry no information (a dependence
// on a completed task is no edge), and states of a completed parent are
// never looked up again: both are swept, so memory follows the live tasks
// rather than every address used (with keep, which reports edges from
// completed tasks too, only the second). Before either, a state goes at
// its address's last entry in the process (lastUses: nothing looks it up
// again), so that with keep, and while every task is created before any
// completes, the tracker holds the addresses still to be named, not every
// address named so far.
type depTracker struct {
	table  []addrState // open addressing, linear probing, at most 3/4 full
	groups []setGroup  // referred to by addrState.writer
	free   []int32     // unused groups
	cells  lists.Pool  // readers, set members and predecessors of the states

	live, sweepAt int
	align         uint8 // the addresses' alignment, in bits (slot)
	doneAtSweep   int64 // completed tasks at the last sweep
	// entries is the process's dependence entries (the census's claim),
	// seen those resolved so far, and swept whether a sweep dropped any
	// state: while none did, the states only accumulate, and the table
	// grows to what the rest of the entries will make (grown).
	entries, seen int64
	swept         bool
	// keep disables sweeping: the task graph needs edges from completed
	// tasks too.
	keep bool
	// all is each parent's last omp_all_memory child, which every address
	// the parent's children name afterwards has for writer until a task
	// writes it (nil: the process has none, as a rule).
	all map[int32]int32
	// mtx is scratch for mtxScratch.limited: a list with more
	// mutexinoutset entries than libomp keeps, its order by address and
	// its marks.
	mtx mtxScratch
	// last marks the process's dependence entries that are their
	// address's last (lastUses), in the order its threads made them: after
	// one, nothing looks the address up again, and its state goes at once
	// (nil: none known).
	last []uint64
}

// addrState is one (address, parent)'s state, or an empty slot (parent
// emptySlot): 20 bytes, four fewer than with the address a uint64 (which
// aligns the state to 8 bytes) and the readers a lists.Head: 14 MB less at
// the 10 M-event lean stencil's peak, the end of its creations.
type addrState struct {
	lo, hi uint32 // the address
	parent int32
	// writer is the last out/inout task (≥ 0), or the current
	// mutexinoutset / inoutset group g as −2−g, or −1: one of them at most.
	writer int32
	// readers are the in tasks since the last writer, read against it (0
	// without one): the tasks a loop made one after another that read what
	// one task wrote are a run held in it.
	readers lists.Short
}

// addr returns a's address.
func (a *addrState) addr() uint64 { return uint64(a.hi)<<32 | uint64(a.lo) }

// base is what a's readers are read against.
func (a *addrState) base() int32 { return max(a.writer, 0) }

// readerList returns a's readers.
func (a *addrState) readerList() lists.Head { return a.readers.Head(a.base()) }

// group returns a's set group, −1 if it has none.
func (a *addrState) group() int32 { return max(-2-a.writer, -1) }

// setGroup is the current mutexinoutset or inoutset group of an address.
type setGroup struct {
	kind  uint8 // DepMutexInoutset or DepInoutset
	set   int32 // cell list: its members
	preds int32 // cell list: their predecessors
}

const emptySlot = math.MinInt32

// newDepTracker returns a tracker with a small table: Model.Prepare sizes
// it from the process's dependence entries (reserve), most processes of an
// MPI code have none, and a table that outgrows its size doubles.
func newDepTracker() *depTracker {
	d := &depTracker{sweepAt: 1 << 12, align: maxAlign}
	d.initTable(tableSize(0))
	return d
}

// tableSize is the number of slots for capacity states: 5/3 as many.
func tableSize(capacity int) int { return max(capacity*5/3, 16) }

// full reports whether one more state would fill the table past 3/4.
func (d *depTracker) full() bool { return 4*(d.live+1) > 3*len(d.table) }

// initTable makes an empty table of size slots, in place when the current
// one has that many.
func (d *depTracker) initTable(size int) {
	if len(d.table) != size {
		d.table = make([]addrState, size)
	}
	for i := range d.table {
		d.table[i].parent = emptySlot
	}
	d.live = 0
}

// reserve pre-sizes the tracker's table for a process's dependence
// entries (for 2^20 of them at most: a table that outgrows its size grows
// as grown says).
// Most entries read an address another task wrote: distinct addresses,
// hence states, are about a quarter of the entries (one per task on the
// gen workloads); the reader cells, most of the entries, grow in the pool
// a block at a time.
// When the entries' last uses are known (lastUses), states go as their
// addresses' last entries come: stay (≥ 0) is the addresses whose state
// stays to the end, and the table starts with room for them and 2^12
// more, growing as they come (the 10 M-event lean spread held 26 at
// once, in 8.5 MB reserved for 2^18).
// A tracker used before (Spare) is emptied and keeps its arrays where they
// are large enough (the table where it is not much larger: emptying it
// costs its size).
func (d *depTracker) reserve(entries, stay int64) {
	n := int(min(entries, 1<<20))
	states := n / 4
	if stay >= 0 {
		states = int(min(int64(states), stay+1<<12))
	}
	if size := tableSize(states); len(d.table) >= size && len(d.table) <= 8*size {
		d.initTable(len(d.table))
	} else {
		d.initTable(size)
	}
	d.groups, d.free = d.groups[:0], d.free[:0]
	d.cells.Reset()
	d.sweepAt, d.doneAtSweep, d.align = 1<<12, 0, maxAlign
	d.entries, d.seen, d.swept = entries, 0, false
	d.last, d.all = nil, nil
}

// bytes returns the memory the tracker's tables hold.
func (d *depTracker) bytes() int {
	return len(d.table)*int(unsafe.Sizeof(addrState{})) + d.cells.Bytes() + len(d.groups)*int(unsafe.Sizeof(setGroup{})) + 8*len(d.last)
}

// release drops the tracker's states and their arrays (beyond a small
// table), for when no dependence is left to resolve; it stays usable.
func (d *depTracker) release() {
	d.table = nil
	d.align = maxAlign
	d.initTable(tableSize(0))
	d.groups, d.free = nil, nil
	d.cells = lists.Pool{}
	d.last, d.all = nil, nil
}

// slot is where (addr, parent)'s probe starts. Addresses are counted in
// units of their alignment (d.align: the fewest trailing zero bits of any
// address in the table), and cut into segments of 64 units: a segment
// starts at a slot spread by Fibonacci hashing (the product's top bits,
// scaled to the table's size), and its units follow every other slot. A
// task's dependences are often its neighbours' blocks, whose states are
// then in the lines of the table just used, where a hash of the whole
// address put every lookup in a line of its own (a cache miss each;
// BenchmarkResolveStencil was 1.5–2× slower so). No two addresses of a
// segment start at the same slot, however close they are (bytes of one
// array), and blocks named one after another start two slots apart: with
// a page spread and the offset in it in bytes, a new 64-byte block started
// 64 slots (1.5 KiB) after the last, a line of its own, and each creation
// of the lean stencil missed the cache there (BenchmarkResolveLean 2.5×
// slower). Every other slot, a segment overlapping another's interleaves
// with it: in consecutive slots, a segment's 64 states were one run that a
// probe starting in it walked (BenchmarkResolveDense 1.3× slower, 7 % more
// instructions).
func (d *depTracker) slot(addr uint64, parent int32) int {
	n := uint64(len(d.table))
	u := addr >> (d.align & 63)
	seg, _ := bits.Mul64((u>>segmentBits^uint64(uint32(parent))<<40)*0x9E3779B97F4A7C15, n)
	i := seg + u&(1<<segmentBits-1)<<1
	if i >= n {
		i -= n
		if i >= n { // a table smaller than a segment
			i %= n
		}
	}
	return int(i)
}

// segmentBits sets a segment's length: 64 units.
const segmentBits = 6

// maxAlign is the alignment of an empty table, until an address that is
// not 4 KiB-aligned comes.
const maxAlign = 12

// next is the slot after i, wrapping around.
func (d *depTracker) next(i int) int {
	if i++; i == len(d.table) {
		return 0
	}
	return i
}

func (d *depTracker) appendList(out []int32, list int32) []int32 {
	return d.cells.Append(out, list)
}

// find returns the slot of (parent, addr)'s state, made empty if it had
// none; the slot is valid until the next find.
func (d *depTracker) find(parent int32, addr uint64) int {
	t := d.table
	i := d.slot(addr, parent)
	for {
		// An empty slot matches no state: no parent is emptySlot.
		a := &t[i]
		if a.lo == uint32(addr) && a.parent == parent && a.hi == uint32(addr>>32) {
			return i
		}
		if a.parent == emptySlot {
			break
		}
		if i++; i == len(t) {
			i = 0
		}
	}
	if d.full() {
		d.rebuild(nil, d.grown())
		return d.find(parent, addr)
	}
	if tz := uint8(bits.TrailingZeros64(addr | 1<<maxAlign)); tz < d.align {
		// An address less aligned than those so far: the table's slots in
		// its units (at most maxAlign times a table, mostly at its first
		// addresses).
		d.align = tz
		d.reslot()
		return d.find(parent, addr)
	}
	w := int32(-1)
	if d.all != nil {
		if c, ok := d.all[parent]; ok {
			w = c
		}
	}
	t[i] = addrState{lo: uint32(addr), hi: uint32(addr >> 32), parent: parent, writer: w}
	d.live++
	return i
}

// remove drops the state in slot i (its lists back to the pool), moving
// back the states after it whose probe passed it (linear probing's
// deletion: every state stays reachable from where its probe starts,
// with no tombstone to walk over).
func (d *depTracker) remove(i int) {
	t := d.table
	d.clear(&t[i])
	d.live--
	for j := d.next(i); t[j].parent != emptySlot; j = d.next(j) {
		// The state at j stays where its probe, from h, reaches j without
		// passing the hole at i.
		h := d.slot(t[j].addr(), t[j].parent)
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		t[i] = t[j]
		i = j
	}
	t[i] = addrState{parent: emptySlot}
}

// grown is the size a full table grows to: twice its size, or, while no
// sweep has dropped a state (every state made is still there, as when
// every task is created before any runs, or with keep, while no parent
// has completed), room for the states the process's remaining entries
// will make at the rate its entries so far made them, filled to 5/7 (the
// lean stencil's last doubling left its table 71 % full). Doubling, a
// table's last growth held the old table and one twice its size at once
// (42 + 84 MB on the 10 M-event lean stencil, 20 MB above the end of its
// creations, the analysis's peak). Growing at most 8-fold at a time keeps
// the table within a multiple of the states it holds, whatever the
// census claims.
func (d *depTracker) grown() int {
	n := len(d.table)
	if d.swept || d.seen <= 0 || d.entries <= d.seen {
		return 2 * n
	}
	est := int64(d.live) * d.entries / d.seen
	return int(min(max(est*7/5, int64(n)*5/4), int64(n)*8))
}

// newGroup returns a set group with empty lists.
func (d *depTracker) newGroup(kind uint8) int32 {
	g := setGroup{kind: kind, set: lists.None, preds: lists.None}
	if n := len(d.free); n > 0 {
		i := d.free[n-1]
		d.free = d.free[:n-1]
		d.groups[i] = g
		return i
	}
	d.groups = append(d.groups, g)
	return int32(len(d.groups) - 1)
}

// clear empties a's writer, readers and group.
func (d *depTracker) clear(a *addrState) {
	d.cells.ReleaseHead(a.readerList())
	if gi := a.group(); gi >= 0 {
		g := &d.groups[gi]
		d.cells.Release(g.set)
		d.cells.Release(g.preds)
		d.free = append(d.free, gi)
	}
	a.writer, a.readers = -1, 0
}

// resolve returns the predecessors of task (child of parent) for its
// dependence list, updating the per-address state. Predecessors may repeat.
// at is the index of deps[0] among the process's entries (d.last), −1 when
// unknown. done reports completed tasks and completed counts them, for
// sweeping: a sweep runs only when the states outgrew the last sweep's
// survivors and enough tasks completed since for it to free much.
func (d *depTracker) resolve(parent, task int32, deps []trace.Dep, at int64, out []int32, done func(int32) bool, completed int64) []int32 {
	if d.live >= d.sweepAt && completed-d.doneAtSweep >= int64(d.live/2) {
		d.sweep(done)
		d.doneAtSweep = completed
	}
	d.seen += int64(len(deps))
	deps = d.mtx.limited(deps)
	start := len(out)
	for k, dep := range deps {
		i := d.find(parent, dep.Addr)
		a := &d.table[i]
		switch dep.Type {
		case trace.DepIn:
			if a.writer >= 0 { // d.writers, most often
				out = append(out, a.writer)
			} else {
				out = d.writers(out, a)
			}
			if b := a.base(); !a.readers.Grow(b, task) {
				d.cells.PushShort(&a.readers, b, task)
			}
		case trace.DepOut, trace.DepInout:
			switch {
			case a.writer >= 0: // d.writers
				out = append(out, a.writer)
			case a.writer < -1:
				out = d.writers(out, a)
			}
			if !a.readers.Empty() || a.writer < -1 { // d.clear has work
				out = d.cells.AppendHead(out, a.readerList())
				d.clear(a)
			}
			a.writer = task
		case trace.DepMutexInoutset, trace.DepInoutset:
			if gi := a.group(); gi >= 0 && d.groups[gi].kind == dep.Type && a.readers.Empty() {
				// Joins the current group: same predecessors as its members.
				g := &d.groups[gi]
				out = d.appendList(out, g.preds)
				g.set = d.cells.PushRun(g.set, task)
				break
			}
			start := len(out)
			out = d.writers(out, a)
			out = d.cells.AppendHead(out, a.readerList())
			d.clear(a)
			gi := d.newGroup(dep.Type)
			a.writer = -2 - gi
			g := &d.groups[gi]
			for _, p := range out[start:] {
				g.preds = d.cells.PushRun(g.preds, p)
			}
			g.set = d.cells.PushRun(lists.None, task)
		default:
			if dep.AllMemory() {
				// The entries before it are its predecessors' and
				// states' already; those after it add nothing.
				return d.allMemory(parent, task, out, start)
			}
			// source/sink (doacross) order loop iterations, not tasks.
		}
		if x := uint64(at) + uint64(k); at >= 0 && x < uint64(len(d.last))*64 && d.last[x/64]&(1<<(x%64)) != 0 {
			d.remove(i)
		}
	}
	return out
}

// allMemory resolves an omp_all_memory dependence of task, child of
// parent, which the other entries of its list add nothing to: an out
// dependence on every address, those its siblings named so far (a pass
// over the table: such tasks are rare) and those they will name (d.all),
// as libomp resolves it. lastUses marks nothing in a process that has one,
// so every address's state is still there. out[start:] are task's
// predecessors so far, from the entries before it, which may have made
// task a reader or set member of a state: it is none of its own.
func (d *depTracker) allMemory(parent, task int32, out []int32, start int) []int32 {
	if d.all == nil {
		d.all = map[int32]int32{}
	}
	if c, ok := d.all[parent]; ok {
		out = append(out, c) // its states may all be swept
	}
	d.all[parent] = task
	for k := range d.table {
		a := &d.table[k]
		if a.parent != parent {
			continue
		}
		out = d.writers(out, a)
		out = d.cells.AppendHead(out, a.readerList())
		d.clear(a)
		a.writer = task
	}
	kept := slices.DeleteFunc(out[start:], func(p int32) bool { return p == task })
	return out[:start+len(kept)]
}

// writers appends the current writer or set members of a.
func (d *depTracker) writers(out []int32, a *addrState) []int32 {
	if gi := a.group(); gi >= 0 {
		return d.appendList(out, d.groups[gi].set)
	}
	if a.writer >= 0 {
		out = append(out, a.writer)
	}
	return out
}

// sweep frees the states whose tasks have all completed and rebuilds the
// table with the survivors. When a sweep frees little, the next waits
// longer, keeping the cost amortised O(1) even when every task is created
// before any runs.
func (d *depTracker) sweep(done func(int32) bool) {
	deadItems := func(hi, n, next int32) bool {
		for n > 0 {
			for v := hi; v > hi-n; v-- {
				if !done(v) {
					return false
				}
			}
			if next == lists.None {
				break
			}
			hi, n, next = d.cells.Item(next)
		}
		return true
	}
	deadList := func(l int32) bool {
		if l == lists.None {
			return true
		}
		return deadItems(d.cells.Item(l))
	}
	dead := func(a *addrState) bool {
		// A completed parent creates no more children, so nothing looks
		// its states up again; with keep, that is the only way a state
		// dies (a completed predecessor is still an edge of the task
		// graph).
		if a.parent >= 0 && done(a.parent) {
			return true
		}
		if d.keep || a.writer >= 0 && !done(a.writer) || !deadItems(d.cells.First(a.readerList())) {
			return false
		}
		if c, ok := d.all[a.parent]; ok && !done(c) {
			// made again, the state would have the omp_all_memory task
			// for writer, not the completed one it had
			return false
		}
		gi := a.group()
		return gi < 0 || deadList(d.groups[gi].set) && deadList(d.groups[gi].preds)
	}
	// Room for as many states as there were: the survivors fill at most
	// 3/5 of it; while no sweep has dropped one, the table keeps the size
	// it grew to for the states to come (grown).
	size := tableSize(max(d.live, 1<<10))
	if !d.swept {
		size = max(size, len(d.table))
	}
	d.rebuild(dead, size)
	d.sweepAt = max(2*d.live, 1<<12)
}

// reslot places the states again in the table, where slot puts them now
// (its alignment changed): set aside, the table emptied in place, and put
// back, where a new table would be as large as the table (10 MB as
// Model.Prepare reserves it for a large process) for the few states the
// first addresses make.
func (d *depTracker) reslot() {
	var live []addrState
	for k := range d.table {
		if d.table[k].parent != emptySlot {
			live = append(live, d.table[k])
		}
	}
	d.initTable(len(d.table))
	for k := range live {
		i := d.slot(live[k].addr(), live[k].parent)
		for d.table[i].parent != emptySlot {
			i = d.next(i)
		}
		d.table[i] = live[k]
		d.live++
	}
}

// rebuild moves the states into a new table of size slots, dropping those
// drop reports (their lists go back to the pool).
func (d *depTracker) rebuild(drop func(*addrState) bool, size int) {
	old := d.table
	d.table = nil
	d.initTable(size)
	for k := range old {
		a := &old[k]
		if a.parent == emptySlot {
			continue
		}
		if drop != nil && drop(a) {
			d.clear(a)
			d.swept = true
			continue
		}
		i := d.slot(a.addr(), a.parent)
		for d.table[i].parent != emptySlot {
			i = d.next(i)
		}
		d.table[i] = *a
		d.live++
	}
}

// maxMtxDeps is how many mutexinoutset dependences LLVM libomp keeps per
// task (kmp.h MAX_MTX_DEPS): __kmp_check_deps turns the others into out
// dependences, so such a task is ordered after the members of those
// addresses' sets, and they after it, where OpenMP orders neither. The
// collector records the clause as written (the OMPT dependences callback
// comes first), and the runtime's own task_dependence edges show the
// downgraded order: tasks of one set that name more than four blocks each
// run one after another.
const maxMtxDeps = 4

// mtxScratch holds what mtxScratch.limited needs for a long list, kept
// between calls: most lists never come here.
type mtxScratch struct {
	deps       []trace.Dep
	idx, first []int32
}

// limited returns deps with the mutexinoutset entries libomp downgrades
// made inout: an address counts as mutexinoutset when every entry of it in
// the list is one (libomp merges an address named with other types into an
// out), and the first maxMtxDeps such addresses, by first appearance, keep
// it. Lists with at most maxMtxDeps mutexinoutset entries are deps itself.
func (m *mtxScratch) limited(deps []trace.Dep) []trace.Dep {
	n := 0
	for _, dep := range deps {
		if dep.Type == trace.DepMutexInoutset {
			n++
		}
	}
	if n <= maxMtxDeps {
		return deps
	}
	m.deps = append(m.deps[:0], deps...)
	m.idx = m.idx[:0]
	for i := range deps {
		m.idx = append(m.idx, int32(i))
	}
	// By address, then position: an address's entries in a row, its first
	// appearance first.
	slices.SortFunc(m.idx, func(a, b int32) int {
		if c := cmp.Compare(deps[a].Addr, deps[b].Addr); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// first[i] is, for the first entry of an address named only as
	// mutexinoutset, the start of its run in idx plus one (0: none).
	m.first = m.first[:0]
	for range deps {
		m.first = append(m.first, 0)
	}
	for start := 0; start < len(m.idx); {
		end, all := start, true
		for end < len(m.idx) && deps[m.idx[end]].Addr == deps[m.idx[start]].Addr {
			all = all && deps[m.idx[end]].Type == trace.DepMutexInoutset
			end++
		}
		if all {
			m.first[m.idx[start]] = int32(start) + 1
		}
		start = end
	}
	kept := 0
	for i := range deps {
		if m.first[i] == 0 {
			continue
		}
		if kept++; kept <= maxMtxDeps {
			continue
		}
		start := int(m.first[i] - 1)
		for j := start; j < len(m.idx) && deps[m.idx[j]].Addr == deps[m.idx[start]].Addr; j++ {
			m.deps[m.idx[j]].Type = trace.DepInout
		}
	}
	return m.deps
}
