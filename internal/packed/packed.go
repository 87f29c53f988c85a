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
func (c *Ints) Grow(n, b int) {
	if need := len(c.data) + n*b; need > cap(c.data) {
		d := make([]byte, len(c.data), need)
		copy(d, c.data)
		c.data = d
	}
}

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

// Trim drops the spare capacity when it is worth a copy (more than an
// eighth of the column): the column outlives the code that filled it.
func (c *Ints) Trim() {
	if cap(c.data)-len(c.data) > len(c.data)/8 {
		d := make([]byte, len(c.data))
		copy(d, c.data)
		c.data = d
	}
}

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
func (p *Pairs) Grow(n, b int) {
	if need := len(p.data) + n*b; need > cap(p.data) {
		d := make([]byte, len(p.data), need)
		copy(d, p.data)
		p.data = d
	}
}

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
func (p *Pairs) Trim() {
	if cap(p.data)-len(p.data) > len(p.data)/8 {
		d := make([]byte, len(p.data))
		copy(d, p.data)
		p.data = d
	}
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
