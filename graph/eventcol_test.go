package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// An eventCol gives back what a plain slice holds: one thread's indices
// (increasing, a few events apart) in 2 bytes from their block's first,
// across the int16 boundaries (a value 32 767 above or below it fits,
// one more does not), with a rare far value kept aside, and the indices
// of threads far apart interleaved, which move it to 4 bytes; collective
// nodes' instance numbers (small, after the event nodes) and values at
// the ends of int64 as well.
func TestEventCol(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	oneThread := func(n int) []int64 {
		var v []int64
		x := int64(0)
		for range n {
			x += rng.Int64N(40)
			if rng.IntN(500) == 0 {
				v = append(v, x+1<<20) // a far one, kept aside
				continue
			}
			v = append(v, x)
		}
		return v
	}
	interleaved := func(n int) []int64 {
		var v []int64
		for k := range int64(n) {
			v = append(v, k*3+int64(k%4)*1_000_000) // four threads far apart
		}
		return v
	}
	bounds := func(n int) []int64 {
		var v []int64
		for len(v) < n {
			b := rng.Int64N(1 << 40)
			for _, d := range []int64{0, 32767, -32767, -32768, 32768, -32769, 1, -1} {
				v = append(v, b+d)
			}
			for len(v)%eventBlock != 0 {
				v = append(v, b)
			}
		}
		v = append(v, math.MaxInt64, math.MinInt64, 0, math.MaxUint32, -1)
		return v
	}
	cases := []struct {
		name  string
		vals  []int64
		moved bool
	}{
		{"one thread", append(oneThread(20000), 0, 1, 2, 3), false},
		{"interleaved threads", interleaved(20000), true},
		{"bounds", bounds(4000), true},
		{"few", []int64{5, 1 << 40, -7}, false},
		{"none", nil, false},
	}
	for _, tc := range cases {
		for _, reserve := range []int{0, len(tc.vals) / 2, len(tc.vals)} {
			var c eventCol
			c.Reserve(reserve)
			for _, x := range tc.vals {
				c.Append(x)
			}
			if c.Len() != len(tc.vals) {
				t.Fatalf("%s: Len %d, want %d", tc.name, c.Len(), len(tc.vals))
			}
			for k, x := range tc.vals {
				if got := c.At(k); got != x {
					t.Fatalf("%s, reserved %d: value %d is %d, want %d", tc.name, reserve, k, got, x)
				}
			}
			if moved := c.off.Width() > 0; moved != tc.moved {
				t.Errorf("%s: moved %v, want %v", tc.name, moved, tc.moved)
			}
			if c.off.Width() == 0 && c.off.Wide() > len(tc.vals)/32+64 {
				t.Errorf("%s: %d of %d values kept aside without moving", tc.name, c.off.Wide(), len(tc.vals))
			}
		}
	}
}
