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
// and overwritten, whatever its size: values near each other (kept 32 bits
// from a block's base), a block given one far off (kept whole), the marks
// themselves and the extremes of int64 (whole too), and so many far blocks
// that the store turns wide.
func TestVstore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 5000
	for _, far := range []int{0, 3, 2000} {
		v := newNarrowStore(n)
		want := make([]int64, n)
		written := make([]bool, n)
		farAt := map[int]bool{}
		for len(farAt) < far {
			farAt[rng.IntN(n)] = true
		}
		for step := 0; step < 4*n; step++ {
			i := rng.IntN(n)
			x := int64(i)*1000 + rng.Int64N(5000) - 2500 // near its neighbours
			if farAt[i] {
				x = []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, 1 << 40, -(1 << 40)}[rng.IntN(5)]
			}
			v.set(int32(i), x)
			want[i], written[i] = x, true
		}
		for i := range want {
			if written[i] && v.get(int32(i)) != want[i] {
				t.Fatalf("%d far: node %d is %d, want %d", far, i, v.get(int32(i)), want[i])
			}
		}
		if (v.wide != nil) != (far == 2000) {
			t.Fatalf("%d far: wide %v (far blocks %d of %d)", far, v.wide != nil, len(v.far), len(v.base))
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
