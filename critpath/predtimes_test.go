package critpath

import (
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// PredTimes answers the latest predecessor time of an event with several
// rows (a completion that waited for a member's progress), whatever the
// rows' order and the lookups': in each thread's event order as the
// simulation asks, with repeats, and out of it.
func TestPredTimesLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var e graph.RemoteEdges
	type key struct {
		th  int
		idx int64
	}
	want := map[key]int64{}
	for k := range 3000 {
		th := rng.IntN(4) - 1 // −1: a row without a thread, never looked up
		idx := int64(rng.IntN(5000))
		tm := int64(k)*10 + 1
		if k%2 == 1 {
			tm = rng.Int64N(30000) + 1 // rows not in time order
		}
		e.Append(int32(th), idx, trace.RemoteDepIn, 1, 0, 0, trace.RemoteDepOut, tm)
		if th >= 0 {
			want[key{th, idx}] = max(want[key{th, idx}], tm)
		}
	}
	check := func(f sim.PredTime, th int, idx int64) {
		t.Helper()
		got, ok := f(th, idx)
		w, wok := want[key{th, idx}]
		if ok != wok || got != w {
			t.Fatalf("thread %d event %d: (%d, %v), want (%d, %v)", th, idx, got, ok, w, wok)
		}
	}
	var buf PredBuf
	f := PredTimes([]graph.RemoteEdges{e}, 0, &buf)
	for th := range 5 { // every event of each thread, in order, twice each
		for idx := int64(-1); idx <= 5001; idx++ {
			check(f, th, idx)
			check(f, th, idx)
		}
	}
	f = PredTimes([]graph.RemoteEdges{e}, 0, &buf) // a fresh lookup, asked at random
	for range 20000 {
		check(f, rng.IntN(6)-1, int64(rng.IntN(5100))-50)
	}
}
