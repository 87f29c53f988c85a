package graph

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/internal/bitrank"
)

// slotCol is a value for each slot of one direction of a DAG, the slots a
// replay's values arrive at (the inputs' from other ranks): held densely
// at the slot's rank among them, not at every slot. A forward replay's
// in-slots are about half of a rank's slots; on a pure MPI program at
// several ranks, whose receives' senders are mostly on others, the
// values and tie keys a slot of every direction took 16 bytes were 17 MB
// of the critical path's peak at two ranks.
type slotCol struct {
	at *bitrank.Set // the slots of the direction (shared by a replay's columns)
	v  []int64
}

// slotsOf returns the set of g's slots whose local end is an output (out)
// or an input.
func slotsOf(g *DAG, out bool) *bitrank.Set {
	n := int(g.Slots())
	s := bitrank.Make(n, func(w int) uint64 {
		x := g.slotOut[w]
		if !out {
			x = ^x
		}
		if rest := n - 64*w; rest < 64 {
			x &= 1<<uint(rest) - 1
		}
		return x
	})
	return &s
}

// newSlotCol returns a column of zeros for the slots of set at.
func newSlotCol(at *bitrank.Set) slotCol {
	return slotCol{at: at, v: make([]int64, at.Len())}
}

// get returns slot s's value; s must be one of the column's slots (a
// slot of the other direction has none: a bug, which panics rather than
// reading another slot's value).
func (c *slotCol) get(s int32) int64 {
	return c.v[c.index(s)]
}

// set sets slot s's value; s must be one of the column's slots.
func (c *slotCol) set(s int32, x int64) {
	c.v[c.index(s)] = x
}

// index returns slot s's place in v.
func (c *slotCol) index(s int32) int32 {
	i, ok := c.at.Rank(s)
	if !ok {
		panic(fmt.Sprintf("graph: slot %d is not of the replay's direction", s))
	}
	return i
}

// null reports whether the column holds nothing (the zero slotCol).
func (c *slotCol) null() bool { return c.at == nil }
