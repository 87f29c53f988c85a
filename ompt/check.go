package ompt

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// The OMPT sequences the model relies on are claims of the trace, checked
// here event by event (docs/task-model.md, "Checked claims"): a thread's
// sync regions nest and go begin, wait begin, wait end, end, with one
// kind; a parallel region is ended by the thread that began it, which
// cannot begin another from the same task before; an implicit task ends
// on its thread before the thread joins another team; kinds and location
// ids are in range. What contradicts them is a counted warning (an error
// under --strict) naming the file, thread and event (sim.Warnings.Where);
// the model then repairs the state as the sequence's rule says, and the
// driver marks the report partial.
//
// What libomp itself does is not a contradiction: a worker's implicit
// barrier and implicit task end when the next region forks, after the
// encountering thread ended the region (or never, at the program's exit),
// and a worker may name a region before the parallel_begin that opens it
// when both have one timestamp.

// seqCheck is the per-process state of the checks.
type seqCheck struct {
	threads []thrSeq
	// open holds the parallel ids a parallel_begin opened and no
	// parallel_end closed yet, with the thread that began them.
	open map[int64]int32
	// early holds the parallel ids a worker's implicit_task_begin named
	// before any parallel_begin, with its time: legitimate only when the
	// begin follows within earlyParallelNS (the threads' clocks of one
	// process differ by that little).
	early map[int64]int64
	// ended holds recently ended parallel ids (a worker's late reports
	// name them); bounded like waitstate's region table.
	ended, endedOld map[int64]bool
	locs            int64 // location ids: 0 … locs−1 (0: unknown code address)
	// league is the open host teams construct's parallel id (0: none).
	// OpenMP allows a teams construct only outside any parallel region,
	// so a process has at most one open at a time.
	league int64
}

// thrSeq is one thread's open constructs, innermost last.
type thrSeq struct {
	syncs     []syncOpen
	implicits []implicitOpen
	parallels []parOpen
}

type syncOpen struct {
	kind            int64
	waiting, waited bool
}

type implicitOpen struct {
	parallel, task int64 // a league member's initial task: the league's id
	initial        bool
	league         bool // a team's initial task of a host teams construct
	syncDepth      int  // open sync regions when it began
	parDepth       int  // open parallel regions of the thread when it began
}

type parOpen struct {
	parallel, task int64 // the region, its encountering task
}

// keepEnded bounds the ended parallel ids remembered (two generations).
const keepEnded = 4096

func (c *seqCheck) prepare(s *sim.Sim) {
	c.threads = make([]thrSeq, s.Proc.NumThreads())
	c.open, c.early = map[int64]int32{}, map[int64]int64{}
	c.ended, c.endedOld = map[int64]bool{}, map[int64]bool{}
	c.locs = int64(len(s.Proc.Locations))
	c.league = 0
}

// locArg is the index of the location argument of each kind (−1: none).
// checked marks the kinds seqCheck.event looks at: those with a location
// argument and those its switch takes. For the others it does nothing
// unless regions begun early wait (seqCheck.early), and Model.Update does
// not call it (a task trace's schedules and dependences).
var checked = func() (out [trace.NumKinds]bool) {
	for k := range out {
		out[k] = locArg[k] >= 0
	}
	for _, k := range []trace.Kind{trace.ThreadEnd, trace.SyncBegin, trace.SyncEnd, trace.SyncWaitBegin, trace.SyncWaitEnd,
		trace.ParallelBegin, trace.ParallelEnd, trace.ImplicitTaskBegin, trace.ImplicitTaskEnd} {
		out[k] = true
	}
	return out
}()

var locArg = func() (out [trace.NumKinds]int8) {
	for k := range out {
		out[k] = -1
		sc, ok := trace.SchemaOf(trace.Kind(k))
		if !ok {
			continue
		}
		for i, f := range sc.Fields {
			if f == trace.FLoc {
				out[k] = int8(i)
			}
		}
	}
	return out
}()

// event checks e of thread th before the model applies it, and repairs
// what the model needs repaired first (m.Update re-entered with the events
// the trace lacks). It may change e's location argument to −1 (unknown)
// when it is out of range, so that no pass names a construct after a
// location the trace does not have.
func (c *seqCheck) event(m *Model, s *sim.Sim, th int, e *trace.Event) {
	if uint(th) >= uint(len(c.threads)) { // th < 0 too
		return
	}
	if len(c.early) > 0 {
		slack := int64(earlyParallelNS)
		if e.Kind == trace.ThreadEnd {
			slack = 0 // a thread ends: no begin is coming for what it named
		}
		c.checkEarly(s, e.Time, slack)
	}
	if e.Kind < trace.NumKinds {
		if i := locArg[e.Kind]; i >= 0 {
			// −1 is "unknown" (an MPI call's site in version 3 files and
			// OTF2 archives, a converted region without a location).
			if l := e.Args[i]; l < -1 || l >= c.locs && l != 0 {
				s.Warn.Add("location out of range", "%s loc %d: the location table has ids 0..%d", e.Kind, l, c.locs-1)
				e.Args[i] = -1
			}
		}
	}
	t := &c.threads[th]
	switch e.Kind {
	case trace.ThreadEnd:
		// libomp ends every construct of a thread before the thread, a
		// worker's last implicit barrier and task included.
		if n := len(t.syncs); n > 0 {
			s.Warn.Add("sync_end missing", "thread_end inside %d sync region(s) (innermost of kind %d)", n, t.syncs[n-1].kind)
		}
		if n := len(t.implicits); n > 0 {
			s.Warn.Add("implicit_task_end missing", "thread_end while implicit task %s is not ended", idStr(t.implicits[n-1].task))
		}
		if n := len(t.parallels); n > 0 {
			s.Warn.Add("parallel_end missing", "thread_end while parallel region %s it began is not ended", idStr(t.parallels[n-1].parallel))
		}
		*t = thrSeq{}
	case trace.SyncBegin, trace.SyncEnd, trace.SyncWaitBegin, trace.SyncWaitEnd:
		c.sync(m, s, th, t, e)
	case trace.ParallelBegin:
		id := e.Args[0]
		if n := len(t.parallels); n > 0 && e.Args[1] != 0 && t.parallels[n-1].task == e.Args[1] {
			// Its encountering task waits in the region it began before:
			// that region's end is missing.
			prev := t.parallels[n-1]
			s.Warn.Add("parallel_end missing", "task %s begins parallel region %s while its region %s is not ended", idStr(e.Args[1]), idStr(id), idStr(prev.parallel))
			m.Update(s, th, &trace.Event{Time: e.Time, Kind: trace.ParallelEnd, Args: [trace.MaxArgs]int64{prev.parallel, prev.task}})
		}
		if _, ok := c.open[id]; ok {
			s.Warn.Add("parallel id reused", "parallel_begin of region %s, which is open", idStr(id))
		}
		delete(c.early, id)
		c.open[id] = int32(th)
		t.parallels = append(t.parallels, parOpen{id, e.Args[1]})
		if e.Args[3]&ParallelLeague != 0 {
			c.league = id
		}
	case trace.ParallelEnd:
		id := e.Args[0]
		k := len(t.parallels) - 1
		for k >= 0 && t.parallels[k].parallel != id {
			k--
		}
		if k < 0 {
			s.Warn.Add("parallel_end without parallel_begin", "parallel_end of region %s, which this thread did not begin", idStr(id))
			return
		}
		if n := len(t.implicits); n > 0 && t.implicits[n-1].parallel == id {
			// The encountering thread reports its implicit task's end
			// before the region's.
			it := t.implicits[n-1]
			s.Warn.Add("implicit_task_end missing", "parallel_end of region %s before the end of this thread's implicit task %s in it", idStr(id), idStr(it.task))
			m.Update(s, th, &trace.Event{Time: e.Time, Kind: trace.ImplicitTaskEnd, Args: [trace.MaxArgs]int64{id, it.task}})
		}
		for j := len(t.parallels) - 1; j > k; j-- {
			s.Warn.Add("parallel_end missing", "parallel region %s ends while region %s it contains is not ended", idStr(id), idStr(t.parallels[j].parallel))
		}
		t.parallels = t.parallels[:k]
		delete(c.open, id)
		c.markEnded(id)
		if id == c.league {
			c.league = 0
		}
	case trace.ImplicitTaskBegin:
		initial := e.Args[4]&TaskInitial != 0
		if !initial {
			id := e.Args[0]
			_, open := c.open[id]
			if !open && !c.ended[id] && !c.endedOld[id] {
				if _, ok := c.early[id]; !ok {
					c.early[id] = e.Time
				}
			}
			// A worker joins a new team only once its implicit task of
			// an ended region is over (libomp reports it at the fork).
			for n := len(t.implicits); n > 0; n = len(t.implicits) {
				prev := t.implicits[n-1]
				if prev.initial || !c.regionEnded(prev.parallel) || c.encountered(t, prev.parallel) {
					break
				}
				s.Warn.Add("implicit_task_end missing", "implicit task %s of ended region %s not ended before this thread joins region %s", idStr(prev.task), idStr(prev.parallel), idStr(id))
				m.Update(s, th, &trace.Event{Time: e.Time, Kind: trace.ImplicitTaskEnd, Args: [trace.MaxArgs]int64{prev.parallel, prev.task}})
			}
		}
		in := implicitOpen{parallel: e.Args[0], task: e.Args[1], initial: initial, syncDepth: len(t.syncs), parDepth: len(t.parallels)}
		if initial && c.league != 0 && in.parallel == 0 && (e.Args[2] > 1 || e.Args[3] == 0) {
			// A team's initial task of a host teams construct (LLVM
			// libomp: league size and team number, naming no region; a
			// thread's own initial task is one of one, numbered 1): the
			// league's barriers name the league's parallel id.
			in.parallel, in.league = c.league, true
		}
		t.implicits = append(t.implicits, in)
	case trace.ImplicitTaskEnd:
		n := len(t.implicits)
		k := n - 1
		for k >= 0 && t.implicits[k].task != e.Args[1] {
			k--
		}
		if k < 0 && e.Args[4]&TaskInitial != 0 && n > 0 && t.implicits[n-1].initial && t.implicits[n-1].parallel == 0 &&
			e.Args[1] != 0 && m.Task(e.Args[1]) == s.Threads[th].Current() {
			// exit() in an explicit task of the initial thread outside
			// any region: libomp's exit handler ends the initial task
			// naming the thread's current task, the one that called
			// exit (LLVM 13 to 19). Nothing ends, as nothing does at an
			// exit() in a region: the model sees no task (id 0, as a
			// hidden helper thread's end below), the check no
			// implicit task left open at the thread's end.
			t.implicits = t.implicits[:n-1]
			e.Args[1] = 0
			return
		}
		if k < 0 {
			// LLVM libomp's hidden helper threads (they run target
			// nowait's tasks) end an initial task they never began,
			// naming none: nothing is missing.
			if e.Args[1] == 0 && e.Args[4]&TaskInitial != 0 && n == 0 {
				return
			}
			s.Warn.Add("implicit_task_end without implicit_task_begin", "implicit task %s did not begin on this thread", idStr(e.Args[1]))
			return
		}
		if k != n-1 {
			s.Warn.Add("implicit_task_end missing", "implicit task %s ends before %d implicit task(s) it contains", idStr(e.Args[1]), n-1-k)
			for len(t.implicits) > k+1 {
				in := t.implicits[len(t.implicits)-1]
				m.Update(s, th, &trace.Event{Time: e.Time, Kind: trace.ImplicitTaskEnd, Args: [trace.MaxArgs]int64{in.parallel, in.task}})
			}
		}
		it := t.implicits[k]
		if len(t.syncs) > it.syncDepth {
			s.Warn.Add("sync_end missing", "implicit task %s ends inside %d sync region(s) not ended (innermost of kind %d)", idStr(e.Args[1]), len(t.syncs)-it.syncDepth, t.syncs[len(t.syncs)-1].kind)
			c.endSyncs(m, s, th, t, it.syncDepth, e.Time)
		}
		if it.initial && len(t.parallels) > it.parDepth {
			// Regions begun before it (a league's initial task runs
			// inside the teams construct it began) are not its own.
			for j := len(t.parallels) - 1; j >= it.parDepth; j-- {
				s.Warn.Add("parallel_end missing", "the initial task ends while parallel region %s is not ended", idStr(t.parallels[j].parallel))
			}
			t.parallels = t.parallels[:it.parDepth]
		}
		t.implicits = t.implicits[:k]
	}
}

// sync checks a sync region event against the thread's open regions.
func (c *seqCheck) sync(m *Model, s *sim.Sim, th int, t *thrSeq, e *trace.Event) {
	kind := e.Args[0]
	if (kind < SyncBarrier || kind > SyncBarrierTeams) && !trace.ThreadSync(kind) && kind != trace.SyncCondSignal {
		s.Warn.Add("unknown sync kind", "%s of sync kind %d (OMPT defines 1..%d)", e.Kind, kind, SyncBarrierTeams)
	}
	if p := e.Args[1]; p != 0 && e.Kind == trace.SyncBegin && !c.inRegion(t, p) {
		s.Warn.Add("bad parallel id", "%s names parallel region %s, none this thread is in", e.Kind, idStr(p))
	}
	n := len(t.syncs)
	var top *syncOpen
	if n > 0 {
		top = &t.syncs[n-1]
	}
	switch e.Kind {
	case trace.SyncBegin:
		if top != nil && top.waited && !m.noWait {
			// Nothing begins between a region's wait end and its end.
			s.Warn.Add("sync_end missing", "sync region of kind %d begins after the wait of a region of kind %d ended without its end", kind, top.kind)
			c.endSyncs(m, s, th, t, n-1, e.Time)
		}
		t.syncs = append(t.syncs, syncOpen{kind: kind})
	case trace.SyncWaitBegin:
		if top == nil || top.waiting || top.waited || !sameSync(top.kind, kind) {
			s.Warn.Add("sync_wait_begin without sync_begin", "sync_wait_begin of kind %d %s", kind, c.state(top))
			t.syncs = append(t.syncs, syncOpen{kind: kind, waiting: true})
			return
		}
		top.waiting = true
	case trace.SyncWaitEnd:
		if top == nil || !top.waiting || !sameSync(top.kind, kind) {
			s.Warn.Add("sync_wait_end without sync_wait_begin", "sync_wait_end of kind %d %s", kind, c.state(top))
			return
		}
		top.waiting, top.waited = false, true
	case trace.SyncEnd:
		k := n - 1
		for k >= 0 && !sameSync(t.syncs[k].kind, kind) {
			k--
		}
		if k < 0 {
			s.Warn.Add("sync_end without sync_begin", "sync_end of kind %d %s", kind, c.state(top))
			return
		}
		if k != n-1 {
			s.Warn.Add("sync_end missing", "sync_end of kind %d while %d sync region(s) inside it are not ended (innermost of kind %d)", kind, n-1-k, top.kind)
			c.endSyncs(m, s, th, t, k+1, e.Time)
		}
		if t.syncs[k].waiting && !m.noWait {
			s.Warn.Add("sync_wait_end missing", "sync_end of kind %d while its wait has not ended", kind)
			m.Update(s, th, &trace.Event{Time: e.Time, Kind: trace.SyncWaitEnd, Args: [trace.MaxArgs]int64{t.syncs[k].kind}})
		}
		t.syncs = t.syncs[:k]
	}
}

// endSyncs ends thread t's open sync regions from index k up, innermost
// first, with the events the trace lacks (their waits' ends, their ends),
// so the model leaves them as it would have.
func (c *seqCheck) endSyncs(m *Model, s *sim.Sim, th int, t *thrSeq, k int, now int64) {
	for len(t.syncs) > k {
		top := t.syncs[len(t.syncs)-1]
		if top.waiting {
			m.Update(s, th, &trace.Event{Time: now, Kind: trace.SyncWaitEnd, Args: [trace.MaxArgs]int64{top.kind}})
		}
		m.Update(s, th, &trace.Event{Time: now, Kind: trace.SyncEnd, Args: [trace.MaxArgs]int64{top.kind}})
	}
}

// state describes a thread's innermost open sync region for a warning.
func (c *seqCheck) state(top *syncOpen) string {
	switch {
	case top == nil:
		return "outside any sync region"
	case top.waiting:
		return fmt.Sprintf("while the wait of a region of kind %d is open", top.kind)
	case top.waited:
		return fmt.Sprintf("after the wait of a region of kind %d ended", top.kind)
	}
	return fmt.Sprintf("inside a region of kind %d", top.kind)
}

// sameSync reports whether a begin and an end name one construct: kinds
// equal, or both barriers (libomp names a worker's implicit barrier
// differently at its begin and its late end).
func sameSync(a, b int64) bool { return a == b || IsBarrier(a) && IsBarrier(b) }

// leagueMember returns the league's parallel id when thread th's
// innermost implicit task is a team's initial task of a host teams
// construct, 0 otherwise.
func (c *seqCheck) leagueMember(th int) int64 {
	t := &c.threads[th]
	if n := len(t.implicits); n > 0 && t.implicits[n-1].league {
		return t.implicits[n-1].parallel
	}
	return 0
}

// inRegion reports whether parallel id p is a region thread t is in: one
// of its open implicit tasks' or one it encountered.
func (c *seqCheck) inRegion(t *thrSeq, p int64) bool {
	for i := len(t.implicits) - 1; i >= 0; i-- {
		if t.implicits[i].parallel == p {
			return true
		}
	}
	return c.encountered(t, p)
}

func (c *seqCheck) encountered(t *thrSeq, p int64) bool {
	for i := len(t.parallels) - 1; i >= 0; i-- {
		if t.parallels[i].parallel == p {
			return true
		}
	}
	return false
}

func (c *seqCheck) regionEnded(p int64) bool { return c.ended[p] || c.endedOld[p] }

func (c *seqCheck) markEnded(p int64) {
	if len(c.ended) >= keepEnded {
		c.endedOld, c.ended = c.ended, c.endedOld
		clear(c.ended)
	}
	c.ended[p] = true
}

// earlyParallelNS is how much earlier than its master's parallel_begin a
// worker's implicit_task_begin may be stamped: the threads read one clock,
// but a TSC converted per thread (the collector's) or per location (an
// OTF2 archive's offsets) leaves them apart by microseconds at most.
const earlyParallelNS = 10_000

// checkEarly warns about parallel ids a worker named before their begin
// when time has moved on without one (by more than slack): no
// parallel_begin opened them.
func (c *seqCheck) checkEarly(s *sim.Sim, now, slack int64) {
	for id, at := range c.early {
		if now-at > slack {
			s.Warn.Add("bad parallel id", "implicit_task_begin at %d ns names parallel region %s, which no parallel_begin opened", at, idStr(id))
			delete(c.early, id)
		}
	}
}

// idStr renders a task or parallel id as thread.seq, as ptrace dump does.
func idStr(id int64) string {
	if id <= 0 {
		return fmt.Sprint(id)
	}
	return fmt.Sprintf("%d.%d", trace.IDThread(id), trace.IDSeq(id))
}
