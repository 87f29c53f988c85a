// Package lists keeps many short singly linked lists of int32 values in one
// pool: 8 bytes an element, no allocation per list, and released cells are
// reused, so the pool holds the elements of the lists alive at one time.
// The dependence tracker's readers and set members and the fragment pass's
// pending inputs are such lists.
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
