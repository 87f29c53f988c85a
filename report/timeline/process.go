package timeline

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// sliceKind tells what opened a slice, so its end event closes the right one.
type sliceKind uint8

const (
	kImplicit sliceKind = iota + 1
	kTask
	kSync
	kMPI
	kRegion
	kWork
	kFlush
	kSyncWait  // the waiting part of a sync region
	kMutexWait // acquiring a lock, critical section, ordered region or atomic
	kMutexHold // holding it
)

type openSlice struct {
	kind    sliceKind
	key     int64 // task id, sync kind, region name id, …
	start   int64 // reference ns
	emitted bool  // its B event was written (it began inside the window)
	name    []byte
	cat     string
	task    int64 // for task slices: the task id shown in args
}

type threadState struct {
	stack    []openSlice
	implicit []int64 // the implicit (or initial) tasks this thread runs, innermost last
	lastEmit int64   // latest ts written on this track
	last     int64   // latest mapped time seen
	inWin    bool
	done     bool // past the window
	named    bool
}

type msgKey struct {
	comm     int64
	src, dst int
	tag      int64
}

// proc writes one process's events.
type proc struct {
	out      *jsonOut
	rank     int
	ix       *index
	m        Mapping
	win      Window
	selected map[int]bool
	st       *Stats
	names    map[int64][]byte    // location id → quoted JSON name
	mutexes  map[[3]int64][]byte // (waiting, mutex kind, location) → quoted JSON name
	funcs    map[int64][]byte    // string id → quoted JSON name
	threads  map[int]*threadState
	msgs     map[msgKey]int64 // messages counted so far per key
	fixed    map[string][]byte
}

func (p *proc) pid() int { return p.rank + 1 }

func (p *proc) export(path string, progress func(read int64)) error {
	if err := p.metadata(); err != nil {
		return err
	}
	f, err := trace.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := trace.NewReader(f, path)
	if err != nil {
		return err
	}
	p.funcs = map[int64][]byte{}
	p.fixed = map[string][]byte{}
	for c, err := range rd.Chunks() {
		if err != nil {
			return err
		}
		th := p.thread(c.Thread)
		if !th.named {
			if err := p.threadName(c.Thread, th); err != nil {
				return err
			}
		}
		for i := range c.Events {
			if err := p.event(c.Thread, th, &c.Events[i]); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if progress != nil {
			progress(rd.Offset())
		}
	}
	// Close what is still open at the last time seen on each thread.
	for t, th := range p.threads {
		if !th.done {
			if err := p.closeFrom(t, th, 0, min(th.last, p.win.End)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *proc) thread(t int) *threadState {
	th := p.threads[t]
	if th == nil {
		th = &threadState{}
		p.threads[t] = th
	}
	return th
}

func (p *proc) metadata() error {
	h := p.ix.header
	o := p.out
	o.begin('M', p.pid(), 0)
	o.str("name", "process_name")
	o.args()
	o.argStr(true, "name", fmt.Sprintf("rank %d (%s, pid %d)", p.rank, h.Host, h.PID))
	o.endArgs()
	if err := o.end(); err != nil {
		return err
	}
	o.begin('M', p.pid(), 0)
	o.str("name", "process_sort_index")
	o.args()
	o.argNum(true, "sort_index", int64(p.rank))
	o.endArgs()
	return o.end()
}

func (p *proc) threadName(t int, th *threadState) error {
	th.named = true
	name := fmt.Sprintf("thread %d", t)
	for _, x := range p.ix.tables.Threads {
		if x.Index == t && x.Name != "" {
			name = fmt.Sprintf("%s (thread %d)", x.Name, t)
		}
	}
	o := p.out
	o.begin('M', p.pid(), t+1)
	o.str("name", "thread_name")
	o.args()
	o.argStr(true, "name", name)
	o.endArgs()
	if err := o.end(); err != nil {
		return err
	}
	o.begin('M', p.pid(), t+1)
	o.str("name", "thread_sort_index")
	o.args()
	o.argNum(true, "sort_index", int64(t))
	o.endArgs()
	return o.end()
}

func (p *proc) locName(loc int64, prefix string) []byte {
	key := loc
	if prefix != "" {
		key = -loc - 1 // a separate cache line for prefixed names
	}
	if b, ok := p.names[key]; ok {
		return b
	}
	b := appendJSONString(nil, prefix+p.ix.tables.LocationName(loc))
	p.names[key] = b
	return b
}

func (p *proc) strName(id int64) []byte {
	if b, ok := p.funcs[id]; ok {
		return b
	}
	b := appendJSONString(nil, p.ix.tables.String(id))
	p.funcs[id] = b
	return b
}

func syncName(k int64) string {
	switch k {
	case ompt.SyncBarrier, ompt.SyncBarrierExplicit:
		return "barrier"
	case ompt.SyncBarrierImplicit:
		return "implicit barrier"
	case ompt.SyncBarrierImplementation:
		return "barrier (runtime)"
	case ompt.SyncTaskwait:
		return "taskwait"
	case ompt.SyncTaskgroup:
		return "taskgroup"
	case ompt.SyncReduction:
		return "reduction"
	case ompt.SyncBarrierImplicitWorkshare:
		return "implicit barrier (worksharing)"
	case ompt.SyncBarrierImplicitParallel:
		return "implicit barrier (parallel)"
	case ompt.SyncBarrierTeams:
		return "teams barrier"
	case trace.SyncThreadJoin:
		return "thread join"
	case trace.SyncCondWait:
		return "condition wait"
	case trace.SyncThreadBarrier:
		return "thread barrier"
	case trace.SyncCondSignal:
		return "condition signal"
	case trace.SyncWorkerIdle:
		return "waiting for work"
	}
	return fmt.Sprintf("sync %d", k)
}

// waitSlice tells the mutex kinds whose mutex_acquire is always followed
// by mutex_acquired: not the test locks (a failed test has none) nor nest
// locks (a nested acquisition by the owner ends in nest_lock, which the
// collector does not record), whose waits are not drawn.
func waitSlice(k int64) bool { return k != 2 && k != 3 && k != 4 }

// mutexName names OMPT mutex kinds (ompt_mutex_t) and ptrace's pthread mutex.
func mutexName(k int64) string {
	switch k {
	case 1, 2:
		return "lock"
	case 3, 4:
		return "nest lock"
	case 5:
		return "critical"
	case 6:
		return "atomic"
	case 7:
		return "ordered"
	case trace.MutexPthread:
		return "pthread mutex"
	}
	return fmt.Sprintf("mutex %d", k)
}

// mutexName is the quoted slice name of waiting for, or holding, a mutex
// of kind k acquired at location loc.
func (p *proc) mutexName(waiting bool, k, loc int64) []byte {
	key := [3]int64{0, k, loc}
	if waiting {
		key[0] = 1
	}
	if b, ok := p.mutexes[key]; ok {
		return b
	}
	name := mutexName(k) + " " + p.ix.tables.LocationName(loc)
	if waiting {
		name = "wait for " + name
	}
	if p.mutexes == nil {
		p.mutexes = map[[3]int64][]byte{}
	}
	b := appendJSONString(nil, name)
	p.mutexes[key] = b
	return b
}

// workName names OMPT work types (ompt_work_t).
func workName(k int64) string {
	switch k {
	case 1:
		return "loop"
	case 2:
		return "sections"
	case 3:
		return "single (executor)"
	case 4:
		return "single (other)"
	case 5:
		return "workshare"
	case 6:
		return "distribute"
	case 7:
		return "taskloop"
	case 8:
		return "scope"
	}
	return fmt.Sprintf("worksharing %d", k)
}

// quoted returns s as a JSON string literal, cached: slice names repeat.
func (p *proc) quoted(s string) []byte {
	if b, ok := p.fixed[s]; ok {
		return b
	}
	b := appendJSONString(nil, s)
	p.fixed[s] = b
	return b
}

// visible decides whether events at time t are written, entering and
// leaving the window as time passes on the thread.
func (p *proc) visible(t int, th *threadState, ts int64) (bool, error) {
	if th.done {
		return false, nil
	}
	if ts > p.win.End {
		th.done = true
		return false, p.closeFrom(t, th, 0, p.win.End)
	}
	if !th.inWin {
		if ts < p.win.Start {
			return false, nil
		}
		th.inWin = true
		// Slices open when the window starts are drawn from its start.
		for i := range th.stack {
			if err := p.writeB(t, th, &th.stack[i], p.win.Start, true); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

func (p *proc) writeB(t int, th *threadState, s *openSlice, ts int64, clipped bool) error {
	o := p.out
	o.begin('B', p.pid(), t+1)
	o.ts("ts", ts-o.origin)
	o.raw("name", s.name)
	o.str("cat", s.cat)
	if s.task != 0 || clipped {
		o.args()
		first := true
		if s.task != 0 {
			o.argHex(true, "task", s.task)
			first = false
		}
		if clipped {
			o.argNum(first, "clipped", 1)
		}
		o.endArgs()
	}
	s.emitted = true
	th.lastEmit = max(th.lastEmit, ts)
	return o.end()
}

func (p *proc) writeE(t int, th *threadState, ts int64) error {
	o := p.out
	o.begin('E', p.pid(), t+1)
	o.ts("ts", ts-o.origin)
	th.lastEmit = max(th.lastEmit, ts)
	return o.end()
}

// open pushes a slice and writes its B event when visible.
func (p *proc) open(t int, th *threadState, vis bool, s openSlice) error {
	th.stack = append(th.stack, s)
	if vis {
		return p.writeB(t, th, &th.stack[len(th.stack)-1], s.start, false)
	}
	return nil
}

// close ends the innermost open slice of kind (and key, when matchKey),
// ending everything opened inside it first so the track stays nested.
func (p *proc) close(t int, th *threadState, kind sliceKind, key int64, matchKey bool, ts int64) error {
	for i := len(th.stack) - 1; i >= 0; i-- {
		s := &th.stack[i]
		if s.kind == kind && (!matchKey || s.key == key) {
			return p.closeFrom(t, th, i, ts)
		}
	}
	p.st.UnmatchedEnds++
	return nil
}

// closeFrom ends stack[i:] at ts, innermost first.
func (p *proc) closeFrom(t int, th *threadState, i int, ts int64) error {
	for j := len(th.stack) - 1; j >= i; j-- {
		if th.stack[j].emitted {
			if err := p.writeE(t, th, max(ts, th.lastEmit)); err != nil {
				return err
			}
		}
	}
	th.stack = th.stack[:i]
	return nil
}

func (p *proc) currentImplicit(th *threadState) int64 {
	if n := len(th.implicit); n > 0 {
		return th.implicit[n-1]
	}
	return 0
}

func (p *proc) event(t int, th *threadState, e *trace.Event) error {
	ts := p.m.Map(t, e.Time)
	th.last = max(th.last, ts)
	vis, err := p.visible(t, th, ts)
	if err != nil {
		return err
	}
	a := &e.Args
	switch e.Kind {
	case trace.ImplicitTaskBegin:
		th.implicit = append(th.implicit, a[1])
		if a[4]&ompt.TaskInitial == 0 {
			name := p.quoted("parallel region")
			if loc, ok := p.ix.parallels.lookup(a[0]); ok {
				name = p.locName(loc, "parallel ")
			}
			return p.open(t, th, vis, openSlice{kind: kImplicit, key: a[1], start: ts, name: name, cat: "openmp"})
		}
	case trace.ImplicitTaskEnd:
		if n := len(th.implicit); n > 0 {
			th.implicit = th.implicit[:n-1]
		}
		if a[4]&ompt.TaskInitial == 0 {
			return p.close(t, th, kImplicit, a[1], true, ts)
		}
	case trace.TaskSchedule:
		return p.schedule(t, th, vis, ts, a[0], a[1], a[2])
	case trace.SyncBegin:
		return p.open(t, th, vis, openSlice{kind: kSync, key: a[0], start: ts, name: p.quoted(syncName(a[0])), cat: "openmp"})
	case trace.SyncEnd:
		return p.close(t, th, kSync, a[0], true, ts)
	case trace.SyncWaitBegin:
		return p.open(t, th, vis, openSlice{kind: kSyncWait, key: a[0], start: ts, name: p.quoted("wait: " + syncName(a[0])), cat: "wait"})
	case trace.SyncWaitEnd:
		return p.close(t, th, kSyncWait, a[0], true, ts)
	case trace.MutexAcquire:
		if !waitSlice(a[0]) {
			return nil
		}
		return p.open(t, th, vis, openSlice{kind: kMutexWait, key: a[1], start: ts, name: p.mutexName(true, a[0], a[2]), cat: "wait"})
	case trace.MutexAcquired:
		if waitSlice(a[0]) {
			if err := p.close(t, th, kMutexWait, a[1], true, ts); err != nil {
				return err
			}
		}
		return p.open(t, th, vis, openSlice{kind: kMutexHold, key: a[1], start: ts, name: p.mutexName(false, a[0], a[2]), cat: "openmp"})
	case trace.MutexReleased:
		return p.close(t, th, kMutexHold, a[1], true, ts)
	case trace.WorkBegin:
		return p.open(t, th, vis, openSlice{kind: kWork, key: a[0], start: ts, name: p.quoted(workName(a[0])), cat: "openmp"})
	case trace.WorkEnd:
		return p.close(t, th, kWork, a[0], true, ts)
	case trace.MPIEnter:
		return p.open(t, th, vis, openSlice{kind: kMPI, key: a[0], start: ts, name: p.strName(a[0]), cat: "mpi"})
	case trace.MPIExit:
		return p.close(t, th, kMPI, 0, false, ts)
	case trace.RegionEnter:
		return p.open(t, th, vis, openSlice{kind: kRegion, key: a[0], start: ts, name: p.strName(a[0]), cat: "region"})
	case trace.RegionExit:
		return p.close(t, th, kRegion, a[0], true, ts)
	case trace.FlushBegin:
		return p.open(t, th, vis, openSlice{kind: kFlush, start: ts, name: p.quoted("trace buffer flush"), cat: "tracing"})
	case trace.FlushEnd:
		return p.close(t, th, kFlush, 0, false, ts)
	case trace.ThreadEnd:
		return p.closeFrom(t, th, 0, ts)
	case trace.MPISend, trace.MPIRecv:
		return p.message(t, th, vis, ts, e)
	case trace.RemoteDepOut, trace.RemoteDepIn:
		peer := int(a[1])
		if !vis || !p.selected[peer] {
			return nil
		}
		if e.Kind == trace.RemoteDepOut {
			id := flowID('r', int64(p.rank), a[0], int64(peer), a[2], 0)
			return p.flow(t, th, 's', ts, id, "remote_dependence", "remote dependence")
		}
		id := flowID('r', int64(peer), a[2], int64(p.rank), a[0], 0)
		return p.flow(t, th, 'f', ts, id, "remote_dependence", "remote dependence")
	case trace.DetachFulfill, trace.Cancel:
		if !vis {
			return nil
		}
		o := p.out
		o.begin('i', p.pid(), t+1)
		o.ts("ts", ts-o.origin)
		o.str("name", e.Kind.String())
		o.str("s", "t")
		o.args()
		o.argHex(true, "task", a[0])
		o.endArgs()
		th.lastEmit = max(th.lastEmit, ts)
		return o.end()
	}
	return nil
}

// schedule turns task_schedule into task parts: the prior explicit task's
// part ends, the next explicit task's part begins. The thread's implicit
// task is what runs between parts and is not a part itself.
func (p *proc) schedule(t int, th *threadState, vis bool, ts, prior, status, next int64) error {
	cur := p.currentImplicit(th)
	if prior != 0 && prior != cur {
		completed := status == ompt.StatusComplete || status == ompt.StatusCancel || status == ompt.StatusDetach
		if completed {
			if succs := p.ix.edges.takeSuccs(prior); vis {
				for _, e := range succs {
					// Inside the ending part, but never before what the
					// track already shows.
					at := max(ts-1, th.lastEmit)
					if err := p.flow(t, th, 's', at, flowID('d', int64(p.rank), prior, e[1], 0, 0), "task_dependence", "dependence"); err != nil {
						return err
					}
				}
			}
		}
		if err := p.close(t, th, kTask, prior, true, ts); err != nil {
			return err
		}
	}
	if next != 0 && next != cur {
		name := p.quoted("task")
		if loc, ok := p.ix.tasks.lookup(next); ok {
			name = p.locName(loc, "")
		} else {
			p.st.UnknownTasks++
		}
		if err := p.open(t, th, vis, openSlice{kind: kTask, key: next, start: ts, name: name, cat: "task", task: next}); err != nil {
			return err
		}
		// Arrows go to the first part only: the edges are taken once.
		if preds := p.ix.edges.takePreds(next); vis {
			for _, e := range preds {
				if err := p.flow(t, th, 'f', ts, flowID('d', int64(p.rank), e[1], next, 0, 0), "task_dependence", "dependence"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *proc) message(t int, th *threadState, vis bool, ts int64, e *trace.Event) error {
	a := &e.Args
	peer := int(a[0])
	comm := int64(-1)
	if cm, ok := p.ix.tables.CommByIndex(a[2]); ok {
		comm = cm.ID
	}
	k := msgKey{comm: comm, src: p.rank, dst: peer, tag: a[1]}
	ph := byte('s')
	if e.Kind == trace.MPIRecv {
		k.src, k.dst = peer, p.rank
		ph = 'f'
	}
	n := p.msgs[k]
	p.msgs[k] = n + 1 // counted whether drawn or not, so pairs stay aligned
	if !vis || peer < 0 || !p.selected[peer] {
		return nil
	}
	return p.flow(t, th, ph, ts, flowID('m', k.comm, int64(k.src), int64(k.dst), k.tag, n), "message", "message")
}

func (p *proc) flow(t int, th *threadState, ph byte, ts int64, id uint64, cat, name string) error {
	ts = max(ts, th.lastEmit)
	th.lastEmit = ts
	if ph == 's' {
		p.st.Flows++
	}
	return flow(p.out, ph, p.pid(), t+1, ts-p.out.origin, id, cat, name)
}
