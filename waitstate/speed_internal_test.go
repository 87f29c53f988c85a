package waitstate

import (
	"slices"
	"testing"
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
