// Package lists keeps many short singly linked lists of int32 values in one
// pool: 8 bytes an element, no allocation per list, and released cells are
// reused, so the pool holds the elements of the lists alive at one time.
// The dependence tracker's readers and set members and the fragment pass's
// pending inputs are such lists.
package lists

// None is the empty list.
const None int32 = -1

type cell struct{ value, next int32 }

// Pool holds lists, each named by its first cell (None when empty). The
// zero Pool is ready to use.
type Pool struct {
	cells []cell
	free  int32 // first free cell + 1, 0 when none
}

// Reserve makes room for about n elements.
func (p *Pool) Reserve(n int) {
	if n > cap(p.cells)-len(p.cells) {
		c := make([]cell, len(p.cells), len(p.cells)+n)
		copy(c, p.cells)
		p.cells = c
	}
}

// Reset empties the pool, keeping its capacity.
func (p *Pool) Reset() { p.cells, p.free = p.cells[:0], 0 }

// Push puts v in front of list and returns the list.
func (p *Pool) Push(list, v int32) int32 {
	if p.free > 0 {
		c := p.free - 1
		p.free = p.cells[c].next + 1
		p.cells[c] = cell{value: v, next: list}
		return c
	}
	p.cells = append(p.cells, cell{value: v, next: list})
	return int32(len(p.cells) - 1)
}

// Release returns list's cells to the pool.
func (p *Pool) Release(list int32) {
	for list != None {
		next := p.cells[list].next
		p.cells[list].next = p.free - 1
		p.free = list + 1
		list = next
	}
}

// Value returns the element in cell c; Next the cell after it (None at the
// end): for c := list; c != lists.None; c = p.Next(c) { … p.Value(c) … }.
func (p *Pool) Value(c int32) int32 { return p.cells[c].value }

// Next returns the cell after c, None at the end of its list.
func (p *Pool) Next(c int32) int32 { return p.cells[c].next }
