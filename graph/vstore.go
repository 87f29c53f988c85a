package graph

import "math"

// vstore holds a replay's value a node. Wide, it is an int64 a node.
// Narrow (newNarrowStore), for values that vary little among nearby nodes
// (the critical path's earliest finishes: times of fragments made one
// after another), it is an int32 a node from a base per block of 64 nodes,
// about 4.1 bytes a node instead of 8 (9 MB less on the 10 M-event halo's
// forward replay, its peak). A block's base is its first value written; a
// block whose values do not all fit 32 bits of it, or that is given a
// value equal to one of the marks below, keeps its 64 values whole
// (far), and past an eighth of the blocks the store turns wide, so its
// memory never passes about the wide store's.
type vstore struct {
	wide []int64
	base []int64 // per block: the base, unsetBase, or farBase
	off  []int32
	far  map[int32]*[64]int64
}

const (
	unsetBase = math.MinInt64     // no value written in the block yet
	farBase   = math.MinInt64 + 1 // the block's values are in far
)

func newWideStore(n int) vstore { return vstore{wide: make([]int64, n)} }

func wideStoreOf(v []int64) vstore { return vstore{wide: v} }

func newNarrowStore(n int) vstore {
	v := vstore{base: make([]int64, (n+63)/64), off: make([]int32, n)}
	v.unsetBases()
	return v
}

// reuseNarrow makes v an empty narrow store of n nodes in its own arrays,
// when it is narrow and they have room; it reports whether it did.
func (v *vstore) reuseNarrow(n int) bool {
	blocks := (n + 63) / 64
	if v.wide != nil || cap(v.off) < n || cap(v.base) < blocks {
		return false
	}
	v.off, v.base, v.far = v.off[:n], v.base[:blocks], nil
	clear(v.off)
	v.unsetBases()
	return true
}

// unsetBases marks every block of a narrow store as written by nobody.
func (v *vstore) unsetBases() {
	for b := range v.base {
		v.base[b] = unsetBase
	}
}

// get returns node n's value. A node never written reads 0 in a wide
// store or a block nothing was written to, and its block's base in one
// that was: replays read only values they wrote.
func (v *vstore) get(n int32) int64 {
	if v.wide == nil {
		if b := v.base[uint32(n)>>6]; b > farBase {
			return b + int64(v.off[n]) // inlined: a block with a base
		}
		return v.getRare(n)
	}
	return v.wide[n]
}

func (v *vstore) getRare(n int32) int64 {
	if v.base[uint32(n)>>6] == farBase {
		return v.far[n>>6][n&63]
	}
	return 0 // unsetBase
}

// set writes node n's value.
func (v *vstore) set(n int32, x int64) {
	if v.wide == nil {
		v.setNarrow(n, x)
		return
	}
	v.wide[n] = x
}

func (v *vstore) setNarrow(n int32, x int64) {
	// Kept as an offset when the block has a base (no mark) and x − b
	// fits 32 bits without having wrapped (a wrapped difference has the
	// wrong sign); x itself may be anything, a mark's value included.
	if b := v.base[uint32(n)>>6]; b > farBase {
		if d := x - b; d == int64(int32(d)) && (x > b) == (d > 0) {
			v.off[n] = int32(d)
			return
		}
	}
	v.setRare(n, x)
}

// setRare is set for a block's first value, a value that does not fit its
// base, or a far block.
func (v *vstore) setRare(n int32, x int64) {
	blk := n >> 6
	switch b := v.base[blk]; {
	case b == farBase:
		v.far[blk][n&63] = x
		return
	case b == unsetBase && x > farBase:
		v.base[blk], v.off[n] = x, 0
		return
	}
	// The block goes far: its values whole.
	if v.far == nil {
		v.far = map[int32]*[64]int64{}
	}
	vals := new([64]int64)
	lo := blk << 6
	for i := range vals {
		if m := lo + int32(i); m < int32(len(v.off)) {
			vals[i] = v.get(m)
		}
	}
	vals[n&63] = x
	v.far[blk], v.base[blk] = vals, farBase
	if len(v.far) > len(v.base)/8+1 {
		v.widen()
	}
}

// widen turns the store wide (too many far blocks to save anything).
func (v *vstore) widen() {
	w := make([]int64, len(v.off))
	for n := range w {
		w[n] = v.get(int32(n))
	}
	*v = vstore{wide: w}
}

func (v *vstore) len() int {
	if v.wide != nil {
		return len(v.wide)
	}
	return len(v.off)
}
