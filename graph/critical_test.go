package graph

import (
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// refLongest is the sequential reference: EF and BL in creation order (a
// topological order), chains included.
func refLongest(g *randGraph) (ef, bl []int64, span int64) {
	n := len(g.proc)
	ef = make([]int64, n)
	bl = make([]int64, n)
	next := make([]int, n)
	for i := range next {
		next[i] = -1
	}
	for i, p := range g.inPrev {
		if p >= 0 {
			next[p] = i
		}
	}
	for i := 0; i < n; i++ {
		var m int64
		if p := g.inPrev[i]; p >= 0 {
			m = ef[p]
		}
		for _, q := range g.preds[i] {
			m = max(m, ef[q])
		}
		ef[i] = m + g.w[i]
		span = max(span, ef[i])
	}
	for i := n - 1; i >= 0; i-- {
		var m int64
		if s := next[i]; s >= 0 {
			m = bl[s]
		}
		for _, s := range g.succs[i] {
			m = max(m, bl[s])
		}
		bl[i] = m + g.w[i]
	}
	return ef, bl, span
}

// The distributed longest paths equal the reference on random DAGs for any
// partition; zero-slack nodes are exactly those on some critical path; the
// walked path is a path of the graph whose weights sum to the span, the
// same on a DAG built OutsOnly (the forward replay pushes, the backward
// runs in reverse) as on one built whole.
func TestLongestPathsAndWalk(t *testing.T) {
	var wholePath []int
	for it := 0; it < 80; it++ {
		// Odd iterations: the previous graph and partition, OutsOnly.
		outsOnly := it%2 == 1
		rng := rand.New(rand.NewSource(int64(11 + it/2)))
		procs := 1 + rng.Intn(6)
		g := newRandGraph(rng, procs, 20+rng.Intn(150), 0.3, 3)
		wantEF, wantBL, span := refLongest(g)
		// On some critical path: EF + BL − w == span.
		onCP := make([]bool, len(g.proc))
		for i := range onCP {
			onCP[i] = wantEF[i]+wantBL[i]-g.w[i] == span
		}
		k := 1 + rng.Intn(procs)
		_, loc, parts := partitionGraph(rng, g, k)
		var mu sync.Mutex
		var path []int // global nodes, path order
		steps := map[int64]int{}
		err := inproc.Run(k, func(c comm.Comm) error {
			part := parts[c.Rank()]
			dag, err := buildRandOpts(c, g, loc, part, BuildOptions{OutsOnly: outsOnly})
			if err != nil {
				return err
			}
			if dag.OutsOnly() != outsOnly {
				return fmt.Errorf("OutsOnly() = %v", dag.OutsOnly())
			}
			w := make([]int64, len(part.global))
			keys := make([]int64, len(part.global))
			for i, n := range part.global {
				w[i], keys[i] = g.w[n], int64(n)
			}
			// OutsOnly iterations weigh through a function, as the
			// driver does with its narrow column.
			var lp *Longest
			if outsOnly {
				lp, err = LongestPathsOf(c, dag, func(n int32) int64 { return w[n] }, keyOf(keys), true)
			} else {
				lp, err = LongestPaths(c, dag, w, keyOf(keys), true)
			}
			if err != nil {
				return err
			}
			if lp.Span != span {
				t.Errorf("it %d rank %d: span %d, want %d", it, c.Rank(), lp.Span, span)
			}
			for i, n := range part.global {
				ef := lp.EFAt(int32(i))
				if ef != wantEF[n] || lp.BL[i] != wantBL[n] {
					t.Errorf("it %d node %d: EF/BL %d/%d, want %d/%d", it, n, ef, lp.BL[i], wantEF[n], wantBL[n])
				}
				slack := span - (ef + lp.BL[i] - w[i])
				if (slack == 0) != onCP[n] {
					t.Errorf("it %d node %d: slack %d but on a critical path: %v", it, n, slack, onCP[n])
				}
			}
			st, err := WalkPath(c, dag, lp)
			if err != nil {
				return err
			}
			if outsOnly {
				// The marks from the forward values alone, which they
				// consume, agree with EF + BL − w == span.
				// Every other time the weights from a column, as the
				// critical path keeps them.
				var on OnLongest
				if it%4 == 1 {
					on, err = OnLongestPaths(c, dag, func(n int32) int64 { return w[n] }, lp)
				} else {
					var wb narrow.FramedBuilder
					for _, x := range w {
						wb.Append(x)
					}
					w32 := wb.Finish()
					on, err = OnLongestPathsColumn(c, dag, &w32, lp)
				}
				if err != nil {
					return err
				}
				if lp.ef != nil {
					t.Errorf("it %d: OnLongestPaths left the forward values", it)
				}
				for i, n := range part.global {
					if on.On(int32(i)) != onCP[n] {
						t.Errorf("it %d node %d: OnLongestPaths says %v, EF + BL − w == span says %v", it, n, on.On(int32(i)), onCP[n])
					}
				}
			}
			mu.Lock()
			for s := range st.Steps() {
				steps[s.Depth] = part.global[s.Node]
			}
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for d := int64(len(steps) - 1); d >= 0; d-- {
			n, ok := steps[d]
			if !ok {
				t.Fatalf("it %d: path has no step at depth %d", it, d)
			}
			path = append(path, n)
		}
		var sum int64
		for i, n := range path {
			sum += g.w[n]
			if i > 0 {
				p := path[i-1]
				ok := g.inPrev[n] == p
				for _, q := range g.preds[n] {
					ok = ok || q == p
				}
				if !ok {
					t.Fatalf("it %d: path step %d→%d is no edge", it, p, n)
				}
			}
		}
		if sum != span {
			t.Errorf("it %d: path weighs %d, span %d", it, sum, span)
		}
		if len(path) > 0 && (g.inPrev[path[0]] >= 0 || len(g.preds[path[0]]) > 0) {
			t.Errorf("it %d: path starts at node %d, which has inputs", it, path[0])
		}
		if !outsOnly {
			wholePath = path
		} else if !slices.Equal(path, wholePath) {
			t.Errorf("it %d: OutsOnly path %v, whole DAG's %v", it, path, wholePath)
		}
	}
}

// keyOf serves tie keys from a slice.
func keyOf(keys []int64) func(n int32) int64 {
	return func(n int32) int64 { return keys[n] }
}

// TestKeysFollowNodes: with tie keys that order each rank's nodes as
// their ids, deciding ties between local inputs by id
// (ReplayOptions.KeysFollowNodes) chooses the inputs the keys choose, on
// random DAGs with many ties (weights 0–3), any partition.
func TestKeysFollowNodes(t *testing.T) {
	for it := 0; it < 60; it++ {
		rng := rand.New(rand.NewSource(int64(300 + it)))
		procs := 1 + rng.Intn(6)
		g := newRandGraph(rng, procs, 20+rng.Intn(150), 0.3, 3)
		k := 1 + rng.Intn(procs)
		_, loc, parts := partitionGraph(rng, g, k)
		err := inproc.Run(k, func(c comm.Comm) error {
			part := parts[c.Rank()]
			w := func(n int32) int64 { return g.w[part.global[n]] }
			var wb narrow.FramedBuilder
			for n := range int32(len(part.global)) {
				wb.Append(w(n))
			}
			w32 := wb.Finish()
			key := func(n int32) int64 { return int64(c.Rank())<<32 | int64(n) }
			var lps [2]*Longest
			for i := range lps {
				dag, err := buildRandOpts(c, g, loc, part, BuildOptions{OutsOnly: true})
				if err != nil {
					return err
				}
				if i == 0 {
					lps[i], err = LongestPathsOf(c, dag, w, key, false)
				} else {
					lps[i], err = LongestPathsFollowing(c, dag, &w32, key)
				}
				if err != nil {
					return err
				}
			}
			if !slices.Equal(lps[0].Arg.entries(), lps[1].Arg.entries()) || lps[0].End != lps[1].End || lps[0].Span != lps[1].Span {
				t.Errorf("it %d rank %d: by id %v, end %v; by key %v, end %v", it, c.Rank(), lps[1].Arg.entries(), lps[1].End, lps[0].Arg.entries(), lps[0].End)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestOnLongestSearch: the marks of OnLongestPathsColumn after
// LongestPathsFollowing are the nodes with EF + BL − w == span, whether
// they come from the search through the logged ties (one rank: no remote
// slot), or from the backward replay (several ranks, or a log cut short
// by its limit), on random DAGs with many ties (weights 0–3).
func TestOnLongestSearch(t *testing.T) {
	searched := 0
	var across atomic.Int64 // ranks of several that searched
	for it := 0; it < 160; it++ {
		rng := rand.New(rand.NewSource(int64(500 + it)))
		procs := 1 + rng.Intn(6)
		g := newRandGraph(rng, procs, 20+rng.Intn(300), 0.3, 3)
		wantEF, wantBL, span := refLongest(g)
		k := 1
		if it%3 == 2 || it >= 120 {
			k = 1 + rng.Intn(procs)
		}
		_, loc, parts := partitionGraph(rng, g, k)
		err := inproc.Run(k, func(c comm.Comm) error {
			part := parts[c.Rank()]
			dag, err := buildRandOpts(c, g, loc, part, BuildOptions{OutsOnly: true})
			if err != nil {
				return err
			}
			var wb narrow.FramedBuilder
			for _, n := range part.global {
				wb.Append(g.w[n])
			}
			w32 := wb.Finish()
			key := func(n int32) int64 { return int64(c.Rank())<<32 | int64(n) }
			lp, err := LongestPathsFollowing(c, dag, &w32, key)
			if err != nil {
				return err
			}
			if it%7 == 6 && lp.ties != nil {
				lp.ties.full = true // as past its limit
			}
			if it%11 == 10 && c.Rank() == k-1 && lp.ties != nil {
				lp.ties.full = true // on one rank: every rank replays
			}
			full := int64(0)
			if lp.ties == nil || lp.ties.full {
				full = 1
			}
			anyFull, err := c.AllreduceInt64(comm.Max, []int64{full})
			if err != nil {
				return err
			}
			if k == 1 && anyFull[0] == 0 {
				searched++
			}
			if k > 1 && anyFull[0] == 0 && dag.Slots() > 0 {
				across.Add(1)
			}
			on, err := OnLongestPathsColumn(c, dag, &w32, lp)
			if err != nil {
				return err
			}
			for i, n := range part.global {
				if want := wantEF[n]+wantBL[n]-g.w[n] == span; on.On(int32(i)) != want {
					t.Errorf("it %d (%d ranks) node %d: marked %v, on a longest path %v", it, k, n, on.On(int32(i)), want)
				}
			}
			if lp.Arg != nil {
				t.Errorf("it %d: the argmax left", it)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if searched < 50 {
		t.Errorf("only %d graphs searched", searched)
	}
	if across.Load() < 20 {
		t.Errorf("only %d ranks with remote slots searched", across.Load())
	}
}

// TestManyEnds: every node at the span (a DAG without edges, of one
// weight), and a span of 0: every node on a longest path, the path's end
// the first node.
func TestManyEnds(t *testing.T) {
	for _, wt := range []int64{1, 0} {
		err := inproc.Run(1, func(c comm.Comm) error {
			const n = 3000
			b := NewBuilder(0, 1)
			var wb narrow.FramedBuilder
			for range n {
				b.AddNode(false)
				wb.Append(wt)
			}
			w32 := wb.Finish()
			dag, err := b.Build(c, BuildOptions{OutsOnly: true})
			if err != nil {
				return err
			}
			lp, err := LongestPathsFollowing(c, dag, &w32, func(n int32) int64 { return int64(n) })
			if err != nil {
				return err
			}
			if lp.Span != wt || lp.End.Node != 0 {
				t.Errorf("weight %d: span %d, end %v", wt, lp.Span, lp.End)
			}
			on, err := OnLongestPathsColumn(c, dag, &w32, lp)
			if err != nil {
				return err
			}
			for i := range int32(n) {
				if !on.On(i) {
					t.Fatalf("weight %d: node %d not marked", wt, i)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecycler: longest paths replayed in a Recycler's arrays, one DAG
// after another of other sizes (the critical path's processes in turn),
// give the values, arguments, path and marks of replays in new arrays.
func TestRecycler(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	var rc Recycler
	reused := 0
	for it := range 30 {
		g := newRandGraph(rng, 1+rng.Intn(3), 20+rng.Intn(400), 0.3, 3)
		_, loc, parts := partitionGraph(rng, g, 1)
		err := inproc.Run(1, func(c comm.Comm) error {
			part := parts[0]
			var wb narrow.FramedBuilder
			keys := make([]int64, len(part.global))
			for i, n := range part.global {
				wb.Append(g.w[n])
				keys[i] = int64(i)
			}
			w32 := wb.Finish()
			run := func(recycled bool) (ef []int64, arg []Entry, steps []PathStep, on []bool, err error) {
				dag, err := buildRandOpts(c, g, loc, part, BuildOptions{OutsOnly: true})
				if err != nil {
					return
				}
				var lp *Longest
				if recycled {
					lp, err = rc.LongestPathsFollowing(c, dag, &w32, keyOf(keys))
				} else {
					lp, err = LongestPathsFollowing(c, dag, &w32, keyOf(keys))
				}
				if err != nil {
					return
				}
				for n := range dag.Len() {
					ef = append(ef, lp.EFAt(n))
				}
				arg = lp.Arg.entries()
				p, err := WalkPath(c, dag, lp)
				if err != nil {
					return
				}
				steps = slices.Collect(p.Steps())
				var o OnLongest
				if recycled {
					o, err = rc.OnLongestPathsColumn(c, dag, &w32, lp)
				} else {
					o, err = OnLongestPathsColumn(c, dag, &w32, lp)
				}
				for n := range dag.Len() {
					on = append(on, o.On(n))
				}
				return
			}
			ef, arg, steps, on, err := run(false)
			if err != nil {
				return err
			}
			if rc.vals != nil && rc.vals.room() >= len(ef) && rc.arg != nil && rc.arg.room() >= len(ef) {
				reused++
			}
			ef2, arg2, steps2, on2, err := run(true)
			if err != nil {
				return err
			}
			if !slices.Equal(ef, ef2) || !slices.Equal(arg, arg2) || !slices.Equal(steps, steps2) || !slices.Equal(on, on2) {
				t.Errorf("it %d (%d nodes): the replay in recycled arrays differs", it, len(ef))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if reused == 0 {
		t.Error("no replay ran in recycled arrays")
	}
}
