package sim

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/ptrace-dev/ptrace/internal/idmap"
	"github.com/ptrace-dev/ptrace/internal/lists"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/trace"
)

// FragKind is what a node of the fragment graph stands for.
type FragKind uint8

const (
	FragTask     FragKind = iota // an explicit task running, between two of its scheduling points
	FragImplicit                 // an implicit task of a parallel region running: parallel-region code
	FragPost                     // the start of an MPI call, where its sends leave (weight 0)
	FragMPI                      // an MPI call's own cost: its duration less the time it waited for a partner
	FragJoin                     // a join point: taskwait, taskgroup, barrier (weight 0)
	FragLatency                  // the observed latency of a remote task dependence
	FragSerial                   // the initial task running: serial code outside parallel regions
)

var fragNames = [...]string{"task", "region", "mpi-post", "mpi", "join", "latency", "serial"}

func (k FragKind) String() string {
	if int(k) < len(fragNames) {
		return fragNames[k]
	}
	return "?"
}

// Frags is one process's fragment graph, the critical path's DAG (issue
// #6): tasks split at their scheduling points, MPI calls, joins, with edges
// for continuation, creation, dependences, taskwait/taskgroup/barrier joins,
// fork/join of parallel regions and the undeferred-child wait. Node weights
// are observed durations after clock synchronization. Cross-process edges
// are declared through the event maps: SendNode gives the node a send-like
// event (mpi_send, coll_begin, remote_dep_out) leaves from, RecvNode the
// node a receive-like event (mpi_recv, coll_end, remote_dep_in) arrives at.
type Frags struct {
	// Attrs holds each node's kind, thread, construct and start, compactly:
	// only the critical path's nodes are looked up one by one.
	Attrs Attrs
	// chained marks, a bit a node, a node whose predecessor node (n−1)
	// has an edge to it (Chained): that edge is not in Edges. Most edges
	// of an MPI-heavy process join one fragment to the next node made
	// (42 % of halo's), and the critical path's DAG takes them as chains
	// (graph.Builder.AddNode), so neither the edge lists nor the DAG's
	// adjacency hold them.
	chained []uint64
	// Weight is each node's weight once UnpackWeights made it: from the
	// simulation to the critical path the weights stay packed (weights, a
	// uvarint each in blocks of fragBlock nodes, nw of them), about 3
	// bytes a node instead of 8, until DrainWeights or UnpackWeights takes
	// them.
	Weight  []int64
	weights blockStream
	nw      int
	// narrowW: every packed weight is known to lie in [0, 2³²)
	// (NarrowWeights).
	narrowW bool
	// Work is T1, the weight of the task, region and serial-code nodes
	// (the critical path's parallelism), summed once the weights are final.
	Work int64

	// Edges are the local edges but for the chains, (source, target) in
	// the order made, packed with each source as its difference from the
	// previous edge's (packed.NewPairsByA: about 2 bytes an edge, not 8).
	Edges packed.Pairs

	SendNode EventNodes
	RecvNode EventNodes
	// outside marks the threads of type unknown (nil: none), and taskless
	// holds each thread's MPI calls entered while no task was current on
	// it, as pairs of event indices (enter, exit; a last one without its
	// exit runs to the thread's end): their events are in no fragment
	// (OutsideGraph).
	outside  []bool
	taskless [][]int64

	// MPISites are the MPI calls' sites: the Loc of a FragMPI or FragPost
	// node is an index here.
	MPISites []MPISite

	// first and last give each task's first and last fragment (-1 when
	// it never ran), for the task graph and the slack of tasks, packed:
	// the nodes of tasks made one after another are close (about a byte a
	// task instead of four).
	first, last packed.Int32s
}

// OutsideGraph reports whether thread th's events are in no fragment by
// design: a thread of type unknown (trace.ThreadUnknown, an OTF2
// archive's pthread or runtime helper) runs no task the simulation
// models, so its MPI calls are no nodes. A cross-process edge from one of
// its events (a message it sent, a receive or a completing call another
// rank waited for: a Late Receiver's or a wait for progress's source) has
// no source node then, as an edge to one of its events has no target:
// the critical path leaves both out and does not cross the thread.
//
// The same holds for an MPI call made while no task was current on its
// thread (on a thread of type other, one of no OpenMP runtime the
// collector recorded): the call is no node (FragPass.After), and neither
// are its events. OutsideGraph reports whether event ev of thread th is
// such an event.
func (f *Frags) OutsideGraph(th int, ev int64) bool {
	if th < 0 {
		return false
	}
	if th < len(f.outside) && f.outside[th] {
		return true
	}
	if th >= len(f.taskless) {
		return false
	}
	l := f.taskless[th]
	// The last span that begins at or before ev.
	k := sort.Search(len(l)/2+len(l)%2, func(k int) bool { return l[2*k] > ev }) - 1
	return k >= 0 && (2*k+1 == len(l) || ev <= l[2*k+1])
}

// Chained reports whether node n−1 has an edge to node n (not in Edges).
func (f *Frags) Chained(n int32) bool { return f.chained[n/64]&(1<<(n%64)) != 0 }

// DropChained drops the chain marks, once the critical path's DAG has them.
func (f *Frags) DropChained() { f.chained = nil }

// FirstOf returns task t's first fragment, -1 when it never ran.
func (f *Frags) FirstOf(t Task) int32 { return f.first.At(int(t)) }

// LastOf returns task t's last fragment, -1 when it never ran. Only while
// the pass's DepsApart kept it (FragPass.Take) and DropLast did not drop it.
func (f *Frags) LastOf(t Task) int32 { return f.last.At(int(t)) }

// DropLast drops the tasks' last fragments, once the dependences are edges.
func (f *Frags) DropLast() { f.last = packed.Int32s{} }

// LastsInto returns every task's last fragment (LastOf), unpacked into
// dst's array (grown if it has no room): 4 bytes a task, for lookups in
// no order.
func (f *Frags) LastsInto(dst []int32) []int32 { return f.last.AppendTo(dst[:0]) }

// DropFirst drops the tasks' first fragments (FirstOf).
func (f *Frags) DropFirst() { f.first = packed.Int32s{} }

// Park writes the edges and the tasks' first and last fragments to sp
// until Unpark, for a while nothing reads them (the critical path's task
// graph); on an error what was not written stays. Edges streamed to the
// spill file (FragPass.Spill) stay there: the DAG's build reads them
// from it.
func (f *Frags) Park(sp SpillFile) error {
	if err := f.Edges.Park(sp); err != nil {
		return err
	}
	if err := f.first.Park(sp); err != nil {
		return err
	}
	return f.last.Park(sp)
}

// Unpark reads back what Park wrote.
func (f *Frags) Unpark() error {
	return errors.Join(f.Edges.Unpark(), f.first.Unpark(), f.last.Unpark())
}

// DropTasks drops the tasks' first and last fragments.
func (f *Frags) DropTasks() { f.first, f.last = packed.Int32s{}, packed.Int32s{} }

// Len returns the number of nodes.
func (f *Frags) Len() int { return f.Attrs.Len() }

// UnpackWeights appends the nodes' weights to dst, makes Weight a view of
// them and drops the packed form, for a reader that indexes them (the
// tests' reference paths); the critical path drains them into a narrower
// column instead (DrainWeights).
func (f *Frags) UnpackWeights(dst []int64) []int64 {
	start := len(dst)
	if f.Weight != nil {
		dst = append(dst, f.Weight...)
	} else {
		dst = slices.Grow(dst, f.nw)
		f.eachWeight(func(w int64) { dst = append(dst, w) })
	}
	f.dropWeights(dst[start:len(dst):len(dst)])
	return dst
}

// eachWeight calls fn with every packed weight in node order.
func (f *Frags) eachWeight(fn func(w int64)) {
	r := blockReader{s: &f.weights}
	for b := 0; b*fragBlock < f.nw; b++ {
		d, pos := r.block(b), 0
		for range min(fragBlock, f.nw-b*fragBlock) {
			w, k := binary.Uvarint(d[pos:])
			pos += k
			fn(int64(w))
		}
	}
}

// PlanWeights counts the nodes' weights, in node order, into p, and
// keeps them: for the framed column DrainWeightsTo makes.
func (f *Frags) PlanWeights(p *narrow.FramedPlan) {
	if f.Weight != nil {
		for _, w := range f.Weight {
			p.Add(w)
		}
		return
	}
	f.eachWeight(p.Add)
}

// DrainWeightsTo appends every node's weight, in node order, to b, and
// drops them, as DrainWeights does (with no call a weight).
func (f *Frags) DrainWeightsTo(b *narrow.FramedBuilder) {
	if f.Weight != nil {
		for _, w := range f.Weight {
			b.Append(w)
		}
	} else {
		f.eachWeight(b.Append)
	}
	f.dropWeights(nil)
}

// DrainWeights calls fn with every node's weight in node order and drops
// them (packed, or Weight once unpacked): the critical path moves them
// into a narrower column of its rank.
func (f *Frags) DrainWeights(fn func(w int64)) {
	if f.Weight != nil {
		for _, w := range f.Weight {
			fn(w)
		}
	} else {
		f.eachWeight(fn)
	}
	f.dropWeights(nil)
}

// dropWeights drops the packed weights, keeping a failed read's error
// (Err), and makes w the unpacked ones.
func (f *Frags) dropWeights(w []int64) {
	f.Weight, f.weights, f.nw, f.narrowW = w, blockStream{err: f.weights.err}, 0, false
}

// NarrowWeights reports whether the weights are packed (not drained or
// unpacked) and known to lie in [0, 2³²): the fragment pass saw none
// outside as it encoded them. A false answer says nothing.
func (f *Frags) NarrowWeights() bool { return f.narrowW && f.Weight == nil }

// EachWeight calls fn with every packed weight in node order and keeps
// them (WeightCursor reads them again): the critical path fills its
// replay's store of weights from them directly, where draining them into
// a column first decoded them twice and the column once more. A failed
// read of the spill file gives zeros from there (Err).
func (f *Frags) EachWeight(fn func(w int64)) { f.eachWeight(fn) }

// WeightCursor reads the packed weights of some nodes of many (a
// critical path's), decoding a block's weights only up to the one asked
// for, and on from there for a later one of the same block. A block in
// the spill file is read alone, into a buffer of its size (as
// AttrCursor's): a path through thousands of processes holds a cursor
// for each, where a reader's window of spillBatch bytes would be 64 KiB
// a process.
type WeightCursor struct {
	f   *Frags
	buf []byte
	b   int    // the block w holds the first k weights of, −1 none
	d   []byte // block b's bytes, pos the offset of weight k
	pos int
	k   int
	w   [fragBlock]int64
}

// WeightCursor returns a cursor over f's packed weights, which must not
// change while it is used.
func (f *Frags) WeightCursor() *WeightCursor {
	return &WeightCursor{f: f, b: -1}
}

// Reset makes c a cursor over f's packed weights, keeping its buffers.
func (c *WeightCursor) Reset(f *Frags) { c.f, c.b = f, -1 }

// At returns node n's weight.
func (c *WeightCursor) At(n int32) int64 {
	if n < 0 || int(n) >= c.f.nw {
		panic(fmt.Sprintf("sim: weight of node %d of %d", n, c.f.nw))
	}
	if b := int(n / fragBlock); b != c.b {
		c.b, c.d, c.pos, c.k = b, c.f.weights.read(b, &c.buf), 0, 0
	}
	for i := int(n % fragBlock); c.k <= i; c.k++ {
		w, m := binary.Uvarint(c.d[c.pos:])
		c.pos += m
		c.w[c.k] = int64(w)
	}
	return c.w[n%fragBlock]
}

// Err returns the first error reading the attributes or the weights back
// from the spill file (the values read since are zero).
func (f *Frags) Err() error {
	if err := f.Attrs.Err(); err != nil {
		return err
	}
	if f.weights.err != nil {
		return fmt.Errorf("fragment weights: %w", f.weights.err)
	}
	return nil
}

// Spill writes the attributes and weights still in memory to sp, the
// file they were streamed to if any (FragPass.Spill): what the
// simulation had not written out, its last chunks. On an error what was
// not written stays in memory.
func (f *Frags) Spill(sp SpillFile) error {
	if err := f.Attrs.Spill(sp); err != nil {
		return err
	}
	return f.weights.spill(sp)
}

// WeightsOf returns the weights of nodes, in their order, with one pass
// over the packed weights (or from Weight once unpacked): the task graph
// reads its latency nodes' few before the critical path unpacks them all.
func (f *Frags) WeightsOf(nodes []int32) []int64 {
	out := make([]int64, len(nodes))
	if f.Weight != nil {
		for k, n := range nodes {
			out[k] = f.Weight[n]
		}
		return out
	}
	order := make([]int32, len(nodes))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(nodes[a], nodes[b]) })
	var d []byte
	r := blockReader{s: &f.weights}
	pos, at, w := 0, int32(-1), int64(0) // the reading's position, its last node and that node's weight
	for _, k := range order {
		n := nodes[k]
		if n < 0 || int(n) >= f.nw {
			panic(fmt.Sprintf("sim: weight of node %d of %d", n, f.nw))
		}
		if n > at {
			if at < 0 || n/fragBlock != at/fragBlock {
				d, pos, at = r.block(int(n/fragBlock)), 0, n/fragBlock*fragBlock-1
			}
			for ; at < n; at++ {
				x, m := binary.Uvarint(d[pos:])
				pos += m
				w = int64(x)
			}
		}
		out[k] = w
	}
	return out
}

// Attr returns node n's attributes.
func (f *Frags) Attr(n int32) Attr { return f.Attrs.At(n) }

// MPISite is an MPI call site: the function (a string id) and the call's
// location (a location id, −1 when the trace does not say).
type MPISite struct{ Func, Loc int64 }

// PredTime reports the final time of the predecessor of a receive-like
// event (from the cross-process edge exchange), to take an MPI call's wait
// out of its weight and to weigh a remote dependence's latency.
type PredTime func(thread int, index int64) (int64, bool)

// EventRef names an event of a process: its thread and index there.
type EventRef struct {
	Thread int32
	Event  int64
}

// PollRef is a polled request (trace kind mpi_polled): the event that
// says a Test-family call polled it (Thread, Event) and the event that
// completed it (DoneThread, DoneEvent), whose predecessor's time ends the
// polling's wait.
type PollRef struct {
	Thread     int32
	Event      int64
	DoneThread int32
	DoneEvent  int64
}

// EventRef returns the mpi_polled event.
func (r PollRef) EventRef() EventRef { return EventRef{r.Thread, r.Event} }

// FragPass builds a process's Frags beside the simulation.
type FragPass struct {
	F    Frags // filled by Finish
	pred PredTime

	// Sources are events of receives that a Late Receiver edge leaves
	// from (the receive's start: an MPI_Irecv's mpi_recv_post, a blocking
	// receive's mpi_recv), and nonblocking collectives' coll_complete
	// events whose call's enter is a progress point another member waited
	// for (a wait for progress, waitstate), and rma_unlock events whose
	// MPI_Win_unlock's enter released a lock another epoch waited for
	// (Lock Contention), sorted by thread and event: each gets the post
	// node of its call in SendNode. The other side of those edges comes
	// through pred, at their mpi_send, mpi_request_done, coll_complete,
	// or the waiting epoch's rma_lock or rma_unlock.
	Sources []EventRef
	srcAt   refCursor // per thread: the next source to meet, in Sources

	// Polls are the process's polled requests, sorted by thread and
	// event (waitstate's): from its mpi_polled on, a thread's
	// Test-family calls wait for the completion's predecessor until that
	// predecessor's time, as the completing call does (pollUntil); that
	// part of them weighs nothing.
	Polls     []PollRef
	pollAt    refCursor // per thread: the next poll to meet, in Polls
	pollUntil []int64   // per thread: the latest such time met
	// The message's edge enters the polling thread where the
	// predecessor's time falls, not at the completing call: the
	// computation between two tests (or the test) going on then, from
	// that time on, follows the partner too. pollDone holds each polled
	// completion of its own thread and its predecessor's time until it is
	// met; pollStraddle, per thread, the fragment that the latest such
	// time fell inside (−1: none) and pollStraddleAt that time.
	pollDone       map[EventRef]int64
	pollStraddle   []int32
	pollStraddleAt []int64

	// DepsApart leaves the task dependence edges out of F.Src and F.Dst:
	// the caller adds Sim.DepEdges itself through F.LastOf and F.FirstOf
	// (Take then keeps LastOf), so that a trace's dependences are held once,
	// not as task pairs and again as fragment pairs.
	DepsApart bool

	// Spill, when set, takes the nodes' attributes and weights as the
	// pass encodes them, a chunk of 64 KiB at a time (blockStream's
	// streaming): the critical path reads back the attributes of its own
	// nodes and the weights in node order, so neither need stay in memory
	// through the simulation (26 MB of fib(30)'s simulation peak of
	// 150 MiB). It takes the edges too, a filled block of 64 KiB at a time
	// (packed.Pairs.StreamTo), which the DAG's build reads from it (3 MB
	// of BOTS health's simulation peak of 19 MiB, and as much at the
	// build's).
	Spill SpillFile

	// The nodes while the graph grows: the latest as records, the others
	// already encoded into the attributes and weights F takes at Finish
	// (fragNodes). The edges go straight into F.Edges, packed: their
	// doubling copies a few bytes an edge; the chains into chained, a bit
	// a node (F's at Finish).
	nodes   fragNodes
	chained []uint64

	// per is each thread's open fragment, in one record: an event reads
	// and writes several of its fields (one bounds check, one cache line)
	per []fragThread

	// Per task, in columns that cost memory only for the pages of tasks
	// that set them (a task runs long after its creation when every task
	// is created first; a page of tasks that never wait or have children
	// has no pending inputs nor completed children: pcol), or in runs of
	// one value (col32). The first and last fragments of a page's tasks
	// are packed as the graph keeps them once all have completed (fcol:
	// done marks the tasks counted, doneIn counts them per page).
	done     []uint64
	doneIn   []int32
	firstOf  fcol          // its first fragment, -1 none yet
	lastOf   fcol          // its last fragment, -1 none yet
	requeued requeuedFrags // its last fragment when it was switched out and re-queued
	pend     lcol          // pending inputs' cells
	doneKids lcol          // cells of completed children's last fragments
	// stacks holds, packed, the completed children's last fragments of
	// the tasks that had kidStackAfter children complete in a row (hot,
	// hotN: the last such task and its count) while no taskwait drained
	// them, and whose lists were sparse: a producer's whose children
	// complete out of order, so that its list is few runs of cells (8
	// bytes a child).
	stacks map[Task]*kidStack
	hot    Task
	hotN   int32
	// stackT's kidStack is stack (nil: none looked up): a producer's
	// children complete one after another, a map lookup each.
	stackT  Task
	stack   *kidStack
	created col32 // its creator's fragment ending at its creation
	bar     col32 // the barrier of its region it must complete before
	// The thread whose open fragment is a task's, as a column held it:
	// set by the thread opening it, cleared when it closes it, taken over
	// by another thread entering MPI in it. Each thread holds at most its
	// own current task's (holds), and opened marks the tasks some thread
	// holds, so the rare task open on another thread is found by a look at
	// the threads (holder), not from 4 bytes a task.
	holds  []bool
	opened []uint64
	// cells holds the pend and doneKids lists: the simulation's pool of
	// successor cells, which completed tasks give back as the lists grow.
	cells   *lists.Pool
	groupIn map[int32]int32
	// latest is, per region instance, the join node of its latest barrier
	// (−1 none): the one every member arrives at and most completions
	// feed. Barriers it replaced are in barriers, by region<<32 | index.
	latest   []barrierRef
	barriers map[int64]int32
	// signals holds, per condition variable or barrier of the program's
	// own threads (the sync events' identity), the fragment its latest
	// signal or arrival ended: the one a woken waiter's continuation
	// follows. nil until the process has one.
	signals map[int64]int32
	// releases holds, per POSIX threads mutex (its wait id), the fragment
	// its latest release ended, and wake per thread the one a condition
	// wait naming no condition variable (Score-P's) follows: the release
	// of its mutex before the thread reacquired it, the signaller's
	// (scout's reading of the same records). nil until a pthread mutex.
	releases map[int64]int32
	wake     []int32
	forkSrc  idmap.Map // parallel id → encountering fragment
	regionOf idmap.Map // parallel id → region instance

	// siteIdx indexes F.MPISites; recentSites are the last ones found
	// (an index past F.MPISites is none).
	siteIdx     map[MPISite]int32
	recentSites [4]int32

	// The user regions (region_enter, region_exit: an OTF2 archive's
	// compiler-instrumented functions, annotated phases) per thread,
	// innermost last, and the time the open fragment of serial or
	// parallel-region code spent in each (from codeAt on): the fragment
	// is named by the region it spent most time in. Nil where a trace has
	// no region events.
	regions [][]int64
	code    [][]CodeTime
	codeAt  []int64
}

// lazyOpen marks a thread's open fragment that is not a node yet: a
// fragment of serial code, parallel-region code or an MPI call's own cost
// that nothing has depended on so far (nothing waited for its task's next
// fragment when it opened, no event referred to it since). It becomes a
// node when something refers to it or when it closes having weighed
// anything; one that closes empty never exists. Such a fragment has one
// input (its task's previous fragment) and weighs nothing, so whatever
// would have followed it follows that input instead, with the same path
// lengths: on MPI-heavy traces half the nodes were these (back-to-back MPI
// calls, a worker resuming its implicit task between two explicit ones).
const lazyOpen = -2

// fragThread is a thread's open fragment in the fragment pass.
type fragThread struct {
	cur      int32    // open fragment, -1 none, lazyOpen not yet a node
	curTask  Task     // its task
	curKind  FragKind // its kind
	curLoc   int32    // its location (the call's index in F.MPISites for FragMPI)
	post     int32    // the open MPI call's post node, lazyOpen not yet one, -1 outside calls
	mpiDepth int32    // nesting depth of MPI calls
	since    int64    // when the open fragment's current piece began
	maxPred  int64    // latest predecessor time inside the open MPI call
}

// NewFragPass returns the pass; pred may be nil for a single-process trace.
func NewFragPass(pred PredTime) *FragPass {
	return &FragPass{pred: pred, groupIn: map[int32]int32{}, barriers: map[int64]int32{}}
}

func (p *FragPass) init(s *Sim) {
	n := len(s.Threads)
	p.per = make([]fragThread, n)
	for i := range p.per {
		p.per[i].cur, p.per[i].post = -1, -1
	}
	p.F.outside = slices.Clone(s.unmodelled)
	nt := s.Tasks.Len()
	p.cells = &s.succ
	if sp := s.Spare; sp != nil {
		f := &sp.frag
		p.nodes, p.latest = f.nodes, f.latest[:0]
		if f.barriers != nil {
			p.groupIn, p.barriers = f.groupIn, f.barriers
		}
		p.firstOf, p.lastOf = f.fcols[0], f.fcols[1]
		p.pend, p.doneKids = f.lcols[0], f.lcols[1]
		p.done, p.doneIn = f.done, f.doneIn
		p.created, p.bar, p.opened = f.cols[0], f.cols[1], f.opened
		*f = fragSpare{}
	}
	p.firstOf.reset(nt)
	p.lastOf.reset(nt)
	p.requeued.m.Clear()
	p.done = resetBits(p.done, nt)
	p.doneIn = cleared(p.doneIn, (nt+colPageLen-1)/colPageLen)
	p.pend.reset(nt)
	p.doneKids.reset(nt)
	clear(p.stacks)
	p.hot, p.hotN = NoTask, 0
	p.stackT, p.stack = NoTask, nil
	p.created.reset(nt, -1)
	p.bar.reset(nt, -1)
	p.opened = resetBits(p.opened, nt)
	p.holds = make([]bool, n)
	p.nodes.reset()
	p.nodes.streamTo(p.Spill)
	p.F.Edges = packed.NewPairsByA()
	if p.Spill != nil {
		p.F.Edges.StreamTo(p.Spill)
	}
}

// fragSpare is a FragPass's working state kept for the next process's
// (Sim.Spare): the per-task columns and tables, the nodes' ring and the
// maps, none of which outlives the pass's Finish.
type fragSpare struct {
	fcols    [2]fcol
	lcols    [2]lcol
	done     []uint64
	doneIn   []int32
	cols     [2]col32
	opened   []uint64
	latest   []barrierRef
	nodes    fragNodes       // emptied: its ring and table
	groupIn  map[int32]int32 // the maps, cleared; nil before a first pass
	barriers map[int64]int32
}

// recycle gives the pass's working state to s.Spare, if any.
func (p *FragPass) recycle(s *Sim) {
	if s.Spare == nil {
		return
	}
	clear(p.groupIn)
	clear(p.barriers)
	// The creators' frozen pages are read no more, and a next pass packs
	// its own: 0.6 MB on BOTS health, held to the rank's end.
	clear(p.created.froze)
	s.Spare.frag = fragSpare{
		fcols: [2]fcol{p.firstOf, p.lastOf},
		lcols: [2]lcol{p.pend, p.doneKids}, done: p.done, doneIn: p.doneIn,
		cols: [2]col32{p.created, p.bar}, opened: p.opened,
		latest: p.latest, nodes: p.nodes,
		groupIn: p.groupIn, barriers: p.barriers,
	}
	p.firstOf, p.lastOf, p.pend, p.doneKids = fcol{}, fcol{}, lcol{}, lcol{}
	p.requeued.m.Clear()
	p.done, p.doneIn = nil, nil
	p.created, p.bar, p.opened = col32{}, col32{}, nil
	p.cells, p.latest, p.nodes = nil, nil, fragNodes{}
	p.groupIn, p.barriers, p.signals, p.releases, p.wake = nil, nil, nil, nil, nil
	p.forkSrc.Clear()
	p.regionOf.Clear()
}

// Take returns the finished graph without the pass's per-task bookkeeping,
// so that what outlives the simulation is the graph alone (LastOf, which
// only the pass needs, is dropped too, unless DepsApart).
func (p *FragPass) Take() *Frags {
	f := p.F
	if !p.DepsApart {
		f.DropLast()
	}
	*p = FragPass{}
	return &f
}

// resetBits returns b as a bitset of n bits, all clear.
func resetBits(b []uint64, n int) []uint64 { return cleared(b, (n+63)/64) }

func fill(s []int32, v int32) []int32 {
	for i := range s {
		s[i] = v
	}
	return s
}

func (p *FragPass) node(k FragKind, th int, loc int32, start int64) int32 {
	n := p.nodes.add(k, th, loc, start)
	if n%64 == 0 {
		p.chained = append(p.chained, 0)
	}
	return n
}

func (p *FragPass) edge(a, b int32) {
	switch {
	case a < 0 || b < 0:
	case b == a+1 && p.chained[b/64]&(1<<(b%64)) == 0:
		p.chained[b/64] |= 1 << (b % 64)
	default:
		p.F.Edges.Append(a, b)
	}
}

// push adds node n to the cell list at *head.
func (p *FragPass) push(head *int32, n int32) {
	if n >= 0 {
		*head = p.cells.Push(*head, n)
	}
}

// drain adds an edge from every node of the list at *head to n and empties
// it, its cells going back to the pool.
func (p *FragPass) drain(head *int32, n int32) {
	// Item reads lists made with Push (non-negative values) as those made
	// with PushRun (lcol.push).
	for c := *head; c != lists.None; {
		hi, k, next := p.cells.Item(c)
		for v := hi; v > hi-k; v-- {
			p.edge(v, n)
		}
		c = next
	}
	p.cells.Release(*head)
	*head = lists.None
}

// pushTo adds node n to task t's list in c.
func (p *FragPass) pushTo(c *lcol, t Task, n int32) {
	if n >= 0 {
		c.push(p.cells, t, n)
	}
}

// kidStackAfter is how many children of one task complete in a row, with
// no taskwait draining them, before its list of their last fragments is
// packed (kidStack) if its cells are sparse.
const kidStackAfter = 1024

// kidStack is a task's completed children's last fragments, packed: each
// as its zigzag varint difference from the one before, in the order they
// completed, the latest whole. Task Bench's stencil_1d, whose producer's
// 256 000 children complete out of order: 1.9 MB of cells, 0.3 MB packed.
type kidStack struct {
	b    []byte
	last int32
}

func (k *kidStack) push(v int32) {
	k.b = binary.AppendVarint(k.b, int64(v)-int64(k.last))
	k.last = v
}

// each calls fn with the values, the latest first, as drain reads a list.
func (k *kidStack) each(fn func(int32)) {
	v, end := int64(k.last), len(k.b)
	for end > 0 {
		d, start := packed.VarintBefore(k.b, end)
		fn(int32(v))
		v -= d
		end = start
	}
}

// pushKid adds n, a completed child's last fragment, to task t's list.
func (p *FragPass) pushKid(t Task, n int32) {
	if n < 0 {
		return
	}
	if t == p.stackT && p.stack != nil {
		p.stack.push(n)
		return
	}
	if len(p.stacks) > 0 {
		if k := p.stacks[t]; k != nil {
			p.stackT, p.stack = t, k
			k.push(n)
			return
		}
	}
	p.pushTo(&p.doneKids, t, n)
	if t != p.hot {
		p.hot, p.hotN = t, 0
	}
	if p.hotN++; p.hotN == kidStackAfter {
		p.hotN = 0
		if !p.sparse(p.doneKids.get(t)) {
			return // runs of consecutive fragments: the lean stencil's
		}
		// Its list, the latest first, packed in the order pushed.
		h := p.doneKids.take(t)
		vals := p.cells.Append(nil, h)
		p.cells.Release(h)
		k := &kidStack{}
		for i := len(vals) - 1; i >= 0; i-- {
			k.push(vals[i])
		}
		if p.stacks == nil {
			p.stacks = map[Task]*kidStack{}
		}
		p.stacks[t] = k
	}
}

// sparse reports whether the latest kidStackAfter values of the list at h
// take more than 2 bytes a value in cells (a value alone is a cell, a run
// of consecutive ones two): packed, they would take 1–2. A list of long
// runs stays (the lean stencil's producer's children complete in order:
// 2.5 M values in 0.1 MB of cells, 2.5 MB packed).
func (p *FragPass) sparse(h int32) bool {
	vals, cells := int32(0), int32(0)
	for c := h; c != lists.None && vals < kidStackAfter; {
		_, k, next := p.cells.Item(c)
		vals, cells = vals+k, cells+min(k, 2)
		c = next
	}
	return 8*cells > 2*vals
}

// drainKids drains task t's completed children into n (drain), from its
// kidStack if it has one.
func (p *FragPass) drainKids(t Task, n int32) {
	if t == p.hot {
		p.hotN = 0 // its next children start a new row
	}
	if k := p.stacks[t]; k != nil {
		k.each(func(v int32) { p.edge(v, n) })
		delete(p.stacks, t)
		if t == p.stackT {
			p.stackT, p.stack = NoTask, nil
		}
		return
	}
	p.drainFrom(&p.doneKids, t, n)
}

// drainFrom drains task t's list in c into n (drain).
func (p *FragPass) drainFrom(c *lcol, t Task, n int32) {
	if h := c.take(t); h != lists.None {
		p.drain(&h, n)
	}
}

// holder returns the thread whose open fragment is task t's, -1 none.
func (p *FragPass) holder(t Task) int {
	if p.opened[t/64]&(1<<(t%64)) == 0 {
		return -1
	}
	for o, h := range p.holds {
		if h && p.per[o].curTask == t {
			return o
		}
	}
	return -1
}

// setOpenOn records th, whose current task is t, as the thread whose open
// fragment is task t's.
func (p *FragPass) setOpenOn(t Task, th int) {
	if o := p.holder(t); o >= 0 {
		p.holds[o] = false
	}
	p.holds[th] = true
	p.opened[t/64] |= 1 << (t % 64)
}

// leaveOpenOn forgets th as the thread of its current task t's open
// fragment, if it is.
func (p *FragPass) leaveOpenOn(t Task, th int) {
	if p.holds[th] {
		p.holds[th] = false
		p.opened[t/64] &^= 1 << (t % 64)
	}
}

// open starts a fragment of task t on thread th, linked to the task's
// previous fragment (continuation) or, for its first, to its creation, and
// to whatever waited for its next fragment. A task resuming after it was
// switched out and re-queued (an untied task's stub, a task yielding to its
// queue) continues its last fragment, which nothing depends on yet: its
// pieces are one node, weighing their run times, not one node per piece.
func (p *FragPass) open(s *Sim, th int, t Task, k FragKind) {
	if o := p.holder(t); o >= 0 && o != th && p.per[o].curTask == t {
		// Its fragment is still open on the thread it was re-queued from,
		// which reports the switch-out later (Sim.StartTask): end it now.
		p.close(s, int(o))
		p.requeued.set(t, p.lastOf.get(t))
	}
	p.setOpenOn(t, th)
	p.per[th].since = s.Now
	if rq := p.requeued.get(t); rq >= 0 { // a task switched out and re-queued
		p.requeued.set(t, -1)
		if last := p.lastOf.get(t); last >= 0 && rq == last && p.nodes.peek(last).kind == k {
			p.nodes.get(last).thread = int32(th)
			p.drainFrom(&p.pend, t, last)
			p.per[th].cur, p.per[th].curTask, p.per[th].curKind = last, t, k
			return
		}
	}
	p.per[th].cur, p.per[th].curTask, p.per[th].curKind, p.per[th].curLoc = lazyOpen, t, k, s.Loc(t)
	if p.regions != nil {
		p.code[th], p.codeAt[th] = p.code[th][:0], s.Now
	}
	if k != FragTask && p.pend.get(t) == lists.None {
		return
	}
	n := p.materialize(s, th)
	p.drainFrom(&p.pend, t, n)
}

// materialize makes thread th's open fragment a node, linked to its task's
// previous fragment or, for its first, to its creation, and returns it.
// What waited for the task's next fragment when it opened was drained into
// it then (open); what arrived since waits for the next one.
func (p *FragPass) materialize(s *Sim, th int) int32 {
	if n := p.per[th].cur; n != lazyOpen {
		return n
	}
	t := p.per[th].curTask
	if p.per[th].curKind == FragMPI && p.per[th].post == lazyOpen {
		p.materializePost(th)
	}
	n := p.node(p.per[th].curKind, th, p.per[th].curLoc, p.per[th].since)
	if last := p.lastOf.get(t); last >= 0 {
		p.edge(last, n)
	} else {
		p.firstOf.set(t, n)
		p.edge(p.created.get(t), n)
	}
	p.per[th].cur = n
	return n
}

// materializePost makes the post of thread th's open MPI call a node,
// linked to its task's previous fragment or creation, and returns it.
func (p *FragPass) materializePost(th int) int32 {
	if n := p.per[th].post; n != lazyOpen {
		return n
	}
	t := p.per[th].curTask
	n := p.node(FragPost, th, p.per[th].curLoc, p.per[th].since)
	// As materialize: by the task's last fragment, which the runtime's
	// initial task has (the program task's) before a first of its own.
	if last := p.lastOf.get(t); last >= 0 {
		p.edge(last, n)
	} else {
		p.firstOf.set(t, n)
		p.edge(p.created.get(t), n)
	}
	p.lastOf.set(t, n)
	p.per[th].post = n
	return n
}

// close ends thread th's open fragment at the current time.
func (p *FragPass) close(s *Sim, th int) {
	n := p.per[th].cur
	if n == -1 {
		return
	}
	// Only the part inside the analysis window weighs (Sim.SetWindow).
	from, to := max(p.per[th].since, s.Begin), min(s.Now, s.End)
	d := to - from
	// A Test-family call that polled a request before its partner's
	// event (Polls), when the thread polls one.
	polling := p.pollUntil != nil && p.pollUntil[th] > from
	pollCall := polling && p.per[th].curKind == FragMPI && p.testCall(s, th)
	var waited int64 // an MPI call's wait from from: its weight is its tail
	switch {
	case p.per[th].curKind == FragMPI && s.SetupCall(p.F.MPISites[p.per[th].curLoc].Func):
		// A process's own MPI_Init or MPI_Finalize inside the window
		// waits for the others to start or end: no cost of the program.
		d = min(d, 0)
	case p.per[th].curKind == FragMPI && (p.per[th].maxPred > from || pollCall):
		// The call waited for its partner until the partner's event: that
		// wait is no cost of this path. A polling call waits likewise
		// until the latest polled partner's, also when it completes a
		// request whose partner came earlier: the polled partner's edge
		// enters it (pollTarget), so its weighed part must begin after
		// both, or the path through it outgrows the run.
		wait := p.per[th].maxPred
		if pollCall {
			wait = max(wait, p.pollUntil[th])
		}
		waited = min(wait, to) - from
		d -= waited
	}
	// A polled request's partner's event falls inside this fragment
	// (pollTarget): a polling call is entered there by the edge; the
	// computation between two polling calls is cut there in two nodes,
	// the edge entering the second.
	straddle := polling && p.pollUntil[th] < to && p.pollStraddleAt[th] != p.pollUntil[th] && (p.per[th].curKind != FragMPI || pollCall)
	t := p.per[th].curTask
	if n == lazyOpen {
		if d <= 0 {
			// Empty and unreferenced: it never becomes a node, and its
			// task's last fragment stays the one before.
			p.leaveOpenOn(t, th)
			p.per[th].cur = -1
			return
		}
		n = p.materialize(s, th)
	}
	if nd := p.nodes.get(n); p.per[th].since > nd.start {
		// A later piece of a re-queued task's fragment: the node weighs
		// all its pieces and ends where the last one ends.
		nd.weight += max(d, 0)
		nd.start = max(to-nd.weight, nd.start)
	} else {
		nd.weight = max(d, 0)
		if d > 0 {
			nd.wait = waited
		}
	}
	if k := p.per[th].curKind; p.regions != nil && (k == FragSerial || k == FragImplicit) {
		if r := p.dominantRegion(th, s.Now); r >= 0 {
			p.nodes.get(n).loc = int32(r)
		}
	}
	if straddle {
		at := p.pollUntil[th]
		// A fragment of one piece, begun inside the window or before it
		// (then weighing its part inside): not a re-queued task's later
		// piece, whose node weighs its earlier pieces too. Split only
		// inside the window, the edge entered the whole fragment before
		// the window's start, and its part before the predecessor's time
		// followed the predecessor too (a path longer than the window).
		if nd := p.nodes.get(n); p.per[th].curKind != FragMPI && nd.start == p.per[th].since && nd.weight == to-from {
			nd.weight = at - from
			loc := nd.loc
			n2 := p.node(p.per[th].curKind, th, p.per[th].curLoc, at) // nd may move
			p.nodes.get(n2).weight, p.nodes.get(n2).loc = to-at, loc
			p.edge(n, n2)
			n = n2
		}
		p.pollStraddle[th], p.pollStraddleAt[th] = n, at
	}
	p.lastOf.set(t, n)
	p.leaveOpenOn(t, th)
	p.per[th].cur = -1
}

// activity returns what thread th runs now: its top task when running.
func activity(s *Sim, th int) (Task, FragKind, bool) {
	top := s.Threads[th].Current()
	if top == NoTask || s.Tasks[top].State != Running {
		return NoTask, 0, false
	}
	switch s.Tasks[top].Kind {
	case KindExplicit:
		return top, FragTask, true
	case KindInitial:
		return top, FragSerial, true
	}
	return top, FragImplicit, true
}

// mpiSite returns the index of the call site (function fn at location
// loc) in F.MPISites, adding it when new.
func (p *FragPass) mpiSite(fn, loc int64) int32 {
	st := MPISite{fn, loc}
	// A process calls MPI from few sites, mostly in a cycle of a few: the
	// last ones found are looked at before the map.
	for _, k := range p.recentSites {
		if int(k) < len(p.F.MPISites) && p.F.MPISites[k] == st {
			return k
		}
	}
	i, ok := p.siteIdx[st]
	if !ok {
		if p.siteIdx == nil {
			p.siteIdx = map[MPISite]int32{}
		}
		i = int32(len(p.F.MPISites))
		p.F.MPISites = append(p.F.MPISites, st)
		p.siteIdx[st] = i
	}
	copy(p.recentSites[1:], p.recentSites[:len(p.recentSites)-1])
	p.recentSites[0] = i
	return i
}

// Before does nothing but set the pass up (for a process without events,
// at the final call): the pass reads the state once the event is applied.
func (p *FragPass) Before(s *Sim, e *trace.Event, th int, dt int64) {
	if p.per == nil {
		p.init(s)
	}
}

// Kinds implements Filtered: After follows every event, Before none.
func (p *FragPass) Kinds() (before, after KindSet) { return 0, AllKinds }

// After updates the graph for event e of thread th.
func (p *FragPass) After(s *Sim, e *trace.Event, th int) {
	if p.per == nil {
		p.init(s)
	}
	switch e.Kind {
	case trace.MPIEnter:
		p.per[th].mpiDepth++
		if p.per[th].mpiDepth > 1 {
			return
		}
		t := s.Threads[th].Current()
		if t == NoTask {
			// No fragment: the call and its events are outside the
			// graph (Frags.OutsideGraph).
			for len(p.F.taskless) <= th {
				p.F.taskless = append(p.F.taskless, nil)
			}
			p.F.taskless[th] = append(p.F.taskless[th], s.Pos(th))
			return
		}
		p.close(s, th)
		// The call's post and its own cost (which follows the post) are
		// lazy like any fragment: the post becomes a node when a send
		// leaves from it or the cost node needs it, the cost node when a
		// receive arrives at it or it weighs anything. A call without
		// either leaves no node.
		p.per[th].cur, p.per[th].curTask, p.per[th].curKind, p.per[th].curLoc = lazyOpen, t, FragMPI, p.mpiSite(e.Args[0], e.Args[1])
		p.per[th].post = lazyOpen
		p.setOpenOn(t, th)
		p.per[th].since = s.Now
		p.per[th].maxPred = 0
		if p.pend.get(t) != lists.None {
			p.drainFrom(&p.pend, t, p.materializePost(th))
		}
		return
	case trace.MPIExit:
		if p.per[th].mpiDepth > 0 {
			p.per[th].mpiDepth--
		}
		if p.per[th].mpiDepth > 0 {
			return
		}
		if th < len(p.F.taskless) && len(p.F.taskless[th])%2 == 1 {
			p.F.taskless[th] = append(p.F.taskless[th], s.Pos(th))
		}
		p.close(s, th)
		p.per[th].post = -1
	case trace.MPISend, trace.CollBegin, trace.CollStart:
		if n := p.sendSource(s, th); n >= 0 {
			p.F.SendNode.Add(th, s.Pos(th), n)
		}
		if e.Kind == trace.MPISend && e.Args[4] == 0 {
			p.lateReceiver(s, th) // a blocking send may have waited for its receive
		}
		return
	case trace.MPIRequestDone:
		p.lateReceiver(s, th) // an MPI_Isend's wait may have
		return
	case trace.MPIRecvPost:
		p.source(s, th)
		return
	case trace.MPIPolled:
		p.polled(s, th)
		return
	case trace.RMALock:
		p.lateReceiver(s, th) // a lock epoch may have waited for the holder's release
		return
	case trace.RMAUnlock:
		p.source(s, th) // the release another epoch waited for
		p.lateReceiver(s, th)
		return
	case trace.MPIRecv, trace.CollEnd, trace.CollComplete:
		if p.per[th].cur != -1 {
			idx := s.Pos(th)
			if e.Kind != trace.CollEnd {
				p.source(s, th)
			}
			p.F.RecvNode.Add(th, idx, p.pollTarget(th, idx, p.materialize(s, th)))
			if p.pred != nil {
				if t, ok := p.pred(th, idx); ok {
					p.per[th].maxPred = max(p.per[th].maxPred, t)
				}
			}
		}
		return
	case trace.RemoteDepOut:
		if t := p.taskArg(s, e.Args[0]); t != NoTask {
			if last := p.lastOf.get(t); last >= 0 {
				p.F.SendNode.Add(th, s.Pos(th), last)
			}
		}
		return
	case trace.RemoteDepIn:
		idx := s.Pos(th)
		t := p.taskArg(s, e.Args[0])
		l := p.node(FragLatency, th, -1, s.Now)
		if p.pred != nil {
			if pt, ok := p.pred(th, idx); ok {
				nd := p.nodes.get(l)
				nd.weight = max(min(s.Now, s.End)-max(pt, s.Begin), 0)
				nd.start = pt
			}
		}
		p.F.RecvNode.Add(th, idx, l)
		if t != NoTask {
			if n := p.firstOf.get(t); n >= 0 {
				p.edge(l, n) // arrived after the task started (an inconsistent trace)
			} else {
				p.pushTo(&p.pend, t, l)
			}
		}
		return
	case trace.TaskCreate:
		// The creator's fragment ends where the child is created.
		if p.per[th].cur != -1 {
			t, k := p.per[th].curTask, p.per[th].curKind
			p.close(s, th)
			if child := s.lastCreated; s.valid(child) {
				p.created.set(child, p.lastOf.get(t))
				// A task joins the first barrier its creator reaches after
				// creating it: the creator's count of barriers passed, a
				// thread-local fact that equal timestamps cannot reorder.
				if thr := &s.Threads[th]; len(thr.Teams) > 0 {
					if ref := thr.Teams[len(thr.Teams)-1]; ref.Region >= 0 && int(ref.Num) < len(s.Regions[ref.Region].Epoch) {
						p.bar.set(child, s.Regions[ref.Region].Epoch[ref.Num])
					}
				}
			}
			p.open(s, th, t, k)
		}
		return
	case trace.TaskSchedule:
		if st := e.Args[1]; st == 5 || st == 6 {
			// omp_fulfill_event (early or late fulfil, no next task): not a
			// scheduling point of the task running on the thread.
			p.completed(s, e.Args[0])
			return
		}
		lazy, of := p.per[th].cur == lazyOpen, p.per[th].curTask
		before := int32(-1)
		if lazy {
			before = p.lastOf.get(of)
		}
		p.close(s, th) // the prior task's fragment ends here
		t := p.taskArg(s, e.Args[0])
		if s.valid(t) && s.Tasks[t].Flags&FlagTaskwait != 0 && p.firstOf.get(t) < 0 {
			// A taskwait with a depend clause ended: its empty body is a
			// join, after its dependences (the critical path's pairs) and
			// before its creator's continuation (an undeferred child's).
			j := p.node(FragJoin, th, -1, s.Now)
			p.firstOf.set(t, j)
			p.lastOf.set(t, j)
		}
		p.completedTask(s, t)
		if s.valid(t) && s.Tasks[t].Kind == KindExplicit && (s.Tasks[t].State == Ready || s.Tasks[t].State == Suspended) && !s.OnStack(t, th) {
			p.requeued.set(t, p.lastOf.get(t)) // switched out and re-queued (Sim.Requeue)
			if lazy && of == t && p.lastOf.get(t) == before {
				// Switched out inside an MPI call whose empty cost node
				// never became one: its last fragment is from before the
				// call, and the next piece must not continue it (it would
				// not have: the cost node was its last, of another kind).
				p.requeued.set(t, -1)
			}
		}
	case trace.DetachFulfill, trace.Cancel:
		p.completed(s, e.Args[0])
		return
	case trace.ParallelBegin:
		p.close(s, th)
		if t := s.Threads[th].Current(); t != NoTask {
			p.forkSrc.Set(e.Args[0], p.lastOf.get(t))
		}
	case trace.ImplicitTaskBegin:
		if e.Args[4]&1 != 0 && s.valid(s.Program) {
			// The runtime's initial task took the program task's place
			// (Sim.AdoptInitial): it continues the program's code.
			if p.per[th].cur != -1 && p.per[th].curTask == s.Program {
				p.close(s, th)
			}
			if t := s.Threads[th].Current(); s.valid(t) && t != s.Program && p.lastOf.get(t) < 0 {
				p.lastOf.set(t, p.lastOf.get(s.Program))
			}
		}
		if t := s.Threads[th].Current(); t != NoTask && e.Args[4]&1 == 0 { // not the initial task
			if src, ok := p.forkSrc.Get(e.Args[0]); ok {
				p.pushTo(&p.pend, t, src)
			}
			p.regionOf.Set(e.Args[0], s.Region(t))
		}
	case trace.ParallelEnd:
		p.close(s, th)
		// The region's end finished its workers' implicit tasks (EndRegion):
		// their fragments end now, before they join the continuation.
		p.closeTouched(s, th)
		if r, ok := p.regionOf.Get(e.Args[0]); ok && r >= 0 {
			if t := s.Threads[th].Current(); t != NoTask {
				for _, m := range s.Regions[r].Members {
					if s.valid(m.Task) {
						p.pushTo(&p.pend, t, p.lastOf.get(m.Task))
					}
				}
			}
		}
		p.forkSrc.Delete(e.Args[0])
		p.regionOf.Delete(e.Args[0])
	case trace.RegionEnter, trace.RegionExit:
		p.region(s, th, e)
		return
	case trace.SyncWaitBegin:
		p.close(s, th)
		p.arrive(s, th, e.Args[0])
		if e.Args[0] == trace.SyncThreadBarrier {
			p.signalled(s, th, e.Args[2]) // the barrier's latest arrival
		}
		if e.Args[0] == trace.SyncCondWait && th < len(p.wake) {
			p.wake[th] = -1 // the reacquisition inside it sets it
		}
	case trace.SyncWaitEnd:
		p.close(s, th)
		p.leave(s, th, e.Args[0])
		switch e.Args[0] {
		case trace.SyncThreadJoin:
			p.joined(s, th, e.Args[2]-1)
		case trace.SyncCondWait, trace.SyncThreadBarrier:
			p.woken(s, th, e.Args[2])
		}
	case trace.MutexReleased:
		if e.Args[0] == trace.MutexPthread {
			p.released(s, th, e.Args[1])
		}
	case trace.MutexAcquired:
		if e.Args[0] == trace.MutexPthread && p.releases != nil {
			if n, ok := p.releases[e.Args[1]]; ok && th < len(p.wake) {
				p.wake[th] = n // a condition wait's reacquisition, if it is in one
			}
		}
	case trace.SyncEnd:
		if e.Args[0] == trace.SyncCondSignal {
			p.signalled(s, th, e.Args[2])
		}
	case trace.ThreadBegin:
		if u := s.UserTask(th); u != NoTask {
			p.started(s, th, u)
		}
	}
	// Follow what the thread runs now.
	t, k, ok := activity(s, th)
	switch {
	case p.per[th].mpiDepth > 0:
	case !ok:
		p.close(s, th)
	case p.per[th].cur == -1 || p.per[th].curTask != t:
		p.close(s, th)
		p.open(s, th, t, k)
	}
	p.closeTouched(s, th)
}

// started links the first fragment of user thread th's code, task u, to
// the fragment of the thread that started it (Sim.Creator), split here: a
// thread's code follows its pthread_create.
func (p *FragPass) started(s *Sim, th int, u Task) {
	c := s.Creator(th)
	if c < 0 || p.firstOf.get(u) >= 0 {
		return
	}
	if last := p.cut(s, c); last >= 0 {
		p.created.set(u, last)
	}
}

// cut ends thread th's open fragment here and opens the next of the same
// task (unless the thread is inside an MPI call), so that another thread
// can follow what th did up to now, and returns the last fragment of th's
// current task (−1: none): a thread start's creator, a signaller, a
// mutex's releaser.
func (p *FragPass) cut(s *Sim, th int) int32 {
	if p.per[th].cur != -1 && p.per[th].mpiDepth == 0 {
		t, k := p.per[th].curTask, p.per[th].curKind
		p.close(s, th)
		p.open(s, th, t, k)
	}
	if t := s.Threads[th].Current(); t != NoTask {
		return p.lastOf.get(t)
	}
	return -1
}

// joined makes thread th's next fragment follow the last one of thread j's
// code, the thread its join waited for.
func (p *FragPass) joined(s *Sim, th int, j int64) {
	if j < 0 || j > 1<<31 {
		return
	}
	u, t := s.UserTask(int(j)), s.Threads[th].Current()
	if u == NoTask || t == NoTask {
		return
	}
	if last := p.lastOf.get(u); last >= 0 {
		p.pushTo(&p.pend, t, last)
	}
}

// signalled makes thread th's fragment up to now the latest signal of
// condition variable (or arrival at barrier) id: its open fragment is
// split here, as at a task's creation.
func (p *FragPass) signalled(s *Sim, th int, id int64) {
	if id == 0 {
		return
	}
	if last := p.cut(s, th); last >= 0 {
		if p.signals == nil {
			p.signals = map[int64]int32{}
		}
		p.signals[id] = last
	}
}

// woken makes thread th's next fragment follow the latest signal of the
// condition variable (or arrival at the barrier) id it waited on. A wait
// that timed out, or was woken spuriously, follows it too: it ended
// after it, so the path stays within the run. A condition wait naming
// none (Score-P's archives) follows the release of its mutex before the
// thread reacquired it inside the wait, if a pthread mutex was.
func (p *FragPass) woken(s *Sim, th int, id int64) {
	t := s.Threads[th].Current()
	if t == NoTask {
		return
	}
	if id == 0 {
		if th < len(p.wake) && p.wake[th] >= 0 {
			p.pushTo(&p.pend, t, p.wake[th])
			p.wake[th] = -1
		}
		return
	}
	if n, ok := p.signals[id]; ok {
		p.pushTo(&p.pend, t, n)
	}
}

// released makes thread th's fragment up to now the latest release of
// POSIX threads mutex id: its open fragment is split here.
func (p *FragPass) released(s *Sim, th int, id int64) {
	if last := p.cut(s, th); last >= 0 {
		if p.releases == nil {
			p.releases = map[int64]int32{}
			p.wake = fill(make([]int32, len(s.Threads)), -1)
		}
		p.releases[id] = last
	}
}

// region follows thread th's user regions, and the open fragment's time
// in the one it leaves.
func (p *FragPass) region(s *Sim, th int, e *trace.Event) {
	if p.regions == nil {
		n := len(s.Threads)
		p.regions, p.code, p.codeAt = make([][]int64, n), make([][]CodeTime, n), make([]int64, n)
		for o := range p.codeAt {
			p.codeAt[o] = s.Now
		}
	}
	p.tally(th, s.Now)
	if e.Kind == trace.RegionEnter {
		p.regions[th] = append(p.regions[th], e.Args[0])
	} else if rs := p.regions[th]; len(rs) > 0 {
		p.regions[th] = rs[:len(rs)-1]
	}
}

// tally adds the time since codeAt to thread th's innermost region, when
// it runs serial or parallel-region code.
func (p *FragPass) tally(th int, now int64) {
	rs := p.regions[th]
	if k := p.per[th].curKind; len(rs) > 0 && p.per[th].cur != -1 && p.per[th].mpiDepth == 0 && (k == FragSerial || k == FragImplicit) && now > p.codeAt[th] {
		p.code[th] = AddCodeTime(p.code[th], rs[len(rs)-1], now-p.codeAt[th])
	}
	p.codeAt[th] = now
}

// dominantRegion returns the user region (a string id) the closing
// fragment of thread th spent most time in, −1 for none.
func (p *FragPass) dominantRegion(th int, now int64) int64 {
	p.tally(th, now)
	return MostTime(p.code[th])
}

// closeTouched closes the fragments of other threads whose state this
// event changed (a region's end, a task taken off the thread it was
// re-queued from) and that run nothing now.
func (p *FragPass) closeTouched(s *Sim, th int) {
	for _, o := range s.touched {
		if o != th && p.per[o].mpiDepth == 0 {
			if _, _, ok := activity(s, o); !ok {
				p.close(s, o)
			}
		}
	}
}

// lateReceiver makes the open MPI call's cost node the target of the
// event's predecessor, when it has one: the receive a send waited for (a
// Late Receiver, waitstate). The call's wait for it is no cost.
func (p *FragPass) lateReceiver(s *Sim, th int) {
	if p.pred == nil || p.per[th].cur == -1 || p.per[th].curKind != FragMPI {
		return
	}
	idx := s.Pos(th)
	if t, ok := p.pred(th, idx); ok {
		p.F.RecvNode.Add(th, idx, p.materialize(s, th))
		p.per[th].maxPred = max(p.per[th].maxPred, t)
	}
}

// polled takes thread th's current event, an mpi_polled, when it is one
// of Polls: the thread polls until the time of the completion's
// predecessor.
func (p *FragPass) polled(s *Sim, th int) {
	if len(p.Polls) == 0 || p.pred == nil {
		return
	}
	if p.pollAt == nil {
		p.pollAt = newRefCursor(p.Polls, len(s.Threads), PollRef.EventRef)
		p.pollUntil = make([]int64, len(s.Threads))
		p.pollDone = map[EventRef]int64{}
		p.pollStraddle = make([]int32, len(s.Threads))
		p.pollStraddleAt = make([]int64, len(s.Threads))
		for k := range p.pollStraddle {
			p.pollStraddle[k] = -1
		}
	}
	k, ok := meetRef(p.pollAt, p.Polls, PollRef.EventRef, th, s.Pos(th))
	if !ok {
		return
	}
	r := p.Polls[k]
	if t, ok := p.pred(int(r.DoneThread), r.DoneEvent); ok {
		p.pollUntil[th] = max(p.pollUntil[th], t)
		if int(r.DoneThread) == th {
			p.pollDone[EventRef{r.DoneThread, r.DoneEvent}] = t
		}
	}
}

// pollTarget returns the node a polled completion, event idx of thread
// th, takes its predecessor's edge at: the fragment its predecessor's time
// fell inside, when one of this thread's closed before it, else cur.
func (p *FragPass) pollTarget(th int, idx int64, cur int32) int32 {
	if p.pollDone == nil {
		return cur
	}
	ref := EventRef{int32(th), idx}
	t, ok := p.pollDone[ref]
	if !ok {
		return cur
	}
	delete(p.pollDone, ref)
	if n := p.pollStraddle[th]; n >= 0 && p.pollStraddleAt[th] == t {
		return n
	}
	return cur
}

// testCall reports whether thread th's open MPI call is a Test-family one.
func (p *FragPass) testCall(s *Sim, th int) bool {
	return trace.IsMPITest(s.Proc.String(p.F.MPISites[p.per[th].curLoc].Func))
}

// source gives the current event of thread th, when it is one of
// Sources, its MPI call's post node as a send-like node: where the
// receive began, or the progress point.
func (p *FragPass) source(s *Sim, th int) {
	if len(p.Sources) == 0 {
		return
	}
	if p.srcAt == nil {
		p.srcAt = newRefCursor(p.Sources, len(s.Threads), EventRef.self)
	}
	idx := s.Pos(th)
	if _, ok := meetRef(p.srcAt, p.Sources, EventRef.self, th, idx); !ok {
		return
	}
	if p.per[th].cur != -1 && p.per[th].curKind == FragMPI && p.per[th].post != -1 {
		p.F.SendNode.Add(th, idx, p.materializePost(th))
	}
}

// refCursor is, per thread, the next entry to meet in a list of events
// sorted by thread and index (CompareEventRefs), as a thread's events come
// in order.
type refCursor []int

func newRefCursor[T any](list []T, threads int, ref func(T) EventRef) refCursor {
	c := make(refCursor, threads)
	for th := range c {
		c[th], _ = slices.BinarySearchFunc(list, EventRef{Thread: int32(th)}, func(x T, e EventRef) int { return CompareEventRefs(ref(x), e) })
	}
	return c
}

// meetRef moves thread th's cursor c to its first entry of list at or
// after event idx and returns it, and whether it is event idx.
func meetRef[T any](c refCursor, list []T, ref func(T) EventRef, th int, idx int64) (int, bool) {
	if th >= len(c) {
		return 0, false
	}
	k := c[th]
	for k < len(list) && ref(list[k]).Thread == int32(th) && ref(list[k]).Event < idx {
		k++
	}
	c[th] = k
	return k, k < len(list) && ref(list[k]) == EventRef{int32(th), idx}
}

func (r EventRef) self() EventRef { return r }

// CompareEventRefs orders events by thread, then index.
func CompareEventRefs(a, b EventRef) int {
	return cmp.Or(cmp.Compare(a.Thread, b.Thread), cmp.Compare(a.Event, b.Event))
}

// sendSource is the node a send of thread th leaves from: the open MPI
// call's post node, or the open fragment.
func (p *FragPass) sendSource(s *Sim, th int) int32 {
	if p.per[th].cur == -1 {
		return -1
	}
	if p.per[th].curKind == FragMPI && p.per[th].post != -1 {
		return p.materializePost(th)
	}
	return p.materialize(s, th)
}

func (p *FragPass) taskArg(s *Sim, id int64) Task {
	if s.taskOf == nil {
		return NoTask
	}
	return s.taskOf(id)
}

// completed records a task that just finished for the joins that wait for
// it: its parent's taskwait, its taskgroup, its region's barrier, and its
// parent's resumption when it was undeferred.
func (p *FragPass) completed(s *Sim, id int64) { p.completedTask(s, p.taskArg(s, id)) }

// completedTask is completed for task c, looked up already.
func (p *FragPass) completedTask(s *Sim, c Task) {
	if c == NoTask || s.Tasks[c].State != Completed || s.Tasks[c].Kind != KindExplicit {
		return
	}
	if p.done[c/64]&(1<<(c%64)) == 0 {
		p.done[c/64] |= 1 << (c % 64)
		k := c >> colPageBits
		p.doneIn[k]++
		if m := min(colPageLen, s.Tasks.Len()-int(k)*colPageLen); int(p.doneIn[k]) == m {
			// Every task of the page completed: their first and last
			// fragments are final, and their creators' fragments read no
			// more but in a damaged trace.
			p.firstOf.freeze(k, m)
			p.lastOf.freeze(k, m)
			p.created.freeze(k, m)
		}
	}
	tk := &s.Tasks[c]
	last := p.lastOf.get(c)
	if last < 0 {
		return
	}
	if par := s.Parent(c); s.valid(par) {
		p.pushKid(par, last)
		if tk.Flags&FlagUndeferred != 0 {
			p.pushTo(&p.pend, par, last)
		}
	}
	if g := s.cols.group.get(c); g >= 0 {
		h := p.groupIn[g]
		if _, ok := p.groupIn[g]; !ok {
			h = -1
		}
		p.push(&h, last)
		p.groupIn[g] = h
	}
	if r, k := s.Region(c), p.bar.get(c); r >= 0 && k >= 0 {
		p.edge(last, p.barrier(s, r, k))
	}
}

// barrierRef is a region's barrier k and its join node n.
type barrierRef struct{ k, n int32 }

// barrier returns the join node of barrier k of region instance r. Its
// start is the latest arrival or task completion that feeds it so far: the
// barrier's release, once every member is in.
func (p *FragPass) barrier(s *Sim, r int32, k int32) int32 {
	for int(r) >= len(p.latest) {
		p.latest = append(p.latest, barrierRef{n: -1})
	}
	var n int32
	if b := p.latest[r]; b.n >= 0 && b.k == k {
		n = b.n
	} else {
		var ok bool
		if n, ok = p.barriers[int64(r)<<32|int64(uint32(k))]; !ok {
			// A new barrier of the region: it becomes the latest, the
			// one it replaces goes to the map (a node per key, in one
			// place or the other).
			n = p.node(FragJoin, -1, -1, s.Now)
			if b.n >= 0 {
				p.barriers[int64(r)<<32|int64(uint32(b.k))] = b.n
			}
			p.latest[r] = barrierRef{k: k, n: n}
		}
	}
	nd := p.nodes.get(n)
	nd.start = max(nd.start, s.Now)
	return n
}

// arrive links a task entering a wait to the join it waits at.
func (p *FragPass) arrive(s *Sim, th int, kind int64) {
	t := s.Threads[th].Current()
	if t == NoTask || !isBarrier(kind) {
		return
	}
	thr := &s.Threads[th]
	if len(thr.Teams) == 0 {
		return
	}
	ref := thr.Teams[len(thr.Teams)-1]
	if ref.Region < 0 || int(ref.Num) >= len(s.Regions[ref.Region].Epoch) {
		return
	}
	b := p.barrier(s, ref.Region, s.Regions[ref.Region].Epoch[ref.Num])
	p.edge(p.lastOf.get(t), b)
}

// leave makes the waiting task's next fragment follow the join it waited at.
func (p *FragPass) leave(s *Sim, th int, kind int64) {
	t := s.Threads[th].Current()
	if t == NoTask {
		return
	}
	switch {
	case kind == 5: // taskwait
		j := p.node(FragJoin, th, -1, s.Now)
		p.drainKids(t, j)
		p.pushTo(&p.pend, t, j)
	case kind == 6: // taskgroup
		thr := &s.Threads[th]
		if n := len(thr.Groups); n > 0 {
			g := thr.Groups[n-1].Group
			if h, ok := p.groupIn[g]; ok {
				j := p.node(FragJoin, th, -1, s.Now)
				p.drain(&h, j)
				delete(p.groupIn, g)
				p.pushTo(&p.pend, t, j)
			}
		}
	case isBarrier(kind):
		thr := &s.Threads[th]
		if len(thr.Teams) == 0 {
			return
		}
		ref := thr.Teams[len(thr.Teams)-1]
		if ref.Region < 0 || int(ref.Num) >= len(s.Regions[ref.Region].Epoch) {
			return
		}
		// LeaveBarrier already counted this barrier as passed.
		p.pushTo(&p.pend, t, p.barrier(s, ref.Region, s.Regions[ref.Region].Epoch[ref.Num]-1))
	}
}

// isBarrier mirrors ompt.IsBarrier (OMPT sync-region kinds of barriers).
func isBarrier(kind int64) bool {
	switch kind {
	case 1, 2, 3, 4, 8, 9, 10:
		return true
	}
	return false
}

// Finish closes every open fragment and adds the dependence edges.
func (p *FragPass) Finish(s *Sim) {
	if p.per == nil {
		p.init(s)
	}
	for th := range p.per {
		p.close(s, th)
	}
	if !p.DepsApart {
		s.DepEdges.Each(func(pred, succ Task) {
			p.edge(p.lastOf.get(pred), p.firstOf.get(succ))
		})
	}
	// The graph's nodes, encoded as the simulation went.
	f := &p.F
	f.Weight, f.nw = nil, p.nodes.len()
	f.Attrs, f.weights, f.Work, f.narrowW = p.nodes.finish()
	f.chained = p.chained
	if cap(f.chained)-len(f.chained) > len(f.chained)/8 {
		f.chained = append(make([]uint64, 0, len(f.chained)), f.chained...)
	}
	p.chained = nil
	f.Edges.Trim()
	f.SendNode.Trim()
	f.RecvNode.Trim()
	nt := s.Tasks.Len()
	f.first, f.last = p.firstOf.take(nt), p.lastOf.take(nt)
	p.recycle(s)
}

// requeuedFrags holds the last fragment of each task switched out and
// re-queued (an untied task's stub, a task yielding to its queue, a
// tied one suspended in a taskwait), until it resumes: a handful at a
// time, a thread's each on BOTS and Task Bench's untied stencil, where a
// column of 4 bytes a task kept a page for every page of tasks that was
// ever switched out (2 MB of BOTS health's simulation peak, all its
// pages). Past a few live entries (untied tasks suspended in numbers)
// idmap.Map turns to a map.
type requeuedFrags struct{ m idmap.Map }

// get returns t's fragment, −1 none.
func (r *requeuedFrags) get(t Task) int32 {
	if v, ok := r.m.Get(int64(t)); ok {
		return v
	}
	return -1
}

// set makes n t's fragment (−1: none).
func (r *requeuedFrags) set(t Task, n int32) {
	if n < 0 {
		r.m.Delete(int64(t))
		return
	}
	r.m.Set(int64(t), n)
}
