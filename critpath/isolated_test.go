package critpath

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// TestCreationOrderBL checks the one-pass longest paths of an isolated
// task graph against their definition (BL(t) = w(t) + the heaviest BL of
// t's outputs, by recursion) on random graphs whose pairs come in creation
// order: tasks created in a random order of their ids (several creating
// threads), each naming earlier ones; some created but never run. A pair
// out of that order (a second run of a successor, an output of a task
// before its own run) makes it give up, and never gives wrong values.
func TestCreationOrderBL(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gaveUp := 0
	for trial := range 500 {
		n := rng.IntN(200)
		w := make([]int64, n)
		ran := make([]bool, n)
		for i := range n {
			ran[i] = rng.IntN(8) != 0
			w[i] = int64(rng.IntN(1000))
			if rng.IntN(50) == 0 {
				w[i] = 5_000_000_000 + int64(rng.IntN(1000)) // past 32 bits
			}
		}
		order := rng.Perm(n)
		var pairs [][2]int32
		for k, s := range order {
			if !ran[s] || k == 0 {
				continue
			}
			deg := rng.IntN(min(k, 6) + 1)
			for _, j := range rng.Perm(k)[:deg] {
				if p := order[j]; ran[p] {
					pairs = append(pairs, [2]int32{int32(p), int32(s)})
				}
			}
		}
		broken := false
		if trial%4 == 3 && len(pairs) > 2 {
			// A late edge into a successor whose run came before: its
			// second run.
			e := pairs[rng.IntN(len(pairs)-1)]
			for _, q := range pairs {
				if q[0] != e[0] && q[1] != e[1] && q[0] != e[1] {
					e[0] = q[0]
					break
				}
			}
			if !slices.Contains(pairs, e) && pairs[len(pairs)-1][1] != e[1] {
				pairs, broken = append(pairs, e), true
			}
		}
		var p packed.Pairs
		outs := make([][]int32, n)
		hasIn := make([]bool, n)
		for _, e := range pairs {
			p.Append(e[0], e[1])
			outs[e[0]] = append(outs[e[0]], e[1])
			hasIn[e[1]] = true
		}
		bl := make([]int64, n)
		known := make([]bool, n)
		var blOf func(t int32) int64
		blOf = func(t int32) int64 {
			if !known[t] {
				best, has := int64(0), false
				for _, o := range outs[t] {
					if v := blOf(o); !has || v > best {
						best, has = v, true
					}
				}
				bl[t], known[t] = w[t], true
				if has {
					bl[t] += best
				}
			}
			return bl[t]
		}
		var wantRoots []int64
		var wantLeaves int64
		for t := range int32(n) {
			if !ran[t] {
				continue
			}
			if len(outs[t]) == 0 {
				wantLeaves++
			}
			if !hasIn[t] {
				wantRoots = append(wantRoots, blOf(t))
			}
		}
		var wb narrow.FramedBuilder
		ranBits := make([]uint64, (n+63)/64)
		for i := range n {
			if ran[i] {
				wb.Append(w[i])
				setBit(ranBits, int32(i))
			} else {
				wb.Append(-1) // as Proc's run times hold a task that never ran
			}
		}
		w32 := wb.Finish()
		val := make([]int64, n)
		roots, leaves, ok := creationOrderBL(&p, n, &w32, ranBits, val)
		switch {
		case !ok && broken:
			gaveUp++
		case !ok:
			t.Fatalf("trial %d: gave up on pairs in creation order %v", trial, pairs)
		case broken:
			t.Fatalf("trial %d: took pairs with a successor in two runs %v", trial, pairs)
		case !slices.Equal(val[:roots], wantRoots) || leaves != wantLeaves:
			t.Fatalf("trial %d: roots %v, %d leaves; want %v, %d", trial, val[:roots], leaves, wantRoots, wantLeaves)
		}
	}
	if gaveUp < 50 {
		t.Errorf("only %d graphs out of creation order", gaveUp)
	}
	// An output of a task before its own run, and a task outside the
	// slots: given up.
	for _, pairs := range [][][2]int32{{{1, 2}, {0, 1}}, {{0, 5}}, {{-1, 1}}} {
		var p packed.Pairs
		for _, e := range pairs {
			p.Append(e[0], e[1])
		}
		var wb narrow.FramedBuilder
		for range 3 {
			wb.Append(1)
		}
		w32 := wb.Finish()
		val := make([]int64, 3)
		if _, _, ok := creationOrderBL(&p, 3, &w32, []uint64{7}, val); ok {
			t.Errorf("pairs %v taken", pairs)
		}
	}
}
