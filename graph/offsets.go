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

// lenOffsets makes the offsets of lists whose lengths are lens (a node
// each, and a last entry 0 for the end), in lens's own array: packOffsets
// of their running sums, with blocks as long as keep each block's lists,
// to the next block's first, within 64 KiB, so that each 16-bit part can
// serve as its node's fill cursor (filled, restore makes them the
// offsets). ok false (lens left as they were) when some node's list is
// longer than that, or when fits is false (a length wrapped).
func lenOffsets(lens []uint16, fits bool) (o offsets, ok bool) {
	if !fits {
		return offsets{}, false
	}
	shift := uint8(maxOffsetShift)
	for ; ; shift-- {
		if lensFit(lens, shift) {
			break
		}
		if shift == 0 {
			return offsets{}, false
		}
	}
	o = offsets{shift: shift, base: make([]int32, (len(lens)+(1<<shift)-1)>>shift), rel: lens}
	var total int32
	for lo := 0; lo < len(lens); lo += 1 << shift {
		o.base[lo>>shift] = total
		var in uint16 // the block's bytes before node i
		for i := lo; i < min(lo+1<<shift, len(lens)); i++ {
			l := lens[i]
			lens[i] = in
			in += l
		}
		total += int32(in)
	}
	return o, true
}

// lensFit reports whether every block of 2^shift lists of lens spans
// less than 64 KiB.
func lensFit(lens []uint16, shift uint8) bool {
	for lo := 0; lo < len(lens); lo += 1 << shift {
		sum := 0
		for _, l := range lens[lo:min(lo+1<<shift, len(lens))] {
			sum += int(l)
		}
		if sum > 0xffff {
			return false
		}
	}
	return true
}

// end returns the last offset, the lists' total bytes.
func (o *offsets) end() int32 { return o.at(int32(len(o.rel) - 1)) }

// restore makes the fill cursors the offsets again: filled, each node's
// cursor is the next node's offset (within its block: a block's first
// node is at 0).
func (o *offsets) restore() {
	mask := 1<<(o.shift&7) - 1
	for i := len(o.rel) - 1; i > 0; i-- {
		if i&mask == 0 {
			o.rel[i] = 0
		} else {
			o.rel[i] = o.rel[i-1]
		}
	}
	if len(o.rel) > 0 {
		o.rel[0] = 0
	}
}

// byteOffsets are the offsets a DAG keeps once built (offsets are the
// build's fill cursors): an int32 base per block of 16 nodes and an 8-bit
// offset from it a node, 1.25 bytes a node where 16-bit offsets took
// 2.06 for the replays' whole length (6.5 MB of fib(30)'s 8.1 M-node
// critical-path DAG, 0.8 MB of BOTS health's, at their peaks). A block
// whose lists span more than 255 bytes (a node with a hundred outputs
// or more: a fork's, a barrier's) keeps its offsets as int32 aside: its
// base is then ^k, its offsets wide[16k:16k+16].
type byteOffsets struct {
	base []int32
	rel  []uint8
	wide []int32
}

const byteBlockBits = 4

// narrow returns o as byteOffsets.
func (o *offsets) narrow() byteOffsets {
	n := len(o.rel)
	const bl = 1 << byteBlockBits
	b := byteOffsets{base: make([]int32, (n+bl-1)>>byteBlockBits), rel: make([]uint8, n)}
	for lo := 0; lo < n; lo += bl {
		hi := min(lo+bl, n)
		first, last := o.at(int32(lo)), o.at(int32(hi-1))
		if last-first <= 0xff {
			b.base[lo>>byteBlockBits] = first
			for i := lo; i < hi; i++ {
				b.rel[i] = uint8(o.at(int32(i)) - first)
			}
			continue
		}
		b.base[lo>>byteBlockBits] = ^int32(len(b.wide) >> byteBlockBits)
		for i := lo; i < lo+bl; i++ {
			if i < hi {
				b.wide = append(b.wide, o.at(int32(i)))
			} else {
				b.wide = append(b.wide, 0)
			}
		}
	}
	return b
}

// at returns offset i.
func (o *byteOffsets) at(i int32) int32 {
	if b := o.base[i>>byteBlockBits]; b >= 0 {
		return b + int32(o.rel[i])
	}
	return o.atWide(i)
}

func (o *byteOffsets) atWide(i int32) int32 {
	return o.wide[^o.base[i>>byteBlockBits]<<byteBlockBits|i&(1<<byteBlockBits-1)]
}

// span returns node n's list: bytes [at(n), at(n+1)). It inlines: the
// replays read one a node.
func (o *byteOffsets) span(n int32) (int32, int32) {
	if b := o.base[n>>byteBlockBits]; b >= 0 && n&(1<<byteBlockBits-1) != 1<<byteBlockBits-1 {
		return b + int32(o.rel[n]), b + int32(o.rel[n+1])
	}
	return o.spanRare(n)
}

// spanRare is span of a block's last node or a node of a wide block.
func (o *byteOffsets) spanRare(n int32) (int32, int32) { return o.at(n), o.at(n + 1) }
