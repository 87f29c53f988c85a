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
// block (32 KiB) at a time, where a slice grown by doubling held up to
// twice its peak and left the copies' garbage; a block whose cells are all
// given back goes (beyond a few kept for reuse), so that the pool holds
// about the cells in use, not its peak: the successor lists of tasks all
// created first, 58 MB on the 10 M-event lean spread, were given back as
// the tasks completed, but their cells stayed the pool's to the
// simulation's end, its peak since.
const (
	blockBits = 12
	blockLen  = 1 << blockBits
	// keepIdle is how many emptied blocks a pool keeps for its next
	// pushes, so that a list pushed and released again and again does not
	// make a block's garbage each time.
	keepIdle = 4
)

// Pool holds lists, each named by its first cell (None when empty). The
// zero Pool is ready to use.
type Pool struct {
	blocks []*[blockLen]cell // nil: a block given back
	meta   []blockMeta
	// cur is the block pushes take cells from (−1: none); when it has none
	// left they take the block in spare given back cells to last, or a
	// new one.
	cur int32
	// spare are blocks with cells given back (a block may be listed twice,
	// or be full or gone by the time it is taken: checked then).
	spare  []int32
	vacant []int32           // indices of blocks given back
	idle   []*[blockLen]cell // emptied blocks kept for reuse
	held   int               // blocks held, idle ones included
}

// blockMeta is a block's free list and counts.
type blockMeta struct {
	free   int32 // first cell of its free list + 1, 0 when empty
	top    int32 // cells handed out at least once: the rest never were
	live   int32 // cells in use
	listed bool  // in spare
}

// Bytes returns the memory the pool holds.
func (p *Pool) Bytes() int { return p.held * blockLen * 8 }

// Reset empties the pool, keeping its blocks.
func (p *Pool) Reset() {
	p.spare = p.spare[:0]
	for b := len(p.blocks) - 1; b >= 0; b-- {
		p.meta[b] = blockMeta{}
		if p.blocks[b] != nil {
			p.meta[b].listed = true
			p.spare = append(p.spare, int32(b)) // block 0 taken first
		}
	}
	p.cur = -1
}

func (p *Pool) cell(c int32) *cell { return &p.blocks[c>>blockBits][c&(blockLen-1)] }

// Push puts v in front of list and returns the list.
func (p *Pool) Push(list, v int32) int32 {
	c := p.take()
	*p.cell(c) = cell{value: v, next: list}
	return c
}

// take hands out a cell of the current block, its free list's first.
func (p *Pool) take() int32 {
	if b := p.cur; int(b) < len(p.meta) && b >= 0 {
		m := &p.meta[b]
		if m.free > 0 {
			c := m.free - 1
			m.free = p.cell(c).next + 1
			m.live++
			return c
		}
		if m.top < blockLen {
			m.top++
			m.live++
			return b<<blockBits | (m.top - 1)
		}
	}
	return p.takeBlock()
}

// takeBlock makes another block the current one and takes a cell of it:
// the last listed in spare that still has free cells, else an idle or a
// new one.
//
//go:noinline
func (p *Pool) takeBlock() int32 {
	for n := len(p.spare); n > 0; n-- {
		b := p.spare[n-1]
		p.spare = p.spare[:n-1]
		m := &p.meta[b]
		m.listed = false
		if p.blocks[b] != nil && (m.free > 0 || m.top < blockLen) {
			p.cur = b
			return p.take()
		}
	}
	var blk *[blockLen]cell
	if n := len(p.idle); n > 0 {
		blk, p.idle = p.idle[n-1], p.idle[:n-1]
	} else {
		blk = new([blockLen]cell)
		p.held++
	}
	var b int32
	if n := len(p.vacant); n > 0 {
		b, p.vacant = p.vacant[n-1], p.vacant[:n-1]
	} else {
		b = int32(len(p.blocks))
		p.blocks = append(p.blocks, nil)
		p.meta = append(p.meta, blockMeta{})
	}
	p.blocks[b], p.meta[b] = blk, blockMeta{}
	p.cur = b
	return p.take()
}

// Release gives every cell of list back to the pool.
func (p *Pool) Release(list int32) {
	for list != None {
		x := p.cell(list)
		next := x.next
		b := list >> blockBits
		m := &p.meta[b]
		x.next = m.free - 1
		m.free = list + 1
		m.live--
		switch {
		case b == p.cur:
		case m.live == 0:
			p.drop(b)
		case !m.listed:
			m.listed = true
			p.spare = append(p.spare, b)
		}
		list = next
	}
}

// drop gives back block b, every cell of it free.
func (p *Pool) drop(b int32) {
	if len(p.idle) < keepIdle {
		p.idle = append(p.idle, p.blocks[b])
	} else {
		p.held--
	}
	p.blocks[b], p.meta[b] = nil, blockMeta{}
	p.vacant = append(p.vacant, b)
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
