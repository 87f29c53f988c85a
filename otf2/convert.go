package otf2

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// Producer is the header's producer of converted processes. Analyses that
// need task dependences (which OTF2 cannot carry) key off it.
const Producer = "ptrace otf2"

// Stats counts what a conversion read, skipped and warned about.
type Stats struct {
	Records   int64 // OTF2 event records read
	Emitted   int64 // ptrace events written
	AttrLists int64 // attribute lists skipped
	Unknown   int64 // records of unknown types skipped
	// Ignored counts known records without a ptrace counterpart, by OTF2
	// record type (EventName names them).
	Ignored [256]int64
	Tasks   int64 // explicit tasks created
	// Regions counts Enter/Leave records kept as region_enter/exit (user
	// and compiler-instrumented code).
	Regions int64
	// BadCompletes counts task completions of tasks not running there
	// (ignored; the first is described in Warnings).
	BadCompletes int64
	// Unmodelled counts threads that are neither the process's initial
	// thread nor OpenMP threads nor threads the program started (runtime
	// helpers): converted as threads of type unknown, which the breakdown
	// and POP leave out.
	Unmodelled int
	// Workers counts the threads of a task runtime (conv.taskWorker):
	// converted as threads of type user from their first record to their
	// last, idle between their tasks (trace.SyncWorkerIdle).
	Workers int
	// Renamed counts a task-runtime worker's Leaves of a region other than
	// the innermost open one, which they end (APEX: a task renamed while it
	// ran; nesting.go).
	Renamed int64
	// UserThreads counts the threads the program started itself
	// (pthreads: a location with ThreadBegin records), converted as
	// threads of type user; a location Score-P reused for several
	// threads counts each.
	UserThreads int
	// ProbedRecvs counts MPI_Mrecv and MPI_Imrecv calls (receives of a
	// matched probe's message), ProbedRecorded the receive records
	// (MpiRecv, MpiIrecvRequest) inside them: Score-P 8.4 writes none, so
	// those messages are sends without a receive.
	ProbedRecvs, ProbedRecorded int64
	// NeighborCalls counts neighbourhood collective calls (MPI_Neighbor_*,
	// MPI_Ineighbor_*: regions by name). Score-P 8.4 records them as
	// Enter/Leave alone, without their communicator or any message or
	// collective record, and Score-P records no graph topology: who they
	// synchronise cannot be rebuilt, so they stay MPI time.
	NeighborCalls int64
	// Salvaged counts the event files cut at a damaged part, or missing,
	// under Options.Salvage (each a warning).
	Salvaged int
	// Gaps are the times the process recorded nothing (recording switched
	// off: gaps.go), disjoint, in time order; CutRecords counts the
	// communication records dropped because they fall inside a gap of the
	// cut given to ConvertCut; KeptRecords those inside a gap of the cut
	// kept because they precede the process's own switching off there
	// (gaps.go, beforeOwnOff).
	Gaps        []Gap
	CutRecords  int64
	KeptRecords int64
	// Uncollected counts, by MPI collective, the calls holding no
	// collective record (MpiCollectiveBegin/End): TAU writes none.
	Uncollected map[string]int64
	// Warnings are problems the conversion tolerated (the first few of
	// each kind, with the count); Notes say what was left out.
	Warnings []string
	Notes    []string
}

// WriteProcess converts process i (location group, a ptrace rank) into
// ptrace's format on w. It reads only that process's local definition and
// event files.
func (a *Archive) WriteProcess(i int, w io.Writer) error {
	_, err := a.Convert(i, w)
	return err
}

// collective operation numbers: OTF2_CollectiveOp → ptrace's op. OTF2's
// handle operations (17 to 22: communicator and window creation and
// destruction, which Score-P records as collectives on the parent
// communicator) have no ptrace number: 0, a synchronizing call without a
// wait-state pattern.
var collOps = [...]int64{
	0: 1, 1: 2, 2: 5, 3: 6, 4: 7, 5: 8, 6: 9, 7: 10, 8: 11, 9: 12, 10: 17,
	11: 4, 12: 3, 13: 13, 14: 14, 15: 15, 16: 16,
}

// opOf translates OTF2_CollectiveOp x by table (collOps, rmaCollOps):
// 0, an operation that orders nothing, for one the table lacks.
func opOf(table []int64, x uint64) int64 {
	if x < uint64(len(table)) {
		return table[x]
	}
	return 0
}

// rmaCollOps maps the OTF2_CollectiveOp of an RmaCollectiveEnd (Score-P:
// a window's synchronisation collective over its group) to ptrace's
// window operations: BARRIER is MPI_Win_fence, CREATE_HANDLE (17,
// MPI_Win_create, _create_dynamic) and CREATE_HANDLE_AND_ALLOCATE (21,
// MPI_Win_allocate, _allocate_shared) a window's creation,
// DESTROY_HANDLE (18) and DESTROY_HANDLE_AND_DEALLOCATE (22) MPI_Win_free.
// Other operations are 0: matched on the window, no pattern.
var rmaCollOps = [...]int64{
	0:  int64(trace.CollWinFence),
	17: int64(trace.CollWinCreate), 18: int64(trace.CollWinFree),
	21: int64(trace.CollWinCreate), 22: int64(trace.CollWinFree),
}

// nbcDone is what a NonBlockingCollectiveComplete record says of its
// request: operation, OTF2 communicator, root, bytes sent and received.
type nbcDone struct {
	done           bool
	op             uint64
	comm           uint32
	root           uint64
	sent, received uint64
	// A request completed on another location of the process (a thread
	// waiting for another's request): at is its start's time, req the
	// ptrace request id both locations' records carry (0: completed on
	// its own location, whose conversion numbers it).
	at, req int64
}

// nbcStart is a NonBlockingCollectiveRequest left open at the end of its
// location (pass 1): the k-th of location t, OTF2 request id id.
type nbcStart struct {
	t, k int
	id   uint64
}

// p2pRec names the k-th record of type typ (MpiIrecvRequest, MpiIrecv,
// MpiIsend, MpiIsendComplete) on location t.
type p2pRec struct {
	typ  uint8
	t, k int
}

// p2pPair is a point-to-point request started on one location and
// completed on another: the ptrace request id both records carry, the
// OTF2 communicator (the MpiIrecv's, the MpiIsend's) and the start's time.
type p2pPair struct {
	req  int64
	comm uint32
	at   int64
}

// p2pEnd is a request record of pass 1 not paired on its location: a
// start (MpiIrecvRequest, MpiIsend) never completed there or a completion
// (MpiIrecv, MpiIsendComplete) of no request started there before.
type p2pEnd struct {
	rec  p2pRec
	id   uint64
	comm uint32
	at   int64
}

// nbcOpen is a nonblocking collective started on a thread and not yet
// completed: its ptrace request and what its coll_complete repeats.
type nbcOpen struct{ req, op, ci, root int64 }

// taskKey is an OTF2 task's identity: (thread team, creating thread,
// generation number), within the team's instance (inst, the count of the
// team's ThreadTeamBegin records on the thread so far, 0 before any):
// Score-P's OMPT adapter numbers a thread's tasks anew in each instance of
// a team definition, so the triple alone names several tasks of a program
// whose parallel regions all use one team (NPB BT-MZ's OpenMP-task port).
// A task lives in its instance (the region's end completes it), and every
// member counts the instances alike.
type taskKey struct{ team, inst, creator, gen uint32 }

// counted is a kind of tolerated problem: counted, the first described.
type counted struct {
	n     int64
	first string
}

func (k *counted) add(format string, args ...any) {
	if k.n == 0 {
		k.first = fmt.Sprintf(format, args...)
	}
	k.n++
}

func (k *counted) flush(st *Stats, what string) {
	if k.n == 1 {
		st.Warnings = append(st.Warnings, k.first)
	} else if k.n > 1 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%s (%d %s in all)", k.first, k.n, what))
	}
}

// conv holds one process's conversion state.
type conv struct {
	a *Archive
	p *process
	w *trace.Writer
	// lastAt is, per ptrace thread, the time of the last event written:
	// an event at a time an earlier record kept (a lock call's Enter for
	// its mutex_acquire, …) must not go before events a later record's
	// time put after it (emitBack counts those taken as lastAt).
	lastAt   []int64
	emitBack counted
	clk      clock
	st       Stats
	local    []*LocalDefs
	tb       []timeline // per thread: the archive's clock correction
	seq      []int64    // per-thread id counters (tasks and parallel regions)
	rseq     []int64    // per-thread request counters
	forks    [][]fork   // per thread: its forks in order
	tasks    taskIDs
	// legacyTasks maps OTF2 1.x task ids (OmpTaskCreate) to ptrace ids.
	legacyTasks map[uint64]int64
	// taskRegion is the TASK region a task runs in (its construct when no
	// task-creation region names it, as in OTF2 1.x).
	taskRegion  taskRegions
	teams       map[uint32][]int64 // team comm → parallel id per instance
	first, last []int64
	seen        []bool
	omp         []bool // the thread joined an OpenMP team
	// lives are, per location that records ThreadBegin (a thread the
	// program started: user[t]), the threads it holds: Score-P reuses a
	// location for a later thread with SCOREP_THREAD_EXPERIMENTAL_REUSE.
	// Each spans its records from its ThreadBegin (the first from the
	// location's first record) to the last before the next ThreadBegin.
	// The first is ptrace thread t, the k-th (k ≥ 1) thread more[t]+k−1.
	user  []bool
	lives [][]span
	more  []int
	// worker marks the locations that enter a TASK-role region of no
	// paradigm ptrace models (APEX's HPX tasks): a task runtime's workers
	// (taskWorker).
	worker []bool
	// idleLoc is the location of a worker's waits for work (−1: not made)
	idleLoc int64
	// threads identifies the threads by their OTF2 key (thread contingent,
	// sequence count): which one a ThreadBegin began, which one a
	// ThreadCreate created (a key seen twice names no thread).
	threads map[threadKey]*keyed
	// lifeKey is, per location and thread on it, the key of its
	// ThreadBegin (none: zero key, unset).
	lifeKey [][]threadKey
	// joins are, per location and in order, the threads its thread-wait
	// regions waited for (the ThreadWait inside; the zero key when none);
	// joinNext counts the ones converted.
	joins    [][]threadKey
	joinNext []int
	// postComm holds, per thread and in order of its MpiIrecvRequest
	// records, the OTF2 communicator of the MpiIrecv that completed the
	// request (OTF2 records it only there); undefined32 when none did.
	postComm [][]uint32
	postAt   [][]int64 // pass 1: the MpiIrecvRequest records' times
	// nbc holds, per thread and in order of its NonBlockingCollective-
	// Request records, the NonBlockingCollectiveComplete that completed
	// the request on the thread (OTF2 gives the operation, communicator,
	// root and sizes only there); done false when none did.
	nbc [][]nbcDone
	// nbcOther holds, by OTF2 request id (Score-P's ids are the
	// process's), the NonBlockingCollectiveComplete records of no request
	// started before on their location (pass 1), in location order; the
	// requests found there for another location's start are what the
	// completing location converts (pass 2, FIFO per id).
	nbcOther map[uint64][]nbcDone
	// xp2p holds the point-to-point requests started on one location and
	// completed on another of the process (pairP2P): by record, the k-th
	// MpiIrecvRequest, MpiIrecv, MpiIsend or MpiIsendComplete of its
	// location.
	xp2p   map[p2pRec]p2pPair
	legacy bool // OTF2 1.x OpenMP records (OmpFork without teams)

	commIndex map[uint32]int // OTF2 MPI comm → ptrace comm index
	commRanks map[uint32][]int
	winIndex  map[uint32]int    // OTF2 RMA window → ptrace comm index (its own entry)
	winComm   map[uint32]uint32 // OTF2 RMA window → the OTF2 communicator it was made on
	locs      map[uint32]int64  // region → ptrace location id
	noLoc     int64             // an empty location (−1 until defined)
	rinfo     []regInfo         // per dense region id
	rsparse   map[uint32]*regInfo

	// ompEnters counts the Enter records of OpenMP regions (TAU's
	// OpenMP timers come without OTF2's OpenMP records)
	ompEnters int64

	undefRegion, undefComm, orphan counted
	undefContext, ctxLoop          counted

	// general active target synchronisation (pscw.go): per location,
	// nil until its first RmaGroupSync in one of the calls; the records
	// skipped (a second in a call; a window or group not translated)
	pscw             []*pscwLoc
	pscwDup, pscwBad counted
	// passive target synchronisation (rmalock.go): lock records
	// skipped, epochs never released
	lockBad, lockOpen counted

	// recording gaps (gaps.go): per location, where recording was
	// switched off (−1: on); the cut's gaps and the communicators per
	// stretch
	offAt      []int64
	cut        []Gap
	ownOffs    []int64              // the process's own recording gaps' starts (merged), in time order: cutComm keeps what precedes them
	commList   []trace.Communicator // the process's communicators, by index
	commCopies map[[2]int64]int64   // (stretch, index) → its copy's index
	// per location: its Off times, its code regions open and their
	// Enters counted (pass 1), the Enters (by count) of the regions never
	// left after recording was switched off
	offs        [][]int64
	codeOpen    [][]openCode
	codeSeq     []int
	unleft      []map[int]bool
	unleftCount counted
	// per location: its forks not joined yet (pass 1); the parallel
	// regions never joined after recording was switched off, by id
	forkOpen   [][]openCode
	unjoined   map[int64]bool
	unjoinedCt counted
	unnested   counted // Leaves of code regions out of nesting (nesting.go)
}

// span is the time of one thread's records.
type span struct{ first, last int64 }

// threadKey is how OTF2's ThreadCreate, ThreadBegin, ThreadWait and
// ThreadEnd name a thread: its thread contingent (a communicator, global
// id) and sequence count. set tells a key from none.
type threadKey struct {
	contingent uint32
	seq        uint64
	set        bool
}

// keyed is what the records of a thread key say: the thread that began
// with it (location t, its k-th thread) and the one that created it, and
// how many did (more than one: the key is ambiguous).
type keyed struct {
	began, created   lifeRef
	nbegan, ncreated int
}

// lifeRef is the k-th thread on location t.
type lifeRef struct{ t, k int }

// eventThreadKey is the thread key of a ThreadCreate/Begin/Wait/End record.
func eventThreadKey(e *Event, ld *LocalDefs) threadKey {
	return threadKey{contingent: uint32(ld.Map(mapComm, e.A[0])), seq: e.A[1], set: true}
}

// key returns the record of thread key k, creating it.
func (c *conv) key(k threadKey) *keyed {
	if c.threads == nil {
		c.threads = map[threadKey]*keyed{}
	}
	r := c.threads[k]
	if r == nil {
		r = &keyed{}
		c.threads[k] = r
	}
	return r
}

// threadIndex is the ptrace index of the k-th thread on location t.
func (c *conv) threadIndex(l lifeRef) int {
	if l.k == 0 || c.threadType(l.t) != trace.ThreadUser || l.k >= len(c.lives[l.t]) {
		return l.t
	}
	return c.more[l.t] + l.k - 1
}

// began returns the index + 1 of the thread that began with key k, 0
// when none or several did (trace.SyncThreadJoin's task argument).
func (c *conv) began(k threadKey) int64 {
	if r := c.threads[k]; k.set && r != nil && r.nbegan == 1 {
		return int64(c.threadIndex(r.began)) + 1
	}
	return 0
}

// creator returns the index + 1 of the thread that created the k-th
// thread on location t (trace.Thread.Creator), 0 when unknown.
func (c *conv) creator(t, k int) int {
	if k >= len(c.lifeKey[t]) {
		return 0
	}
	key := c.lifeKey[t][k]
	if r := c.threads[key]; key.set && r != nil && r.ncreated == 1 && r.nbegan == 1 {
		return c.threadIndex(r.created) + 1
	}
	return 0
}

// fork is one parallel region a thread forked: its id and the region that
// names it (the first PARALLEL-role region its team's master enters).
type fork struct {
	par     int64
	region  uint32
	regions bool // region is set
}

// Convert is WriteProcess returning what it counted.
func (a *Archive) Convert(i int, out io.Writer) (*Stats, error) { return a.ConvertCut(i, out, nil) }

// ConvertCut is Convert with the union of every process's recording gaps
// (MergeGaps of their Stats.Gaps): communication records inside them are
// dropped, and the rest can pair only within their stretch (gaps.go).
func (a *Archive) ConvertCut(i int, out io.Writer, cut []Gap) (*Stats, error) {
	if i < 0 || i >= len(a.procs) {
		return nil, fmt.Errorf("otf2: process %d out of range 0..%d", i, len(a.procs)-1)
	}
	p := &a.procs[i]
	grp := a.group(p)
	n := len(p.locations)
	if n > trace.MaxThreads {
		return nil, fmt.Errorf("%s: process %q has %d locations, more than %d", a.Path, grp.Name, n, trace.MaxThreads)
	}
	c := &conv{a: a, p: p, clk: clock{res: a.Defs.TimerResolution, offset: a.Defs.GlobalOffset},
		local: make([]*LocalDefs, n), tb: make([]timeline, n), seq: make([]int64, n), rseq: make([]int64, n),
		forks: make([][]fork, n), tasks: newTaskIDs(), legacyTasks: map[uint64]int64{}, teams: map[uint32][]int64{},
		first: make([]int64, n), last: make([]int64, n), seen: make([]bool, n), omp: make([]bool, n), postComm: make([][]uint32, n), postAt: make([][]int64, n), nbc: make([][]nbcDone, n),
		user: make([]bool, n), lives: make([][]span, n), more: make([]int, n), worker: make([]bool, n), idleLoc: -1,
		lifeKey: make([][]threadKey, n), joins: make([][]threadKey, n), joinNext: make([]int, n),
		locs: map[uint32]int64{}, noLoc: -1, rinfo: make([]regInfo, len(a.Defs.regions.dense)), rsparse: map[uint32]*regInfo{},
		offAt: make([]int64, n), cut: cut, offs: make([][]int64, n), codeOpen: make([][]openCode, n), codeSeq: make([]int, n), forkOpen: make([][]openCode, n),
		unleft: make([]map[int]bool, n)}
	for t := range c.offAt {
		c.offAt[t] = -1
	}
	for t, l := range p.locations {
		ld, err := readLocalDefs(a.defPath(l.ID), a.Anchor.ChunkDefs)
		if errors.Is(err, os.ErrNotExist) {
			c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: missing local definition file: ids taken as global, no clock offsets", a.defPath(l.ID)))
			ld = &LocalDefs{}
		} else if err != nil {
			return nil, err
		}
		c.local[t] = ld
		c.tb[t] = newTimeline(c.clk, ld.Offsets, a.defPath(l.ID), &c.st)
	}
	if err := c.pass1(); err != nil {
		return nil, err
	}
	// the process's own gaps, its locations' merged: what Stats says and
	// the gap warning and the cut's own switch offs read
	c.st.Gaps = MergeGaps(c.st.Gaps)
	if len(cut) > 0 {
		for _, g := range c.st.Gaps {
			c.ownOffs = append(c.ownOffs, g.Off)
		}
	}
	nthreads := n
	for t := range p.locations {
		switch c.threadType(t) {
		case trace.ThreadUnknown:
			if c.seen[t] {
				c.st.Unmodelled++
			}
		case trace.ThreadUser:
			if c.taskWorker(t) {
				c.st.Workers++
			} else {
				c.st.UserThreads += len(c.lives[t])
			}
			c.more[t] = nthreads
			nthreads += len(c.lives[t]) - 1
		}
	}
	if nthreads > trace.MaxThreads {
		return nil, fmt.Errorf("%s: process %q has %d threads (%d locations, some reused by several threads), more than %d", a.Path, grp.Name, nthreads, n, trace.MaxThreads)
	}
	host, ok := a.Defs.NodeName(grp.Parent)
	if !ok || host == "" {
		host = grp.Name
	}
	h := trace.Header{Rank: int(p.rank), NRanks: len(a.procs), Host: host, ClockSrc: fmt.Sprintf("OTF2 timer, %d Hz", a.Defs.TimerResolution),
		Producer: Producer, Command: []string{a.Anchor.Creator}}
	w, err := trace.NewWriter(out, h)
	if err != nil {
		return nil, err
	}
	c.w = w
	c.lastAt = make([]int64, nthreads)
	for t, l := range p.locations {
		name := a.Defs.LocationName(&l)
		th := trace.Thread{Index: t, TID: int64(l.ID), Type: c.threadType(t), Name: name}
		if th.Type != trace.ThreadUser {
			w.SetThread(th)
			continue
		}
		for k := range c.lives[t] {
			th.Creator = c.creator(t, k)
			if k > 0 {
				th.Index, th.Name = c.more[t]+k-1, fmt.Sprintf("%s (thread %d of the location)", name, k+1)
			}
			w.SetThread(th)
		}
	}
	c.comms()
	c.offsets()
	for t := range p.locations {
		if err := c.pass2(t); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	c.st.Emitted = w.Events()
	c.undefRegion.flush(&c.st, "records of undefined regions skipped")
	c.undefComm.flush(&c.st, "records on undefined communicators skipped")
	c.pscwDup.flush(&c.st, "RmaGroupSync records skipped")
	c.pscwBad.flush(&c.st, "RmaGroupSync records skipped")
	c.lockBad.flush(&c.st, "RMA lock records skipped")
	c.lockOpen.flush(&c.st, "lock epochs never released")
	c.undefContext.flush(&c.st, "records of undefined calling contexts skipped")
	c.ctxLoop.flush(&c.st, "records of calling contexts with an endless parent chain")
	c.orphan.flush(&c.st, "records without their begin or fork")
	c.unleftCount.flush(&c.st, "regions never left after recording was switched off")
	c.unjoinedCt.flush(&c.st, "parallel regions never joined after recording was switched off")
	c.unnested.flush(&c.st, "Leaves of code regions out of nesting")
	c.emitBack.flush(&c.st, "events")
	for t := range c.tb {
		c.tb[t].flush(&c.st)
	}
	c.gapWarning(grp.Name)
	if c.st.Tasks > 0 {
		c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: %d explicit tasks, but OTF2 records no task dependences: "+
			"tasks count as ready at creation, so task-graph values (critical path and span through tasks, "+
			"parallelism, idleness from readiness) are those of independent tasks", grp.Name, c.st.Tasks))
	}
	c.uncollectedWarning(grp.Name)
	c.ompTimersWarning(grp.Name)
	if c.st.Unmodelled > 0 {
		c.st.Notes = append(c.st.Notes, fmt.Sprintf("%s: %d threads are no OpenMP threads and record no ThreadBegin (runtime helpers...): their MPI calls and regions are kept, their time is left out of the breakdown and POP",
			grp.Name, c.st.Unmodelled))
	}
	return &c.st, nil
}

// timeline converts one location's timestamps: the archive's own clock
// correction (its ClockOffset definitions, applied as OTF2's reader and
// Scalasca apply them), then ticks to ns since the global offset. Times that
// would go back or fall before the global offset are counted and clamped,
// so the converted stream is valid whatever the archive says.
type timeline struct {
	clk  clock
	ivs  []interval
	cur  int
	prev int64
	back counted
	neg  counted
	ovf  counted
}

// interval is a stretch between two ClockOffset definitions: the offset at
// begin and its slope (OTF2's otf2_clock_interval).
type interval struct {
	begin, end uint64
	offset     int64
	slope      float64
}

func newTimeline(clk clock, offs []ClockOffset, file string, st *Stats) timeline {
	tl := timeline{clk: clk}
	for k := 1; k < len(offs); k++ {
		a, b := offs[k-1], offs[k]
		if b.Time <= a.Time {
			// OTF2's reader refuses this ("multiple timer synchronization
			// at the same time"); the offsets before it stand.
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s: ClockOffset %d at time %d does not follow the previous one (%d); it and later ones are ignored", file, k, b.Time, a.Time))
			break
		}
		tl.ivs = append(tl.ivs, interval{begin: a.Time, end: b.Time, offset: a.Offset,
			slope: float64(b.Offset-a.Offset) / float64(b.Time-a.Time)})
	}
	return tl
}

// correct applies the clock correction to raw ticks t: timestamps from one
// interval's start to its end use it, earlier ones the first, later ones the
// last (OTF2's otf2_evt_reader_apply_clock_correction). ok is false when the
// corrected time leaves the 64-bit range.
func (tl *timeline) correct(t uint64) (uint64, bool) {
	if len(tl.ivs) == 0 {
		return t, true
	}
	for tl.cur+1 < len(tl.ivs) && t > tl.ivs[tl.cur].end {
		tl.cur++
	}
	for tl.cur > 0 && t < tl.ivs[tl.cur].begin {
		tl.cur-- // a pass restarts from the beginning
	}
	iv := &tl.ivs[tl.cur]
	var diff float64
	if t >= iv.begin {
		diff = float64(t - iv.begin)
	} else {
		diff = -float64(iv.begin - t)
	}
	adj := iv.slope * diff
	if math.IsNaN(adj) || math.Abs(adj) > 1<<62 {
		return t, false
	}
	off := iv.offset + int64(math.RoundToEven(adj))
	if off < 0 && uint64(-off) > t || off > 0 && t+uint64(off) < t {
		return t, false
	}
	return t + uint64(off), true
}

// ns returns the converted time of a record at raw ticks t (file offset at,
// for the warnings).
func (tl *timeline) ns(t uint64, file string, at int64) int64 {
	ct, ok := tl.correct(t)
	if !ok {
		tl.ovf.add("%s: offset %d: timestamp %d leaves the 64-bit range after the clock correction; uncorrected", file, at, t)
	}
	v := tl.clk.ns(ct)
	if v < 0 {
		tl.neg.add("%s: offset %d: timestamp %d precedes the archive's global offset %d; taken as the offset", file, at, ct, tl.clk.offset)
		v = 0
	}
	if v < tl.prev {
		tl.back.add("%s: offset %d: time goes back by %d ns; taken as the previous record's", file, at, tl.prev-v)
		v = tl.prev
	}
	tl.prev = v
	return v
}

// attrNS returns the converted time of raw ticks t that a record at
// converted time now carries as an attribute (a buffer flush's stop time),
// not before now.
func (tl *timeline) attrNS(t uint64, now int64) int64 {
	// correct walks its cursor from the records' interval to t's and the
	// next record's walks it back: found by bisection instead, the cursor
	// left where it was (a walk each way per flush record took O(n²))
	cur := tl.cur
	tl.cur = min(sort.Search(len(tl.ivs), func(k int) bool { return t <= tl.ivs[k].end }), max(len(tl.ivs)-1, 0))
	ct, ok := tl.correct(t)
	tl.cur = cur
	if !ok {
		return now
	}
	return max(tl.clk.ns(ct), now)
}

// restart makes the next pass over the location start from its beginning.
func (tl *timeline) restart() {
	tl.prev, tl.cur = 0, 0
	tl.back, tl.neg, tl.ovf = counted{}, counted{}, counted{}
}

func (tl *timeline) flush(st *Stats) {
	tl.ovf.flush(st, "timestamps")
	tl.neg.flush(st, "timestamps")
	tl.back.flush(st, "timestamps")
}

// read walks location t's event file; count adds what it read to the
// statistics (the first of the two passes does).
func (c *conv) read(t int, count bool, fn func(e *Event, now int64) error) error {
	l := c.p.locations[t]
	r, err := c.a.OpenEvents(l.ID)
	if err != nil {
		if c.a.salvage && errors.Is(err, os.ErrNotExist) {
			if count {
				c.st.Salvaged++
				c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%v: the location has no events (--salvage)", err))
			}
			return nil
		}
		return err
	}
	defer r.Close()
	tl := &c.tb[t]
	tl.restart()
	var e Event
	cs := ctxStack{c: c, ld: c.local[t], count: count, fn: fn}
	cut := false // salvaged: the file's count cannot agree
	for {
		ok, err := r.Next(&e)
		if err != nil && c.a.salvage {
			cut = true
			// Both passes stop here: the location ends with the record
			// before the damage.
			if count {
				c.st.Salvaged++
				c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%v: the location's %d records before it are kept, the rest of its file is dropped (--salvage)", err, r.Events))
			}
			break
		}
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		now := tl.ns(e.Time, r.name, e.Offset)
		cs.last, cs.lastEv = now, e
		if e.Type == EvCallingContextEnter || e.Type == EvCallingContextLeave {
			err = cs.event(&e, now, r.name)
		} else {
			err = fn(&e, now)
		}
		if err != nil {
			return wrapErr(err, r.name, e.Offset)
		}
	}
	// Regions entered through calling contexts that the file does not
	// leave end with its last record, as in OTF2's and Scalasca's readers.
	if err := cs.unwind(0); err != nil {
		return wrapErr(err, r.name, cs.lastEv.Offset)
	}
	if count {
		c.st.Records += r.Events
		c.st.AttrLists += r.AttrLists
		c.st.Unknown += r.Unknown
		if r.Unknown > 0 {
			c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s (%d unknown records skipped in all)", r.UnknownFirst, r.Unknown))
		}
		// The file's framing decides what the location holds; a count
		// that disagrees is a warning, but in TAU's and APEX's archives,
		// whose counts are always off (a note says so).
		if l.Events != 0 && uint64(r.Events+r.Unknown) != l.Events && uint64(r.Events) != l.Events && !c.a.uncounted && !cut {
			c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: %d event records, the location definition counts %d; the file's records are used", r.name, r.Events, l.Events))
		}
	}
	return nil
}

func wrapErr(err error, file string, off int64) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return &FormatError{File: file, Offset: off, Msg: err.Error()}
}

// pass1 assigns the ids other threads refer to (parallel regions made by
// the forking thread, explicit tasks made by the creating thread), finds
// each thread's time span and whether it is an OpenMP thread, and the
// region naming each parallel region.
func (c *conv) pass1() error {
	g := c.a.Defs
	var nbcLeft []nbcStart // requests not completed on their location
	var p2pLeft []p2pEnd   // point-to-point ones, and completions of none there
	for t := range c.p.locations {
		ld := c.local[t]
		pending := int64(0)
		open := map[uint64]int{}     // request id → its MpiIrecvRequest's index
		isend := map[uint64]p2pEnd{} // request id → its MpiIsend
		var nrecv, nsend, nsendDone int
		nbcOpen := map[uint64]int{} // request id → its NonBlockingCollectiveRequest's index
		var named *fork             // the fork whose naming region is still to come
		var switched int64          // the task switched to, whose TASK region is still to come
		inst := map[uint32]int{}    // team → its instances begun on this thread (taskKey.inst)
		begins := 0                 // ThreadBegin records so far
		joining := false            // in a thread-wait region
		var ps pscwScan             // general active target synchronisation (pscw.go)
		err := c.read(t, true, func(e *Event, now int64) error {
			if !c.seen[t] {
				c.first[t], c.seen[t] = now, true
			}
			c.last[t] = now
			if e.Type == EvThreadBegin {
				c.user[t] = true
				if begins > 0 { // another thread on a reused location
					c.lives[t] = append(c.lives[t], span{first: now})
				}
				begins++
			}
			if len(c.lives[t]) == 0 {
				c.lives[t] = append(c.lives[t], span{first: now})
			}
			life := len(c.lives[t]) - 1
			c.lives[t][life].last = now
			switch e.Type {
			case EvThreadBegin:
				k := eventThreadKey(e, ld)
				for len(c.lifeKey[t]) < life {
					c.lifeKey[t] = append(c.lifeKey[t], threadKey{})
				}
				if len(c.lifeKey[t]) == life {
					c.lifeKey[t] = append(c.lifeKey[t], k)
				}
				r := c.key(k)
				r.began = lifeRef{t, life}
				r.nbegan++
			case EvThreadCreate:
				r := c.key(eventThreadKey(e, ld))
				r.created = lifeRef{t, life}
				r.ncreated++
			case EvThreadWait:
				if joining {
					c.joins[t][len(c.joins[t])-1] = eventThreadKey(e, ld)
				}
			case EvLeave:
				id := regionRef(ld, e)
				c.pscwLeave(t, &ps, id)
				if r := g.Region(id); r != nil {
					if joinRegion(r) {
						joining = false
					}
					if c.info(id, r).class == regCode {
						c.codeLeave(t, id)
					}
				}
			case EvThreadFork, EvOmpFork:
				c.seq[t]++
				pending = trace.MakeID(t, c.seq[t])
				c.forkOpen[t] = append(c.forkOpen[t], openCode{seq: len(c.forks[t]), at: now, off: e.Offset})
				c.forks[t] = append(c.forks[t], fork{par: pending})
				named = &c.forks[t][len(c.forks[t])-1]
				if e.Type == EvOmpFork {
					c.legacy = true
				}
			case EvThreadJoin, EvOmpJoin:
				if n := len(c.forkOpen[t]); n > 0 {
					c.forkOpen[t] = c.forkOpen[t][:n-1]
				}
			case EvThreadTeamBegin:
				c.omp[t] = true
				team := uint32(ld.Map(mapComm, e.A[0]))
				inst[team]++
				if pending != 0 {
					c.teams[team] = append(c.teams[team], pending)
					pending = 0
				}
			case EvEnter:
				id := regionRef(ld, e)
				r := g.Region(id)
				c.pscwEnter(&ps, id, r)
				if r == nil {
					return nil
				}
				if c.info(id, r).class == regCode {
					c.codeEnter(t, id, now, e.Offset)
				}
				if joinRegion(r) && !joining {
					// the thread it waits for comes with the ThreadWait
					// inside
					joining = true
					c.joins[t] = append(c.joins[t], threadKey{})
				}
				if r.Paradigm == paradigmOpenMP {
					c.ompEnters++
				}
				if r.Role == roleTask && r.Paradigm != paradigmOpenMP && r.Paradigm != paradigmMPI && r.Paradigm != paradigmMeasurement {
					c.worker[t] = true
				}
				switch {
				case r.Paradigm == paradigmOpenMP && r.Role == roleParallel:
					if named != nil && !named.regions {
						named.region, named.regions = id, true
					}
					named = nil
					c.omp[t] = c.omp[t] || c.legacy
				case r.Paradigm == paradigmOpenMP && (r.Role == roleTask || r.Role == roleTaskUntied) && switched != 0:
					c.taskRegion.setOnce(switched, id)
					switched = 0
				}
			case EvMpiIrecvRequest:
				open[e.A[0]] = len(c.postComm[t])
				c.postComm[t] = append(c.postComm[t], undefined32)
				c.postAt[t] = append(c.postAt[t], now)
			case EvMpiIrecv:
				cm := uint32(ld.Map(mapComm, e.A[1]))
				if k, ok := open[e.A[4]]; ok {
					c.postComm[t][k] = cm
					delete(open, e.A[4])
				} else {
					p2pLeft = append(p2pLeft, p2pEnd{rec: p2pRec{EvMpiIrecv, t, nrecv}, id: e.A[4], comm: cm})
				}
				nrecv++
			case EvMpiIsend:
				isend[e.A[4]] = p2pEnd{rec: p2pRec{EvMpiIsend, t, nsend}, id: e.A[4], comm: uint32(ld.Map(mapComm, e.A[1])), at: now}
				nsend++
			case EvMpiIsendComplete:
				if _, ok := isend[e.A[0]]; ok {
					delete(isend, e.A[0])
				} else {
					p2pLeft = append(p2pLeft, p2pEnd{rec: p2pRec{EvMpiIsendComplete, t, nsendDone}, id: e.A[0]})
				}
				nsendDone++
			case EvRmaGroupSync:
				c.pscwSyncRecord(t, &ps, e)
			case EvNbCollRequest:
				nbcOpen[e.A[0]] = len(c.nbc[t])
				c.nbc[t] = append(c.nbc[t], nbcDone{at: now})
			case EvNbCollComplete:
				d := nbcDone{done: true, op: e.A[0], comm: uint32(ld.Map(mapComm, e.A[1])), root: e.A[2], sent: e.A[3], received: e.A[4]}
				if k, ok := nbcOpen[e.A[5]]; ok {
					d.at = c.nbc[t][k].at
					c.nbc[t][k] = d
					delete(nbcOpen, e.A[5])
				} else {
					// Started on another location (or never):
					// paired below, once every location is read.
					if c.nbcOther == nil {
						c.nbcOther = map[uint64][]nbcDone{}
					}
					c.nbcOther[e.A[5]] = append(c.nbcOther[e.A[5]], d)
				}
			case EvThreadTaskSwitch:
				switched, _ = c.tasks.get(eventTaskKey(e, ld, inst))
			case EvOmpTaskSwitch:
				switched = c.legacyTasks[e.A[0]]
			case EvThreadTaskCreate:
				c.seq[t]++
				c.tasks.set(eventTaskKey(e, ld, inst), trace.MakeID(t, c.seq[t]))
				c.st.Tasks++
			case EvMeasurementOnOff:
				c.onOff(t, e.A[0], now)
			case EvOmpTaskCreate:
				c.seq[t]++
				c.legacyTasks[e.A[0]] = trace.MakeID(t, c.seq[t])
				c.st.Tasks++
			}
			return nil
		})
		if err != nil {
			return err
		}
		for id, k := range nbcOpen {
			nbcLeft = append(nbcLeft, nbcStart{t: t, k: k, id: id})
		}
		for id, k := range open {
			p2pLeft = append(p2pLeft, p2pEnd{rec: p2pRec{EvMpiIrecvRequest, t, k}, id: id, at: c.postAt[t][k]})
		}
		for _, s := range isend {
			p2pLeft = append(p2pLeft, s)
		}
		c.postAt[t] = nil
		c.endGaps(t)
		c.unleftRegions(t)
		c.unjoinedForks(t)
	}
	seq := map[int]int64{}
	c.pairNBC(nbcLeft, seq)
	c.pairP2P(p2pLeft, seq)
	return nil
}

// pairP2P pairs each point-to-point request left open on its location (an
// MpiIrecvRequest without its MpiIrecv, an MpiIsend without its
// MpiIsendComplete) with the completion of its request id recorded on
// another location of the process, as pairNBC the nonblocking
// collectives (MPI_THREAD_MULTIPLE: a thread waits for another's
// request): the first completion not taken, locations and records in
// order. The pair gets a request id of its own, counted down from
// 2^32−1 of the starting location after pairNBC's (seq). Left unpaired,
// a receive's post was dropped (its message received as by a blocking
// receive in the call that completed it) and an MPI_Isend's completion
// (the end of its wait) too.
func (c *conv) pairP2P(ends []p2pEnd, seq map[int]int64) {
	if len(ends) == 0 {
		return
	}
	slices.SortFunc(ends, func(a, b p2pEnd) int {
		return cmp.Or(cmp.Compare(a.rec.t, b.rec.t), cmp.Compare(a.rec.typ, b.rec.typ), cmp.Compare(a.rec.k, b.rec.k))
	})
	done := map[[2]uint64][]p2pEnd{} // (completion type, id) → completions, in order
	for _, e := range ends {
		if e.rec.typ == EvMpiIrecv || e.rec.typ == EvMpiIsendComplete {
			k := [2]uint64{uint64(e.rec.typ), e.id}
			done[k] = append(done[k], e)
		}
	}
	for _, s := range ends {
		var typ uint8
		switch s.rec.typ {
		case EvMpiIrecvRequest:
			typ = EvMpiIrecv
		case EvMpiIsend:
			typ = EvMpiIsendComplete
		default:
			continue
		}
		k := [2]uint64{uint64(typ), s.id}
		q := done[k]
		if len(q) == 0 {
			continue
		}
		d := q[0]
		done[k] = q[1:]
		seq[s.rec.t]++
		p := p2pPair{req: trace.MakeID(s.rec.t, 1<<32-seq[s.rec.t]), comm: s.comm, at: s.at}
		if typ == EvMpiIrecv {
			p.comm = d.comm // OTF2 gives a receive's communicator at its completion only
			c.postComm[s.rec.t][s.rec.k] = d.comm
		}
		if c.xp2p == nil {
			c.xp2p = map[p2pRec]p2pPair{}
		}
		c.xp2p[s.rec], c.xp2p[d.rec] = p, p
	}
}

// pairNBC gives each nonblocking collective request left open on its
// location the completion of its request id recorded on another location
// (the first not taken, locations and requests in order): MPI lets any
// thread complete a request. Left out, the start would be missing from
// its process's numbering of the communicator's collectives, and every
// later collective there would be matched with the wrong instance of the
// other members. The pair gets a ptrace request id of its own here (pass
// 2 converts the two locations apart, in either order): sequence numbers
// counted down from 2^32−1 of the starting location, which the ones
// pass 2 counts up from 1 (c.rseq) never reach. What stays unpaired
// stays out (Stats.Ignored).
func (c *conv) pairNBC(left []nbcStart, seq map[int]int64) {
	if len(left) == 0 || len(c.nbcOther) == 0 {
		c.nbcOther = nil
		return
	}
	slices.SortFunc(left, func(a, b nbcStart) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.k, b.k)) })
	paired := map[uint64][]nbcDone{}
	for _, s := range left {
		q := c.nbcOther[s.id]
		if len(q) == 0 {
			continue
		}
		d := q[0]
		c.nbcOther[s.id] = q[1:]
		seq[s.t]++
		d.at, d.req = c.nbc[s.t][s.k].at, trace.MakeID(s.t, 1<<32-seq[s.t])
		c.nbc[s.t][s.k] = d
		paired[s.id] = append(paired[s.id], d)
	}
	c.nbcOther = paired
}

// comms builds the communicator table: every MPI communicator this process
// belongs to, members as world ranks. Only groups of the MPI paradigm are
// groups of ranks: OpenMP thread teams and other groups of locations are
// not communicators between processes. An intercommunicator lists both
// groups, the one whose rank 0 has the lower world rank first (as the
// collector writes it); its records name ranks of the remote group.
func (c *conv) comms() {
	g := c.a.Defs
	c.commIndex = map[uint32]int{}
	c.commRanks = map[uint32][]int{}
	var list []trace.Communicator
	for _, id := range g.CommIDs() {
		cm := g.Comm(id)
		members, ok := c.groupRanks(id, cm, cm.Group)
		if !ok {
			continue
		}
		in := slices.Contains(members, int(c.p.rank))
		if cm.Inter {
			other, ok := c.groupRanks(id, cm, cm.GroupB)
			if !ok || len(members) == 0 || len(other) == 0 {
				continue
			}
			if overlap(members, other, len(c.a.procs)) {
				// MPI's two groups are disjoint: a rank in both would be
				// a member twice
				c.undefComm.add("%s: intercommunicator %d (%q): its groups %d and %d share ranks; the communicator is ignored", c.a.Dir+".def", id, cm.Name, cm.Group, cm.GroupB)
				continue
			}
			if !in {
				members, other = other, members
				in = slices.Contains(members, int(c.p.rank))
			}
			c.commRanks[id] = other // the remote group
			if members[0] < other[0] {
				members = append(slices.Clip(members), other...)
			} else {
				members = append(slices.Clip(other), members...)
			}
		} else {
			c.commRanks[id] = members
		}
		if !in {
			continue
		}
		cid := int64(id) + 1
		if len(members) == len(c.a.procs) && cm.Parent == undefined32 && !cm.Inter && g.Group(cm.Group).Type == groupTypeCommGroup {
			world := true
			for i, m := range members {
				world = world && m == i
			}
			if world {
				cid = 0
			}
		}
		idx := len(c.commIndex)
		c.commIndex[id] = idx
		tc := trace.Communicator{Index: idx, ID: cid, Name: cm.Name, Members: members}
		c.w.AddComm(tc)
		list = append(list, tc)
	}
	// An RMA window's collectives (its creation, MPI_Win_fence, its free:
	// RmaCollectiveBegin/End) go on a communicator entry of the window's
	// own, as the collector records them (trace.CollOp.IsWindow): the
	// members of the communicator it was made on, an id of its own above
	// OTF2's 32-bit communicator ids (bit 61: cutComm's stretch copies
	// set bits 32 to 60).
	c.winIndex = map[uint32]int{}
	c.winComm = map[uint32]uint32{}
	for _, id := range g.RmaWinIDs() {
		w := g.RmaWin(id)
		ci, ok := c.commIndex[w.Comm]
		if !ok || g.Comm(w.Comm).Inter {
			continue // not a member, or no MPI intracommunicator of this process
		}
		idx := len(c.commIndex) + len(c.winIndex)
		c.winIndex[id] = idx
		c.winComm[id] = w.Comm
		tc := trace.Communicator{Index: idx, ID: trace.CommWindow | int64(id), Name: w.Name, Members: list[ci].Members}
		c.w.AddComm(tc)
		list = append(list, tc)
	}
	c.cutComms(list)
}

// overlap reports whether world ranks a and b (each below n) share one.
func overlap(a, b []int, n int) bool {
	in := make([]bool, n)
	for _, r := range a {
		in[r] = true
	}
	for _, r := range b {
		if in[r] {
			return true
		}
	}
	return false
}

// groupRanks returns the world ranks of group grp of communicator id, in
// group-rank order, and false when it is no MPI group of ranks (or names
// ranks outside the world: then the communicator is ignored, and said so).
func (c *conv) groupRanks(id uint32, cm *Comm, grp uint32) ([]int, bool) {
	gr := c.a.Defs.Group(grp)
	if gr == nil || gr.Paradigm != paradigmMPI {
		return nil, false
	}
	nranks := len(c.a.procs)
	switch gr.Type {
	case groupTypeCommSelf:
		return []int{int(c.p.rank)}, true
	case groupTypeCommGroup:
		members := make([]int, len(gr.Members))
		ok := true
		for i, m := range gr.Members {
			ok = ok && m < uint64(nranks)
			members[i] = int(min(m, uint64(nranks)))
		}
		if !ok {
			c.undefComm.add("%s: communicator %d (%q): its group %d names ranks outside the %d-rank world; the communicator is ignored", c.a.Dir+".def", id, cm.Name, grp, nranks)
			return nil, false
		}
		return members, true
	}
	return nil, false
}

// offsets writes the clock table. The converted times are on the archive's
// own time base already (its ClockOffset definitions applied, as every OTF2
// reader does), so the table says "offset 0 from the first record to the
// last": ptrace's interpolation leaves them as they are, with or without
// --no-clocksync, and does not align the processes' starts, which only
// makes sense for processes without a common time base. The error bound is
// the largest standard deviation of the master location's offsets.
func (c *conv) offsets() {
	var sd float64
	for _, o := range c.local[0].Offsets {
		sd = max(sd, o.StdDev)
	}
	errNS := int64(0)
	if v := sd * 1e9 / float64(c.clk.res); v > 0 && v < 1<<62 {
		errNS = int64(math.Round(v))
	}
	c.w.AddClockOffset(trace.ClockOffset{When: "init", LocalNS: c.first[0], OffsetNS: 0, ErrorNS: errNS})
	if c.last[0] > c.first[0] {
		c.w.AddClockOffset(trace.ClockOffset{When: "finalize", LocalNS: c.last[0], OffsetNS: 0, ErrorNS: errNS})
	}
}

// peer maps a rank in OTF2 communicator comm to a world rank.
func (c *conv) peer(comm uint32, r uint64) int64 {
	if r == undefined32 || r == math.MaxUint64 {
		return -1
	}
	if m, ok := c.commRanks[comm]; ok && r < uint64(len(m)) {
		return int64(m[r])
	}
	return -1
}

// comm returns the ptrace index of MPI communicator comm.
func (c *conv) comm(comm uint32) (int64, bool) {
	i, ok := c.commIndex[comm]
	return int64(i), ok
}

// unknownLoc returns an empty location (named "<unknown>"), defining it on
// first use.
func (c *conv) unknownLoc() int64 {
	if c.noLoc < 0 {
		c.noLoc = c.w.AddLocation(trace.Location{})
	}
	return c.noLoc
}

// regionLoc returns the ptrace location of a region (its source file and
// line), defining it on first use.
func (c *conv) regionLoc(reg uint32, r *Region) int64 {
	if id, ok := c.locs[reg]; ok {
		return id
	}
	name := r.Name
	if i := strings.Index(name, " @"); i > 0 {
		name = name[:i] // Score-P's "!$omp parallel @file.c:12"
	}
	id := c.w.AddLocation(trace.Location{Func: name, File: r.File, Line: int(r.Line)})
	c.locs[reg] = id
	return id
}

type parFrame struct {
	par, impl int64
	size, num int64
	legacy    bool // opened by an OTF2 1.x parallel region's Enter
}

type pendingEvent struct {
	kind trace.Kind
	time int64
	args [trace.MaxArgs]int64
}

// thr is the state of one thread while its events are converted.
type thr struct {
	c     *conv
	t     int     // OTF2 location index
	out   int     // ptrace thread index
	stack []int64 // running tasks, innermost last
	pars  []parFrame
	forks []int64 // open forks on this thread
	nfork int
	teamK map[uint32]int
	reqs  map[uint64]int64
	coll  bool
	buf   []pendingEvent
	err   error
	// createLoc is the location of the task-creation region being entered
	createLoc int64
	// legacyK counts the OTF2 1.x parallel regions this thread entered
	legacyK int
	// nposts counts the MpiIrecvRequest records converted, nnbc the
	// NonBlockingCollectiveRequest ones; nbcs are the nonblocking
	// collectives started and not completed, by OTF2 request id
	nposts, nnbc int
	nbcs         map[uint64]nbcOpen
	// polled holds the requests (ptrace ids) an MpiRequestTest named
	// since their start: their mpi_polled is written
	polled map[int64]bool
	// isends holds the OTF2 request ids of this thread's MPI_Isends in
	// flight: an MpiRequestCancelled of one withdraws its message
	isends map[uint64]bool
	// inProbed: inside an MPI_Mrecv or MPI_Imrecv (Stats.ProbedRecvs)
	inProbed bool
	// collCall: inside an MPI collective call; collRec: it holds a
	// collective record (Stats.Uncollected)
	collCall, collRec bool
	// mutexFrom is the time the thread entered a critical section or a
	// lock-API call not acquired yet (−1: none), of mutex kind mutexKind
	// at location mutexLoc
	mutexFrom, mutexKind, mutexLoc int64
	// locks are the OpenMP locks the thread holds: kind, location and
	// depth (a nest lock's owner takes it again)
	locks map[uint64]heldLock
	// waitKind: in a wait for other threads of this sync kind (0: none):
	// a thread-wait region (pthread_join, waiting for thread waitTarget − 1,
	// 0: unknown) or a condition wait (pthread_cond_wait), entered at
	// location waitLoc
	waitKind, waitLoc, waitTarget int64
	// off is the event-file offset of the Enter or Leave being converted
	off int64
	// flushFrom and flushTo bound the buffer flush not yet written
	// (flushTo −1: none): it is written once the records stamped with its
	// start, the one that filled the buffer among them, are.
	flushFrom, flushTo int64
	// codeSeq counts the code-region Enters converted, unleft holds the
	// open ones that are never left (gaps.go)
	codeSeq int
	unleft  []uint32
	// codes are the open code regions, innermost last (nesting.go)
	codes []codeFrame
	// mpiDepth counts a task-runtime worker's open MPI regions
	// (workerIdle)
	mpiDepth int
	// lk follows the lock calls and epochs (rmalock.go)
	lk rmaLockState
}

// heldLock is an OpenMP lock a thread holds.
type heldLock struct{ kind, loc, depth int64 }

// lockCalls are OPARI2's lock-API regions that acquire a lock, by the OMPT
// mutex kind the collector records for them.
var lockCalls = map[string]int64{"omp_set_lock": ompt.MutexLock, "omp_test_lock": ompt.MutexTestLock,
	"omp_set_nest_lock": ompt.MutexNestLock, "omp_test_nest_lock": ompt.MutexTestNestLock}

func (h *thr) cur() int64 {
	if len(h.stack) == 0 {
		return 0
	}
	return h.stack[len(h.stack)-1]
}

// eventTaskKey is e's task (a ThreadTaskCreate, Switch or Complete) in the
// instance of its team the thread is in: begun counts, by team, the
// instances the thread has begun (both passes count them alike).
func eventTaskKey(e *Event, ld *LocalDefs, begun map[uint32]int) taskKey {
	team := uint32(ld.Map(mapComm, e.A[0]))
	return taskKey{team, uint32(begun[team]), uint32(e.A[1]), uint32(e.A[2])}
}

func (h *thr) par() parFrame {
	if len(h.pars) == 0 {
		return parFrame{}
	}
	return h.pars[len(h.pars)-1]
}

func (h *thr) emit(k trace.Kind, time int64, args ...int64) {
	if h.err != nil {
		return
	}
	if h.coll {
		e := pendingEvent{kind: k, time: time}
		copy(e.args[:], args)
		h.buf = append(h.buf, e)
		return
	}
	if last := &h.c.lastAt[h.out]; time < *last {
		h.c.emitBack.add("%s: %s at %d ns, a time an earlier record kept, goes before the thread's previous event (%d ns); taken as that event's",
			h.c.a.evtPath(h.c.p.locations[h.t].ID), k, time, *last)
		time = *last
	} else {
		*last = time
	}
	h.err = h.c.w.E(h.out, k, time, args...)
}

// flush writes the events held since a collective's begin.
func (h *thr) flush() {
	h.coll = false
	for _, e := range h.buf {
		h.emit(e.kind, e.time, e.args[:]...)
	}
	h.buf = h.buf[:0]
}

// pass2 converts thread t's events.
func (c *conv) pass2(t int) error {
	if !c.seen[t] {
		return nil
	}
	ld := c.local[t]
	g := c.a.Defs
	h := c.newThr(t, t)
	t0 := c.first[t]
	var initial int64
	h.emit(trace.ThreadBegin, t0, int64(c.threadType(t)))
	if h.out == 0 {
		c.seq[t]++
		initial = trace.MakeID(h.out, c.seq[t])
		h.emit(trace.ImplicitTaskBegin, t0, 0, initial, 1, 0, ompt.TaskInitial)
		h.stack = append(h.stack, initial)
	}
	evt := c.a.evtPath(c.p.locations[t].ID)
	user := c.threadType(t) == trace.ThreadUser
	worker := c.taskWorker(t)
	life := 0 // the location's ThreadBegin records so far
	// the location's MpiIrecv, MpiIsend, MpiIsendComplete records so far
	// (c.xp2p)
	var nrecv, nsend, nsendDone int
	err := c.read(t, false, func(e *Event, now int64) error {
		if h.flushTo >= 0 && now > h.flushFrom {
			h.endFlush(now)
		}
		switch e.Type {
		case EvBufferFlush:
			// The measurement wrote its full buffer out from the record's
			// time to the stop time it carries: the thread's time, but not
			// the program's (sim/flush.go).
			h.endFlush(now)
			h.flushFrom, h.flushTo = now, c.tb[t].attrNS(e.A[0], now)
		case EvThreadBegin, EvThreadEnd:
			// A thread the program started runs from its ThreadBegin (the
			// first record of its location, as Score-P writes it) to its
			// ThreadEnd (the last): its thread_begin and thread_end. A
			// later ThreadBegin on the location is another thread's.
			switch {
			case !user:
				c.st.Ignored[e.Type]++
			case e.Type == EvThreadBegin:
				if life > 0 && life < len(c.lives[t]) {
					c.lockEnd(h)
					if err := h.endLife(c.lives[t][life-1].last); err != nil {
						return err
					}
					h = c.newThr(t, c.more[t]+life-1)
					h.emit(trace.ThreadBegin, c.lives[t][life].first, trace.ThreadUser)
				}
				life++
			}
		case EvThreadWait:
			// inside pthread_join, whose region is the join's wait
			if h.waitKind != joinKind {
				c.st.Ignored[e.Type]++
			}
		case EvEnter, EvLeave:
			id := regionRef(ld, e)
			r := g.Region(id)
			ps := c.pscwAt(t, e.Type == EvEnter)
			if r == nil {
				c.undefRegion.add("%s: offset %d: %s of undefined region %d skipped", evt, e.Offset, EventName(e.Type), id)
				return nil
			}
			h.off = e.Offset
			if ps != nil && e.Type == EvLeave {
				c.pscwEmit(h, ps, trace.MPIRecv, now, evt)
			}
			if e.Type == EvLeave {
				c.lockLeave(h, id, now, evt)
			}
			if worker {
				h.workerIdle(true, now)
			}
			c.region(h, e.Type == EvEnter, now, id, r)
			if worker {
				switch {
				case c.info(id, r).class != regMPI:
				case e.Type == EvEnter:
					h.mpiDepth++
				case h.mpiDepth > 0:
					h.mpiDepth--
				}
				if e.Type == EvLeave {
					h.workerIdle(false, now)
				}
			}
			if ps != nil && e.Type == EvEnter {
				c.pscwEmit(h, ps, trace.MPISend, now, evt)
			}
			if e.Type == EvEnter {
				c.lockEnter(h, id, r)
			}
			if e.Type == EvEnter && c.unleft[t] != nil && c.info(id, r).class == regCode {
				h.enterUnleft(id)
			}
		case EvMpiSend, EvMpiIsend, EvMpiRecv, EvMpiIrecv:
			if h.inProbed && (e.Type == EvMpiRecv || e.Type == EvMpiIrecv) {
				c.st.ProbedRecorded++
			}
			var x p2pPair // a request completed on another location (pairP2P)
			switch e.Type {
			case EvMpiIsend:
				x = c.xp2p[p2pRec{e.Type, t, nsend}]
				nsend++
			case EvMpiIrecv:
				x = c.xp2p[p2pRec{e.Type, t, nrecv}]
				nrecv++
			}
			cm := uint32(ld.Map(mapComm, e.A[1]))
			ci, ok := c.comm(cm)
			if !ok {
				c.undefComm.add("%s: offset %d: %s on communicator %d, which is not an MPI communicator of this process; skipped", evt, e.Offset, EventName(e.Type), cm)
				return nil
			}
			if ci, ok = c.cutComm(ci, now); !ok {
				return nil
			}
			var req int64
			switch {
			case x.req != 0 && e.Type == EvMpiIrecv:
				// posted on another location: the request there, unless
				// its post was not converted (cut in a gap)
				if _, ok := c.cutComm(ci, x.at); ok {
					req = x.req
				}
			case x.req != 0: // an MPI_Isend completed on another location
				req = x.req
			case e.Type == EvMpiIsend:
				c.rseq[t]++
				req = trace.MakeID(h.out, c.rseq[t])
				h.reqs[e.A[4]] = req
				if h.isends == nil {
					h.isends = map[uint64]bool{}
				}
				h.isends[e.A[4]] = true
			case e.Type == EvMpiIrecv:
				req = h.reqs[e.A[4]]
				delete(h.reqs, e.A[4])
				delete(h.polled, req)
			}
			k := trace.MPISend
			if e.Type == EvMpiRecv || e.Type == EvMpiIrecv {
				k = trace.MPIRecv
			}
			h.emit(k, now, c.peer(cm, e.A[0]), int64(int32(uint32(e.A[2]))), ci, int64(min(e.A[3], 1<<62)), req)
		case EvMpiIsendComplete:
			x, other := c.xp2p[p2pRec{e.Type, t, nsendDone}]
			nsendDone++
			if other {
				// An MPI_Isend of another location, which converted it
				// unless on no communicator of the process or cut in a
				// gap.
				if ci, ok := c.comm(x.comm); ok {
					if _, ok = c.cutComm(ci, x.at); ok {
						h.emit(trace.MPIRequestDone, now, x.req)
					}
				}
			} else if req, ok := h.reqs[e.A[0]]; ok {
				h.emit(trace.MPIRequestDone, now, req)
				delete(h.reqs, e.A[0])
				delete(h.polled, req)
				delete(h.isends, e.A[0])
			}
		case EvMpiIrecvRequest:
			if h.inProbed {
				c.st.ProbedRecorded++
			}
			// The communicator is the completing MpiIrecv's (pass 1); the
			// source and tag stay unknown (−1) until the receive
			// completes: OTF2 records them only there.
			k := h.nposts
			h.nposts++
			if k >= len(c.postComm[t]) {
				return nil
			}
			ci, ok := c.comm(c.postComm[t][k])
			if !ok {
				return nil // never completed, or on no communicator of this process
			}
			if ci, ok = c.cutComm(ci, now); !ok {
				return nil
			}
			if x, ok := c.xp2p[p2pRec{e.Type, t, k}]; ok {
				// completed on another location (pairP2P)
				h.emit(trace.MPIRecvPost, now, -1, -1, ci, x.req)
				return nil
			}
			c.rseq[t]++
			req := trace.MakeID(h.out, c.rseq[t])
			h.reqs[e.A[0]] = req
			h.emit(trace.MPIRecvPost, now, -1, -1, ci, req)
		case EvMpiRequestTest:
			// A test that did not complete the request (MPI_Test and its
			// family, inside the call): the first of a request's is its
			// mpi_polled (docs/trace-format.md), the others say no more.
			req, ok := h.reqs[e.A[0]]
			if !ok {
				var o nbcOpen
				o, ok = h.nbcs[e.A[0]]
				req = o.req
			}
			if !ok || req == 0 {
				c.st.Ignored[e.Type]++
				return nil
			}
			if !h.polled[req] {
				if h.polled == nil {
					h.polled = map[int64]bool{}
				}
				h.polled[req] = true
				h.emit(trace.MPIPolled, now, req)
			}
		case EvMpiRequestCancelled:
			// Score-P writes it instead of the completion of a request
			// MPI_Test_cancelled says was cancelled: an MPI_Isend's
			// message never left, so its mpi_cancelled withdraws the
			// mpi_send (the collector's record); a cancelled post
			// received nothing, left as it was.
			if req, ok := h.reqs[e.A[0]]; ok && h.isends[e.A[0]] {
				h.emit(trace.MPICancelled, now, req)
				h.emit(trace.MPIRequestDone, now, req)
				delete(h.reqs, e.A[0])
				delete(h.polled, req)
				delete(h.isends, e.A[0])
				return nil
			}
			delete(h.reqs, e.A[0])
			delete(h.nbcs, e.A[0])
			c.st.Ignored[e.Type]++
		case EvNbCollRequest:
			// A nonblocking collective starts (inside its MPI_I* call):
			// its operation, communicator, root and sizes are those of
			// the NonBlockingCollectiveComplete that completed it on this
			// thread (pass 1); a request never completed there is left
			// out (its completion, if any, too).
			k := h.nnbc
			h.nnbc++
			if k >= len(c.nbc[t]) || !c.nbc[t][k].done {
				c.st.Ignored[e.Type]++
				return nil
			}
			d := &c.nbc[t][k]
			ci, ok := c.comm(d.comm)
			if !ok {
				c.undefComm.add("%s: offset %d: %s on communicator %d, which is not an MPI communicator of this process; skipped", evt, e.Offset, EventName(EvNbCollComplete), d.comm)
				return nil
			}
			if ci, ok = c.cutComm(ci, now); !ok {
				return nil
			}
			op := opOf(collOps[:], d.op)
			root := c.collRoot(d.comm, d.root)
			req := d.req
			if req == 0 {
				c.rseq[t]++
				req = trace.MakeID(h.out, c.rseq[t])
				if h.nbcs == nil {
					h.nbcs = map[uint64]nbcOpen{}
				}
				h.nbcs[e.A[0]] = nbcOpen{req: req, op: op, ci: ci, root: root}
			} // else completed on another location (pairNBC)
			h.emit(trace.CollStart, now, op, ci, root, int64(min(d.sent, 1<<62)), req)
		case EvNbCollComplete:
			o, ok := h.nbcs[e.A[5]]
			if ok {
				delete(h.nbcs, e.A[5])
				delete(h.polled, o.req)
			} else if o, ok = c.otherNBC(e.A[5]); !ok {
				c.st.Ignored[e.Type]++
				return nil
			} else if o.req == 0 {
				return nil // its start was not converted (skipped there)
			}
			h.emit(trace.CollComplete, now, o.op, o.ci, o.root, int64(min(e.A[4], 1<<62)), o.req)
		case EvRmaGroupSync:
			// pass 1 took it (pscw.go)
		case EvRmaRequestLock, EvRmaAcquireLock, EvRmaTryLock, EvRmaReleaseLock:
			c.lockRecord(h, e, evt)
		case EvMpiCollectiveBegin, EvRmaCollectiveBegin:
			h.collRec = true
			// The operation, communicator and root come with the End:
			// hold the begin (and anything before the end) until then.
			h.flush()
			h.coll = true
			h.emit(trace.CollBegin, now, 0, 0, -1, 0, 0)
		case EvMpiCollectiveEnd, EvRmaCollectiveEnd:
			h.collRec = true
			var cm uint32
			var ci int64
			var ok bool
			op := int64(0)
			if e.Type == EvRmaCollectiveEnd {
				win := uint32(ld.Map(mapRmaWin, e.A[1]))
				cm = c.winComm[win]
				var wi int
				if wi, ok = c.winIndex[win]; !ok {
					c.undefComm.add("%s: offset %d: %s on RMA window %d, which is not a window of an MPI communicator of this process; skipped", evt, e.Offset, EventName(e.Type), win)
				}
				ci = int64(wi)
				op = opOf(rmaCollOps[:], e.A[0])
			} else {
				cm = uint32(ld.Map(mapComm, e.A[1]))
				if ci, ok = c.comm(cm); !ok {
					c.undefComm.add("%s: offset %d: %s on communicator %d, which is not an MPI communicator of this process; skipped", evt, e.Offset, EventName(e.Type), cm)
				}
				op = opOf(collOps[:], e.A[0])
			}
			if !ok {
				if len(h.buf) > 0 && h.buf[0].kind == trace.CollBegin {
					h.buf = h.buf[1:]
				}
				h.flush()
				return nil
			}
			root := c.collRoot(cm, e.A[2])
			if len(c.cut) > 0 {
				// A collective begun inside a gap is dropped whole; one
				// begun outside is kept (its members entered it while every
				// process was recording, and the process recorded its part),
				// on the copy of its begin's stretch.
				begun := len(h.buf) > 0 && h.buf[0].kind == trace.CollBegin
				at := now
				if begun {
					at = h.buf[0].time
				}
				if ci, ok = c.cutComm(ci, at); !ok {
					if begun {
						h.buf = h.buf[1:]
					}
					h.flush()
					return nil
				}
			}
			args := [trace.MaxArgs]int64{op, ci, root, int64(min(e.A[3], 1<<62)), int64(min(e.A[4], 1<<62))}
			if len(h.buf) > 0 && h.buf[0].kind == trace.CollBegin {
				h.buf[0].args = args
			} else {
				// an End without its Begin: the call's span is unknown
				c.orphan.add("%s: offset %d: MpiCollectiveEnd without MpiCollectiveBegin; its begin taken at its end", evt, e.Offset)
				h.emit(trace.CollBegin, now, args[:]...)
			}
			h.flush()
			h.emit(trace.CollEnd, now, op, ci, root)
		case EvThreadFork, EvOmpFork:
			if h.nfork < len(c.forks[t]) {
				f := c.forks[t][h.nfork]
				h.nfork++
				h.forks = append(h.forks, f.par)
				loc := c.unknownLoc()
				if f.regions {
					if r := g.Region(f.region); r != nil {
						loc = c.regionLoc(f.region, r)
					}
				}
				req := int64(e.A[1])
				if e.Type == EvOmpFork {
					req = int64(e.A[0])
				}
				h.emit(trace.ParallelBegin, now, f.par, h.cur(), req, ompt.ParallelInvokerProgram|ompt.ParallelTeam, loc)
			}
		case EvThreadJoin, EvOmpJoin:
			if n := len(h.forks); n > 0 {
				par := h.forks[n-1]
				h.forks = h.forks[:n-1]
				h.emit(trace.ParallelEnd, now, par, h.cur(), ompt.ParallelInvokerProgram|ompt.ParallelTeam, 0)
			} else {
				c.orphan.add("%s: offset %d: %s without its fork (recording switched on inside the region, or the archive lost it); skipped", evt, e.Offset, EventName(e.Type))
			}
		case EvThreadTeamBegin:
			team := uint32(ld.Map(mapComm, e.A[0]))
			k := h.teamK[team]
			h.teamK[team]++
			ids := c.teams[team]
			if k >= len(ids) {
				c.orphan.add("%s: offset %d: thread team %d: instance %d has no ThreadFork on its master (nested or foreign team?); skipped", evt, e.Offset, team, k)
				return nil
			}
			size, num := c.teamPos(team, c.p.locations[t].ID, t)
			h.beginImplicit(now, ids[k], size, num, false)
		case EvThreadTeamEnd:
			if len(h.pars) == 0 {
				c.orphan.add("%s: offset %d: ThreadTeamEnd without its ThreadTeamBegin (recording switched on inside the region, or the archive lost it); skipped", evt, e.Offset)
			}
			h.endImplicit(now, false)
		case EvThreadTaskCreate:
			k := eventTaskKey(e, ld, h.teamK)
			id, _ := c.tasks.get(k)
			h.emit(trace.TaskCreate, now, id, h.cur(), ompt.TaskExplicit, h.createLocation(id))
		case EvOmpTaskCreate:
			id := c.legacyTasks[e.A[0]]
			h.emit(trace.TaskCreate, now, id, h.cur(), ompt.TaskExplicit, h.createLocation(id))
		case EvThreadTaskSwitch:
			k := eventTaskKey(e, ld, h.teamK)
			next, ok := c.tasks.get(k)
			if !ok {
				next = h.par().impl // an implicit task: this thread's own
			}
			h.switchTo(now, next)
		case EvOmpTaskSwitch:
			next, ok := c.legacyTasks[e.A[0]]
			if !ok {
				next = h.par().impl
			}
			h.switchTo(now, next)
		case EvMeasurementOnOff:
			// pass 1 made the process's gaps of them (gaps.go)
			if e.A[0] == measurementOff {
				h.offUnleft(now)
				h.offUnjoined(now)
			}
		case EvThreadAcquireLock, EvOmpAcquireLock, EvThreadReleaseLock, EvOmpReleaseLock:
			lock, pthread, ok := lockOf(e)
			switch {
			case !ok:
				c.st.Ignored[e.Type]++
				return nil
			case e.Type == EvThreadAcquireLock || e.Type == EvOmpAcquireLock:
				h.acquire(now, lock, pthread)
			default:
				h.release(now, lock, pthread)
			}
		case EvThreadTaskComplete:
			k := eventTaskKey(e, ld, h.teamK)
			if id, _ := c.tasks.get(k); !h.complete(now, id) {
				c.badComplete(evt, e.Offset, fmt.Sprintf("team %d, creator %d, generation %d", k.team, k.creator, k.gen))
			}
		case EvOmpTaskComplete:
			if !h.complete(now, c.legacyTasks[e.A[0]]) {
				c.badComplete(evt, e.Offset, fmt.Sprintf("task %d", e.A[0]))
			}
		default:
			c.st.Ignored[e.Type]++
		}
		return h.err
	})
	if err != nil {
		return err
	}
	h.flush()
	c.lockEnd(h)
	t1 := c.last[t]
	h.endFlush(t1)
	h.endWait(t1)
	for len(h.pars) > 0 { // a team the file does not end (truncated run)
		h.endImplicit(t1, h.par().legacy)
	}
	if h.out == 0 {
		h.emit(trace.ImplicitTaskEnd, t1, 0, initial, 1, 0, ompt.TaskInitial)
	}
	h.emit(trace.ThreadEnd, t1)
	return h.err
}

// endLife ends the thread of a reused location whose last record was at
// end, before the location's next thread begins.
func (h *thr) endLife(end int64) error {
	h.flush()
	h.endFlush(end)
	h.endWait(end)
	h.emit(trace.ThreadEnd, end)
	return h.err
}

// newThr returns the state of location t's thread written as thread out.
func (c *conv) newThr(t, out int) *thr {
	return &thr{c: c, t: t, out: out, teamK: map[uint32]int{}, reqs: map[uint64]int64{}, createLoc: -1, mutexFrom: -1, flushTo: -1}
}

// endFlush writes the pending buffer flush, if any, as flush_begin and
// flush_end, its end cut at next, the time of the thread's next record (a
// flush holds no record of its thread; Score-P stamps the record after it
// at or after its stop time).
func (h *thr) endFlush(next int64) {
	if h.flushTo < 0 {
		return
	}
	h.emit(trace.FlushBegin, h.flushFrom)
	h.emit(trace.FlushEnd, max(h.flushFrom, min(h.flushTo, next)))
	h.flushTo = -1
}

// joinKind is a thread's wait for another thread to end (pthread_join):
// parallel 0, task the index + 1 of the thread joined.
const joinKind = trace.SyncThreadJoin

// wait begins or ends the thread's wait for other threads, of sync kind
// kind (a join, a condition wait), in region name at location loc; a
// join's target is the index + 1 of the thread joined (0: unknown). The
// record is at offset off of the location's event file. A wait entered
// inside another is no wait of its own (Score-P's wrappers do not nest).
func (h *thr) wait(kind int64, enter bool, now, loc, target int64, name string, off int64) {
	switch {
	case enter && h.waitKind == 0:
		h.waitKind, h.waitLoc, h.waitTarget = kind, loc, target
		h.emit(trace.SyncBegin, now, kind, 0, target, loc)
		h.emit(trace.SyncWaitBegin, now, kind, 0, target)
	case enter:
	case h.waitKind == kind:
		h.endWait(now)
	default:
		h.c.orphan.add("%s: offset %d: Leave of %s without its Enter; skipped", h.c.a.evtPath(h.c.p.locations[h.t].ID), off, name)
	}
}

// endWait ends the wait for other threads the thread is in, if any.
func (h *thr) endWait(now int64) {
	kind := h.waitKind
	if kind == 0 {
		return
	}
	h.waitKind = 0
	h.emit(trace.SyncWaitEnd, now, kind, 0, h.waitTarget)
	h.emit(trace.SyncEnd, now, kind, 0, h.waitTarget, h.waitLoc)
}

// threadType is location t's type: the initial thread, an OpenMP worker,
// a thread the program started (ThreadBegin records: pthreads, and the
// threads Score-P finds running instrumented code, its "orphan threads",
// such as std::thread's), or a thread of unknown kind (a runtime helper),
// which the breakdown and POP leave out.
func (c *conv) threadType(t int) int {
	switch {
	case t == 0:
		return trace.ThreadInitial
	case c.omp[t]:
		return trace.ThreadWorker
	case c.user[t], c.taskWorker(t):
		return trace.ThreadUser
	}
	return trace.ThreadUnknown
}

// taskWorker reports whether location t is a worker thread of a task
// runtime: not the initial thread, no OpenMP thread, no ThreadBegin, and it
// enters regions of role TASK outside OpenMP (APEX writes each HPX task it
// runs as one, paradigm USER). Such a thread lives from its first record to
// its last and works inside its regions: between them it waits for work
// (trace.SyncWorkerIdle).
func (c *conv) taskWorker(t int) bool {
	return t != 0 && !c.omp[t] && !c.user[t] && c.worker[t]
}

// workerIdle begins or ends a task-runtime worker's wait for work: it
// ends at the thread's next Enter, and begins at a Leave that leaves no
// region open, but at its last record.
func (h *thr) workerIdle(enter bool, now int64) {
	c := h.c
	switch {
	case enter && h.waitKind == trace.SyncWorkerIdle:
		h.endWait(now)
	case !enter && h.waitKind == 0 && len(h.codes) == 0 && h.mpiDepth == 0 && now < c.last[h.t]:
		if c.idleLoc < 0 {
			c.idleLoc = c.w.AddLocation(trace.Location{Func: "(waiting for work)"})
		}
		h.wait(trace.SyncWorkerIdle, true, now, c.idleLoc, 0, "", h.off)
	}
}

// createLocation returns the location of task id's construct: the
// task-creation region the thread is in, else the TASK region the task
// runs in, else the unknown one.
func (h *thr) createLocation(id int64) int64 {
	if h.createLoc >= 0 {
		return h.createLoc
	}
	c := h.c
	if reg, ok := c.taskRegion.get(id); ok {
		if r := c.a.Defs.Region(reg); r != nil {
			return c.regionLoc(reg, r)
		}
	}
	return c.unknownLoc()
}

func (h *thr) beginImplicit(now, par, size, num int64, legacy bool) {
	c := h.c
	c.seq[h.t]++
	impl := trace.MakeID(h.out, c.seq[h.t])
	h.pars = append(h.pars, parFrame{par: par, impl: impl, size: size, num: num, legacy: legacy})
	h.stack = append(h.stack, impl)
	h.emit(trace.ImplicitTaskBegin, now, par, impl, size, num, ompt.TaskImplicit)
}

func (h *thr) endImplicit(now int64, legacy bool) {
	n := len(h.pars)
	if n == 0 || h.pars[n-1].legacy != legacy {
		return
	}
	f := h.pars[n-1]
	h.pars = h.pars[:n-1]
	for len(h.stack) > 0 && h.cur() != f.impl {
		h.stack = h.stack[:len(h.stack)-1]
	}
	if len(h.stack) > 0 {
		h.stack = h.stack[:len(h.stack)-1]
	}
	h.emit(trace.ImplicitTaskEnd, now, f.par, f.impl, f.size, f.num, ompt.TaskImplicit)
}

// switchTo records a task switch when it changes the running task (a
// switch back to the implicit task after a completion is already implied).
// A switch to a task suspended lower on this thread's stack returns to it:
// the tasks above it have left the thread. LLVM's libomp runs an untied
// task's first part and re-queues it, switching back to the task that was
// running; it may resume on another thread, and left on this stack it
// would be the task a later completion here returns to.
func (h *thr) switchTo(now, next int64) {
	if next == 0 || next == h.cur() {
		return
	}
	h.emit(trace.TaskSchedule, now, h.cur(), ompt.StatusSwitch, next)
	for i := len(h.stack) - 2; i >= 0; i-- {
		if h.stack[i] == next {
			h.stack = h.stack[:i+1]
			return
		}
	}
	h.stack = append(h.stack, next)
}

// complete records the completion of task id, which must be the running
// task; it reports whether it was.
func (h *thr) complete(now, id int64) bool {
	if id == 0 || h.cur() != id {
		return false
	}
	h.stack = h.stack[:len(h.stack)-1]
	h.emit(trace.TaskSchedule, now, id, ompt.StatusComplete, h.cur())
	return true
}

// pthreadLock sets the wait ids of POSIX threads mutexes apart from
// OpenMP's: both paradigms number their locks from 0 (uint32).
const pthreadLock = 1 << 32

// lockOf returns the wait id of the lock a lock record names, whether it
// is a POSIX threads mutex, and false for a lock of another paradigm than
// OpenMP and pthread (OTF2 2.0's ThreadAcquireLock and ThreadReleaseLock
// name the paradigm first; OTF2 1.x's OmpAcquireLock and OmpReleaseLock
// are OpenMP's).
func lockOf(e *Event) (id uint64, pthread, ok bool) {
	if e.Type == EvThreadAcquireLock || e.Type == EvThreadReleaseLock {
		switch e.A[0] {
		case paradigmOpenMP:
			return e.A[1], false, true
		case paradigmPthread:
			return pthreadLock | e.A[1], true, true
		}
		return 0, false, false
	}
	return e.A[0], false, true
}

// acquire records the acquisition of lock id (a Score-P lock handle:
// OpenMP critical sections, ordered blocks and locks alike, or a pthread
// mutex): the wait from the entry of the critical section, ordered block
// or lock call that acquires it (the OMPT adapter's and OPARI2's; Score-P's
// pthread_mutex_lock and pthread_mutex_trylock), as the collector records
// mutex_acquire and mutex_acquired; without one at the acquisition itself
// (the reacquisition of a condition wait's mutex, at the wait's location).
// A nest lock (a recursive mutex) its owner takes again is no new
// acquisition (OMPT reports the first and the last release only).
func (h *thr) acquire(now int64, id uint64, pthread bool) {
	if l, ok := h.locks[id]; ok {
		l.depth++
		h.locks[id] = l
		h.mutexFrom = -1
		return
	}
	from, kind, loc := h.mutexFrom, h.mutexKind, h.mutexLoc
	if from < 0 || (kind == trace.MutexPthread) != pthread {
		from, kind, loc = now, ompt.MutexLock, h.c.unknownLoc()
		if pthread {
			kind = trace.MutexPthread
			if h.waitKind == trace.SyncCondWait {
				loc = h.waitLoc
			}
		}
	}
	h.mutexFrom = -1
	if h.locks == nil {
		h.locks = map[uint64]heldLock{}
	}
	h.locks[id] = heldLock{kind: kind, loc: loc, depth: 1}
	h.emit(trace.MutexAcquire, from, kind, int64(id), loc)
	h.emit(trace.MutexAcquired, now, kind, int64(id), loc)
}

// release records the release of lock id, at its last release by the
// thread; a lock the thread does not hold is left to the model's check.
func (h *thr) release(now int64, id uint64, pthread bool) {
	l, ok := h.locks[id]
	if !ok {
		kind := int64(ompt.MutexLock)
		if pthread {
			kind = trace.MutexPthread
		}
		h.emit(trace.MutexReleased, now, kind, int64(id), h.c.unknownLoc())
		return
	}
	if l.depth--; l.depth > 0 {
		h.locks[id] = l
		return
	}
	delete(h.locks, id)
	h.emit(trace.MutexReleased, now, l.kind, int64(id), l.loc)
}

// badComplete counts a completion the switches do not explain (a runtime
// or measurement quirk): the schedule is kept as it is.
func (c *conv) badComplete(file string, off int64, what string) {
	if c.st.BadCompletes == 0 {
		c.st.Warnings = append(c.st.Warnings, fmt.Sprintf("%s: offset %d: task completion (%s) of a task not running on this location, ignored", file, off, what))
	}
	c.st.BadCompletes++
}

// teamPos returns the size of an OpenMP thread team and the position of
// location loc (thread t of the process) in it.
func (c *conv) teamPos(team uint32, loc uint64, t int) (size, num int64) {
	g := c.a.Defs
	cm := g.Comm(team)
	if cm == nil {
		return 1, 0
	}
	grp := g.Group(cm.Group)
	if grp == nil {
		return 1, 0
	}
	members := grp.Members
	var locs []uint64
	if grp.Type == groupTypeCommGroup {
		// indices into the paradigm's COMM_LOCATIONS group
		g.groups.each(func(_ uint32, og **Group) {
			if locs == nil && (*og).Type == groupTypeCommLocs && (*og).Paradigm == grp.Paradigm {
				locs = (*og).Members
			}
		})
	}
	num = int64(t)
	for i, m := range members {
		l := m
		if locs != nil && m < uint64(len(locs)) {
			l = locs[m]
		}
		if l == loc {
			num = int64(i)
		}
	}
	return int64(len(members)), num
}

// syncKind classifies an OpenMP synchronization region. Score-P's OMPT
// adapter gives taskwait and taskgroup regions the role BARRIER, OPARI2
// the role TASK_WAIT: the name tells them apart.
func syncKind(r *Region) int64 {
	name := r.Name
	switch {
	case strings.Contains(name, "taskgroup"):
		return ompt.SyncTaskgroup
	case strings.Contains(name, "taskwait"):
		return ompt.SyncTaskwait
	}
	switch r.Role {
	case roleImplicitBarrier:
		return ompt.SyncBarrierImplicitParallel
	case roleBarrier:
		return ompt.SyncBarrierExplicit
	case roleTaskWait:
		return ompt.SyncTaskwait
	}
	return 0
}

// paradigmMeasurement is Score-P's own activity (buffer flushes, ...).
const paradigmMeasurement = 6

// Region classes: what Enter and Leave of a region become.
const (
	regUnset    = iota
	regMPI      // mpi_enter / mpi_exit
	regSync     // sync region and its wait (kind in regInfo.arg)
	regCreate   // names the task created inside it
	regWork     // work_begin / work_end (OMPT work type in arg)
	regParallel // the implicit task of OTF2 1.x
	regMutex    // a critical section, ordered block or lock-API call: where a mutex wait begins (mutex kind in arg)
	regWait     // a wait for other threads (sync kind in arg): pthread_join, pthread_cond_wait
	regNothing  // other OpenMP regions, the measurement system's
	regCode     // region_enter / region_exit
)

// regInfo is what the conversion needs of a region, computed at its first
// Enter or Leave: its class, and its ptrace string and location ids.
type regInfo struct {
	class    uint8
	arg      int64
	str, loc int64 // −1 until defined
	probed   bool  // MPI_Mrecv or MPI_Imrecv
	neighbor bool  // a neighbourhood collective (Stats.NeighborCalls)
	coll     bool  // an MPI collective (MPI_Barrier, MPI_Allreduce…)
	pscw     uint8 // MPI_Win_post, _start, _complete, _wait or _test (pscw.go)
	lock     uint8 // MPI_Win_lock, _lock_all, _unlock or _unlock_all (rmalock.go)
	code     bool  // also a code region (regMutex of pthread_mutex_lock)
}

// info returns region id's conversion facts: a slice indexed by id for the
// definitions' dense ids, a map for the others.
func (c *conv) info(id uint32, r *Region) *regInfo {
	var ri *regInfo
	if int(id) < len(c.rinfo) {
		ri = &c.rinfo[id]
	} else {
		if ri = c.rsparse[id]; ri == nil {
			ri = &regInfo{}
			c.rsparse[id] = ri
		}
	}
	if ri.class != regUnset {
		return ri
	}
	ri.str, ri.loc = -1, -1
	ri.class = regCode
	switch r.Paradigm {
	case paradigmMPI:
		ri.class = regMPI
		ri.probed = r.Name == "MPI_Mrecv" || r.Name == "MPI_Imrecv"
		ri.neighbor = strings.HasPrefix(r.Name, "MPI_Neighbor_") || strings.HasPrefix(r.Name, "MPI_Ineighbor_")
		ri.coll = collectiveNames[r.Name]
		ri.pscw = pscwCalls[r.Name]
		ri.lock = lockCallOf[r.Name]
	case paradigmMeasurement:
		ri.class = regNothing
	case paradigmOpenMP:
		ri.class = regNothing
		if kind := syncKind(r); kind != 0 {
			ri.class, ri.arg = regSync, kind
			break
		}
		switch r.Role {
		case roleCritical:
			ri.class, ri.arg = regMutex, ompt.MutexCritical
		case roleOrdered:
			// The OMPT adapter enters an ordered block's region at its
			// mutex_acquire and records its acquisition as a lock's;
			// OPARI2's has no lock records, and no wait
			ri.class, ri.arg = regMutex, ompt.MutexOrdered
		case roleWrapper:
			// OPARI2's lock API wrappers; omp_unset_*, omp_init_* and
			// omp_destroy_* wait for nothing
			if k, ok := lockCalls[r.Name]; ok {
				ri.class, ri.arg = regMutex, k
			}
		case roleTaskCreate:
			ri.class = regCreate
		case roleLoop:
			ri.class, ri.arg = regWork, ompt.WorkLoop
		case roleSections:
			ri.class, ri.arg = regWork, ompt.WorkSections
		case roleSingle:
			ri.class, ri.arg = regWork, ompt.WorkSingleExecutor
		case roleWorkshare:
			ri.class, ri.arg = regWork, ompt.WorkWorkshare
		case roleParallel:
			ri.class = regParallel
		}
	default:
		switch {
		case joinRegion(r):
			ri.class, ri.arg = regWait, joinKind
		case r.Paradigm == paradigmPthread && (r.Name == "pthread_cond_wait" || r.Name == "pthread_cond_timedwait"):
			// Score-P's condition waits (role WRAPPER), around the release
			// of their mutex and its reacquisition after the wake-up
			ri.class, ri.arg = regWait, trace.SyncCondWait
		case r.Paradigm == paradigmPthread && (r.Name == "pthread_mutex_lock" || r.Name == "pthread_mutex_trylock"):
			// Score-P's mutex calls: the wait for the acquisition inside
			// (ThreadAcquireLock), code regions as before
			ri.class, ri.arg, ri.code = regMutex, trace.MutexPthread, true
		}
	}
	return ri
}

// joinRegion reports whether Enter and Leave of region r are a thread's
// wait for another to end: a region of role THREAD_WAIT outside MPI,
// OpenMP and the measurement system (Score-P's pthread_join, paradigm
// pthread).
func joinRegion(r *Region) bool {
	return r.Role == roleThreadWait && r.Paradigm != paradigmMPI && r.Paradigm != paradigmOpenMP && r.Paradigm != paradigmMeasurement
}

func (c *conv) infoStr(ri *regInfo, r *Region) int64 {
	if ri.str < 0 {
		ri.str = c.w.String(r.Name)
	}
	return ri.str
}

func (c *conv) infoLoc(ri *regInfo, id uint32, r *Region) int64 {
	if ri.loc < 0 {
		ri.loc = c.regionLoc(id, r)
	}
	return ri.loc
}

// region converts Enter/Leave of a region by paradigm and role.
func (c *conv) region(h *thr, enter bool, now int64, id uint32, r *Region) {
	ri := c.info(id, r)
	switch ri.class {
	case regMPI:
		if enter {
			h.emit(trace.MPIEnter, now, c.infoStr(ri, r), -1) // the call site is not in the archive
		} else {
			h.emit(trace.MPIExit, now, c.infoStr(ri, r))
		}
		if ri.probed {
			h.inProbed = enter
			if enter {
				c.st.ProbedRecvs++
			}
		}
		if ri.coll {
			c.collective(h, enter, r.Name)
		}
		if ri.neighbor && enter {
			c.st.NeighborCalls++
		}
	case regSync:
		loc := c.infoLoc(ri, id, r)
		kind, par, task := ri.arg, h.par().par, h.cur()
		if enter {
			h.emit(trace.SyncBegin, now, kind, par, task, loc)
			h.emit(trace.SyncWaitBegin, now, kind, par, task)
		} else {
			h.emit(trace.SyncWaitEnd, now, kind, par, task)
			h.emit(trace.SyncEnd, now, kind, par, task, loc)
		}
	case regCreate:
		if enter {
			h.createLoc = c.infoLoc(ri, id, r)
		} else {
			h.createLoc = -1
		}
	case regMutex:
		// The wait begins here; the lock id comes with the acquisition
		// (ThreadAcquireLock), which a failed omp_test_lock or
		// pthread_mutex_trylock does not have.
		if ri.loc < 0 && r.Line == 0 {
			// OPARI2's lock API wrappers have the file "OMP", Score-P's
			// pthread wrappers "PTHREAD", no line: named by the call
			ri.loc = c.w.AddLocation(trace.Location{Func: r.Name})
		}
		h.mutexFrom, h.mutexKind, h.mutexLoc = -1, ri.arg, c.infoLoc(ri, id, r)
		if enter {
			h.mutexFrom = now
		}
		if ri.code {
			h.codeRegion(enter, now, id, c.infoStr(ri, r), r)
		}
	case regWait:
		if ri.loc < 0 && r.Line == 0 {
			// Score-P's pthread wrappers have the file "PTHREAD", no
			// line: named by the call
			ri.loc = c.w.AddLocation(trace.Location{Func: r.Name})
		}
		target := int64(0)
		if ri.arg == joinKind && enter && h.waitKind != joinKind {
			// the k-th join the first pass found (it counts the joins
			// entered outside a join)
			if k := c.joinNext[h.t]; k < len(c.joins[h.t]) && h.waitKind == 0 {
				target = c.began(c.joins[h.t][k])
			}
			c.joinNext[h.t]++
		}
		h.wait(ri.arg, enter, now, c.infoLoc(ri, id, r), target, r.Name, h.off)
	case regWork:
		k := trace.WorkEnd
		if enter {
			k = trace.WorkBegin
		}
		h.emit(k, now, ri.arg, 0, c.infoLoc(ri, id, r))
	case regParallel:
		// OTF2 1.x: the parallel region's Enter and Leave on each thread
		// are its implicit task (there is no ThreadTeamBegin).
		if c.legacy && !c.hasTeams() {
			if enter {
				h.legacyEnter(now)
			} else {
				h.endImplicit(now, true)
			}
		}
	case regCode:
		// Code: user and compiler-instrumented functions (and the regions
		// of other paradigms: pthread, CUDA, I/O...), kept so that wait
		// states and delay costs name the code an MPI call is in, nested
		// (nesting.go).
		h.codeRegion(enter, now, id, c.infoStr(ri, r), r)
	}
	// regNothing: other OpenMP regions (the task bodies, critical, master,
	// the lock API wrappers...) carry nothing the model needs: the task
	// switches, forks and teams do; the measurement system's are its own.
}

// hasTeams reports whether the process records ThreadTeamBegin (OTF2 1.2
// and later), which then marks implicit tasks instead of the parallel
// regions' Enter and Leave.
func (c *conv) hasTeams() bool { return len(c.teams) > 0 }

// legacyEnter begins the implicit task of an OTF2 1.x parallel region on
// this thread: the k-th region entered on a worker belongs to the k-th
// fork of the process's master (nested parallelism is not modelled there).
func (h *thr) legacyEnter(now int64) {
	c := h.c
	var par int64
	if h.t == 0 {
		if n := len(h.forks); n > 0 {
			par = h.forks[n-1]
		}
	} else if h.legacyK < len(c.forks[0]) {
		par = c.forks[0][h.legacyK].par
	}
	h.legacyK++
	if par == 0 {
		return
	}
	size := int64(0)
	for t := range c.p.locations {
		if c.omp[t] {
			size++
		}
	}
	h.beginImplicit(now, par, max(size, 1), int64(h.out), true)
}

// collRoot returns the world rank of a collective's root as an OTF2
// collective record names it on communicator cm (−1: none).
func (c *conv) collRoot(cm uint32, root uint64) int64 {
	switch root {
	case collRootSelf: // MPI_ROOT: the root of an intercommunicator's collective
		return int64(c.p.rank)
	case collRootThisGroup: // MPI_PROC_NULL: the root's group, no part in it
		return -1
	}
	return c.peer(cm, root)
}

// otherNBC takes the next request of OTF2 id id started on another
// location and completed by this one (pairNBC), ok false when none is
// left. Its operation, communicator and root are the start's, as pass 2
// converts them there: req 0 when the start is skipped (a communicator of
// no process, a record cut in a gap).
func (c *conv) otherNBC(id uint64) (nbcOpen, bool) {
	q := c.nbcOther[id]
	if len(q) == 0 {
		return nbcOpen{}, false
	}
	d := q[0]
	c.nbcOther[id] = q[1:]
	ci, ok := c.comm(d.comm)
	if ok {
		ci, ok = c.cutComm(ci, d.at)
	}
	if !ok {
		return nbcOpen{}, true
	}
	return nbcOpen{req: d.req, op: opOf(collOps[:], d.op), ci: ci, root: c.collRoot(d.comm, d.root)}, true
}
