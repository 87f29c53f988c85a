package critpath

import (
	"math/rand/v2"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The account of the time off the path is the same however the path's
// steps are spread over analysis ranks (each walks its own in path order,
// rank 0 joins the stretches), and adds up to the window less the path's
// weight: overlapping nodes (negative gaps, which a consistent trace does
// not give: driver's TestOffPathNeverNegative) and start skew included.
func TestOffPathAnyPartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 44))
	for trial := range 200 {
		n := 1 + rng.IntN(40)
		type step struct {
			weighted bool
			node     gapNode
		}
		steps := make([]step, n) // path order: steps[0] has depth n-1
		ready := map[int64]int64{}
		var t0, span int64 = 1000, 0
		at := t0 + rng.Int64N(50)
		for k := range steps {
			nd := gapNode{rank: rng.Int64N(3), thread: rng.Int64N(3) - 1, class: uint8(rng.IntN(6))}
			// Nodes mostly follow each other; some begin before the
			// node before ends.
			nd.start = at + rng.Int64N(30) - 10
			w := rng.Int64N(20)
			nd.end = nd.start + w
			if _, ok := ready[nd.rank]; !ok {
				ready[nd.rank] = t0 + rng.Int64N(100)
			}
			steps[k] = step{weighted: w > 0, node: nd}
			if w > 0 {
				span += w
				at = max(at, nd.end)
			}
		}
		winStart, runTime := t0, at+rng.Int64N(20)-t0
		walk := func(parts int, owner func(k int) int) []pathSummary {
			out := make([]pathSummary, parts)
			for p := range out {
				var g gapWalk
				seen := map[int64]bool{}
				g.ready = func(r int64) (int64, bool) {
					if !seen[r] {
						seen[r] = true
						out[p].Ready = append(out[p].Ready, r, ready[r])
					}
					return ready[r], true
				}
				for k, st := range steps {
					if owner(k) != p {
						continue
					}
					g.step(int64(n - 1 - k))
					if st.weighted {
						g.node(st.node)
					}
				}
				g.close()
				out[p].Gaps, out[p].Stretches = g.sums[:], g.stretches
			}
			return out
		}
		want, err := offPath(walk(1, func(int) int { return 0 }), winStart, runTime, span)
		if err != nil {
			t.Fatal(err)
		}
		if want != nil {
			classes := want.WakeUp + want.Fork + want.Tasks + want.Threads + want.Processes + want.MPI + want.StartSkew
			if want.Before+want.Between+want.After != runTime-span || classes != want.Between || want.NS != runTime-span {
				t.Fatalf("trial %d: %+v does not add up to %d", trial, *want, runTime-span)
			}
		}
		for parts := 2; parts <= 4; parts++ {
			own := make([]int, n)
			for k := range own {
				own[k] = rng.IntN(parts)
			}
			got, err := offPath(walk(parts, func(k int) int { return own[k] }), winStart, runTime, span)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (want == nil) || got != nil && *got != *want {
				t.Fatalf("trial %d, %d parts %v: %+v, one part %+v", trial, parts, own, got, want)
			}
		}
	}
}

// What a rank sends rank 0 of its stretches (and rank 0 holds while it
// merges them) is a few bytes a stretch: on a path that changes analysis
// rank every other node (a pipeline's), stretches are as many as nodes,
// and 18 int64s each took a 1 M-event pipeline's critical path at three
// ranks from 8 to 57 MiB of heap on rank 0.
func TestStretchesCompact(t *testing.T) {
	const n = 10000
	var g gapWalk
	g.ready = func(int64) (int64, bool) { return 0, false }
	at := int64(20e9) // 20 s into the run: times take 5 bytes or more
	for k := range 2 * n {
		// Two nodes of this rank, then a step on another rank.
		d := int64(3*n - k - k/2)
		g.step(d)
		g.node(gapNode{rank: int64(k/2%4) * 2, thread: int64(k % 2), class: nodeTask, start: at, end: at + 1500})
		at += 1700
	}
	g.close()
	b, err := msgpack.Marshal(pathSummary{Stretches: g.stretches})
	if err != nil {
		t.Fatal(err)
	}
	if per := len(b) / n; per > 24 {
		t.Errorf("%d bytes a stretch of two nodes", per)
	}
	// And they read back in order, the same.
	d := stretchDec{b: g.stretches}
	var s stretch
	k := 0
	for ; d.next(&s); k++ {
		if s.n != 2 || s.first.end-s.first.start != 1500 || s.second.start-s.first.start != 1700 {
			t.Fatalf("stretch %d: %+v", k, s)
		}
	}
	if d.err || k != n {
		t.Errorf("read %d of %d stretches (malformed: %v)", k, n, d.err)
	}
}
