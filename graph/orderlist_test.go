package graph

import (
	"io"
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

// TestNodeListBackwardStreamed: a list whose blocks went to a spill file
// as they filled (packed.Blocks.StreamTo) reads backward as added, the
// blocks read back one at a time into one buffer, and again; a read that
// fails, even once with the file's later reads succeeding, ends the list
// there: the nodes left read as the last one decoded (a node added, in
// range for the replay that indexes by it), and err says so.
func TestNodeListBackwardStreamed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := &failOnce{at: -1}
	var l nodeList
	l.blocks.StreamTo(f)
	var want []int32
	v := int32(0)
	for range 300_000 {
		switch rng.IntN(6) {
		case 0, 1, 2, 3:
			v++
		case 4:
			v = rng.Int32N(1 << 20)
		default:
			v = rng.Int32N(1 << 8)
		}
		l.add(v)
		want = append(want, v)
	}
	read := func() ([]int32, error) {
		r := l.backward()
		got := make([]int32, len(want))
		for i := range got {
			got[i] = r.next()
		}
		return got, r.err
	}
	f.reads = 0
	got, err := read()
	reads := f.reads
	if err != nil || reads < 3 {
		t.Fatalf("streamed: %d blocks read back, err %v", reads, err)
	}
	for i, x := range got {
		if x != want[len(want)-1-i] {
			t.Fatalf("streamed: node %d from the end: %d, want %d", i, x, want[len(want)-1-i])
		}
	}
	for at := range reads {
		f.at, f.reads = at, 0
		got, err := read()
		if err == nil {
			t.Fatalf("read %d of %d failing: no error", at, reads)
		}
		j := 0 // nodes read before the failure
		for j < len(got) && got[j] == want[len(want)-1-j] {
			j++
		}
		if j == 0 || j == len(got) {
			t.Fatalf("read %d of %d failing: %d of %d nodes read as added", at, reads, j, len(got))
		}
		for i := j; i < len(got); i++ {
			if got[i] != got[j-1] {
				t.Fatalf("read %d of %d failing: node %d from the end reads %d after the failure at %d, not the last decoded %d", at, reads, i, got[i], j, got[j-1])
			}
		}
	}
}

// failOnce is a spill file in memory whose read number at (from 0,
// counted in reads) fails, the others not.
type failOnce struct {
	memSpill
	at, reads int
}

func (f *failOnce) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	if f.reads-1 == f.at {
		return 0, io.ErrUnexpectedEOF
	}
	return f.memSpill.ReadAt(p, off)
}
