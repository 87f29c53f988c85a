package waitstate

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestEdgeRows: every row of the matched predecessors finds its node, and
// every node its row, whether the rows come in the order of their nodes
// (as the exchange lists them: one walk) or not (looked up).
func TestEdgeRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tr")
	if _, err := gen.Generate(dir, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 5, Jitter: 0.2, LatencyNS: 1000}); err != nil {
		t.Fatal(err)
	}
	var procs []*trace.Process
	for r := range 4 {
		p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(r)), trace.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	err := inproc.Run(1, func(c comm.Comm) error {
		m, err := graph.Match(c, oneRank{}, procs, graph.MatchOptions{})
		if err != nil {
			return err
		}
		edges, err := graph.ExchangeEdges(c, m, m.Recorded)
		if err != nil {
			return err
		}
		a := New(m)
		check := func(what string, edges []graph.RemoteEdges) {
			rows, nodes := a.edgeRows(edges)
			found := 0
			for i := range edges {
				e := &edges[i]
				for k := range e.Len() {
					v := nodes[i][k]
					if v < 0 || m.ThreadOf(v) != e.Thread[k] || m.EventOf(v) != e.EventAt(k) || rows[v] != int32(k) {
						t.Fatalf("%s: process %d row %d (thread %d event %d): node %d", what, i, k, e.Thread[k], e.EventAt(k), v)
					}
					found++
				}
			}
			n := 0
			for _, k := range rows {
				if k >= 0 {
					n++
				}
			}
			if n != found || found == 0 {
				t.Fatalf("%s: %d nodes with a row, %d rows", what, n, found)
			}
		}
		check("node order", edges)
		// The same rows, each process's reversed.
		rev := make([]graph.RemoteEdges, len(edges))
		for i, e := range edges {
			r := graph.RemoteEdges{Thread: slices.Clone(e.Thread)}
			slices.Reverse(r.Thread)
			for k := e.Len() - 1; k >= 0; k-- {
				r.Event.Append(e.EventAt(k))
			}
			rev[i] = r
		}
		check("reversed", rev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
