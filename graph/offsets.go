package graph

// offsets are the byte offsets of the nodes' lists in a packed adjacency
// (inPk or outPk), n+1 of them: a 16-bit offset from the first of its
// block of 2^shift nodes, where an int32 each took twice that (4.7 MB less
// on the 10 M-event halo's critical-path DAG, for the whole of its
// replays). The blocks are as long as keep every offset within 64 KiB of
// its block's first: 64 nodes almost always, shorter where a node's list
// is long (a block a node, with no saving, at worst).
type offsets struct {
	shift uint8
	base  []int32
	rel   []uint16
}

// maxOffsetShift is the longest block, 64 nodes.
const maxOffsetShift = 6

// packOffsets returns off (nondecreasing byte offsets) packed.
func packOffsets(off []int32) offsets {
	shift := uint8(maxOffsetShift)
	for ; shift > 0; shift-- {
		if blocksFit(off, shift) {
			break
		}
	}
	o := offsets{shift: shift, base: make([]int32, (len(off)+(1<<shift)-1)>>shift), rel: make([]uint16, len(off))}
	for i, v := range off {
		b := i >> shift
		if i&(1<<shift-1) == 0 {
			o.base[b] = v
		}
		o.rel[i] = uint16(v - o.base[b])
	}
	return o
}

// blocksFit reports whether every block of 2^shift offsets spans less
// than 64 KiB (with shift 0, trivially).
func blocksFit(off []int32, shift uint8) bool {
	for lo := 0; lo < len(off); lo += 1 << shift {
		hi := min(lo+1<<shift, len(off)) - 1
		if off[hi]-off[lo] > 0xffff {
			return false
		}
	}
	return true
}

// at returns offset i.
func (o *offsets) at(i int32) int32 { return o.base[i>>(o.shift&7)] + int32(o.rel[i]) }

// span returns node n's list: bytes [at(n), at(n+1)). (The shift is
// masked to tell the compiler it is small: a shift by any count is
// several instructions.)
func (o *offsets) span(n int32) (int32, int32) {
	rel := o.rel[n : n+2]
	sh := o.shift & 7
	b := o.base[n>>sh]
	if (n+1)>>sh == n>>sh {
		return b + int32(rel[0]), b + int32(rel[1])
	}
	return b + int32(rel[0]), o.base[(n+1)>>sh] + int32(rel[1])
}
