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
// of the differences do not fit (the nodes of threads whose indices are
// far apart, interleaved) moves once to 4 bytes a value (narrow.Step);
// any value is exact either way (the few that do not fit kept aside).
type eventCol struct {
	base []int64 // per block of 64: its first value
	off  narrow.Step[int16, int32, int32]
}

const eventBlock = 64

// Len returns the number of values.
func (c *eventCol) Len() int { return c.off.Len() }

// Reserve makes room for n more values.
func (c *eventCol) Reserve(n int) {
	c.off.Reserve(n)
	if need := (c.off.Len()+n+eventBlock-1)/eventBlock - len(c.base); need > 0 {
		c.base = slices.Grow(c.base, need)
	}
}

// Append adds x at the end.
func (c *eventCol) Append(x int64) {
	k := c.off.Len()
	if k%eventBlock == 0 {
		c.base = append(c.base, x)
	}
	// Wrapping arithmetic: base + (x − base) is x for any two int64s.
	c.off.Append(x - c.base[k/eventBlock])
}

// At returns value k.
func (c *eventCol) At(k int) int64 { return c.base[uint(k)/eventBlock] + c.off.At(k) }
