package graph

import (
	"math/rand/v2"
	"testing"
)

// TestCountsModel: random sets, incs, decs over many nodes (the big
// table growing between uses of its cache) against int32s.
func TestCountsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 10 {
		n := 1 + rng.IntN(3000)
		k := newCounts(n)
		pend := k // a copy shares the big table
		want := make([]int32, n)
		for step := range 100000 {
			x := int32(rng.IntN(n))
			if rng.IntN(4) == 0 {
				x = int32(rng.IntN(min(n, 8)))
			}
			c := &k
			if rng.IntN(2) == 0 {
				c = &pend
			}
			switch r := rng.IntN(10); {
			case r < 4:
				c.inc(x)
				want[x]++
			case r < 8:
				z := c.dec(x)
				if want[x] > 0 {
					want[x]--
					if z != (want[x] == 0) {
						t.Fatalf("trial %d step %d: dec zero %v at %d", trial, step, z, want[x])
					}
				} else if z {
					t.Fatalf("dec at 0 reported zero")
				}
			case r < 9:
				v := int32(rng.IntN(40))
				if rng.IntN(10) == 0 {
					v = int32(rng.IntN(100000))
				}
				c.set(x, v)
				want[x] = v
			default:
				y := int32(rng.IntN(n))
				if g := c.get(y); g != want[y] {
					t.Fatalf("trial %d step %d: node %d get %d want %d", trial, step, y, g, want[y])
				}
			}
			if g := c.get(x); g != want[x] {
				t.Fatalf("trial %d step %d: node %d get %d want %d", trial, step, x, g, want[x])
			}
		}
		for i := range want {
			if g := k.get(int32(i)); g != want[i] {
				t.Fatalf("trial %d end: node %d %d want %d", trial, i, g, want[i])
			}
		}
	}
}

// TestArgColumnModel: random sets of every kind, checked at every step
// against a slice, over recycled columns of varying lengths.
func TestArgColumnModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var c *ArgColumn
	for trial := range 30 {
		n := int32(1 + rng.IntN(6*argPage))
		c = newArgColumn(n, c)
		want := make([]Entry, n)
		for i := range want {
			want[i] = NoEntry
		}
		farOdds := rng.IntN(65)
		wideOdds := rng.IntN(65)
		for step := range 60000 {
			i := int32(rng.IntN(int(n)))
			if rng.IntN(3) == 0 { // mostly in order, as a replay sets them
				i = int32(step) % n
			}
			var e Entry
			switch {
			case rng.IntN(20) == 0:
				e = NoEntry
			case rng.IntN(64) < farOdds:
				if rng.IntN(64) < wideOdds {
					if rng.IntN(2) == 0 {
						e = Entry(^rng.Int32N(1 << 20))
					} else {
						e = Entry(rng.Int32N(1 << 30))
					}
				} else {
					e = Entry(i - 129 - rng.Int32N(30000))
				}
			default:
				e = Entry(i - 1 - rng.Int32N(128))
				if rng.IntN(50) == 0 {
					e = Entry(i) // distance 0
				}
			}
			c.Set(i, e)
			want[i] = e
			if g := c.At(i); g != e {
				t.Fatalf("trial %d step %d: node %d At %d after Set %d", trial, step, i, g, e)
			}
			j := int32(rng.IntN(int(n)))
			if g := c.At(j); g != want[j] {
				t.Fatalf("trial %d step %d: node %d At %d want %d", trial, step, j, g, want[j])
			}
		}
		for i := range want {
			if g := c.At(int32(i)); g != want[i] {
				t.Fatalf("trial %d end: node %d At %d want %d", trial, i, g, want[i])
			}
		}
	}
}
