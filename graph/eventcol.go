package graph

import (
	"slices"

	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// eventCol holds the matching's event indices (Matching.EventOf),
// appended in node order. A process's nodes follow its merged walk, so 64
// nodes in a row on one thread lie within a few thousand events of each
// other: an index is an int16 from the first of its block of 64 (2.1
// bytes a node, not 4: 1.6 MB of the 10 M-event halo's 852 k nodes,
// from the match to the wait states' end). A column where more than 1/32
// of the indices do not fit (the nodes of threads whose indices are far
// apart, interleaved) moves once to 4 bytes a value, as before; any
// value is exact either way (narrow.Column's values kept aside).
type eventCol struct {
	base  []int64 // per block of 64: its first value
	off   narrow.Column[int16]
	whole narrow.Column[uint32]
	moved bool // the values are in whole
	room  int  // the length reserved for (reserve), which a move keeps
}

const (
	eventBlock   = 64
	eventShare   = 32
	eventMinWide = 64
)

// Len returns the number of values.
func (c *eventCol) Len() int {
	if c.moved {
		return c.whole.Len()
	}
	return c.off.Len()
}

// Reserve makes room for n more values.
func (c *eventCol) Reserve(n int) {
	c.room = c.Len() + n
	if c.moved {
		c.whole.Reserve(n)
		return
	}
	c.off.Reserve(n)
	if need := (c.room+eventBlock-1)/eventBlock - len(c.base); need > 0 {
		c.base = slices.Grow(c.base, need)
	}
}

// Append adds x at the end.
func (c *eventCol) Append(x int64) {
	if c.moved {
		c.whole.Append(x)
		return
	}
	k := c.off.Len()
	if k%eventBlock == 0 {
		c.base = append(c.base, x)
	}
	// Wrapping arithmetic: base + (x − base) is x for any two int64s.
	c.off.Append(x - c.base[k/eventBlock])
	if w := c.off.Wide(); w > eventMinWide && w > (k+1)/eventShare {
		c.move()
	}
}

// At returns value k.
func (c *eventCol) At(k int) int64 {
	if c.moved {
		return c.whole.At(k)
	}
	return c.base[k/eventBlock] + c.off.At(k)
}

// move copies the values to whole.
func (c *eventCol) move() {
	n := c.off.Len()
	c.whole.Reserve(max(c.room, n))
	for k := range n {
		c.whole.Append(c.At(k))
	}
	c.base, c.off, c.moved = nil, narrow.Column[int16]{}, true
}
