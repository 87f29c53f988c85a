package graph

import (
	"math"
	"math/rand"
	"testing"
)

// TestNodeTimes appends times of every shape (close, spanning more than
// an int32 from a block's first, the marks' values, process boundaries,
// zeros of collective nodes) past the reserved room, and reads each back.
func TestNodeTimes(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const epoch = int64(1_700_000_000) * 1e9
	var want []int64
	var nt nodeTimes
	nt.reserve(10000) // less than what follows: add grows the store
	add := func(x int64) {
		want = append(want, x)
		nt.add(x)
	}
	at := epoch
	for p := range 20 { // processes: each 3 s later, their nodes µs apart
		at = epoch + int64(p)*3e9
		for range 3000 {
			at += rng.Int63n(5000)
			add(at)
		}
	}
	add(math.MinInt64)
	add(math.MinInt64 + 1)
	add(math.MaxInt64)
	add(-5)
	for range 100 {
		add(0)
	}
	if int(nt.n) != len(want) {
		t.Fatalf("%d times held, %d added", nt.n, len(want))
	}
	for i, x := range want {
		if got := nt.at(int32(i)); got != x {
			t.Fatalf("time %d: %d, want %d", i, got, x)
		}
	}
	if nt.v.wide != nil {
		t.Errorf("20 processes of 3000 close nodes each made the store wide")
	}
	if b := 4 * nt.v.len(); len(nt.v.off)*4+len(nt.v.base)*8 > b+b/10 {
		t.Errorf("narrow store takes %d bytes for %d times", len(nt.v.off)*4+len(nt.v.base)*8, nt.v.len())
	}
}

// TestNodeTimesWiden: times that no block holds narrow (each node a
// process of its own, 10 s apart) still read back, from a wide store.
func TestNodeTimesWiden(t *testing.T) {
	var nt nodeTimes
	nt.reserve(4096)
	for i := range int64(4096) {
		nt.add(i * 10e9 * (1 - 2*(i%2)))
	}
	for i := range int64(4096) {
		if got, want := nt.at(int32(i)), i*10e9*(1-2*(i%2)); got != want {
			t.Fatalf("time %d: %d, want %d", i, got, want)
		}
	}
	if nt.v.wide == nil {
		t.Errorf("no block narrow, yet the store stayed narrow")
	}
}
