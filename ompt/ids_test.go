package ompt

import (
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/sim"
)

// TestIDCursor: the cursor gives TaskIDs.ID's ids, for indices in
// increasing order (what it is for) and in any order, on tables whose
// threads created nothing here and there, at the start and at the end.
func TestIDCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 300 {
		nth := 1 + rng.IntN(6)
		ids := TaskIDs{base: make([]int32, nth), maxSeq: make([]int64, nth)}
		var total int32
		for th := range nth {
			ids.base[th] = total
			if rng.IntN(3) != 0 {
				ids.maxSeq[th] = int64(rng.IntN(20))
			}
			total += int32(ids.maxSeq[th])
		}
		c := ids.Cursor()
		for task := sim.Task(-2); task <= sim.Task(total)+2; task++ {
			if got, want := c.ID(task), ids.ID(task); got != want {
				t.Fatalf("trial %d %v: task %d in order: id %#x, want %#x", trial, ids, task, got, want)
			}
		}
		for range 50 {
			task := sim.Task(rng.IntN(int(total)+4) - 2)
			if got, want := c.ID(task), ids.ID(task); got != want {
				t.Fatalf("trial %d %v: task %d: id %#x, want %#x", trial, ids, task, got, want)
			}
		}
	}
}
