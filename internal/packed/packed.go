// Package packed holds int64 columns that are written once and read in
// order as varint streams: a column of small values, or of values close to
// the one before, costs one to three bytes a value instead of eight. The
// analysis keeps such columns from the simulation to a later phase that
// walks them in order (task run times, starts, threads and constructs).
package packed

import "encoding/binary"

// Ints is an append-only column of int64 values. The zero value is an
// empty column of plain values; NewDeltas makes one that stores each value
// as its difference from the one before (for nondecreasing-ish series such
// as start times).
type Ints struct {
	data  []byte
	n     int
	last  int64
	delta bool
}

// NewDeltas returns an empty column that stores differences.
func NewDeltas() Ints { return Ints{delta: true} }

// Grow makes room for about n more values of about b bytes each.
func (c *Ints) Grow(n, b int) { c.data = reserve(c.data, n*b) }

// Append adds v at the end. Differences wrap around for extreme values,
// and wrap back the same when read.
func (c *Ints) Append(v int64) {
	x := v
	if c.delta {
		x = v - c.last
		c.last = v
	}
	c.data = binary.AppendVarint(c.data, x)
	c.n++
}

// Len returns the number of values.
func (c *Ints) Len() int { return c.n }

// Bytes returns the memory the column holds.
func (c *Ints) Bytes() int { return cap(c.data) }

// Trim drops the spare capacity when it is worth a copy.
func (c *Ints) Trim() { c.data = trim(c.data) }

// Reader returns a reader at the column's first value.
func (c *Ints) Reader() Reader { return Reader{data: c.data, delta: c.delta, left: c.n} }

// Reader reads a column's values in order.
type Reader struct {
	data  []byte
	pos   int
	last  int64
	delta bool
	left  int
}

// Next returns the next value; past the end it returns 0.
func (r *Reader) Next() int64 {
	if r.left == 0 {
		return 0
	}
	var x int64
	if c := r.data[r.pos]; c < 0x80 { // varint by hand, as in Pairs.Each
		x, r.pos = int64(c>>1)^-int64(c&1), r.pos+1
	} else {
		x, r.pos = varintLong(r.data, r.pos)
	}
	r.left--
	if r.delta {
		x += r.last
		r.last = x
	}
	return x
}

// Skip moves past n values.
func (r *Reader) Skip(n int) {
	for ; n > 0; n-- {
		r.Next()
	}
}

// Pairs is an append-only list of int32 pairs (a, b), such as graph edges,
// read in order: b is stored as its difference from the previous pair's b
// and a as its difference from b. Edges of a graph made in order join
// nodes made close together, so a pair costs two to four bytes, not eight.
type Pairs struct {
	data  []byte
	n     int
	lastB int64
}

// Grow makes room for about n more pairs of about b bytes each.
func (p *Pairs) Grow(n, b int) { p.data = reserve(p.data, n*b) }

// Append adds the pair (a, b) at the end.
func (p *Pairs) Append(a, b int32) {
	p.data = binary.AppendVarint(p.data, int64(b)-p.lastB)
	p.data = binary.AppendVarint(p.data, int64(b)-int64(a))
	p.lastB = int64(b)
	p.n++
}

// Len returns the number of pairs.
func (p *Pairs) Len() int { return p.n }

// Bytes returns the memory the list holds.
func (p *Pairs) Bytes() int { return cap(p.data) }

// Trim drops the spare capacity when it is worth a copy.
func (p *Pairs) Trim() { p.data = trim(p.data) }

// reserve returns d with room for extra more bytes, copied once if need be
// (reserved from an estimate, a stream is not copied as it grows).
func reserve(d []byte, extra int) []byte {
	if need := len(d) + extra; need > cap(d) {
		nd := make([]byte, len(d), need)
		copy(nd, d)
		return nd
	}
	return d
}

// trim returns d without its spare capacity when that is more than an
// eighth of it: the lists outlive the code that filled them.
func trim(d []byte) []byte {
	if cap(d)-len(d) > len(d)/8 {
		nd := make([]byte, len(d))
		copy(nd, d)
		return nd
	}
	return d
}

// Each calls fn for every pair in order.
func (p *Pairs) Each(fn func(a, b int32)) {
	var b, db, da int64
	d := p.data
	for pos := 0; pos < len(d); {
		// varint, by hand: it does not inline, and most values are a byte.
		if c := d[pos]; c < 0x80 {
			db, pos = int64(c>>1)^-int64(c&1), pos+1
		} else {
			db, pos = varintLong(d, pos)
		}
		if pos >= len(d) {
			break // a corrupt list; never made by Append
		}
		if c := d[pos]; c < 0x80 {
			da, pos = int64(c>>1)^-int64(c&1), pos+1
		} else {
			da, pos = varintLong(d, pos)
		}
		b += db
		fn(int32(b-da), int32(b))
	}
}

// varintLong decodes a varint of more than one byte at d[pos:] and
// returns it with the position after it; out of line, so that the
// one-byte case stays small where it is written by hand.
//
//go:noinline
func varintLong(d []byte, pos int) (int64, int) {
	x, k := binary.Varint(d[pos:])
	return x, pos + k
}
