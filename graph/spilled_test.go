package graph

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// TestBuildStreamedEdges: a fragment graph's edges streamed to a file
// (packed.Pairs.StreamTo, read back by the build a block at a time)
// build the same DAG, both sides or the outputs' alone, as the list kept
// in memory; a read that fails in the build's first pass over them, or
// only in its second, is Build's error on every rank, not a DAG short of
// edges.
func TestBuildStreamedEdges(t *testing.T) {
	const nodes = 300_000
	rng := rand.New(rand.NewPCG(32, 7))
	kept, streamed := packed.NewPairsByA(), packed.NewPairsByA()
	f := &memSpill{}
	streamed.StreamTo(f)
	for range 400_000 {
		d := rng.Int32N(nodes-1) + 1
		s := max(0, d-1-rng.Int32N(1<<uint(rng.IntN(17))))
		kept.Append(s, d)
		streamed.Append(s, d)
	}
	if kept.Bytes() < 4*64<<10 || streamed.Bytes() > 64<<10+kept.Bytes()/8 {
		t.Fatalf("%d bytes streamed stay in memory, %d kept: want a few blocks in the file", streamed.Bytes(), kept.Bytes())
	}
	build := func(c comm.Comm, p packed.Pairs, opts BuildOptions) (*DAG, error) {
		b := NewBuilder(c.Rank(), c.Size())
		for n := range nodes {
			b.AddNode(n%3 == 1)
		}
		b.AddPairs(p, 0)
		return b.Build(c, opts)
	}
	err := inproc.Run(1, func(c comm.Comm) error {
		for _, opts := range []BuildOptions{{}, {OutsOnly: true}} {
			want, err := build(c, kept, opts)
			if err != nil {
				return err
			}
			got, err := build(c, streamed, opts)
			if err != nil {
				return err
			}
			for n := range int32(nodes) {
				if !slices.Equal(got.Outs(n), want.Outs(n)) || !slices.Equal(got.Ins(n), want.Ins(n)) || got.InDegree(n) != want.InDegree(n) {
					t.Fatalf("OutsOnly %v, node %d: outs %v, want %v", opts.OutsOnly, n, got.Outs(n), want.Outs(n))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.countReads, f.okReads = true, 1<<30 // the reads of a build, counted
	_ = inproc.Run(1, func(c comm.Comm) error {
		_, err := build(c, streamed, BuildOptions{OutsOnly: true})
		return err
	})
	blocks := 1<<30 - f.okReads
	if blocks < 4 || blocks%2 != 0 {
		t.Fatalf("%d blocks read by a build's two passes", blocks)
	}
	// Reads failing in the first pass, and in the second only; on two
	// ranks, the second rank's list failing.
	for _, ok := range []int{0, blocks/2 - 1, blocks / 2, blocks - 1} {
		for _, opts := range []BuildOptions{{}, {OutsOnly: true}} {
			err := inproc.Run(2, func(c comm.Comm) error {
				p := kept
				if c.Rank() == 1 {
					f.okReads = ok
					p = streamed
				}
				_, err := build(c, p, opts)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "reading edges") {
				t.Errorf("reads failing after %d of %d blocks, OutsOnly %v: err = %v", ok, blocks, opts.OutsOnly, err)
			}
		}
	}
}

// TestParkDAG: a DAG's CSR arrays parked in a file come back as they
// were, both sides or the outputs' alone (its inputs dropped before);
// reading the edges while parked panics rather than finding none; a
// failed read back is Unpark's error; a DAG built OutsOnly has no CSR
// arrays to park.
func TestParkDAG(t *testing.T) {
	const nodes = 50_000
	rng := rand.New(rand.NewPCG(32, 9))
	err := inproc.Run(1, func(c comm.Comm) error {
		for _, mode := range []string{"both", "outputs", "outs only", "failing"} {
			b := NewBuilder(c.Rank(), c.Size())
			for n := range nodes {
				b.AddNode(n%5 == 1)
			}
			for range 80_000 {
				d := rng.Int32N(nodes-1) + 1
				b.AddEdge(max(0, d-1-rng.Int32N(3000)), d)
			}
			g, err := b.Build(c, BuildOptions{OutsOnly: mode == "outs only"})
			if err != nil {
				return err
			}
			if mode == "outputs" {
				g.DropInputs()
			}
			var ins, outs [][]Entry
			for n := range int32(nodes) {
				ins, outs = append(ins, g.Ins(n)), append(outs, g.Outs(n))
			}
			f := &memSpill{}
			if err := g.Park(f); err != nil {
				return err
			}
			if mode == "outs only" {
				if len(f.b) != 0 || g.parked != nil {
					t.Errorf("%s: %d bytes parked", mode, len(f.b))
				}
				continue
			}
			if len(f.b) < 4*(nodes+80_000) {
				t.Errorf("%s: %d bytes parked", mode, len(f.b))
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: the edges of a parked DAG read without a panic", mode)
					}
				}()
				g.Outs(7)
			}()
			if mode == "failing" {
				f.countReads, f.okReads = true, 2
				if err := g.Unpark(); err == nil || !strings.Contains(err.Error(), "parked DAG") {
					t.Errorf("%s: Unpark from a failing file: %v", mode, err)
				}
				continue
			}
			if err := g.Unpark(); err != nil {
				return err
			}
			for n := range int32(nodes) {
				if !slices.Equal(g.Ins(n), ins[n]) || !slices.Equal(g.Outs(n), outs[n]) {
					t.Fatalf("%s: node %d back with ins %v outs %v, want %v %v", mode, n, g.Ins(n), g.Outs(n), ins[n], outs[n])
				}
			}
			if mode == "outputs" && (g.inOff != nil || g.in != nil) {
				t.Errorf("%s: dropped inputs came back", mode)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSpilledOrder: a forward replay's order streamed to the DAG's spill
// file (SpillTo) gives a backward replay in its reverse the same values
// as one kept in memory, on one rank and two; a failed read of it, of
// its first block read back or of a later one, is ReplayInReverse's
// error on every rank.
func TestSpilledOrder(t *testing.T) {
	const nodes = 150_000
	wantByRanks := map[int][2][]int64{}
	for _, ranks := range []int{1, 2} {
		for _, mode := range []string{"memory", "spilled", "failing", "failing late"} {
			var got [2][]int64
			err := inproc.Run(ranks, func(c comm.Comm) error {
				rng := rand.New(rand.NewPCG(uint64(c.Rank()), 5))
				b := NewBuilder(c.Rank(), c.Size())
				for n := range nodes {
					b.AddNode(n%9 != 0)
				}
				for range 40_000 {
					d := rng.Int32N(nodes-1) + 1
					b.AddEdge(max(0, d-1-rng.Int32N(5000)), d)
				}
				g, err := b.Build(c, BuildOptions{OutsOnly: true})
				if err != nil {
					return err
				}
				f := &failOnce{at: -1}
				if mode != "memory" {
					g.SpillTo(f)
				}
				w := make([]int64, nodes)
				for i := range w {
					w[i] = rng.Int64N(1000)
				}
				fw, err := Replay(c, g, ReplayOptions{Weights: w, RecordOrder: true, ConsumeCounts: true})
				if err != nil {
					return err
				}
				if mode != "memory" && len(f.b) < 64<<10 {
					t.Errorf("%s, %d ranks: %d bytes of the order spilled", mode, ranks, len(f.b))
				}
				switch {
				case c.Rank() != ranks-1:
				case mode == "failing":
					f.failRead = true
				case mode == "failing late":
					f.at = f.reads + 1 // the second block read back, of two
				}
				bw, err := ReplayInReverse(c, g, fw.Order, ReplayOptions{Weights: w})
				if err != nil {
					return err
				}
				got[c.Rank()] = bw.Values
				return nil
			})
			if strings.HasPrefix(mode, "failing") {
				if err == nil || !strings.Contains(err.Error(), "order") {
					t.Errorf("%d ranks: a failing read of the order: err = %v", ranks, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if mode == "memory" {
				wantByRanks[ranks] = got
				continue
			}
			for r := range ranks {
				if !slices.Equal(got[r], wantByRanks[ranks][r]) {
					t.Errorf("%d ranks: rank %d's backward values differ with the order spilled", ranks, r)
				}
			}
		}
	}
}
