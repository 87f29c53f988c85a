package graph

import "slices"

// ArgColumn holds each node's argmax (Result.Arg): the input that gave
// its value, as the distance back from the node in a signed byte, a page
// of 4096 nodes at a time. A node's argmax is nearly always a node made
// shortly before it (its chain predecessor, a child task's last
// fragment): 98.8 % of fib(30)'s 8.1 M nodes fit a byte, 99.3 % of Task
// Bench's, 89–91 % of the 10 M-event stencil's and halo's; the others go
// to the page's far entries beside (farPage, 6 bytes an entry). A page
// with more than an eighth of its nodes far turns to a distance in 16
// bits a node (mid), the others again far: the tasks of BOTS health join
// their parents' taskwaits a few hundred fragments after their creation,
// as 33 % of its entries are, which took 4 bytes a node (3 MB at its
// critical path's peak). A page with more than an eighth of its nodes
// far again, as where a pure MPI program receives from other
// processes, turns to an Entry a node (wide), as the whole column was
// before: 4 bytes a node, 31 MB of fib(30)'s critical path at its peak.
// The DAG does not tell beforehand (a join has many inputs from far, its
// argmax is mostly the near one), so pages turn as the replay sets them.
type ArgColumn struct {
	n    int32
	near [][]int8  // per page: n − arg, or 0: NoEntry or the entry far; nil once mid or wide
	mid  [][]int16 // per page, once mid: as near
	wide [][]Entry // per page, once wide
	far  []farPage // per page (near or mid): the entries neither holds
	// spare are a previous column's near pages, for the pages made next.
	spare [][]int8
}

const (
	argPageBits = 12
	argPage     = 1 << argPageBits
	argPageMask = argPage - 1
)

// newArgColumn returns a column of n NoEntry values, in c's pages when it
// has them. A page is made when a first entry is set in it (page): near,
// or 16 bits when the page before it turned (a page's inputs are mostly
// as far as its neighbour's), so that no near page is made only to turn
// (1 MB of BOTS health's peak, all of whose pages turn).
func newArgColumn(n int32, c *ArgColumn) *ArgColumn {
	if c == nil {
		c = &ArgColumn{}
	}
	pages := int((int64(n) + argPage - 1) >> argPageBits)
	for _, nr := range c.near {
		if cap(nr) == argPage {
			c.spare = append(c.spare, nr)
		}
	}
	c.n = n
	c.near = make([][]int8, pages)
	c.mid = make([][]int16, pages)
	c.wide = make([][]Entry, pages)
	c.far = make([]farPage, pages)
	return c
}

// page makes page p, which has none yet, for a first entry.
//
//go:noinline
func (a *ArgColumn) page(p int32) {
	size := a.pageLen(p)
	if p > 0 && a.near[p-1] == nil && a.made(p-1) { // the page before turned
		a.mid[p] = make([]int16, size)
		return
	}
	if k := len(a.spare); k > 0 {
		nr := a.spare[k-1][:size]
		a.spare = a.spare[:k-1]
		clear(nr)
		a.near[p] = nr
		return
	}
	a.near[p] = make([]int8, size)
}

// made reports whether page p has been made.
func (a *ArgColumn) made(p int32) bool {
	return a.near[p] != nil || a.mid[p] != nil || a.wide[p] != nil
}

// Len returns the number of nodes.
func (a *ArgColumn) Len() int { return int(a.n) }

// At returns node n's entry.
func (a *ArgColumn) At(n int32) Entry {
	if nr := a.near[n>>argPageBits]; nr != nil {
		if d := nr[n&argPageMask]; d != 0 {
			return Entry(n - int32(d))
		}
	}
	return a.atRare(n)
}

// atRare is At for a far entry, a mid page or a wide page.
func (a *ArgColumn) atRare(n int32) Entry {
	p := n >> argPageBits
	if a.near[p] != nil {
		return a.far[p].get(n) // NoEntry when absent
	}
	if m := a.mid[p]; m != nil {
		if d := m[n&argPageMask]; d != 0 {
			return Entry(n - int32(d))
		}
		return a.far[p].get(n)
	}
	if w := a.wide[p]; w != nil {
		return w[n&argPageMask]
	}
	return NoEntry // a page not made: nothing set in it
}

// Set makes e node n's entry.
func (a *ArgColumn) Set(n int32, e Entry) {
	p := n >> argPageBits
	nr := a.near[p]
	if nr == nil {
		a.setRare(n, e)
		return
	}
	if d := int64(n) - int64(e); d == int64(int8(d)) && d != 0 && e != NoEntry {
		nr[n&argPageMask] = int8(d)
		return
	}
	a.setFar(n, e)
}

// setRare is Set on a mid or a wide page, or one not made yet (Set
// calls it on a page without near entries). The page's kind is found by
// its own test, not by made's three first: a wide page (every page of the
// 64-process pure-MPI trace's argmaxes) is two loads.
func (a *ArgColumn) setRare(n int32, e Entry) {
	p := n >> argPageBits
	if m := a.mid[p]; m != nil {
		if d := int64(n) - int64(e); d == int64(int16(d)) && d != 0 && e != NoEntry {
			m[n&argPageMask] = int16(d)
			return
		}
		a.setFar(n, e)
		return
	}
	if w := a.wide[p]; w != nil {
		w[n&argPageMask] = e
		return
	}
	a.page(p)
	a.Set(n, e)
}

// setFar keeps e in the page's far entries, for a node of a near or a
// mid page. A node whose entry is then set in its page keeps its far
// entry, unread, until the page turns: an argmax changes only while the
// node's inputs arrive, rarely from far to near.
func (a *ArgColumn) setFar(n int32, e Entry) {
	p := n >> argPageBits
	i := n & argPageMask
	if nr := a.near[p]; nr != nil {
		nr[i] = 0
	} else {
		a.mid[p][i] = 0
	}
	f := &a.far[p]
	if e == NoEntry {
		f.remove(n)
		return
	}
	if f.put(n, e) && len(f.keys) > a.pageLen(p)/8 {
		if a.near[p] != nil {
			a.toMid(p)
		} else {
			a.widen(p)
		}
	}
}

func (a *ArgColumn) pageLen(p int32) int {
	return min(argPage, int(a.n)-int(p)<<argPageBits)
}

// toMid turns near page p to 16 bits a node: the entries within 32767
// nodes move into it, the others stay far.
func (a *ArgColumn) toMid(p int32) {
	nr, f := a.near[p], &a.far[p]
	m := make([]int16, len(nr))
	base := p << argPageBits
	for i, d := range nr {
		m[i] = int16(d)
	}
	k := 0
	for j, i := range f.keys {
		n, e := base+int32(i), f.vals[j]
		if m[i] != 0 {
			continue // set near since: unread
		}
		if d := int64(n) - int64(e); d == int64(int16(d)) && d != 0 {
			m[i] = int16(d)
			continue
		}
		f.keys[k], f.vals[k] = i, e
		k++
	}
	f.trim(k)
	a.mid[p], a.near[p] = m, nil
}

// widen turns mid page p to an Entry a node; its far entries go.
func (a *ArgColumn) widen(p int32) {
	m, f := a.mid[p], &a.far[p]
	w := make([]Entry, len(m))
	n := p << argPageBits
	for i, d := range m {
		if d != 0 {
			w[i] = Entry(n - int32(d))
		} else {
			w[i] = NoEntry
		}
		n++
	}
	for j, i := range f.keys {
		if m[i] == 0 {
			w[i] = f.vals[j]
		}
	}
	*f = farPage{}
	a.wide[p], a.mid[p] = w, nil
}

// farPage holds a page's entries that its column does not: sorted by the
// node's place in the page, 6 bytes an entry (an open-addressing table
// held 8 a slot, at most 3/4 full and half after it grew: 4–8 MB of
// fib(30)'s 520 000 far entries, where these take 3). The replay sets a
// page's nodes mostly in order, so an entry is mostly appended.
type farPage struct {
	keys []uint16 // n & argPageMask, ascending
	vals []Entry
}

// find returns where node n's key is or would be, and whether it is.
func (f *farPage) find(n int32) (int, bool) {
	i := uint16(n & argPageMask)
	k := f.keys
	if len(k) > 0 && k[len(k)-1] < i {
		return len(k), false // past the last: an append
	}
	lo, hi := 0, len(k)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if k[m] < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(k) && k[lo] == i
}

func (f *farPage) get(n int32) Entry {
	if j, ok := f.find(n); ok {
		return f.vals[j]
	}
	return NoEntry
}

// put makes e n's entry and reports whether n is new.
func (f *farPage) put(n int32, e Entry) bool {
	j, ok := f.find(n)
	if ok {
		f.vals[j] = e
		return false
	}
	f.keys = slices.Insert(f.keys, j, uint16(n&argPageMask))
	f.vals = slices.Insert(f.vals, j, e)
	return true
}

// remove drops n's entry, if any.
func (f *farPage) remove(n int32) {
	if j, ok := f.find(n); ok {
		f.keys = slices.Delete(f.keys, j, j+1)
		f.vals = slices.Delete(f.vals, j, j+1)
	}
}

// trim keeps the first k entries, in arrays of their size.
func (f *farPage) trim(k int) {
	if k == 0 {
		*f = farPage{}
		return
	}
	f.keys, f.vals = slices.Clip(f.keys[:k]), slices.Clip(f.vals[:k])
	if cap(f.keys) > k+k/4 {
		f.keys, f.vals = slices.Clone(f.keys), slices.Clone(f.vals)
	}
}
