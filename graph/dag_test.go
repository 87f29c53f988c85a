package graph

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/packed"
)

// TestAddEdgesKeepsDeclarationOrder builds one graph with edges added one
// by one and the same graph with a run handed over packed by AddPairs
// between single edges: the CSR rows (whose order decides untied inputs)
// match.
func TestAddEdgesKeepsDeclarationOrder(t *testing.T) {
	type edge struct{ s, d int32 }
	first := []edge{{0, 3}, {1, 3}}
	run := []edge{{2, 3}, {0, 2}, {1, 2}} // nodes 4.. of the second half, base 4
	last := []edge{{3, 7}, {0, 5}}
	build := func(c comm.Comm, packedRun bool, opts BuildOptions) *DAG {
		b := NewBuilder(c.Rank(), c.Size())
		for range 8 {
			b.AddNode(false)
		}
		for _, e := range first {
			b.AddEdge(e.s, e.d)
		}
		if packedRun {
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
		one, bulk := build(c, false, BuildOptions{}), build(c, true, BuildOptions{})
		// Built OutsOnly: the same outputs, the inputs' counts only.
		outs := build(c, true, BuildOptions{OutsOnly: true})
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
