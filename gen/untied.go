package gen

import (
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// untied is a chain of L untied tasks (depend(inout) on one address) run the
// way LLVM libomp runs untied tasks: a task's stub runs first for S ns and
// switches back to the implicit task below it, which re-queues the task
// (task_schedule prior=task status=switch next=implicit); Q ns later its
// body runs for D ns on the next thread and completes. Thread 0 creates the
// whole chain at time 0 inside a single region; every thread then waits in
// the region's barrier and runs the pieces. Task k's stub starts when task
// k−1 completes, so one period is P = S + Q + D and the run lasts L·P.
//
// With n threads, per rank: work = L·(S+D) (stub and body), overhead =
// n·L·Q (the queued task is ready while no thread runs anything), idleness
// = (n−1)·L·(S+D); every task runs S+D; the critical path is the chain,
// L·(S+D), one node per task. S = D/20 and Q = D/10 (at least 1 ns).
type untied struct {
	cfg     *Config
	s, q, d int64
}

func newUntied(cfg *Config) *untied { return &untied{cfg: cfg} }

// eventsPerUntiedTask: create + dependences, four schedules.
const eventsPerUntiedTask = 6

func (w *untied) plan() error {
	c := w.cfg
	if c.Events > 0 {
		c.Steps = int(max(1, c.Events/int64(c.Ranks*eventsPerUntiedTask)))
	}
	w.d = c.TaskNS
	w.s, w.q = max(1, w.d/20), max(1, w.d/10)
	return nil
}

func (w *untied) period() int64 { return w.s + w.q + w.d }

func (w *untied) write(p *proc) {
	c := w.cfg
	n, L := c.Threads, int64(c.Steps)
	end := L * w.period()
	loc := p.w.AddLocation(trace.Location{File: "untied.c", Line: 12, Col: 1, Func: "chain"})
	regionLoc := p.w.AddLocation(trace.Location{File: "untied.c", Line: 8, Col: 1, Func: "main"})
	barLoc := p.w.AddLocation(trace.Location{File: "untied.c", Line: 8, Col: 1, Func: "main"})
	rr := p.openRun(n, end, regionLoc)
	par, impl := rr.par, rr.impl
	deps := []trace.Dep{{Addr: 0x7ffc0000, Type: trace.DepInout}}
	tasks := make([]int64, L)
	for k := range tasks {
		tasks[k] = p.create(0, 0, impl[0], loc, deps)
	}
	for t := 0; t < n; t++ {
		p.syncBegin(t, 0, ompt.SyncBarrierImplicitParallel, par, impl[t], barLoc)
	}
	for k := int64(0); k < L; k++ {
		s := k * w.period()
		a, b := int(k%int64(n)), int((k+1)%int64(n))
		p.emit(a, trace.TaskSchedule, s, impl[a], ompt.StatusSwitch, tasks[k])
		p.emit(a, trace.TaskSchedule, s+w.s, tasks[k], ompt.StatusSwitch, impl[a])
		p.emit(b, trace.TaskSchedule, s+w.s+w.q, impl[b], ompt.StatusSwitch, tasks[k])
		p.emit(b, trace.TaskSchedule, s+w.period(), tasks[k], ompt.StatusComplete, impl[b])
	}
	for t := 0; t < n; t++ {
		p.syncEnd(t, end, ompt.SyncBarrierImplicitParallel, par, impl[t], barLoc)
		p.closeThread(rr, t, end)
	}
	p.closeRun(rr, end)
}

func (w *untied) expected() Expected {
	c := w.cfg
	n, L, R := int64(c.Threads), int64(c.Steps), int64(c.Ranks)
	run := w.s + w.d
	work, over, idle := L*run, n*L*w.q, (n-1)*L*run
	life := L * w.period()
	rows := make([]any, c.Ranks)
	for r := range rows {
		rows[r] = map[string]any{
			"rank": r, "threads": c.Threads, "thread_time_ns": n * life,
			"work_ns": work, "idleness_ns": idle, "overhead_ns": over, "mpi_ns": 0,
		}
	}
	e := Expected{}
	e.set("breakdown.thread_time_ns", R*n*life)
	e.set("breakdown.work_ns", R*work)
	e.set("breakdown.idleness_ns", R*idle)
	e.set("breakdown.overhead_ns", R*over)
	e.set("breakdown.mpi_ns", 0)
	e.set("breakdown.per_process", rows)
	e.set("trace.duration_ns", life)
	e.set("tasks.count", R*L)
	e.set("critical_path.length_ns", L*run)
	e.set("critical_path.work_ns", R*L*run)
	e.set("graph.tasks", R*L)
	e.set("graph.edges", R*(L-1))
	setConstruct(e, "untied.c:12:1", func(yield func(int64)) {
		for i := int64(0); i < R*L; i++ {
			yield(run)
		}
	})
	return e
}
