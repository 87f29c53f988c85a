package packed

import (
	"math/bits"
	"slices"
)

// Int32s is a read-only column of int32 values with random access, packed
// by frame of reference: each block of 64 values is kept as the values'
// differences from the block's smallest, in the fewest bits that hold the
// block's range. Values that are close within a block (fragment nodes of
// tasks made one after another) take one or two bytes instead of four.
type Int32s struct {
	blocks []int32sHeader
	words  []uint64
	n      int
	pk     *parking // where the words are while parked (Park)
}

// int32sHeader is a block's header, in one place: a lookup reads it and
// then one or two words.
type int32sHeader struct {
	at    uint32 // its first word in words
	base  int32  // its smallest value
	width uint8  // bits a value
}

const int32sBlock = 64

// PackInt32s packs v.
func PackInt32s(v []int32) Int32s {
	return PackInt32Blocks(len(v), func(b int, dst []int32) []int32 {
		return append(dst, v[b*int32sBlock:min(len(v), (b+1)*int32sBlock)]...)
	})
}

// PackInt32Blocks packs n values that block gives 64 at a time: it
// appends values [64b, 64b+64) (fewer in the last block) to dst and
// returns it. A column kept in pages is packed without a copy of it
// whole; block is called twice for each block.
func PackInt32Blocks(n int, block func(b int, dst []int32) []int32) Int32s {
	nb := (n + int32sBlock - 1) / int32sBlock
	c := Int32s{blocks: make([]int32sHeader, nb), n: n}
	buf := make([]int32, 0, int32sBlock)
	total := 0
	for b := range nb {
		buf = block(b, buf[:0])
		lo, hi := blockRange(buf)
		w := uint8(bits.Len32(uint32(hi - lo)))
		c.blocks[b] = int32sHeader{at: uint32(total), base: lo, width: w}
		// 64 values of w bits are w words.
		total += int(w)
	}
	c.words = make([]uint64, total+2) // a value may straddle into the next word; At reads one past it
	for b := range nb {
		blk := c.blocks[b]
		w := uint(blk.width)
		if w == 0 {
			continue
		}
		word := uint(blk.at)
		buf = block(b, buf[:0])
		for k, x := range buf {
			d := uint64(uint32(x - blk.base))
			pos := uint(k) * w
			i, s := word+pos/64, pos%64
			c.words[i] |= d << s
			if s+w > 64 {
				c.words[i+1] |= d >> (64 - s)
			}
		}
	}
	return c
}

// JoinInt32s returns the values of parts, in order, as one column, as if
// packed whole: every part but the last holds whole blocks (a multiple of
// 64 values), which are kept as they are, not unpacked, so that a column
// packed a part at a time (the simulation's pages of tasks, as each
// page's tasks complete) is joined at the cost of a copy.
func JoinInt32s(parts []Int32s) Int32s {
	var nb, nw, n int
	for i, p := range parts {
		if i < len(parts)-1 && p.n%int32sBlock != 0 {
			panic("packed: JoinInt32s of a part that does not end a block")
		}
		nb, nw, n = nb+len(p.blocks), nw+p.used(), n+p.n
	}
	c := Int32s{blocks: make([]int32sHeader, 0, nb), words: make([]uint64, 0, nw+2), n: n}
	for _, p := range parts {
		at := uint32(len(c.words))
		for _, h := range p.blocks {
			h.at += at
			c.blocks = append(c.blocks, h)
		}
		c.words = append(c.words, p.words[:p.used()]...)
	}
	c.words = append(c.words, 0, 0) // At reads one word past a value's
	return c
}

// used returns how many of c's words hold values (the two spare ones at
// the end do not).
func (c *Int32s) used() int { return max(len(c.words)-2, 0) }

func blockRange(blk []int32) (lo, hi int32) {
	lo, hi = blk[0], blk[0]
	for _, x := range blk[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// Len returns the number of values.
func (c *Int32s) Len() int { return c.n }

// At returns value i.
func (c *Int32s) At(i int) int32 {
	blk := &c.blocks[i/int32sBlock]
	w := uint(blk.width)
	pos := uint(i%int32sBlock) * w
	k, s := uint(blk.at)+pos/64, pos%64
	// Without branches: a shift by 64 gives 0, and words ends with two
	// spare words for the last block's reads.
	d := c.words[k]>>s | c.words[k+1]<<(64-s)
	return blk.base + int32(uint32(d&(1<<w-1)))
}

// AppendTo appends every value to dst, in order, and returns it: a block
// at a time, its bits read in order, where At would find each value's
// block and words again.
func (c *Int32s) AppendTo(dst []int32) []int32 {
	dst = slices.Grow(dst, c.n)
	for b := range c.blocks {
		dst = c.AppendBlock(dst, b)
	}
	return dst
}

// AppendBlock appends the values of block b (values 64b to 64b+63, fewer
// in the last block) to dst and returns it.
func (c *Int32s) AppendBlock(dst []int32, b int) []int32 {
	blk := c.blocks[b]
	m := min(int32sBlock, c.n-b*int32sBlock)
	at := len(dst)
	dst = slices.Grow(dst, m)[:at+m]
	out := dst[at:]
	w := uint(blk.width)
	if w == 0 {
		for i := range out {
			out[i] = blk.base
		}
		return dst
	}
	// The block's w words, read once each: 64 values of w bits fill them.
	words, mask, base := c.words[blk.at:blk.at+uint32(w)], uint64(1)<<w-1, blk.base
	var acc uint64 // the bits of words not taken yet, lowest first
	var have uint  // how many
	for i := range out {
		if have >= w {
			out[i] = base + int32(uint32(acc&mask))
			acc >>= w % 64
			have -= w
			continue
		}
		next := words[0]
		words = words[1:]
		out[i] = base + int32(uint32((acc|next<<have)&mask))
		acc, have = next>>(w-have), 64-(w-have)
	}
	return dst
}

// Bytes returns the memory the column holds.
func (c *Int32s) Bytes() int { return 12*len(c.blocks) + 8*len(c.words) }
