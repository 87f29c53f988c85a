package driver

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/sim"
)

// TestDuplicates checks the run-based de-duplication of packed dependence
// edges against the sort on random edge lists: successors' edges in one
// run each, in two runs (the fallback), and runs longer than the pairwise
// check.
func TestDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
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
		// Two maps at once, as the task graph makes its list and the
		// fragment DAG's: the second keeps the edges of even successors.
		out := uniqueDeps(p, tasks, func(a, b sim.Task) (int32, int32, bool) { return a, b, true },
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
		if k := keepsAll(p, tasks, all); k != (len(want) == len(deps)) {
			t.Fatalf("trial %d: keepsAll %v with %d of %d pairs kept", trial, k, len(want), len(deps))
		}
		if k := keepsAll(p, tasks, evens); k != (len(wantEven) == len(deps)) {
			t.Fatalf("trial %d: keepsAll of the even successors %v with %d of %d pairs kept", trial, k, len(wantEven), len(deps))
		}
	}
}
