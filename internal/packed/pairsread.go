package packed

import "encoding/binary"

// PairReader reads a Pairs list in order, many pairs a call (Read): where
// Each calls a function value for every pair, a loop over a graph's
// millions of edges reads them from a small buffer, with no call a pair.
type PairReader struct {
	s    *stream
	blk  int
	d    []byte
	pos  int
	a, b int64
	r    regs // byA's runs
	byA  bool
	cmp  bool   // a compact list (Pairs.Compact)
	buf  []byte // a block read from a file (Pairs.StreamTo)
	err  error
}

// Reader returns a reader at p's first pair. p must not grow while it is
// read.
func (p *Pairs) Reader() PairReader {
	return PairReader{s: &p.s, blk: -1, byA: p.byA, cmp: p.compact}
}

// Err returns the error that ended a list streamed to a file early (a
// failed read of one of its blocks: Pairs.StreamTo), nil for any other.
func (r *PairReader) Err() error { return r.err }

// Read decodes the next pairs into as and bs, as many as they hold (the
// shorter of the two) or as are left, and returns how many: 0 at the end
// (or at a failed read: Err).
func (r *PairReader) Read(as, bs []int32) int {
	bs = bs[:min(len(as), len(bs))]
	k := 0
	for k < len(bs) {
		if r.pos >= len(r.d) {
			if r.blk >= len(r.s.full) {
				break
			}
			r.blk++
			r.d, r.pos = r.s.block(r.blk), 0
			if r.d == nil && r.s.inFile(r.blk) {
				if r.d, r.err = r.s.readBlock(r.blk, &r.buf); r.err != nil {
					r.blk = len(r.s.full) // the list ends here
					break
				}
			}
			continue
		}
		if r.cmp {
			k += r.readCompact(as[k:], bs[k:])
			continue
		}
		d, pos, a, b, rg, byA := r.d, r.pos, r.a, r.b, r.r, r.byA
		for k < len(bs) && pos+1 < len(d) {
			c, e := d[pos], d[pos+1]
			var db, da int64
			if c|e < 0x80 { // both a byte: most pairs
				// Four such pairs at once (a task's dependences on its
				// neighbours: all of the lean stencil's), tested with one
				// load.
				if k+4 <= len(bs) && pos+8 <= len(d) {
					if x := binary.LittleEndian.Uint64(d[pos:]); x&0x8080808080808080 == 0 {
						// The eight varints' zigzag decoded at once: a
						// byte c (below 0x80) is c>>1, or its complement
						// when c is odd.
						y := x>>1&0x7f7f7f7f7f7f7f7f ^ (x&0x0101010101010101)*0xff
						a4, b4 := as[k:k+4:k+4], bs[k:k+4:k+4]
						if byA {
							for j := range 4 {
								a, b := rg.get(int64(int8(y>>(16*j))), int64(int8(y>>(16*j+8))))
								a4[j], b4[j] = int32(a), int32(b)
							}
						} else {
							b += int64(int8(y))
							a4[0], b4[0] = int32(b-int64(int8(y>>8))), int32(b)
							b += int64(int8(y >> 16))
							a4[1], b4[1] = int32(b-int64(int8(y>>24))), int32(b)
							b += int64(int8(y >> 32))
							a4[2], b4[2] = int32(b-int64(int8(y>>40))), int32(b)
							b += int64(int8(y >> 48))
							a4[3], b4[3] = int32(b-int64(int8(y>>56))), int32(b)
							a = int64(a4[3])
						}
						k, pos = k+4, pos+8
						continue
					}
				}
				db, da, pos = int64(c>>1)^-int64(c&1), int64(e>>1)^-int64(e&1), pos+2
			} else {
				// A varint of one to three bytes inline (a fragment
				// graph's edges between nodes made a few dozen apart, or
				// to a join node made far before), longer ones by
				// varintAt.
				if c < 0x80 {
					db, pos = int64(c>>1)^-int64(c&1), pos+1
				} else if e < 0x80 {
					u := uint64(c&0x7f) | uint64(e)<<7
					db, pos = int64(u>>1)^-int64(u&1), pos+2
				} else if pos+2 < len(d) && d[pos+2] < 0x80 {
					u := uint64(c&0x7f) | uint64(e&0x7f)<<7 | uint64(d[pos+2])<<14
					db, pos = int64(u>>1)^-int64(u&1), pos+3
				} else {
					db, pos = varintAt(d, pos)
				}
				if pos >= len(d) {
					break // a corrupt list; never made by Append
				}
				if c := d[pos]; c < 0x80 {
					da, pos = int64(c>>1)^-int64(c&1), pos+1
				} else if pos+1 < len(d) && d[pos+1] < 0x80 {
					u := uint64(c&0x7f) | uint64(d[pos+1])<<7
					da, pos = int64(u>>1)^-int64(u&1), pos+2
				} else {
					da, pos = varintAt(d, pos)
				}
			}
			if byA {
				a, b := rg.get(db, da)
				as[k], bs[k] = int32(a), int32(b)
			} else {
				b += db
				a = b - da
				as[k], bs[k] = int32(a), int32(b)
			}
			k++
		}
		if pos+1 >= len(d) {
			pos = len(d) // a block ends with a whole pair; a stray byte is corruption
		}
		r.pos, r.a, r.b, r.r = pos, a, b, rg
	}
	return k
}

// readCompact is Read's loop over the current block of a compact list,
// from r.pos to the block's end or as many pairs as as and bs hold
// (len(bs) <= len(as)).
func (r *PairReader) readCompact(as, bs []int32) int {
	d, pos, a, b := r.d, r.pos, r.a, r.b
	k := 0
	for k < len(bs) && pos < len(d) {
		// Eight pairs of a byte each at once, tested with one load.
		if k+8 <= len(bs) && pos+8 <= len(d) {
			if x := binary.LittleEndian.Uint64(d[pos:]); x&0x8181818181818181 == 0 {
				db, da := compactEight(x)
				a8, b8 := as[k:k+8:k+8], bs[k:k+8:k+8]
				for j := range 8 {
					b += int64(int8(db >> (8 * j)))
					a += int64(int8(da >> (8 * j)))
					a8[j], b8[j] = int32(a), int32(b)
				}
				k, pos = k+8, pos+8
				continue
			}
		}
		var u uint64
		if c := d[pos]; c < 0x80 {
			u, pos = uint64(c), pos+1
		} else {
			var x int64
			x, pos = varintAt(d, pos)
			u = uint64(zigzag(x))
		}
		var db, da int64
		if u&1 == 0 {
			db, da = compactOne(u)
		} else {
			if pos >= len(d) {
				pos = len(d)
				break // a corrupt list; never made by Append
			}
			var x int64
			x, pos = varintAt(d, pos)
			db, da = unzigzag(u>>1), unzigzag(uint64(zigzag(x))>>1)
		}
		b, a = b+db, a+da
		as[k], bs[k] = int32(a), int32(b)
		k++
	}
	r.pos, r.a, r.b = pos, a, b
	return k
}

// PairsBackward reads a Pairs list from its last pair to its first: a
// varint's last byte is the only one below 0x80, so the bytes before a
// position tell where the varint that ends there begins, and the list's
// last pair is kept whole (Pairs.lastB, or its runs' last pairs: regs),
// from which each pair's differences give the one before.
type PairsBackward struct {
	s    *stream
	blk  int
	d    []byte
	pos  int   // d[:pos] is not read yet
	b    int64 // the next pair's b (not byA)
	a    int64 // the next pair's a (compact)
	r    regs  // byA's runs, at the next pair
	left int   // pairs not returned yet
	byA  bool
	cmp  bool // a compact list
}

// Backward returns a reader at p's last pair. p must not grow while it is
// read.
func (p *Pairs) Backward() PairsBackward {
	return PairsBackward{s: &p.s, blk: len(p.s.full) + 1, b: p.lastB, a: p.lastA, r: p.r, left: p.n, byA: p.byA, cmp: p.compact}
}

// Read decodes the pairs before those it returned (from the list's last at
// first) into as and bs, the latest first, as many as they hold or are
// left, and returns how many: 0 past the first pair.
func (r *PairsBackward) Read(as, bs []int32) int {
	bs = bs[:min(len(as), len(bs), r.left)]
	k := 0
	for k < len(bs) {
		if r.pos == 0 {
			if r.blk == 0 {
				break // a corrupt list; never made by Append
			}
			r.blk--
			r.d = r.s.block(r.blk)
			r.pos = len(r.d)
			continue
		}
		if r.cmp {
			k += r.readCompact(as[k:len(bs)], bs[k:])
			continue
		}
		d, pos, b, rg := r.d, r.pos, r.b, r.r
		for ; k < len(bs) && pos > 0; k++ {
			// Four pairs of one-byte varints at once, as Reader reads
			// them, when the byte before them ends a varint.
			for k+4 <= len(bs) && pos >= 8 && (pos == 8 || d[pos-9] < 0x80) {
				x := binary.LittleEndian.Uint64(d[pos-8:])
				if x&0x8080808080808080 != 0 {
					break
				}
				y := x>>1&0x7f7f7f7f7f7f7f7f ^ (x&0x0101010101010101)*0xff
				a4, b4 := as[k:k+4:k+4], bs[k:k+4:k+4]
				if r.byA {
					for j := range 4 { // from the last pair of the eight bytes
						a, b := rg.unget(int64(int8(y>>(48-16*j))), int64(int8(y>>(56-16*j))))
						a4[j], b4[j] = int32(a), int32(b)
					}
				} else {
					for j := range 4 {
						b4[j], a4[j] = int32(b), int32(b-int64(int8(y>>(56-16*j))))
						b -= int64(int8(y >> (48 - 16*j)))
					}
				}
				k, pos = k+4, pos-8
			}
			if k == len(bs) || pos == 0 {
				break
			}
			var db, da int64
			// Both varints a byte when the byte before them ends a
			// varint (or the block starts there).
			if pos >= 2 && d[pos-2] < 0x80 && (pos == 2 || d[pos-3] < 0x80) {
				c, e := d[pos-2], d[pos-1]
				db, da, pos = int64(c>>1)^-int64(c&1), int64(e>>1)^-int64(e&1), pos-2
			} else {
				da, pos = varintBefore(d, pos)
				db, pos = varintBefore(d, pos)
			}
			if r.byA {
				a, b := rg.unget(db, da)
				as[k], bs[k] = int32(a), int32(b)
			} else {
				bs[k], as[k] = int32(b), int32(b-da)
				b -= db
			}
		}
		r.pos, r.b, r.r = pos, b, rg
	}
	r.left -= k
	return k
}

// readCompact is Read's loop over the current block of a compact list,
// back from r.pos to the block's start or as many pairs as as and bs hold.
func (r *PairsBackward) readCompact(as, bs []int32) int {
	d, pos, a, b := r.d, r.pos, r.a, r.b
	k := 0
	for k < len(bs) && pos > 0 {
		// Eight pairs of a byte each at once, when the byte before them
		// ends a varint (or the block starts there).
		if k+8 <= len(bs) && pos >= 8 && (pos == 8 || d[pos-9] < 0x80) {
			if x := binary.LittleEndian.Uint64(d[pos-8:]); x&0x8181818181818181 == 0 {
				db, da := compactEight(x)
				a8, b8 := as[k:k+8:k+8], bs[k:k+8:k+8]
				for j := range 8 { // from the last pair of the eight bytes
					a8[j], b8[j] = int32(a), int32(b)
					b -= int64(int8(db >> (56 - 8*j)))
					a -= int64(int8(da >> (56 - 8*j)))
				}
				k, pos = k+8, pos-8
				continue
			}
		}
		var u uint64
		// A varint of a byte when the byte before it ends one (or the
		// block starts there); its parity is its first byte's.
		if c := d[pos-1]; c < 0x80 && (pos == 1 || d[pos-2] < 0x80) {
			u, pos = uint64(c), pos-1
		} else {
			var x int64
			x, pos = varintBefore(d, pos)
			u = uint64(zigzag(x))
		}
		as[k], bs[k] = int32(a), int32(b)
		var db, da int64
		if u&1 == 0 {
			db, da = compactOne(u)
		} else {
			var x int64
			x, pos = varintBefore(d, pos)
			db, da = unzigzag(uint64(zigzag(x))>>1), unzigzag(u>>1)
		}
		b, a = b-db, a-da
		k++
	}
	r.pos, r.a, r.b = pos, a, b
	return k
}

// VarintBefore decodes the varint (binary.AppendVarint's) that ends at
// d[end−1] and returns it with its first position: varints written one
// after another read back from the last.
func VarintBefore(d []byte, end int) (int64, int) { return varintBefore(d, end) }

// varintBefore decodes the varint that ends at d[end−1] and returns it
// with its first position (0 for a list cut short, which Append never
// makes).
func varintBefore(d []byte, end int) (int64, int) {
	if end <= 0 {
		return 0, 0
	}
	// The last byte holds the highest 7 bits: read backwards, each byte
	// before it with its high bit set shifts in below (one pass, where a
	// scan back to the start then binary.Varint's loop took two and a
	// call: 84 instructions a value).
	start := end - 1
	ux := uint64(d[start])
	for start > 0 && d[start-1] >= 0x80 {
		start--
		ux = ux<<7 | uint64(d[start]&0x7f)
	}
	if end-start >= binary.MaxVarintLen64 {
		x, _ := binary.Varint(d[start:end]) // overflows: as it was
		return x, start
	}
	return int64(ux>>1) ^ -int64(ux&1), start
}
