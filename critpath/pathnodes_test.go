package critpath

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ptrace-dev/ptrace/report"
)

// TestPathNodesRoundTrip: a path summary's node lists come back from
// msgpack as they went, extremes and empty names included, and an empty
// list as none.
func TestPathNodesRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"", "task", "mpi", "MPI_Waitall", "région ✓"}
	var ns pathNodes
	var start int64
	for range 5000 {
		start += rng.Int64N(1e6) - 1e5 // starts mostly increase, not always
		ns = append(ns, report.PathNode{Rank: rng.IntN(5000), Thread: rng.IntN(300) - 1,
			Kind: names[rng.IntN(len(names))], Construct: names[rng.IntN(len(names))], StartNS: start, DurNS: rng.Int64N(1e9)})
	}
	ns = append(ns, report.PathNode{Rank: math.MaxInt32, Thread: -1, StartNS: math.MinInt64, DurNS: math.MaxInt64},
		report.PathNode{StartNS: math.MaxInt64, DurNS: math.MinInt64})
	in := []pathSummary{{Nodes: 3, Longest: ns[:20]}, {Longest: ns}}
	b, err := msgpack.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []pathSummary
	if err := msgpack.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip differs:\n%+v\n%+v", out[1], in[1])
	}
}

// FuzzDecodePathNodes: any bytes decode to nodes or an error, without
// panicking or allocating past what the bytes can hold; what decodes
// encodes back to the same nodes.
func FuzzDecodePathNodes(f *testing.F) {
	f.Add(appendPathNodes(nil, []report.PathNode{{Rank: 1, Thread: 2, Kind: "mpi", Construct: "MPI_Send", StartNS: 5, DurNS: 7}}))
	f.Add([]byte{0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		ns, err := decodePathNodes(b)
		if err != nil {
			return
		}
		again, err := decodePathNodes(appendPathNodes(nil, ns))
		if err != nil || !reflect.DeepEqual(again, ns) {
			t.Fatalf("re-encoded %d nodes: %v", len(ns), err)
		}
	})
}
