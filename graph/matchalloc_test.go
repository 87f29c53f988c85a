package graph

import (
	"runtime"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/partition"
)

// TestMatchAllocBytes bounds the bytes Match allocates per node on one
// rank: the node columns (9.3 bytes a node where a thread's event
// indices fit 16 bits from their block's first, 12 before), the records of the join (a
// message's two varint records, about 6 bytes each, and its receive's
// sender, 4; a collective member's varints, about 14 bytes, written in
// chunks then in one buffer, and 4 for where it starts), the edges (8 a
// local one) and the DAG's arrays. Each cause of the twenty-fourth round
// (docs/PERFORMANCE.md) breaks it: a key escaping to the heap per receive
// (32 bytes, twice), collective records decoded into copies (56 bytes a
// member) or sorted as such, columns or edge lists grown by doubling
// after the scan, 40-byte edge declarations.
func TestMatchAllocBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("generates traces")
	}
	for _, c := range []struct {
		cfg     gen.Config
		perNode float64
	}{
		// Measured 45.4 and 66.2 with the join's records as varints
		// (twenty-ninth round); 62.9 (spread, whose event column moves to 4 bytes a
		// node: its threads' indices interleave) and 71.4 (mpi) bytes a
		// node with the threads a byte and the event indices 2 bytes
		// (twenty-sixth round), 61.7 and 74.3 with the recorded times
		// narrow, 65.5 and 78.1 before, 75.5 and 152.5 before the
		// twenty-fourth round (allocations are deterministic; the scans'
		// buffers are a fixed part on traces this small).
		{gen.Config{Workload: "spread", Ranks: 8, Threads: 2, Radix: 5, Events: 400_000, Seed: 7}, 47},
		{gen.Config{Workload: "mpi", Ranks: 16, Events: 400_000, Seed: 7}, 68},
	} {
		t.Run(c.cfg.Workload, func(t *testing.T) {
			if raceBuild {
				t.Skip("the race detector's allocations would count")
			}
			procs := genProcs(t, c.cfg)
			plan, err := partition.Assign(make([]int64, len(procs)), 1)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			var nodes int32
			runtime.GC()
			runtime.ReadMemStats(&before)
			err = inproc.Run(1, func(c comm.Comm) error {
				m, err := Match(c, plan, procs, MatchOptions{})
				if err == nil {
					nodes = m.Len()
				}
				return err
			})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			per := float64(after.TotalAlloc-before.TotalAlloc) / float64(nodes)
			t.Logf("%d nodes, %.1f bytes allocated a node", nodes, per)
			if per > c.perNode {
				t.Errorf("Match allocated %.1f bytes a node, want at most %.0f", per, c.perNode)
			}
		})
	}
}
