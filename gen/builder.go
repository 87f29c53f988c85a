package gen

import (
	"fmt"
	"math"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// clock maps true time to what a process's clock reads: an offset plus a
// linear drift. Rank 0 is the reference (zero offset and drift), as the
// collector measures offsets against rank 0.
type clock struct {
	offset int64
	ppm    float64
}

func (c clock) local(t int64) int64 {
	if c.ppm == 0 {
		return t + c.offset
	}
	return t + c.offset + int64(math.Round(float64(t)*c.ppm*1e-6))
}

// proc writes one synthetic process the way the collector records a real one:
// OMPT callbacks become events with the same arguments, MPI calls become
// enter/exit pairs around their message events. Times given to it are true
// times; it applies the process's clock.
type proc struct {
	w     *trace.Writer
	rank  int
	clk   clock
	seq   []int64 // per-thread id counters
	funcs map[string]int64
	// sites are the call sites mpiEnter gives MPI functions that have no
	// site of their own (mpiEnterAt): one per function, in order of first
	// use from line siteLine of the workload's source src on.
	sites map[string]int64
	src   string
	// shift is added to every time the workload passes: a schedule planned
	// from 0 runs after a start-up phase.
	shift int64
	err   error
}

func newProc(w *trace.Writer, rank, threads int, clk clock) *proc {
	p := &proc{w: w, rank: rank, clk: clk, seq: make([]int64, threads), funcs: map[string]int64{}, sites: map[string]int64{}, src: "main.c"}
	for t := 0; t < threads; t++ {
		typ := trace.ThreadWorker
		name := fmt.Sprintf("worker %d", t)
		if t == 0 {
			typ, name = trace.ThreadInitial, "initial"
		}
		w.SetThread(trace.Thread{Index: t, TID: int64(1000*rank + t + 1), Type: typ, Name: name})
	}
	return p
}

// id returns a new process-unique id created by thread t.
func (p *proc) id(t int) int64 {
	p.seq[t]++
	return trace.MakeID(t, p.seq[t])
}

func (p *proc) emit(t int, k trace.Kind, time int64, args ...int64) {
	if p.err != nil {
		return
	}
	p.err = p.w.E(t, k, p.clk.local(time+p.shift), args...)
}

func (p *proc) threadBegin(t int, time int64) {
	typ := int64(trace.ThreadWorker)
	if t == 0 {
		typ = trace.ThreadInitial
	}
	p.emit(t, trace.ThreadBegin, time, typ)
}

func (p *proc) threadEnd(t int, time int64) { p.emit(t, trace.ThreadEnd, time) }

// initialTask starts the initial task on thread 0 and returns its id.
func (p *proc) initialTask(time int64) int64 {
	id := p.id(0)
	p.emit(0, trace.ImplicitTaskBegin, time, 0, id, 1, 0, ompt.TaskInitial)
	return id
}

func (p *proc) initialTaskEnd(time, id int64) {
	p.emit(0, trace.ImplicitTaskEnd, time, 0, id, 1, 0, ompt.TaskInitial)
}

func (p *proc) parallelBegin(time, encountering int64, team int, loc int64) int64 {
	par := p.id(0)
	p.emit(0, trace.ParallelBegin, time, par, encountering, int64(team), ompt.ParallelInvokerProgram|ompt.ParallelTeam, loc)
	return par
}

func (p *proc) parallelEnd(time, par, encountering int64, loc int64) {
	p.emit(0, trace.ParallelEnd, time, par, encountering, ompt.ParallelInvokerProgram|ompt.ParallelTeam, loc)
}

func (p *proc) implicitBegin(t int, time, par int64, team int) int64 {
	id := p.id(t)
	p.emit(t, trace.ImplicitTaskBegin, time, par, id, int64(team), int64(t), ompt.TaskImplicit)
	return id
}

func (p *proc) implicitEnd(t int, time, par, id int64, team int) {
	p.emit(t, trace.ImplicitTaskEnd, time, par, id, int64(team), int64(t), ompt.TaskImplicit)
}

// create records task_create (and dependences when deps is non-empty) of a
// new explicit task by thread t, whose current task is parent.
func (p *proc) create(t int, time, parent, loc int64, deps []trace.Dep) int64 {
	id := p.id(t)
	p.emit(t, trace.TaskCreate, time, id, parent, ompt.TaskExplicit, loc)
	if len(deps) > 0 && p.err == nil {
		p.err = p.w.EmitDeps(t, p.clk.local(time), id, deps)
	}
	return id
}

// run records thread t switching from cur to task at start and back at end.
func (p *proc) run(t int, cur, task, start, end int64) {
	p.emit(t, trace.TaskSchedule, start, cur, ompt.StatusSwitch, task)
	p.emit(t, trace.TaskSchedule, end, task, ompt.StatusComplete, cur)
}

func (p *proc) syncBegin(t int, time int64, kind, par, task, loc int64) {
	p.syncBeginWait(t, time, time, kind, par, task, loc)
}

func (p *proc) syncEnd(t int, time int64, kind, par, task, loc int64) {
	p.syncEndWait(t, time, time, kind, par, task, loc)
}

// syncBeginWait enters a sync region at time and its wait at wait: the
// runtime's code runs in between.
func (p *proc) syncBeginWait(t int, time, wait int64, kind, par, task, loc int64) {
	p.emit(t, trace.SyncBegin, time, kind, par, task, loc)
	p.emit(t, trace.SyncWaitBegin, wait, kind, par, task)
}

// syncEndWait leaves the wait at wait and the region at time.
func (p *proc) syncEndWait(t int, wait, time int64, kind, par, task, loc int64) {
	p.emit(t, trace.SyncWaitEnd, wait, kind, par, task)
	p.emit(t, trace.SyncEnd, time, kind, par, task, loc)
}

func (p *proc) fn(name string) int64 {
	if id, ok := p.funcs[name]; ok {
		return id
	}
	id := p.w.String(name)
	p.funcs[name] = id
	return id
}

// siteLine is the line of the first default call site (mpiEnter).
const siteLine = 100

// mpiEnter records the entry into MPI function name at the function's
// default call site: a line of main in p.src, the same on every process
// (the workloads call functions in one order everywhere).
func (p *proc) mpiEnter(t int, time int64, name string) {
	loc, ok := p.sites[name]
	if !ok {
		loc = p.w.AddLocation(trace.Location{File: p.src, Line: siteLine + len(p.sites), Col: 5, Func: "main"})
		p.sites[name] = loc
	}
	p.mpiEnterAt(t, time, name, loc)
}

// mpiEnterAt records the entry into MPI function name called at location loc.
func (p *proc) mpiEnterAt(t int, time int64, name string, loc int64) {
	p.emit(t, trace.MPIEnter, time, p.fn(name), loc)
}

func (p *proc) mpiExit(t int, time int64, name string) { p.emit(t, trace.MPIExit, time, p.fn(name)) }

// worldComm registers MPI_COMM_WORLD (table index 0) for nranks.
func worldComm(w *trace.Writer, nranks int) {
	w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Runs: trace.RankRuns{0, nranks, 1}})
}

// offsets records init and finalize clock-offset measurements the way the
// collector does (against rank 0), for true times t0 and t1.
func (p *proc) offsets(t0, t1 int64) {
	for _, m := range []struct {
		when string
		t    int64
	}{{"init", t0}, {"finalize", t1}} {
		t := m.t + p.shift
		l := p.clk.local(t)
		p.w.AddClockOffset(trace.ClockOffset{When: m.when, LocalNS: l, OffsetNS: t - l})
	}
}

// runRegion is a run made of one parallel region over every thread, from
// time 0 to end, as the imbalance and task-pattern workloads are: threads
// begin at 0, the initial task encounters the region, every thread runs an
// implicit task.
type runRegion struct {
	initial, par int64
	impl         []int64
	loc          int64
}

// openRun starts the run's region at time 0 (and records clock offsets
// for [0, end]).
func (p *proc) openRun(threads int, end, loc int64) *runRegion {
	p.offsets(0, end)
	for t := 0; t < threads; t++ {
		p.threadBegin(t, 0)
	}
	rr := &runRegion{loc: loc, impl: make([]int64, threads)}
	rr.initial = p.initialTask(0)
	rr.par = p.parallelBegin(0, rr.initial, threads, loc)
	for t := range rr.impl {
		rr.impl[t] = p.implicitBegin(t, 0, rr.par, threads)
	}
	return rr
}

// closeThread ends thread t's implicit task at end.
func (p *proc) closeThread(rr *runRegion, t int, end int64) {
	p.implicitEnd(t, end, rr.par, rr.impl[t], len(rr.impl))
}

// closeRun ends the region, the initial task and every thread at end.
func (p *proc) closeRun(rr *runRegion, end int64) {
	p.parallelEnd(end, rr.par, rr.initial, rr.loc)
	p.initialTaskEnd(end, rr.initial)
	for t := range rr.impl {
		p.threadEnd(t, end)
	}
}
