package sim

import "math/bits"

// Per-task state that most tasks never set, or set to one value in long
// runs, costs less kept apart from the task table: a column allocated a
// page at a time where a value is written (col32), or a small hash table
// of the tasks that hold a value now (taskMap).

// colPageBits sizes a col32 page: 4096 entries, 16 KiB once dense.
const (
	colPageBits = 12
	colPageLen  = 1 << colPageBits
)

// col is a column of values, one per task, that reads def where nothing
// was written (col32: int32 values). Its pages start empty (no memory but
// their header), hold one value written to some of their entries (a bit
// an entry: 512 bytes), and become dense (4 bytes an entry for int32) when
// a second value is written: a column written for few tasks, or with the
// same value for the tasks of a page (the barrier every task of a loop
// joins, the fragment their creator left off at), costs next to nothing.
// A page whose entries all read def again goes back to empty: the
// predecessors and successors of tasks, all set when a program creates
// every task first, are released as the tasks complete.
type col[T comparable] struct {
	def   T
	pages []colPage[T]
	// free holds arrays for pages that need them: a previous use's (reset)
	// and a few of the pages emptied since (more go to the collector).
	freeDense [][]T
	freeSet   []*[colPageLen / 64]uint64
}

// keepFree is how many emptied pages' arrays a column keeps for reuse.
const keepFree = 4

type col32 = col[int32]

type colPage[T comparable] struct {
	dense []T                      // all entries, nil unless dense
	set   *[colPageLen / 64]uint64 // entries holding v, nil when none (or dense)
	v     T
	n     int32 // entries not reading def
}

// reset makes c a column of n entries reading def, keeping the arrays it
// had for the pages it will need.
func (c *col[T]) reset(n int, def T) {
	for i := range c.pages {
		p := &c.pages[i]
		if p.dense != nil {
			c.freeDense = append(c.freeDense, p.dense)
		}
		if p.set != nil {
			c.freeSet = append(c.freeSet, p.set)
		}
	}
	np := (n + colPageLen - 1) / colPageLen
	if cap(c.pages) >= np {
		c.pages = c.pages[:np]
		clear(c.pages)
	} else {
		c.pages = make([]colPage[T], np)
	}
	c.def = def
}

// get returns entry i.
func (c *col[T]) get(i int32) T {
	p := &c.pages[i>>colPageBits]
	j := i & (colPageLen - 1)
	if p.dense != nil {
		return p.dense[j]
	}
	if p.set != nil && p.set[j/64]&(1<<(j%64)) != 0 {
		return p.v
	}
	return c.def
}

// set writes x to entry i.
func (c *col[T]) set(i int32, x T) {
	p := &c.pages[i>>colPageBits]
	j := i & (colPageLen - 1)
	bit := uint64(1) << (j % 64)
	switch {
	case p.dense != nil:
		if was := p.dense[j] != c.def; was != (x != c.def) {
			if was {
				p.n--
			} else {
				p.n++
			}
		}
		p.dense[j] = x
		if p.n == 0 {
			c.empty(p)
		}
	case x == c.def:
		if p.set != nil && p.set[j/64]&bit != 0 {
			p.set[j/64] &^= bit
			if p.n--; p.n == 0 {
				c.empty(p)
			}
		}
	case p.set == nil:
		if n := len(c.freeSet); n > 0 {
			p.set = c.freeSet[n-1]
			c.freeSet = c.freeSet[:n-1]
			clear(p.set[:])
		} else {
			p.set = new([colPageLen / 64]uint64)
		}
		p.v = x
		p.set[j/64] |= bit
		p.n = 1
	case x == p.v:
		if p.set[j/64]&bit == 0 {
			p.set[j/64] |= bit
			p.n++
		}
	default:
		c.densify(p)
		if p.dense[j] == c.def {
			p.n++
		}
		p.dense[j] = x
	}
}

// empty makes page p, whose entries all read def, empty again, keeping
// its array for reuse if the column keeps few.
func (c *col[T]) empty(p *colPage[T]) {
	if p.dense != nil && len(c.freeDense) < keepFree {
		c.freeDense = append(c.freeDense, p.dense)
	}
	if p.set != nil && len(c.freeSet) < keepFree {
		c.freeSet = append(c.freeSet, p.set)
	}
	*p = colPage[T]{}
}

// densify makes page p dense.
func (c *col[T]) densify(p *colPage[T]) {
	var d []T
	if n := len(c.freeDense); n > 0 {
		d = c.freeDense[n-1]
		c.freeDense = c.freeDense[:n-1]
	} else {
		d = make([]T, colPageLen)
	}
	for k := range d {
		d[k] = c.def
	}
	if s := p.set; s != nil {
		for w, word := range s {
			for ; word != 0; word &= word - 1 {
				d[w*64+bits.TrailingZeros64(word)] = p.v
			}
		}
		c.freeSet = append(c.freeSet, s)
	}
	p.dense, p.set = d, nil
}

// block appends entries [64b, 64b+64) to dst, up to n in all.
func (c *col[T]) block(b, n int, dst []T) []T {
	for i := b * 64; i < min((b+1)*64, n); i++ {
		dst = append(dst, c.get(int32(i)))
	}
	return dst
}

// counts is a column of int32 counts per task that are nearly always
// small: a byte a task where written (col), a count outside 0..254 kept
// exactly in a table (a task with 255 predecessors or more, a damaged
// trace's negative count).
type counts struct {
	small col[uint8]
	big   taskMap
}

const bigCount = 255

func (c *counts) reset(n int) {
	c.small.reset(n, 0)
	c.big.clear()
}

func (c *counts) get(t Task) int32 {
	if x := c.small.get(t); x != bigCount {
		return int32(x)
	}
	return c.big.get(t, 0)
}

func (c *counts) set(t Task, v int32) {
	if v >= 0 && v < bigCount {
		if c.small.get(t) == bigCount {
			c.big.del(t)
		}
		c.small.set(t, uint8(v))
		return
	}
	c.small.set(t, bigCount)
	c.big.insert(t, v)
}

// taskMap maps tasks to int32 values where few tasks hold one at a time
// (the fragment pass's pending inputs of a task, which its next fragment
// drains; the children of a task not completed yet): an open-addressing
// table of the entries, deleted when their value goes back to none, so
// its size follows the tasks that hold one now, not the task table.
type taskMap struct {
	slots []mapSlot // a power of two, at most half full
	n     int
	shift uint8
}

type mapSlot struct{ key, val int32 } // key -1: empty

// get returns t's value, or none.
func (m *taskMap) get(t Task, none int32) int32 {
	if m.n == 0 {
		return none
	}
	for i := m.home(t); ; i = (i + 1) & uint32(len(m.slots)-1) {
		switch m.slots[i].key {
		case t:
			return m.slots[i].val
		case -1:
			return none
		}
	}
}

func (m *taskMap) home(t Task) uint32 { return uint32(t) * 0x9E3779B9 >> m.shift }

// put sets t's value to v; v == none deletes it.
func (m *taskMap) put(t Task, v, none int32) {
	if v == none {
		m.del(t)
		return
	}
	m.insert(t, v)
}

// insert sets t's value to v.
func (m *taskMap) insert(t Task, v int32) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	i := m.home(t)
	for ; m.slots[i].key != -1; i = (i + 1) & uint32(len(m.slots)-1) {
		if m.slots[i].key == t {
			m.slots[i].val = v
			return
		}
	}
	m.slots[i] = mapSlot{t, v}
	m.n++
}

// del removes t's entry, moving back the entries of its probe run that
// would no longer be found (no tombstones: the table never fills with
// them however many tasks come and go).
func (m *taskMap) del(t Task) {
	if m.n == 0 {
		return
	}
	mask := uint32(len(m.slots) - 1)
	i := m.home(t)
	for ; m.slots[i].key != t; i = (i + 1) & mask {
		if m.slots[i].key == -1 {
			return
		}
	}
	for j := (i + 1) & mask; m.slots[j].key != -1; j = (j + 1) & mask {
		// The entry at j moves to the hole at i unless its home lies
		// cyclically in (i, j].
		if h := m.home(m.slots[j].key); (j-h)&mask >= (j-i)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i].key = -1
	m.n--
}

func (m *taskMap) grow() {
	old := m.slots
	size := max(2*len(old), 16)
	m.slots = make([]mapSlot, size)
	for i := range m.slots {
		m.slots[i].key = -1
	}
	m.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	m.n = 0
	for _, s := range old {
		if s.key != -1 {
			m.insert(s.key, s.val)
		}
	}
}

// clear empties m, keeping its table.
func (m *taskMap) clear() {
	if m.n > 0 {
		for i := range m.slots {
			m.slots[i].key = -1
		}
	}
	m.n = 0
}
