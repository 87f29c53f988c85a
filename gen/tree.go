package gen

import (
	"container/heap"
	"fmt"
	"math/rand"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// tree: the shape of BOTS's fib and health — tasks that create tasks and
// wait for them. On every rank the master's implicit task is the root of a
// complete tree of --radix children per node and --steps levels: a node
// computes node ns (a tenth of --task), creates its children at once and
// waits for them in a taskwait; a leaf computes --task (jittered). The team
// runs the tree as LLVM libomp does, work-first: a thread takes the newest
// task it created, else steals the oldest of another thread's, and a thread
// waiting in a taskwait takes only descendants of the task waiting there
// (tied tasks' scheduling constraint). No dependences, no overhead: the
// breakdown is work (every node's compute) and idleness; the critical path
// is the longest root-to-leaf chain of computes, creation and taskwait
// edges carrying no time.
type tree struct {
	cfg    *Config
	node   int64       // an inner node's compute
	leaves [][]int64   // per rank, the leaves' computes, in node order
	stats  []treeStats // per rank, of its schedule (plan)
	inner  int         // inner nodes of a tree, the root included
}

func newTree(cfg *Config) *tree { return &tree{cfg: cfg} }

// treeEvents is about how many events a tree of n leaves writes with radix
// k: 3 a leaf (created, run, completed), 7 an inner node (its taskwait's 4).
func treeEvents(k, depth int) int64 {
	leaves, inner := treeSize(k, depth)
	if leaves < 0 {
		return -1
	}
	return 3*leaves + 7*int64(inner)
}

// treeSize returns the leaves and the inner nodes (the root included) of a
// complete tree of radix k and depth levels below the root, or −1 leaves
// past maxTreeLeaves.
func treeSize(k, depth int) (leaves int64, inner int) {
	leaves = 1
	for range depth {
		inner += int(leaves)
		if leaves > maxTreeLeaves/int64(k) {
			return -1, inner
		}
		leaves *= int64(k)
	}
	return leaves, inner
}

// maxTreeLeaves bounds a process's tree: 2^26 leaves, about 300 M events.
const maxTreeLeaves = 1 << 26

func (w *tree) plan() error {
	c := w.cfg
	if c.Events > 0 {
		per := c.Events / int64(c.Ranks)
		c.Steps = 1
		for n := treeEvents(c.Radix, c.Steps+1); n > 0 && n <= per; n = treeEvents(c.Radix, c.Steps+1) {
			c.Steps++
		}
	}
	w.node = c.TaskNS / 10
	leaves, inner := treeSize(c.Radix, c.Steps)
	if leaves < 0 {
		return fmt.Errorf("tree: --radix %d and --steps %d make more than %d leaves a process", c.Radix, c.Steps, maxTreeLeaves)
	}
	w.inner = inner
	rng := rand.New(rand.NewSource(c.Seed))
	w.leaves = make([][]int64, c.Ranks)
	w.stats = make([]treeStats, c.Ranks)
	for r := range w.leaves {
		w.leaves[r] = make([]int64, leaves)
		for i := range w.leaves[r] {
			w.leaves[r][i] = jittered(rng, c.TaskNS, c.Jitter)
		}
		// The schedule, run once here for what expected reports and
		// again as the events are written.
		t := w.newRun(r)
		end := w.schedule(t, nil)
		w.stats[r] = treeStats{end: end, over: t.over, twIdle: t.twIdle, twOver: t.twOver, brIdle: t.brIdle, brOver: t.brOver}
	}
	return nil
}

// treeStats are what a rank's schedule makes of its threads' time: when
// the root's taskwait ends, their idle time while a task was ready (POT's
// overhead), and their idle time in taskwaits and in the implicit barrier
// with its part while a task was ready.
type treeStats struct {
	end, over      int64
	twIdle, twOver int64
	brIdle, brOver int64
}

// Node numbering: breadth-first, the root 0, node i's children
// k·i+1 … k·i+k; nodes from w.inner on are leaves.
func (w *tree) parent(i int) int { return (i - 1) / w.cfg.Radix }

func (w *tree) depth(i int) int {
	d := 0
	for ; i > 0; i = w.parent(i) {
		d++
	}
	return d
}

// descends reports whether node i is a descendant of node a.
func (w *tree) descends(i, a int) bool {
	for da, di := w.depth(a), w.depth(i); di > da; di-- {
		i = w.parent(i)
	}
	return i == a
}

// treeRun is the state of one rank's schedule while it is written.
type treeRun struct {
	rr      *runRegion
	leaves  []int64
	id      []int64 // the explicit tasks' ids, once created
	left    []int32 // per inner node, its children not completed
	stack   [][]int // per thread, the nodes suspended in taskwait (or -1 for a worker's barrier)
	deque   [][]int // per thread, the tasks it created and nobody took yet
	waiting []bool  // per thread, idle until woken
	loc     struct{ task, taskwait, barrier int64 }
	h       wakeHeap
	// POT's overhead: a thread's idle time while some task is ready (a
	// thread waiting in a taskwait may be unable to run it). r is ∫ δr
	// up to at, idleAt each idle thread's r when it went idle (−1: busy).
	ready  int
	r, at  int64
	idleAt []int64
	over   int64
	// The idle intervals by construct: when each began and whether in a
	// taskwait (else the implicit barrier); per construct, the time and
	// its part while a task was ready.
	idleT          []int64
	idleTW         []bool
	twIdle, twOver int64
	brIdle, brOver int64
}

// advance brings ∫ δr to now.
func (t *treeRun) advance(now int64) {
	if t.ready > 0 {
		t.r += now - t.at
	}
	t.at = now
}

// idle and busy start and end thread th's idle interval at now.
func (t *treeRun) idle(th int, now int64) {
	if t.idleAt[th] < 0 {
		s := t.stack[th]
		t.idleAt[th], t.idleT[th], t.idleTW[th] = t.r, now, s[len(s)-1] >= 0
	}
}

func (t *treeRun) busy(th int, now int64) {
	if t.idleAt[th] < 0 {
		return
	}
	over, d := t.r-t.idleAt[th], now-t.idleT[th]
	t.over += over
	if t.idleTW[th] {
		t.twIdle, t.twOver = t.twIdle+d, t.twOver+over
	} else {
		t.brIdle, t.brOver = t.brIdle+d, t.brOver+over
	}
	t.idleAt[th] = -1
}

// wakeHeap orders the threads' next decisions by time, then thread.
type wakeHeap []wake

type wake struct {
	time   int64
	thread int
	leaf   int // the leaf that completes then (−1: none)
	inner  int // the inner node whose compute ends then (−1: none)
}

func (h wakeHeap) Len() int { return len(h) }
func (h wakeHeap) Less(i, j int) bool {
	if h[i].time != h[j].time {
		return h[i].time < h[j].time
	}
	return h[i].thread < h[j].thread
}
func (h wakeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)   { *h = append(*h, x.(wake)) }
func (h *wakeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// newRun returns the schedule's state for rank r.
func (w *tree) newRun(r int) *treeRun {
	c := w.cfg
	return &treeRun{leaves: w.leaves[r], id: make([]int64, w.inner+len(w.leaves[r])), left: make([]int32, w.inner),
		stack: make([][]int, c.Threads), deque: make([][]int, c.Threads), waiting: make([]bool, c.Threads),
		idleAt: make([]int64, c.Threads), idleT: make([]int64, c.Threads), idleTW: make([]bool, c.Threads)}
}

func (w *tree) write(p *proc) {
	c := w.cfg
	t := w.newRun(p.rank)
	end := w.stats[p.rank].end
	regionLoc := p.w.AddLocation(trace.Location{File: "tree.c", Line: 20, Col: 1, Func: "main"})
	t.loc.task = p.w.AddLocation(trace.Location{File: "tree.c", Line: 9, Col: 9, Func: "node"})
	t.loc.taskwait = p.w.AddLocation(trace.Location{File: "tree.c", Line: 11, Col: 9, Func: "node"})
	t.loc.barrier = p.w.AddLocation(trace.Location{File: "tree.c", Line: 24, Col: 1, Func: "main"})
	t.rr = p.openRun(c.Threads, end, regionLoc)
	w.schedule(t, p)
	rr := t.rr
	p.syncBegin(0, end, ompt.SyncBarrierImplicitParallel, rr.par, rr.impl[0], t.loc.barrier)
	for th := 0; th < c.Threads; th++ {
		p.syncEnd(th, end, ompt.SyncBarrierImplicitParallel, rr.par, rr.impl[th], t.loc.barrier)
		p.closeThread(rr, th, end)
	}
	p.closeRun(rr, end)
}

// schedule runs the rank's tree on its team, writing the events when p is
// set, and returns when the root's taskwait ends.
func (w *tree) schedule(t *treeRun, p *proc) int64 {
	c := w.cfg
	emit := p != nil
	// The ids are known when the events are written only.
	taskID := func(i int) int64 {
		if i > 0 {
			return t.id[i]
		}
		return t.rr.impl[0]
	}
	cur := func(th int) int64 { // the task thread th runs or waits in
		s := t.stack[th]
		if top := s[len(s)-1]; top >= 0 {
			return taskID(top)
		}
		return t.rr.impl[th]
	}
	// The master's implicit task is the root: it computes, then creates.
	t.stack[0] = []int{0}
	for th := range t.idleAt {
		t.idleAt[th] = -1
	}
	for th := 1; th < c.Threads; th++ {
		t.stack[th] = []int{-1}
		t.waiting[th] = true
		t.idle(th, 0)
		if emit {
			p.syncBegin(th, 0, ompt.SyncBarrierImplicitParallel, t.rr.par, t.rr.impl[th], t.loc.barrier)
		}
	}
	heap.Push(&t.h, wake{time: w.node, thread: 0, leaf: -1, inner: 0})
	wakeIdle := func(now int64) {
		for th, idle := range t.waiting {
			if idle {
				t.waiting[th] = false
				heap.Push(&t.h, wake{time: now, thread: th, leaf: -1, inner: -1})
			}
		}
	}
	for t.h.Len() > 0 {
		x := heap.Pop(&t.h).(wake)
		now, th := x.time, x.thread
		t.advance(now)
		switch {
		case x.leaf >= 0:
			// A leaf completes: its parent may resume.
			if emit {
				p.emit(th, trace.TaskSchedule, now, t.id[x.leaf], ompt.StatusComplete, cur(th))
			}
			w.completed(t, x.leaf, now)
		case x.inner >= 0:
			// An inner node's compute ends: it creates its children and
			// waits for them.
			i := x.inner
			for k := 1; k <= c.Radix; k++ {
				ch := c.Radix*i + k
				if emit {
					t.id[ch] = p.create(th, now, taskID(i), t.loc.task, nil)
				}
				t.deque[th] = append(t.deque[th], ch)
			}
			t.ready += c.Radix
			t.left[i] = int32(c.Radix)
			if emit {
				p.syncBegin(th, now, ompt.SyncTaskwait, t.rr.par, taskID(i), t.loc.taskwait)
			}
			wakeIdle(now)
		}
		// The thread decides what next: resume the task waiting on top
		// (its children done), else take a task, else wait.
		for {
			s := t.stack[th]
			top := s[len(s)-1]
			if top >= 0 && t.left[top] == 0 {
				t.busy(th, now)
				if emit {
					p.syncEnd(th, now, ompt.SyncTaskwait, t.rr.par, taskID(top), t.loc.taskwait)
				}
				if top == 0 {
					// The root's taskwait ends: the tree is done, and the
					// threads still idle are until the end.
					for th := range t.idleAt {
						t.busy(th, now)
					}
					return now
				}
				t.stack[th] = s[:len(s)-1]
				if emit {
					p.emit(th, trace.TaskSchedule, now, taskID(top), ompt.StatusComplete, cur(th))
				}
				w.completed(t, top, now)
				continue
			}
			next := w.take(t, th, top)
			if next < 0 {
				t.waiting[th] = true
				t.idle(th, now)
				break
			}
			t.ready--
			t.busy(th, now)
			if emit {
				p.emit(th, trace.TaskSchedule, now, cur(th), ompt.StatusSwitch, t.id[next])
			}
			if next >= w.inner {
				heap.Push(&t.h, wake{time: now + t.leaves[next-w.inner], thread: th, leaf: next, inner: -1})
			} else {
				t.stack[th] = append(t.stack[th], next)
				heap.Push(&t.h, wake{time: now + w.node, thread: th, leaf: -1, inner: next})
			}
			break
		}
	}
	return 0 // not reached: the root's taskwait ends the loop
}

// completed notes node i's completion at now: its parent's last child
// wakes the thread it waits on.
func (w *tree) completed(t *treeRun, i int, now int64) {
	par := w.parent(i)
	if t.left[par]--; t.left[par] > 0 {
		return
	}
	for th, s := range t.stack {
		if s[len(s)-1] == par && t.waiting[th] {
			t.waiting[th] = false
			heap.Push(&t.h, wake{time: now, thread: th, leaf: -1, inner: -1})
		}
	}
}

// take removes and returns the task thread th runs next, −1 for none: its
// own newest, else the oldest of the next threads' that it may run (a
// descendant of top, the task it waits in; any for a worker in the
// barrier).
func (w *tree) take(t *treeRun, th, top int) int {
	ok := func(i int) bool { return top < 0 || w.descends(i, top) }
	if d := t.deque[th]; len(d) > 0 && ok(d[len(d)-1]) {
		t.deque[th] = d[:len(d)-1]
		return d[len(d)-1]
	}
	n := len(t.deque)
	for v := 1; v < n; v++ {
		d := t.deque[(th+v)%n]
		for j, i := range d {
			if ok(i) {
				t.deque[(th+v)%n] = append(d[:j], d[j+1:]...)
				return i
			}
		}
	}
	return -1
}

func (w *tree) expected() Expected {
	c := w.cfg
	e := Expected{}
	var runTime int64
	for _, st := range w.stats {
		runTime = max(runTime, st.end)
	}
	rows := make([]any, c.Ranks)
	procs := make([]ompWait, c.Ranks)
	var work, life, span, tasks, over int64
	tw := ompConstruct{kind: "taskwait", construct: "tree.c:11:9", region: "tree.c:20:1"}
	br := ompConstruct{kind: "barrier_implicit", construct: "tree.c:24:1", region: "tree.c:20:1"}
	var outside int64
	var durs []int64
	for r, st := range w.stats {
		wk := int64(w.inner) * w.node
		var longest int64
		for _, d := range w.leaves[r] {
			wk += d
			longest = max(longest, d)
		}
		span = max(span, int64(c.Steps)*w.node+longest)
		work += wk
		l := int64(c.Threads) * runTime
		life += l
		over += st.over
		rows[r] = map[string]any{"rank": r, "work_ns": wk, "idleness_ns": l - wk - st.over, "overhead_ns": st.over, "mpi_ns": 0, "thread_time_ns": l}
		tasks += int64(w.inner - 1 + len(w.leaves[r]))
		for range w.inner - 1 {
			durs = append(durs, w.node)
		}
		durs = append(durs, w.leaves[r]...)
		// A rank that ends before the run does is outside any construct
		// until then, with no task ready.
		out := int64(c.Threads) * (runTime - st.end)
		procs[r] = ompWait{rank: r, taskwait: st.twIdle, barrier: st.brIdle, outside: out,
			ready: st.twOver + st.brOver, none: st.twIdle - st.twOver + st.brIdle - st.brOver + out}
		tw.count += int64(w.inner)
		tw.waiting += st.twIdle
		tw.ready += st.twOver
		tw.none += st.twIdle - st.twOver
		br.count += int64(c.Threads)
		br.waiting += st.brIdle
		br.ready += st.brOver
		br.none += st.brIdle - st.brOver
		outside += out
	}
	setTaskRun(e, work, over, life, rows, span, runTime)
	e.set("tasks.count", tasks)
	setConstruct(e, "tree.c:9:9", func(yield func(int64)) {
		for _, d := range durs {
			yield(d)
		}
	})
	setOMPWaits(e, procs, []ompConstruct{tw, br, {kind: "outside_sync", waiting: outside, none: outside}})
	return e
}
