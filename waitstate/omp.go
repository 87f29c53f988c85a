package waitstate

import (
	"sort"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// OpenMP wait states. The breakdown (sim.Breakdown) splits a thread's time
// into work, MPI, overhead (not working while some task of the process is
// ready, plus a team's fork/join and the runtime code of sync constructs
// outside their waits) and idleness (not working, no task ready). The OMP
// pass splits the time that is neither work nor MPI nor fork/join nor sync
// runtime — the breakdown's overhead + idleness − fork/join − sync runtime
// — along two axes, each a partition of it:
//
//   - where the thread waits: the synchronization construct its current
//     task is suspended in (implicit or explicit barrier, taskwait, end of
//     a taskgroup, another sync region), or none (a worker between regions,
//     a thread whose task was switched out);
//   - why no work: some task was ready (the breakdown's overhead: runtime
//     and scheduling), no task was ready but created tasks waited on their
//     dependences, or no task was ready nor waiting (the breakdown's
//     idleness is the last two).
//
// It integrates the process-wide indicators the way the breakdown does
// (lazily, per thread interval, against running integrals of "some task
// ready" and "none ready, some blocked"), so its cost per event is O(1)
// and its sums equal the breakdown's to the nanosecond.

// Sync is where a non-working thread waits.
type Sync uint8

const (
	SyncImplicitBarrier Sync = iota
	SyncExplicitBarrier
	SyncTaskwait
	SyncTaskgroup
	SyncOther         // another sync region (reduction, one the model cannot see through)
	SyncOutside       // in no synchronization construct
	SyncThreadJoin    // a join of a thread the program started (pthread_join)
	SyncCondWait      // a condition variable's wait (pthread_cond_wait)
	SyncThreadBarrier // a barrier of the program's threads (pthread_barrier_wait)
	SyncWorkerIdle    // a task runtime's worker between its tasks (trace.SyncWorkerIdle)
	NumSyncs
)

var syncNames = [NumSyncs]string{"barrier_implicit", "barrier_explicit", "taskwait", "taskgroup", "other_sync", "outside_sync", "thread_join", "cond_wait", "thread_barrier", "worker_idle"}

func (k Sync) String() string {
	if k < NumSyncs {
		return syncNames[k]
	}
	return "sync?"
}

// Reason says what the process's tasks were doing while a thread waited.
type Reason uint8

const (
	ReasonReady  Reason = iota // some task was ready: runtime and scheduling overhead
	ReasonDeps                 // none ready, created tasks waited on dependences
	ReasonNoTask               // none ready, none waiting
	NumReasons
)

// syncOf maps an OMPT sync region kind to where its waiters wait.
func syncOf(kind int64) Sync {
	switch kind {
	case ompt.SyncBarrier, ompt.SyncBarrierExplicit:
		return SyncExplicitBarrier
	case ompt.SyncBarrierImplicit, ompt.SyncBarrierImplementation, ompt.SyncBarrierImplicitWorkshare,
		ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierTeams:
		return SyncImplicitBarrier
	case ompt.SyncTaskwait:
		return SyncTaskwait
	case ompt.SyncTaskgroup:
		return SyncTaskgroup
	case trace.SyncThreadJoin:
		return SyncThreadJoin
	case trace.SyncCondWait:
		return SyncCondWait
	case trace.SyncThreadBarrier:
		return SyncThreadBarrier
	case trace.SyncWorkerIdle:
		return SyncWorkerIdle
	}
	return SyncOther
}

// OMPRow is one process's waiting at one construct: the sync construct's
// kind and location and the parallel region around it ("" when unknown or
// none). Rank 0 receives O(processes × constructs) of them.
type OMPRow struct {
	Rank      int
	Sync      Sync
	Construct string
	Region    string
	Count     int64             // times a thread entered the construct
	NS        [NumReasons]int64 // waiting by reason
}

type ompKey struct {
	sync        Sync
	loc, region int64
}

// OMPPass is the simulation pass that finds one process's OpenMP wait
// states (a sim.Pass). Rows holds them once the simulation finished.
type OMPPass struct {
	Rows    []OMPRow
	Mutexes []MutexRow
	rank    int

	keys  []ompKey
	count []int64
	ns    [][NumReasons]int64
	index map[ompKey]int32
	// parLoc maps parallel region ids to their locations; kept after the
	// region's end, since a worker may report its implicit barrier after
	// the encountering thread's parallel_end (ids are never reused).
	parLoc regionLocs
	// last is, per thread, the row its latest sync region went to and
	// that row's key: the same construct in the same region, iteration
	// after iteration, finds its row without hashing.
	last []lastRow

	// per thread: rows of its open sync regions (innermost last), the row
	// of its open non-working interval (−1: working or in MPI), its start
	// and the integrals there
	stack   [][]int32
	depWait []int32 // per thread: taskwaits with a depend clause on its stack
	open    []ompOpen

	mutex mutexState
	// rows of the time outside any construct and of waits in a sync region
	// whose begin was not seen
	outside, other int32

	// started: the threads' first intervals begin at the simulation's
	// start (set at the pass's first After or Finish). The integrals of
	// "some task ready" and "none ready, some blocked" are the
	// simulation's (Sim.ReadyTime, Sim.BlockedTime).
	started bool
}

// ompOpen is a thread's open interval: its row (−1: working or in MPI),
// start and the integrals there, in one record (an event reads and writes
// them together).
type ompOpen struct {
	since, rSince, bSince int64
	row                   int32
}

// NewOMPPass returns the pass for process rank with T threads.
func NewOMPPass(rank, T int) *OMPPass {
	p := &OMPPass{rank: rank, index: map[ompKey]int32{}, last: make([]lastRow, T),
		mutex: newMutexState(T),
		stack: make([][]int32, T), depWait: make([]int32, T), open: make([]ompOpen, T)}
	out := p.rowOf(ompKey{SyncOutside, -1, -1})
	p.outside, p.other = out, p.rowOf(ompKey{SyncOther, -1, -1})
	for th := range p.open {
		// Like the breakdown, every thread is accounted from the start:
		// not working until its first event says otherwise.
		p.open[th].row = out
	}
	return p
}

// lastRow is a thread's latest sync region: its row and key, and the
// parallel region id it named.
type lastRow struct {
	ok       bool
	key      ompKey
	parallel int64
	row      int32
}

// regionLocs maps parallel region ids to their constructs' locations for
// as long as a late report may name them: an id stays at least
// keepRegions newer regions (two generations of tables), so that a code
// opening a region per iteration does not grow a table of every region it
// ever opened. The last region put is kept at hand: the workers' sync
// regions name it (Go maps, emptied and grown again every generation,
// were 4 % of halo's simulation). The zero value is empty.
type regionLocs struct {
	cur, old        locTable
	lastID, lastLoc int64
	hasLast         bool
}

const keepRegions = 4096

func (m *regionLocs) put(id, loc int64) {
	if m.cur.n >= keepRegions {
		m.old, m.cur = m.cur, m.old
		m.cur.reset()
	}
	m.cur.put(id, loc)
	m.lastID, m.lastLoc, m.hasLast = id, loc, true
}

func (m *regionLocs) get(id int64) (int64, bool) {
	if m.hasLast && id == m.lastID {
		return m.lastLoc, true // the last put is in cur
	}
	if loc, ok := m.cur.get(id); ok {
		return loc, true
	}
	return m.old.get(id)
}

// locTable is an open-addressing table from int64 ids to int64 values,
// linearly probed, at most half full (it doubles, from 16 slots). A slot
// is used when its stamp is the table's: reset empties it by moving the
// stamp on, without clearing the slots.
type locTable struct {
	slots []locSlot
	stamp uint32
	n     int
}

type locSlot struct {
	id, loc int64
	stamp   uint32
}

// find returns the index of id's slot, or of the free slot where it goes,
// and whether id is there.
func (t *locTable) find(id int64) (int, bool) {
	mask := len(t.slots) - 1
	for i := int(uint64(id)*0x9e3779b97f4a7c15>>32) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.stamp != t.stamp {
			return i, false
		}
		if sl.id == id {
			return i, true
		}
	}
}

func (t *locTable) get(id int64) (int64, bool) {
	if t.n == 0 {
		return 0, false
	}
	if i, ok := t.find(id); ok {
		return t.slots[i].loc, true
	}
	return 0, false
}

func (t *locTable) put(id, loc int64) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	i, ok := t.find(id)
	if !ok {
		t.n++
	}
	t.slots[i] = locSlot{id: id, loc: loc, stamp: t.stamp}
}

func (t *locTable) grow() {
	old, stamp := t.slots, t.stamp
	t.slots, t.stamp = make([]locSlot, max(16, 2*len(old))), 1
	for _, sl := range old {
		if sl.stamp == stamp {
			i, _ := t.find(sl.id)
			t.slots[i] = locSlot{id: sl.id, loc: sl.loc, stamp: t.stamp}
		}
	}
}

func (t *locTable) reset() {
	t.n = 0
	if t.stamp++; t.stamp == 0 {
		clear(t.slots) // the stamp went round: no slot may match it
		t.stamp = 1
	}
}

func (p *OMPPass) rowOf(k ompKey) int32 {
	i, ok := p.index[k]
	if !ok {
		i = int32(len(p.keys))
		p.index[k] = i
		p.keys = append(p.keys, k)
		p.count = append(p.count, 0)
		p.ns = append(p.ns, [NumReasons]int64{})
	}
	return i
}

// Before implements sim.Pass: the integrals it reads are the simulation's,
// which step where their rates change, so there is nothing to do.
func (p *OMPPass) Before(s *sim.Sim, _ *trace.Event, _ int, dt int64) {}

// start begins every thread's first interval where the simulation starts.
func (p *OMPPass) start(s *sim.Sim) {
	p.started = true
	for th := range p.open {
		p.open[th].since = s.Start
	}
}

// Kinds implements sim.Filtered: After has nothing to do after an event
// that changes no thread's category; Before nothing at all.
func (p *OMPPass) Kinds() (before, after sim.KindSet) {
	return 0, sim.AllKinds &^ sim.QuietKinds()
}

// After implements sim.Pass: it follows the threads' sync regions and
// closes a thread's interval when where it waits changes.
func (p *OMPPass) After(s *sim.Sim, e *trace.Event, th int) {
	if !p.started {
		p.start(s)
	}
	if th < 0 || th >= len(p.open) {
		return
	}
	switch e.Kind {
	case trace.ParallelBegin:
		p.parLoc.put(e.Args[0], e.Args[4])
	case trace.SyncBegin:
		if e.Args[0] == trace.SyncCondSignal {
			return // a signal, no wait: no construct of the waits
		}
		key := ompKey{syncOf(e.Args[0]), e.Args[3], -1}
		l := &p.last[th]
		// The region's location is looked up until it is found: an id
		// named before its parallel_begin (equal times) finds it later.
		if l.ok && l.parallel == e.Args[1] && l.key.region >= 0 {
			key.region = l.key.region
		} else if loc, ok := p.parLoc.get(e.Args[1]); ok {
			key.region = loc
		}
		if !l.ok || l.key != key {
			*l = lastRow{ok: true, key: key, row: p.rowOf(key)}
		}
		l.parallel = e.Args[1]
		k := l.row
		p.count[k]++
		p.stack[th] = append(p.stack[th], k)
	case trace.SyncEnd:
		if e.Args[0] == trace.SyncCondSignal {
			return
		}
		if st := p.stack[th]; len(st) > 0 {
			p.stack[th] = st[:len(st)-1]
		}
	case trace.TaskCreate:
		if e.Args[2]&ompt.TaskTaskwait == 0 {
			break
		}
		// A taskwait with a depend clause: OMPT reports it as a task
		// created (its dependences) and completed (status
		// taskwait_complete), no sync region; its creator waits at the
		// construct between the two, as in a taskwait.
		key := ompKey{SyncTaskwait, e.Args[3], -1}
		if l := &p.last[th]; l.ok {
			key.region = l.key.region
		}
		k := p.rowOf(key)
		p.count[k]++
		p.stack[th] = append(p.stack[th], k)
		p.depWait[th]++
	case trace.TaskSchedule:
		if e.Args[1] == ompt.StatusTaskwaitComplete && p.depWait[th] > 0 {
			p.depWait[th]--
			if st := p.stack[th]; len(st) > 0 {
				p.stack[th] = st[:len(st)-1]
			}
		}
	case trace.MutexAcquire, trace.MutexAcquired, trace.MutexReleased:
		p.mutex.event(s, e, th)
		return
	}
	if s.QuietOn(e, th) {
		return
	}
	p.update(s, th)
	for _, o := range s.Touched() {
		if o >= 0 && o < len(p.open) {
			p.update(s, o)
		}
	}
}

func (p *OMPPass) update(s *sim.Sim, th int) {
	if k := p.classify(s, th); k != p.open[th].row {
		p.close(s, th, s.Now)
		p.open[th].row = k
	}
}

// classify returns the row thread th's time goes to now, −1 when it works,
// is in MPI, forks or joins a team or runs a sync construct's runtime
// code (as sim.Breakdown classifies it: its running task).
func (p *OMPPass) classify(s *sim.Sim, th int) int32 {
	thr := &s.Threads[th]
	if thr.MPI > 0 {
		return -1
	}
	top := thr.Current()
	if top == sim.NoTask {
		return p.outside
	}
	tk := &s.Tasks[top]
	switch {
	case tk.State == sim.Running:
		return -1
	case tk.Wait == sim.WaitParallel:
		if tk.State == sim.Suspended {
			return -1
		}
	case tk.Wait != sim.WaitNone && tk.Wait != sim.WaitChild:
		if st := p.stack[th]; len(st) > 0 {
			return st[len(st)-1]
		}
		return p.other
	}
	return p.outside
}

// close accounts thread th's open interval up to now, cut to the window.
func (p *OMPPass) close(s *sim.Sim, th int, now int64) {
	o := &p.open[th]
	if k := o.row; k >= 0 {
		from, to := max(o.since, s.Begin), min(now, s.End)
		if to > from {
			ready, deps := s.ReadyTime(now).Over(s, o.since, o.rSince, now), s.BlockedTime(now).Over(s, o.since, o.bSince, now)
			ns := &p.ns[k]
			ns[ReasonReady] += ready
			ns[ReasonDeps] += deps
			ns[ReasonNoTask] += to - from - ready - deps
		}
	}
	o.since, o.rSince, o.bSince = now, s.ReadyTime(now).Value(), s.BlockedTime(now).Value()
}

// unknownLoc is the name of a location the trace knows nothing of.
const unknownLoc = "<unknown>"

// Finish implements sim.Pass: it closes every thread with events (the
// breakdown reports those) and names the rows.
func (p *OMPPass) Finish(s *sim.Sim) {
	if !p.started {
		p.start(s)
	}
	for th := range p.open {
		if s.HasEvents(th) {
			p.close(s, th, s.Now)
		}
	}
	name := func(loc int64) string {
		if loc < 0 {
			return ""
		}
		if n := s.Proc.LocationName(loc); n != unknownLoc {
			return n
		}
		return ""
	}
	p.Rows = p.Rows[:0]
	for i, k := range p.keys {
		if p.count[i] == 0 && p.ns[i] == [NumReasons]int64{} {
			continue
		}
		construct, region := name(k.loc), name(k.region)
		if construct == "" && k.sync == SyncImplicitBarrier {
			// A worker's implicit barrier has no code address (libomp):
			// it is the region's, as the master's is.
			construct = region
		}
		p.Rows = append(p.Rows, OMPRow{Rank: p.rank, Sync: k.sync, Construct: construct, Region: region, Count: p.count[i], NS: p.ns[i]})
	}
	p.keys, p.count, p.ns, p.index, p.parLoc = nil, nil, nil, nil, regionLocs{}
	p.mutex.finish(s)
	p.Mutexes = p.mutex.rows(p.rank, name)
}

// OpenMPReport sums the gathered rows into the report's OpenMP part:
// totals, constructs (most waiting first) and processes (in rank order).
// It returns nil when no thread waited, entered a sync construct or
// acquired a mutex.
func OpenMPReport(rows []OMPRow, mutexes []MutexRow) *report.OMPWaits {
	if len(rows) == 0 && len(mutexes) == 0 {
		return nil
	}
	o := &report.OMPWaits{Constructs: []report.OMPWaitConstruct{}, PerProcess: []report.OMPWaitProcess{}}
	type key struct {
		sync              Sync
		construct, region string
	}
	cons := map[key]int{}
	procs := map[int]int{}
	proc := func(rank int) int {
		return entry(procs, &o.PerProcess, rank, func() report.OMPWaitProcess { return report.OMPWaitProcess{Rank: rank} })
	}
	for i := range rows {
		r := &rows[i]
		addOMP(&o.OMPWaitTimes, r)
		c := entry(cons, &o.Constructs, key{r.Sync, r.Construct, r.Region}, func() report.OMPWaitConstruct {
			return report.OMPWaitConstruct{Kind: r.Sync.String(), Construct: r.Construct, Region: r.Region}
		})
		oc := &o.Constructs[c]
		oc.Count += r.Count
		oc.TaskReadyNS += r.NS[ReasonReady]
		oc.DependencesNS += r.NS[ReasonDeps]
		oc.NoTaskNS += r.NS[ReasonNoTask]
		oc.WaitingNS += r.NS[ReasonReady] + r.NS[ReasonDeps] + r.NS[ReasonNoTask]
		addOMP(&o.PerProcess[proc(r.Rank)].OMPWaitTimes, r)
	}
	sort.SliceStable(o.Constructs, func(i, j int) bool {
		a, b := &o.Constructs[i], &o.Constructs[j]
		if a.WaitingNS != b.WaitingNS {
			return a.WaitingNS > b.WaitingNS
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Construct != b.Construct {
			return a.Construct < b.Construct
		}
		return a.Region < b.Region
	})
	type mkey struct{ kind, construct string }
	mi := map[mkey]int{}
	for _, m := range mutexes {
		j := entry(mi, &o.Mutexes, mkey{m.Kind, m.Construct}, func() report.OMPMutex { return report.OMPMutex{Kind: m.Kind, Construct: m.Construct} })
		x := &o.Mutexes[j]
		x.Acquisitions += m.Acquisitions
		x.WaitNS += m.WaitNS
		x.MaxWaitNS = max(x.MaxWaitNS, m.MaxWaitNS)
		x.HoldNS += m.HoldNS
		x.ContentionNS += m.ContentionNS
		o.MutexWaitNS += m.WaitNS
		o.PerProcess[proc(m.Rank)].MutexWaitNS += m.WaitNS
	}
	sort.SliceStable(o.Mutexes, func(i, j int) bool {
		a, b := &o.Mutexes[i], &o.Mutexes[j]
		if a.WaitNS != b.WaitNS {
			return a.WaitNS > b.WaitNS
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Construct < b.Construct
	})
	sort.SliceStable(o.PerProcess, func(i, j int) bool { return o.PerProcess[i].Rank < o.PerProcess[j].Rank })
	return o
}

func addOMP(t *report.OMPWaitTimes, r *OMPRow) {
	w := r.NS[ReasonReady] + r.NS[ReasonDeps] + r.NS[ReasonNoTask]
	t.WaitingNS += w
	switch r.Sync {
	case SyncImplicitBarrier:
		t.BarrierImplicitNS += w
	case SyncExplicitBarrier:
		t.BarrierExplicitNS += w
	case SyncTaskwait:
		t.TaskwaitNS += w
	case SyncTaskgroup:
		t.TaskgroupNS += w
	case SyncOther:
		t.OtherSyncNS += w
	case SyncThreadJoin, SyncCondWait, SyncThreadBarrier, SyncWorkerIdle:
		t.ThreadSyncNS += w
	default:
		t.OutsideSyncNS += w
	}
	t.TaskReadyNS += r.NS[ReasonReady]
	t.DependencesNS += r.NS[ReasonDeps]
	t.NoTaskNS += r.NS[ReasonNoTask]
}
