package graph

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// randGraph is a random DAG over processes: nodes are made one after the
// other, each appended to a random process's chain (or left free, owned by
// a random process), with explicit inputs among earlier nodes, so creation
// order is a topological order and the reference evaluates in it.
type randGraph struct {
	procs  int
	proc   []int // global node → owning process
	inPrev []int // global node → chain predecessor, −1
	preds  [][]int
	succs  [][]int
	w      []int64
	chains [][]int // per process: chained nodes in order
	free   [][]int // per process: free nodes it owns
}

func newRandGraph(rng *rand.Rand, procs, nodes int, freeShare float64, maxPreds int) *randGraph {
	g := &randGraph{procs: procs, chains: make([][]int, procs), free: make([][]int, procs)}
	for n := 0; n < nodes; n++ {
		p := rng.Intn(procs)
		g.proc = append(g.proc, p)
		g.w = append(g.w, int64(rng.Intn(4)))
		prev := -1
		if rng.Float64() < freeShare {
			g.free[p] = append(g.free[p], n)
		} else {
			if c := g.chains[p]; len(c) > 0 {
				prev = c[len(c)-1]
			}
			g.chains[p] = append(g.chains[p], n)
		}
		g.inPrev = append(g.inPrev, prev)
		var ps []int
		if n > 0 {
			for k := rng.Intn(maxPreds + 1); k > 0; k-- {
				ps = append(ps, rng.Intn(n))
			}
		}
		g.preds = append(g.preds, ps)
		g.succs = append(g.succs, nil)
		for _, q := range ps {
			g.succs[q] = append(g.succs[q], n)
		}
	}
	return g
}

// refEval is the reference of evalLongest: values in creation order (or
// reverse), inputs combined with max, ties to the smallest global id.
func (g *randGraph) ref(backward, useMin, noChains bool) (vals []int64, arg []int) {
	n := len(g.proc)
	vals = make([]int64, n)
	arg = make([]int, n)
	next := make([]int, n)
	for i := range next {
		next[i] = -1
	}
	for i, p := range g.inPrev {
		if p >= 0 {
			next[p] = i
		}
	}
	visit := func(i int) {
		prev, ins := g.inPrev[i], g.preds[i]
		if backward {
			prev, ins = next[i], g.succs[i]
		}
		if noChains {
			prev = -1
		}
		x := Input{Arg: NoEntry}
		arg[i] = -1
		if prev >= 0 {
			x.Prev, x.HasPrev = vals[prev], true
		}
		for _, q := range ins {
			v := vals[q]
			if !x.HasIn || (useMin && v < x.In) || (!useMin && v > x.In) || (v == x.In && q < arg[i]) {
				x.In, x.HasIn, arg[i] = v, true, q
			}
		}
		vals[i] = evalLongest(g.w[i], x)
	}
	if backward {
		for i := n - 1; i >= 0; i-- {
			visit(i)
		}
	} else {
		for i := 0; i < n; i++ {
			visit(i)
		}
	}
	return vals, arg
}

func evalLongest(w int64, x Input) int64 {
	var m int64
	if x.HasPrev {
		m = max(m, x.Prev)
	}
	if x.HasIn {
		m = max(m, x.In)
	}
	return m + w
}

// rankPart is one rank's view of a randGraph under a partition.
type rankPart struct {
	global []int // local → global
}

// partitionGraph assigns processes to k ranks in contiguous blocks cut at
// random and numbers each rank's nodes: chains first, then free nodes.
func partitionGraph(rng *rand.Rand, g *randGraph, k int) (owner []int, loc []NodeRef, parts []rankPart) {
	owner = make([]int, g.procs)
	cuts := rng.Perm(g.procs - 1)[:k-1]
	isCut := map[int]bool{}
	for _, c := range cuts {
		isCut[c+1] = true
	}
	r := 0
	for p := 0; p < g.procs; p++ {
		if isCut[p] {
			r++
		}
		owner[p] = r
	}
	loc = make([]NodeRef, len(g.proc))
	parts = make([]rankPart, k)
	for p := 0; p < g.procs; p++ {
		rp := &parts[owner[p]]
		for _, n := range g.chains[p] {
			loc[n] = NodeRef{owner[p], int32(len(rp.global))}
			rp.global = append(rp.global, n)
		}
	}
	for p := 0; p < g.procs; p++ {
		rp := &parts[owner[p]]
		for _, n := range g.free[p] {
			loc[n] = NodeRef{owner[p], int32(len(rp.global))}
			rp.global = append(rp.global, n)
		}
	}
	return owner, loc, parts
}

// buildRandOpts builds rank c's share, declaring each edge at a random end
// and by node or by key at random (the choice is a function of the edge,
// so exactly one end declares it), with opts' InsOnly or OutsOnly (Resolve
// is set here).
func buildRandOpts(c comm.Comm, g *randGraph, loc []NodeRef, part rankPart, opts BuildOptions) (*DAG, error) {
	b, resolve, err := declareRand(c, g, loc, part)
	if err != nil {
		return nil, err
	}
	opts.Resolve = resolve
	return b.Build(c, opts)
}

// declareRand declares rank c's part of g in a Builder: the edges between
// ranks by node or by key, as the edge's hash says, and returns the
// builder with the Resolve its keys need.
func declareRand(c comm.Comm, g *randGraph, loc []NodeRef, part rankPart) (*Builder, func(Key) (int32, bool), error) {
	b := NewBuilder(c.Rank(), c.Size())
	for i, n := range part.global {
		chained := g.inPrev[n] >= 0
		if id := b.AddNode(chained); id != int32(i) {
			return nil, nil, fmt.Errorf("AddNode returned %d, want %d", id, i)
		}
	}
	me := c.Rank()
	for n := range g.preds {
		for j, q := range g.preds[n] {
			h := (n*31 + q*17 + j) % 4
			src, dst := loc[q], loc[n]
			switch {
			case h&1 == 0 && dst.Rank == me: // declared by the destination
				if h&2 != 0 && src.Rank != me {
					b.AddRemoteInKey(dst.Node, src.Rank, Key{A: int64(q), B: 7})
				} else {
					b.AddRemoteIn(dst.Node, src)
				}
			case h&1 == 1 && src.Rank == me: // declared by the source
				if h&2 != 0 && dst.Rank != me {
					b.AddRemoteOutKey(src.Node, dst.Rank, Key{A: int64(n), B: 7})
				} else {
					b.AddRemoteOut(src.Node, dst)
				}
			}
		}
	}
	resolve := func(k Key) (int32, bool) {
		if k.B != 7 || k.A < 0 || int(k.A) >= len(loc) || loc[k.A].Rank != me {
			return 0, false
		}
		return loc[k.A].Node, true
	}
	return b, resolve, nil
}

func TestReplayMatchesReference(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 1 + rng.Intn(9)
		g := newRandGraph(rng, procs, 50+rng.Intn(300), 0.1, 3)
		for _, mode := range []struct {
			backward, min, noChains bool
		}{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, false}, {false, false, true}} {
			wantV, wantA := g.ref(mode.backward, mode.min, mode.noChains)
			for k := 1; k <= min(procs, 5); k++ {
				name := fmt.Sprintf("seed%d/procs%d/back=%v,min=%v,nochain=%v/k=%d", seed, procs, mode.backward, mode.min, mode.noChains, k)
				replayRand(t, name, rng, g, k, ReplayOptions{Backward: mode.backward, Min: mode.min, NoChains: mode.noChains}, wantV, wantA)
				// The same with the weights evaluated inline (no Eval).
				replayRand(t, name+"/weights", rng, g, k, ReplayOptions{Backward: mode.backward, Min: mode.min, NoChains: mode.noChains, Weights: []int64{}}, wantV, wantA)
				// The same in supersteps of a few nodes at most.
				replayRand(t, name+"/budget", rng, g, k, ReplayOptions{Backward: mode.backward, Min: mode.min, NoChains: mode.noChains, budget: 1 + rng.Int63n(4)}, wantV, wantA)
			}
		}
	}
}

// A DAG built OutsOnly replays forward by pushing values to outputs, with
// the reference's values and argmax (ties by key); ReplayInReverse on the
// order it recorded gives the backward reference, on an OutsOnly DAG and on
// a whole one replayed by pulling. Chain arguments: TestChainArgAsExplicitInput.
func TestOutsOnlyForwardAndReverse(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 1 + rng.Intn(9)
		g := newRandGraph(rng, procs, 50+rng.Intn(300), 0.1, 3)
		for _, mode := range []struct{ min, noChains bool }{{false, false}, {true, false}, {false, true}} {
			wantV, wantA := g.ref(false, mode.min, mode.noChains)
			wantB, _ := g.ref(true, mode.min, mode.noChains)
			for k := 1; k <= min(procs, 5); k++ {
				for _, bo := range []BuildOptions{{OutsOnly: true}, {}} {
					name := fmt.Sprintf("seed%d/procs%d/min=%v,nochain=%v/k=%d/outsonly=%v", seed, procs, mode.min, mode.noChains, k, bo.OutsOnly)
					o := ReplayOptions{Min: mode.min, NoChains: mode.noChains}
					replayRandBuild(t, name, rng, g, k, bo, o, wantV, wantA, wantB)
					o.Weights = []int64{}
					replayRandBuild(t, name+"/weights", rng, g, k, bo, o, wantV, wantA, wantB)
					o.budget = 1 + rng.Int63n(4)
					replayRandBuild(t, name+"/budget", rng, g, k, bo, o, wantV, wantA, wantB)
				}
			}
		}
	}
}

// buildKeyed builds a rank's share of g with its nodes' global ids as tie
// keys.
func buildKeyed(c comm.Comm, g *randGraph, loc []NodeRef, part rankPart, opts BuildOptions) (*DAG, []int64, error) {
	d, err := buildRandOpts(c, g, loc, part, opts)
	keys := make([]int64, len(part.global))
	for i, n := range part.global {
		keys[i] = int64(n)
	}
	return d, keys, err
}

// replayRand replays g over a random partition into k ranks with the given
// options (Eval unless Weights is non-nil, then the local weights, and
// TieKey, global ids as keys, are set here) and checks
// values and argmax against wantV and wantA: a local arg must be wantA's
// node, a remote one a node of another rank.
func replayRand(t *testing.T, name string, rng *rand.Rand, g *randGraph, k int, o ReplayOptions, wantV []int64, wantA []int) {
	t.Helper()
	replayRandBuild(t, name, rng, g, k, BuildOptions{}, o, wantV, wantA, nil)
}

// replayRandBuild is replayRand on a DAG built with bo; with wantBack, the
// forward replay records its order and ReplayInReverse must give wantBack.
func replayRandBuild(t *testing.T, name string, rng *rand.Rand, g *randGraph, k int, bo BuildOptions, o ReplayOptions, wantV []int64, wantA []int, wantBack []int64) {
	t.Helper()
	_, loc, parts := partitionGraph(rng, g, k)
	gotV := make([]int64, len(g.proc))
	gotA := make([]int, len(g.proc))
	gotB := make([]int64, len(g.proc))
	o.RecordOrder = wantBack != nil
	err := inproc.Run(k, func(c comm.Comm) error {
		part := parts[c.Rank()]
		d, keys, err := buildKeyed(c, g, loc, part, bo)
		if err != nil {
			return err
		}
		o := o
		o.TrackArg, o.TieKey = true, keyOf(keys)
		if o.Weights != nil {
			// Weights: the local nodes' (values are never negative, so
			// weight plus the heavier input is evalLongest).
			o.Weights = make([]int64, len(part.global))
			for i, n := range part.global {
				o.Weights[i] = g.w[n]
			}
		} else {
			o.Eval = func(n int32, x Input) int64 { return evalLongest(g.w[part.global[n]], x) }
		}
		// An OutsOnly DAG's forward replay counts its input counts down;
		// one refused before it starts (an argmax without tie keys) leaves
		// them to the next.
		o.ConsumeCounts = bo.OutsOnly
		if bo.OutsOnly {
			if _, err := Replay(c, d, ReplayOptions{TrackArg: true, ConsumeCounts: true, Eval: o.Eval, Weights: o.Weights}); err == nil {
				return errors.New("an OutsOnly DAG tracked the argmax without tie keys")
			}
		}
		res, err := Replay(c, d, o)
		if err != nil {
			return err
		}
		if bo.OutsOnly {
			for i := range part.global {
				if d.InDegree(int32(i)) != 0 {
					return fmt.Errorf("node %d: %d inputs left after a replay that consumed them", i, d.InDegree(int32(i)))
				}
			}
			if _, err := Replay(c, d, o); err == nil {
				return errors.New("a second forward replay ran on consumed counts")
			}
		}
		if wantBack != nil {
			rb, err := ReplayInReverse(c, d, res.Order, ReplayOptions{Min: o.Min, NoChains: o.NoChains, Eval: o.Eval, Weights: o.Weights})
			if err != nil {
				return err
			}
			// What it refuses: another chain rule, tie keys, no order.
			for _, bad := range []ReplayOptions{{NoChains: !o.NoChains, Eval: o.Eval, Weights: o.Weights}, {Eval: o.Eval, Weights: o.Weights, TrackArg: true, TieKey: o.TieKey}} {
				if _, err := ReplayInReverse(c, d, res.Order, bad); err == nil {
					return fmt.Errorf("ReplayInReverse accepted %+v", bad)
				}
			}
			if _, err := ReplayInReverse(c, d, nil, ReplayOptions{Eval: o.Eval, Weights: o.Weights}); err == nil {
				return errors.New("ReplayInReverse accepted no order")
			}
			if !d.OutsOnly() {
				// The order of a backward replay is no order for it.
				bw, err := Replay(c, d, ReplayOptions{Backward: true, Min: o.Min, NoChains: o.NoChains, Eval: o.Eval, Weights: o.Weights, RecordOrder: true})
				if err != nil {
					return err
				}
				if _, err := ReplayInReverse(c, d, bw.Order, ReplayOptions{Min: o.Min, NoChains: o.NoChains, Eval: o.Eval, Weights: o.Weights}); err == nil {
					return errors.New("ReplayInReverse accepted a backward replay's order")
				}
			}
			for i, n := range part.global {
				gotB[n] = rb.Values[i]
			}
		}
		for i, n := range part.global {
			gotV[n] = res.Values[i]
			gotA[n] = -1
			if m, ok := res.Arg.At(int32(i)).Node(); ok {
				gotA[n] = part.global[m]
			} else if s, ok := res.Arg.At(int32(i)).Slot(); ok {
				gotA[n] = -2 - int(s) // remote: checked by value below
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if wantBack != nil && !slices.Equal(gotB, wantBack) {
		t.Fatalf("%s: ReplayInReverse differs from the reference", name)
	}
	for n := range gotV {
		if gotV[n] != wantV[n] {
			t.Fatalf("%s: node %d = %d, want %d", name, n, gotV[n], wantV[n])
		}
		switch {
		case gotA[n] >= 0 && gotA[n] != wantA[n]:
			t.Fatalf("%s: node %d arg %d, want %d", name, n, gotA[n], wantA[n])
		case gotA[n] == -1 && wantA[n] != -1:
			t.Fatalf("%s: node %d has no arg, want %d", name, n, wantA[n])
		case gotA[n] <= -2 && (wantA[n] < 0 || loc[wantA[n]].Rank == loc[n].Rank):
			t.Fatalf("%s: node %d arg is remote, want %d", name, n, wantA[n])
		}
	}
}

// TestWalkFollowsArgs walks back from every sink along the input that gave
// each node its value (chain predecessor or explicit argmax) and compares
// the visited nodes and depths with the reference walk.
func TestWalkFollowsArgs(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 2 + rng.Intn(6)
		g := newRandGraph(rng, procs, 200, 0.05, 2)
		vals, arg := g.ref(false, false, false)
		// Reference: from the node with the largest value (smallest id on
		// ties), step to the explicit argmax when it beats the chain
		// predecessor (ties to the smaller id), else to the predecessor.
		stepRef := func(n int) int {
			p, a := g.inPrev[n], arg[n]
			switch {
			case a >= 0 && (p < 0 || vals[a] > vals[p] || vals[a] == vals[p] && a < p):
				return a
			default:
				return p
			}
		}
		start := 0
		for n := range vals {
			if vals[n] > vals[start] {
				start = n
			}
		}
		want := map[int]int64{}
		for n, d := start, int64(0); n >= 0; n, d = stepRef(n), d+1 {
			want[n] = d
		}
		if len(want) < 5 {
			t.Fatalf("seed %d: reference path of only %d nodes: the test graph is too shallow", seed, len(want))
		}
		for k := 1; k <= min(procs, 4); k++ {
			_, loc, parts := partitionGraph(rng, g, k)
			got := make([]int64, len(g.proc))
			for i := range got {
				got[i] = -1
			}
			err := inproc.Run(k, func(c comm.Comm) error {
				part := parts[c.Rank()]
				d, keys, err := buildKeyed(c, g, loc, part, BuildOptions{})
				if err != nil {
					return err
				}
				res, err := Replay(c, d, ReplayOptions{TrackArg: true, TieKey: keyOf(keys),
					Eval: func(n int32, x Input) int64 { return evalLongest(g.w[part.global[n]], x) }})
				if err != nil {
					return err
				}
				// The walk needs the value of a remote argmax: the replay
				// gives only its entry, so keep In per node.
				in := make([]int64, d.Len())
				_, err = Replay(c, d, ReplayOptions{TrackArg: false, TieKey: keyOf(keys),
					Eval: func(n int32, x Input) int64 {
						in[n] = x.In
						return evalLongest(g.w[part.global[n]], x)
					}})
				if err != nil {
					return err
				}
				var starts []int32
				if loc[start].Rank == c.Rank() {
					starts = append(starts, loc[start].Node)
				}
				return Walk(c, d, starts, func(n int32, depth int64) Entry {
					gn := part.global[n]
					got[gn] = depth
					a := res.Arg.At(n)
					hasPrev := d.chained.has(n)
					if a == NoEntry {
						if hasPrev {
							return Entry(n - 1)
						}
						return NoEntry
					}
					if !hasPrev {
						return a
					}
					pv := res.Values[n-1]
					pg := part.global[n-1]
					// The argmax's global id decides ties; for a remote one,
					// find it through the reference (test only).
					ag := arg[gn]
					if in[n] > pv || in[n] == pv && ag < pg {
						return a
					}
					return Entry(n - 1)
				})
			})
			if err != nil {
				t.Fatalf("seed %d k %d: %v", seed, k, err)
			}
			for n := range got {
				wd, on := want[n]
				if on != (got[n] >= 0) || on && wd != got[n] {
					t.Fatalf("seed %d k %d: node %d walked at depth %d, want on=%v depth %d", seed, k, n, got[n], on, wd)
				}
			}
		}
	}
}

// TestReplayDetectsCycle: two processes each wait for the other's later
// node. Every rank must return the same CycleError, quickly, whether the
// DAG was built whole (pull) or OutsOnly (push).
func TestReplayDetectsCycle(t *testing.T) {
	// Process 0: a0 → b0 (chain), process 1: a1 → b1; edges b0 → a1, b1 → a0.
	for kk := 2; kk <= 5; kk++ {
		k, outsOnly := kk/2, kk%2 == 1
		done := make(chan error, 1)
		errs := make([]error, k)
		go func() {
			done <- inproc.Run(k, func(c comm.Comm) error {
				b := NewBuilder(c.Rank(), c.Size())
				names := []string{}
				ref := func(proc, i int) NodeRef {
					if k == 1 {
						return NodeRef{0, int32(2*proc + i)}
					}
					return NodeRef{proc, int32(i)}
				}
				for p := 0; p < 2; p++ {
					if ref(p, 0).Rank != c.Rank() {
						continue
					}
					b.AddNode(false)
					b.AddNode(true)
					names = append(names, fmt.Sprintf("p%d recv", p), fmt.Sprintf("p%d send", p))
				}
				for p := 0; p < 2; p++ {
					if ref(p, 0).Rank == c.Rank() {
						b.AddRemoteIn(ref(p, 0).Node, ref(1-p, 1))
					}
				}
				d, err := b.Build(c, BuildOptions{OutsOnly: outsOnly})
				if err != nil {
					return err
				}
				_, err = Replay(c, d, ReplayOptions{
					Eval:     func(n int32, x Input) int64 { return 0 },
					Describe: func(n int32) string { return names[n] },
				})
				errs[c.Rank()] = err
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("k=%d: replay of a cyclic graph hangs", k)
		}
		for r, err := range errs {
			var ce *CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("k=%d rank %d: got %v, want a CycleError", k, r, err)
			}
			if ce.Remaining != 4 || !strings.Contains(ce.Error(), "p0 recv waits for") {
				t.Fatalf("k=%d rank %d: %v", k, r, err)
			}
			if errs[0].Error() != err.Error() {
				t.Fatalf("k=%d: ranks disagree: %q vs %q", k, errs[0], err)
			}
		}
	}
}

// TestBuildErrorsAgreed: a bad remote node id on one rank fails Build on
// every rank, naming the problem.
func TestBuildErrorsAgreed(t *testing.T) {
	errs := make([]error, 3)
	err := inproc.Run(3, func(c comm.Comm) error {
		b := NewBuilder(c.Rank(), c.Size())
		b.AddNode(false)
		if c.Rank() == 2 {
			b.AddRemoteIn(0, NodeRef{Rank: 0, Node: 5})
		}
		_, errs[c.Rank()] = b.Build(c, BuildOptions{})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range errs {
		if e == nil || !strings.Contains(e.Error(), "node 5") {
			t.Fatalf("rank %d: %v", r, e)
		}
	}
}

// With ChainArg, Arg names the input that gave a node its value as if its
// chain predecessor were one more explicit input: the critical path must
// not depend on which edges a graph holds as chains.
func TestChainArgAsExplicitInput(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 1 + rng.Intn(6)
		g := newRandGraph(rng, procs, 50+rng.Intn(250), 0.1, 3)
		// The same graph with every chain edge explicit.
		flat := &randGraph{procs: g.procs, proc: g.proc, w: g.w, chains: make([][]int, procs), free: g.free}
		for i := range g.proc {
			flat.inPrev = append(flat.inPrev, -1)
			flat.preds = append(flat.preds, slices.Clone(g.preds[i]))
			flat.succs = append(flat.succs, slices.Clone(g.succs[i]))
		}
		for i, p := range g.inPrev {
			if p >= 0 {
				flat.preds[i] = append(flat.preds[i], p)
				flat.succs[p] = append(flat.succs[p], i)
			}
		}
		for _, backward := range []bool{false, true} {
			wantV, wantA := flat.ref(backward, false, false)
			for k := 1; k <= min(procs, 4); k++ {
				name := fmt.Sprintf("seed%d/procs%d/back=%v/k=%d", seed, procs, backward, k)
				replayRand(t, name, rng, g, k, ReplayOptions{Backward: backward, ChainArg: true}, wantV, wantA)
				if !backward {
					replayRandBuild(t, name+"/outsonly", rng, g, k, BuildOptions{OutsOnly: true}, ReplayOptions{ChainArg: true}, wantV, wantA, nil)
				}
			}
		}
	}
}

// A DAG built InsOnly replays backward by pushing values to inputs: the
// same values as the reference, with max or min, with and without chains,
// over 1–5 ranks; and it refuses what needs the outputs' adjacency.
func TestInsOnlyBackward(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 1 + rng.Intn(9)
		g := newRandGraph(rng, procs, 50+rng.Intn(300), 0.1, 3)
		for _, mode := range []struct{ min, noChains bool }{{false, false}, {true, false}, {false, true}} {
			want, _ := g.ref(true, mode.min, mode.noChains)
			for k := 1; k <= min(procs, 5); k++ {
				_, loc, parts := partitionGraph(rng, g, k)
				got := make([]int64, len(g.proc))
				err := inproc.Run(k, func(c comm.Comm) error {
					part := parts[c.Rank()]
					d, err := buildRandOpts(c, g, loc, part, BuildOptions{InsOnly: true})
					if err != nil {
						return err
					}
					if !d.InsOnly() || d.Outs(0) != nil {
						return errors.New("built InsOnly, has outputs")
					}
					for i, n := range part.global {
						if got, want := d.OutDegree(int32(i)), int32(len(g.succs[n])); got != want {
							return fmt.Errorf("node %d: out degree %d, want %d", n, got, want)
						}
					}
					// Every other rank count consumes the DAG's output counts,
					// through BackLengths (every other time BackLengthsFramed)
					// when it computes the same values.
					consume := k%2 == 1
					var vals []int64
					if consume && !mode.min && !mode.noChains {
						var res *Result
						if k%4 == 3 { // the weights in a framed column
							var wb narrow.FramedBuilder
							for _, n := range part.global {
								wb.Append(g.w[n])
							}
							w := wb.Finish()
							res, err = BackLengthsFramed(c, d, &w, nil)
						} else {
							res, err = BackLengths(c, d, func(n int32) int64 { return g.w[part.global[n]] }, nil)
						}
						if res != nil {
							vals = make([]int64, d.Len())
							for i := range vals {
								vals[i] = res.Value(int32(i))
							}
						}
					} else {
						var res *Result
						res, err = Replay(c, d, ReplayOptions{Backward: true, Min: mode.min, NoChains: mode.noChains, ConsumeCounts: consume,
							Eval: func(n int32, x Input) int64 { return evalLongest(g.w[part.global[n]], x) }})
						if res != nil {
							vals = res.Values
						}
					}
					if err != nil {
						return err
					}
					for i, n := range part.global {
						if got, want := d.OutDegree(int32(i)), int32(len(g.succs[n])); consume && got != 0 || !consume && got != want {
							return fmt.Errorf("node %d: out degree %d after the replay (consumed %v)", n, got, consume)
						}
					}
					for i, n := range part.global {
						got[n] = vals[i]
					}
					if _, err := Replay(c, d, ReplayOptions{Eval: func(int32, Input) int64 { return 0 }}); err == nil {
						return fmt.Errorf("forward replay of an InsOnly DAG did not fail")
					}
					return nil
				})
				if err != nil {
					t.Fatalf("seed %d k %d: %v", seed, k, err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d k %d min %v nochains %v: values differ from the reference", seed, k, mode.min, mode.noChains)
				}
			}
		}
	}
}

// TestReverseManySupersteps: a forward replay of tens of thousands of
// supersteps records each in-slot's in a column that widens past int8 and
// int16 (Order.slotStep), and ReplayInReverse on that order gives the
// reference.
func TestReverseManySupersteps(t *testing.T) {
	if testing.Short() {
		t.Skip("tens of thousands of supersteps")
	}
	for _, nodes := range []int{400, 80000} {
		rng := rand.New(rand.NewSource(int64(nodes)))
		g := newRandGraph(rng, 4, nodes, 0.5, 2)
		wantV, wantA := g.ref(false, false, false)
		wantB, _ := g.ref(true, false, false)
		for _, bo := range []BuildOptions{{OutsOnly: true}, {}} {
			replayRandBuild(t, fmt.Sprintf("nodes%d/outsonly=%v", nodes, bo.OutsOnly), rng, g, 2, bo, ReplayOptions{budget: 1}, wantV, wantA, wantB)
		}
	}
}
