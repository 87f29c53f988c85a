package graph

import (
	"math/rand/v2"
	"testing"
)

// The column gives back every entry set, near or far, slot or NoEntry,
// whatever was set before; pages with many entries from far turn wide
// and keep every value; a recycled column starts empty.
func TestArgColumn(t *testing.T) {
	const n = 5*argPage + 123
	rng := rand.New(rand.NewPCG(1, 2))
	var c *ArgColumn
	for round := range 4 {
		c = newArgColumn(n, c)
		want := make([]Entry, n)
		farSet := make([]bool, n)
		for i := range want {
			want[i] = NoEntry
			if got := c.At(int32(i)); got != NoEntry {
				t.Fatalf("round %d: node %d starts at %d, want NoEntry", round, i, got)
			}
		}
		// Round r sets far entries with odds r/64 in pages 0–2, none in
		// pages 3–4, and with even odds in the last, short page.
		for range 8 * n {
			i := int32(rng.IntN(n))
			farOdds := round
			if i >= 5*argPage {
				farOdds = 32
			} else if i >= 3*argPage {
				farOdds = 0
			}
			var e Entry
			switch {
			case rng.IntN(64) < farOdds:
				switch rng.IntN(4) {
				case 0:
					e = Entry(^rng.Int32N(1 << 20)) // a remote slot
				case 1:
					e = Entry(i) // no node is its own input, but it is held exactly
				default:
					e = Entry(rng.Int32N(n)) // anywhere, mostly far
				}
			case rng.IntN(16) == 0:
				e = NoEntry
			default:
				e = Entry(i - 1 - rng.Int32N(128)) // near
			}
			c.Set(i, e)
			want[i] = e
			if d := int64(i) - int64(e); e != NoEntry && (d == 0 || d != int64(int8(d))) {
				farSet[i] = true
			}
		}
		for i, e := range want {
			if got := c.At(int32(i)); got != e {
				t.Fatalf("round %d: node %d holds %d, want %d", round, i, got, e)
			}
		}
		// A page turns wide once more than an eighth of its nodes were
		// set far.
		wide := 0
		for p := range c.near {
			lo, hi := p*argPage, min(n, (p+1)*argPage)
			far := 0
			for _, f := range farSet[lo:hi] {
				if f {
					far++
				}
			}
			if got := c.isWide(int32(lo)); got != (far > (hi-lo)/8) {
				t.Errorf("round %d: page %d of %d nodes, %d set far: wide %v", round, p, hi-lo, far, got)
			}
			if c.isWide(int32(lo)) {
				wide++
			}
		}
		if wide == 0 || wide == len(c.near) {
			t.Errorf("round %d: %d of %d pages wide, want some and not all", round, wide, len(c.near))
		}
		if got := c.entries(); len(got) != n || got[n-1] != want[n-1] {
			t.Fatalf("round %d: Entries gives %d values", round, len(got))
		}
	}
	// The byte's bounds: −128…127 near but 0, the rest far.
	c = newArgColumn(400, nil)
	for _, d := range []int32{127, -128, 128, -129, 0, 1, -1} {
		c.Set(200, Entry(200-d))
		if got := c.At(200); got != Entry(200-d) {
			t.Errorf("distance %d: got %d, want %d", d, got, 200-d)
		}
	}
}

// entries returns the column as a slice.
func (a *ArgColumn) entries() []Entry {
	out := make([]Entry, a.Len())
	for n := range out {
		out[n] = a.At(int32(n))
	}
	return out
}

// room returns the nodes the column's pages hold without new ones.
func (a *ArgColumn) room() int {
	r := 0
	for _, p := range a.near {
		r += cap(p)
	}
	return r
}
