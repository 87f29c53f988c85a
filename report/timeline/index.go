package timeline

import (
	"cmp"
	"slices"
	"sort"

	"github.com/ptrace-dev/ptrace/trace"
)

// run maps a range of per-thread id sequence numbers to the location that
// created them. Consecutive creations of one construct by one thread share
// a run; ids in between that are not explicit tasks (implicit tasks,
// parallel regions) are never looked up in it, so a run may span them.
type run struct {
	lo, hi int64 // sequence numbers
	loc    int64
}

// budget bounds what the index pass keeps over all processes of an
// export: the indices of every selected process live from the first pass
// to their own export.
type budget struct {
	runs, edges int // still available
}

// runs is one kind of id → location table, per creating thread.
type runs struct {
	byThread map[int][]run
	b        *budget
	full     bool // budget exhausted: later ids are not recorded
}

func newRuns(b *budget) *runs { return &runs{byThread: map[int][]run{}, b: b} }

func (rs *runs) add(id, loc int64) {
	t, seq := trace.IDThread(id), trace.IDSeq(id)
	r := rs.byThread[t]
	if n := len(r); n > 0 && r[n-1].loc == loc && seq > r[n-1].hi {
		r[n-1].hi = seq
		return
	}
	if rs.b.runs <= 0 {
		rs.full = true
		return
	}
	rs.byThread[t] = append(r, run{lo: seq, hi: seq, loc: loc})
	rs.b.runs--
}

// lookup returns the location of id, if recorded.
func (rs *runs) lookup(id int64) (int64, bool) {
	r := rs.byThread[trace.IDThread(id)]
	seq := trace.IDSeq(id)
	i := sort.Search(len(r), func(i int) bool { return r[i].lo > seq }) - 1
	if i >= 0 && seq <= r[i].hi {
		return r[i].loc, true
	}
	return 0, false
}

// edges holds runtime-reported task→task dependences of one process until
// both ends were drawn; at most the budget's. They are pairs sorted by
// predecessor and by successor (34 B an edge, where maps of slices took
// about 200): a lookup is a binary search, and taking a task's edges marks
// them instead of deleting them. Stable sorts keep each task's edges in
// the order the trace gave them.
type edges struct {
	byPred, bySucc [][2]int64 // (pred, succ) and (succ, pred), sorted by the first after finish
	predDone       []bool
	succDone       []bool
	b              *budget
	dropped        int64
}

func newEdges(b *budget) *edges { return &edges{b: b} }

func (e *edges) add(pred, succ int64) {
	if e.b.edges <= 0 {
		e.dropped++
		return
	}
	e.byPred = append(e.byPred, [2]int64{pred, succ})
	e.b.edges--
}

// finish sorts the edges once the index pass has seen them all.
func (e *edges) finish() {
	e.bySucc = make([][2]int64, len(e.byPred))
	for i, p := range e.byPred {
		e.bySucc[i] = [2]int64{p[1], p[0]}
	}
	byFirst := func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) }
	slices.SortStableFunc(e.byPred, byFirst)
	slices.SortStableFunc(e.bySucc, byFirst)
	e.predDone, e.succDone = make([]bool, len(e.byPred)), make([]bool, len(e.bySucc))
}

// take returns the other ends of key's edges in sorted (the ones not
// taken yet) and marks them taken.
func take(sorted [][2]int64, done []bool, key int64) [][2]int64 {
	i, ok := slices.BinarySearchFunc(sorted, key, func(p [2]int64, k int64) int { return cmp.Compare(p[0], k) })
	if !ok || done[i] {
		return nil
	}
	j := i
	for j < len(sorted) && sorted[j][0] == key {
		done[j] = true
		j++
	}
	return sorted[i:j]
}

// takeSuccs returns pred's edges (second element: the successor), once.
func (e *edges) takeSuccs(pred int64) [][2]int64 { return take(e.byPred, e.predDone, pred) }

// takePreds returns succ's edges (second element: the predecessor), once.
func (e *edges) takePreds(succ int64) [][2]int64 { return take(e.bySucc, e.succDone, succ) }

// index is what the first pass over a process file learns: complete tables
// (they may arrive after the events that use them), the construct of every
// explicit task, the location of every parallel region, the dependence
// edges, and the range of timestamps.
type index struct {
	tables          *trace.Tables
	header          trace.Header
	tasks           *runs
	parallels       *runs
	edges           *edges
	firstNS, lastNS int64
	events          int64
}

func indexProcess(path string, b *budget, progress func(read int64)) (*index, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := trace.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	ix := &index{header: rd.Header(), tasks: newRuns(b), parallels: newRuns(b), edges: newEdges(b)}
	seen := false
	for c, err := range rd.Chunks() {
		if err != nil {
			return nil, err
		}
		for i := range c.Events {
			e := &c.Events[i]
			switch e.Kind {
			case trace.TaskCreate:
				ix.tasks.add(e.Args[0], e.Args[3])
			case trace.ParallelBegin:
				ix.parallels.add(e.Args[0], e.Args[4])
			case trace.TaskDependence:
				ix.edges.add(e.Args[0], e.Args[1])
			}
		}
		if n := len(c.Events); n > 0 {
			a, b := c.Events[0].Time, c.Events[n-1].Time
			if !seen || a < ix.firstNS {
				ix.firstNS = a
			}
			if !seen || b > ix.lastNS {
				ix.lastNS = b
			}
			seen = true
			ix.events += int64(n)
		}
		if progress != nil {
			progress(rd.Offset())
		}
	}
	ix.tables = rd.Tables()
	ix.edges.finish()
	return ix, nil
}
