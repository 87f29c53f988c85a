package graph

import (
	"math/rand/v2"
	"testing"
)

// The column gives back every entry set, near or far, slot or NoEntry,
// whatever was set before, and a recycled column starts empty.
func TestArgColumn(t *testing.T) {
	const n = 5000
	rng := rand.New(rand.NewPCG(1, 2))
	var c *ArgColumn
	for round := range 3 {
		c = newArgColumn(n, c)
		want := make([]Entry, n)
		for i := range want {
			want[i] = NoEntry
			if got := c.At(int32(i)); got != NoEntry {
				t.Fatalf("round %d: node %d starts at %d, want NoEntry", round, i, got)
			}
		}
		for range 4 * n {
			i := int32(rng.IntN(n))
			var e Entry
			switch rng.IntN(6) {
			case 0:
				e = NoEntry
			case 1:
				e = Entry(^rng.Int32N(1 << 20)) // a remote slot
			case 2:
				e = Entry(rng.Int32N(n)) // anywhere, often far
			case 3:
				e = Entry(i) // no node is its own input, but it is held exactly
			default:
				e = Entry(i - 1 - rng.Int32N(127)) // near
			}
			c.Set(i, e)
			want[i] = e
		}
		for i, e := range want {
			if got := c.At(int32(i)); got != e {
				t.Fatalf("round %d: node %d holds %d, want %d", round, i, got, e)
			}
		}
		if got := c.Entries(); len(got) != n || got[n-1] != want[n-1] {
			t.Fatalf("round %d: Entries gives %d values", round, len(got))
		}
	}
	// The byte's bounds: ±127 near, ±128 and 0 far.
	c = newArgColumn(400, nil)
	for _, d := range []int32{127, -127, 128, -128, 0, 1, -1} {
		c.Set(200, Entry(200-d))
		if got := c.At(200); got != Entry(200-d) {
			t.Errorf("distance %d: got %d, want %d", d, got, 200-d)
		}
	}
}
