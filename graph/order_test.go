package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/trace"
)

type visited struct {
	th   int
	idx  int64
	time int64
	kind trace.Kind
	args [trace.CommArgs]int64
}

// TestCommWalkOrder checks that the communication log gives the matching
// the events and the order the merged walk of the chunks gives, on traces
// whose threads have events at equal times (no jitter: every task of a
// step ends at the same instant), where the walk's tie-breaking reads the
// events around the communication ones.
func TestCommWalkOrder(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "stencil", Ranks: 3, Threads: 4, Width: 24, Steps: 12, LatencyNS: 0},
		{Workload: "spread", Ranks: 4, Threads: 3, Width: 16, Steps: 8, Radix: 3, LatencyNS: 500},
		{Workload: "halo", Ranks: 4, Threads: 3, Iterations: 6, LatencyNS: 1000},
		{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 5, Exchange: "allreduce", Jitter: 0.3},
	}
	ties, pre := 0, int64(0)
	for _, cfg := range cfgs {
		for _, p := range genProcs(t, cfg) {
			if !p.HasCommLog() {
				t.Fatalf("%s rank %d: the load kept no communication log", cfg.Workload, p.Header.Rank)
			}
			want, got := walkBoth(t, p)
			if len(got) != len(want) {
				t.Fatalf("%s rank %d: %d events from the log, %d from the chunks", cfg.Workload, p.Header.Rank, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s rank %d: event %d of the walk: log %+v, chunks %+v", cfg.Workload, p.Header.Rank, i, got[i], want[i])
				}
				if i > 0 && want[i].time == want[i-1].time && want[i].th != want[i-1].th {
					ties++
				}
			}
			for th := range p.NumThreads() {
				sc, _ := p.CommScan(th)
				for sc.Next() {
					pre += sc.Pre()
				}
			}
			p.DropCommLog()
			if p.HasCommLog() {
				t.Fatal("DropCommLog kept the log")
			}
		}
	}
	// The cases the log's merge exists for did occur.
	if ties == 0 || pre == 0 {
		t.Fatalf("no tie between threads (%d) or no event before a communication event at its time (%d): the test checks nothing", ties, pre)
	}
	t.Logf("%d ties between threads, %d events counted before communication events", ties, pre)
}

// walkBoth returns p's communication events as the merged walk of the
// chunks visits them and as commWalk does.
func walkBoth(t *testing.T, p *trace.Process) (want, got []visited) {
	t.Helper()
	rec := func(out *[]visited) func(th int, idx int64, e *trace.Event) {
		return func(th int, idx int64, e *trace.Event) {
			switch e.Kind {
			case trace.MPISend, trace.MPIRecv, trace.CollBegin, trace.CollEnd, trace.RemoteDepOut, trace.RemoteDepIn:
			default:
				return
			}
			v := visited{th: th, idx: idx, time: e.Time, kind: e.Kind}
			copy(v.args[:], e.Args[:trace.CommArgs])
			*out = append(*out, v)
		}
	}
	w := rec(&want)
	var pool trace.Scans
	if _, err := mergeWalk(p, &pool, false, true, func(_ int64, th int, idx int64, e *trace.Event) { w(th, idx, e) }); err != nil {
		t.Fatal(err)
	}
	if err := commWalk(p, &pool, rec(&got)); err != nil {
		t.Fatal(err)
	}
	return want, got
}

// TestCommWalkTies merges random threads crowded at a few instants, with
// sends, receives and other events at equal times (the three tie classes),
// against the merged walk: a merge of the communication events alone,
// without the events counted before them, differs on most seeds.
func TestCommWalkTies(t *testing.T) {
	kinds := []trace.Kind{trace.RegionEnter, trace.RegionEnter, trace.MPISend, trace.MPIRecv, trace.RemoteDepOut, trace.RemoteDepIn, trace.CollBegin, trace.CollEnd}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		rows := make([][]trace.Event, 1+rng.IntN(5))
		for th := range rows {
			tm := int64(0)
			for range rng.IntN(30) {
				tm += int64(rng.IntN(2))
				e := trace.Event{Time: tm, Kind: kinds[rng.IntN(len(kinds))]}
				for a := range trace.CommArgs {
					e.Args[a] = rng.Int64N(2000) - 1000
				}
				rows[th] = append(rows[th], e)
			}
		}
		p := mkProc(trace.Header{}, trace.Tables{}, rows)
		if !p.HasCommLog() {
			t.Fatalf("seed %d: no communication log", seed)
		}
		want, got := walkBoth(t, p)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d events from the log, %d from the chunks", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: event %d of the walk: log %+v, chunks %+v", seed, i, got[i], want[i])
			}
		}
	}
}
