package gen

import (
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// imbalance is POT's load-imbalance microbenchmark (seed
// pot-dependent-task-time-breakdown.txt §4.2): in one parallel region, each
// thread t ∈ [1,n] creates one task running t·g, waits for it (taskwait) and
// meets the others at a barrier; I iterations. With no runtime overhead the
// ideal per-rank values are work = I·g·n(n+1)/2, idleness = I·g·n(n−1)/2,
// overhead = 0.
type imbalance struct {
	cfg *Config
}

func newImbalance(cfg *Config) *imbalance { return &imbalance{cfg: cfg} }

// eventsPerThreadIter is what one thread records per iteration: task_create,
// taskwait (sync + wait begin/end), two schedules, barrier (same four).
const eventsPerThreadIter = 11

func (w *imbalance) plan() error {
	c := w.cfg
	if c.Events > 0 {
		per := int64(c.Ranks * c.Threads * eventsPerThreadIter)
		c.Iterations = int(max(1, c.Events/per))
	}
	return nil
}

func (w *imbalance) write(p *proc) {
	c := w.cfg
	n, g := int64(c.Threads), c.GrainNS
	end := int64(c.Iterations) * n * g
	loc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 21, Col: 9, Func: "work"})
	regionLoc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 15, Col: 1, Func: "main"})
	twLoc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 23, Col: 9, Func: "work"})
	barLoc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 24, Col: 9, Func: "work"})
	rr := p.openRun(c.Threads, end, regionLoc)
	par, impl := rr.par, rr.impl
	for t := 0; t < c.Threads; t++ {
		d := int64(t+1) * g
		for it := int64(0); it < int64(c.Iterations); it++ {
			s := it * n * g
			task := p.create(t, s, impl[t], loc, nil)
			p.syncBegin(t, s, ompt.SyncTaskwait, par, impl[t], twLoc)
			p.run(t, impl[t], task, s, s+d)
			p.syncEnd(t, s+d, ompt.SyncTaskwait, par, impl[t], twLoc)
			p.syncBegin(t, s+d, ompt.SyncBarrierExplicit, par, impl[t], barLoc)
			p.syncEnd(t, s+n*g, ompt.SyncBarrierExplicit, par, impl[t], barLoc)
		}
		p.closeThread(rr, t, end)
	}
	p.closeRun(rr, end)
}

func (w *imbalance) expected() Expected {
	c := w.cfg
	n, g, it := int64(c.Threads), c.GrainNS, int64(c.Iterations)
	work := it * g * n * (n + 1) / 2
	idle := it * g * n * (n - 1) / 2
	life := it * n * g
	e := Expected{}
	rows := make([]any, c.Ranks)
	for r := range rows {
		rows[r] = map[string]any{
			"rank": r, "threads": c.Threads, "thread_time_ns": n * life,
			"work_ns": work, "idleness_ns": idle, "overhead_ns": 0, "mpi_ns": 0,
			"idleness_serial_ns": 0,
		}
	}
	R := int64(c.Ranks)
	e.set("breakdown.thread_time_ns", R*n*life)
	e.set("breakdown.work_ns", R*work)
	e.set("breakdown.idleness_ns", R*idle)
	e.set("breakdown.overhead_ns", 0)
	e.set("breakdown.mpi_ns", 0)
	e.set("breakdown.idleness_serial_ns", 0)
	e.set("breakdown.per_process", rows)
	e.set("trace.duration_ns", life)
	e.set("tasks.count", R*n*it)
	setConstruct(e, "imbalance.c:21:9", func(yield func(int64)) {
		for r := int64(0); r < R; r++ {
			for t := int64(1); t <= n; t++ {
				for i := int64(0); i < it; i++ {
					yield(t * g)
				}
			}
		}
	})
	return e
}
