package ompt

import (
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// With keep (a task graph wants edges from completed tasks too), the states
// of a completed parent's children are swept, and those of a running parent
// keep giving edges from its completed children.
func TestKeepSweepsCompletedParents(t *testing.T) {
	d := newDepTracker()
	d.keep = true
	completed := map[int32]bool{}
	done := func(t int32) bool { return completed[t] }
	var ncompleted int64
	const first, second, addrs = 0, 1, 5000
	// The first parent's children write addresses 0..addrs−1; then the
	// parent and its children complete.
	task := int32(10)
	for a := uint64(0); a < addrs; a++ {
		d.resolve(first, task, []trace.Dep{{Addr: a, Type: trace.DepOut}}, nil, done, ncompleted)
		task++
	}
	for t := int32(0); t < task; t++ {
		if t != second {
			completed[t] = true
			ncompleted++
		}
	}
	// The second parent's children use other addresses: the first parent's
	// states go at the next sweep.
	w := task
	for a := uint64(addrs); a < 2*addrs; a++ {
		d.resolve(second, task, []trace.Dep{{Addr: a, Type: trace.DepOut}}, nil, done, ncompleted)
		task++
	}
	if d.live > addrs+addrs/2 {
		t.Fatalf("%d live states after the first parent completed, want about %d", d.live, addrs)
	}
	// A completed sibling of a running parent is still a predecessor.
	completed[w] = true
	preds := d.resolve(second, task, []trace.Dep{{Addr: addrs, Type: trace.DepIn}}, nil, done, ncompleted)
	if len(preds) != 1 || preds[0] != w {
		t.Fatalf("predecessors %v, want [%d] (completed, kept)", preds, w)
	}
}
