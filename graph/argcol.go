package graph

// ArgColumn holds each node's argmax (Result.Arg): the input that gave
// its value, as the distance back from the node in a signed byte. A
// node's argmax is nearly always a node made shortly before it (its
// chain predecessor, a child task's last fragment, the send of a message
// it receives): 89–99 % of the nodes of the gen traces and the recorded
// task programs fit a byte, the others go to a table beside. A column of
// Entry took 4 bytes a node, 31 MB of fib(30)'s critical path at its peak.
type ArgColumn struct {
	d   []int8 // n − arg, or 0: NoEntry, or the entry in far
	far argTable
}

// newArgColumn returns a column of n NoEntry values, in c's array when it
// has room.
func newArgColumn(n int32, c *ArgColumn) *ArgColumn {
	if c == nil || int64(cap(c.d)) < int64(n) {
		return &ArgColumn{d: make([]int8, n)}
	}
	c.d = c.d[:n]
	clear(c.d)
	c.far.reset()
	return c
}

// Len returns the number of nodes.
func (a *ArgColumn) Len() int { return len(a.d) }

// At returns node n's entry.
func (a *ArgColumn) At(n int32) Entry {
	if d := a.d[n]; d != 0 {
		return Entry(n - int32(d))
	}
	return a.far.get(n) // NoEntry when absent
}

// Set makes e node n's entry.
func (a *ArgColumn) Set(n int32, e Entry) {
	if d := int64(n) - int64(e); d == int64(int8(d)) && d != 0 && e != NoEntry {
		a.d[n] = int8(d)
		return
	}
	a.setFar(n, e)
}

// setFar keeps e in the table. A node whose entry is then set near keeps
// its slot: an argmax changes only while the node's inputs arrive, rarely
// from far to near.
func (a *ArgColumn) setFar(n int32, e Entry) {
	a.d[n] = 0
	if e != NoEntry || a.far.n > 0 {
		a.far.put(n, e)
	}
}

// Entries returns the column as a slice, for tests and tools.
func (a *ArgColumn) Entries() []Entry {
	out := make([]Entry, a.Len())
	for n := range out {
		out[n] = a.At(int32(n))
	}
	return out
}

// argTable maps nodes to entries by open addressing: 8 bytes a slot,
// at most 3/4 full, where a map held about 40 an entry.
type argTable struct {
	keys []int32 // node, −1 empty
	vals []Entry
	n    int
}

func (t *argTable) reset() {
	for i := range t.keys {
		t.keys[i] = -1
	}
	t.n = 0
}

func (t *argTable) slot(n int32) int {
	mask := uint32(len(t.keys) - 1)
	i := (uint32(n) * 0x9e3779b1) & mask
	for t.keys[i] != n && t.keys[i] >= 0 {
		i = (i + 1) & mask
	}
	return int(i)
}

func (t *argTable) get(n int32) Entry {
	if len(t.keys) == 0 {
		return NoEntry
	}
	if i := t.slot(n); t.keys[i] == n {
		return t.vals[i]
	}
	return NoEntry
}

func (t *argTable) put(n int32, e Entry) {
	if 4*(t.n+1) > 3*len(t.keys) {
		t.grow()
	}
	i := t.slot(n)
	if t.keys[i] < 0 {
		t.keys[i] = n
		t.n++
	}
	t.vals[i] = e
}

func (t *argTable) grow() {
	old, oldVals := t.keys, t.vals
	size := max(2*len(old), 1024)
	t.keys, t.vals = make([]int32, size), make([]Entry, size)
	for i := range t.keys {
		t.keys[i] = -1
	}
	for i, k := range old {
		if k >= 0 {
			j := t.slot(k)
			t.keys[j], t.vals[j] = k, oldVals[i]
		}
	}
}
