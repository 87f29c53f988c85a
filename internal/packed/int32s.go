package packed

import "math/bits"

// Int32s is a read-only column of int32 values with random access, packed
// by frame of reference: each block of 64 values is kept as the values'
// differences from the block's smallest, in the fewest bits that hold the
// block's range. Values that are close within a block (fragment nodes of
// tasks made one after another) take one or two bytes instead of four.
type Int32s struct {
	base  []int32  // per block: its smallest value
	at    []uint32 // per block: its first word in words
	width []uint8  // per block: bits a value
	words []uint64
	n     int
}

const int32sBlock = 64

// PackInt32s packs v.
func PackInt32s(v []int32) Int32s {
	nb := (len(v) + int32sBlock - 1) / int32sBlock
	c := Int32s{base: make([]int32, nb), at: make([]uint32, nb), width: make([]uint8, nb), n: len(v)}
	total := 0
	for b := range nb {
		lo, hi := blockRange(v, b)
		c.base[b] = lo
		c.width[b] = uint8(bits.Len32(uint32(hi - lo)))
		c.at[b] = uint32(total)
		// 64 values of w bits are w words.
		total += int(c.width[b])
	}
	c.words = make([]uint64, total+1) // one more: a value may straddle into it
	for b := range nb {
		w := uint(c.width[b])
		if w == 0 {
			continue
		}
		word := uint(c.at[b])
		for k, x := range v[b*int32sBlock : min(len(v), (b+1)*int32sBlock)] {
			d := uint64(uint32(x - c.base[b]))
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

func blockRange(v []int32, b int) (lo, hi int32) {
	blk := v[b*int32sBlock : min(len(v), (b+1)*int32sBlock)]
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
	b := i / int32sBlock
	w := uint(c.width[b])
	if w == 0 {
		return c.base[b]
	}
	pos := uint(i%int32sBlock) * w
	k, s := uint(c.at[b])+pos/64, pos%64
	d := c.words[k] >> s
	if s+w > 64 {
		d |= c.words[k+1] << (64 - s)
	}
	return c.base[b] + int32(uint32(d&(1<<w-1)))
}

// Bytes returns the memory the column holds.
func (c *Int32s) Bytes() int { return 9*len(c.base) + 8*len(c.words) }
