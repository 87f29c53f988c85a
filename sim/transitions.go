package sim

// The operations below are the transitions of POT Fig. 2 with the
// bookkeeping they imply (ready count, dependences, taskwait, taskgroup and
// barrier conditions). Models call them; they never panic on inconsistent
// input: what cannot happen in a correct trace is counted as a warning and
// the state is repaired as plausibly as possible.

import (
	"iter"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/internal/lists"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/trace"
)

func (s *Sim) valid(t Task) bool { return t >= 0 && int(t) < len(s.Tasks) }

// setState moves t to state to, keeping the ready and blocked counts.
func (s *Sim) setState(t Task, to TaskState) {
	ts := s.Tasks
	from := ts[t].State
	if from == to {
		return
	}
	if !legal[from][to] {
		s.Warn.Add("illegal transition", "task #%d %s → %s at %d ns", t, from, to, s.Now)
	}
	if from == Ready || from == Initialized || to == Ready || to == Initialized {
		s.integrate(s.Now) // the counts change
	}
	switch from {
	case Ready:
		s.Ready--
	case Initialized:
		s.Blocked--
	}
	switch to {
	case Ready:
		s.Ready++
	case Initialized:
		s.Blocked++
	}
	ts[t].State = to
}

// CreateTask creates t (→ Initialized) on thread th with the given kind,
// parent, construct and missing predecessors known up front (remote ones).
// It joins its parent's region and its creator's taskgroup.
func (s *Sim) CreateTask(t Task, kind TaskKind, parent Task, th int, loc int32, flags uint8) {
	if !s.valid(t) {
		s.Warn.Add("bad task id", "task #%d outside the task table at %d ns", t, s.Now)
		return
	}
	ts := s.Tasks
	if ts[t].State != NotCreated {
		s.Warn.Add("task created twice", "task #%d at %d ns", t, s.Now)
		return
	}
	s.setState(t, Initialized)
	s.lastCreated = t
	ts[t].Kind = kind
	if parent != NoTask {
		s.cols.parent.set(t, parent)
	}
	s.cols.loc.set(t, loc)
	ts[t].Flags |= flags
	if kind != KindExplicit || !s.valid(parent) {
		return
	}
	s.cols.kids.add(parent, 1)
	r := s.cols.region.get(parent)
	s.cols.region.set(t, r)
	if r >= 0 {
		s.Regions[r].Pending++
	}
	g := s.cols.group.get(parent)
	if th >= 0 {
		gs := s.Threads[th].Groups
		for i := len(gs) - 1; i >= 0; i-- {
			if gs[i].Task == parent {
				g = gs[i].Group
				break
			}
		}
	}
	if g >= 0 || s.cols.group.get(t) >= 0 {
		s.cols.group.set(t, g)
	}
	if g >= 0 {
		s.Groups[g].Pending++
	}
}

// AddMissing adds n unfinished predecessors known before creation (e.g.
// remote dependences that will arrive later).
func (s *Sim) AddMissing(t Task, n int32) {
	if s.valid(t) {
		s.cols.missing.add(t, n)
	}
}

// AddEdge makes succ depend on pred. An edge from a completed task is a no-op.
func (s *Sim) AddEdge(pred, succ Task) {
	if !s.valid(pred) || !s.valid(succ) || pred == succ {
		return
	}
	if s.RecordDeps {
		s.record(pred, succ)
	}
	if !s.waitsFor(succ, pred) {
		s.link(pred, succ)
	}
}

// record adds (pred, succ) to DepEdges.
func (s *Sim) record(pred, succ Task) {
	s.DepEdges.Append(pred, succ)
	s.noteDep(pred, succ)
}

// recordMarked is record returning where the pair is (ok false where a
// mark cannot say), for a registration.
func (s *Sim) recordMarked(pred, succ Task) (m packed.Mark, ok bool) {
	m, ok = s.DepEdges.AppendMarked(pred, succ)
	s.noteDep(pred, succ)
	return m, ok
}

// noteDep notes a recorded pair: its repeats and the tasks it joins.
func (s *Sim) noteDep(pred, succ Task) {
	s.depRepeat = s.depCheck.Add(pred, succ) || s.depRepeat
	if s.depEnds == nil {
		s.depEnds = make([]uint64, (len(s.Tasks)+63)/64)
	}
	s.depEnds[pred/64] |= 1 << (pred % 64)
	s.depEnds[succ/64] |= 1 << (succ % 64)
}

// link makes succ wait for pred, in pred's successor list, unless pred
// has completed (or was never created).
func (s *Sim) link(pred, succ Task) {
	ts := s.Tasks
	if ts[pred].State >= Completed || ts[pred].State == NotCreated {
		return
	}
	head := s.cols.succ.get(pred)
	for hi, n, next := s.succ.First(head); n > 0; {
		if succ <= hi && succ > hi-n {
			return
		}
		if next == lists.None {
			break
		}
		hi, n, next = s.succ.Item(next)
	}
	// Successors made one after another (a loop's tasks reading what one
	// task wrote) are a run, held in the head: no cell at all.
	s.cols.succ.push(&s.succ, pred, succ)
	s.cols.missing.add(succ, 1)
	s.unready(succ)
}

// unready takes back succ's readiness when a dependence is learnt after it
// looked free at the same instant (from a runtime-reported edge): it was
// never really ready. Undone, not a transition.
func (s *Sim) unready(succ Task) {
	if ts := s.Tasks; ts[succ].State == Ready {
		s.integrate(s.Now)
		s.Ready--
		s.Blocked++
		ts[succ].State = Initialized
	}
}

// AddEdges makes succ depend on each of preds (which may repeat), as
// AddEdge for each would, but where the edges are recorded (RecordDeps)
// succ waits in one list only, its first unfinished predecessor's
// (taskCols.watch): when that one completes, the rest of succ's pairs in
// DepEdges (advance) give the next unfinished one, and the last releases
// it. A successor list held a cell for every edge of every task not yet
// completed (7 M cells, 58 MB, on the 10 M-event lean spread at the end of
// its creations); one registration a waiting task is mostly held in its
// predecessor's list head (a task waited for by one waiting task).
func (s *Sim) AddEdges(preds []Task, succ Task) {
	if !s.RecordDeps || !s.valid(succ) || s.cols.missing.get(succ) != 0 || !s.created(preds) {
		// A task waiting already (for remote dependences, or dependences
		// that came before, in a damaged trace), or predecessors not
		// created yet: per edge, but for the predecessors a registration
		// stands for already.
		var reg []Task
		if s.RecordDeps && s.valid(succ) && s.cols.at.get(succ) > 0 {
			reg = s.registered(succ)
		}
		for _, p := range preds {
			if !s.valid(p) || !s.valid(succ) || p == succ {
				continue
			}
			if s.RecordDeps {
				s.record(p, succ)
			}
			if _, in := slices.BinarySearch(reg, p); !in {
				s.link(p, succ)
			}
		}
		return
	}
	// Only the first unfinished predecessor's pair needs its mark; every
	// pair has one when the last appended has (the list only grows).
	first, mark, runs := NoTask, packed.Mark(0), true
	ts := s.Tasks
	for _, p := range preds {
		switch {
		case !s.valid(p) || p == succ:
			continue
		case first == NoTask && ts[p].State < Completed:
			first = p
			mark, _ = s.recordMarked(p, succ)
		default:
			s.record(p, succ)
		}
		if ts[p].State < Completed {
			runs = runs && s.cols.succ.fits(p, succ)
		}
	}
	all := s.DepEdges.Markable()
	switch {
	case !all || runs:
		// DepEdges too long to mark, or every unfinished predecessor's
		// list takes succ into its run (tasks made one after another,
		// a stencil's): per edge, which then costs no cell, and no pass
		// over the pairs when a predecessor completes.
		for _, p := range preds {
			if s.valid(p) && p != succ {
				s.link(p, succ)
			}
		}
	case first != NoTask:
		s.watch(first, succ, mark)
		s.cols.missing.add(succ, 1)
		s.unready(succ)
	}
}

// created reports whether every valid task of preds was created.
func (s *Sim) created(preds []Task) bool {
	for _, p := range preds {
		if s.valid(p) && s.Tasks[p].State == NotCreated {
			return false
		}
	}
	return true
}

// watch makes succ wait in pred's registration list, for its pair at m.
func (s *Sim) watch(pred, succ Task, m packed.Mark) {
	s.cols.watch.push(&s.succ, pred, succ)
	s.cols.at.add(succ, int32(m)+1-s.cols.at.get(succ))
}

// regPreds yields the predecessors succ's registration stands for: its
// pairs' from the registered one on (none when succ is not registered).
func (s *Sim) regPreds(succ Task) iter.Seq[Task] {
	return func(yield func(Task) bool) {
		at := s.cols.at.get(succ)
		for m, more := packed.Mark(at-1), at > 0; more; {
			var p Task
			if p, m, more = s.DepEdges.RunAt(m, succ); !yield(p) {
				return
			}
		}
	}
}

// registered returns regPreds(succ), sorted.
func (s *Sim) registered(succ Task) []Task { return slices.Sorted(s.regPreds(succ)) }

// waitsFor reports whether succ's registration stands for pred.
func (s *Sim) waitsFor(succ, pred Task) bool {
	for p := range s.regPreds(succ) {
		if p == pred {
			return true
		}
	}
	return false
}

// advance moves succ, whose registered predecessor completed, to its next
// unfinished predecessor, the first in its pairs after that one's, or
// releases it when none is left.
func (s *Sim) advance(succ Task) {
	at := s.cols.at.get(succ)
	if at <= 0 {
		return
	}
	ts := s.Tasks
	_, m, more := s.DepEdges.RunAt(packed.Mark(at-1), succ)
	for more {
		p, next, more2 := s.DepEdges.RunAt(m, succ)
		if ts[p].State < Completed {
			s.watch(p, succ, m)
			return
		}
		m, more = next, more2
	}
	s.cols.at.add(succ, -at)
	s.Release(succ)
}

// unfinished returns t's unfinished predecessors (and remote ones), as
// its successor lists counted them: a registration stands for every
// distinct unfinished predecessor from it on.
func (s *Sim) unfinished(t Task) int32 {
	n := s.cols.missing.get(t)
	if s.cols.at.get(t) <= 0 {
		return n
	}
	for _, p := range slices.Compact(s.registered(t)) {
		if s.Tasks[p].State < Completed {
			n++
		}
	}
	return n - 1
}

// ReadyIfFree makes an initialized task ready when no predecessor is missing.
func (s *Sim) ReadyIfFree(t Task) {
	if s.valid(t) && s.Tasks[t].State == Initialized && s.cols.missing.get(t) <= 0 {
		s.setState(t, Ready)
		if s.Tasks[t].Flags&FlagTaskwait != 0 {
			s.depsMet(t)
		}
	}
}

// DepWait suspends the creator of tw, a taskwait with a depend clause
// (OMPT's taskwait task: no body, FlagTaskwait), on thread th until tw's
// predecessors completed: it is ready then, and runs again when the
// runtime reports tw complete (EndDepWait). OpenMP defines the construct
// as an undeferred task of an empty body with the clause: tw is one, run
// when the wait ends.
func (s *Sim) DepWait(tw Task, th int) {
	if !s.valid(tw) {
		return
	}
	if p := s.Parent(tw); s.suspend(p, th, WaitDeps) && s.Tasks[tw].State == Ready {
		s.setState(p, Ready)
	}
}

// depsMet makes tw's creator ready when it waits for tw's dependences.
func (s *Sim) depsMet(tw Task) {
	if p := s.Parent(tw); s.valid(p) && s.Tasks[p].State == Suspended && s.Tasks[p].Wait == WaitDeps {
		s.setState(p, Ready)
	}
}

// EndDepWait ends the taskwait tw on thread th: tw runs its empty body
// (it takes no time and is on no thread's stack) and completes, and its
// creator runs again.
func (s *Sim) EndDepWait(tw Task, th int) {
	if !s.valid(tw) {
		return
	}
	ts := s.Tasks
	switch ts[tw].State {
	case Initialized:
		s.Warn.Add("dependences unmet", "taskwait task #%d completed with %d predecessor(s) unfinished at %d ns", tw, s.unfinished(tw), s.Now)
		s.setState(tw, Ready)
		s.depsMet(tw)
	case Ready:
	default:
		s.Warn.Add("completed twice", "taskwait task #%d finished again (state %s) at %d ns", tw, ts[tw].State, s.Now)
		return
	}
	s.setState(tw, Running)
	s.setState(tw, Executed)
	s.complete(tw)
	if p := s.Parent(tw); s.valid(p) && ts[p].Wait == WaitDeps {
		s.EndWait(p, th)
	}
}

// Release counts one predecessor of t as done (e.g. a remote dependence
// arrived) and makes t ready when it was the last.
func (s *Sim) Release(t Task) {
	if !s.valid(t) {
		return
	}
	m := s.cols.missing.add(t, -1)
	if m < 0 {
		s.Warn.Add("dependence released twice", "task #%d at %d ns", t, s.Now)
	}
	s.ReadyIfFree(t)
}

// StartTask makes t run on thread th: a new task is pushed on the thread's
// stack; a task already on it (resumed after a child) becomes the top.
// A task suspended in a synchronisation stays suspended until it ends.
func (s *Sim) StartTask(t Task, th int) {
	if !s.valid(t) {
		s.Warn.Add("unknown task", "task_schedule to task #%d at %d ns", t, s.Now)
		return
	}
	ts := s.Tasks
	thr := &s.Threads[th]
	// Resuming a task below the top of this thread's stack. Tasks above it
	// that were switched out at a scheduling point without waiting for
	// anything (③ waiting for a child that has finished, or ②) were
	// re-queued: an untied task a runtime switched out when it created a
	// child, resumed later wherever. Anything else above it is a mismatch.
	maybe := s.cols.mayBeStacked(t) // else not on the stack: a new task
	for i := len(thr.Stack) - 1; i >= 0 && maybe; i-- {
		if thr.Stack[i] == t {
			if i != len(thr.Stack)-1 {
				bad := 0
				for _, u := range thr.Stack[i+1:] {
					switch {
					case ts[u].State == Ready || ts[u].State == Suspended && ts[u].Wait == WaitChild:
						ts[u].Wait = WaitNone
						s.setState(u, Ready)
					case ts[u].State == Running:
						bad++
						s.stopRunning(u, th)
						s.setState(u, Suspended)
					default:
						bad++
					}
				}
				if bad > 0 {
					s.Warn.Add("stack mismatch", "task #%d resumed under %d other task(s) on thread %d at %d ns", t, len(thr.Stack)-1-i, th, s.Now)
				}
				thr.Stack = thr.Stack[:i+1]
			}
			s.resume(t, th)
			return
		}
	}
	if o := ts[t].Thread(); ts[t].State == Running && o != th && o >= 0 && o < len(s.Threads) {
		// Still running on thread o: the runtime re-queued it there and
		// another thread took it before o reported the switch-out (LLVM
		// libomp pushes an untied task back to its deque before the
		// task_schedule callback). Take it off o now; o's late report is
		// ignored (Switch).
		s.Requeue(t, o)
		s.touched = append(s.touched, o)
	}
	switch ts[t].State {
	case Ready:
		if o := ts[t].Thread(); o != th && o >= 0 && o < len(s.Threads) {
			// It yielded to a task nested above it on thread o and resumes
			// here: it is no longer on o (resuming o's tasks below it must
			// not find it there).
			s.removeFrom(t, o)
		}
	case Initialized:
		if m := s.cols.missing.get(t); m > 0 {
			s.Warn.Add("started before its dependences", "task #%d started with %d unfinished predecessor(s) at %d ns", t, m, s.Now)
		}
		s.setState(t, Ready)
	case Suspended:
		// A task switched out (Requeue) while it waited in a
		// synchronisation, or left on another thread's stack by a trace
		// that never said it left: it runs here now, no longer waiting.
		s.removeFromStacks(t, th)
		ts[t].Wait = WaitNone
		s.setState(t, Ready)
	case NotCreated:
		s.Warn.Add("task never created", "task_schedule to task #%d at %d ns", t, s.Now)
		return
	default:
		s.Warn.Add("bad start", "task #%d started in state %s at %d ns", t, ts[t].State, s.Now)
		return
	}
	if top := thr.Current(); top != NoTask && ts[top].State == Running {
		// The current task reaches a scheduling point (e.g. an undeferred
		// child or a switch at creation): it waits for the new one.
		s.stopRunning(top, th)
		s.setState(top, Suspended)
		ts[top].Wait = WaitChild
	}
	s.cols.push(thr, t)
	ts[t].runOn(th)
	if s.cols.started.get(t) < 0 {
		s.cols.started.set(t, s.Now)
	}
	s.setState(t, Running)
	thr.RunSince = s.Now
}

// resume makes the top task t of thread th run again unless it still waits
// in a synchronisation.
func (s *Sim) resume(t Task, th int) {
	ts := s.Tasks
	if w := ts[t].Wait; w != WaitNone && w != WaitChild {
		return // still in taskwait/barrier/...: its end resumes it, ready or not
	}
	switch ts[t].State {
	case Running:
		return
	case Suspended:
		ts[t].Wait = WaitNone
		s.setState(t, Ready)
	case Ready:
	default:
		s.Warn.Add("bad resume", "task #%d resumed in state %s at %d ns", t, ts[t].State, s.Now)
		return
	}
	s.setState(t, Running)
	s.Threads[th].RunSince = s.Now
}

func (s *Sim) stopRunning(t Task, th int) {
	d := s.Now - s.Threads[th].RunSince
	tk := &s.Tasks[t]
	if tk.Flags&FlagLongRun == 0 {
		run := int64(uint32(s.cols.run.get(t)))
		if r := run + d; r >= 0 && r <= math.MaxUint32 {
			s.cols.run.set(t, int32(uint32(r)))
			return
		}
		if s.longRuns == nil {
			s.longRuns = map[Task]int64{}
		}
		tk.Flags |= FlagLongRun
		s.longRuns[t] = run
	}
	s.longRuns[t] += d
}

// Started returns when task t first started Running, -1 never.
func (s *Sim) Started(t Task) int64 { return s.cols.started.get(t) }

// Region returns the parallel-region instance task t belongs to, -1 none.
func (s *Sim) Region(t Task) int32 { return s.cols.region.get(t) }

// Parent returns task t's creator, NoTask none.
func (s *Sim) Parent(t Task) Task { return s.cols.parent.get(t) }

// Loc returns task t's construct (a location id), -1 unknown.
func (s *Sim) Loc(t Task) int32 { return s.cols.loc.get(t) }

// RunNS returns the time task t spent Running.
func (s *Sim) RunNS(t Task) int64 {
	if s.Tasks[t].Flags&FlagLongRun == 0 {
		return int64(uint32(s.cols.run.get(t)))
	}
	return s.longRuns[t]
}

func (s *Sim) removeFromStacks(t Task, except int) {
	for i := range s.Threads {
		if i == except {
			continue
		}
		st := s.Threads[i].Stack
		for j := range st {
			if st[j] == t {
				s.Threads[i].Stack = append(st[:j], st[j+1:]...)
				break
			}
		}
	}
}

// removeFrom removes t from th's stack, if there.
func (s *Sim) removeFrom(t Task, th int) {
	st := s.Threads[th].Stack
	for j := len(st) - 1; j >= 0; j-- {
		if st[j] == t {
			s.Threads[th].Stack = append(st[:j], st[j+1:]...)
			return
		}
	}
}

// popTop removes t from the top of th's stack.
func (s *Sim) popTop(t Task, th int) {
	thr := &s.Threads[th]
	if n := len(thr.Stack); n > 0 && thr.Stack[n-1] == t {
		thr.Stack = thr.Stack[:n-1]
		return
	}
	for i := len(thr.Stack) - 1; i >= 0; i-- {
		if thr.Stack[i] == t {
			s.Warn.Add("stack mismatch", "task #%d finished under %d other task(s) on thread %d at %d ns", t, len(thr.Stack)-1-i, th, s.Now)
			thr.Stack = thr.Stack[:i]
			return
		}
	}
	s.Warn.Add("stack mismatch", "task #%d finished on thread %d that does not run it at %d ns", t, th, s.Now)
}

// EndStatus says how a running task leaves its thread.
type EndStatus uint8

const (
	EndComplete EndStatus = iota // Running → Executed → Completed
	EndDetach                    // Running → Executed → Detached (completes at fulfill)
	EndCancel                    // Running → Cancelled → Completed
	EndYield                     // Running → Ready, stays on the stack
	EndSwitch                    // Running → Suspended, stays on the stack
)

// Switch applies task_schedule(prior, yield or switch, next) on thread th.
// When next lies below prior on th's stack, prior is not waiting for next:
// it was switched out and re-queued (LLVM libomp runs an untied task's stub
// first and re-queues it; any task may be switched out at a scheduling
// point), so it leaves th (Requeue). Otherwise next runs nested above prior,
// which yields (⑤→②) or is suspended (⑤→③) on th's stack.
func (s *Sim) Switch(prior, next Task, th int, how EndStatus) {
	if s.valid(prior) && s.valid(next) && s.below(next, prior, th) {
		s.Requeue(prior, th)
		return
	}
	if s.valid(prior) && s.Tasks[prior].Thread() != th && s.Tasks[prior].State != NotCreated && !s.OnStack(prior, th) {
		return // another thread took it before this report (see StartTask)
	}
	s.StopTask(prior, th, how)
}

// below reports whether next is under prior on th's stack.
func (s *Sim) below(next, prior Task, th int) bool {
	if !s.cols.mayBeStacked(next) {
		return false // a task not started yet, most often
	}
	st := s.Threads[th].Stack
	for i := len(st) - 1; i >= 0; i-- {
		if st[i] == prior {
			for j := i - 1; j >= 0; j-- {
				if st[j] == next {
					return true
				}
			}
			return false
		}
	}
	return false
}

// Requeue takes task t off thread th: it stops running and goes back to the
// runtime's queue, ready again (⑤→②, or ③→② for a task switched out at a
// scheduling point without waiting for anything), or still suspended when
// it waits in a synchronisation (a taskwait's end makes it ready as usual).
// It may resume on any thread (StartTask), as untied tasks do.
func (s *Sim) Requeue(t Task, th int) {
	if !s.valid(t) {
		return
	}
	ts := s.Tasks
	thr := &s.Threads[th]
	for i := len(thr.Stack) - 1; i >= 0; i-- {
		if thr.Stack[i] == t {
			thr.Stack = append(thr.Stack[:i], thr.Stack[i+1:]...)
			break
		}
	}
	s.Requeues++
	switch ts[t].State {
	case Running:
		s.stopRunning(t, th)
		ts[t].Wait = WaitNone
		s.setState(t, Ready)
	case Suspended:
		if ts[t].Wait == WaitChild || ts[t].Wait == WaitNone {
			ts[t].Wait = WaitNone
			s.setState(t, Ready)
		}
	case Ready:
		ts[t].Wait = WaitNone
	default:
		s.Warn.Add("bad switch", "task #%d switched out in state %s at %d ns", t, ts[t].State, s.Now)
	}
}

// OnStack reports whether t is on thread th's stack.
func (s *Sim) OnStack(t Task, th int) bool {
	if !s.cols.mayBeStacked(t) {
		return false
	}
	// From the top: the task asked about is most often the one that
	// just ran there, above the suspended ones of a recursion.
	st := s.Threads[th].Stack
	for i := len(st) - 1; i >= 0; i-- {
		if st[i] == t {
			return true
		}
	}
	return false
}

// StopTask applies how the running task t leaves thread th.
func (s *Sim) StopTask(t Task, th int, how EndStatus) {
	if !s.valid(t) {
		s.Warn.Add("unknown task", "task_schedule from task #%d at %d ns", t, s.Now)
		return
	}
	ts := s.Tasks
	st := ts[t].State
	if st == NotCreated {
		s.Warn.Add("task never created", "task_schedule from task #%d at %d ns", t, s.Now)
		return
	}
	if st == Running {
		s.stopRunning(t, th)
	}
	switch how {
	case EndYield:
		if st == Running {
			s.setState(t, Ready)
		}
		return
	case EndSwitch:
		if st == Running {
			s.setState(t, Suspended)
			ts[t].Wait = WaitChild
		}
		return
	}
	if st >= Executed {
		s.Warn.Add("completed twice", "task #%d finished again (state %s) at %d ns", t, st, s.Now)
		return
	}
	s.popTop(t, th)
	switch how {
	case EndCancel:
		s.setState(t, Cancelled)
		s.complete(t)
	case EndDetach:
		s.setState(t, Executed)
		if ts[t].Flags&FlagFulfilled != 0 {
			s.complete(t)
		} else {
			s.setState(t, Detached)
		}
	default:
		if st != Running {
			s.Warn.Add("finished without running", "task #%d finished in state %s at %d ns", t, st, s.Now)
			if st != Ready {
				s.setState(t, Ready)
			}
			s.setState(t, Running)
		}
		s.setState(t, Executed)
		s.complete(t)
	}
}

// Fulfill handles a detach event: a detached task completes now; a task
// still running will complete when it finishes.
func (s *Sim) Fulfill(t Task) {
	if !s.valid(t) {
		return
	}
	switch s.Tasks[t].State {
	case Detached:
		s.complete(t)
	case Completed, Deleted:
		s.Warn.Add("fulfilled twice", "task #%d at %d ns", t, s.Now)
	default:
		s.Tasks[t].Flags |= FlagFulfilled
	}
}

// Discard cancels a task that never ran (cancel taskgroup).
func (s *Sim) Discard(t Task) {
	if !s.valid(t) {
		return
	}
	switch s.Tasks[t].State {
	case Initialized:
		s.setState(t, Ready)
		fallthrough
	case Ready:
		s.setState(t, Cancelled)
		s.complete(t)
	}
}

// drain calls fn with every task of t's list in column c, in order, then
// gives the list's cells back and empties it.
func (s *Sim) drain(c *hcol, t Task, fn func(Task)) {
	head := c.get(t)
	if head.Empty() {
		return
	}
	for hi, n, next := s.succ.First(head); n > 0; {
		for v := hi; v > hi-n; v-- {
			fn(v)
		}
		if next == lists.None {
			break
		}
		hi, n, next = s.succ.Item(next)
	}
	s.succ.ReleaseHead(head)
	c.clear(t)
}

// complete finishes t: → Completed, then successors, parent's taskwait,
// taskgroup and region barrier conditions.
func (s *Sim) complete(t Task) {
	ts := s.Tasks
	s.setState(t, Completed)
	s.Completed++
	s.cols.freezeDone(t, len(ts))
	s.drain(&s.cols.succ, t, s.Release)
	// advance registers tasks in other lists: t's cells stay until the
	// walk is done.
	s.drain(&s.cols.watch, t, s.advance)
	if ts[t].Kind != KindExplicit {
		return
	}
	if p := s.Parent(t); s.valid(p) {
		kids := s.cols.kids.add(p, -1)
		if kids == 0 && ts[p].State == Suspended && ts[p].Wait == WaitTaskwait {
			s.setState(p, Ready)
		}
	}
	if g := s.cols.group.get(t); g >= 0 {
		grp := &s.Groups[g]
		grp.Pending--
		if grp.Pending == 0 && grp.Waiter != NoTask && ts[grp.Waiter].State == Suspended {
			s.setState(grp.Waiter, Ready)
		}
	}
	if r := s.cols.region.get(t); r >= 0 {
		s.Regions[r].Pending--
		s.checkBarrier(r)
	}
}

// SuspendForTaskwait: t waits for its children.
func (s *Sim) SuspendForTaskwait(t Task, th int) {
	if !s.suspend(t, th, WaitTaskwait) {
		return
	}
	if s.cols.kids.get(t) <= 0 {
		s.setState(t, Ready)
	}
}

// SuspendOther: t waits in a synchronisation whose end condition the model
// cannot observe; it is ready at once and runs again at the wait's end.
func (s *Sim) SuspendOther(t Task, th int) {
	if s.suspend(t, th, WaitOther) {
		s.setState(t, Ready)
	}
}

// SuspendForThread: t waits for another thread of the program (its end in
// a join, a signal on a condition variable, a barrier of its threads).
// Unlike a wait the model cannot see through it is not ready meanwhile:
// the thread is idle, not waiting for the runtime.
func (s *Sim) SuspendForThread(t Task, th int) { s.suspend(t, th, WaitThread) }

func (s *Sim) suspend(t Task, th int, why WaitKind) bool {
	if !s.valid(t) {
		return false
	}
	ts := s.Tasks
	if ts[t].State != Running {
		s.Warn.Add("bad suspend", "task #%d waits in state %s at %d ns", t, ts[t].State, s.Now)
		return false
	}
	s.stopRunning(t, th)
	s.setState(t, Suspended)
	ts[t].Wait = why
	return true
}

// EndWait resumes t at the end of a synchronisation wait.
func (s *Sim) EndWait(t Task, th int) {
	if !s.valid(t) {
		return
	}
	ts := s.Tasks
	switch ts[t].State {
	case Completed:
		return // its region ended while it was still waking up
	case Suspended:
		s.setState(t, Ready)
	case Ready:
	case Running:
		return
	default:
		s.Warn.Add("bad wait end", "task #%d ends a wait in state %s at %d ns", t, ts[t].State, s.Now)
		return
	}
	ts[t].Wait = WaitNone
	s.setState(t, Running)
	s.Threads[th].RunSince = s.Now
}

// OpenGroup starts a taskgroup region of task t on thread th.
func (s *Sim) OpenGroup(t Task, th int) {
	s.Groups = append(s.Groups, Group{Waiter: NoTask})
	thr := &s.Threads[th]
	thr.Groups = append(thr.Groups, OpenGroup{Task: t, Group: int32(len(s.Groups) - 1)})
}

// SuspendForGroup: t waits at the end of its innermost taskgroup.
func (s *Sim) SuspendForGroup(t Task, th int) {
	thr := &s.Threads[th]
	if len(thr.Groups) == 0 || thr.Groups[len(thr.Groups)-1].Task != t {
		s.SuspendOther(t, th)
		return
	}
	g := &s.Groups[thr.Groups[len(thr.Groups)-1].Group]
	if !s.suspend(t, th, WaitGroup) {
		return
	}
	g.Waiter = t
	if g.Pending <= 0 {
		s.setState(t, Ready)
	}
}

// CloseGroup ends the innermost taskgroup region on thread th.
func (s *Sim) CloseGroup(th int) {
	thr := &s.Threads[th]
	if n := len(thr.Groups); n > 0 {
		s.Groups[thr.Groups[n-1].Group].Waiter = NoTask
		thr.Groups = thr.Groups[:n-1]
	}
}

// NewRegion creates a parallel-region instance with a team of n threads.
func (s *Sim) NewRegion(team int32, topLevel bool) int32 {
	team = s.TeamSize(team)
	if s.Regions == nil && s.Proc != nil {
		// One per parallel_begin the load counted (more only for a
		// region whose begin is missing): reserved, not copied as it
		// grows; the previous process's table when it is large enough (an
		// MPI code opens a region per iteration: 35 MB of tables on the
		// 10 M-event halo).
		n := min(s.Proc.Census.Kinds[trace.ParallelBegin], 1<<20) + 1
		if sp := s.Spare; sp != nil && int64(cap(sp.regions)) >= n {
			s.Regions, sp.regions = sp.regions[:0], nil
		} else {
			s.Regions = make([]Region, 0, n)
		}
	}
	s.Regions = append(s.Regions, Region{Team: team, TopLevel: topLevel})
	r := int32(len(s.Regions) - 1)
	s.teamArrays(r)
	return r
}

// SetTeamSize gives region r a team of n threads (bounded by TeamSize),
// before any member passed a barrier: the actual size, when it differs
// from the one requested at the region's begin.
func (s *Sim) SetTeamSize(r, n int32) {
	if s.Regions[r].Retired {
		return // ended: no member can arrive any more
	}
	s.Regions[r].Team = s.TeamSize(n)
	s.teamArrays(r)
}

// retireEnded retires the regions that ended, and those that could not be
// before, where nothing refers to their members any more. An MPI +
// OpenMP code opens a region per iteration: their per-member arrays
// (epochs, idle times, members: 20 bytes a team thread, and the barrier
// queues) were kept until the process's end.
func (s *Sim) retireEnded() {
	s.unretired = append(s.unretired, s.ended...)
	s.ended = s.ended[:0]
	left := s.unretired[:0]
	for _, r := range s.unretired {
		if !s.retire(r) {
			left = append(left, r)
		}
	}
	s.unretired = left
}

// retire releases ended region r's per-member arrays, its idle folded
// into the TALP sums, unless a task bound to it is not done, a thread is
// still in its team or the breakdown still books a thread's time to it
// (then it reports false, to be tried again).
func (s *Sim) retire(r int32) bool {
	reg := &s.Regions[r]
	if reg.Retired {
		return true
	}
	if !reg.Ended || reg.Pending > 0 {
		return false
	}
	for th := range s.Threads {
		for _, ref := range s.Threads[th].Teams {
			if ref.Region == r {
				return false
			}
		}
	}
	if b := s.Breakdown; b != nil && slices.ContainsFunc(b.th, func(o openInterval) bool { return o.region == r }) {
		return false
	}
	s.retiredIdle.add(reg)
	reg.Epoch, reg.Idle, reg.Members, reg.Waiting, reg.Later = nil, nil, nil, nil, nil
	reg.Retired = true
	return true
}

// teamArrays gives region r zeroed per-member arrays for its team, cut
// from blocks shared by many regions: three allocations per region were
// most of an MPI code's simulation allocations (a region per iteration).
func (s *Sim) teamArrays(r int32) {
	reg := &s.Regions[r]
	n := int(reg.Team)
	reg.Epoch, reg.Idle = s.slabs.epoch.take(n), s.slabs.idle.take(n)
	// Members who joined before a resize stay.
	reg.Members = append(s.slabs.members.take(max(n, len(reg.Members)))[:0], reg.Members...)
}

// teamSlabs are the blocks regions' per-member arrays are cut from.
type teamSlabs struct {
	epoch   slab[int32]
	idle    slab[int64]
	members slab[Member]
}

// slab hands out zeroed slices of a larger block, each capped at its
// length so that appending to one never writes into the next. Blocks
// double from a small one up to slabLen elements: a process with a few
// regions (thousands of processes of a few hundred events) takes little.
type slab[T any] struct {
	free []T
	next int // elements of the next block
}

const slabLen = 4096

func (b *slab[T]) take(n int) []T {
	if len(b.free) < n {
		b.next = min(max(2*b.next, 16), slabLen)
		b.free = make([]T, max(n, b.next))
	}
	v := b.free[:n:n]
	b.free = b.free[n:]
	return v
}

// TeamSize bounds a team size read from the trace, which sizes per-member
// arrays: a team's members are threads of this process, each with its own
// events, so no team is larger than the process's threads (a requested
// size beyond them is the runtime's business; a claimed one is damage).
func (s *Sim) TeamSize(claim int32) int32 {
	return min(max(claim, 1), max(int32(len(s.Threads)), 1))
}

// JoinTeam starts implicit task t of region r as team member num on th.
func (s *Sim) JoinTeam(t Task, r int32, num int32, th int) {
	thr := &s.Threads[th]
	if r >= 0 && (num < 0 || num >= s.Regions[r].Team) {
		s.Warn.Add("bad team member", "thread number %d in a team of %d at %d ns", num, s.Regions[r].Team, s.Now)
		num = 0
	}
	thr.Teams = append(thr.Teams, TeamRef{Region: r, Num: num})
	if s.valid(t) {
		s.cols.region.set(t, r)
	}
	if r >= 0 {
		s.Regions[r].Members = append(s.Regions[r].Members, Member{Thread: int32(th), Task: t})
	}
}

// LeaveTeam ends th's membership in region r (its innermost one when r is
// -1). A membership EndRegion already closed is left alone.
func (s *Sim) LeaveTeam(th int, r int32) {
	thr := &s.Threads[th]
	n := len(thr.Teams)
	if n == 0 || (r >= 0 && thr.Teams[n-1].Region != r) {
		return
	}
	// Leaving its outermost team, the encountering thread joins that region
	// until its parallel_end (Thread.Fork).
	thr.Fork = thr.Teams[n-1].Region + 1
	thr.Teams = thr.Teams[:n-1]
}

// EndRegion closes region r when its encountering thread th ends it: the
// other team members' implicit tasks are over even if their runtime reports
// it later (LLVM libomp ends a worker's implicit task only when it leaves
// the thread pool, at the next parallel region or at exit), so they stop
// counting as running and as inside the region.
func (s *Sim) EndRegion(r int32, th int) {
	if r < 0 || int(r) >= len(s.Regions) {
		return
	}
	reg := &s.Regions[r]
	if !reg.Ended {
		s.ended = append(s.ended, r)
	}
	reg.Ended = true
	for _, m := range reg.Members {
		if int(m.Thread) == th || !s.valid(m.Task) {
			continue
		}
		s.touched = append(s.touched, int(m.Thread))
		tk := &s.Tasks[m.Task]
		if tk.State < Completed {
			switch tk.State {
			case Running:
				s.stopRunning(m.Task, int(m.Thread))
			case Ready:
				s.integrate(s.Now)
				s.Ready--
			}
			// Not a transition of the model: the region's end finishes it
			// wherever it was.
			tk.State = Executed
			tk.Wait = WaitNone
			s.complete(m.Task)
		}
		thr := &s.Threads[m.Thread]
		for i := len(thr.Stack) - 1; i >= 0; i-- {
			if thr.Stack[i] == m.Task {
				thr.Stack = append(thr.Stack[:i], thr.Stack[i+1:]...)
				break
			}
		}
		for i := len(thr.Teams) - 1; i >= 0; i-- {
			if thr.Teams[i].Region == r {
				thr.Teams = append(thr.Teams[:i], thr.Teams[i+1:]...)
				break
			}
		}
	}
}

// ArriveBarrier: implicit task t of th waits at its region's next barrier.
func (s *Sim) ArriveBarrier(t Task, th int) {
	thr := &s.Threads[th]
	thr.Barrier = 0 // its innermost team's, whatever an earlier arrival left
	if len(thr.Teams) == 0 || !s.valid(t) {
		s.SuspendOther(t, th)
		return
	}
	s.arriveAt(t, th, thr.Teams[len(thr.Teams)-1])
}

// ArriveBarrierOf: task t of th waits at the next barrier of region r, a
// team th is a member of outside its innermost one: a host teams league's
// barrier, which LLVM libomp reports from inside the implicit task of the
// team's own region. When th is in no team of r it is ArriveBarrier.
func (s *Sim) ArriveBarrierOf(t Task, th int, r int32) {
	thr := &s.Threads[th]
	for i := len(thr.Teams) - 2; i >= 0 && s.valid(t); i-- {
		if thr.Teams[i].Region == r {
			s.arriveAt(t, th, thr.Teams[i])
			thr.Barrier = r + 1
			return
		}
	}
	s.ArriveBarrier(t, th)
}

func (s *Sim) arriveAt(t Task, th int, ref TeamRef) {
	if ref.Region < 0 {
		s.SuspendOther(t, th)
		return
	}
	if !s.suspend(t, th, WaitBarrier) {
		return
	}
	reg := &s.Regions[ref.Region]
	switch reg.Epoch[ref.Num] - reg.Next {
	case 0:
		reg.Arrived[0]++
		reg.Waiting = append(reg.Waiting, t)
	case 1:
		reg.Arrived[1]++
		reg.Later = append(reg.Later, t)
	default:
		// Barrier counts out of step (events missing): do not model it.
		s.setState(t, Ready)
		return
	}
	s.checkBarrier(ref.Region)
}

// LeaveBarrier: th passed its region's barrier (its wait ended).
func (s *Sim) LeaveBarrier(th int) {
	thr := &s.Threads[th]
	b := thr.Barrier
	thr.Barrier = 0
	if len(thr.Teams) == 0 {
		return
	}
	ref := thr.Teams[len(thr.Teams)-1]
	if r := b - 1; r >= 0 {
		// The membership may be gone: the league ended (EndRegion)
		// while this thread still waited at its barrier.
		ref.Region = -1
		for _, m := range thr.Teams {
			if m.Region == r {
				ref = m
			}
		}
	}
	if ref.Region >= 0 {
		s.Regions[ref.Region].Epoch[ref.Num]++
	}
}

// checkBarrier releases region r's waiting tasks once the whole team
// arrived and no task bound to the region is pending.
func (s *Sim) checkBarrier(r int32) {
	reg := &s.Regions[r]
	for reg.Arrived[0] >= reg.Team && reg.Pending <= 0 {
		for _, t := range reg.Waiting {
			if s.Tasks[t].State == Suspended && s.Tasks[t].Wait == WaitBarrier {
				s.setState(t, Ready)
			}
		}
		reg.Waiting = append(reg.Waiting[:0], reg.Later...)
		reg.Later = reg.Later[:0]
		reg.Arrived[0], reg.Arrived[1] = reg.Arrived[1], 0
		reg.Next++
	}
}

// SuspendForParallel: t encountered parallel region r and waits for it.
// Until th's implicit task of r begins, th forks r's team (Thread.Fork).
func (s *Sim) SuspendForParallel(t Task, r int32, th int) {
	s.suspend(t, th, WaitParallel)
	s.Threads[th].Fork = r + 1
}

// FinishImplicit completes an implicit or initial task and pops it.
func (s *Sim) FinishImplicit(t Task, th int) {
	if !s.valid(t) {
		return
	}
	ts := s.Tasks
	if ts[t].State == Completed {
		return // closed by EndRegion, reported late by the runtime
	}
	switch ts[t].State {
	case Running:
		s.stopRunning(t, th)
	case Suspended, Ready:
		if ts[t].State == Suspended {
			s.setState(t, Ready)
		}
		s.setState(t, Running)
	default:
		s.Warn.Add("bad implicit task end", "task #%d ends in state %s at %d ns", t, ts[t].State, s.Now)
		return
	}
	s.popTop(t, th)
	s.setState(t, Executed)
	s.complete(t)
}

// AdoptInitial starts the runtime's initial task t on th. Where the
// program task (Sim.Program) runs on th, t takes its place: the program
// task completes, and the code before and after is one initial task's.
func (s *Sim) AdoptInitial(t Task, th int) {
	if p := s.Program; s.valid(p) && s.Threads[th].Current() == p && s.Tasks[p].State == Running {
		s.FinishImplicit(p, th)
	}
	s.BeginImplicit(t, KindInitial, th)
}

// BeginImplicit creates and starts an implicit (or initial) task on th.
func (s *Sim) BeginImplicit(t Task, kind TaskKind, th int) {
	s.CreateTask(t, kind, NoTask, th, -1, 0)
	if !s.valid(t) || s.Tasks[t].State != Initialized {
		return
	}
	s.setState(t, Ready)
	thr := &s.Threads[th]
	if top := thr.Current(); top != NoTask && s.Tasks[top].State == Running {
		s.stopRunning(top, th)
		s.setState(top, Suspended)
		s.Tasks[top].Wait = WaitParallel
	}
	s.cols.push(thr, t)
	s.Tasks[t].runOn(th)
	s.cols.started.set(t, s.Now)
	s.setState(t, Running)
	thr.RunSince = s.Now
}
