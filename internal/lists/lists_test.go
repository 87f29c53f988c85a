package lists

import (
	"slices"
	"testing"
)

func values(p *Pool, list int32) []int32 {
	var out []int32
	for c := list; c != None; c = p.Next(c) {
		out = append(out, p.Value(c))
	}
	return out
}

// Lists push to the front, stay apart, and a released list's cells serve
// the next pushes before the pool grows.
func TestPool(t *testing.T) {
	var p Pool
	a, b := None, None
	for v := int32(1); v <= 3; v++ {
		a = p.Push(a, v)
		b = p.Push(b, 10*v)
	}
	if got := values(&p, a); !slices.Equal(got, []int32{3, 2, 1}) {
		t.Fatalf("a = %v, want [3 2 1]", got)
	}
	if got := values(&p, b); !slices.Equal(got, []int32{30, 20, 10}) {
		t.Fatalf("b = %v, want [30 20 10]", got)
	}
	p.Release(a)
	c := None
	for v := int32(7); v <= 9; v++ {
		c = p.Push(c, v)
	}
	if p.n != 6 {
		t.Errorf("%d cells after reusing a's three, want 6", p.n)
	}
	if got := values(&p, c); !slices.Equal(got, []int32{9, 8, 7}) {
		t.Fatalf("c = %v, want [9 8 7]", got)
	}
	if got := values(&p, b); !slices.Equal(got, []int32{30, 20, 10}) {
		t.Fatalf("b = %v after reuse, want [30 20 10]", got)
	}
	p.Release(None) // the empty list: nothing to free
}

// Lists spanning several blocks keep their values as the pool grows (a
// block is never moved), and a reset pool reuses its blocks.
func TestPoolBlocks(t *testing.T) {
	var p Pool
	const n = 3*blockLen + 5
	lists := [3]int32{None, None, None}
	for v := int32(0); v < n; v++ {
		lists[v%3] = p.Push(lists[v%3], v)
	}
	first := p.blocks[0]
	for k := range lists {
		got := values(&p, lists[k])
		if len(got) != n/3+btoi(k < n%3) || got[len(got)-1] != int32(k) {
			t.Fatalf("list %d: %d values ending %d", k, len(got), got[len(got)-1])
		}
	}
	if len(p.blocks) != 4 {
		t.Errorf("%d blocks for %d cells, want 4", len(p.blocks), n)
	}
	p.Reset()
	l := None
	for v := range int32(2 * blockLen) {
		l = p.Push(l, v)
	}
	if len(p.blocks) != 4 || p.blocks[0] != first {
		t.Errorf("after Reset: %d blocks, first moved %v", len(p.blocks), p.blocks[0] != first)
	}
	if got := values(&p, l); len(got) != 2*blockLen || got[0] != 2*blockLen-1 {
		t.Errorf("after Reset: %d values, first %d", len(got), got[0])
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runCases are values pushed in order: one, a run, runs broken up and
// out of order, repeats, and a run ended by a value below it.
var runCases = [][]int32{
	{5},
	{0, 1, 2, 3, 4},
	{7, 8, 3, 4, 5, 6, 1, 0, 9, 10},
	{2, 2, 3, 3, 4, 10, 11, 11, 12},
	{0, 0, 1, 1, 0, 1},
	{4, 5, 6, 2},
}

// A list pushed with PushRun gives the values pushed, latest first, as a
// list pushed with Push does, in fewer cells when values come one after
// another; the pool reuses its cells alike.
func TestPushRun(t *testing.T) {
	var p Pool
	for _, vals := range runCases {
		l, ref := None, None
		for _, v := range vals {
			l = p.PushRun(l, v)
			ref = p.Push(ref, v)
		}
		got, want := p.Append(nil, l), values(&p, ref)
		if !slices.Equal(got, want) {
			t.Errorf("%v: %v, want %v", vals, got, want)
		}
		p.Release(l)
		p.Release(ref)
	}
	// A run of a thousand values in two cells.
	l := None
	for v := int32(100); v < 1100; v++ {
		l = p.PushRun(l, v)
	}
	if hi, n, next := p.Item(l); hi != 1099 || n != 1000 || next != None {
		t.Errorf("item (%d, %d, %d), want (1099, 1000, None)", hi, n, next)
	}
	if cells := p.n - p.freeCells(); cells != 2 {
		t.Errorf("%d cells in use, want 2", cells)
	}
}

// freeCells counts the cells on the free list.
func (p *Pool) freeCells() int32 {
	n := int32(0)
	for c := p.free - 1; c >= 0; c = p.cell(c).next {
		n++
	}
	return n
}

// A Head gives the values pushed, latest first, as a list pushed with
// Push does, in no cell while they are one run.
func TestHead(t *testing.T) {
	var p Pool
	for _, vals := range runCases {
		var h Head
		ref := None
		for _, v := range vals {
			p.PushHead(&h, v)
			ref = p.Push(ref, v)
		}
		want := values(&p, ref)
		if got := p.AppendHead(nil, h); !slices.Equal(got, want) {
			t.Errorf("%v: %v, want %v", vals, got, want)
		}
		var items []int32
		for hi, n, next := p.First(h); n > 0; {
			for v := hi; v > hi-n; v-- {
				items = append(items, v)
			}
			if next == None {
				break
			}
			hi, n, next = p.Item(next)
		}
		if !slices.Equal(items, want) {
			t.Errorf("%v: items %v, want %v", vals, items, want)
		}
		p.ReleaseHead(h)
		p.Release(ref)
	}
	var h Head
	for v := int32(3); v < 3000; v++ {
		p.PushHead(&h, v)
	}
	if h.n != 2997 || p.n != p.freeCells() {
		t.Errorf("a run of 2997: head %+v, %d cells of %d in use", h, p.n-p.freeCells(), p.n)
	}
	if _, n, _ := p.First(Head{}); n != 0 || !(Head{}).Empty() {
		t.Errorf("the zero Head is not empty")
	}
}

// A Short holds what a Head does, read against bases near and far from
// its values: pushed values read back in order, runs that fit take no
// cell, and one too long or too far from its base moves to cells.
func TestShort(t *testing.T) {
	var p Pool
	for _, base := range []int32{0, 7, 1000, 1 << 23, 1<<23 + 20, 1 << 30} {
		for _, vals := range runCases {
			var s Short
			ref := None
			for _, v := range vals {
				p.PushShort(&s, base, v)
				ref = p.Push(ref, v)
			}
			want := values(&p, ref)
			if got := p.AppendHead(nil, s.Head(base)); !slices.Equal(got, want) {
				t.Errorf("base %d, %v: %v, want %v", base, vals, got, want)
			}
			p.ReleaseHead(s.Head(base))
			p.Release(ref)
		}
	}
	for _, c := range []struct {
		base, first, n int32
		cells          bool
	}{{0, 1, 127, false}, {0, 1, 128, true}, {100, 0, 3, false}, {0, 1<<23 - 3, 3, false},
		{0, 1<<23 - 2, 3, true}, {1 << 24, 1<<24 - 1<<23, 2, false}, {1 << 24, 1<<24 - 1<<23 - 1, 1, true}} {
		var s Short
		for v := c.first; v < c.first+c.n; v++ {
			if !s.Grow(c.base, v) {
				p.PushShort(&s, c.base, v)
			}
		}
		_, n := s.Head(c.base).a, s.Head(c.base).n
		if got := p.AppendHead(nil, s.Head(c.base)); len(got) != int(c.n) || got[0] != c.first+c.n-1 || got[len(got)-1] != c.first || (n < 0) != c.cells {
			t.Errorf("base %d, run %d..%d: %d values %d..%d, in cells %v, want %v", c.base, c.first, c.first+c.n-1, len(got), got[len(got)-1], got[0], n < 0, c.cells)
		}
	}
	if !Short(0).Empty() || !Short(0).Head(5).Empty() {
		t.Error("the zero Short is not empty")
	}
}
