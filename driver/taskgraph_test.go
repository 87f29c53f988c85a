package driver

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/sim"
)

// TestDuplicates checks the run-based de-duplication of dependence edges
// against the sort on random edge lists: successors' edges in one run each,
// in two runs (the fallback), and runs longer than the pairwise check.
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
		got, want := duplicates(deps, tasks), sortedDuplicates(deps)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: duplicates %v, sort %v for %v", trial, got, want, deps)
		}
	}
}
