package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCounts: counts of any size, set or counted up, count down as int32s
// do, past the 4 bits and back (each node beside its neighbour in a
// byte), and a count at zero stays there.
func TestCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := []int32{0, 1, 14, 15, 16, 1000, 3, 7000, 13, 14, 255, 15, 2}
	k := newCounts(len(want))
	for n, v := range want {
		if n%2 == 0 {
			k.set(int32(n), v)
			continue
		}
		for range v { // counted up one at a time, as Build does
			k.inc(int32(n))
		}
	}
	for n, w := range want {
		if g := k.get(int32(n)); g != w {
			t.Fatalf("node %d: count %d, want %d", n, g, w)
		}
	}
	for steps := 0; steps < 200000; steps++ {
		n := int32(rng.IntN(len(want)))
		zero := k.dec(n)
		if want[n] > 0 {
			want[n]--
			if zero != (want[n] == 0) {
				t.Fatalf("node %d: dec to %d reported zero %v", n, want[n], zero)
			}
		} else if zero {
			t.Fatalf("node %d: dec at zero reported zero", n)
		}
		if g := k.get(n); g != want[n] {
			t.Fatalf("node %d: count %d, want %d", n, g, want[n])
		}
	}
	if k.large() != 0 {
		t.Fatalf("%d counts left large after all went below 15", k.large())
	}
	k.set(2, 300)
	k.set(2, 4)
	if k.get(2) != 4 || k.large() != 0 {
		t.Fatalf("set below 15 after a large count: %d, %d large", k.get(2), k.large())
	}
	// Many large counts at once: the table grows under a cell in use.
	m := newCounts(5000)
	for n := range int32(5000) {
		for range n % 40 {
			m.inc(n)
		}
	}
	for n := range int32(5000) {
		if m.get(n) != n%40 {
			t.Fatalf("node %d: %d after %d increments", n, m.get(n), n%40)
		}
	}
}

// TestChainBits: a bit per node as added, across words and after grow,
// and none past the end (nor at a negative id).
func TestChainBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var c chainBits
	var want []bool
	for i := 0; i < 1000; i++ {
		if i == 300 {
			c.grow(5000)
		}
		b := rng.IntN(3) == 0
		c.add(b)
		want = append(want, b)
	}
	for i, b := range want {
		if c.has(int32(i)) != b {
			t.Fatalf("node %d: chained %v, want %v", i, !b, b)
		}
	}
	for _, i := range []int32{-1, 1000, 1023, 1024, 1 << 20} {
		if c.has(i) {
			t.Fatalf("node %d out of range is chained", i)
		}
	}
	if c.len() != 1000 {
		t.Fatalf("len %d", c.len())
	}
}

// TestPackOffsets: offsets come back exactly, with blocks of 64 nodes when
// their lists are short, shorter blocks around a node whose list is long.
func TestPackOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, big := range []int32{0, 65500, 70000} {
		off := []int32{0}
		for i := 0; i < 5000; i++ {
			d := int32(rng.IntN(6))
			if i == 777 {
				d += big
			}
			off = append(off, off[len(off)-1]+d)
		}
		o := packOffsets(off)
		for i, v := range off {
			if got := o.at(int32(i)); got != v {
				t.Fatalf("long list %d: offset %d is %d, want %d", big, i, got, v)
			}
		}
		if ok := (big == 0) == (o.shift == maxOffsetShift); !ok {
			t.Fatalf("long list %d: blocks of %d nodes", big, 1<<o.shift)
		}
	}
}

// TestByteOffsets: a DAG's offsets, a byte a node from a base per 16,
// give every offset and span back exactly, whatever lists lie around a
// block's edges: empty ones, lists of 255 bytes to a block (the most a
// byte holds), 256 (a block of int32 offsets), a long one, a last block
// short or whole.
func TestByteOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 4))
	for trial := range 40 {
		n := []int{0, 1, 15, 16, 17, 31, 32, 33, 1000 + rng.IntN(1000)}[trial%9]
		off := []int32{0}
		for i := range n {
			var d int32
			switch rng.IntN(10) {
			case 0:
				d = 0
			case 1:
				d = 255 - int32(rng.IntN(2)) // a block's whole byte, or one past it with a neighbour's
			case 2:
				if trial%3 == 0 {
					d = 70000
				}
			default:
				d = int32(rng.IntN(12))
			}
			if i == n/2 && trial%2 == 1 {
				d = 256
			}
			off = append(off, off[len(off)-1]+d)
		}
		po := packOffsets(off)
		b := po.narrow()
		for i, v := range off {
			if got := b.at(int32(i)); got != v {
				t.Fatalf("trial %d: offset %d is %d, want %d", trial, i, got, v)
			}
		}
		for i := range int32(n) {
			if lo, hi := b.span(i); lo != off[i] || hi != off[i+1] {
				t.Fatalf("trial %d: node %d spans [%d, %d), want [%d, %d)", trial, i, lo, hi, off[i], off[i+1])
			}
		}
		if len(b.rel) != len(off) || len(b.base) != (len(off)+15)/16 {
			t.Fatalf("trial %d: %d offsets, %d bases", trial, len(b.rel), len(b.base))
		}
		// A block of 16 offsets within 255 bytes of its first is narrow.
		for lo := 0; lo < len(off); lo += 16 {
			hi := min(lo+16, len(off)) - 1
			if narrow := b.base[lo/16] >= 0; narrow != (off[hi]-off[lo] <= 255) {
				t.Fatalf("trial %d: block at %d spans %d bytes: narrow %v", trial, lo, off[hi]-off[lo], narrow)
			}
		}
	}
}

// TestCountsCopiesShare: a replay counts down a copy of the DAG's counts
// (ConsumeCounts); a large count made or changed through either is the
// other's too.
func TestCountsCopiesShare(t *testing.T) {
	k := newCounts(4)
	pend := k
	pend.set(1, 300)
	if k.get(1) != 300 {
		t.Fatalf("a large count set in a copy reads %d in the original", k.get(1))
	}
	k.get(1)
	pend.dec(1)
	if k.get(1) != 299 || pend.get(1) != 299 {
		t.Fatalf("after a step down: %d and %d, want 299", k.get(1), pend.get(1))
	}
}

// TestLenOffsets: offsets made from list lengths in place are the packed
// running sums, in blocks of 64 nodes unless a block's lists reach 64 KiB
// (two nodes of 33 000 bytes side by side: blocks of at most 2 nodes); their 16-bit parts,
// advanced as cursors over each list in pieces and restored, are the
// offsets again; a length that wrapped is refused.
func TestLenOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, big := range []uint16{0, 33_000, 65_530} {
		lens := make([]uint16, 5001)
		for i := range 5000 {
			lens[i] = uint16(rng.IntN(6))
		}
		lens[777] += big
		lens[778] += big
		off := make([]int32, len(lens))
		for i := range 5000 {
			off[i+1] = off[i] + int32(lens[i])
		}
		want := append([]uint16(nil), lens...)
		o, ok := lenOffsets(lens, true)
		if !ok {
			t.Fatalf("lists of %d bytes: refused", big)
		}
		// Nodes 777 and 778 are in two blocks of 2 nodes, one of 4.
		if (big == 0) != (o.shift == maxOffsetShift) || big > 0 && o.shift > 1 {
			t.Fatalf("lists of %d bytes: blocks of %d nodes", big, 1<<o.shift)
		}
		check := func(what string) {
			for i, v := range off {
				if got := o.at(int32(i)); got != v {
					t.Fatalf("lists of %d bytes, %s: offset %d is %d, want %d", big, what, i, got, v)
				}
			}
			if o.end() != off[len(off)-1] {
				t.Fatalf("lists of %d bytes, %s: end %d, want %d", big, what, o.end(), off[len(off)-1])
			}
		}
		check("made")
		for _, i := range rng.Perm(5000) {
			for left := want[i]; left > 0; {
				step := min(left, uint16(1+rng.IntN(5)))
				o.rel[i] += step
				left -= step
			}
		}
		o.restore()
		check("filled and restored")
	}
	lens := []uint16{1, 2, 0}
	if _, ok := lenOffsets(lens, false); ok || !slices.Equal(lens, []uint16{1, 2, 0}) {
		t.Fatal("a wrapped length: accepted, or the lengths changed")
	}
}
