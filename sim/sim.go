package sim

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/internal/lists"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/trace"
)

// Model turns a runtime's events into transitions (POT's "Update", Alg. 2).
// Prepare runs once before the simulation (to size task tables and count
// what must be known up front); Update runs for every event in time order.
// The event's dependence list and the thread's next events are at hand
// through Sim.Deps and Sim.Ahead.
type Model interface {
	Prepare(s *Sim) error
	Update(s *Sim, th int, e *trace.Event)
}

// Pass is an analysis run beside the simulation (POT Alg. 1, "Analysis").
// Before sees the state before the event, with dt the time since the
// previous event of the process; After sees it once the event is applied.
type Pass interface {
	Before(s *Sim, e *trace.Event, th int, dt int64)
	After(s *Sim, e *trace.Event, th int)
	Finish(s *Sim)
}

// Sim is the simulated state of one process.
type Sim struct {
	Proc *trace.Process
	// TB corrects the process's recorded times (nil: as recorded).
	TB      *trace.Timebase
	Tasks   Tasks
	Threads []Thread
	Regions []Region
	Groups  []Group
	Ready   int // tasks in state Ready (δr = Ready > 0)
	// Blocked counts tasks in state Initialized: created, waiting for
	// predecessors (between events; a task is Initialized only for the
	// instant of its creation otherwise).
	Blocked int
	// Completed counts tasks that reached Completed.
	Completed int64
	// Requeues counts tasks switched out and re-queued (Requeue): an
	// untied task's stub under LLVM libomp, a task yielding to its queue.
	Requeues int64

	Now   int64 // time of the event being processed
	Begin int64 // first event of the process
	End   int64 // last event of the process
	// Start is when the simulation starts: the earliest of Begin and the
	// first event (Run sets it).
	Start int64
	Warn  Warnings

	// The time integrals of the task counts' indicators (ReadyTime,
	// BlockedTime) and of the breakdown's MPI one, brought up to a time
	// only when a count changes or a reader asks (integrate): their rates
	// hold since countsAt. watchers follow the ready count itself.
	readyTime, blockedTime Integral
	countsAt               int64
	watchers               []ReadyWatcher

	// succ holds the successor and registration lists of the tasks not
	// yet completed (taskCols.succ, watch): a completed task's cells go
	// back to the pool, so it holds the edges still to be resolved, not
	// every edge (and the fragment pass's lists of pending inputs)
	succ lists.Pool
	// cols is the tasks' state beside the task table
	cols taskCols
	// longRuns holds the run times that do not fit TaskRec.run
	longRuns map[Task]int64

	// Program, when a task slot (the model's Prepare sets it), is the
	// process's initial task as the program runs it before (or without)
	// an OpenMP runtime: Run starts it on the initial thread (thread 0) at
	// that thread's first event, so that code outside MPI and outside parallel regions is work
	// whether or not libomp ever reported its own initial task (a pure MPI
	// program, or the master's code before the first OpenMP construct,
	// where libomp initialises). The runtime's initial task takes its
	// place when it begins (AdoptInitial). NoTask: none.
	Program Task

	// Breakdown is the built-in time-breakdown pass.
	Breakdown *Breakdown
	// unmodelled marks threads of type unknown (nil when there is none).
	unmodelled []bool
	// user marks the threads the program started itself (type user, nil
	// when there is none): their thread_begin and thread_end start and end
	// their code, so those events change what the thread does. userTask
	// holds per thread the task slot of its code (SetUserTask), creator
	// the thread that started it (−1: unknown).
	user     []bool
	userTask []Task
	creator  []int32
	// starting is true while the event that starts the program's code (its
	// initial thread's first) is dispatched: whatever its kind, it changes
	// what that thread does.
	starting bool
	// EventCostNS, when > 0, turns on the instrumentation correction
	// (instrument.go); set before Run.
	EventCostNS int64
	// KeepRecordingCost leaves the tracer's buffer flushes inside work in
	// work (flush.go), as analyze --no-instrumentation-correction asks;
	// set before Run.
	KeepRecordingCost bool
	// SyncRuntimeAsWork books the runtime code inside synchronisation
	// constructs as work, as POT does, instead of overhead (runtime.go);
	// set before Run.
	SyncRuntimeAsWork bool
	// Interrupt, when set, is called every interruptEvery events with the
	// events simulated so far: a long simulation reports its progress
	// through it, and an error it returns (the analysis outgrew its memory
	// limit) ends Run with that error.
	Interrupt func(done int64) error

	// RecordDeps keeps every dependence edge the model declares in
	// DepEdges, including those from tasks already completed (they are no
	// constraint at run time but are edges of the task graph). Duplicates
	// may occur.
	RecordDeps bool
	DepEdges   packed.Pairs // (pred, succ), packed: they outlive the simulation
	// depCheck watches DepEdges for repeats as they are recorded, and
	// depEnds marks the tasks they join (DepEdgesDistinct, DepEnds): the
	// task graph then reads the pairs as they are, without a pass of its
	// own to find out that it can.
	depCheck  PairCheck
	depRepeat bool
	depEnds   []uint64

	// OnDrop, when set, is called with their size in bytes when the
	// simulation drops large working tables before its end (Dropped): the
	// dependence tracker's, once every task is created. The heap's goal
	// stays where those tables put it until the next collection, so the
	// heap would grow by their size again before it shrinks: a caller that
	// runs the collector then (runtime.GC; the heap is pointer-free
	// arrays, a few milliseconds) keeps the peak to what was live.
	OnDrop func(bytes int64)

	// Scans, when set, recycles the event scans of Run (set it to share
	// their buffers between the processes of a rank).
	Scans *trace.Scans
	// Spare, when set, recycles the task table, the dependence-edge pool
	// and FragPass's working state: AllocTasks, ReserveEdges and the pass
	// take its buffers, Recycle and the pass's Finish give them back (set
	// it to share them between the processes of a rank).
	Spare *Spare

	merge       *mergeHeap
	slabs       teamSlabs
	lastCreated Task
	taskOf      func(id int64) Task
	// touched lists other threads whose state the current event changed
	// (a region's end finishing its workers' implicit tasks, a task taken
	// off the thread it was re-queued from); Run clears it once every
	// pass's After has seen it.
	touched []int
	// ended lists the regions the current event ended, unretired those
	// ended that still could not be retired (retireEnded), retiredIdle
	// the TALP idle sums of those retired.
	ended, unretired []int32
	retiredIdle      regionIdle
	// setupFns are the string ids of MPI_Init, MPI_Init_thread and
	// MPI_Finalize (SetupCall).
	setupFns []int64
}

// SetupCall reports whether an MPI call of function fn (a string id)
// starts or ends MPI: the breakdown keeps its time apart
// (ThreadTimes.InitFinalize) and the critical path gives it no weight.
func (s *Sim) SetupCall(fn int64) bool {
	for _, id := range s.setupFns {
		if id == fn {
			return true
		}
	}
	return false
}

// Pos returns the index, in thread th's events, of the event being
// processed (or, between events, of th's next one).
func (s *Sim) Pos(th int) int64 {
	if s.merge == nil {
		return -1
	}
	return s.merge.index(th)
}

// SetTaskMap tells passes how the model maps trace task ids to tasks.
func (s *Sim) SetTaskMap(f func(id int64) Task) { s.taskOf = f }

// Deps returns the dependence list of thread th's current event (a
// task_dependences event).
func (s *Sim) Deps(th int) []trace.Dep {
	if s.merge == nil {
		return nil
	}
	return s.merge.scans[th].Deps()
}

// Ahead returns the j-th event (j ≥ 1) of thread th after the one being
// processed and its dependence list; ok is false past what the scan can
// see (the next chunk) or the thread's end. OMPT reports a task's
// dependences right after its creation, which is as far as models look.
func (s *Sim) Ahead(th, j int) (e *trace.Event, deps []trace.Dep, ok bool) {
	if s.merge == nil {
		return nil, nil, false
	}
	return s.merge.scans[th].Ahead(j)
}

// Dropped tells OnDrop, if set, that a model or pass dropped working
// tables of about n bytes.
func (s *Sim) Dropped(n int64) {
	if s.OnDrop != nil {
		s.OnDrop(n)
	}
}

// Touched lists the threads other than the event's whose state the event
// being processed changed (a region's end finishing its workers' implicit
// tasks), for passes' After.
func (s *Sim) Touched() []int { return s.touched }

// HasEvents reports whether thread th has any event and is a thread the
// breakdown and POP account: a thread of type unknown (one of no OpenMP
// runtime, e.g. a pthread of an OTF2 archive) is simulated but not
// accounted, so that it does not count as an idle OpenMP worker.
func (s *Sim) HasEvents(th int) bool {
	return th < len(s.Proc.Events) && s.Proc.Events[th].N > 0 && (s.unmodelled == nil || !s.unmodelled[th])
}

// New prepares a simulation of p with its times corrected by tb (nil: as
// recorded). strict turns warnings into an error.
func New(p *trace.Process, tb *trace.Timebase, strict bool) *Sim {
	s := &Sim{Proc: p, TB: tb, Threads: make([]Thread, p.NumThreads()), Program: NoTask}
	for id, str := range p.Strings {
		if trace.IsMPISetup(str) {
			s.setupFns = append(s.setupFns, int64(id))
		}
	}
	s.Warn.Strict = strict
	for _, t := range p.Tables.Threads {
		if t.Type == trace.ThreadUnknown && t.Index < len(s.Threads) {
			if s.unmodelled == nil {
				s.unmodelled = make([]bool, len(s.Threads))
			}
			s.unmodelled[t.Index] = true
		}
		if t.Type == trace.ThreadUser && t.Index >= 0 && t.Index < len(s.Threads) {
			if s.user == nil {
				s.user = make([]bool, len(s.Threads))
				s.userTask = make([]Task, len(s.Threads))
				s.creator = make([]int32, len(s.Threads))
				for i := range s.userTask {
					s.userTask[i], s.creator[i] = NoTask, -1
				}
			}
			s.user[t.Index] = true
			if c := t.Creator - 1; c >= 0 && c < len(s.Threads) && c != t.Index {
				s.creator[t.Index] = int32(c)
			}
		}
	}
	s.Begin, s.End = p.TimeRange(tb)
	return s
}

// UserThread reports whether the program started thread th itself
// (type user): its code runs from its thread_begin to its thread_end.
func (s *Sim) UserThread(th int) bool { return uint(th) < uint(len(s.user)) && s.user[th] }

// SetUserTask makes t the task of user thread th's code.
func (s *Sim) SetUserTask(th int, t Task) {
	if s.UserThread(th) {
		s.userTask[th] = t
	}
}

// UserTask returns the task of thread th's code when the program started
// th itself, else NoTask.
func (s *Sim) UserTask(th int) Task {
	if s.UserThread(th) {
		return s.userTask[th]
	}
	return NoTask
}

// Creator returns the thread that started user thread th, −1 when unknown.
func (s *Sim) Creator(th int) int {
	if s.UserThread(th) {
		return int(s.creator[th])
	}
	return -1
}

// SetWindow sets the time window every thread is accounted over. The driver
// uses the run's global window, so that a process finishing early counts its
// threads as idle until the run ends (its processing units stay allocated),
// and all processes share one elapsed time T, as TALP's formulas assume.
// Events outside the window still drive the simulation; the breakdown and
// the fragment weights count only what lies inside it.
func (s *Sim) SetWindow(begin, end int64) {
	s.Begin, s.End = begin, end
}

// Spare holds a finished simulation's task table, edge pool and fragment
// pass's working state for the next one. A rank simulates its processes
// one after another, each allocating tables of about its own size that are
// garbage once its results are taken: reused, they cost no allocation, no
// zeroing by the runtime and no fresh pages (on the 10 M-event stencil,
// 350 MB of the simulation's 700 MB of allocations, with ompt.Spare).
type Spare struct {
	tasks   Tasks
	cols    taskCols
	regions []Region // emptied: no slice of a region outlives its process
	succ    lists.Pool
	frag    fragSpare // FragPass's, given back by its Finish
	disp    *dispatch // Run's per-kind pass lists
}

// Recycle gives the task table, the successor pool and the region table to
// s.Spare; s must not be used afterwards. Without a Spare it does nothing.
func (s *Sim) Recycle() {
	if s.Spare == nil {
		return
	}
	if cap(s.Tasks) > cap(s.Spare.tasks) {
		s.Spare.tasks = s.Tasks[:0]
	}
	s.Spare.cols, s.cols = s.cols, taskCols{}
	s.Spare.succ = s.succ
	if cap(s.Regions) > cap(s.Spare.regions) {
		// Cleared, so that the slabs its regions' slices point into go.
		s.Spare.regions = s.Regions[:0]
		clear(s.Regions[:cap(s.Regions)])
	}
	s.Tasks, s.succ, s.Regions = nil, lists.Pool{}, nil
}

// DropWorkingState drops, once Run has returned and its passes took what
// they keep, what only the simulation read (the successor pool, the
// dependence and taskgroup columns, the child counts, the regions), and
// the Spare's contents: for a rank's last process, which nothing reuses
// them for. The task table, the first starts, the run times and the
// constructs (Started, RunNS, Loc) stay for the tables the later phases
// keep, which are made beside them at the peak of a task-heavy trace
// (twenty-seventh round: 2 MB of successor cells on Task Bench's
// stencil_1d, the parent's completed children, which no taskwait drained).
func (s *Sim) DropWorkingState() {
	c := &s.cols
	c.missing, c.succ, c.watch, c.at = counts{}, hcol{}, hcol{}, zcol{}
	c.group, c.kids, c.region = pcol{}, zcol{}, col32{}
	c.done, c.doneIn, c.parent = nil, nil, col32{}
	s.succ, s.Regions = lists.Pool{}, nil
	if s.Spare != nil {
		*s.Spare = Spare{}
	}
}

// DropStartsBelow drops the first starts of the pages of task slots that
// lie wholly below t (Started reads -1 there), once read for the last
// time: a table made from them in task order grows as they go.
func (s *Sim) DropStartsBelow(t Task) { s.cols.started.dropBelow(t >> colPageBits) }

// DropRunTimes drops the run times (RunNS reads 0 after it), once the
// later phases' column of them is made.
func (s *Sim) DropRunTimes() { s.cols.run, s.longRuns = rcol{}, nil }

// DepEdgesDistinct reports whether no pair of DepEdges repeats an earlier
// one, as far as the check made while they were recorded tells (false:
// some may).
func (s *Sim) DepEdgesDistinct() bool { return !s.depRepeat && !s.depCheck.Lost() }

// DepEnd reports whether task t is an end of some pair of DepEdges.
func (s *Sim) DepEnd(t Task) bool {
	w := int(t / 64)
	return w < len(s.depEnds) && s.depEnds[w]&(1<<(t%64)) != 0
}

// ReserveEdges prepares for about n dependence edges: the successor pool
// (the Spare's, if any; it grows a block at a time) and the record of
// every edge.
func (s *Sim) ReserveEdges(n int) {
	if sp := s.Spare; sp != nil {
		s.succ, sp.succ = sp.succ, lists.Pool{}
		s.succ.Reset()
	}
	if s.RecordDeps {
		// About three bytes an edge packed; Run trims what is left over.
		s.DepEdges.Grow(n, 3)
	}
}

// AllocTasks sizes the task tables for n task slots.
func (s *Sim) AllocTasks(n int) {
	var ts Tasks
	if sp := s.Spare; sp != nil && cap(sp.tasks) >= n {
		ts, sp.tasks = sp.tasks[:n], nil
	} else {
		ts = make(Tasks, n)
	}
	initTasks(ts)
	s.Tasks = ts
	if sp := s.Spare; sp != nil {
		s.cols, sp.cols = sp.cols, taskCols{}
	}
	s.cols.reset(n)
}

// Missing returns the unfinished predecessors of task t (and the remote
// ones it waits for), a registration counted as the distinct unfinished
// predecessors it stands for (AddEdges).
func (s *Sim) Missing(t Task) int32 { return s.unfinished(t) }

// ReadyWatcher is a pass that follows the number of ready tasks over time:
// Run calls ReadyOver for each interval (from, to] over which it held n,
// as the count changes (not at every event), and up to the end.
type ReadyWatcher interface {
	ReadyOver(s *Sim, from, to int64, n int)
}

// integrate brings the integrals of the task counts' indicators up to now
// (and the ready watchers, and the breakdown's MPI indicator): a rate is
// constant between the changes of what it reads, so one step from the last
// change sums what a step at every event would, and passes the window's
// bounds at the same values. Every change of Ready, Blocked or the
// breakdown's MPI count calls it first, at s.Now; every reader before it
// reads.
func (s *Sim) integrate(now int64) {
	from := s.countsAt
	if now == from {
		return
	}
	dt := now - from
	var ready, blocked int64
	switch {
	case s.Ready > 0:
		ready = 1
	case s.Blocked > 0:
		blocked = 1
	}
	s.readyTime.Add(s, from, dt, ready)
	s.blockedTime.Add(s, from, dt, blocked)
	if b := s.Breakdown; b != nil {
		var m int64
		if b.inMPI > 0 {
			m = 1
		}
		b.m.Add(s, from, dt, m)
	}
	for _, w := range s.watchers {
		w.ReadyOver(s, from, now, s.Ready)
	}
	s.countsAt = now
}

// ReadyTime returns ∫ δr dt (δr = 1 while some task is ready, POT's Alg.
// 3) from Start up to now, brought there first.
func (s *Sim) ReadyTime(now int64) *Integral {
	s.integrate(now)
	return &s.readyTime
}

// BlockedTime returns ∫ dt over the time no task was ready and some task
// waited for its predecessors, from Start up to now, brought there first.
func (s *Sim) BlockedTime(now int64) *Integral {
	s.integrate(now)
	return &s.blockedTime
}

// interruptEvery is how many events Run simulates between two calls of
// Interrupt: a few milliseconds' worth.
const interruptEvery = 1 << 16

// Run replays every event of the process in time order through the model
// and the passes (Alg. 1). The breakdown pass always runs.
func (s *Sim) Run(m Model, passes ...Pass) error {
	if err := m.Prepare(s); err != nil {
		return err
	}
	var h mergeHeap
	h.init(s.Proc, s.TB, s.Scans, nil)
	defer s.Scans.Put(h.scans...)
	s.merge = &h
	cur := -1 // the thread whose event is being processed
	s.Warn.Where = func() string { return s.where(&h, cur) }
	defer func() { s.Warn.Where = nil }()
	// Events before the window are simulated too: start at the earliest.
	last := s.Begin
	if h.len() > 0 {
		last = min(last, h.key[h.top()].time)
	}
	s.Now, s.Start = last, last
	s.countsAt, s.readyTime, s.blockedTime = last, Integral{}, Integral{}
	s.watchers = s.watchers[:0]
	for _, ps := range passes {
		if w, ok := ps.(ReadyWatcher); ok {
			s.watchers = append(s.watchers, w)
		}
	}
	s.Breakdown = newBreakdown(s, last)
	b := s.Breakdown
	program := s.valid(s.Program) && s.HasEvents(0)
	d := newDispatch(passes, s.Spare)
	defer d.recycle(s.Spare)
	var done int64
	for h.len() > 0 {
		if done++; done%interruptEvery == 0 && s.Interrupt != nil {
			if err := s.Interrupt(done); err != nil {
				return err
			}
		}
		th := h.top()
		cur = th
		e := h.scans[th].Event()
		dt := e.Time - last
		if dt < 0 {
			// A clock that went back (a damaged trace): the integrals take
			// this step on its own, as they did when they stepped at every
			// event.
			s.integrate(last)
			s.integrate(e.Time)
		}
		k := dispatchKind(e.Kind)
		starts := program && th == 0
		if k == trace.TaskCreate && depWaitCreate(e) || s.user != nil && s.userBoundary(e, th) || starts {
			k = trace.NumKinds // suspends its creator, starts or ends a thread's code: every pass sees it
		}
		if d.anyBefore || k == trace.NumKinds {
			for _, ps := range d.before[k] {
				ps.Before(s, e, th, dt)
			}
		}
		s.Now = e.Time
		last = e.Time
		if starts {
			// The program runs from its initial thread's first event on.
			program, s.starting = false, true
			s.BeginImplicit(s.Program, KindInitial, 0)
		}
		m.Update(s, th, e)
		b.After(s, e, th)
		for _, ps := range d.after[k] {
			ps.After(s, e, th)
		}
		// Every pass has seen which other threads the event changed, and
		// what the regions it ended hold.
		s.touched = s.touched[:0]
		if starts {
			s.starting = false
		}
		if len(s.ended) > 0 {
			s.retireEnded()
		}
		if s.Warn.Err != nil {
			return s.Warn.Err
		}
		h.advance(th)
	}
	cur = -1
	if err := h.err(); err != nil {
		return err
	}
	s.Now = max(s.End, last)
	s.integrate(s.Now)
	for _, ps := range append([]Pass{b}, passes...) {
		ps.Before(s, nil, -1, s.Now-last)
		ps.Finish(s)
	}
	s.DepEdges.Trim() // outlives the simulation (the task graph)
	return s.Warn.Err
}

// where names the event of thread th being processed for a warning: the
// file, the thread, the event's index in it and its byte offset (th < 0:
// after the last event).
func (s *Sim) where(h *mergeHeap, th int) string {
	if s.Proc == nil {
		return "no file"
	}
	if th < 0 || th >= len(h.scans) || h.scans[th] == nil || h.done[th] {
		return s.Proc.File + ", at the end of the trace"
	}
	sc := h.scans[th]
	return fmt.Sprintf("%s, thread %d, event %d at offset %d", s.Proc.File, th, sc.Index(), sc.Offset())
}

// tieClass orders events of different threads at equal times: what makes a
// task exist or ready (creation, completion, arrival of a remote
// dependence) goes before what starts or resumes one, so equal timestamps
// from a coarse clock do not look like a task started before it was ready.
func tieClass(e *trace.Event) uint8 {
	// A mask of the kinds of class 0, one test an event where a switch
	// took several (the merge's key of every event).
	if k := e.Kind; tieFirst>>(k&63)&1 != 0 && k < 64 {
		return 0
	} else if k == trace.TaskSchedule && e.Args[1] != 7 && e.Args[1] != 2 {
		return 0 // anything but switch and yield finishes the prior task
	}
	return 1
}

// tieFirst holds the kinds whose events go first at equal times.
const tieFirst = 1<<trace.TaskCreate | 1<<trace.TaskDeps | 1<<trace.TaskDependence | 1<<trace.RemoteDepIn |
	1<<trace.DetachFulfill | 1<<trace.ImplicitTaskEnd | 1<<trace.RemoteDepOut | 1<<trace.ThreadBegin |
	1<<trace.SyncWaitBegin | 1<<trace.SyncBegin

// Walk calls fn for each event of p's threads that want(th), in the order
// Run passes them to the passes (by corrected time, tie class and thread:
// their order among all of p's events), with its index in its thread;
// only the events whose kind is in kinds reach fn. It reads the events of
// those threads only (scans from pool), for a pass that needs a few
// threads' events before the simulation.
func Walk(p *trace.Process, tb *trace.Timebase, pool *trace.Scans, want func(th int) bool, kinds KindSet, fn func(e *trace.Event, th int, idx int64)) error {
	var h mergeHeap
	h.init(p, tb, pool, want)
	defer pool.Put(h.scans...)
	if h.len() == 1 {
		// One thread read (a pure MPI process's): its events in their
		// order, without a merge key and a heap check an event.
		th := h.top()
		sc := h.scans[th]
		for ok := true; ok; ok = sc.Next() {
			if e := sc.Event(); kinds.Has(e.Kind) {
				fn(e, th, sc.Index())
			}
		}
		return h.err()
	}
	for h.len() > 0 {
		th := h.top()
		sc := h.scans[th]
		if e := sc.Event(); kinds.Has(e.Kind) {
			fn(e, th, sc.Index())
		}
		h.advance(th)
	}
	return h.err()
}

// mergeHeap is a k-way merge of the threads' event scans by (time, tie
// class, thread). Each thread's head key is cached so comparisons touch a
// small array, not the events.
type mergeHeap struct {
	scans []*trace.ThreadScan
	done  []bool     // per thread: scan exhausted
	n     []int64    // per thread: events
	heap  []int32    // thread indices
	key   []mergeKey // per thread: its head event's
}

// mergeKey orders a thread's head event: its time, then its tie class and
// the thread (class<<32 | thread), so that a tie of times is one compare
// more, not two (the stencil's threads tie often).
type mergeKey struct {
	time int64
	rest uint64
}

// init starts the merge of p's threads, those that want(t) when want is
// not nil: the others are never read. Merging a subset of the threads
// orders their events as merging all of them does (each step takes the
// least head by the same key, and a thread left out only adds events in
// between).
func (h *mergeHeap) init(p *trace.Process, tb *trace.Timebase, pool *trace.Scans, want func(t int) bool) {
	n := p.NumThreads()
	h.scans = make([]*trace.ThreadScan, n)
	h.done = make([]bool, n)
	h.n = make([]int64, n)
	h.key = make([]mergeKey, n)
	for t := range h.scans {
		// A thread index without events (a file may claim thousands)
		// gets no scan and its decode buffers.
		if want != nil && !want(t) || p.Events[t].N == 0 {
			h.done[t] = true
			continue
		}
		sc := pool.Get(p, t, tb)
		h.scans[t] = sc
		h.n[t] = p.Events[t].N
		if sc.Next() {
			e := sc.Event()
			h.heap = append(h.heap, int32(t))
			h.key[t] = mergeKey{e.Time, uint64(tieClass(e))<<32 | uint64(t)}
		} else {
			h.done[t] = true
		}
	}
	for i := len(h.heap)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// index returns the index of thread th's head event (its event count once
// exhausted).
func (h *mergeHeap) index(th int) int64 {
	if h.done[th] {
		return h.n[th]
	}
	return h.scans[th].Index()
}

// err returns the first scan error.
func (h *mergeHeap) err() error {
	for _, sc := range h.scans {
		if sc == nil {
			continue
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (h *mergeHeap) len() int { return len(h.heap) }
func (h *mergeHeap) top() int { return int(h.heap[0]) }

func (h *mergeHeap) less(a, b int32) bool {
	ka, kb := &h.key[a], &h.key[b]
	if ka.time != kb.time {
		return ka.time < kb.time
	}
	return ka.rest < kb.rest
}

// advance moves the top thread to its next event.
func (h *mergeHeap) advance(th int) {
	if h.scans[th].Next() {
		e := h.scans[th].Event()
		h.key[th] = mergeKey{e.Time, uint64(tieClass(e))<<32 | uint64(th)}
		// Most often the same thread stays first: check before sifting.
		n := len(h.heap)
		if n < 2 || (h.less(int32(th), h.heap[1]) && (n < 3 || h.less(int32(th), h.heap[2]))) {
			return
		}
	} else {
		h.done[th] = true
		n := len(h.heap) - 1
		h.heap[0] = h.heap[n]
		h.heap = h.heap[:n]
	}
	if len(h.heap) > 0 {
		h.down(0)
	}
}

func (h *mergeHeap) down(i int) {
	n := len(h.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.heap[r], h.heap[l]) {
			m = r
		}
		if !h.less(h.heap[m], h.heap[i]) {
			return
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		i = m
	}
}
