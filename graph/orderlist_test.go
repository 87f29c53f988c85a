package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNodeListBackward: nodes read backward come out as added, reversed,
// whatever the jumps between them (chains, long jumps both ways, the
// extremes of int32).
func TestNodeListBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var want []int32
	var l nodeList
	v := int32(0)
	for i := 0; i < 100000; i++ {
		switch rng.IntN(5) {
		case 0, 1, 2:
			v++
		case 3:
			v = rng.Int32N(1 << 20)
		default:
			v = []int32{0, math.MaxInt32, math.MinInt32 + 1, -1, 1 << 30}[rng.IntN(5)]
		}
		l.add(v)
		want = append(want, v)
	}
	if l.len() != len(want) {
		t.Fatalf("len %d, want %d", l.len(), len(want))
	}
	r := l.backward()
	for i := len(want) - 1; i >= 0; i-- {
		if got := r.next(); got != want[i] {
			t.Fatalf("node %d from the end: %d, want %d", len(want)-1-i, got, want[i])
		}
	}
	if r.bi != 0 || r.end != 0 {
		t.Fatalf("bytes left after reading every node: block %d, %d bytes", r.bi, r.end)
	}
	// The list is unchanged: a second reader reads it again.
	r2 := l.backward()
	for i := len(want) - 1; i >= 0; i-- {
		if got := r2.next(); got != want[i] {
			t.Fatalf("second reading, node %d from the end: %d, want %d", len(want)-1-i, got, want[i])
		}
	}
	if b := l.blocks.Bytes(); b > len(want)*3 {
		t.Fatalf("%d bytes for %d nodes, 60 %% of them a chain step", b, len(want))
	}
}
