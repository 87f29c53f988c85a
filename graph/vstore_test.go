package graph

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
)

// TestVstore: a narrow store gives back every value written, in any order
// and overwritten, whatever its size: values near each other (kept 24
// bits from a block's base), apart by more than 24 bits in some blocks
// (kept whole) or in every block (the store turns to 32 bits, the blocks
// kept whole at 24 written again), a block given one far off (kept
// whole), the marks themselves and the extremes of int64 (whole too), and
// so many far blocks that the store turns wide.
func TestVstore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 5000
	for _, tc := range []struct {
		far          int   // nodes given values far off
		spread       int64 // how far apart the values of a block may lie
		spreadBlocks int   // blocks given that spread (the others 5000)
		width        string
	}{
		{0, 5000, 0, "24"},
		{3, 5000, 0, "24"},
		{0, 1 << 26, 5, "24"},
		{0, 1 << 26, 79, "32"},
		{3, 1 << 26, 79, "32"},
		{2000, 5000, 0, "wide"},
		{2000, 1 << 26, 79, "wide"},
	} {
		v := newNarrowStore(n)
		want := make([]int64, n)
		written := make([]bool, n)
		farAt := map[int]bool{}
		for len(farAt) < tc.far {
			farAt[rng.IntN(n)] = true
		}
		for step := 0; step < 4*n; step++ {
			i := rng.IntN(n)
			spread := int64(5000)
			if i>>6 < tc.spreadBlocks {
				spread = tc.spread
			}
			x := int64(i)*1000 + rng.Int64N(spread) - spread/2 // near its neighbours
			if farAt[i] {
				x = []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, 1 << 40, -(1 << 40)}[rng.IntN(5)]
			}
			v.set(int32(i), x)
			want[i], written[i] = x, true
			if step%997 == 0 {
				for j := range want {
					if written[j] && v.get(int32(j)) != want[j] {
						t.Fatalf("%+v, step %d: node %d is %d, want %d", tc, step, j, v.get(int32(j)), want[j])
					}
				}
			}
		}
		for i := range want {
			if written[i] && v.get(int32(i)) != want[i] {
				t.Fatalf("%+v: node %d is %d, want %d", tc, i, v.get(int32(i)), want[i])
			}
		}
		width := "wide"
		switch {
		case v.hi != nil:
			width = "24"
		case v.off != nil:
			width = "32"
		}
		if width != tc.width || v.len() != n {
			t.Fatalf("%+v: %s bits, %d nodes (far blocks %d of %d)", tc, width, v.len(), v.kept(), len(v.base))
		}
	}
}

// TestOnLongestPathsRefusesNegativeWeights: its marks rely on an output
// starting no earlier than its input's EF, which a negative weight breaks.
func TestOnLongestPathsRefusesNegativeWeights(t *testing.T) {
	err := inproc.Run(1, func(c comm.Comm) error {
		b := NewBuilder(0, 1)
		for range 3 {
			b.AddNode(false)
		}
		b.AddEdge(0, 1)
		b.AddEdge(1, 2)
		dag, err := b.Build(c, BuildOptions{OutsOnly: true})
		if err != nil {
			return err
		}
		w := []int64{5, -3, 2}
		weight := func(n int32) int64 { return w[n] }
		lp, err := LongestPathsOf(c, dag, weight, func(n int32) int64 { return int64(n) }, false)
		if err != nil {
			return err
		}
		if _, err := OnLongestPaths(c, dag, weight, lp); err == nil {
			return errors.New("OnLongestPaths took a negative weight")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
