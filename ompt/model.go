package ompt

import (
	"fmt"
	"sort"

	"github.com/ptrace-dev/ptrace/internal/idmap"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Model maps OMPT-derived events onto the simulator's task transitions
// (POT Alg. 2 "Update"): task_create and implicit_task create tasks,
// dependences resolve OpenMP depend semantics into edges, task_schedule
// starts, suspends and completes them, sync regions suspend and resume
// tasks in taskwait, barriers and taskgroups, parallel regions suspend their
// encountering task, MPI calls mark threads as communicating and remote
// dependences release tasks of distributed task runtimes.
type Model struct {
	base    []int32    // per creating thread: dense index of its first task
	maxSeq  []int64    // per creating thread: highest task seq created
	seqs    []seqRange // both together, for Task
	regions idmap.Map  // open parallel regions: parallel id → region instance
	deps    *depTracker
	// depsLeft counts the task_create and task_dependences events not
	// simulated yet (the census's): the tracker is released once none is
	// left, since nothing else looks an address up.
	depsLeft int64
	hasDeps  bool    // the process has task_dependences events (census)
	skip     []int64 // per thread: index of the last event consumed by lookahead
	// depAt is per thread the index, among the process's dependence
	// entries (lastUses: thread 0's, then thread 1's, …), of its next
	// task_dependences event's first entry.
	depAt  []int64
	noWait bool // the trace has no sync_wait events: use sync_begin/end
	preds  []int32
	done   func(int32) bool
	chk    seqCheck // the OMPT sequences' claims (check.go)

	// Cost is a per-task cost attribute (task_attr "flops", "bytes" or
	// "cost"), nil when the trace carries none.
	Cost []int64
	// CostKey names the attribute Cost holds ("" when none).
	CostKey string
	// costKeys are the string ids of the attribute keys that mean cost.
	costKeys map[int64]bool
	total    int64 // task slots

	// Spare, when set, recycles the dependence tracker's tables: Prepare
	// takes them, Recycle gives them back (see sim.Spare).
	Spare *Spare
}

// Spare holds a finished model's dependence tracker for the next one.
type Spare struct {
	deps *depTracker
	cost []int64
}

// Recycle gives the dependence tracker and the cost column to m.Spare; m
// must not simulate, nor Cost be read, afterwards. Without a Spare it does
// nothing.
func (m *Model) Recycle() {
	if sp := m.Spare; sp != nil {
		sp.deps, m.deps = m.deps, nil
		if cap(m.Cost) > cap(sp.cost) {
			sp.cost = m.Cost[:0]
		}
		m.Cost = nil
	}
}

// NewModel returns a model for one process.
func NewModel() *Model {
	return &Model{deps: newDepTracker()}
}

// KeepDependences makes the model report every dependence edge, including
// those from completed tasks, for a task graph (set Sim.RecordDeps too). It
// keeps the state of an address until the tasks' parent completes, instead
// of until the tasks do, unless the address's last entry comes first
// (lastUses).
func (m *Model) KeepDependences() { m.deps.keep = true }

// Prepare sizes the task table from the task ids the process creates and
// counts remote dependences each task must wait for. Ids are claims: a
// thread's task sequence numbers cannot exceed its events (every id is
// made by an event of its own thread), so a corrupt id cannot size the
// table beyond what the file holds; such ids become unknown tasks, warned
// about where they are used.
func (m *Model) Prepare(s *sim.Sim) error {
	p := s.Proc
	cs := &p.Census
	nth := max(p.NumThreads(), len(cs.MaxSeq))
	m.maxSeq = make([]int64, nth)
	m.skip = make([]int64, nth)
	m.depAt = make([]int64, nth)
	for t := range m.skip {
		m.skip[t] = -1
	}
	for t, seq := range cs.MaxSeq {
		if t >= p.NumThreads() {
			continue // ids of a thread without events: nobody made them
		}
		if seq > p.Events[t].N {
			s.Warn.Add("implausible task id", "%s: thread %d: task id sequence %d exceeds the thread's %d events; ids beyond are ignored", p.File, t, seq, p.Events[t].N)
			seq = p.Events[t].N
		}
		m.maxSeq[t] = seq
	}
	m.noWait = cs.Kinds[trace.SyncWaitBegin] == 0
	m.chk.prepare(s)
	ndeps := int(min(cs.DepEntries, 1<<31-1))
	// Before the task table: its address table is gone when the
	// simulation's tables grow.
	last, stay := []uint64(nil), int64(-1)
	if cs.Kinds[trace.TaskDeps] > 0 {
		var bases []int64
		if last, stay, bases = lastUses(p, s.Scans, cs.DepEntries); last == nil {
			stay = -1
		} else {
			copy(m.depAt, bases) // each thread's entries from its own first
		}
	}
	m.base = make([]int32, nth)
	m.seqs = make([]seqRange, nth)
	var total int64
	for t := range m.maxSeq {
		m.base[t] = int32(total)
		m.seqs[t] = seqRange{base: sim.Task(total), n: m.maxSeq[t]}
		total += m.maxSeq[t]
	}
	if total >= 1<<31-1 {
		return fmt.Errorf("process creates %d tasks, more than 2^31", total)
	}
	// One slot more: the program's initial task before libomp reports its
	// own (sim.Sim.Program); no trace id maps to it. And one for each
	// thread the program started itself, its code (Sim.UserTask).
	slots := total + 1
	for th := range p.NumThreads() {
		if s.UserThread(th) {
			s.SetUserTask(th, sim.Task(slots))
			slots++
		}
	}
	s.AllocTasks(int(slots))
	s.Program = sim.Task(total)
	s.SetTaskMap(m.Task)
	s.ReserveEdges(ndeps)
	if sp := m.Spare; sp != nil && sp.deps != nil {
		sp.deps.keep = m.deps.keep
		m.deps, sp.deps = sp.deps, nil
	}
	m.deps.reserve(int64(ndeps), stay)
	m.deps.last = last
	m.depsLeft = cs.Kinds[trace.TaskCreate] + cs.Kinds[trace.TaskDeps]
	m.hasDeps = cs.Kinds[trace.TaskDeps] > 0
	m.costKeys = map[int64]bool{}
	for id, str := range p.Strings {
		if str == "flops" || str == "bytes" || str == "cost" {
			m.costKeys[int64(id)] = true
		}
	}
	m.total = total
	for _, id := range cs.RemoteIn {
		s.AddMissing(m.Task(id), 1)
	}
	return nil
}

// Task maps a trace task id to its dense index, NoTask for 0 or an id no
// thread created.
func (m *Model) Task(id int64) sim.Task {
	// A negative id has a negative thread, 0 a sequence number of 0: both
	// out of range as unsigned numbers, one compare each (a mapping for
	// nearly every event of a task trace).
	t, seq := trace.IDThread(id), trace.IDSeq(id)
	if uint(t) >= uint(len(m.seqs)) {
		return sim.NoTask
	}
	if r := m.seqs[t]; uint64(seq-1) < uint64(r.n) {
		return r.base + sim.Task(seq-1)
	}
	return sim.NoTask
}

// seqRange is a creating thread's tasks: dense indices base onwards, for
// its sequence numbers 1…n.
type seqRange struct {
	base sim.Task
	n    int64
}

// ID maps a dense task index back to the trace's task id.
func (m *Model) ID(t sim.Task) int64 { return m.IDs().ID(t) }

// TaskIDs maps dense task indices back to trace task ids, without the
// rest of the model (a few bytes a thread), for tables kept after the
// simulation.
type TaskIDs struct {
	base   []int32
	maxSeq []int64
}

// IDs returns the model's index-to-id mapping.
func (m *Model) IDs() TaskIDs { return TaskIDs{base: m.base, maxSeq: m.maxSeq} }

// ID returns the trace id of dense task t (0 for none).
func (ids TaskIDs) ID(t sim.Task) int64 {
	if t < 0 {
		return 0
	}
	if n := len(ids.base); n == 0 || int64(t) >= int64(ids.base[n-1])+ids.maxSeq[n-1] {
		return 0 // the program task (sim.Sim.Program), or beyond the table
	}
	th := sort.Search(len(ids.base), func(i int) bool { return ids.base[i] > t }) - 1
	for th > 0 && ids.maxSeq[th] == 0 {
		th-- // threads that created nothing share their base with the next
	}
	if th < 0 {
		return 0
	}
	return trace.MakeID(th, int64(t-ids.base[th])+1)
}

// IDCursor maps dense task indices back to trace ids as TaskIDs.ID does,
// in a step or two for indices given in increasing order (a table's tasks
// in order), where ID searches the threads each time.
type IDCursor struct {
	ids    TaskIDs
	th     int      // the thread whose tasks the last index fell among
	lo, hi sim.Task // its tasks' indices (hi = lo: none yet)
	at     int64    // the id of task t among them is at + t
}

// Cursor returns a cursor over ids.
func (ids TaskIDs) Cursor() IDCursor { return IDCursor{ids: ids} }

// ID returns the trace id of dense task t (0 for none), as TaskIDs.ID.
func (c *IDCursor) ID(t sim.Task) int64 {
	if t >= c.lo && t < c.hi { // inlined: among the last one's thread's tasks
		return c.at + int64(t)
	}
	return c.id(t)
}

func (c *IDCursor) id(t sim.Task) int64 {
	base, maxSeq := c.ids.base, c.ids.maxSeq
	n := len(base)
	if t < 0 || n == 0 || int64(t) >= int64(base[n-1])+maxSeq[n-1] || base[0] > t {
		return 0
	}
	if c.th >= n || base[c.th] > t {
		c.th = 0 // an index before the last: from the first thread
	}
	for c.th+1 < n && base[c.th+1] <= t {
		c.th++
	}
	th := c.th
	for th > 0 && maxSeq[th] == 0 {
		th-- // threads that created nothing share their base with the next
	}
	if maxSeq[th] > 0 && th == c.th {
		c.lo, c.hi = base[th], base[th]+sim.Task(maxSeq[th])
		c.at = trace.MakeID(th, 1) - int64(base[th]) // sequence numbers count from 1
	}
	return trace.MakeID(th, int64(t-base[th])+1)
}

func (m *Model) task(s *sim.Sim, id int64, what string) sim.Task {
	t := m.Task(id)
	if t == sim.NoTask && id != 0 {
		s.Warn.Add("unknown task", "%s refers to task %#x that no thread created (at %d ns)", what, id, s.Now)
	}
	return t
}

// Update applies event e of thread th.
func (m *Model) Update(s *sim.Sim, th int, e *trace.Event) {
	if k := e.Kind; k >= trace.NumKinds || checked[k] || len(m.chk.early) > 0 {
		m.chk.event(m, s, th, e) // nothing to check in a task's schedule or dependences
	}
	// The thread's state, for the kinds that read it (a task trace's
	// creations and schedules do not).
	thr := func() *sim.Thread { return &s.Threads[th] }
	switch e.Kind {
	case trace.ThreadBegin:
		if u := s.UserTask(th); u != sim.NoTask && e.Args[0] == trace.ThreadUser && s.Tasks[u].State == sim.NotCreated {
			s.BeginImplicit(u, sim.KindInitial, th)
		}
	case trace.ThreadEnd:
		if u := s.UserTask(th); u != sim.NoTask && s.Threads[th].Current() == u {
			s.FinishImplicit(u, th)
		}
	case trace.ImplicitTaskBegin:
		t := m.task(s, e.Args[1], "implicit_task")
		parallel := e.Args[0]
		if e.Args[4]&TaskInitial != 0 {
			// A team's initial task of a host teams construct is a member
			// of the league, whose barriers it meets (seqCheck.leagueMember).
			if parallel = m.chk.leagueMember(th); parallel == 0 {
				if u := s.UserTask(th); u != sim.NoTask && thr().Current() == u && s.Tasks[u].State == sim.Running {
					// A thread the program started runs OpenMP: the
					// runtime's initial task takes its code's place.
					s.FinishImplicit(u, th)
				}
				s.AdoptInitial(t, th)
				return
			}
		}
		r, ok := m.regions.Get(parallel)
		if !ok {
			// The worker's begin came before the region's (equal times).
			r = s.NewRegion(int32(e.Args[2]), len(thr().Teams) == 0)
			m.regions.Set(parallel, r)
		}
		team := int32(min(max(e.Args[2], 0), 1<<30))
		if t := s.TeamSize(team); t < team {
			s.Warn.Add("implausible team size", "implicit_task_begin on thread %d at %d ns: team of %d threads in a process of %d; counted as %d", th, s.Now, team, len(s.Threads), t)
			team = t
		}
		if team > 0 && team != s.Regions[r].Team && s.Regions[r].Next == 0 && s.Regions[r].Arrived[0] == 0 {
			// The actual team size replaces the requested one.
			s.SetTeamSize(r, team)
		}
		s.BeginImplicit(t, sim.KindImplicit, th)
		s.JoinTeam(t, r, int32(e.Args[3]), th)
	case trace.ImplicitTaskEnd:
		t := m.task(s, e.Args[1], "implicit_task end")
		r := int32(-1)
		if t != sim.NoTask {
			r = s.Region(t)
		}
		s.FinishImplicit(t, th)
		if e.Args[4]&TaskInitial == 0 || r >= 0 && s.Tasks[t].Kind == sim.KindImplicit {
			// A league's team task ends flagged initial, and so does
			// (LLVM libomp 14) a later implicit task of that thread.
			s.LeaveTeam(th, r)
		}
	case trace.ParallelBegin:
		r, ok := m.regions.Get(e.Args[0])
		if ok {
			// A worker's implicit task began first (its clock a little
			// behind the master's): the region it made is this one.
			s.Regions[r].TopLevel = len(thr().Teams) == 0
		} else {
			r = s.NewRegion(int32(e.Args[2]), len(thr().Teams) == 0)
			m.regions.Set(e.Args[0], r)
		}
		s.SuspendForParallel(m.current(s, th, e.Args[1]), r, th)
	case trace.ParallelEnd:
		s.EndWait(m.current(s, th, e.Args[1]), th)
		if r, ok := m.regions.Get(e.Args[0]); ok {
			s.EndRegion(r, th)
		}
		m.regions.Delete(e.Args[0])
	case trace.TaskCreate:
		t := m.task(s, e.Args[0], "task_create")
		parent := m.current(s, th, e.Args[1])
		var flags uint8
		if e.Args[2]&TaskUndeferred != 0 {
			flags |= sim.FlagUndeferred
		}
		taskwait := e.Args[2]&TaskTaskwait != 0 // taskwait depend(...): LLVM libomp 14+
		if taskwait {
			flags |= sim.FlagUndeferred | sim.FlagTaskwait
		}
		s.CreateTask(t, sim.KindExplicit, parent, th, int32(e.Args[3]), flags)
		// OMPT delivers the dependences right after task_create: resolve them
		// before deciding whether the task is ready (a process whose census
		// counts no task_dependences event has none to look ahead for).
		for j := 1; m.hasDeps; j++ {
			d, deps, ok := s.Ahead(th, j)
			if !ok || d.Time != e.Time {
				break
			}
			if d.Kind == trace.TaskDeps && d.Args[0] == e.Args[0] {
				// No task_dependences event of th lies between: its
				// entries are th's next.
				m.addDeps(s, parent, t, deps, m.depAt[th])
				m.skip[th] = s.Pos(th) + int64(j)
				break
			}
			if d.Kind != trace.TaskDependence && d.Kind != trace.TaskAttr {
				break
			}
		}
		s.ReadyIfFree(t)
		if taskwait {
			s.DepWait(t, th)
		}
		m.dependencesSeen(s)
	case trace.TaskDeps:
		deps := s.Deps(th)
		if s.Pos(th) > m.skip[th] { // not read with its task_create
			t := m.task(s, e.Args[0], "dependences")
			if t != sim.NoTask {
				m.addDeps(s, s.Parent(t), t, deps, m.depAt[th])
			}
		}
		m.depAt[th] += int64(len(deps))
		m.dependencesSeen(s)
	case trace.TaskDependence:
		// Address resolution already found every edge of a task whose
		// dependences were recorded; the runtime's report only matters for
		// tasks whose list is missing (e.g. lost with a dropped buffer).
		succ := m.task(s, e.Args[1], "task_dependence")
		if succ != sim.NoTask && s.Tasks[succ].Flags&sim.FlagDepsResolved == 0 {
			s.AddEdge(m.task(s, e.Args[0], "task_dependence"), succ)
		}
	case trace.TaskSchedule:
		prior := m.task(s, e.Args[0], "task_schedule")
		next := m.task(s, e.Args[2], "task_schedule")
		if prior != sim.NoTask {
			switch e.Args[1] {
			case StatusComplete, StatusTaskwaitComplete:
				if s.Tasks[prior].Flags&sim.FlagTaskwait != 0 {
					s.EndDepWait(prior, th) // the wait's end (status taskwait_complete)
				} else {
					s.StopTask(prior, th, sim.EndComplete)
				}
			case StatusDetach:
				s.StopTask(prior, th, sim.EndDetach)
			case StatusCancel:
				s.StopTask(prior, th, sim.EndCancel)
			case StatusYield:
				s.Switch(prior, next, th, sim.EndYield)
			case StatusSwitch:
				s.Switch(prior, next, th, sim.EndSwitch)
			case StatusEarlyFulfill, StatusLateFulfill:
				// omp_fulfill_event, reported with no next task (OpenMP 5.1
				// §19.5.2.9, LLVM libomp __kmpc_fulfill_event): early while
				// the task still runs (it completes at its own end), late
				// once it is detached (it completes now).
				s.Fulfill(prior)
			default:
				s.Warn.Add("unknown task status", "task_schedule status %d at %d ns", e.Args[1], s.Now)
			}
		}
		if next != sim.NoTask && !m.lateStub(s, th, e, next) {
			s.StartTask(next, th)
		}
	case trace.SyncBegin:
		if e.Args[0] == trace.SyncCondSignal {
			break // a signal: nobody waits
		}
		if e.Args[0] == SyncTaskgroup {
			s.OpenGroup(thr().Current(), th)
		}
		if m.noWait {
			m.waitBegin(s, th, e.Args[0], e.Args[1])
		} else if runtimeEntry(e.Args[0]) {
			s.EnterSyncRuntime(th)
		}
	case trace.SyncWaitBegin:
		m.waitBegin(s, th, e.Args[0], e.Args[1])
	case trace.SyncWaitEnd:
		m.waitEnd(s, th, e.Args[0])
		if e.Args[0] == SyncTaskgroup {
			s.EnterSyncRuntime(th) // the group's tail, to its sync_end
		}
	case trace.SyncEnd:
		if e.Args[0] == trace.SyncCondSignal {
			break
		}
		if m.noWait {
			m.waitEnd(s, th, e.Args[0])
		}
		if runtimeEntry(e.Args[0]) || e.Args[0] == SyncTaskgroup {
			s.LeaveSyncRuntime(th)
		}
		if e.Args[0] == SyncTaskgroup {
			s.CloseGroup(th)
		}
	case trace.DetachFulfill:
		s.Fulfill(m.task(s, e.Args[0], "detach_fulfill"))
	case trace.Cancel:
		if e.Args[1]&CancelDiscardedTask != 0 {
			s.Discard(m.task(s, e.Args[0], "cancel"))
		}
	case trace.MPIEnter:
		t := thr()
		if t.MPI == 0 {
			t.Setup = s.SetupCall(e.Args[0])
		}
		t.MPI++
	case trace.MPIExit:
		if t := thr(); t.MPI > 0 {
			t.MPI--
		} else {
			s.Warn.Add("unbalanced MPI", "mpi_exit without mpi_enter on thread %d at %d ns", th, s.Now)
		}
	case trace.RemoteDepIn:
		s.Release(m.task(s, e.Args[0], "remote_dep_in"))
	case trace.TaskAttr:
		if m.costKeys[e.Args[1]] {
			if t := m.Task(e.Args[0]); t != sim.NoTask {
				if m.Cost == nil {
					if sp := m.Spare; sp != nil && int64(cap(sp.cost)) >= m.total {
						m.Cost, sp.cost = sp.cost[:m.total], nil
						clear(m.Cost)
					} else {
						m.Cost = make([]int64, m.total)
					}
					m.CostKey = s.Proc.String(e.Args[1])
				}
				m.Cost[t] = e.Args[2]
			}
		}
	}
}

// dependencesSeen counts an event that may resolve dependences; after the
// process's last, the tracker's tables (a state per address and parent and
// a cell per reader: about 50 bytes a task on the lean stencil, all
// created before any runs) are released while the tasks run.
func (m *Model) dependencesSeen(s *sim.Sim) {
	if m.depsLeft--; m.depsLeft == 0 {
		n := m.deps.bytes()
		m.deps.release()
		s.Dropped(int64(n))
	}
}

// lateStub reports whether task_schedule e on thread th starts task t that
// already runs on another thread only to switch it straight back to the
// task it left: an untied task's stub (LLVM libomp re-queues the task and
// another thread runs its body) recorded after the body's start. The stub
// came first; its start sorts after the body's when the threads' clocks
// differ by more than the stub's few tens of ns, or when both have the same
// timestamp and the body's thread has the lower number. Taking the task off
// the thread that runs its body (the lost race of StartTask) would lose the
// body's run time, so the stub's start is skipped; its switch-out is then
// a report for a task the thread does not hold, which Switch ignores.
func (m *Model) lateStub(s *sim.Sim, th int, e *trace.Event, t sim.Task) bool {
	tk := &s.Tasks[t]
	if tk.State != sim.Running || tk.Thread() < 0 || tk.Thread() == th || s.OnStack(t, th) {
		return false
	}
	d, _, ok := s.Ahead(th, 1)
	return ok && d.Kind == trace.TaskSchedule && d.Args[0] == e.Args[2] && d.Args[2] == e.Args[0] &&
		(d.Args[1] == StatusSwitch || d.Args[1] == StatusYield)
}

// current maps a task argument to a dense index, falling back to the
// thread's current task when the argument is absent.
func (m *Model) current(s *sim.Sim, th int, id int64) sim.Task {
	if t := m.Task(id); t != sim.NoTask {
		return t
	}
	return s.Threads[th].Current()
}

// addDeps resolves task t's dependences, deps, the process's entries from
// at on (depTracker.resolve).
func (m *Model) addDeps(s *sim.Sim, parent, t sim.Task, deps []trace.Dep, at int64) {
	if t == sim.NoTask || len(deps) == 0 {
		return
	}
	s.Tasks[t].Flags |= sim.FlagDepsResolved
	if m.done == nil {
		m.done = func(t int32) bool { return s.Tasks[t].State >= sim.Completed }
	}
	m.preds = m.deps.resolve(parent, t, deps, at, m.preds[:0], m.done, s.Completed)
	s.AddEdges(m.preds, t)
}

// waitBegin suspends thread th's current task at a sync region's wait of
// this kind, in parallel region parallel (0: unknown).
func (m *Model) waitBegin(s *sim.Sim, th int, kind, parallel int64) {
	t := s.Threads[th].Current()
	if t == sim.NoTask {
		return
	}
	switch {
	case kind == SyncTaskwait:
		s.SuspendForTaskwait(t, th)
	case IsBarrier(kind) && parallel != 0 && parallel == m.chk.league:
		// A host teams league's barrier, met inside a team's region.
		if r, ok := m.regions.Get(parallel); ok {
			s.ArriveBarrierOf(t, th, r)
		} else {
			s.ArriveBarrier(t, th)
		}
	case IsBarrier(kind):
		s.ArriveBarrier(t, th)
	case kind == SyncTaskgroup:
		s.SuspendForGroup(t, th)
	case trace.ThreadSync(kind):
		s.SuspendForThread(t, th)
	default:
		s.SuspendOther(t, th)
	}
}

func (m *Model) waitEnd(s *sim.Sim, th int, kind int64) {
	t := s.Threads[th].Current()
	if t == sim.NoTask {
		return
	}
	s.EndWait(t, th)
	if IsBarrier(kind) {
		s.LeaveBarrier(th)
	}
}

// runtimeEntry reports whether a sync region of this kind runs the
// runtime's code from its begin to its wait (sim/runtime.go): barriers and
// taskwait. A taskgroup's begin opens the user's body, and a reduction's
// region holds the user's combiner.
func runtimeEntry(kind int64) bool { return kind == SyncTaskwait || IsBarrier(kind) }
