package narrow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every int64, the narrow type's bounds and its escape among them, comes
// back exactly, whether appended or set over a narrow or a wide value, and
// only the values that do not fit are kept aside.
func TestColumnExact(t *testing.T) {
	vals := []int64{0, 1, -1, 2, math.MaxInt8, math.MinInt8, math.MaxUint8, math.MaxInt16, math.MinInt16,
		math.MaxUint16, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MaxUint32, math.MaxUint32 - 1,
		math.MaxUint32 + 1, math.MaxInt64, math.MinInt64, 1 << 40, -(1 << 40)}
	check(t, "int8", vals, func(x int64) bool { return x >= math.MinInt8+1 && x <= math.MaxInt8 }, &Column[int8]{})
	check(t, "uint16", vals, func(x int64) bool { return x >= 0 && x < math.MaxUint16 }, &Column[uint16]{})
	check(t, "int32", vals, func(x int64) bool { return x > math.MinInt32 && x <= math.MaxInt32 }, &Column[int32]{})
	check(t, "uint32", vals, func(x int64) bool { return x >= 0 && x < math.MaxUint32 }, &Column[uint32]{})
}

type column interface {
	Len() int
	Append(int64)
	Set(int, int64)
	At(int) int64
	Wide() int
}

func check(t *testing.T, name string, vals []int64, fits func(int64) bool, c column) {
	t.Helper()
	wide := 0
	for _, x := range vals {
		c.Append(x)
		if !fits(x) {
			wide++
		}
	}
	if c.Len() != len(vals) || c.Wide() != wide {
		t.Errorf("%s: %d values, %d aside; want %d, %d", name, c.Len(), c.Wide(), len(vals), wide)
	}
	for k, x := range vals {
		if got := c.At(k); got != x {
			t.Errorf("%s: value %d is %d, want %d", name, k, got, x)
		}
	}
	// Set each to every value, then back: the side map follows.
	for k := range vals {
		for _, x := range vals {
			c.Set(k, x)
			if got := c.At(k); got != x {
				t.Errorf("%s: value %d set to %d reads %d", name, k, x, got)
			}
		}
		c.Set(k, vals[k])
	}
	if c.Wide() != wide {
		t.Errorf("%s: %d values aside after setting back, want %d", name, c.Wide(), wide)
	}
}

// A Series gives back any sequence exactly: times in order, times going
// back, jumps beyond 4.29 s and the ends of int64; values in range of
// their block's first stay narrow.
func TestSeriesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var vals []int64
	x := int64(1_000_000)
	for range 1000 {
		x += r.Int64N(1000)
		vals = append(vals, x)
	}
	vals = append(vals, x+math.MaxUint32, x-1, math.MaxInt64, math.MinInt64, 0, -5)
	for range 200 {
		vals = append(vals, int64(r.Uint64()))
	}
	var s Series
	s.Reserve(100)
	for _, v := range vals {
		s.Append(v)
	}
	s.Fit()
	for k, v := range vals {
		if got := s.At(k); got != v {
			t.Fatalf("value %d is %d, want %d", k, got, v)
		}
	}
	if s.Len() != len(vals) || s.Wide() > 206 || s.Wide() == 0 {
		t.Errorf("%d values, %d aside", s.Len(), s.Wide())
	}
}

func TestFit(t *testing.T) {
	var c Column[uint16]
	c.Reserve(1000)
	for k := range 10 {
		c.Append(int64(k))
	}
	c.Fit()
	if cap(c.v) > 16 {
		t.Errorf("capacity %d after Fit of 10 values", cap(c.v))
	}
	for k := range 10 {
		if c.At(k) != int64(k) {
			t.Fatalf("value %d is %d after Fit", k, c.At(k))
		}
	}
}

var sink int64

func BenchmarkColumnAt(b *testing.B) {
	var c Column[uint32]
	for k := range 1 << 16 {
		c.Append(int64(k))
	}
	for b.Loop() {
		var s int64
		for k := range c.Len() {
			s += c.At(k)
		}
		sink = s
	}
}

func BenchmarkSliceAt(b *testing.B) {
	v := make([]int64, 1<<16)
	for k := range v {
		v[k] = int64(k)
	}
	for b.Loop() {
		var s int64
		for k := range v {
			s += v[k]
		}
		sink = s
	}
}

// TestColumnReset: a column reset holds nothing, the values kept aside
// before included, and takes new ones as a new column would.
func TestColumnReset(t *testing.T) {
	var c Column[uint32]
	for _, x := range []int64{1, -1, 1 << 40, 7} {
		c.Append(x)
	}
	c.Reset()
	if c.Len() != 0 || c.Wide() != 0 {
		t.Fatalf("after Reset: %d values, %d aside", c.Len(), c.Wide())
	}
	want := []int64{5, 1 << 33, 0}
	for _, x := range want {
		c.Append(x)
	}
	for k, x := range want {
		if got := c.At(k); got != x {
			t.Errorf("value %d: %d, want %d", k, got, x)
		}
	}
	if c.Wide() != 1 {
		t.Errorf("%d values aside, want 1", c.Wide())
	}
}
