package driver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/report/timeline"
)

// Every output of the critical path places an MPI call's node where its
// weight happened, its tail after its wait for its partner (as off_path
// does): in relayTrace, rank 1's receive (entered at 100) weighs
// [500, 530], after rank 0's send at 500, and rank 2's (entered at 120)
// [535, 565]. Placed from their enter, the segments, the longest nodes,
// the whole path and the timeline's slices drew the 400 and 415 ns of
// waiting as critical and missed the tails. (Rank 2's segment is its
// receive and computation merged, [535, 1000].)
func TestPathPlacesMPITail(t *testing.T) {
	dir := relayTrace(t)
	want := map[int]report.PathNode{ // rank → its receive's node
		1: {Rank: 1, Kind: "mpi", Construct: "MPI_Recv", StartNS: 500, DurNS: 30},
		2: {Rank: 2, Kind: "mpi", Construct: "MPI_Recv", StartNS: 535, DurNS: 30},
	}
	var first []byte
	for k := 1; k <= 3; k++ {
		var src report.PathSource
		rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true, Path: &src}, k)
		if err != nil {
			t.Fatal(err)
		}
		cp := rep.CriticalPath
		js, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			first = js
		} else if !bytes.Equal(js, first) {
			t.Errorf("k=%d: critical path differs from k=1:\n%s\n%s", k, js, first)
		}
		var path []report.PathNode
		if err := src(func(n report.PathNode) { path = append(path, n) }); err != nil {
			t.Fatal(err)
		}
		segs := map[int]report.PathNode{1: want[1], 2: {Rank: 2, Kind: "mixed", Construct: "MPI_Recv", StartNS: 535, DurNS: 465}}
		for name, nodes := range map[string][]report.PathNode{"segments": cp.Segments, "longest_nodes": cp.Longest, "path": path} {
			wants := want
			if name == "segments" {
				wants = segs
			}
			for r, w := range wants {
				found := false
				for _, n := range nodes {
					if n.Rank == r && n.Kind == w.Kind && n.Construct == w.Construct {
						found = true
						if n.StartNS != w.StartNS || n.DurNS != w.DurNS {
							t.Errorf("k=%d %s: rank %d's receive %+v, want start %d, dur %d", k, name, r, n, w.StartNS, w.DurNS)
						}
					}
				}
				if !found {
					t.Errorf("k=%d %s: no %s node of rank %d in %+v", k, name, w.Construct, r, nodes)
				}
			}
		}
		if k > 1 {
			continue
		}
		// The timeline draws the segments on each rank's critical-path
		// track: the receives' slices at their tails (ts in µs from the
		// first event, at 0).
		var buf bytes.Buffer
		if _, err := timeline.Export(&buf, dir, timeline.Options{CriticalPath: cp.Segments}); err != nil {
			t.Fatal(err)
		}
		var tl struct {
			TraceEvents []struct {
				Ph   string  `json:"ph"`
				Pid  int     `json:"pid"`
				Tid  int     `json:"tid"`
				Name string  `json:"name"`
				Ts   float64 `json:"ts"`
				Dur  float64 `json:"dur"`
			} `json:"traceEvents"`
		}
		if err := json.Unmarshal(buf.Bytes(), &tl); err != nil {
			t.Fatalf("timeline: %v", err)
		}
		for r, w := range segs {
			found := false
			for _, e := range tl.TraceEvents {
				if e.Ph == "X" && e.Tid == 1<<20 && e.Pid == r+1 {
					found = true
					if e.Ts != float64(w.StartNS)/1e3 || e.Dur != float64(w.DurNS)/1e3 {
						t.Errorf("timeline: rank %d's path slice %+v, want ts %g dur %g", r, e, float64(w.StartNS)/1e3, float64(w.DurNS)/1e3)
					}
				}
			}
			if !found {
				t.Errorf("timeline: no path slice of rank %d", r)
			}
		}
	}
}
