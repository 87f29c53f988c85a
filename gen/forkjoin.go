package gen

import (
	"math/rand"
	"sort"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// forkjoin: on every rank, the master creates Width independent tasks per
// step and waits for them with taskwait; Steps steps. The team executes them
// greedily. The dependence DAG is carried by creation and taskwait edges only,
// so the span is Σ_steps max duration, and every task is both a root and a
// leaf of the task-dependence graph.
type forkJoin struct {
	cfg   *Config
	dur   [][]int64 // per rank, per task (step-major)
	start [][]int64
	thr   [][]int32
	stepT [][]int64 // per rank: step boundaries (len Steps+1)
}

func newForkJoin(cfg *Config) *forkJoin { return &forkJoin{cfg: cfg} }

func (w *forkJoin) plan() error {
	c := w.cfg
	if c.Events > 0 {
		// per task: create, two schedules; per step: taskwait's four events
		c.Steps = int(max(1, c.Events/(int64(c.Ranks)*(3*int64(c.Width)+4))))
	}
	rng := rand.New(rand.NewSource(c.Seed))
	n := c.Width * c.Steps
	w.dur = make([][]int64, c.Ranks)
	w.start = make([][]int64, c.Ranks)
	w.thr = make([][]int32, c.Ranks)
	w.stepT = make([][]int64, c.Ranks)
	for r := 0; r < c.Ranks; r++ {
		w.dur[r] = make([]int64, n)
		w.start[r] = make([]int64, n)
		w.thr[r] = make([]int32, n)
		w.stepT[r] = make([]int64, c.Steps+1)
		for k := range w.dur[r] {
			w.dur[r][k] = jittered(rng, c.TaskNS, c.Jitter)
		}
		free := make([]int64, c.Threads)
		var t0 int64
		for s := 0; s < c.Steps; s++ {
			w.stepT[r][s] = t0
			for i := range free {
				free[i] = t0
			}
			var end int64 = t0
			for x := 0; x < c.Width; x++ {
				k := s*c.Width + x
				best := 0
				for t := 1; t < c.Threads; t++ {
					if free[t] < free[best] {
						best = t
					}
				}
				w.start[r][k] = free[best]
				w.thr[r][k] = int32(best)
				free[best] += w.dur[r][k]
				end = max(end, free[best])
			}
			t0 = end
		}
		w.stepT[r][c.Steps] = t0
	}
	return nil
}

func (w *forkJoin) write(p *proc) {
	c := w.cfg
	r := p.rank
	end := w.stepT[r][c.Steps]
	loc := p.w.AddLocation(trace.Location{File: "forkjoin.c", Line: 12, Col: 9, Func: "step"})
	twLoc := p.w.AddLocation(trace.Location{File: "forkjoin.c", Line: 14, Col: 9, Func: "step"})
	tgLoc := p.w.AddLocation(trace.Location{File: "forkjoin.c", Line: 11, Col: 9, Func: "step"})
	regionLoc := p.w.AddLocation(trace.Location{File: "forkjoin.c", Line: 8, Col: 1, Func: "main"})
	barLoc := p.w.AddLocation(trace.Location{File: "forkjoin.c", Line: 20, Col: 1, Func: "main"})
	rr := p.openRun(c.Threads, end, regionLoc)
	par, impl := rr.par, rr.impl
	for t := 1; t < c.Threads; t++ {
		p.syncBegin(t, 0, ompt.SyncBarrierImplicitParallel, par, impl[t], barLoc)
	}
	ids := make([]int64, c.Width)
	byThread := make([][]int, c.Threads)
	for s := 0; s < c.Steps; s++ {
		s0, s1 := w.stepT[r][s], w.stepT[r][s+1]
		if c.Taskgroup {
			// The group opens before its tasks are created; the master
			// waits at its end.
			p.emit(0, trace.SyncBegin, s0, ompt.SyncTaskgroup, par, impl[0], tgLoc)
		}
		for x := 0; x < c.Width; x++ {
			ids[x] = p.create(0, s0, impl[0], loc, nil)
		}
		if c.Taskgroup {
			p.emit(0, trace.SyncWaitBegin, s0, ompt.SyncTaskgroup, par, impl[0])
		} else {
			p.syncBegin(0, s0, ompt.SyncTaskwait, par, impl[0], twLoc)
		}
		for t := range byThread {
			byThread[t] = byThread[t][:0]
		}
		for x := 0; x < c.Width; x++ {
			k := s*c.Width + x
			byThread[w.thr[r][k]] = append(byThread[w.thr[r][k]], x)
		}
		for t := 0; t < c.Threads; t++ {
			xs := byThread[t]
			sort.Slice(xs, func(i, j int) bool { return w.start[r][s*c.Width+xs[i]] < w.start[r][s*c.Width+xs[j]] })
			for _, x := range xs {
				k := s*c.Width + x
				p.run(t, impl[t], ids[x], w.start[r][k], w.start[r][k]+w.dur[r][k])
			}
		}
		if c.Taskgroup {
			p.syncEnd(0, s1, ompt.SyncTaskgroup, par, impl[0], tgLoc)
		} else {
			p.syncEnd(0, s1, ompt.SyncTaskwait, par, impl[0], twLoc)
		}
	}
	p.syncBegin(0, end, ompt.SyncBarrierImplicitParallel, par, impl[0], barLoc)
	for t := 0; t < c.Threads; t++ {
		p.syncEnd(t, end, ompt.SyncBarrierImplicitParallel, par, impl[t], barLoc)
		p.closeThread(rr, t, end)
	}
	p.closeRun(rr, end)
}

func (w *forkJoin) expected() Expected {
	c := w.cfg
	e := Expected{}
	var span, work, totLife, runTime int64
	var roots []int64
	rows := make([]any, c.Ranks)
	for r := 0; r < c.Ranks; r++ {
		runTime = max(runTime, w.stepT[r][c.Steps])
	}
	for r := 0; r < c.Ranks; r++ {
		var s1, wk int64
		for s := 0; s < c.Steps; s++ {
			var m int64
			for x := 0; x < c.Width; x++ {
				d := w.dur[r][s*c.Width+x]
				m = max(m, d)
				wk += d
				roots = append(roots, d)
			}
			s1 += m
		}
		span = max(span, s1)
		work += wk
		// Every thread is accounted over the run's global window.
		life := int64(c.Threads) * runTime
		totLife += life
		rows[r] = map[string]any{"rank": r, "work_ns": wk, "idleness_ns": life - wk, "overhead_ns": 0, "mpi_ns": 0, "thread_time_ns": life}
	}
	setTaskRun(e, work, 0, totLife, rows, span, runTime)
	setGraph(e, roots, len(roots), len(roots))
	e.set("tasks.count", len(roots))
	// Workers wait in the region's implicit barrier from its start to its
	// end whenever they run no task; the master waits in each step's
	// taskwait once its own tasks of the step are done; every thread of a
	// rank that ends early is outside any construct until the run ends.
	// Tasks of a step are all created at its start and taken greedily, so
	// no thread waits while one is ready, and none has dependences.
	procs := make([]ompWait, c.Ranks)
	var barrier, taskwait int64
	for r := 0; r < c.Ranks; r++ {
		end := w.stepT[r][c.Steps]
		busy := make([]int64, c.Threads)
		for k, d := range w.dur[r] {
			busy[w.thr[r][k]] += d
		}
		p := ompWait{rank: r, taskwait: end - busy[0], outside: int64(c.Threads) * (runTime - end)}
		for t := 1; t < c.Threads; t++ {
			p.barrier += end - busy[t]
		}
		p.none = p.barrier + p.taskwait + p.outside
		procs[r] = p
		barrier += p.barrier
		taskwait += p.taskwait
	}
	var outside int64
	for _, p := range procs {
		outside += p.outside
	}
	join := ompConstruct{kind: "taskwait", construct: "forkjoin.c:14:9", region: "forkjoin.c:8:1", count: int64(c.Ranks * c.Steps), waiting: taskwait, none: taskwait}
	if c.Taskgroup {
		join.kind, join.construct = "taskgroup", "forkjoin.c:11:9"
		for i := range procs {
			procs[i].taskgroup, procs[i].taskwait = procs[i].taskwait, 0
		}
	}
	setOMPWaits(e, procs, []ompConstruct{
		{kind: "barrier_implicit", construct: "forkjoin.c:20:1", region: "forkjoin.c:8:1", count: int64(c.Ranks * c.Threads), waiting: barrier, none: barrier},
		join,
		{kind: "outside_sync", waiting: outside, none: outside},
	})
	setConstruct(e, "forkjoin.c:12:9", func(yield func(int64)) {
		for _, ds := range w.dur {
			for _, d := range ds {
				yield(d)
			}
		}
	})
	return e
}
