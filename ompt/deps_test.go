package ompt

import (
	"math/rand/v2"
	"slices"
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
		d.resolve(first, task, []trace.Dep{{Addr: a, Type: trace.DepOut}}, -1, nil, done, ncompleted)
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
		d.resolve(second, task, []trace.Dep{{Addr: a, Type: trace.DepOut}}, -1, nil, done, ncompleted)
		task++
	}
	if d.live > addrs+addrs/2 {
		t.Fatalf("%d live states after the first parent completed, want about %d", d.live, addrs)
	}
	// A completed sibling of a running parent is still a predecessor.
	completed[w] = true
	preds := d.resolve(second, task, []trace.Dep{{Addr: addrs, Type: trace.DepIn}}, -1, nil, done, ncompleted)
	if len(preds) != 1 || preds[0] != w {
		t.Fatalf("predecessors %v, want [%d] (completed, kept)", preds, w)
	}
}

// A tracker reserved again for another process (Model.Spare) resolves that
// process's dependences exactly as a new one does, whatever the first left
// in its tables: states, set and reader lists, table slots of addresses the
// second process uses too, a larger table.
func TestReservedTrackerForgets(t *testing.T) {
	types := []uint8{trace.DepIn, trace.DepOut, trace.DepInout, trace.DepMutexInoutset, trace.DepInoutset}
	run := func(d *depTracker, rng *rand.Rand, tasks int) [][]int32 {
		completed := make([]bool, tasks+8)
		done := func(t int32) bool { return completed[t] }
		var ncompleted int64
		var out [][]int32
		for task := int32(8); task < int32(tasks); task++ {
			deps := make([]trace.Dep, 1+rng.IntN(4))
			for k := range deps {
				deps[k] = trace.Dep{Addr: uint64(rng.IntN(tasks/3+1)) * 64, Type: types[rng.IntN(len(types))]}
			}
			preds := d.resolve(int32(rng.IntN(3)), task, deps, -1, nil, done, ncompleted)
			out = append(out, slices.Clone(preds))
			if rng.IntN(2) == 0 {
				c := 8 + rng.Int32N(task-7)
				if !completed[c] {
					completed[c] = true
					ncompleted++
				}
			}
		}
		return out
	}
	for seed := range uint64(10) {
		for _, keep := range []bool{false, true} {
			first, second := 20_000, 2_000+int(seed)*500
			if seed%2 == 1 {
				first, second = second, first
			}
			used := newDepTracker()
			used.keep = keep
			used.reserve(int64(first), -1)
			run(used, rand.New(rand.NewPCG(seed, 1)), first)
			used.reserve(int64(second), -1)
			got := run(used, rand.New(rand.NewPCG(seed, 2)), second)

			fresh := newDepTracker()
			fresh.keep = keep
			fresh.reserve(int64(second), -1)
			want := run(fresh, rand.New(rand.NewPCG(seed, 2)), second)
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("seed %d keep %v: task %d of the second process: predecessors %v after reuse, %v fresh", seed, keep, i+8, got[i], want[i])
				}
			}
		}
	}
}

// refTracker is the depend-clause rules of depTracker's comment written
// plainly, with maps and slices and nothing swept: st holds the states by
// (parent, address), all each parent's last omp_all_memory child.
type refTracker struct {
	st  map[[2]uint64]*refState
	all map[int32]int32
}

func newRefTracker() refTracker {
	return refTracker{st: map[[2]uint64]*refState{}, all: map[int32]int32{}}
}

type refState struct {
	writer              int32
	readers, set, preds []int32
	setKind             uint8
}

func (r refTracker) resolve(parent, task int32, deps []trace.Dep) []int32 {
	var out []int32
	if slices.ContainsFunc(deps, trace.Dep.AllMemory) {
		// out on every address, named before or after (OpenMP 5.2
		// §15.9.5; the list's other entries add nothing)
		if c, ok := r.all[parent]; ok {
			out = append(out, c)
		}
		r.all[parent] = task
		for k, a := range r.st {
			if k[0] != uint64(uint32(parent)) {
				continue
			}
			if a.setKind != 0 {
				out = append(out, a.set...)
			} else if a.writer >= 0 {
				out = append(out, a.writer)
			}
			out = append(out, a.readers...)
			*a = refState{writer: task}
		}
		return out
	}
	for _, dep := range deps {
		k := [2]uint64{uint64(uint32(parent)), dep.Addr}
		a := r.st[k]
		if a == nil {
			a = &refState{writer: -1}
			if c, ok := r.all[parent]; ok {
				a.writer = c
			}
			r.st[k] = a
		}
		writers := func() []int32 {
			if a.setKind != 0 {
				return a.set
			}
			if a.writer >= 0 {
				return []int32{a.writer}
			}
			return nil
		}
		switch dep.Type {
		case trace.DepIn:
			out = append(out, writers()...)
			a.readers = append(a.readers, task)
		case trace.DepOut, trace.DepInout:
			out = append(append(out, writers()...), a.readers...)
			*a = refState{writer: task}
		case trace.DepMutexInoutset, trace.DepInoutset:
			if a.setKind == dep.Type && len(a.readers) == 0 {
				out = append(out, a.preds...)
				a.set = append(a.set, task)
				break
			}
			preds := append(append([]int32(nil), writers()...), a.readers...)
			out = append(out, preds...)
			*a = refState{writer: -1, preds: preds, set: []int32{task}, setKind: dep.Type}
		}
	}
	return out
}

// The tracker gives the predecessors the plain rules give: all of them with
// keep, the running ones without (a completed task is no edge, and sweeps
// may have forgotten it), over random clauses on few addresses and
// parents, through sweeps, table growth, reuse and changes of the
// addresses' alignment.
func TestTrackerFollowsTheRules(t *testing.T) {
	types := []uint8{trace.DepIn, trace.DepIn, trace.DepOut, trace.DepInout, trace.DepMutexInoutset, trace.DepInoutset}
	for seed := range uint64(12) {
		for _, keep := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 7))
			d := newDepTracker()
			d.keep = keep
			if seed%3 == 1 {
				d.reserve(40, -1)
			}
			ref := newRefTracker()
			const tasks = 30_000
			completed := make([]bool, tasks)
			done := func(t int32) bool { return completed[t] }
			var ncompleted int64
			addrs := 1 + rng.IntN(5000)
			for task := int32(8); task < tasks; task++ {
				parent := rng.Int32N(4)
				if parent == 3 {
					parent = -1
				}
				deps := make([]trace.Dep, 1+rng.IntN(4))
				for k := range deps {
					a := uint64(rng.IntN(addrs))
					addr := 0x7f00_0000_0000 + a*64
					switch {
					case seed%2 == 1:
						// Addresses alike in their low 32 bits, told
						// apart by the high ones alone.
						addr = 0x7f00_0000_0000 + a/64<<32 + a%64*64
					case seed%4 == 2:
						// Pages, then blocks, then bytes: the table's
						// states placed again as the alignment drops,
						// many of them the last times.
						switch {
						case task < tasks/3:
							addr = 0x7f00_0000_0000 + a*4096
						case task < 2*tasks/3:
							addr = 0x7f00_0000_0000 + a*64
						default:
							addr = 0x7f00_0000_0000 + a*3
						}
					}
					deps[k] = trace.Dep{Addr: addr, Type: types[rng.IntN(len(types))]}
				}
				if seed%3 == 2 && rng.IntN(200) == 0 {
					// omp_all_memory, as the collector records it
					deps[rng.IntN(len(deps))] = trace.Dep{Type: []uint8{trace.DepOutAllMemory, trace.DepInoutAllMemory}[rng.IntN(2)]}
				}
				got := d.resolve(parent, task, deps, -1, nil, done, ncompleted)
				if got, want, ok := samePreds(got, ref.resolve(parent, task, deps), keep, done); !ok {
					t.Fatalf("seed %d keep %v task %d: predecessors %v, want %v", seed, keep, task, got, want)
				}
				for range rng.IntN(3) {
					if c := 8 + rng.Int32N(task-7); !completed[c] && c > 2 {
						completed[c] = true
						ncompleted++
					}
				}
			}
		}
	}
}

// A process that creates its tasks before any completes keeps every state
// it made: its table grows once to the states its remaining entries will
// make, not by doublings (whose last held the old table and one twice its
// size at once, the lean stencil's peak), and ends filled to about 5/7;
// a census that claims far more entries than come grows it at most 8-fold
// at a time. The predecessors are the same as a doubling table's.
func TestTrackerGrowsToItsEntries(t *testing.T) {
	const tasks, width = 600_000, 16
	deps := make([][]trace.Dep, tasks)
	entries := 0
	for k := range deps {
		deps[k] = []trace.Dep{{Addr: 0x7f0000000000 + uint64(k)*64, Type: trace.DepInout}}
		for _, j := range []int{k - width - 1, k - width, k - width + 1} {
			if j >= 0 {
				deps[k] = append(deps[k], trace.Dep{Addr: 0x7f0000000000 + uint64(j)*64, Type: trace.DepIn})
			}
		}
		entries += len(deps[k])
	}
	done := func(int32) bool { return false }
	run := func(claim int64) (*depTracker, [][]int32) {
		d := newDepTracker()
		d.keep = true
		d.reserve(claim, -1)
		preds := make([][]int32, tasks)
		for k := range deps {
			preds[k] = d.resolve(-1, int32(k), deps[k], -1, nil, done, 0)
		}
		return d, preds
	}
	d, got := run(int64(entries))
	if fill := float64(d.live) / float64(len(d.table)); d.live != tasks || fill < 0.69 || fill > 0.75 {
		t.Errorf("%d states fill %.3f of the table, want %d filling 5/7", d.live, fill, tasks)
	}
	// What the census cannot vouch for: a table reserved for 2^20 entries
	// (262 144 states) grows past 3/4 of its 436 906 slots 8-fold, and
	// holds the 600 000 states there.
	liar, want := run(1 << 40)
	if n, limit := len(liar.table), 8*tableSize(1<<18); n > limit {
		t.Errorf("a claim of 2^40 entries grew the table to %d slots, more than %d", n, limit)
	}
	for k := range got {
		if !slices.Equal(got[k], want[k]) {
			t.Fatalf("task %d: predecessors %v, %v with another growth", k, got[k], want[k])
		}
	}
}

// samePreds reports whether a tracker's predecessors got are the
// reference's, as sets, less those done when the tracker does not keep
// completed tasks' states; it returns both as compared.
func samePreds(got, want []int32, keep bool, done func(int32) bool) ([]int32, []int32, bool) {
	got, want = slices.Clone(got), slices.Clone(want)
	if !keep {
		got = slices.DeleteFunc(got, done)
		want = slices.DeleteFunc(want, done)
	}
	slices.Sort(got)
	slices.Sort(want)
	got, want = slices.Compact(got), slices.Compact(want)
	return got, want, slices.Equal(got, want)
}

// LLVM libomp keeps four mutexinoutset dependences per task and makes the
// others out (kmp_taskdeps.cpp, MAX_MTX_DEPS): tasks of one set naming five
// blocks each are ordered by the fifth, while four keep the set unordered.
// An address also named as in is merged into an out by libomp and takes
// none of the four places.
func TestMutexinoutsetBeyondFourIsInout(t *testing.T) {
	mtx := func(addrs ...uint64) []trace.Dep {
		var deps []trace.Dep
		for _, a := range addrs {
			deps = append(deps, trace.Dep{Addr: a * 64, Type: trace.DepMutexInoutset})
		}
		return deps
	}
	done := func(int32) bool { return false }
	for _, c := range []struct {
		name string
		deps [][]trace.Dep
		want [][]int32
	}{
		{"four", [][]trace.Dep{mtx(1, 2, 3, 4), mtx(1, 2, 3, 4)}, [][]int32{nil, nil}},
		{"five", [][]trace.Dep{mtx(1, 2, 3, 4, 5), mtx(1, 2, 3, 4, 5), mtx(5)}, [][]int32{nil, {10}, {11}}},
		{"fifth by first appearance", [][]trace.Dep{mtx(9, 1, 2, 3, 4), mtx(1, 2, 3, 4, 9)}, [][]int32{nil, {10}}},
		{"repeated address counts once", [][]trace.Dep{mtx(1, 1, 2, 3, 4), mtx(1, 2, 3, 4)}, [][]int32{nil, nil}},
		{"merged with in", [][]trace.Dep{
			append(mtx(1, 2, 3, 4, 5), trace.Dep{Addr: 64, Type: trace.DepIn}),
			mtx(1, 2, 3, 4, 5),
		}, [][]int32{nil, {10}}},
	} {
		d := newDepTracker()
		d.keep = true
		for i, deps := range c.deps {
			task := int32(10 + i)
			got := d.resolve(0, task, deps, -1, nil, done, 0)
			got = slices.DeleteFunc(got, func(p int32) bool { return p == task }) // no edge (AddEdges)
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, c.want[i]) {
				t.Errorf("%s: task %d: predecessors %v, want %v", c.name, task, got, c.want[i])
			}
		}
	}
}
