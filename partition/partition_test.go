package partition

import (
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"
)

func checkPlan(t *testing.T, p *Plan, n, k int) {
	t.Helper()
	if p.Ranks() != k || p.Starts[0] != 0 || p.Starts[k] != n {
		t.Fatalf("plan %v for n=%d k=%d", p.Starts, n, k)
	}
	for r := 0; r < k; r++ {
		lo, hi := p.Range(r)
		if busy := r < min(n, k); busy && hi <= lo || !busy && hi != lo {
			t.Fatalf("rank %d of %d (%d processes) owns [%d, %d): %v", r, k, n, lo, hi, p.Starts)
		}
		for i := lo; i < hi; i++ {
			if p.Owner(i) != r {
				t.Fatalf("Owner(%d)=%d, want %d", i, p.Owner(i), r)
			}
		}
	}
}

func TestOneToOne(t *testing.T) {
	p, err := Assign([]int64{5, 1, 9, 2}, 4)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p, 4, 4)
}

// More ranks than processes: the first ranks own one process each, in
// order, and the others none; the imbalance counts the busy ranks only.
func TestIdleRanks(t *testing.T) {
	for _, c := range []struct {
		w     []int64
		ranks int
		want  []int
		imb   float64
	}{
		{[]int64{1, 2}, 3, []int{0, 1, 2, 2}, 2 * 2.0 / 3},
		{[]int64{7}, 4, []int{0, 1, 1, 1, 1}, 1},
		{[]int64{5, 5, 5}, 6, []int{0, 1, 2, 3, 3, 3, 3}, 1},
	} {
		p, err := Assign(c.w, c.ranks)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, p, len(c.w), c.ranks)
		if !slices.Equal(p.Starts, c.want) {
			t.Errorf("%v over %d ranks: starts %v, want %v", c.w, c.ranks, p.Starts, c.want)
		}
		if p.Busy() != len(c.w) {
			t.Errorf("%v over %d ranks: %d busy", c.w, c.ranks, p.Busy())
		}
		for r := len(c.w); r < c.ranks; r++ {
			if p.Load(r) != 0 {
				t.Errorf("idle rank %d has load %d", r, p.Load(r))
			}
		}
		if got := p.Imbalance(); math.Abs(got-c.imb) > 1e-12 {
			t.Errorf("%v over %d ranks: imbalance %g, want %g", c.w, c.ranks, got, c.imb)
		}
	}
	if _, err := Assign(nil, 2); err == nil {
		t.Error("a trace of no processes accepted")
	}
}

func TestBalanced(t *testing.T) {
	// Equal weights split evenly.
	w := make([]int64, 1024)
	for i := range w {
		w[i] = 100
	}
	p, _ := Assign(w, 4)
	checkPlan(t, p, 1024, 4)
	if p.Imbalance() != 1 {
		t.Errorf("equal weights: imbalance %g", p.Imbalance())
	}
	// One heavy process gets a rank of its own.
	w = []int64{1, 1, 1000, 1, 1, 1}
	p, _ = Assign(w, 3)
	checkPlan(t, p, 6, 3)
	if p.Owner(1) == p.Owner(2) || p.Owner(3) == p.Owner(2) {
		t.Errorf("heavy process shares a rank: %v", p.Starts)
	}
}

// The bottleneck equals the best contiguous partition found by brute force.
func TestOptimalBottleneck(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for it := 0; it < 300; it++ {
		n := 1 + rng.Intn(9)
		k := 1 + rng.Intn(n)
		w := make([]int64, n)
		for i := range w {
			w[i] = 1 + rng.Int63n(50)
		}
		p, err := Assign(w, k)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, p, n, k)
		var got int64
		for r := 0; r < k; r++ {
			got = max(got, p.Load(r))
		}
		if best := bruteForce(w, k); got != best {
			t.Fatalf("w=%v k=%d: bottleneck %d, best %d (%v)", w, k, got, best, p.Starts)
		}
	}
}

func bruteForce(w []int64, k int) int64 {
	if k == 1 {
		var s int64
		for _, v := range w {
			s += v
		}
		return s
	}
	best := int64(1 << 62)
	var acc int64
	for i := 0; i < len(w)-k+1; i++ {
		acc += w[i]
		best = min(best, max(acc, bruteForce(w[i+1:], k-1)))
	}
	return best
}

// TestOwnerSearch checks Owner against sort.SearchInts, as it was, on
// plans of every shape (ranks of one process and of many) and on
// processes outside the plan.
func TestOwnerSearch(t *testing.T) {
	for n := 1; n <= 40; n++ {
		w := make([]int64, n)
		for i := range w {
			w[i] = int64(1 + (i*7919)%13)
		}
		for ranks := 1; ranks <= n+3; ranks++ {
			p, err := Assign(w, ranks)
			if err != nil {
				t.Fatal(err)
			}
			for proc := -2; proc < n+3; proc++ {
				if got, want := p.Owner(proc), sort.SearchInts(p.Starts[1:], proc+1); got != want {
					t.Fatalf("%d processes, %d ranks: Owner(%d) = %d, want %d", n, ranks, proc, got, want)
				}
			}
		}
	}
}
