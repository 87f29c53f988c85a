package graph

import (
	"math"
	"math/bits"
)

// Maxima are PropagateMax's results: cols values for each receive-like
// node (and, as the propagation's intermediates, each collective node),
// found through a bit a node and a count per 64 nodes. Sends, most of an
// MPI trace's other nodes, hold nothing: 8·cols bytes a node went to every
// node before (13 MB of the 10 M-event halo's wait states at two columns).
type Maxima struct {
	cols int
	has  []uint64 // bit n: node n has values
	rank []uint32 // nodes with values before word w
	vals []int64
	none []int64 // cols × math.MinInt64, for a node without values
}

func newMaxima(m *Matching, cols int) *Maxima {
	n := int(m.Len())
	x := &Maxima{cols: cols, has: make([]uint64, (n+63)/64), rank: make([]uint32, (n+63)/64)}
	count := uint32(0)
	for w := range x.has {
		x.rank[w] = count
		var word uint64
		for b, r := range m.Role[w*64 : min(n, w*64+64)] {
			if r == RoleRecv || r == RoleColl {
				word |= 1 << b
			}
		}
		x.has[w] = word
		count += uint32(bits.OnesCount64(word))
	}
	x.vals = make([]int64, int(count)*cols)
	for i := range x.vals {
		x.vals[i] = math.MinInt64
	}
	x.none = make([]int64, cols)
	for i := range x.none {
		x.none[i] = math.MinInt64
	}
	return x
}

// index returns node n's position among the nodes with values, −1 for a
// node without.
func (x *Maxima) index(n int32) int {
	w, b := int(n)/64, uint(n)%64
	if n < 0 || w >= len(x.has) || x.has[w]&(1<<b) == 0 {
		return -1
	}
	return int(x.rank[w]) + bits.OnesCount64(x.has[w]&(1<<b-1))
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
