package lists

import (
	"math/rand/v2"
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
	if p.meta[0].top != 6 || p.inUse() != 6 {
		t.Errorf("%d cells handed out, %d in use, after reusing a's three, want 6", p.meta[0].top, p.inUse())
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
	if cells := p.inUse(); cells != 2 {
		t.Errorf("%d cells in use, want 2", cells)
	}
}

// inUse counts the cells in use, from the blocks' free lists: each
// block's cells handed out less those on its free list.
func (p *Pool) inUse() int32 {
	n := int32(0)
	for b, m := range p.meta {
		if p.blocks[b] == nil {
			continue
		}
		n += m.top
		for c := m.free - 1; c >= 0; c = p.cell(c).next {
			n--
		}
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
	if h.n != 2997 || p.inUse() != 0 {
		t.Errorf("a run of 2997: head %+v, %d cells in use", h, p.inUse())
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

// A block whose cells are all given back goes (keepIdle of them stay for
// the next pushes), and the lists left keep their values.
func TestPoolGivesBlocksBack(t *testing.T) {
	var p Pool
	const blocks = 10
	var lists [blocks]int32
	for k := range lists {
		lists[k] = None
		for v := range int32(blockLen) {
			lists[k] = p.Push(lists[k], int32(k)*blockLen+v)
		}
	}
	if p.Bytes() != blocks*blockLen*8 {
		t.Fatalf("%d bytes for %d full blocks", p.Bytes(), blocks)
	}
	for k := range blocks - 1 {
		p.Release(lists[k])
	}
	// The last block is the one pushes take cells from: it stays.
	if want := (1 + keepIdle) * blockLen * 8; p.Bytes() != want {
		t.Errorf("%d bytes after all lists but the last went, want %d", p.Bytes(), want)
	}
	l := None
	for v := range int32(3 * blockLen) {
		l = p.Push(l, v)
	}
	if want := (4 + keepIdle - 3) * blockLen * 8; p.Bytes() != want {
		t.Errorf("%d bytes for 4 blocks of lists, want %d (3 idle ones reused)", p.Bytes(), want)
	}
	if got := values(&p, lists[blocks-1]); len(got) != blockLen || got[0] != blocks*blockLen-1 || got[blockLen-1] != (blocks-1)*blockLen {
		t.Errorf("the list left: %d values %d..%d", len(got), got[len(got)-1], got[0])
	}
	if got := values(&p, l); len(got) != 3*blockLen || got[0] != 3*blockLen-1 {
		t.Errorf("the new list: %d values, first %d", len(got), got[0])
	}
}

// Lists pushed and released at random, spread over many blocks, read back
// what was pushed, and the pool's cells in use are the lists' values.
func TestPoolRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var p Pool
	heads := make([]int32, 64)
	refs := make([][]int32, len(heads))
	for k := range heads {
		heads[k] = None
	}
	for step := range 400_000 {
		k := rng.IntN(len(heads))
		if rng.IntN(900) == 0 {
			p.Release(heads[k])
			heads[k], refs[k] = None, nil
			continue
		}
		v := int32(step)
		heads[k] = p.Push(heads[k], v)
		refs[k] = append(refs[k], v)
		if step%50_000 == 0 {
			p.Reset()
			heads[k], refs[k] = None, nil
			for j := range heads {
				heads[j], refs[j] = None, nil
			}
		}
	}
	n := int32(0)
	for k := range heads {
		want := slices.Clone(refs[k])
		slices.Reverse(want)
		if got := values(&p, heads[k]); !slices.Equal(got, want) {
			t.Fatalf("list %d: %d values, want %d", k, len(got), len(want))
		}
		n += int32(len(want))
	}
	if p.inUse() != n {
		t.Errorf("%d cells in use, want %d", p.inUse(), n)
	}
	var live int32
	for b, m := range p.meta {
		if p.blocks[b] != nil {
			live += m.live
		}
	}
	if live != n || p.Bytes() > (int(n)/blockLen+len(heads)+keepIdle+1)*blockLen*8 {
		t.Errorf("blocks count %d live cells, %d bytes, for %d", live, p.Bytes(), n)
	}
}
