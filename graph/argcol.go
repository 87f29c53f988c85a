package graph

// ArgColumn holds each node's argmax (Result.Arg): the input that gave
// its value, as the distance back from the node in a signed byte, a page
// of 4096 nodes at a time. A node's argmax is nearly always a node made
// shortly before it (its chain predecessor, a child task's last
// fragment): 98.8 % of fib(30)'s 8.1 M nodes fit a byte, 99.3 % of Task
// Bench's, 89–91 % of the 10 M-event stencil's and halo's; the others go
// to a table beside (about 11 bytes an entry). A page with more than an
// eighth of its nodes in the table turns to a distance in 16 bits a node
// (mid), the others again in the table: the tasks of BOTS health join
// their parents' taskwaits a few hundred fragments after their creation,
// as 33 % of its entries are, which took 4 bytes a node (3 MB at its
// critical path's peak). A page with more than an eighth of its nodes in
// the table again, as where a pure MPI program receives from other
// processes, turns to an Entry a node (wide), as the whole column was
// before: 4 bytes a node, 31 MB of fib(30)'s critical path at its peak.
// The DAG does not tell beforehand (a join has many inputs from far, its
// argmax is mostly the near one), so pages turn as the replay sets them.
type ArgColumn struct {
	n    int32
	near [][]int8  // per page: n − arg, or 0: NoEntry or the entry in the table; nil once mid or wide
	mid  [][]int16 // per page, once mid: as near
	wide [][]Entry // per page, once wide
	nfar []uint16  // per page: its nodes in the table (near or mid)
	far  argTable
}

const (
	argPageBits = 12
	argPage     = 1 << argPageBits
	argPageMask = argPage - 1
)

// newArgColumn returns a column of n NoEntry values, in c's pages when it
// has them.
func newArgColumn(n int32, c *ArgColumn) *ArgColumn {
	if c == nil {
		c = &ArgColumn{}
	}
	pages := int((int64(n) + argPage - 1) >> argPageBits)
	old := c.near
	c.n = n
	c.near = make([][]int8, pages)
	c.mid = make([][]int16, pages)
	c.wide = make([][]Entry, pages)
	c.nfar = make([]uint16, pages)
	for p := range c.near {
		size := min(argPage, int(n)-p<<argPageBits)
		if p < len(old) && cap(old[p]) >= size {
			c.near[p] = old[p][:size]
			clear(c.near[p])
		} else {
			c.near[p] = make([]int8, size)
		}
	}
	c.far.reset()
	return c
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

// atRare is At for an entry in the table, a mid page or a wide page.
func (a *ArgColumn) atRare(n int32) Entry {
	p := n >> argPageBits
	if a.near[p] != nil {
		return a.far.get(n) // NoEntry when absent
	}
	if m := a.mid[p]; m != nil {
		if d := m[n&argPageMask]; d != 0 {
			return Entry(n - int32(d))
		}
		return a.far.get(n)
	}
	return a.wide[p][n&argPageMask]
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

// setRare is Set on a mid or a wide page.
func (a *ArgColumn) setRare(n int32, e Entry) {
	p := n >> argPageBits
	m := a.mid[p]
	if m == nil {
		a.wide[p][n&argPageMask] = e
		return
	}
	if d := int64(n) - int64(e); d == int64(int16(d)) && d != 0 && e != NoEntry {
		m[n&argPageMask] = int16(d)
		return
	}
	a.setFar(n, e)
}

// setFar keeps e in the table, for a node of a near or a mid page. A
// node whose entry is then set in its page keeps its slot (stale) until
// the table next grows: an argmax changes only while the node's inputs
// arrive, rarely from far to near.
func (a *ArgColumn) setFar(n int32, e Entry) {
	p := n >> argPageBits
	i := n & argPageMask
	if nr := a.near[p]; nr != nil {
		nr[i] = 0
	} else {
		a.mid[p][i] = 0
	}
	if e == NoEntry {
		a.far.clear(n)
		return
	}
	if a.far.put(n, e, a.stale) {
		if a.nfar[p]++; int(a.nfar[p]) > a.pageLen(p)/8 {
			if a.near[p] != nil {
				a.toMid(p)
			} else {
				a.widen(p)
			}
		}
	}
}

func (a *ArgColumn) pageLen(p int32) int {
	return min(argPage, int(a.n)-int(p)<<argPageBits)
}

// toMid turns near page p to 16 bits a node: the entries within 32767
// nodes move into it (their table slots go stale), the others stay in the
// table, counted again.
func (a *ArgColumn) toMid(p int32) {
	nr := a.near[p]
	m := make([]int16, len(nr))
	n := p << argPageBits
	kept := 0
	for i, d := range nr {
		if d != 0 {
			m[i] = int16(d)
		} else if e := a.far.get(n); e != NoEntry {
			if d := int64(n) - int64(e); d == int64(int16(d)) && d != 0 {
				m[i] = int16(d)
			} else {
				kept++
			}
		}
		n++
	}
	a.mid[p], a.near[p], a.nfar[p] = m, nil, uint16(kept)
}

// widen turns mid page p to an Entry a node. Its nodes' table entries
// stay until the table next grows.
func (a *ArgColumn) widen(p int32) {
	m := a.mid[p]
	w := make([]Entry, len(m))
	n := p << argPageBits
	for i, d := range m {
		if d != 0 {
			w[i] = Entry(n - int32(d))
		} else {
			w[i] = a.far.get(n) // NoEntry when absent
		}
		n++
	}
	a.wide[p], a.mid[p] = w, nil
}

// stale reports whether node n's table entry is no longer read: its page
// is wide, or mid and holding it.
func (a *ArgColumn) stale(n int32) bool {
	p := n >> argPageBits
	if a.near[p] != nil {
		return false
	}
	if m := a.mid[p]; m != nil {
		return m[n&argPageMask] != 0
	}
	return true
}

// argTable maps nodes to entries by open addressing: 8 bytes a slot,
// at most 3/4 full, where a map held about 40 an entry.
type argTable struct {
	keys []int32 // node, −1 empty
	vals []Entry
	n    int
}

func (t *argTable) reset() { t.keys, t.vals, t.n = nil, nil, 0 }

func (t *argTable) slot(n int32) int {
	mask := uint32(len(t.keys) - 1)
	i := (uint32(n) * 0x9e3779b1) & mask
	for t.keys[i] != n && t.keys[i] >= 0 {
		i = (i + 1) & mask
	}
	return int(i)
}

func (t *argTable) get(n int32) Entry {
	if t.n == 0 {
		return NoEntry
	}
	if i := t.slot(n); t.keys[i] == n {
		return t.vals[i]
	}
	return NoEntry
}

// clear makes n's entry NoEntry where the table has one.
func (t *argTable) clear(n int32) {
	if t.n == 0 {
		return
	}
	if i := t.slot(n); t.keys[i] == n {
		t.vals[i] = NoEntry
	}
}

// put makes e n's entry and reports whether n is new to the table.
// Growing, the table leaves out the nodes stale says no longer read it.
func (t *argTable) put(n int32, e Entry, stale func(int32) bool) bool {
	if 4*(t.n+1) > 3*len(t.keys) {
		t.grow(stale)
	}
	i := t.slot(n)
	added := t.keys[i] < 0
	if added {
		t.keys[i] = n
		t.n++
	}
	t.vals[i] = e
	return added
}

func (t *argTable) grow(stale func(int32) bool) {
	old, oldVals := t.keys, t.vals
	live := 0
	for _, k := range old {
		if k >= 0 && !stale(k) {
			live++
		}
	}
	size := 16
	for size < 2*(live+1) { // at most half full after
		size *= 2
	}
	t.keys, t.vals, t.n = make([]int32, size), make([]Entry, size), 0
	for i := range t.keys {
		t.keys[i] = -1
	}
	for i, k := range old {
		if k >= 0 && !stale(k) {
			j := t.slot(k)
			t.keys[j], t.vals[j] = k, oldVals[i]
			t.n++
		}
	}
}
