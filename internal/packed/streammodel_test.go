package packed

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStreamModel: random appends, reads, parks and failures on a
// streamed list against the pairs appended; and Blocks streamed and read
// back give the bytes and the block boundaries of Blocks kept.
func TestStreamModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 3))
	for trial := range 60 {
		byA := rng.IntN(2) == 0
		var p Pairs
		if byA {
			p = NewPairsByA()
		}
		f := &memSpill{failAt: []int{0, 0, 1, 2, 5, 9}[rng.IntN(6)]}
		p.StreamTo(f)
		var want [][2]int32
		a, b := int32(0), int32(0)
		for step := range 1 + rng.IntN(5) {
			n := rng.IntN(40000)
			if rng.IntN(3) == 0 {
				p.Grow(rng.IntN(50000), 2)
			}
			for range n {
				if rng.IntN(50) == 0 {
					a, b = rng.Int32(), rng.Int32() // long varints
				} else {
					b += int32(rng.IntN(5)) - 1
					a = b - int32(rng.IntN(1<<uint(rng.IntN(20))))
				}
				p.Append(a, b)
				want = append(want, [2]int32{a, b})
			}
			switch rng.IntN(4) {
			case 0:
				_ = p.Park(f)
			case 1:
				p.Trim()
			}
			got, err := readAll(&p)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("trial %d step %d: %d of %d pairs, err %v", trial, step, len(got), len(want), err)
			}
			var each [][2]int32
			p.Each(func(a, b int32) { each = append(each, [2]int32{a, b}) })
			if !slices.Equal(each, want) {
				t.Fatalf("trial %d step %d: Each %d of %d", trial, step, len(each), len(want))
			}
			if p.Len() != len(want) {
				t.Fatalf("Len %d want %d", p.Len(), len(want))
			}
		}
		// A copy (as Builder.AddPairs takes) reads the same.
		q := p
		if got, err := readAll(&q); err != nil || !slices.Equal(got, want) {
			t.Fatalf("trial %d: copy reads %d of %d", trial, len(got), len(want))
		}
	}
}

func TestBlocksStreamModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(78, 3))
	streamed := 0
	for trial := range 40 {
		var plain, st Blocks
		f := &memSpill{failAt: []int{0, 0, 1, 3, 7}[rng.IntN(5)]}
		st.StreamTo(f)
		for range rng.IntN(200000) {
			if rng.IntN(10) > 0 {
				x := byte(rng.IntN(128))
				if !plain.Put1(x) {
					bb := plain.Room(1)
					plain.Wrote(append(bb, x))
				}
				if !st.Put1(x) {
					bb := st.Room(1)
					st.Wrote(append(bb, x))
				}
				continue
			}
			k := 1 + rng.IntN(10)
			e := make([]byte, k)
			for i := range e {
				e[i] = byte(rng.IntN(256))
			}
			bb := plain.Room(k)
			plain.Wrote(append(bb, e...))
			bb = st.Room(k)
			st.Wrote(append(bb, e...))
		}
		streamed += len(f.data)
		// Read a block at a time, from the last, as a backward replay
		// reads an order, into one buffer.
		pl := plain.List()
		if st.NumBlocks() != len(pl) {
			t.Fatalf("trial %d: %d blocks, want %d", trial, st.NumBlocks(), len(pl))
		}
		var buf []byte
		for k := len(pl) - 1; k >= 0; k-- {
			b, err := st.Block(k, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pl[k], b) {
				t.Fatalf("trial %d: block %d differs (%d vs %d bytes)", trial, k, len(b), len(pl[k]))
			}
		}
	}
	if streamed == 0 {
		t.Fatal("no block was streamed")
	}
}
