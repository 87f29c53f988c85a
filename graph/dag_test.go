package graph

import (
	"errors"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/commtest"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// TestAddEdgesKeepsDeclarationOrder builds one graph with edges added one
// by one and the same graph with a run handed over packed by AddPairs (or
// as other pairs mapped onto them, AddPairsMapped) between single edges:
// the CSR rows (whose order decides untied inputs) match.
func TestAddEdgesKeepsDeclarationOrder(t *testing.T) {
	type edge struct{ s, d int32 }
	first := []edge{{0, 3}, {1, 3}}
	run := []edge{{2, 3}, {0, 2}, {1, 2}} // nodes 4.. of the second half, base 4
	last := []edge{{3, 7}, {0, 5}}
	// mode 0: one by one, 1: AddPairs, 2: AddPairsMapped
	build := func(c comm.Comm, mode int, opts BuildOptions) *DAG {
		b := NewBuilder(c.Rank(), c.Size())
		for range 8 {
			b.AddNode(false)
		}
		for _, e := range first {
			b.AddEdge(e.s, e.d)
		}
		if mode == 2 {
			// Pairs (3s, 3d+1), and one the map leaves out.
			var p packed.Pairs
			for i, e := range run {
				p.Append(3*e.s, 3*e.d+1)
				if i == 0 {
					p.Append(-5, 9)
				}
			}
			b.AddPairsMapped(p, 4, func(as, bs []int32) int {
				k := 0
				for i, a := range as {
					if a >= 0 {
						as[k], bs[k] = a/3, (bs[i]-1)/3
						k++
					}
				}
				return k
			})
		} else if mode == 1 {
			var p packed.Pairs
			for _, e := range run {
				p.Append(e.s, e.d)
			}
			b.AddPairs(p, 4)
		} else {
			for _, e := range run {
				b.AddEdge(4+e.s, 4+e.d)
			}
		}
		for _, e := range last {
			b.AddEdge(e.s, e.d)
		}
		g, err := b.Build(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	err := inproc.Run(1, func(c comm.Comm) error {
		one, bulk := build(c, 0, BuildOptions{}), build(c, 1, BuildOptions{})
		mapped := build(c, 2, BuildOptions{})
		for n := int32(0); n < one.Len(); n++ {
			if !slices.Equal(one.Ins(n), mapped.Ins(n)) || !slices.Equal(one.Outs(n), mapped.Outs(n)) {
				t.Errorf("node %d mapped: ins %v / %v, outs %v / %v", n, one.Ins(n), mapped.Ins(n), one.Outs(n), mapped.Outs(n))
			}
		}
		// Built OutsOnly: the same outputs, the inputs' counts only.
		outs := build(c, 1, BuildOptions{OutsOnly: true})
		for n := int32(0); n < one.Len(); n++ {
			if !slices.Equal(outs.Outs(n), one.Outs(n)) || outs.InDegree(n) != int32(len(one.Ins(n))) || outs.Ins(n) != nil {
				t.Errorf("node %d OutsOnly: outs %v, want %v; %d inputs, want %d", n, outs.Outs(n), one.Outs(n), outs.InDegree(n), len(one.Ins(n)))
			}
		}
		if outs.Edges() != 7 {
			t.Errorf("OutsOnly: edges %d, want 7", outs.Edges())
		}
		for n := int32(0); n < one.Len(); n++ {
			if !slices.Equal(one.Ins(n), bulk.Ins(n)) || !slices.Equal(one.Outs(n), bulk.Outs(n)) {
				t.Errorf("node %d: ins %v / %v, outs %v / %v", n, one.Ins(n), bulk.Ins(n), one.Outs(n), bulk.Outs(n))
			}
		}
		if one.Edges() != 7 || bulk.Edges() != 7 {
			t.Errorf("edges %d and %d, want 7", one.Edges(), bulk.Edges())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAddEdgesChecksNodes: an edge to a node that does not exist (the base
// pushing an id past the end) is Build's error, not an index panic.
func TestAddEdgesChecksNodes(t *testing.T) {
	err := inproc.Run(1, func(c comm.Comm) error {
		b := NewBuilder(c.Rank(), c.Size())
		for range 4 {
			b.AddNode(false)
		}
		var p packed.Pairs
		p.Append(0, 1)
		p.Append(1, 2) // 3 → 4 past the end
		b.AddPairs(p, 2)
		_, err := b.Build(c, BuildOptions{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("AddPairs: err = %v, want a missing node", err)
	}
}

// TestPackedSideSameLists: the one side of a DAG built InsOnly or OutsOnly
// is packed as varints; on random graphs spread over ranks (slots, remote
// edges declared by node and by key, nodes far apart), it gives the whole
// DAG's lists in the same order, their degrees and the edge count.
func TestPackedSideSameLists(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 1 + rng.Intn(6)
		g := newRandGraph(rng, procs, 40+rng.Intn(400), 0.2, 4)
		onRandRanks(t, rng, g, 1+rng.Intn(procs), func(c comm.Comm, loc []NodeRef, part rankPart, whole *DAG) error {
			ins, err := buildRandOpts(c, g, loc, part, BuildOptions{InsOnly: true})
			if err != nil {
				return err
			}
			outs, err := buildRandOpts(c, g, loc, part, BuildOptions{OutsOnly: true})
			if err != nil {
				return err
			}
			if ins.inPk == nil || outs.outPk == nil {
				t.Errorf("seed %d: the one-sided DAGs' lists are not packed", seed)
			}
			for n := int32(0); n < whole.Len(); n++ {
				if !slices.Equal(ins.Ins(n), whole.Ins(n)) || ins.InDegree(n) != whole.InDegree(n) || ins.OutDegree(n) != whole.OutDegree(n) {
					t.Errorf("seed %d rank %d node %d InsOnly: ins %v (%d), whole %v; outputs %d, whole %d", seed, c.Rank(), n, ins.Ins(n), ins.InDegree(n), whole.Ins(n), ins.OutDegree(n), whole.OutDegree(n))
				}
				if !slices.Equal(outs.Outs(n), whole.Outs(n)) || outs.OutDegree(n) != whole.OutDegree(n) || outs.InDegree(n) != whole.InDegree(n) {
					t.Errorf("seed %d rank %d node %d OutsOnly: outs %v (%d), whole %v; inputs %d, whole %d", seed, c.Rank(), n, outs.Outs(n), outs.OutDegree(n), whole.Outs(n), outs.InDegree(n), whole.InDegree(n))
				}
			}
			if ins.Edges() != whole.Edges() || outs.Edges() != whole.Edges() {
				t.Errorf("seed %d rank %d: edges %d InsOnly, %d OutsOnly, %d whole", seed, c.Rank(), ins.Edges(), outs.Edges(), whole.Edges())
			}
			return nil
		})
	}
}

// TestBuildRelease: Release comes once on every rank of two or more, with
// the declarations dropped (the builder's list and keys), and never on
// one rank; a DAG built with it has the lists of one built without, and
// its error is Build's.
func TestBuildRelease(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewSource(seed))
		procs := 2 + rng.Intn(5)
		g := newRandGraph(rng, procs, 40+rng.Intn(300), 0.2, 4)
		for _, k := range []int{1, 2, procs} {
			onRandRanks(t, rng, g, k, func(c comm.Comm, loc []NodeRef, part rankPart, whole *DAG) error {
				for _, opts := range []BuildOptions{{}, {OutsOnly: true}} {
					b, resolve, err := declareRand(c, g, loc, part)
					if err != nil {
						return err
					}
					calls := 0
					opts.Resolve = resolve
					opts.Release = func() error {
						calls++
						if b.rem != nil || b.keys != nil {
							t.Errorf("seed %d k %d rank %d: Release with %d declarations and %d keys held", seed, k, c.Rank(), len(b.rem), len(b.keys))
						}
						return nil
					}
					d, err := b.Build(c, opts)
					if err != nil {
						return err
					}
					if want := min(k-1, 1); calls != want {
						t.Errorf("seed %d k %d rank %d: Release called %d times, want %d", seed, k, c.Rank(), calls, want)
					}
					for n := int32(0); n < whole.Len(); n++ {
						if !slices.Equal(d.Outs(n), whole.Outs(n)) || d.InDegree(n) != whole.InDegree(n) || !opts.OutsOnly && !slices.Equal(d.Ins(n), whole.Ins(n)) {
							t.Errorf("seed %d k %d rank %d node %d: outs %v, whole %v; ins %v, whole %v", seed, k, c.Rank(), n, d.Outs(n), whole.Outs(n), d.Ins(n), whole.Ins(n))
						}
					}
				}
				// A failed release fails the build, on every rank alike.
				b, resolve, err := declareRand(c, g, loc, part)
				if err != nil {
					return err
				}
				bad := errors.New("release failed")
				_, err = b.Build(c, BuildOptions{Resolve: resolve, Release: func() error { return bad }})
				if k > 1 && !errors.Is(err, bad) || k == 1 && err != nil {
					t.Errorf("seed %d k %d rank %d: Build with a failing Release: %v", seed, k, c.Rank(), err)
				}
				return nil
			})
		}
	}
}

// onRandRanks spreads g over k in-process ranks (partitionGraph) and
// calls fn on each with its part and the whole DAG of it, built both
// ways; an error of any rank fails the test.
func onRandRanks(t *testing.T, rng *rand.Rand, g *randGraph, k int, fn func(c comm.Comm, loc []NodeRef, part rankPart, whole *DAG) error) {
	t.Helper()
	_, loc, parts := partitionGraph(rng, g, k)
	err := inproc.Run(k, func(c comm.Comm) error {
		part := parts[c.Rank()]
		whole, err := buildRandOpts(c, g, loc, part, BuildOptions{})
		if err != nil {
			return err
		}
		return fn(c, loc, part, whole)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSlotPeer: a slot's peer, found in the peers' ranges of slots, is the
// peer whose range holds it, with peers of no slot anywhere among them
// (first, last, in a row) and a single rank.
func TestSlotPeer(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 200; trial++ {
		k := 1 + rng.Intn(40)
		g := &DAG{peerBase: make([]int32, k+1)}
		for q := 0; q < k; q++ {
			n := int32(0)
			if rng.Intn(3) > 0 {
				n = int32(rng.Intn(5))
			}
			g.peerBase[q+1] = g.peerBase[q] + n
		}
		for q := 0; q < k; q++ {
			for s := g.peerBase[q]; s < g.peerBase[q+1]; s++ {
				if p := g.slotPeer(s); p != int32(q) {
					t.Fatalf("peerBase %v: slot %d on peer %d, want %d", g.peerBase, s, p, q)
				}
				if p, i := g.slotAddr(s); p != int32(q) || i != uint32(s-g.peerBase[q]) {
					t.Fatalf("peerBase %v: slot %d at (%d, %d), want (%d, %d)", g.peerBase, s, p, i, q, s-g.peerBase[q])
				}
			}
		}
	}
}

// TestSlotsOf: slotsOf ranks exactly the slots of each direction, on and
// off word boundaries, and a column over them holds a value each.
func TestSlotsOf(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, n := range []int32{0, 1, 2, 63, 64, 65, 127, 128, 129, 1000} {
		for trial := 0; trial < 4; trial++ {
			g := &DAG{slotNode: make([]int32, n), slotOut: newSlotBits(n)}
			for s := range n {
				if trial == 1 || trial > 1 && rng.Intn(2) == 0 {
					g.slotOut.set(s)
				}
			}
			for _, out := range []bool{false, true} {
				set := slotsOf(g, out)
				c := newSlotCol(set)
				count := int32(0)
				for s := range n {
					i, ok := set.Rank(s)
					if ok != (g.slotIsOut(s) == out) || ok && i != count {
						t.Fatalf("n %d trial %d out %v: slot %d ranked %d, %v", n, trial, out, s, i, ok)
					}
					if ok {
						c.set(s, int64(s)+1)
						count++
					}
				}
				if set.Len() != count || int32(len(c.v)) != count {
					t.Fatalf("n %d trial %d out %v: %d members, %d values, want %d", n, trial, out, set.Len(), len(c.v), count)
				}
				for s := range n {
					if g.slotIsOut(s) == out && c.get(s) != int64(s)+1 {
						t.Fatalf("n %d: slot %d holds %d", n, s, c.get(s))
					}
				}
			}
		}
	}
}

// TestEntryCodes: entries far from their node, both ways, and slots up to
// the largest, decode to themselves.
func TestEntryCodes(t *testing.T) {
	nodes := []int32{0, 1, 1000, math.MaxInt32 - 1}
	entries := []Entry{0, 1, 127, 128, 1 << 20, math.MaxInt32 - 1, Entry(^int32(0)), Entry(^int32(63)), Entry(^int32(64)), Entry(^int32(math.MaxInt32 - 1))}
	for _, n := range nodes {
		var buf []byte
		for _, e := range entries {
			b := make([]byte, 10)
			k := putEntry(b, n, e)
			if k != entryLen(n, e) {
				t.Errorf("node %d entry %d: %d bytes written, entryLen %d", n, e, k, entryLen(n, e))
			}
			buf = append(buf, b[:k]...)
		}
		if got := appendEntries(nil, n, buf); !slices.Equal(got, entries) {
			t.Errorf("node %d: decoded %v, want %v", n, got, entries)
		}
		if c := countEntries(buf); c != int32(len(entries)) {
			t.Errorf("node %d: %d entries counted, want %d", n, c, len(entries))
		}
	}
}

// TestPackedSideLongLists: a node whose packed list is 64 KiB or more (a
// join of 30 000 nodes far away, 3 bytes an entry) makes the build take
// int32 offsets, and two neighbours of 39 KiB each shorter blocks of
// 16-bit offsets; either way, built InsOnly and OutsOnly, every node's
// list is the whole DAG's, in order, with its degrees, and so are the
// lists of the nodes around them and the remote slots' entries (two
// ranks).
func TestPackedSideLongLists(t *testing.T) {
	const n = 200_000
	for _, mode := range []string{"short", "blocks", "wide"} {
		long, nodes := map[string]int{"short": 0, "blocks": 13_000, "wide": 30_000}[mode], map[string]int32{"short": 1, "blocks": 2, "wide": 1}[mode]
		err := inproc.Run(2, func(c comm.Comm) error {
			build := func(opts BuildOptions) (*DAG, error) {
				b := NewBuilder(c.Rank(), c.Size())
				for i := range n {
					b.AddNode(i%7 != 0)
				}
				rng := rand.New(rand.NewSource(int64(long) + int64(c.Rank())))
				// Long lists into nodes 100.. and out of nodes 150 000..,
				// from and to nodes 5 000 or more away (3 bytes an entry).
				for j := range nodes {
					for k := range long {
						b.AddEdge(int32(6000+k*3)+j, 100+j)
						b.AddEdge(150_000+j, int32(k*4)+j)
					}
				}
				for range 50_000 {
					s := rng.Int31n(n - 1)
					b.AddEdge(s, s+1+rng.Int31n(min(n-1-s, 3000)))
				}
				for k := range 300 {
					b.AddRemoteIn(int32(k*600), NodeRef{Rank: 1 - c.Rank(), Node: int32(k * 500)})
				}
				return b.Build(c, opts)
			}
			whole, err := build(BuildOptions{})
			if err != nil {
				return err
			}
			ins, err := build(BuildOptions{InsOnly: true})
			if err != nil {
				return err
			}
			outs, err := build(BuildOptions{OutsOnly: true})
			if err != nil {
				return err
			}
			for v := range int32(n) {
				if !slices.Equal(ins.Ins(v), whole.Ins(v)) || ins.InDegree(v) != whole.InDegree(v) || ins.OutDegree(v) != whole.OutDegree(v) {
					t.Errorf("%s: rank %d node %d InsOnly: %d inputs, whole %d; outputs %d, whole %d", mode, c.Rank(), v, ins.InDegree(v), whole.InDegree(v), ins.OutDegree(v), whole.OutDegree(v))
					return nil
				}
				if !slices.Equal(outs.Outs(v), whole.Outs(v)) || outs.OutDegree(v) != whole.OutDegree(v) || outs.InDegree(v) != whole.InDegree(v) {
					t.Errorf("%s: rank %d node %d OutsOnly: %d outputs, whole %d; inputs %d, whole %d", mode, c.Rank(), v, outs.OutDegree(v), whole.OutDegree(v), outs.InDegree(v), whole.InDegree(v))
					return nil
				}
			}
			if whole.InDegree(100) < int32(long) || whole.OutDegree(150_000) < int32(long) {
				t.Errorf("%s: the long lists hold %d and %d entries", mode, whole.InDegree(100), whole.OutDegree(150_000))
			}
			// The DAG keeps a byte a node but in the blocks of 16 nodes
			// that hold the long lists (byteOffsets).
			wideIns, wideOuts := len(ins.inAt.wide)>>byteBlockBits, len(outs.outAt.wide)>>byteBlockBits
			if want := map[string]int{"short": 0, "blocks": 1, "wide": 1}[mode]; wideIns != want || wideOuts != want {
				t.Errorf("%s: %d and %d blocks of int32 offsets, want %d", mode, wideIns, wideOuts, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPairMapPassEnds: a mapped list's map hears the end of each pass
// over it (an empty batch), before the next list's batches, so that what
// it made for the pass can go: two ends for a build's two passes.
func TestPairMapPassEnds(t *testing.T) {
	err := inproc.Run(1, func(c comm.Comm) error {
		var log []string
		mapper := func(name string) PairMap {
			return func(as, bs []int32) int {
				if len(as) == 0 {
					log = append(log, name+" end")
					return 0
				}
				log = append(log, name)
				return len(as)
			}
		}
		b := NewBuilder(0, 1)
		for range 1000 {
			b.AddNode(false)
		}
		for _, name := range []string{"a", "b"} {
			var p packed.Pairs
			for k := range int32(300) { // two batches
				p.Append(k, k+1+k%5)
			}
			b.AddPairsMapped(p, 0, mapper(name))
		}
		if _, err := b.Build(c, BuildOptions{OutsOnly: true}); err != nil {
			return err
		}
		want := strings.Fields("a a a_end b b b_end a a a_end b b b_end")
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], "_", " ")
		}
		if !slices.Equal(log, want) {
			t.Errorf("calls %q, want %q", log, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BuildOptions.Check is called as often on every rank, whatever the
// declarations each makes (none on rank 0, 60 and 120 on the others): eight
// times along the declarations' messages and once after those received
// are read; its error at any of them stops the build on every rank.
func TestBuildChecksStopEveryRank(t *testing.T) {
	const k, points = 3, 9
	for stopAt := 0; stopAt <= points; stopAt++ {
		stops := commtest.NewStops(k, stopAt)
		err := inproc.Run(k, func(c comm.Comm) error {
			r := c.Rank()
			b := NewBuilder(r, k)
			for range 200 {
				b.AddNode(false)
			}
			for j := range 60 * r {
				b.AddRemoteInKey(int32(j), (r+1)%k, Key{A: int64(j), B: 1})
			}
			_, stops.Errs[r] = b.Build(c, BuildOptions{
				Resolve: func(key Key) (int32, bool) { return int32(key.A), key.B == 1 },
				Check:   stops.Check(r)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stops.Verify(t, "build", points)
	}
}
