// Package sim is ptrace's runtime-agnostic discrete-event task simulator
// (POT, seed pot-dependent-task-time-breakdown.txt §3.2, Alg. 1): it replays
// the events of one process in time order, keeps every task in the
// transition system of POT Fig. 2 and lets analysis passes integrate what
// the states imply (δr: some task is ready; δw: a thread runs a task) over
// time. A runtime model (ompt.Model for OpenMP) turns events into the
// transitions (POT's "Update", Alg. 2); the passes here compute the time
// breakdown, TALP's per-region idle times and per-construct task metrics.
package sim

import (
	"fmt"
	"strings"
)

// TaskState is a state of POT Fig. 2's transition system (0: not created).
type TaskState uint8

const (
	NotCreated TaskState = iota
	Initialized
	Ready
	Suspended
	Cancelled
	Running
	Executed
	Detached
	Completed
	Deleted
)

var stateNames = [...]string{"not created", "initialized", "ready", "suspended", "cancelled", "running", "executed", "detached", "completed", "deleted"}

func (s TaskState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// legal[from][to] holds the transitions of POT Fig. 2. Running→Running is
// absent; resuming a task goes Suspended→Ready→Running.
var legal = func() (t [Deleted + 1][Deleted + 1]bool) {
	for _, e := range [][2]TaskState{
		{Initialized, Ready}, {Ready, Cancelled}, {Ready, Running}, {Suspended, Ready},
		{Cancelled, Detached}, {Cancelled, Completed}, {Running, Ready}, {Running, Suspended},
		{Running, Cancelled}, {Running, Executed}, {Executed, Detached}, {Executed, Completed},
		{Detached, Completed}, {Completed, Deleted},
		{NotCreated, Initialized},
	} {
		t[e[0]][e[1]] = true
	}
	return
}()

// Legal reports whether from → to is a transition of POT Fig. 2.
func Legal(from, to TaskState) bool { return from <= Deleted && to <= Deleted && legal[from][to] }

// TaskKind distinguishes the tasks a thread can run.
type TaskKind uint8

const (
	KindExplicit TaskKind = iota
	KindImplicit
	KindInitial
)

// Task is a dense task index within one process.
type Task = int32

// NoTask marks "no task".
const NoTask Task = -1

// WaitKind says why a suspended task waits.
type WaitKind uint8

const (
	WaitNone     WaitKind = iota
	WaitChild             // switched out for another task (undeferred child, scheduling point)
	WaitTaskwait          // children to complete
	WaitBarrier           // team to arrive, region tasks to complete
	WaitGroup             // taskgroup descendants to complete
	WaitParallel          // a parallel region it encountered to end
	WaitOther             // a synchronisation the model cannot see through
	WaitDeps              // a taskwait with a depend clause: its dependences' tasks to complete
	WaitThread            // another thread: its end, a signal, a barrier (pthread_join, pthread_cond_wait): not ready meanwhile
)

// Task flag bits (Tasks.Flags).
const (
	FlagFulfilled    uint8 = 1 << iota // detach event fulfilled before the task finished
	FlagUndeferred                     // executed immediately by its creator
	FlagDepsResolved                   // its depend clause was resolved from addresses
	FlagLongRun                        // its run time is in Sim.longRuns (not 0 ≤ t < 2^32 ns)
	FlagTaskwait                       // a taskwait with a depend clause (OMPT's taskwait task): no body, its creator waits for its dependences
	FlagRan                            // it ran on a thread: TaskRec.Thread holds the last
)

// TaskRec is one task's simulated state, 6 bytes (TestTaskRecSize): the
// table holds one for every task a process creates, and nearly every
// transition touches several fields of one task, so they stay together.
// What only some tasks have lives beside it, costing memory only for those
// (Sim.taskCols): the unfinished predecessors and the successor list of
// tasks with dependences, the taskgroup of tasks created in one, the
// children not yet completed of the tasks that have some, and the first
// start of the tasks that started (Sim.Started: a producer that creates
// every task before the first runs peaks with none started, nor any run
// time: Sim.RunNS); and what
// nearly every task of a page shares, in a bit a task (Sim.Region: the
// parallel region, read at a task's creation and completion; Sim.Loc: the
// construct, read when it starts to run and by the statistics).
type TaskRec struct {
	State TaskState
	Kind  TaskKind
	Wait  WaitKind
	Flags uint8
	// thread running or last running it, with FlagRan: 16 bits hold every
	// thread index of a process (trace.MaxThreads), and the table is the
	// largest of a task-heavy simulation (2 MB less of the gen tree's 1 M
	// tasks than an int32 and its −1).
	thread uint16
}

// Thread returns the thread running or last running the task, −1 if it
// never ran.
func (r *TaskRec) Thread() int {
	if r.Flags&FlagRan == 0 {
		return -1
	}
	return int(r.thread)
}

// runOn notes that the task runs on thread th.
func (r *TaskRec) runOn(th int) {
	r.thread = uint16(th)
	r.Flags |= FlagRan
}

// Tasks is the task table, indexed by dense Task (no per-task pointers);
// a task waiting for its dependences is registered with one of its
// predecessors at a time (Sim.AddEdges: 4 bytes for where it is in
// DepEdges, and 8 in the successor pool where that predecessor has other
// waiting tasks) until they complete; an edge AddEdge makes alone takes 8
// bytes in the pool until its predecessor completes.
type Tasks []TaskRec

// initTasks sets every slot of ts to a task not yet created.
func initTasks(ts Tasks) { clear(ts) }

// taskCols are the tasks' state that most tasks do not have, or have only
// for a while, beside the task table.
type taskCols struct {
	missing counts // unfinished predecessors
	// succ lists the tasks depending on it, while it is not completed: a
	// run of the tasks a loop made one after another in itself, others in
	// the successor pool's cells
	succ hcol
	// watch lists the tasks registered with it (Sim.AddEdges): tasks
	// whose first unfinished predecessor it is; at is, for a task so
	// registered, where its pair with that predecessor is in DepEdges
	// (its packed.Mark + 1; 0 none)
	watch   hcol
	at      zcol
	group   pcol // taskgroup it belongs to, -1 none
	kids    zcol // children not yet completed (taskwait)
	started tcol // first start, -1 never
	// region is the parallel-region instance a task belongs to, -1 none:
	// its parent's (the tasks of a page mostly share one, a bit a task)
	region col32
	loc    col32 // construct (location id), -1 unknown: as region
	// run is the time it spent Running (Sim.RunNS), unless FlagLongRun:
	// 4.3 s of a task's running fit in 32 bits, in pages where written.
	run rcol
	// parent is its creator (Sim.Parent), NoTask none: out of the task
	// record (12 bytes with it, 8 without), read at a task's creation and
	// completion; a bit a task while a page's tasks share one (a producer's:
	// Task Bench's, the lean stencil's), frozen with the page's first
	// starts once dense (BOTS health's recursion).
	parent col32
	// done marks the tasks completed, doneIn counts them per page: a
	// page whose tasks all completed has its run times and creators
	// frozen, final but in a damaged trace (freezeDone).
	done   []uint64
	doneIn []int32
	// stacked marks the tasks ever pushed on a thread's stack: a task
	// without its bit is on none, and the stack scans that look for it
	// (StartTask, Switch's below, OnStack) stop before they begin; they
	// ran the depth of a recursive program's stacks at every switch.
	stacked []uint64
}

// reset sizes the columns for n task slots.
func (c *taskCols) reset(n int) {
	c.missing.reset(n)
	c.succ.reset(n)
	c.watch.reset(n)
	c.at.reset(n)
	c.group.reset(n, -1)
	c.kids.reset(n)
	c.started.reset(n)
	c.region.reset(n, -1)
	c.loc.reset(n, -1)
	c.run.reset(n)
	c.parent.reset(n, NoTask)
	c.done = resetBits(c.done, n)
	c.doneIn = cleared(c.doneIn, (n+colPageLen-1)/colPageLen)
	c.stacked = resetBits(c.stacked, n)
}

// push puts t on thread thr's stack and marks it stacked.
func (c *taskCols) push(thr *Thread, t Task) {
	thr.Stack = append(thr.Stack, t)
	if w := uint(uint32(t)) / 64; w < uint(len(c.stacked)) {
		c.stacked[w] |= 1 << (uint32(t) % 64)
	}
}

// mayBeStacked reports whether t may be on some thread's stack: false
// only for a task never pushed (a task outside the marks may be).
func (c *taskCols) mayBeStacked(t Task) bool {
	w := uint(uint32(t)) / 64
	return w >= uint(len(c.stacked)) || c.stacked[w]&(1<<(uint32(t)%64)) != 0
}

// freezeDone counts task t, of the n slots, completed, and freezes its
// page's run times and creators once all of the page's are: what the
// simulation no longer writes, read again only by the statistics at its
// end and the tables the later phases keep.
func (c *taskCols) freezeDone(t Task, n int) {
	if c.done[t/64]&(1<<(t%64)) != 0 {
		return
	}
	c.done[t/64] |= 1 << (t % 64)
	k := t >> colPageBits
	c.doneIn[k]++
	if m := min(colPageLen, n-int(k)*colPageLen); int(c.doneIn[k]) == m {
		c.run.freeze(k, m)
		c.parent.freeze(k, m)
	}
}

// Len returns the number of task slots.
func (ts Tasks) Len() int { return len(ts) }

// Thread is one thread's simulated state.
type Thread struct {
	Stack    []Task // tasks on this thread, innermost last
	MPI      int32  // nesting depth of MPI calls
	Setup    bool   // the outermost MPI call is MPI_Init(_thread) or MPI_Finalize
	Teams    []TeamRef
	Groups   []OpenGroup
	RunSince int64 // when the task on top started running
	// Fork is 1 + the region instance whose fork or join the thread last
	// did (0 none): meaningful while its current task waits on WaitParallel
	// outside any team, i.e. from parallel_begin to its implicit task's
	// begin and from that task's end to parallel_end.
	Fork int32
	// Sync lists the tasks on this thread inside the runtime code of a
	// synchronisation construct (runtime.go), innermost last.
	Sync []Task
	// Barrier is 1 + the region instance whose barrier the thread waits
	// at when it is not its innermost team's (ArriveBarrierOf), 0
	// otherwise.
	Barrier int32
}

// TeamRef is a thread's membership in a region instance's team.
type TeamRef struct {
	Region int32
	Num    int32
}

// OpenGroup is a taskgroup region a task on this thread is inside.
type OpenGroup struct {
	Task  Task
	Group int32
}

// TopRegion returns the outermost region instance the thread is in, -1 none.
func (t *Thread) TopRegion() int32 {
	if len(t.Teams) == 0 {
		return -1
	}
	return t.Teams[0].Region
}

// Current returns the innermost task on the thread or NoTask.
func (t *Thread) Current() Task {
	if len(t.Stack) == 0 {
		return NoTask
	}
	return t.Stack[len(t.Stack)-1]
}

// Region is a parallel-region instance: a team, the barriers it passes and
// the explicit tasks bound to it. The flags sit beside the counters, not
// between the slices: 144 bytes, not 160, and an MPI code opens a region
// per iteration, each kept until its process's simulation ends.
type Region struct {
	Team     int32
	Pending  int32    // explicit tasks bound to the region, not completed
	Next     int32    // the barrier to be released next
	Arrived  [2]int32 // arrivals at barriers Next and Next+1
	TopLevel bool
	Ended    bool
	// Retired: ended, with nothing left that refers to its members
	// (Sim.retire): its per-member arrays are released and its idle
	// folded into the process's TALP sums.
	Retired bool
	Epoch   []int32  // per team thread number: barriers passed
	Waiting []Task   // implicit tasks waiting at barrier Next
	Later   []Task   // and at barrier Next+1
	Members []Member // team threads and their implicit tasks
	// Idle is TALP's T^I_{j,p}: per team thread number, its time not
	// working and not in MPI while in this (top-level) region.
	Idle []int64
}

// Member is one thread of a region's team with its implicit task: 8
// bytes, one per team thread of every region a process opens.
type Member struct {
	Thread int32
	Task   Task
}

// Group is a taskgroup: descendants created inside it that are not done.
type Group struct {
	Pending int32
	Waiter  Task // task waiting at the end of the group, NoTask if none
}

// Warnings counts tolerated inconsistencies by kind with the first examples.
type Warnings struct {
	Count    map[string]int64
	Examples []string
	Strict   bool
	Err      error // first warning when Strict
	// Where, when set, names the event being processed (file, thread,
	// event index and byte offset); Add appends it to the messages it
	// keeps, so every warning and a --strict error say where.
	Where func() string
}

// maxExamples bounds the warning examples kept.
const maxExamples = 10

// Add records a warning of the given kind.
func (w *Warnings) Add(kind, format string, args ...any) {
	if w.Count == nil {
		w.Count = map[string]int64{}
	}
	w.Count[kind]++
	if len(w.Examples) < maxExamples || (w.Strict && w.Err == nil) {
		msg := kind + ": " + fmt.Sprintf(format, args...)
		if w.Where != nil {
			msg += " (" + w.Where() + ")"
		}
		if len(w.Examples) < maxExamples {
			w.Examples = append(w.Examples, msg)
		}
		if w.Strict && w.Err == nil {
			w.Err = fmt.Errorf("%s (--strict)", msg)
		}
	}
}

// Total returns the number of warnings.
func (w *Warnings) Total() int64 {
	var n int64
	for _, c := range w.Count {
		n += c
	}
	return n
}

// Summary lists warning counts by kind.
func (w *Warnings) Summary() string {
	var b strings.Builder
	for k, c := range w.Count {
		fmt.Fprintf(&b, "%s×%d ", k, c)
	}
	return strings.TrimSpace(b.String())
}
