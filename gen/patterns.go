package gen

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// pattern is a Task-Bench-like dependence pattern (seed
// ompc-distributed-task-profiling.txt §5.5) over Width points and Steps
// steps: task (s, x) depends on tasks (s−1, x') for x' given by the pattern.
// Points are split over ranks in contiguous blocks; a dependence between
// ranks travels as a remote task dependence with latency LatencyNS (as a
// distributed task runtime such as OMPC records it). Each rank's master
// creates its tasks at time 0 inside one parallel region and every thread
// executes them greedily, so no thread ever idles while a task is ready:
// overhead is exactly zero and work and idleness follow from the schedule.
type pattern struct {
	cfg   *Config
	n     int       // tasks
	dur   []int64   // by task index k = s·Width + x
	preds [][]int32 // by task index
	start []int64
	end   []int64
	ready []int64 // when its last predecessor finished (its remote dependence arrived)
	thr   []int32 // executing thread
	rank  []int32
	order [][]int32 // per rank: local tasks in creation order
	// remoteSuccs lists each task's successors on other ranks.
	remoteSuccs [][]int32
	seq         []int64 // per task: id sequence number on its rank's master
	fin         []int64 // per rank: time the region ends
	// outliers are the tasks made OutlierFactor× longer (Config.Outliers),
	// in increasing index order. Their cost attribute stays the nominal
	// one, as a perturbed run would record it.
	outliers []int32
	outlier  map[int32]bool
	// off is 1 when a serial task (Config.SerialNS) precedes the pattern:
	// task 0 on rank 0, on which every first-step task depends; the
	// pattern's tasks follow at k = off + s·Width + x.
	off int
}

// InflationFactor is how much longer every pattern task runs at the
// configured thread count than at one thread: 1 + Inflation·(Threads−1),
// the work-time inflation of a family of runs (gen --family). The serial
// task runs alone and does not inflate.
func InflationFactor(cfg Config) float64 { return 1 + cfg.Inflation*float64(cfg.Threads-1) }

// SerialLine is the source line of the serial task's construct.
const SerialLine = 36

// SerialConstruct names the serial task's construct in the report.
func SerialConstruct(workload string) string { return fmt.Sprintf("%s.c:%d:5", workload, SerialLine) }

// OutlierFactor is how much longer an injected outlier task runs.
const OutlierFactor = 8

func newPattern(cfg *Config) *pattern { return &pattern{cfg: cfg} }

// firstTaskSeq is the id sequence number of a rank's first task: the master
// thread has already made the initial task (1), the parallel region (2) and
// its implicit task (3).
const firstTaskSeq = 4

func (w *pattern) candidates(x int) []int {
	c := w.cfg
	W := c.Width
	var out []int
	switch c.Workload {
	case "stencil":
		for d := -1; d <= 1; d++ {
			if x+d >= 0 && x+d < W {
				out = append(out, x+d)
			}
		}
	case "nearest":
		lo, hi := x-(c.Radix-1)/2, x+c.Radix/2
		for v := max(lo, 0); v <= min(hi, W-1); v++ {
			out = append(out, v)
		}
	case "spread":
		stride := max(W/c.Radix, 1)
		seen := map[int]bool{}
		for i := 0; i < c.Radix; i++ {
			v := (x + i*stride) % W
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		sort.Ints(out)
	}
	return out
}

func (w *pattern) plan() error {
	c := w.cfg
	if c.Width < c.Ranks {
		return fmt.Errorf("--width %d is smaller than --ranks %d: every rank needs a point", c.Width, c.Ranks)
	}
	if c.Radix < 1 || c.Period < 1 {
		return fmt.Errorf("--radix and --period must be at least 1")
	}
	if c.Events > 0 {
		perTask := int64(6)
		if c.Workload == "spread" || c.Workload == "nearest" {
			perTask = 4 + int64(c.Radix)
		}
		if c.Lean {
			perTask = 4 // create, dependences, start, complete
		}
		c.Steps = int(max(1, c.Events/(perTask*int64(c.Width))))
	}
	W := c.Width
	if c.SerialNS > 0 {
		w.off = 1
	}
	w.n = W*c.Steps + w.off
	rng := rand.New(rand.NewSource(c.Seed))
	// The pattern of each step class (step mod period): which candidates are
	// kept when only a fraction of dependences is connected.
	classes := make([][][]int32, c.Period)
	for p := range classes {
		classes[p] = make([][]int32, W)
		for x := 0; x < W; x++ {
			for _, v := range w.candidates(x) {
				if c.Fraction >= 1 || rng.Float64() < c.Fraction {
					classes[p][x] = append(classes[p][x], int32(v))
				}
			}
		}
	}
	w.dur = make([]int64, w.n)
	w.preds = make([][]int32, w.n)
	w.rank = make([]int32, w.n)
	if w.off == 1 {
		w.dur[0] = c.SerialNS // rank 0, no predecessors
	}
	inflate := InflationFactor(*c)
	for k := w.off; k < w.n; k++ {
		s, x := (k-w.off)/W, (k-w.off)%W
		w.dur[k] = jittered(rng, c.TaskNS, c.Jitter)
		if c.Inflation != 0 {
			w.dur[k] = int64(math.Round(float64(w.dur[k]) * inflate))
		}
		w.rank[k] = int32(int64(x) * int64(c.Ranks) / int64(W))
		switch {
		case s > 0:
			ps := classes[s%c.Period][x]
			w.preds[k] = make([]int32, len(ps))
			for i, v := range ps {
				w.preds[k][i] = int32((s-1)*W+w.off) + v
			}
		case w.off == 1:
			w.preds[k] = []int32{0}
		}
	}
	if err := w.injectOutliers(); err != nil {
		return err
	}
	if c.Workload == "pipeline" {
		// One chain through every task in order: the critical path crosses
		// ranks at every point boundary (a wavefront reduced to a line).
		for k := 1; k < w.n; k++ {
			w.preds[k] = []int32{int32(k - 1)}
		}
	}
	// Successors on other ranks, per task, found once rather than by every
	// rank's writer.
	w.remoteSuccs = make([][]int32, w.n)
	for k := 0; k < w.n; k++ {
		for _, pr := range w.preds[k] {
			if w.rank[pr] != w.rank[k] {
				w.remoteSuccs[pr] = append(w.remoteSuccs[pr], int32(k))
			}
		}
	}
	w.order = make([][]int32, c.Ranks)
	w.seq = make([]int64, w.n)
	for k := 0; k < w.n; k++ {
		r := w.rank[k]
		w.seq[k] = firstTaskSeq + int64(len(w.order[r]))
		w.order[r] = append(w.order[r], int32(k))
	}
	w.schedule()
	return nil
}

// injectOutliers picks Config.Outliers tasks with a generator of their own
// (so the other tasks' durations are those of the same trace without
// outliers) and makes them OutlierFactor× longer; the schedule is computed
// afterwards, so it and every expected value account for them.
func (w *pattern) injectOutliers() error {
	c := w.cfg
	if c.Outliers == 0 {
		return nil
	}
	if c.Outliers > w.n-w.off {
		return fmt.Errorf("--outliers %d: the pattern has only %d tasks", c.Outliers, w.n-w.off)
	}
	rng := rand.New(rand.NewSource(c.Seed ^ 0x0a11e5))
	w.outlier = make(map[int32]bool, c.Outliers)
	for len(w.outlier) < c.Outliers {
		k := int32(rng.Intn(w.n-w.off) + w.off)
		if !w.outlier[k] {
			w.outlier[k] = true
			w.outliers = append(w.outliers, k)
		}
	}
	sort.Slice(w.outliers, func(i, j int) bool { return w.outliers[i] < w.outliers[j] })
	for _, k := range w.outliers {
		w.dur[k] *= OutlierFactor
	}
	return nil
}

// cost is task k's cost attribute: its nominal duration in ns, standing for
// a flop estimate proportional to it.
func (w *pattern) cost(k int32) int64 {
	if w.outlier[k] {
		return w.dur[k] / OutlierFactor
	}
	return w.dur[k]
}

func (w *pattern) lat(a, b int32) int64 {
	if w.rank[a] != w.rank[b] {
		return w.cfg.LatencyNS
	}
	return 0
}

// schedule runs the global greedy list schedule: tasks in order of ready
// time, each on the earliest free thread of its rank.
func (w *pattern) schedule() {
	c := w.cfg
	w.start = make([]int64, w.n)
	w.end = make([]int64, w.n)
	w.thr = make([]int32, w.n)
	succs := make([][]int32, w.n)
	missing := make([]int32, w.n)
	ready := make([]int64, w.n)
	q := &readyQueue{}
	for k := 0; k < w.n; k++ {
		missing[k] = int32(len(w.preds[k]))
		for _, p := range w.preds[k] {
			succs[p] = append(succs[p], int32(k))
		}
		if missing[k] == 0 {
			q.push(readyItem{0, int32(k)})
		}
	}
	free := make([][]int64, c.Ranks)
	for r := range free {
		free[r] = make([]int64, c.Threads)
	}
	for len(*q) > 0 {
		it := q.pop()
		k := it.k
		f := free[w.rank[k]]
		best := 0
		for t := 1; t < len(f); t++ {
			if f[t] < f[best] {
				best = t
			}
		}
		w.start[k] = max(it.t, f[best])
		w.end[k] = w.start[k] + w.dur[k]
		w.thr[k] = int32(best)
		f[best] = w.end[k]
		for _, s := range succs[k] {
			ready[s] = max(ready[s], w.end[k]+w.lat(k, s))
			missing[s]--
			if missing[s] == 0 {
				q.push(readyItem{ready[s], s})
			}
		}
	}
	w.ready = ready
	w.fin = make([]int64, c.Ranks)
	for k := 0; k < w.n; k++ {
		w.fin[w.rank[k]] = max(w.fin[w.rank[k]], w.end[k])
	}
}

type readyItem struct {
	t int64
	k int32
}

// readyQueue is a binary min-heap of ready tasks by (time, task).
type readyQueue []readyItem

func (q readyQueue) less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].k < q[j].k
}

func (q *readyQueue) push(it readyItem) {
	*q = append(*q, it)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *readyQueue) pop() readyItem {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

func taskAddr(k int32) uint64 { return 0x7f0000000000 + uint64(k)*64 }

func (w *pattern) id(k int32) int64 { return trace.MakeID(0, w.seq[k]) }

func (w *pattern) write(p *proc) {
	c := w.cfg
	r := int32(p.rank)
	end := w.fin[r]
	loc := p.w.AddLocation(trace.Location{File: c.Workload + ".c", Line: 42, Col: 9, Func: "step"})
	regionLoc := p.w.AddLocation(trace.Location{File: c.Workload + ".c", Line: 30, Col: 1, Func: "main"})
	barLoc := p.w.AddLocation(trace.Location{File: c.Workload + ".c", Line: 55, Col: 1, Func: "main"})
	flops := p.w.String("flops")
	serialLoc := loc
	if w.off == 1 {
		serialLoc = p.w.AddLocation(trace.Location{File: c.Workload + ".c", Line: SerialLine, Col: 5, Func: "init"})
	}
	rr := p.openRun(c.Threads, end, regionLoc)
	par, impl := rr.par, rr.impl
	// The master creates every local task at time 0.
	var deps []trace.Dep
	for _, k := range w.order[r] {
		deps = deps[:0]
		for _, pr := range w.preds[k] {
			if w.rank[pr] == r {
				deps = append(deps, trace.Dep{Addr: taskAddr(pr), Type: trace.DepIn})
			}
		}
		deps = append(deps, trace.Dep{Addr: taskAddr(k), Type: trace.DepInout})
		l := loc
		if int(k) < w.off {
			l = serialLoc
		}
		id := p.create(0, 0, impl[0], l, deps)
		if id != w.id(k) {
			p.err = fmt.Errorf("internal: task id %#x, planned %#x", id, w.id(k))
			return
		}
		if c.Lean {
			continue
		}
		p.emit(0, trace.TaskAttr, 0, id, flops, w.cost(k))
		for _, pr := range w.preds[k] {
			if w.rank[pr] == r {
				p.emit(0, trace.TaskDependence, 0, w.id(pr), id)
			}
		}
	}
	// Remote dependences arrive on the master thread.
	type arrival struct {
		t        int64
		succ, pr int32
	}
	var arrivals []arrival
	succs := map[int32][]int32{}
	for _, k := range w.order[r] {
		for _, pr := range w.preds[k] {
			if w.rank[pr] != r {
				arrivals = append(arrivals, arrival{w.end[pr] + c.LatencyNS, k, pr})
			}
		}
	}
	for _, pr := range w.order[r] {
		if rs := w.remoteSuccs[pr]; len(rs) > 0 {
			succs[pr] = rs
		}
	}
	sort.Slice(arrivals, func(i, j int) bool {
		if arrivals[i].t != arrivals[j].t {
			return arrivals[i].t < arrivals[j].t
		}
		return arrivals[i].succ < arrivals[j].succ
	})
	next := 0
	flush := func(upto int64, inclusive bool) {
		for next < len(arrivals) && (arrivals[next].t < upto || inclusive && arrivals[next].t == upto) {
			a := arrivals[next]
			p.emit(0, trace.RemoteDepIn, a.t, w.id(a.succ), int64(w.rank[a.pr]), w.id(a.pr))
			next++
		}
	}
	// Executions per thread, in start order.
	byThread := make([][]int32, c.Threads)
	for _, k := range w.order[r] {
		byThread[w.thr[k]] = append(byThread[w.thr[k]], k)
	}
	for t := 0; t < c.Threads; t++ {
		sort.Slice(byThread[t], func(i, j int) bool { return w.start[byThread[t][i]] < w.start[byThread[t][j]] })
		p.syncBegin(t, 0, ompt.SyncBarrierImplicitParallel, par, impl[t], barLoc)
		for _, k := range byThread[t] {
			if t == 0 {
				flush(w.start[k], true)
			}
			p.emit(t, trace.TaskSchedule, w.start[k], impl[t], ompt.StatusSwitch, w.id(k))
			if t == 0 {
				flush(w.end[k], false)
			}
			p.emit(t, trace.TaskSchedule, w.end[k], w.id(k), ompt.StatusComplete, impl[t])
			for _, s := range succs[k] {
				p.emit(t, trace.RemoteDepOut, w.end[k], w.id(k), int64(w.rank[s]), w.id(s))
			}
		}
		if t == 0 {
			flush(end, true)
		}
		p.syncEnd(t, end, ompt.SyncBarrierImplicitParallel, par, impl[t], barLoc)
		p.closeThread(rr, t, end)
	}
	p.closeRun(rr, end)
}

func (w *pattern) expected() Expected {
	e := Expected{}
	c := w.cfg
	// Longest path ending at each task (forward) and starting at it (backward).
	ef := make([]int64, w.n)
	var span, work int64
	for k := 0; k < w.n; k++ {
		var m int64
		for _, p := range w.preds[k] {
			m = max(m, ef[p]+w.lat(p, int32(k)))
		}
		ef[k] = m + w.dur[k]
		span = max(span, ef[k])
		work += w.dur[k]
	}
	hasSucc := make([]bool, w.n)
	bl := make([]int64, w.n)
	for k := w.n - 1; k >= 0; k-- {
		bl[k] += w.dur[k]
		for _, p := range w.preds[k] {
			hasSucc[p] = true
			bl[p] = max(bl[p], bl[k]+w.lat(p, int32(k)))
		}
	}
	// bl[p] accumulated the max over successors before its own duration is
	// added when the loop reaches p (successors have larger indices).
	var roots []int64
	leaves := 0
	for k := 0; k < w.n; k++ {
		if len(w.preds[k]) == 0 {
			roots = append(roots, bl[k])
		}
		if !hasSucc[k] {
			leaves++
		}
	}
	var runTime int64
	for _, f := range w.fin {
		runTime = max(runTime, f)
	}
	rowsB := make([]any, c.Ranks)
	var totLife int64
	for r := 0; r < c.Ranks; r++ {
		var wk int64
		for _, k := range w.order[r] {
			wk += w.dur[k]
		}
		// Every thread is accounted over the run's global window.
		life := int64(c.Threads) * runTime
		rowsB[r] = map[string]any{"rank": r, "work_ns": wk, "idleness_ns": life - wk, "overhead_ns": 0, "mpi_ns": 0, "thread_time_ns": life}
		totLife += life
	}
	// Every task runs on one rank: the ranks' work is the tasks'.
	setTaskRun(e, work, 0, totLife, rowsB, span, runTime)
	setGraph(e, roots, leaves, w.n)
	e.set("tasks.count", w.n)
	w.setOMPWaits(e, runTime)
	if w.off == 0 {
		setConstruct(e, c.Workload+".c:42:9", func(yield func(int64)) {
			for _, d := range w.dur {
				yield(d)
			}
		})
	} else {
		setConstructs(e, []constructDurs{
			{c.Workload + ".c:42:9", w.dur[w.off:]},
			{SerialConstruct(c.Workload), w.dur[:w.off]},
		})
	}
	if c.Outliers > 0 {
		// The report lists anomalies by start time, then rank, thread, task.
		ks := append([]int32(nil), w.outliers...)
		sort.Slice(ks, func(i, j int) bool {
			a, b := ks[i], ks[j]
			if w.start[a] != w.start[b] {
				return w.start[a] < w.start[b]
			}
			if w.rank[a] != w.rank[b] {
				return w.rank[a] < w.rank[b]
			}
			if w.thr[a] != w.thr[b] {
				return w.thr[a] < w.thr[b]
			}
			return w.id(a) < w.id(b)
		})
		inj := make([]any, len(ks))
		for i, k := range ks {
			inj[i] = map[string]any{"rank": int(w.rank[k]), "thread": int(w.thr[k]), "task": w.id(k), "start_ns": w.start[k]}
		}
		e.set("anomalies.found", len(ks))
		e.set("anomalies.tasks", inj)
	}
	return e
}

// setGraph records the per-root graph metrics (seed §4.5.3): each root's
// longest path relative to the longest of all.
func setGraph(e Expected, roots []int64, leaves, tasks int) {
	if len(roots) == 0 {
		return
	}
	var cp int64
	for _, v := range roots {
		cp = max(cp, v)
	}
	rel := make([]float64, len(roots))
	var sum float64
	within := 0
	for i, v := range roots {
		rel[i] = float64(v) / float64(cp)
		sum += rel[i]
		if rel[i] >= 0.96 {
			within++
		}
	}
	sort.Float64s(rel)
	med := rel[len(rel)/2]
	if len(rel)%2 == 0 {
		med = (rel[len(rel)/2-1] + rel[len(rel)/2]) / 2
	}
	e.set("graph.tasks", tasks)
	e.set("graph.roots", len(roots))
	e.set("graph.leaves", leaves)
	e.set("graph.critical_path_ns", cp)
	e.set("graph.root_paths.max", rel[len(rel)-1])
	e.set("graph.root_paths.min", rel[0])
	e.set("graph.root_paths.mean", sum/float64(len(rel)))
	e.set("graph.root_paths.median", med)
	e.set("graph.root_paths.within_4pct", within)
	for _, k := range []string{"max", "min", "mean", "median"} {
		e.tol("graph.root_paths."+k, 1e-9)
	}
}

// setOMPWaits: every thread waits in the region's implicit barrier from
// time 0 to the rank's end whenever it runs no task, and outside any
// construct from there to the end of the run. The master creates every
// task at time 0 and the schedule never leaves a thread waiting while a
// task is ready, so a wait is on dependences while some task of the rank
// has yet to become ready (before the rank's last ready time) and on
// nothing after.
func (w *pattern) setOMPWaits(e Expected, runTime int64) {
	c := w.cfg
	procs := make([]ompWait, c.Ranks)
	last := make([]int64, c.Ranks)
	busy := make([][][][2]int64, c.Ranks)
	for r := range busy {
		busy[r] = make([][][2]int64, c.Threads)
	}
	for k := 0; k < w.n; k++ {
		r := w.rank[k]
		last[r] = max(last[r], w.ready[k])
		busy[r][w.thr[k]] = append(busy[r][w.thr[k]], [2]int64{w.start[k], w.end[k]})
	}
	var barrier, outside, deps int64
	for r := range procs {
		fin := w.fin[r]
		p := ompWait{rank: r, outside: int64(c.Threads) * (runTime - fin)}
		for _, b := range busy[r] {
			sort.Slice(b, func(i, j int) bool { return b[i][0] < b[j][0] })
			p.barrier += gapsBefore(b, fin, fin)
			p.deps += gapsBefore(b, fin, last[r])
		}
		p.none = p.barrier + p.outside - p.deps
		procs[r] = p
		barrier += p.barrier
		outside += p.outside
		deps += p.deps
	}
	setOMPWaits(e, procs, []ompConstruct{
		{kind: "barrier_implicit", construct: c.Workload + ".c:55:1", region: c.Workload + ".c:30:1", count: int64(c.Ranks * c.Threads),
			waiting: barrier, deps: deps, none: barrier - deps},
		{kind: "outside_sync", waiting: outside, none: outside},
	})
}
