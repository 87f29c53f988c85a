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
	if len(p.cells) != 6 {
		t.Errorf("%d cells after reusing a's three, want 6", len(p.cells))
	}
	if got := values(&p, c); !slices.Equal(got, []int32{9, 8, 7}) {
		t.Fatalf("c = %v, want [9 8 7]", got)
	}
	if got := values(&p, b); !slices.Equal(got, []int32{30, 20, 10}) {
		t.Fatalf("b = %v after reuse, want [30 20 10]", got)
	}
	p.Release(None) // the empty list: nothing to free
	p.Reserve(100)
	if got := values(&p, c); !slices.Equal(got, []int32{9, 8, 7}) || cap(p.cells) < 106 {
		t.Fatalf("after Reserve: c = %v, cap %d", got, cap(p.cells))
	}
}
