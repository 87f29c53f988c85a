// Package lists keeps many short singly linked lists of int32 values in one
// pool: 8 bytes an element, no allocation per list, and released cells are
// reused, so the pool holds the elements of the lists alive at one time.
// The dependence tracker's readers and set members and the fragment pass's
// pending inputs are such lists. A list of non-negative values pushed with
// PushRun keeps a run of consecutive values in two cells (the tasks a loop
// creates one after another, which read one address or follow one task),
// and a Head keeps a list's latest run in itself, with no cell at all
// while the list is that one run.
package lists

// None is the empty list.
const None int32 = -1

type cell struct{ value, next int32 }

// The cells are kept in blocks that are never copied: a pool grows by a
// block (32 KiB) at a time and holds at most one block beyond its peak,
// where a slice grown by doubling held up to twice its peak and left the
// copies' garbage.
const (
	blockBits = 12
	blockLen  = 1 << blockBits
)

// Pool holds lists, each named by its first cell (None when empty). The
// zero Pool is ready to use.
type Pool struct {
	blocks []*[blockLen]cell
	n      int32 // cells handed out, free or not
	free   int32 // first free cell + 1, 0 when none
}

// Bytes returns the memory the pool holds.
func (p *Pool) Bytes() int { return len(p.blocks) * blockLen * 8 }

// Reset empties the pool, keeping its blocks.
func (p *Pool) Reset() { p.n, p.free = 0, 0 }

func (p *Pool) cell(c int32) *cell { return &p.blocks[c>>blockBits][c&(blockLen-1)] }

// Push puts v in front of list and returns the list.
func (p *Pool) Push(list, v int32) int32 {
	c := p.free - 1
	if p.free > 0 {
		p.free = p.cell(c).next + 1
	} else {
		if int(p.n) == len(p.blocks)*blockLen {
			p.blocks = append(p.blocks, new([blockLen]cell))
		}
		c = p.n
		p.n++
	}
	*p.cell(c) = cell{value: v, next: list}
	return c
}

// Release gives every cell of list back to the pool.
func (p *Pool) Release(list int32) {
	for list != None {
		x := p.cell(list)
		next := x.next
		x.next = p.free - 1
		p.free = list + 1
		list = next
	}
}

// Value returns the element in cell c; Next the cell after it (None at the
// end): for c := list; c != lists.None; c = p.Next(c) { … p.Value(c) … }.
func (p *Pool) Value(c int32) int32 { return p.cell(c).value }

// Next returns the cell after c, None at the end of its list.
func (p *Pool) Next(c int32) int32 { return p.cell(c).next }

// PushRun puts v (≥ 0) in front of list, as Push does, in a list read with
// Item: when v is one past the value in front, that value's item becomes,
// or grows, a run (a cell holding −length, then one holding the run's
// latest value), so consecutive values take two cells however many.
func (p *Pool) PushRun(list, v int32) int32 {
	if list != None && v > 0 {
		h := p.cell(list)
		switch {
		case h.value == v-1: // a value becomes a run of two
			h.value = v
			return p.Push(list, -2)
		case h.value < 0:
			if b := p.cell(h.next); b.value == v-1 {
				b.value = v
				h.value--
				return list
			}
		}
	}
	return p.Push(list, v)
}

// Item returns the values of the item at cell c of a list made with
// PushRun, latest first: hi, hi−1, …, hi−n+1; next is the next item's
// cell (None at the end): for c := list; c != lists.None; { hi, n, next :=
// p.Item(c); …; c = next }.
func (p *Pool) Item(c int32) (hi, n, next int32) {
	x := p.cell(c)
	if x.value >= 0 {
		return x.value, 1, x.next
	}
	b := p.cell(x.next)
	return b.value, -x.value, b.next
}

// Append appends the values of a list made with PushRun to dst, latest
// first.
func (p *Pool) Append(dst []int32, list int32) []int32 {
	for c := list; c != None; {
		hi, n, next := p.Item(c)
		for v := hi; v > hi-n; v-- {
			dst = append(dst, v)
		}
		c = next
	}
	return dst
}

// Head is a list of non-negative values (as PushRun makes) that holds its
// values in itself while they are one run: 8 bytes, where the run took two
// cells and a list head. The zero Head is the empty list.
type Head struct {
	// n > 0: the values a, a−1, …, a−n+1, latest first; n == 0: none;
	// n < 0: the cells of a PushRun list starting at a.
	a, n int32
}

// Empty reports whether h holds no value.
func (h Head) Empty() bool { return h.n == 0 }

// PushHead puts v (≥ 0) in front of the list *h.
func (p *Pool) PushHead(h *Head, v int32) {
	switch {
	case h.n == 0:
		*h = Head{v, 1}
	case h.n > 0 && v == h.a+1 && v > 0:
		h.a, h.n = v, h.n+1
	case h.n > 0: // the run moves to cells, before v
		*h = Head{p.PushRun(p.Spill(*h).a, v), -1}
	default:
		h.a = p.PushRun(h.a, v)
	}
}

// Short is a list in 4 bytes, read against a base value its holder knows
// (a task's successors against the task, an address's readers against
// its writer): a run of up to 127 values whose latest is within 2^23 of
// the base is held in it, any other list as its first cell (a run that
// does not fit moves to two cells, as a value that breaks a run moves it
// there). The zero Short is the empty list. Bit 31 set: the cells start
// at the other bits; else bits 30–7 are the run's latest value less the
// base (two's complement) and bits 6–0 its length.
type Short uint32

const (
	shortCells   = 1 << 31
	shortRunBits = 7
	shortOff     = 1 << 23
)

// Empty reports whether s holds no value.
func (s Short) Empty() bool { return s == 0 }

// Head returns s, read against base, as a Head.
func (s Short) Head(base int32) Head {
	switch {
	case s == 0:
		return Head{}
	case s&shortCells != 0:
		return Head{int32(s &^ shortCells), -1}
	}
	return Head{base + int32(s<<1)>>(shortRunBits+1), int32(s & (1<<shortRunBits - 1))}
}

// Short returns h as a Short read against base, moving a run that does
// not fit one to cells.
func (p *Pool) Short(h Head, base int32) Short {
	switch {
	case h.n == 0:
		return 0
	case h.n > 0:
		if off := int64(h.a) - int64(base); h.n < 1<<shortRunBits && off >= -shortOff && off < shortOff {
			return Short(uint32(off)<<(shortRunBits+1)>>1 | uint32(h.n))
		}
		h = p.Spill(h)
	}
	return shortCells | Short(h.a)
}

// PushShort puts v (≥ 0) in front of the list *s read against base.
func (p *Pool) PushShort(s *Short, base, v int32) {
	if !s.Grow(base, v) {
		h := s.Head(base)
		p.PushHead(&h, v)
		*s = p.Short(h, base)
	}
}

// Grow puts v in front of *s read against base and returns true where
// that takes no cell, inlined, as when a loop's tasks push themselves one
// after another: an empty s becomes the run v, a run in s whose latest is
// v−1 grows (its latest's offset and its length one more) where both
// still fit. Otherwise it changes nothing and returns false (PushShort).
func (s *Short) Grow(base, v int32) bool {
	const n = 1<<shortRunBits - 1
	x, off := *s, v-base
	if uint32(off+shortOff) >= 2*shortOff {
		return false
	}
	if x == 0 {
		*s = Short(uint32(off)<<(shortRunBits+1)>>1 | 1)
		return true
	}
	if x&^n != Short(uint32(off-1)<<(shortRunBits+1)>>1) || x&n == n {
		return false
	}
	*s = x + n + 2
	return true
}

// Spill returns h with its values in cells (a run held in h moves to two
// cells): the same values in the same order.
func (p *Pool) Spill(h Head) Head {
	if h.n <= 0 {
		return h
	}
	list := p.Push(None, h.a-h.n+1)
	for x := h.a - h.n + 2; x <= h.a; x++ {
		list = p.PushRun(list, x)
	}
	return Head{list, -1}
}

// First returns the first item of h, as Item does (n == 0: h is empty).
func (p *Pool) First(h Head) (hi, n, next int32) {
	switch {
	case h.n > 0:
		return h.a, h.n, None
	case h.n == 0:
		return 0, 0, None
	}
	return p.Item(h.a)
}

// AppendHead appends h's values to dst, latest first.
func (p *Pool) AppendHead(dst []int32, h Head) []int32 {
	if h.n >= 0 {
		for v := h.a; v > h.a-h.n; v-- {
			dst = append(dst, v)
		}
		return dst
	}
	return p.Append(dst, h.a)
}

// ReleaseHead gives h's cells back to the pool.
func (p *Pool) ReleaseHead(h Head) {
	if h.n < 0 {
		p.Release(h.a)
	}
}
