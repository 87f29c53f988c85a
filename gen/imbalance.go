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
// overhead = 0. With SyncRuntimeNS = R the runtime runs R ns inside each
// taskwait and barrier before and after the wait: an iteration lasts
// n·g + 4R, and overhead is I·n·4R (sync_runtime_ns), work and idleness
// unchanged (under analyze --sync-runtime-as-work, POT's booking, work is
// I·(g·n(n+1)/2 + 4Rn) and overhead 0).
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
	n, g, R := int64(c.Threads), c.GrainNS, c.SyncRuntimeNS
	L := n*g + 4*R // one iteration
	end := int64(c.Iterations) * L
	loc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 21, Col: 9, Func: "work"})
	regionLoc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 15, Col: 1, Func: "main"})
	twLoc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 23, Col: 9, Func: "work"})
	barLoc := p.w.AddLocation(trace.Location{File: "imbalance.c", Line: 24, Col: 9, Func: "work"})
	rr := p.openRun(c.Threads, end, regionLoc)
	par, impl := rr.par, rr.impl
	for t := 0; t < c.Threads; t++ {
		d := int64(t+1) * g
		for it := int64(0); it < int64(c.Iterations); it++ {
			s := it * L
			task := p.create(t, s, impl[t], loc, nil)
			p.syncBeginWait(t, s, s+R, ompt.SyncTaskwait, par, impl[t], twLoc)
			p.run(t, impl[t], task, s+R, s+R+d)
			p.syncEndWait(t, s+R+d, s+2*R+d, ompt.SyncTaskwait, par, impl[t], twLoc)
			// the last thread's wait is empty: it completes the barrier
			p.syncBeginWait(t, s+2*R+d, s+3*R+d, ompt.SyncBarrierExplicit, par, impl[t], barLoc)
			p.syncEndWait(t, s+L-R, s+L, ompt.SyncBarrierExplicit, par, impl[t], barLoc)
		}
		p.closeThread(rr, t, end)
	}
	p.closeRun(rr, end)
}

func (w *imbalance) expected() Expected {
	c := w.cfg
	n, g, it, sr := int64(c.Threads), c.GrainNS, int64(c.Iterations), c.SyncRuntimeNS
	work := it * g * n * (n + 1) / 2
	idle := it * g * n * (n - 1) / 2
	rt := it * n * 4 * sr // sync runtime, booked as overhead
	life := it * (n*g + 4*sr)
	e := Expected{}
	rows := make([]any, c.Ranks)
	for r := range rows {
		rows[r] = map[string]any{
			"rank": r, "threads": c.Threads, "thread_time_ns": n * life,
			"work_ns": work, "idleness_ns": idle, "overhead_ns": rt, "mpi_ns": 0,
			"idleness_serial_ns": 0, "sync_runtime_ns": rt,
		}
	}
	R := int64(c.Ranks)
	e.set("breakdown.thread_time_ns", R*n*life)
	e.set("breakdown.work_ns", R*work)
	e.set("breakdown.idleness_ns", R*idle)
	e.set("breakdown.overhead_ns", R*rt)
	e.set("breakdown.sync_runtime_ns", R*rt)
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
