package packed

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	extremes := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 62}
	for _, c := range []Ints{{}, NewDeltas()} {
		var want []int64
		v := int64(1e9)
		for i := 0; i < 10000; i++ {
			v += rng.Int64N(10000) - 2000
			x := v
			if i%97 == 5 {
				x = extremes[rng.IntN(len(extremes))]
			}
			want = append(want, x)
			c.Append(x)
		}
		c.Trim()
		if c.Len() != len(want) {
			t.Fatalf("delta %v: Len %d, want %d", c.delta, c.Len(), len(want))
		}
		r := c.Reader()
		for i, w := range want {
			if g := r.Next(); g != w {
				t.Fatalf("delta %v: value %d = %d, want %d", c.delta, i, g, w)
			}
		}
		if g := r.Next(); g != 0 {
			t.Errorf("delta %v: past the end got %d, want 0", c.delta, g)
		}
		r = c.Reader()
		r.Skip(777)
		if g := r.Next(); g != want[777] {
			t.Errorf("delta %v: after Skip(777) got %d, want %d", c.delta, g, want[777])
		}
	}
}

// Start times a few microseconds apart cost about three bytes, not eight.
func TestDeltasAreSmall(t *testing.T) {
	c := NewDeltas()
	for i := int64(0); i < 4096; i++ {
		c.Append(1_700_000_000_000_000_000 + i*50_000)
	}
	c.Trim()
	if b := float64(c.Bytes()) / 4096; b > 3.1 {
		t.Errorf("%.2f bytes a value, want about 3", b)
	}
}
