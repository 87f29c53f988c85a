package graph

import (
	"math"

	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// vstore holds a replay's value a node. Wide, it is an int64 a node.
// Narrow (newNarrowStore), for values that vary little among nearby nodes
// (the critical path's earliest finishes: times of fragments made one
// after another), it is a difference from a base per block of 64 nodes:
// 24 bits first (3.1 bytes a node: the earliest finishes of 64 fragments
// made in a row lie within 8.4 ms of each other on every block but a few
// of fib(30), BOTS health, the gen stencil, nearest, halo and tree, 87 %
// of Task Bench's), then 32 bits (4.1 bytes a node, as on a pure MPI
// program of 64 processes, whose blocks fit none at 24), instead of 8. A
// block's base is its first value written; a block whose values do not
// all fit the width, or that is given a value equal to one of the marks
// below, keeps its 64 values whole (far), and when too many do (tooFar)
// the store turns to the next width, so its memory never passes about the
// wide store's.
type vstore struct {
	wide []int64
	base []int64 // per block: the base, unsetBase, or farBase + its index in far
	off  []int32 // 32 bits a node, or nil
	// 24 bits a node: the low 16 bits in lo, the high 8 (signed) in hi;
	// or nil.
	lo   []uint16
	hi   []int8
	far  [][64]int64 // the blocks kept whole
	used int         // blocks given a value so far (read at 24 bits, tooFar)
	// done, in a store of weights (newWeightStore), marks the nodes whose
	// value is written (set); the others hold their weight (weight), as a
	// difference from 0 instead of from the block's base, or whole in a
	// block kept whole.
	done []uint64
	// wkept counts the blocks kept whole for a weight that did not fit
	// (setWeight): they say nothing of how the values fit (tooFar).
	wkept int
}

// A block's base at or below farTop is a mark: farBase + i for a block
// kept whole as far[i], far[0] being the zeros of the blocks nothing was
// written to (unsetBase). A value there (within 2³² of the least int64)
// is never a base: its block is kept whole.
const (
	farBase   = math.MinInt64 // + i: the block's values are far[i]
	unsetBase = farBase       // far[0]: no value written in the block yet
	farTop    = farBase + math.MaxUint32
)

func newWideStore(n int) vstore { return vstore{wide: make([]int64, n)} }

func wideStoreOf(v []int64) vstore { return vstore{wide: v} }

// newNarrowStore returns a narrow store of n nodes, 24 bits a node.
func newNarrowStore(n int) vstore {
	v := vstore{base: make([]int64, (n+63)/64), lo: make([]uint16, n), hi: make([]int8, n)}
	v.unsetBases()
	return v
}

// newNarrow32Store returns a narrow store of n nodes, 32 bits a node, for
// values that are seldom within 24 bits of their block's first (the
// matching's recorded times: 64 nodes in a row mostly lie within 2.1 s,
// not within 8.4 ms).
func newNarrow32Store(n int) vstore {
	v := vstore{base: make([]int64, (n+63)/64), off: make([]int32, n)}
	v.unsetBases()
	return v
}

// newWeightStore returns a narrow store of n nodes, 24 bits a node, that
// holds node k's weight w.At(k) until its value is written: a forward
// replay reads a node's weight once, when it writes the node's value, so
// the two share a node's bytes (LongestPathsWeighted). Where more than a
// sixteenth of the blocks hold a weight that 24 bits do not, it starts
// at 32 bits: each such block is kept whole (8 bytes a node), and the
// EFs, which within a block differ by at least the weights of the nodes
// that follow one another there, keep more; the store then turned to 32
// bits late in the replay, its two widths and 0.6 MB of blocks kept
// whole held beside the DAG (BOTS health large: 800 blocks of 7 130 for
// the weights, the store turned at the 3 677th block given a value, 1 190
// kept whole).
func newWeightStore(w *narrow.Framed, n int) (vstore, error) {
	long := 0 // blocks with a weight outside 24 bits
	err := w.Blocks(func(_ int, vals []int64) {
		for _, x := range vals {
			if x != int64(int32(x)<<8>>8) {
				long++
				return
			}
		}
	})
	if err != nil {
		return vstore{}, err
	}
	var v vstore
	if long > (n+63)/64/16 {
		v = newNarrow32Store(n)
	} else {
		v = newNarrowStore(n)
	}
	v.done = make([]uint64, (n+63)/64)
	err = w.Blocks(func(first int, vals []int64) {
		for k, x := range vals {
			v.setWeight(int32(first+k), x)
		}
	})
	return v, err
}

// setWeight writes node n's weight, before its value is.
func (v *vstore) setWeight(n int32, x int64) {
	if v.wide != nil {
		v.wide[n] = x
		return
	}
	switch b := v.base[n>>6]; {
	case keptWhole(b):
		v.far[b-farBase][n&63] = x
	case v.hi != nil && x == int64(int32(x)<<8>>8):
		v.lo[n], v.hi[n] = uint16(x), int8(x>>16)
	case v.hi == nil && x == int64(int32(x)):
		v.off[n] = int32(x)
	default:
		v.wkept++
		v.keepWhole(n, x)
	}
}

// weight returns the weight of node n, whose value is not written yet.
func (v *vstore) weight(n int32) int64 {
	if v.wide != nil {
		return v.wide[n]
	}
	if b := v.base[n>>6]; keptWhole(b) {
		return v.far[b-farBase][n&63]
	}
	if v.hi != nil {
		return int64(v.hi[n])<<16 | int64(v.lo[n])
	}
	return int64(v.off[n])
}

// at returns node n's value, or its weight before that in a store of
// weights.
func (v *vstore) at(n int32) int64 {
	if v.done != nil && !bitAt(v.done, n) {
		return v.weight(n)
	}
	return v.get(n)
}

// room returns the nodes a store could be reused for (reuseNarrow).
func (v *vstore) room() int {
	if v.hi == nil {
		return 0
	}
	return min(cap(v.lo), cap(v.hi))
}

// reuseNarrow makes v an empty narrow store of n nodes, 24 bits a node,
// in its own arrays, when it is one and they have room; it reports
// whether it did.
func (v *vstore) reuseNarrow(n int) bool {
	blocks := (n + 63) / 64
	if v.room() < n || cap(v.base) < blocks {
		return false
	}
	v.lo, v.hi, v.base, v.used, v.wkept = v.lo[:n], v.hi[:n], v.base[:blocks], 0, 0
	clear(v.lo)
	clear(v.hi)
	v.unsetBases()
	return true
}

// unsetBases marks every block of a narrow store as written by nobody,
// and keeps no block whole but far[0], the zeros they read.
func (v *vstore) unsetBases() {
	for b := range v.base {
		v.base[b] = unsetBase
	}
	v.far = append(v.far[:0], [64]int64{})
}

// get returns node n's value. A node never written reads 0 in a wide
// store or a block nothing was written to, and its block's base in one
// that was: replays read only values they wrote.
func (v *vstore) get(n int32) int64 {
	if v.wide != nil {
		return v.wide[n]
	}
	b := v.base[n>>6]
	if b <= farTop {
		return v.far[b-farBase][n&63] // kept whole, or never written: 0
	}
	if v.hi != nil {
		return b + (int64(v.hi[n])<<16 | int64(v.lo[n]))
	}
	return b + int64(v.off[n])
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
	// fits the width without having wrapped (a wrapped difference has the
	// wrong sign); x itself may be anything, a mark's value included.
	if b := v.base[n>>6]; b > farTop {
		if d := x - b; (x > b) == (d > 0) {
			if v.hi != nil {
				if d == int64(int32(d)<<8>>8) {
					v.lo[n], v.hi[n] = uint16(d), int8(d>>16)
					return
				}
			} else if d == int64(int32(d)) {
				v.off[n] = int32(d)
				return
			}
		}
	}
	v.setRare(n, x)
}

// setRare is set for a block's first value, a value that does not fit its
// base, or a far block.
func (v *vstore) setRare(n int32, x int64) {
	blk := n >> 6
	switch b := v.base[blk]; {
	case keptWhole(b):
		v.far[b-farBase][n&63] = x
		return
	case b == unsetBase && x > farTop:
		v.used++
		v.base[blk] = x
		v.setNarrow(n, x) // a difference of 0
		return
	case b == unsetBase:
		v.used++
	}
	v.keepWhole(n, x)
}

// keepWhole keeps node n's block whole, n's value (or weight) x.
func (v *vstore) keepWhole(n int32, x int64) {
	blk := n >> 6
	var vals [64]int64
	lo := blk << 6
	for i := range vals {
		if m := lo + int32(i); int(m) < v.len() {
			vals[i] = v.at(m)
		}
	}
	vals[n&63] = x
	v.far = append(v.far, vals)
	v.base[blk] = farBase + int64(len(v.far)-1)
	if v.tooFar() {
		v.widen()
	}
}

// tooFar reports whether the store should turn to its next width. At 32
// bits: past an eighth of the blocks kept whole (8 bytes a node), which
// saves nothing. At 24: when a quarter of the blocks used so far are kept
// whole, once more than 64 are (values that vary more than 24 bits allow
// in most blocks, as a pure MPI program's earliest finishes: the store
// turns to 32 bits early in the replay, while little else of it is held,
// not holding both widths at its peak), or past a sixth of all the
// blocks.
func (v *vstore) tooFar() bool {
	if v.hi != nil {
		k := v.kept() - v.wkept // for values
		return k > 64 && 4*k > v.used || v.kept() > len(v.base)/6+1
	}
	return v.kept() > len(v.base)/8+1
}

// keptWhole reports whether a block's base says its values are kept
// whole in far (a mark, but not unsetBase).
func keptWhole(base int64) bool { return base != unsetBase && base <= farTop }

// kept returns the blocks kept whole.
func (v *vstore) kept() int {
	return len(v.far) - 1
}

// widen turns the store to the next width: 24 bits to 32, 32 to wide (too
// many far blocks to save anything). Every value reads as it did.
func (v *vstore) widen() {
	n := v.len()
	if v.hi != nil {
		var far []int // the blocks kept whole at 24 bits: perhaps not at 32
		w := newNarrow32Store(n)
		for blk, b := range v.base {
			if keptWhole(b) {
				far = append(far, blk)
				continue
			}
			w.base[blk] = b
			for m := blk << 6; m < min(blk<<6+64, n); m++ {
				w.off[m] = int32(v.hi[m])<<16 | int32(v.lo[m])
			}
		}
		whole, at := v.far, v.base
		w.done = v.done // used and wkept: no 32-bit store reads them
		*v = w
		for _, blk := range far {
			vals := &whole[at[blk]-farBase]
			for m := blk << 6; m < min(blk<<6+64, n); m++ {
				if x := vals[m-blk<<6]; v.done == nil || bitAt(v.done, int32(m)) {
					v.set(int32(m), x)
				} else {
					v.setWeight(int32(m), x)
				}
			}
		}
		return
	}
	w := make([]int64, n)
	for m := range w {
		w[m] = v.at(int32(m))
	}
	*v = vstore{wide: w, done: v.done}
}

func (v *vstore) len() int {
	switch {
	case v.wide != nil:
		return len(v.wide)
	case v.hi != nil:
		return len(v.hi)
	}
	return len(v.off)
}
