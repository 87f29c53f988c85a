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
	x, k := binary.Varint(r.data[r.pos:])
	r.pos += k
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
