package critpath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
)

// TestDuplicates checks the run-based de-duplication of packed dependence
// edges against the sort on random edge lists: successors' edges in one
// run each, in two runs (the fallback), and runs longer than the pairwise
// check.
func TestDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	known := 0 // trials the simulation's check finds distinct
	for trial := 0; trial < 300; trial++ {
		tasks := 2 + rng.IntN(40)
		var deps [][2]sim.Task
		for succ := 0; succ < tasks; succ++ {
			n := rng.IntN(5)
			if trial%10 == 0 && succ == 1 {
				n = 70
			}
			for range n {
				deps = append(deps, [2]sim.Task{sim.Task(rng.IntN(tasks)), sim.Task(succ)})
			}
		}
		if trial%3 == 0 && len(deps) > 2 {
			// A late edge for an earlier successor: two runs.
			deps = append(deps, deps[rng.IntN(len(deps))])
		}
		var want, got [][2]sim.Task
		var p packed.Pairs
		for k, dup := range sortedDuplicates(deps) {
			p.Append(deps[k][0], deps[k][1])
			if !dup {
				want = append(want, deps[k])
			}
		}
		// The check the simulation makes as it records the pairs: exact
		// unless lost, and distinct only when no pair repeats.
		var c sim.PairCheck
		repeats := false
		for _, d := range deps {
			repeats = c.Add(d[0], d[1]) || repeats
		}
		if !c.Lost() && repeats != (len(want) < len(deps)) {
			t.Fatalf("trial %d: PairCheck finds repeats %v, the sort %d of %d pairs kept", trial, repeats, len(want), len(deps))
		}
		distinct := !repeats && !c.Lost()
		if distinct {
			known++
		}
		// Two maps at once, as the task graph makes its list and the
		// fragment DAG's: the second keeps the edges of even successors.
		out := uniqueDeps(p, tasks, distinct, func(a, b sim.Task) (int32, int32, bool) { return a, b, true },
			func(a, b sim.Task) (int32, int32, bool) { return a, b, b%2 == 0 })
		out[0].Each(func(a, b sim.Task) { got = append(got, [2]sim.Task{a, b}) })
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: uniqueDeps %v, sort %v for %v", trial, got, want, deps)
		}
		var even, wantEven [][2]sim.Task
		out[1].Each(func(a, b sim.Task) { even = append(even, [2]sim.Task{a, b}) })
		for _, e := range want {
			if e[1]%2 == 0 {
				wantEven = append(wantEven, e)
			}
		}
		if !slices.Equal(even, wantEven) {
			t.Fatalf("trial %d: second map %v, want %v", trial, even, wantEven)
		}
		// keepsAll: whether the task graph may read the pairs in place.
		all := func(a, b sim.Task) (int32, int32, bool) { return a, b, true }
		evens := func(a, b sim.Task) (int32, int32, bool) { return a, b, b%2 == 0 }
		if k := keepsAll(p, tasks, distinct, all); k != (len(want) == len(deps)) {
			t.Fatalf("trial %d: keepsAll %v with %d of %d pairs kept", trial, k, len(want), len(deps))
		}
		if k := keepsAll(p, tasks, distinct, evens); k != (len(wantEven) == len(deps)) {
			t.Fatalf("trial %d: keepsAll of the even successors %v with %d of %d pairs kept", trial, k, len(wantEven), len(deps))
		}
	}
	if known < 10 {
		t.Errorf("the pair check found only %d of 300 lists distinct", known)
	}
}

// TestKeepLongest: the longest nodes kept as a path streams by are those
// a stable sort of the whole path lists first, ties (equal durations,
// starts, ranks and threads) included.
func TestKeepLongest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n, k := rng.IntN(60), 1+rng.IntN(25)
		var all, top []report.PathNode
		for i := range n {
			pn := report.PathNode{Rank: rng.IntN(2), Thread: rng.IntN(2), StartNS: int64(rng.IntN(4)), DurNS: int64(1 + rng.IntN(4)), Construct: fmt.Sprint(i)}
			all = append(all, pn)
			top = keepLongest(top, pn, k)
		}
		if want := topNodes(slices.Clone(all), k); !slices.Equal(top, want) {
			t.Fatalf("trial %d (k=%d): kept %v, want %v", trial, k, top, want)
		}
	}
}

// TestKth: the distributed order statistic equals the sorted values' on
// values spread over 1–4 ranks, with repeats and extremes of both signs,
// for every k (a sample of a thousand values and more), each search
// reordering the ranks' values (the next search reads them so); and so
// does the median.
func TestKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 60 {
		ranks := 1 + rng.IntN(4)
		parts := make([][]int64, ranks)
		var all []int64
		size := rng.IntN(40)
		if trial%5 == 0 {
			size = 1000 + rng.IntN(2000) // past the selection's sort of 16
		}
		for range size {
			var v int64
			switch rng.IntN(4) {
			case 0:
				v = rng.Int64() - 1<<62 - 1<<61 // wide, both signs
			case 1:
				v = int64(rng.IntN(3)) // repeats
			default:
				v = int64(rng.IntN(1000))
			}
			r := rng.IntN(ranks)
			parts[r] = append(parts[r], v)
			all = append(all, v)
		}
		if len(all) == 0 {
			continue
		}
		slices.Sort(all)
		err := inproc.Run(ranks, func(c comm.Comm) error {
			vals := parts[c.Rank()]
			for k := range int64(len(all)) {
				if len(all) > 100 && k%97 != 0 && k != int64(len(all))-1 {
					continue
				}
				got, err := kth(c, vals, k, all[0], all[len(all)-1])
				if err != nil {
					return err
				}
				if got != all[k] {
					t.Errorf("trial %d rank %d: k=%d gives %d, want %d (of %v)", trial, c.Rank(), k, got, all[k], all)
				}
			}
			// The median, by selection on one rank.
			n := int64(len(all))
			lo, hi, err := median(c, vals, n, all[0], all[len(all)-1])
			if err != nil {
				return err
			}
			if lo != all[(n-1)/2] || hi != all[n/2] {
				t.Errorf("trial %d: median %d, %d, want %d, %d", trial, lo, hi, all[(n-1)/2], all[n/2])
			}
			// The same values 32 bits each, as the roots' values are kept
			// when they all fit.
			if all[0] >= 0 && all[len(all)-1] <= math.MaxUint32 {
				v32 := make([]uint32, len(vals))
				for i, v := range vals {
					v32[i] = uint32(v)
				}
				lo, hi, err := median(c, v32, n, all[0], all[len(all)-1])
				if err != nil {
					return err
				}
				if lo != all[(n-1)/2] || hi != all[n/2] {
					t.Errorf("trial %d: median of uint32s %d, %d, want %d, %d", trial, lo, hi, all[(n-1)/2], all[n/2])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSelectKth: the selection gives the sorted values' k-th and leaves
// none above it before k and none below it after, on shapes that defeat
// a naive pivot (sorted, reversed, one value, two values, organ pipe).
func TestSelectKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	shapes := map[string]func(i, n int) int64{
		"random":   func(i, n int) int64 { return rng.Int64N(1000) },
		"sorted":   func(i, n int) int64 { return int64(i) },
		"reversed": func(i, n int) int64 { return int64(n - i) },
		"constant": func(i, n int) int64 { return 7 },
		"two":      func(i, n int) int64 { return int64(i % 2) },
		"pipe":     func(i, n int) int64 { return int64(min(i, n-i)) },
	}
	for name, f := range shapes {
		for _, n := range []int{1, 2, 17, 100, 5000} {
			v := make([]int64, n)
			for i := range v {
				v[i] = f(i, n)
			}
			want := slices.Sorted(slices.Values(v))
			for _, k := range []int{0, n / 3, (n - 1) / 2, n - 1} {
				w := slices.Clone(v)
				got := selectKth(w, k)
				if got != want[k] || slices.Max(w[:k+1]) != got || slices.Min(w[k:]) != got {
					t.Fatalf("%s n=%d k=%d: %d, want %d", name, n, k, got, want[k])
				}
			}
		}
	}
}

// TestRootVals: the roots' values come back as they were added, 32 bits
// each until one does not fit (negative, or past 2^32 − 1), 64 after.
func TestRootVals(t *testing.T) {
	for _, odd := range []int64{-1, math.MaxUint32 + 1, math.MinInt64} {
		var r rootVals
		r.reserve(3)
		want := []int64{0, 7, math.MaxUint32, odd, 5}
		for k, v := range want {
			r.add(v)
			if r.wide != (k >= 3) {
				t.Fatalf("after %d values (the 4th %d): wide %v", k+1, odd, r.wide)
			}
		}
		var got []int64
		r.each(func(v int64) { got = append(got, v) })
		if !slices.Equal(got, want) || r.len() != len(want) {
			t.Errorf("with %d: %v (len %d), want %v", odd, got, r.len(), want)
		}
	}
}
