// Package waitstate finds MPI wait states in the synchronized trace:
// Scalasca's patterns (Late Sender, Late Receiver, Wait at N×N, Wait at
// Barrier, Late Broadcast, Early Reduce), per call site and per process,
// with the rest of the MPI time as transfer/other.
//
// It works in two steps, before the simulation. Record (per process)
// reads, with their corrected times, the events of the threads that make
// MPI calls, in the simulation's order (sim.Walk), and keeps for each MPI
// call (outermost mpi_enter … mpi_exit of a thread) its enter and exit
// times, call site and the code the time before it ran in, and for each
// communication node of the graph.Matching the call around it. Then
// Analyze, collective, sends along the matched edges the enter and exit
// times of the call around every send-like event (one graph.PropagateMax),
// so every receive-like event learns when the call that released it began,
// charges each call to at most one pattern, each wait to its cause's
// delays (delay.go: Scalasca's delay costs), and reduces rows of
// O(processes × call sites) to rank 0.
//
// A call's wait is the time from its enter until the partner's call began,
// capped by the call's duration and cut to the analysis window, so the
// patterns of a call never exceed its MPI time and each call counts in one
// pattern only: the categories are disjoint and add up, with Other, to the
// MPI time.
//
// The OpenMP wait states come from a second simulation pass (OMPPass,
// omp.go): the threads' time not working outside MPI, by the sync
// construct they wait in and by why no task was there to run, and the
// waits for locks and critical sections.
package waitstate

import (
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/bitrank"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Pattern is a wait-state pattern.
type Pattern uint8

const (
	None Pattern = iota
	LateSender
	LateReceiver
	WaitNxN
	WaitBarrier
	LateBroadcast
	EarlyReduce
	// Scalasca's one-sided synchronisation patterns: a call collective
	// over a window's group (trace.CollOp.IsWindow) waits, as at a
	// barrier, until the last member entered: MPI_Win_fence (Wait at
	// Fence, mpi_rma_wait_at_fence), the window's creation (Wait at
	// Create, mpi_rma_wait_at_create) and MPI_Win_free (Wait at Free,
	// mpi_rma_wait_at_free).
	WaitAtFence
	WaitAtWinCreate
	WaitAtWinFree
	// Scalasca's patterns of general active target synchronisation
	// (MPI_Win_post, _start, _complete, _wait), which the collector
	// records as messages under reserved tags (trace.TagWinPost,
	// trace.TagWinComplete): an origin waiting in MPI_Win_start for
	// the last target of its group to enter MPI_Win_post (Late Post,
	// mpi_rma_sync_late_post), and a target waiting in MPI_Win_wait
	// (or the MPI_Win_test that ends its exposure epoch) for the last
	// origin to enter MPI_Win_complete (Early Wait, mpi_rma_early_wait).
	// Both are a wait for the latest sender of the call's messages, as
	// a Late Sender is.
	LatePost
	EarlyWait
	// LockContention is passive target synchronisation's wait (Scalasca's
	// Lock Contention, mpi_rma_lock_competition): an origin's one-sided
	// calls of a lock epoch wait because another origin held a conflicting
	// lock on the same target of the same window (lock.go). Its cause is
	// that holder.
	LockContention
	// WaitForProgress is a nonblocking collective's member waiting, in
	// the call that completes it, for another member to progress it:
	// Open MPI and MPICH without a progress thread advance a nonblocking
	// collective only inside MPI calls, so a member whose MPI_Wait began
	// after every start waits until the latest other member enters the
	// call in which it completes the collective (its progress point,
	// progress.go). Scalasca's name for the one-sided analogue (Wait for
	// Progress, mpi_rma_wait_for_progress).
	WaitForProgress
	NumPatterns
)

var patternNames = [NumPatterns]string{"none", "late_sender", "late_receiver", "wait_nxn", "wait_barrier", "late_broadcast", "early_reduce",
	"wait_at_fence", "wait_at_win_create", "wait_at_win_free", "late_post", "early_wait", "lock_contention", "wait_for_progress"}

// barrierLike reports whether p is a wait of every member of a group for
// the last one to enter (a barrier's, an N×N collective's, a window's
// collective synchronisation): the wait is with the call's communicator.
func (p Pattern) barrierLike() bool {
	return p == WaitBarrier || p == WaitNxN || p == WaitAtFence || p == WaitAtWinCreate || p == WaitAtWinFree
}

// p2p reports whether p is a wait for the latest sender of the messages
// a call receives (a Late Sender, or a one-sided epoch's Late Post or
// Early Wait): the wait is with that sender alone.
func (p Pattern) p2p() bool {
	return p == LateSender || p == LatePost || p == EarlyWait
}

func (p Pattern) String() string {
	if p < NumPatterns {
		return patternNames[p]
	}
	return "pattern?"
}

// site is a call site: the MPI function, the call's location and the
// innermost user region (string and location ids of the process's tables;
// −1 for no region, and for a location the trace does not give).
type site struct{ fn, loc, region int64 }

// where is a call's site (index in sites) and the code the time before it
// ran in (the last, when several: see calls), a label as callRecorder.label
// gives. A process has few distinct ones, so a call holds an index.
type where struct {
	site  int32
	label int64
}

// whereKey finds a where from the call's own fields in one lookup.
type whereKey struct{ fn, loc, region, label int64 }

// calls are one process's MPI calls in the order they began per thread,
// 9 to 12 bytes a call: the columns are narrow (internal/narrow), and the
// rare value that does not fit (a call of seconds, a location id from a
// corrupt file) is kept aside exactly. What the delay costs need of the
// time between calls (Böhme et al.'s time maps) follows from them: the
// time outside MPI before call k is its enter less the exit of the
// thread's previous call, spent in the code its label names, or, when it
// ran in several, as the split says.
type calls struct {
	enter narrow.Series
	// dur is exit − enter (wrapping, so exact for any two times): a byte
	// or two a call where the calls are short (narrow.Step).
	dur   narrow.Step[uint8, uint16, uint32]
	where whereCol
	// prevBack is k − prev for call k, 0 for none: prev is the thread's
	// previous call, so a thread's calls are walked back without a column
	// of threads. Empty while every call's is the call before it (a
	// process that calls MPI from one thread: 2 bytes a call saved); made
	// at the first that is not, with room for room calls.
	prevBack narrow.Column[uint16]
	room     int
	sites    []site
	kinds    []uint8 // per site, its function's kind (siteKind), while the Late Receivers are found
	siteIdx  map[site]int32
	wheres   []where
	whereIdx map[whereKey]int32
	// nextWhere is where findWhere's scan starts: after the last found.
	nextWhere int
	// The calls whose time outside MPI before them ran in more than one
	// code (user regions entered and left between two MPI calls, or a
	// parallel region and the serial code around it): call splitCall[j]'s
	// codes and times are entries splitOff[j] to splitOff[j+1] of
	// splitCode and splitNS (splitOff has a last entry), as narrow as
	// most fit (narrow.Step: a code and its time 3 bytes on the 10 M-event
	// halo, not a CodeTime's 16). Once the calls are recorded, splitCall
	// is a bit a call (splitAt: j is the call's rank there), not 4 bytes a
	// split. Empty on codes without user regions.
	splitCall []int32
	splitAt   bitrank.Set
	splitOff  []int32
	splitCode narrow.Step[int8, int16, int32]
	splitNS   narrow.Step[uint8, uint16, uint32]
	// initCall is the process's MPI_Init (−1: none recorded) and initTh
	// its thread: a synchronization point of all processes.
	initCall int32
	initTh   int32
}

// whereCol is the calls' where indices: a byte each while the process
// has fewer than 255 (call site, code) pairs, 2 bytes (and a wider one
// aside) from the call that needs more on, the column widened then.
type whereCol struct {
	b    narrow.Column[uint8]
	w    narrow.Column[uint16]
	room int // the calls reserved for
}

// Reserve makes room for n more calls.
func (c *whereCol) Reserve(n int) { c.b.Reserve(n); c.room = c.b.Len() + n }

// Append adds x at the end.
func (c *whereCol) Append(x int64) {
	if c.w.Len() == 0 {
		if x >= 0 && x < math.MaxUint8 {
			c.b.Append(x)
			return
		}
		c.w.Reserve(max(c.room, c.b.Len()+1))
		for k := range c.b.Len() {
			c.w.Append(c.b.At(k))
		}
		c.b = narrow.Column[uint8]{}
	}
	c.w.Append(x)
}

// At returns value k.
func (c *whereCol) At(k int) int64 {
	if c.w.Len() > 0 {
		return c.w.At(k)
	}
	return c.b.At(k)
}

// Fit drops the reserved room as narrow.Column.Fit does.
func (c *whereCol) Fit() { c.b.Fit(); c.w.Fit() }

// dropTimes lets go of the calls' times (enter, duration, the splits'
// codes and times) and their previous calls, which the delay costs' time
// maps read and nothing after them: the call sites and codes stay.
func (c *calls) dropTimes() {
	c.enter, c.dur, c.prevBack = narrow.Series{}, narrow.Step[uint8, uint16, uint32]{}, narrow.Column[uint16]{}
	c.splitCall, c.splitAt, c.splitOff = nil, bitrank.Set{}, nil
	c.splitCode, c.splitNS = narrow.Step[int8, int16, int32]{}, narrow.Step[uint8, uint16, uint32]{}
}

func (c *calls) len() int              { return c.enter.Len() }
func (c *calls) enterAt(k int32) int64 { return c.enter.At(int(k)) }
func (c *calls) exitAt(k int32) int64  { return c.enter.At(int(k)) + c.dur.At(int(k)) }
func (c *calls) durAt(k int32) int64   { return c.dur.At(int(k)) }
func (c *calls) siteAt(k int32) int32  { return c.wheres[c.where.At(int(k))].site }
func (c *calls) labelAt(k int32) int64 { return c.wheres[c.where.At(int(k))].label }

// prevAt returns the thread's call before call k, −1 for none.
func (c *calls) prevAt(k int32) int32 {
	if c.prevBack.Len() == 0 {
		return k - 1
	}
	if b := c.prevBack.At(int(k)); b > 0 {
		return k - int32(b)
	}
	return -1
}

// eachSplit calls fn with each code the time before call k ran in and
// the time spent there, when there were several, and reports whether
// there were.
func (c *calls) eachSplit(k int32, fn func(code, ns int64)) bool {
	var j int32
	var ok bool
	if c.splitCall != nil {
		var x int
		x, ok = slices.BinarySearch(c.splitCall, k)
		j = int32(x)
	} else {
		j, ok = c.splitAt.Rank(k)
	}
	if !ok {
		return false
	}
	for x := c.splitOff[j]; x < c.splitOff[j+1]; x++ {
		fn(c.splitCode.At(int(x)), c.splitNS.At(int(x)))
	}
	return true
}

// addSplit keeps the codes the time before call k ran in.
func (c *calls) addSplit(k int32, codes []regionTime) {
	c.splitCall = append(c.splitCall, k)
	c.splitOff = append(c.splitOff, int32(c.splitCode.Len()))
	for _, rt := range codes {
		c.splitCode.Append(rt.Code)
		c.splitNS.Append(rt.NS)
	}
}

// findWhere returns the where of wk: a process calls MPI from a few
// sites, looked up in a short scan (a call's map lookup was half of
// recording it on the 10 M-event halo), from the map past a few. The
// scan starts after the where found last: a loop's calls come in the
// order their wheres were first seen, so the next is most often the one
// after (a scan of four or five wheres a call from the first on the
// 64-process pure-MPI trace).
func (c *calls) findWhere(wk whereKey) (int32, bool) {
	n := len(c.wheres)
	if n > 8 {
		w, ok := c.whereIdx[wk]
		return w, ok
	}
	st := site{wk.fn, wk.loc, wk.region}
	w := c.nextWhere
	for range n {
		if w >= n {
			w = 0
		}
		if x := c.wheres[w]; x.label == wk.label && c.sites[x.site] == st {
			c.nextWhere = w + 1
			return int32(w), true
		}
		w++
	}
	return 0, false
}

// add appends a call begun at t at st after code label, the thread's call
// before it being prev (−1: none), and returns its index.
func (c *calls) add(t int64, st site, label int64, prev int32) int32 {
	wk := whereKey{st.fn, st.loc, st.region, label}
	w, ok := c.findWhere(wk)
	if !ok {
		s, ok := c.siteIdx[st]
		if !ok {
			s = int32(len(c.sites))
			c.sites = append(c.sites, st)
			c.siteIdx[st] = s
		}
		w = int32(len(c.wheres))
		c.wheres = append(c.wheres, where{s, label})
		c.whereIdx[wk] = w
	}
	k := int32(c.len())
	c.enter.Append(t)
	c.dur.Append(0)
	c.where.Append(int64(w))
	back := int64(0)
	if prev >= 0 {
		back = int64(k) - int64(prev)
	}
	if c.prevBack.Len() == 0 {
		if back == min(int64(k), 1) {
			return k // each call's previous is the one before
		}
		c.prevBack.Reserve(max(c.room, int(k)+1))
		for j := range int64(k) {
			c.prevBack.Append(min(j, 1))
		}
	}
	c.prevBack.Append(back)
	return k
}

// Analysis holds what the Recorders of this rank's processes found, for
// Analyze.
type Analysis struct {
	// Release, when set, is called on every rank once the matching and
	// what found nodes and points are dropped, before the tasks' records
	// (the driver collects the garbage there: a collection under way when
	// they were dropped counts them live, and what the records make on
	// top of them set the phase's peak).
	Release func() error
	// Check, when set, is called on every rank comm.ChecksPerLoop times
	// during Analyze's loop over its processes (comm.Checkpoints), which
	// makes the calls' charged waits, synchronization points and
	// progress requests one process after another: the driver checks
	// the memory limit there (collective), so that a limit that loop
	// outgrows stops it within a few processes rather than at the next
	// release point, 20 MiB later on 16 processes of nonblocking
	// collectives. An error stops Analyze on every rank.
	Check func() error
	// Spill, when set, is where Analyze parks the nodes' values while it
	// reads the rows back and works through the processes one by one.
	Spill packed.Spiller
	// Warn counts the records the analysis leaves out (a damaged file's
	// lock epochs), with the first few named: this rank's, for the report.
	Warn sim.Warnings
	// m is the matching until the tasks of the delay costs are made
	// (dropFinders); tp its processes, which the calls' names need to
	// the end.
	m  *graph.Matching
	tp []*trace.Process
	// call is, per node, the index of the MPI call around it in its
	// process's calls, −2−j for a send-like node outside any call, whose
	// own time is bare[j], or −1. A node's time (the enter of the call
	// around it, else its own) is read for send-like nodes only:
	// PropagateMax sends theirs, and the nodes the delay costs reach are
	// predecessors, send-like too.
	call []int32
	bare []int64
	// calls are call's values once Record is done (call is nil then):
	// packed, mostly a byte a node (callOf).
	calls nodeCalls
	// ops are, per process, the operations of its coll_end nodes, by
	// node (sorted by Analyze): only those of coll_end are read. Each
	// process's go once its points are made (12 bytes a collective call).
	ops   [][]nodeOp
	tails map[int32]int64 // by node: the tails nodeOp cannot hold
	// rma is, by node, the pattern of a receive of a general active
	// target synchronisation message (trace.TagWinPost: LatePost,
	// trace.TagWinComplete: EarlyWait) inside a call; nil when the trace
	// has none. Other receives are Late Sender's.
	rma map[int32]Pattern
	// locks are each local process's lock epochs (lock.go), nil for a
	// process with none.
	locks [][]lockEpoch
	procs []calls
	// edges are the processes' matched predecessors (Analyze's), and
	// edge, per node, its row there (−1: none), for the delay costs.
	edges []graph.RemoteEdges
	edge  []int32
	// rowSet holds the nodes with a row when every process's rows are
	// in node order (edge nil then).
	rowSet bitrank.Set
	// Per process, its nodes per thread in event order (threadNodes),
	// made once during Analyze and dropped at its end.
	byThread [][][]int32
	// oneThread is, per process, the thread all its nodes are on (−1:
	// several or none, −2: not known yet): nodeAt needs no byThread then.
	oneThread []int32
	nodeHint  []int32 // per process, the node nodeAt found last
	// reqCall and reqEv give, per point-to-point node (p2p numbers them)
	// whose request another call handled, that call and event
	// (thread<<40 | index): for
	// a receive completed by a Wait or Test, the MPI_Irecv that posted it
	// (its mpi_recv_post), where the receive began (Scalasca's Late
	// Receiver compares the sender with it); for an MPI_Isend, the call
	// that completed it (its mpi_request_done), which waited for the
	// receiver. Both are kept as differences from the node's own call and
	// event (a few calls and events apart: mostly a byte each, narrow.Step,
	// 6 bytes a point-to-point node before; a difference that does not
	// fit is kept aside exactly), 0 for none (the node's own call is
	// both). Made at the first such node; none on a code of blocking
	// calls.
	reqCall narrow.Step[int8, int16, int32]
	reqEv   narrow.Step[int8, int16, int32]
	p2p     nodeRank
	// The Late Receivers' edges by local process (the sender's) and the
	// events they leave from (the receiver's), made by Analyze.
	lrEdges   []graph.RemoteEdges
	lrSources []eventRefs
	// lsCalls marks, per local process, a bit a call (nil: none), the
	// calls a predecessor entered its own call after they began: a
	// message's sender (a Late Sender, which Analyze charges before any
	// Late Receiver of the call) or a collective's latest member. No Late
	// Receiver edge enters them (lateReceivers). Only from the values'
	// propagation to the Late Receiver rounds.
	lsCalls [][]uint64
	// progs are the nonblocking collectives' start nodes and their
	// members' progress points (progress.go), as Record finds them;
	// sorted by node and dropped by Analyze.
	progs []progPt
	// progDone are this rank's progress points by process and time,
	// with their completions, and progReqs the completions that waited
	// for one (progressEdges): from PropagateMax to the loop's end.
	progDone []progDone
	progReqs []progReq
	// polls are, by node, the Test-family calls that polled its request
	// before the call that completed it (poll.go), as runs of calls
	// (first, last); nil when the trace has none.
	polls map[int32][]int32
	// pollRefs are, per local process, its polled requests for the
	// critical path (PollRefs).
	pollRefs [][]sim.PollRef
}

// eventRef packs an event's thread and index in one value (indices stay
// below 2^40: a thread's events are counted by the trace format).
func eventRef(th int64, idx int64) int64 { return th<<40 | idx }

// setReq records node v's request's other call k and event (th, idx);
// v is an MPI_Send or MPI_Recv node (Record's), the only ones with a
// request.
func (a *Analysis) setReq(v int32, k int32, th int, idx int64) {
	if k == a.call[v] {
		return // the node's own call: nothing to keep
	}
	if a.reqCall.Len() == 0 {
		n := a.p2p.number(a.m)
		a.reqCall.Reserve(n)
		a.reqEv.Reserve(n)
		for range n {
			a.reqCall.Append(0)
			a.reqEv.Append(0)
		}
	}
	j, ok := a.p2p.rank(v)
	if !ok {
		return // not a point-to-point node: no request is read of it
	}
	a.reqCall.Set(int(j), int64(k)-int64(a.call[v]))
	a.reqEv.Set(int(j), eventRef(int64(th), idx)-eventRef(int64(a.m.ThreadOf(v)), a.m.EventOf(v)))
}

// reqOf returns node v's request's other call and its event's thread and
// index; ok is false when the node's own call is both.
func (a *Analysis) reqOf(v int32) (k int32, th int32, idx int64, ok bool) {
	if a.reqCall.Len() == 0 {
		return -1, 0, 0, false
	}
	j, ok := a.p2p.rank(v)
	if !ok {
		return -1, 0, 0, false
	}
	d := a.reqCall.At(int(j))
	if d == 0 {
		return -1, 0, 0, false
	}
	ref := eventRef(int64(a.m.ThreadOf(v)), a.m.EventOf(v)) + a.reqEv.At(int(j))
	return a.callOf(v) + int32(d), int32(ref >> 40), ref & (1<<40 - 1), true
}

// callOf returns the call around node v (Analysis.call's value).
func (a *Analysis) callOf(v int32) int32 {
	if a.call != nil {
		return a.call[v]
	}
	return a.calls.at(v)
}

// packCalls packs the nodes' calls once Record is done.
func (a *Analysis) packCalls() {
	if a.call != nil {
		a.calls, a.call = packNodeCalls(a.call), nil
	}
}

// nodeCalls are the nodes' calls (Analysis.call's values: a call's index,
// −2−j for a send outside any call, −1), by block of 64 nodes: a block
// whose values are −1 or calls at most 254 above its least is a byte a
// node beside that base, another keeps its values whole. A process's
// nodes come in the order of its calls (on one thread, of the calls'
// beginnings), so a pure-MPI trace's blocks are bytes: 1.1 bytes a node,
// not 4; a block with sends outside calls (a task runtime's remote
// dependences) stays 4.
type nodeCalls struct {
	base  []int32 // per block: its least call, or wholeBlock
	slot  []int32 // per block: its 64 values' place in bytes or whole, by 64
	bytes []uint8 // value − base, noCall for −1
	whole []int32
}

const (
	wholeBlock = math.MinInt32
	noCall     = math.MaxUint8
)

func packNodeCalls(call []int32) nodeCalls {
	nb := (len(call) + 63) / 64
	c := nodeCalls{base: make([]int32, nb), slot: make([]int32, nb)}
	small := 0
	fits := func(b int) (lo int32, ok bool) {
		lo, hi := int32(math.MaxInt32), int32(-1)
		for _, k := range call[b*64 : min(len(call), b*64+64)] {
			switch {
			case k >= 0:
				lo, hi = min(lo, k), max(hi, k)
			case k != -1:
				return 0, false
			}
		}
		if hi < 0 {
			return 0, true
		}
		return lo, int64(hi)-int64(lo) < noCall
	}
	for b := range nb {
		if _, ok := fits(b); ok {
			small++
		}
	}
	c.bytes = make([]uint8, 0, small*64)
	c.whole = make([]int32, 0, (nb-small)*64)
	for b := range nb {
		vals := call[b*64 : min(len(call), b*64+64)]
		lo, ok := fits(b)
		if !ok {
			c.base[b], c.slot[b] = wholeBlock, int32(len(c.whole)/64)
			c.whole = append(c.whole, vals...)
			c.whole = c.whole[:len(c.whole)+64-len(vals)] // the last block, padded
			continue
		}
		c.base[b], c.slot[b] = lo, int32(len(c.bytes)/64)
		for _, k := range vals {
			x := uint8(noCall)
			if k >= 0 {
				x = uint8(k - lo)
			}
			c.bytes = append(c.bytes, x)
		}
		c.bytes = c.bytes[:len(c.bytes)+64-len(vals)]
	}
	return c
}

// at returns node v's call.
func (c *nodeCalls) at(v int32) int32 {
	b, o := v/64, int(v%64)
	if c.base[b] == wholeBlock {
		return c.whole[int(c.slot[b])*64+o]
	}
	x := c.bytes[int(c.slot[b])*64+o]
	if x == noCall {
		return -1
	}
	return c.base[b] + int32(x)
}

// nodeRank numbers the point-to-point nodes (MPI_Send and MPI_Recv) in
// node order, so that what only they have is a column of them, not of
// every node (a third of the nodes on a pure-MPI trace, whose
// collectives have two nodes per member): 1/8 + 1/16 bytes a node.
type nodeRank struct{ set bitrank.Set }

// number makes r of m's nodes and returns the number of point-to-point
// nodes.
func (r *nodeRank) number(m *graph.Matching) int {
	n := int(m.Len())
	r.set = bitrank.Make(n, func(w int) uint64 {
		var b uint64
		for v := w * 64; v < min(n, w*64+64); v++ {
			if k := m.Kind[v]; k == trace.MPISend || k == trace.MPIRecv {
				b |= 1 << (v % 64)
			}
		}
		return b
	})
	return int(r.set.Len())
}

// rank returns the number of point-to-point nodes before v, and whether
// v is one.
func (r *nodeRank) rank(v int32) (int32, bool) { return r.set.Rank(v) }

// nodeOp is the collective operation of a node and its communicator
// (an index in the process's table), and its tail: the exit of the call
// around it less the coll_end's own time, where Scalasca ends the
// collective's wait (its MpiCollectiveEnd record, before the Leave). It
// is 2 bytes in what was padding; a tail past them is tailAside, kept
// in Analysis.tails.
type nodeOp struct {
	node int32
	op   uint8
	tail uint16
	comm int32
}

const tailAside = math.MaxUint16

// New prepares the analysis of m's processes.
func New(m *graph.Matching) *Analysis {
	a := &Analysis{m: m, tp: m.Procs, call: make([]int32, m.Len()), procs: make([]calls, len(m.Procs))}
	for v := range a.call {
		a.call[v] = -1
	}
	a.ops = make([][]nodeOp, len(m.Procs))
	return a
}

// enter returns the enter time of the call around node v of process i,
// or the node's own time when it is a send-like node outside any call,
// math.MinInt64 for neither.
func (a *Analysis) enter(i int, v int32) int64 {
	switch k := a.callOf(v); {
	case k >= 0:
		return a.procs[i].enterAt(k)
	case k <= -2:
		return a.bare[-2-k]
	}
	return math.MinInt64
}

// exit returns the exit time of the call around node v of process i, or
// the node's own time outside any call, math.MinInt64 for neither.
func (a *Analysis) exit(i int, v int32) int64 {
	switch k := a.callOf(v); {
	case k >= 0:
		return a.procs[i].exitAt(k)
	case k <= -2:
		return a.bare[-2-k]
	}
	return math.MinInt64
}

// opCursor finds the collective operations of nodes asked for in
// ascending order (a walk of the nodes): no search a node.
type opCursor struct {
	ops   []nodeOp // sorted by node
	tails map[int32]int64
	j     int
}

// at returns node v's collective operation (0 when none was recorded),
// communicator and tail (nodeOp's); v is no less than the node asked for
// before.
func (c *opCursor) at(v int32) (op trace.CollOp, comm int32, tail int64) {
	for c.j < len(c.ops) && c.ops[c.j].node < v {
		c.j++
	}
	if c.j < len(c.ops) && c.ops[c.j].node == v {
		o := &c.ops[c.j]
		tail = int64(o.tail)
		if o.tail == tailAside {
			tail = c.tails[v]
		}
		return trace.CollOp(o.op), o.comm, tail
	}
	return 0, -1, 0
}

// callRecorder records one process's MPI calls (Record).
type callRecorder struct {
	a      *Analysis
	c      *calls
	tables *trace.Tables
	// Per thread: its nodes in event order and the next one, the nesting
	// depth of MPI calls, the open call, its last call (−1: none), the
	// stack of user regions (for call sites) and of the codes it runs in
	// (user regions and parallel regions: label's encoding). Where every
	// node is on thread sole (≥ 0), its nodes are the process's, lo to
	// hi, and not listed in nodes (threadNodes).
	nodes    [][]int32
	sole     int32
	lo, hi   int32
	next     []int
	depth    []int32
	open     []int32
	lastCall []int32
	regions  [][]int64
	codes    [][]int64
	// Per thread since its last MPI call's exit: the time spent outside
	// MPI in each code, from codeAt on (tally), for the delay costs' time
	// maps.
	code   [][]regionTime
	codeAt []int64
	// parLoc is the location of each open parallel region begun on a
	// thread read, by id: a worker thread's implicit task (no
	// parallel_begin of its own) runs in its region's code, not in serial
	// code. A region's entry goes at its parallel_end, after every member
	// began (a code of a million regions holds a few entries).
	parLoc map[int64]int64
	// The requests in flight, by id (process-unique): an Irecv's post
	// (its call and event) until its receive completes, an Isend's node
	// until its request is done.
	posts  map[int64]reqRef
	isends map[int64]int32
	ops    *[]nodeOp // the process's collective operations (Analysis.ops)
	// Per thread: the operation (index in ops, −1: none) of the
	// coll_end in its open call and the coll_end's time, until the
	// call's exit gives the tail.
	collOp []int32
	collAt []int64
	// starts are the nonblocking collectives started in a call and not
	// yet completed, by request: their start nodes (nbcEvent).
	starts map[int64]int32
	// lockOpen are, per thread, its open lock epochs (lock.go), nil on a
	// process without rma_lock events.
	lockOpen [][]openLock
	// poll follows the polled requests (poll.go), on a process whose
	// trace has mpi_polled events (nil otherwise).
	poll *pollState
	proc int // the local process's index
}

// thNodes are a thread's nodes in event order: a list, or where the
// list is nil every node from lo to hi.
type thNodes struct {
	list   []int32
	lo, hi int32
}

func (n thNodes) len() int {
	if n.list != nil {
		return len(n.list)
	}
	return int(n.hi - n.lo)
}

func (n thNodes) at(k int) int32 {
	if n.list != nil {
		return n.list[k]
	}
	return n.lo + int32(k)
}

// all yields the nodes in order.
func (n thNodes) all() func(yield func(int32) bool) {
	return func(yield func(int32) bool) {
		for k := range n.len() {
			if !yield(n.at(k)) {
				return
			}
		}
	}
}

// threadNodes returns thread th's nodes (th is a thread of the process).
func (r *callRecorder) threadNodes(th int) thNodes {
	if int32(th) == r.sole {
		return thNodes{lo: r.lo, hi: r.hi}
	}
	return thNodes{list: r.nodes[th]}
}

// regionTime is the time a thread spent in a code (a label).
type regionTime = sim.CodeTime

// tally adds thread th's time outside MPI since codeAt, up to now, to the
// code it runs in.
func (r *callRecorder) tally(th int, now int64) {
	if r.depth[th] == 0 && now > r.codeAt[th] {
		r.code[th] = sim.AddCodeTime(r.code[th], r.label(th), now-r.codeAt[th])
	}
	r.codeAt[th] = now
}

// label is the code thread th runs in: the innermost of the user regions
// (−2 − its string id) and parallel regions (its location) it is in, −1
// for none (serial code).
func (r *callRecorder) label(th int) int64 {
	if cs := r.codes[th]; len(cs) > 0 {
		return cs[len(cs)-1]
	}
	return -1
}

// popRegion leaves the innermost parallel region thread th is in, when
// that is its innermost code.
func (r *callRecorder) popRegion(th int) {
	if cs := r.codes[th]; len(cs) > 0 && cs[len(cs)-1] >= -1 {
		r.codes[th] = cs[:len(cs)-1]
	}
}

// reqRef is an event inside a call: the call and the event's thread and
// index.
type reqRef struct {
	call int32
	th   int
	idx  int64
}

// recorded are the kinds a callRecorder follows: MPI calls, user regions,
// parallel regions, and the communication events (the only nodes).
var recorded = sim.KindsOf(trace.MPIEnter, trace.MPIExit, trace.ParallelBegin, trace.ParallelEnd, trace.RegionEnter, trace.RegionExit,
	trace.ImplicitTaskBegin, trace.ImplicitTaskEnd, trace.MPIRecvPost, trace.MPIRequestDone, trace.MPIPolled,
	trace.RMALock, trace.RMAUnlock) | sim.KindsWhere(trace.IsComm)

// Record records local process i's MPI calls (p, its corrected times
// from tb) before the simulation, so that the matching is gone by then.
// It reads the events of the threads that make MPI calls, in the order
// the simulation would (sim.Walk). A thread that makes none contributes
// only the times of its send-like nodes (remote dependences of a task
// runtime, on every thread), which the matching's recorded times and tb
// give without decoding it; only one with a collective's end, whose
// operation the events hold, is read.
func (a *Analysis) Record(i int, p *trace.Process, tb *trace.Timebase, pool *trace.Scans) error {
	m := a.m
	r := a.recorder(i, p)
	if p.Census.Kinds[trace.MPIEnter] == 0 && m.ProcNodes[i] == m.ProcNodes[i+1] {
		r.finish() // an OpenMP-only process: no call, no node, nothing to read
		return nil
	}
	read := make([]bool, len(r.nodes))
	worker := false
	for th := range r.nodes {
		read[th] = readsThread(m, p, th, r.threadNodes(th))
		worker = worker || read[th] && p.Events[th].Parallel == 0
	}
	if worker {
		// A thread that calls MPI and begins no region may be a worker of
		// a team: its region's location is in the parallel_begin of the
		// thread that began it (a nested region's, a worker of the outer
		// team), which is read too.
		for th := range read {
			read[th] = read[th] || p.Events[th].Parallel > 0
		}
	}
	if err := sim.Walk(p, tb, pool, func(th int) bool { return th < len(read) && read[th] }, recorded, r.event); err != nil {
		return err
	}
	for th := range r.nodes {
		if read[th] {
			continue
		}
		for v := range r.threadNodes(th).all() {
			if m.Role[v] == graph.RoleSend {
				a.call[v] = int32(-2 - len(a.bare))
				a.bare = append(a.bare, tb.At(th, m.EventOf(v), m.RecordedAt(v)))
			}
		}
	}
	r.finish()
	return nil
}

// readsThread reports whether Record decodes thread th of p, whose nodes
// are ns: a thread that makes MPI calls, or holds a collective's end
// (whose operation only the events give), or a send-like node once the
// matching's recorded times are gone (which give its time otherwise).
func readsThread(m *graph.Matching, p *trace.Process, th int, ns thNodes) bool {
	if p.Events[th].MPI > 0 {
		return true
	}
	for v := range ns.all() {
		if isCollEnd(m.Kind[v]) || m.Role[v] == graph.RoleSend && !m.HasRecorded() {
			return true
		}
	}
	return false
}

// ReadsRecorded reports whether Record will read the matching's recorded
// times: only for the send-like nodes of threads it does not decode
// (readsThread). When it will not (an MPI code whose communication is on
// the threads that call MPI), the caller may drop them before the calls'
// columns grow (about 4 bytes a node: 3.3 MB of the 10 M-event halo's
// peak).
func (a *Analysis) ReadsRecorded() bool {
	m := a.m
	if !m.HasRecorded() {
		return false
	}
	for i, p := range m.Procs {
		T := p.NumThreads()
		// Every thread makes MPI calls (a pure MPI code's): each is read,
		// none of its nodes to look at.
		all := true
		for th := range T {
			all = all && p.Events[th].MPI > 0
		}
		if all {
			continue
		}
		has := make([]uint8, T) // bit 0: a send-like node, bit 1: read
		for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
			th := int(m.ThreadOf(v))
			if th < 0 || th >= T {
				continue
			}
			if m.Role[v] == graph.RoleSend {
				has[th] |= 1
			}
			if isCollEnd(m.Kind[v]) || p.Events[th].MPI > 0 {
				has[th] |= 2
			}
		}
		for _, h := range has {
			if h == 1 {
				return true
			}
		}
	}
	return false
}

func (a *Analysis) recorder(i int, p *trace.Process) *callRecorder {
	m := a.m
	T := p.NumThreads()
	r := &callRecorder{a: a, proc: i, c: &a.procs[i], tables: &p.Tables, next: make([]int, T),
		depth: make([]int32, T), open: make([]int32, T), lastCall: make([]int32, T), regions: make([][]int64, T),
		codes: make([][]int64, T), code: make([][]regionTime, T), codeAt: make([]int64, T),
		collOp: make([]int32, T), collAt: make([]int64, T)}
	for th := range r.lastCall {
		r.lastCall[th], r.collOp[th] = -1, -1
	}
	c := r.c
	c.siteIdx, c.whereIdx = map[site]int32{}, map[whereKey]int32{}
	c.initCall, c.initTh = -1, -1
	// One entry per outermost call: at most one per mpi_enter the load
	// counted, reserved so that the columns are not copied as they grow
	// (finish gives back what nested calls left unused).
	n := int(p.Census.Kinds[trace.MPIEnter])
	c.enter.Reserve(n)
	c.dur.Reserve(n)
	c.where.Reserve(n)
	c.room = n
	// A process whose nodes are all on one thread (a pure MPI code's)
	// has them in order without a list: the nodes in its range are that
	// thread's (a list was a copy of every node, 1 % of the phase).
	if t := a.soleThread(i); t >= 0 && int(t) < T {
		r.nodes = make([][]int32, T)
		r.sole, r.lo, r.hi = t, m.ProcNodes[i], m.ProcNodes[i+1]
	} else {
		r.sole = -1
		r.nodes = nodesByThread(m, i, T)
	}
	// An operation per coll_end node at most, as the load counted them:
	// made room for at once, not grown by a quarter at a time (four times
	// its size in copies).
	a.ops[i] = make([]nodeOp, 0, min(int(p.Census.Kinds[trace.CollEnd]+p.Census.Kinds[trace.CollComplete]), int(m.ProcNodes[i+1]-m.ProcNodes[i])))
	r.ops = &a.ops[i]
	if p.Census.Kinds[trace.MPIPolled] > 0 {
		r.poll = newPollState(T)
	}
	if p.Census.Kinds[trace.RMALock] > 0 {
		r.lockOpen = make([][]openLock, T)
	}
	return r
}

func (r *callRecorder) finish() {
	c := r.c
	c.enter.Fit()
	c.dur.Fit()
	c.where.Fit()
	c.prevBack.Fit()
	if len(c.splitCall) > 0 {
		c.splitOff = append(c.splitOff, int32(c.splitCode.Len()))
		c.splitCode.Fit()
		c.splitNS.Fit()
		if cap(c.splitOff) > len(c.splitOff)+len(c.splitOff)/8 {
			c.splitOff = slices.Clone(c.splitOff)
		}
		// The calls with a split, a bit each (they are in call order).
		j := 0
		c.splitAt = bitrank.Make(c.len(), func(w int) uint64 {
			var b uint64
			for ; j < len(c.splitCall) && int(c.splitCall[j]) < (w+1)*64; j++ {
				b |= 1 << (c.splitCall[j] % 64)
			}
			return b
		})
		c.splitCall = nil
	}
}

// event follows MPI calls, user regions and parallel regions and ties the
// thread's next node, when this event (index idx of thread th) is it, to
// the open call.
func (r *callRecorder) event(e *trace.Event, th int, idx int64) {
	if th < 0 || th >= len(r.nodes) {
		return
	}
	switch e.Kind {
	case trace.MPIEnter:
		if r.depth[th] == 0 {
			r.tally(th, e.Time)
		}
		r.depth[th]++
		if r.depth[th] == 1 {
			st := site{fn: e.Args[0], loc: e.Args[1], region: -1}
			if rs := r.regions[th]; len(rs) > 0 {
				st.region = rs[len(rs)-1]
			}
			c := r.c
			prev := r.lastCall[th]
			// The call's label is the code the time since the previous
			// call ran in; when it ran in several, the split is kept
			// aside (before the first call it is not read) and the label
			// is the last.
			label := r.label(th)
			if cs := r.code[th]; len(cs) == 1 {
				label = cs[0].Code
			}
			k := c.add(e.Time, st, label, prev)
			if cs := r.code[th]; prev >= 0 && len(cs) > 1 {
				c.addSplit(k, cs)
			}
			r.code[th] = r.code[th][:0]
			r.open[th], r.lastCall[th] = k, k
			if r.poll != nil {
				r.poll.enter(r.tables, th, k, st.fn)
			}
			if r.lockOpen != nil && len(r.lockOpen[th]) > 0 {
				r.lockCall(th, k, st.fn)
			}
			if c.initCall < 0 && trace.IsMPIInit(r.tables.String(st.fn)) {
				c.initCall, c.initTh = k, int32(th)
			}
		}
		return
	case trace.MPIExit:
		if r.depth[th] > 0 {
			r.depth[th]--
			if r.depth[th] == 0 {
				k := r.open[th]
				r.c.dur.Set(int(k), e.Time-r.c.enterAt(k))
				r.codeAt[th] = e.Time
				if j := r.collOp[th]; j >= 0 {
					r.setTail(j, e.Time-r.collAt[th])
					r.collOp[th] = -1
				}
			}
		}
		return
	case trace.ParallelBegin:
		r.tally(th, e.Time)
		loc := max(-1, e.Args[4]) // −1: a region of unknown location
		r.codes[th] = append(r.codes[th], loc)
		if r.parLoc == nil {
			r.parLoc = map[int64]int64{}
		}
		r.parLoc[e.Args[0]] = loc
		return
	case trace.ParallelEnd:
		r.tally(th, e.Time)
		r.popRegion(th)
		delete(r.parLoc, e.Args[0])
		return
	case trace.ImplicitTaskBegin:
		// Thread 0 of a team began the region (parallel_begin); the others
		// enter it here. A region not begun on a thread read (an MPI code
		// whose initial thread makes no call) is of unknown location.
		if e.Args[3] != 0 {
			r.tally(th, e.Time)
			loc, ok := r.parLoc[e.Args[0]]
			if !ok {
				loc = -1
			}
			r.codes[th] = append(r.codes[th], loc)
		}
		return
	case trace.ImplicitTaskEnd:
		if e.Args[3] != 0 {
			r.tally(th, e.Time)
			r.popRegion(th)
		}
		return
	case trace.RegionEnter:
		r.tally(th, e.Time)
		r.regions[th] = append(r.regions[th], e.Args[0])
		r.codes[th] = append(r.codes[th], -2-max(0, e.Args[0]))
		return
	case trace.RegionExit:
		r.tally(th, e.Time)
		if rs := r.regions[th]; len(rs) > 0 {
			r.regions[th] = rs[:len(rs)-1]
		}
		if cs := r.codes[th]; len(cs) > 0 && cs[len(cs)-1] <= -2 {
			r.codes[th] = cs[:len(cs)-1]
		}
		return
	case trace.MPIRecvPost:
		if req := e.Args[3]; req != 0 && r.depth[th] > 0 {
			if r.posts == nil {
				r.posts = map[int64]reqRef{}
			}
			r.posts[req] = reqRef{r.open[th], th, idx}
		}
		return
	case trace.RMALock, trace.RMAUnlock:
		if r.depth[th] > 0 {
			r.lockEvent(e, th, idx)
		}
		return
	case trace.MPIPolled:
		if r.poll != nil && r.depth[th] > 0 {
			r.poll.polled(th, r.open[th], e.Args[0], idx)
		}
		return
	case trace.MPIRequestDone:
		if r.poll != nil && r.depth[th] > 0 {
			r.poll.done(e.Args[0], r.open[th]) // a send's: not read
		}
		if v, ok := r.isends[e.Args[0]]; ok {
			delete(r.isends, e.Args[0])
			if r.depth[th] > 0 {
				r.a.setReq(v, r.open[th], th, idx)
			}
		}
		return
	}
	ns := r.threadNodes(th)
	k := r.next[th]
	if k >= ns.len() {
		return
	}
	v := ns.at(k)
	if r.a.m.EventOf(v) != idx {
		return
	}
	r.next[th]++
	a := r.a
	switch {
	case r.depth[th] > 0:
		a.call[v] = r.open[th]
		if e.Kind == trace.MPIRecv && (e.Args[1] == trace.TagWinPost || e.Args[1] == trace.TagWinComplete) {
			if a.rma == nil {
				a.rma = map[int32]Pattern{}
			}
			a.rma[v] = LatePost
			if e.Args[1] == trace.TagWinComplete {
				a.rma[v] = EarlyWait
			}
		}
		if req := e.Args[4]; req != 0 && r.poll != nil && (e.Kind == trace.MPIRecv || e.Kind == trace.CollComplete) {
			if runs, at := r.poll.done(req, r.open[th]); runs != nil {
				if a.polls == nil {
					a.polls = map[int32][]int32{}
				}
				a.polls[v] = runs
				a.addPollRef(r.proc, at.th, at.ev, v)
			}
		}
		switch req := e.Args[4]; {
		case req == 0:
		case e.Kind == trace.MPIRecv:
			if p, ok := r.posts[req]; ok {
				delete(r.posts, req)
				if p.call != r.open[th] {
					a.setReq(v, p.call, p.th, p.idx)
				}
			}
		case e.Kind == trace.MPISend:
			if r.isends == nil {
				r.isends = map[int64]int32{}
			}
			r.isends[req] = v
		}
	case a.m.Role[v] == graph.RoleSend:
		a.call[v] = int32(-2 - len(a.bare))
		a.bare = append(a.bare, e.Time)
	}
	if e.Kind == trace.CollStart || e.Kind == trace.CollComplete {
		r.nbcEvent(e, v)
	}
	// Analyze reads the operation and communicator of coll_end nodes only.
	if isCollEnd(e.Kind) && e.Args[0] > 0 && e.Args[0] < trace.NumCollOps {
		if r.depth[th] > 0 {
			r.collOp[th], r.collAt[th] = int32(len(*r.ops)), e.Time
		}
		*r.ops = append(*r.ops, nodeOp{node: v, op: uint8(e.Args[0]), comm: int32(max(-1, min(e.Args[1], math.MaxInt32)))})
	}
}

// setTail sets operation j's tail (nodeOp's) to t.
func (r *callRecorder) setTail(j int32, t int64) {
	o := &(*r.ops)[j]
	t = max(0, t)
	if t < tailAside {
		o.tail = uint16(t)
		return
	}
	o.tail = tailAside
	if r.a.tails == nil {
		r.a.tails = map[int32]int64{}
	}
	r.a.tails[o.node] = t
}

// isCollEnd tells the kinds that end a member's part in a collective: a
// blocking one's coll_end, a nonblocking one's coll_complete (in the
// Wait or Test call that completes it).
func isCollEnd(k trace.Kind) bool { return k == trace.CollEnd || k == trace.CollComplete }
