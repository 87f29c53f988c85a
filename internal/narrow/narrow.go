// Package narrow keeps columns of int64 values in narrower integers. Most
// values of such a column are small (durations, gaps, small ids, deltas),
// but any int64 may occur: the rare value that does not fit is kept aside
// exactly, so a reader always gets back what was stored.
package narrow

import (
	"slices"
	"unsafe"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// Int is an integer type a Column can hold its values in.
type Int interface {
	~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32
}

// Column is a column of int64 values held as S. A value S cannot hold,
// or that equals S's escape (its largest value if unsigned, its smallest if
// signed, so −1 and 0 stay narrow), is stored as the escape and kept in a
// side map. The zero Column is empty and ready to use.
type Column[S Int] struct {
	v    []S
	wide map[int]int64
	pk   *packed.ParkedBytes // v while parked (Park), nil in memory
}

// escape returns the value of S that marks an entry kept in the side map.
func escape[S Int]() S {
	var z S
	if ^z > 0 {
		return ^z // unsigned: the largest value
	}
	return S(1) << (8*unsafe.Sizeof(z) - 1) // signed: the smallest value
}

// hold returns x as S, or the escape and false when S cannot hold it.
func hold[S Int](x int64) (S, bool) {
	if s := S(x); int64(s) == x && s != escape[S]() {
		return s, true
	}
	return escape[S](), false
}

// Len returns the number of values.
func (c *Column[S]) Len() int {
	if c.pk != nil {
		var z S
		return c.pk.Len() / int(unsafe.Sizeof(z))
	}
	return len(c.v)
}

// Reserve makes room for n more values, which then append without copying.
func (c *Column[S]) Reserve(n int) { c.v = slices.Grow(c.v, n) }

// Append adds x at the end.
func (c *Column[S]) Append(x int64) {
	s, ok := hold[S](x)
	if !ok {
		c.setWide(len(c.v), x)
	}
	c.v = append(c.v, s)
}

// Set replaces value k by x.
func (c *Column[S]) Set(k int, x int64) {
	s, ok := hold[S](x)
	switch {
	case !ok:
		c.setWide(k, x)
	case c.v[k] == escape[S]():
		delete(c.wide, k)
	}
	c.v[k] = s
}

func (c *Column[S]) setWide(k int, x int64) {
	if c.wide == nil {
		c.wide = map[int]int64{}
	}
	c.wide[k] = x
}

// At returns value k.
func (c *Column[S]) At(k int) int64 {
	if s := c.v[k]; s != escape[S]() {
		return int64(s)
	}
	return c.wide[k]
}

// Reset empties the column and keeps its room, for a column made again
// and again (the critical path's, one process after the other).
func (c *Column[S]) Reset() {
	c.v = c.v[:0]
	clear(c.wide)
}

// Wide returns the number of values kept aside.
func (c *Column[S]) Wide() int { return len(c.wide) }

// Fit drops the reserved room beyond the values when it is more than an
// eighth of them (one copy): a reservation may have been an upper bound.
func (c *Column[S]) Fit() {
	if cap(c.v)-len(c.v) > len(c.v)/8 {
		c.v = slices.Clone(c.v)
	}
}

// seriesBlock is the number of values of a Series sharing one base: a
// block of calls spans more than 4.29 s (and escapes) only where a process
// makes fewer than 15 of them a second, and the bases cost 1/8 B a value.
const seriesBlock = 64

// Series is a column of int64 values that grow slowly from one to the
// next, such as the times of a process's events in order: each is held as
// a uint32 offset from the first value of its block of seriesBlock, 4 bytes
// and 1/8 B a value. An offset out of range (a value before the block's
// first, or 4.29 × 10⁹ after it) is kept aside as in Column. The zero
// Series is empty and ready to use.
type Series struct {
	base []int64
	off  Column[uint32]
}

// Len returns the number of values.
func (s *Series) Len() int { return s.off.Len() }

// Reserve makes room for n more values, which then append without copying.
func (s *Series) Reserve(n int) {
	s.off.Reserve(n)
	s.base = slices.Grow(s.base, n/seriesBlock+1)
}

// Append adds x at the end.
func (s *Series) Append(x int64) {
	k := s.off.Len()
	if k%seriesBlock == 0 {
		s.base = append(s.base, x)
	}
	// Wrapping arithmetic: base + (x − base) is x for any two int64s.
	s.off.Append(x - s.base[k/seriesBlock])
}

// At returns value k.
func (s *Series) At(k int) int64 { return s.base[k/seriesBlock] + s.off.At(k) }

// Wide returns the number of values kept aside.
func (s *Series) Wide() int { return s.off.Wide() }

// Fit drops reserved room as Column.Fit does.
func (s *Series) Fit() {
	s.off.Fit()
	if cap(s.base)-len(s.base) > len(s.base)/8 {
		s.base = slices.Clone(s.base)
	}
}
