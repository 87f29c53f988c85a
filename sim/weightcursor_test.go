package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/spill"
)

// The fragment pass knows its weights narrow exactly when none lies
// outside [0, 2³²), including a value a late node held before it was
// patched (it only ever errs wide); draining or unpacking them ends it.
func TestNarrowWeights(t *testing.T) {
	for _, tc := range []struct {
		name   string
		odd    int64 // node 77's weight
		late   int64 // then changed to this after its block was encoded (0: not)
		narrow bool
	}{
		{"all narrow", 1<<32 - 1, 0, true},
		{"one at 2³²", 1 << 32, 0, false},
		{"one negative", -1, 0, false},
		{"wide, patched narrow", 1 << 40, 5, false},
		{"narrow, patched wide", 5, 1 << 40, false},
	} {
		var c fragNodes
		c.reset()
		const n = 9000 // past the ring: node 77's block is encoded before the end
		for i := range n {
			w := int64(i % 100)
			if i == 77 {
				w = tc.odd
			}
			c.get(c.add(FragTask, i%4, 0, int64(i))).weight = w
		}
		if tc.late != 0 {
			c.get(77).weight = tc.late
		}
		a, w, _, narrow := c.finish()
		f := Frags{Attrs: a, weights: w, nw: n, narrowW: narrow}
		if f.NarrowWeights() != tc.narrow {
			t.Errorf("%s: NarrowWeights %v, want %v", tc.name, f.NarrowWeights(), tc.narrow)
		}
		f.UnpackWeights(nil)
		if f.NarrowWeights() {
			t.Errorf("%s: NarrowWeights after UnpackWeights", tc.name)
		}
	}
}

// A weight cursor reads every node's weight as UnpackWeights gives it,
// whatever the order of the lookups (a path's: mostly decreasing, with
// jumps), the weights in memory or in a spill file; EachWeight gives
// them all in order and keeps them.
func TestWeightCursor(t *testing.T) {
	sp, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	rng := rand.New(rand.NewPCG(8, 9))
	for _, streamed := range []bool{false, true} {
		var c fragNodes
		c.reset()
		if streamed {
			c.streamTo(sp)
		}
		const n = 20_000
		for i := range n {
			c.get(c.add(FragTask, i%4, 0, int64(i))).weight = rng.Int64N(1 << uint(rng.IntN(40)+1))
		}
		a, w, _, _ := c.finish()
		f := Frags{Attrs: a, weights: w, nw: n}
		if streamed {
			if err := f.Spill(sp); err != nil {
				t.Fatal(err)
			}
		}
		var each []int64
		f.EachWeight(func(x int64) { each = append(each, x) })
		want := (&Frags{Attrs: a, weights: f.weights, nw: n}).UnpackWeights(nil)
		if !slices.Equal(each, want) {
			t.Fatalf("streamed %v: EachWeight gives other weights than UnpackWeights", streamed)
		}
		var orders [][]int32
		var down, rnd, runs []int32
		for i := n - 1; i >= 0; i-- {
			down = append(down, int32(i))
		}
		for range n {
			rnd = append(rnd, int32(rng.IntN(n)))
		}
		for len(runs) < n {
			at := rng.IntN(n)
			for k := range rng.IntN(100) {
				runs = append(runs, int32(max(at-k*rng.IntN(20), 0)))
			}
		}
		orders = append(orders, down, rnd, runs)
		for k, ord := range orders {
			cur := f.WeightCursor()
			for _, i := range ord {
				if got := cur.At(i); got != want[i] {
					t.Fatalf("streamed %v, order %d: node %d weighs %d, want %d", streamed, k, i, got, want[i])
				}
			}
		}
		if err := f.Err(); err != nil {
			t.Fatal(err)
		}
	}
}
