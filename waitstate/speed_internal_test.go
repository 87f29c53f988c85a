package waitstate

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A thread's nodes listed, or the process's range where they are all on
// it, give the same nodes in the same order.
func TestThreadNodes(t *testing.T) {
	r := &callRecorder{nodes: [][]int32{nil, {3, 5, 8}, nil}, sole: 2, lo: 10, hi: 14}
	var got []int32
	for v := range r.threadNodes(1).all() {
		got = append(got, v)
	}
	if !slices.Equal(got, []int32{3, 5, 8}) {
		t.Errorf("thread 1: %v", got)
	}
	ns := r.threadNodes(2)
	got = got[:0]
	for k := range ns.len() {
		got = append(got, ns.at(k))
	}
	if !slices.Equal(got, []int32{10, 11, 12, 13}) {
		t.Errorf("thread 2 (the sole one): %v", got)
	}
	if n := r.threadNodes(0).len(); n != 0 {
		t.Errorf("thread 0: %d nodes", n)
	}
}

// siteKind classifies a call site's function once, as blockingSend and
// waitCall do by name (case-insensitively).
func TestSiteKind(t *testing.T) {
	names := []string{"MPI_Send", "mpi_ssend", "MPI_Bsend", "MPI_Isend", "MPI_Wait", "MPI_WAITALL",
		"mpi_waitany", "MPI_Waitsome", "MPI_Test", "MPI_Recv", "<undefined string>"}
	tb := &trace.Tables{Strings: names}
	var c calls
	for j := range names {
		c.sites = append(c.sites, site{fn: int64(j), loc: -1, region: -1})
	}
	c.sites = append(c.sites, site{fn: 99, loc: -1, region: -1}) // outside the table
	// The second pass from what the first kept.
	for pass := range 2 {
		for st, s := range c.sites {
			fn := tb.String(s.fn)
			k := c.siteKind(tb, int32(st))
			if got, want := k&siteSends != 0, blockingSend(fn); got != want {
				t.Errorf("pass %d: %q: a blocking send %v, want %v", pass, fn, got, want)
			}
			if got, want := k&siteWaits != 0, waitCall(fn); got != want {
				t.Errorf("pass %d: %q: a wait %v, want %v", pass, fn, got, want)
			}
		}
	}
}

// makeCollComms skips its stable sort where the collective calls come in
// call order already (a one-thread process's): the communicator of every
// call, the first of a call's in node order, is the sort's either way.
func TestCollCommsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sorted := range []bool{true, false} {
		var cs []callComm
		for k := int32(0); k < 300; k++ {
			for range rng.IntN(3) { // 0 to 2 collectives a call
				cs = append(cs, callComm{call: k, comm: int32(rng.IntN(5))})
			}
		}
		if !sorted {
			// Interleaved threads: runs out of call order.
			rng.Shuffle(len(cs), func(a, b int) { cs[a], cs[b] = cs[b], cs[a] })
		}
		want := map[int32]int32{}
		for _, c := range cs {
			// The first in node order holds the call's communicator
			// (stably sorted, then compacted).
			if _, ok := want[c.call]; !ok {
				want[c.call] = c.comm
			}
		}
		in := slices.Clone(cs)
		got := makeCollComms(in, 300)
		for k := int32(0); k < 300; k++ {
			cm, ok := got.of(k)
			w, wok := want[k]
			if ok != wok || ok && cm != w {
				t.Fatalf("sorted %v: call %d: communicator %d, %v; want %d, %v", sorted, k, cm, ok, w, wok)
			}
		}
		if sorted && !slices.IsSortedFunc(cs, func(x, y callComm) int { return cmp.Compare(x.call, y.call) }) {
			t.Fatal("the sorted case is not sorted")
		}
	}
}
