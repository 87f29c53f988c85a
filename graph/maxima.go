package graph

import (
	"math"

	"github.com/ptrace-dev/ptrace/internal/bitrank"
)

// Maxima are PropagateMax's results: cols values for each receive-like
// node (the collective nodes', the propagation's intermediates, are
// PropagateMaxTo's), found through a bit a node and a count per 64 nodes. Sends, most of an
// MPI trace's other nodes, hold nothing: 8·cols bytes a node went to every
// node before (13 MB of the 10 M-event halo's wait states at two columns).
type Maxima struct {
	cols int
	has  bitrank.Set // the nodes with values
	vals []int64
	none []int64 // cols × math.MinInt64, for a node without values
}

func newMaxima(m *Matching, cols int) *Maxima {
	x := &Maxima{cols: cols, has: m.roleSet(1<<RoleRecv, m.Len())}
	x.vals = make([]int64, int(x.has.Len())*cols)
	for i := range x.vals {
		x.vals[i] = math.MinInt64
	}
	x.none = make([]int64, cols)
	for i := range x.none {
		x.none[i] = math.MinInt64
	}
	return x
}

// roleSet returns the set of nodes 0…n−1 whose role is in roles (a bit a
// Role).
func (m *Matching) roleSet(roles uint8, n int32) bitrank.Set {
	return bitrank.Make(int(n), func(w int) uint64 {
		var word uint64
		for b, r := range m.Role[w*64 : min(int(n), w*64+64)] {
			if roles&(1<<r) != 0 {
				word |= 1 << b
			}
		}
		return word
	})
}

// index returns node n's position among the nodes with values, −1 for a
// node without.
func (x *Maxima) index(n int32) int {
	i, ok := x.has.Rank(n)
	if !ok {
		return -1
	}
	return int(i)
}

// At returns node n's values (the largest among its predecessors, per
// column; math.MinInt64 for none). The slice must not be changed.
func (x *Maxima) At(n int32) []int64 {
	i := x.index(n)
	if i < 0 {
		return x.none
	}
	return x.vals[i*x.cols : (i+1)*x.cols]
}
