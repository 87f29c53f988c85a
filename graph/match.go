package graph

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/trace"
)

// Owners tells which analysis rank holds a trace process (partition.Plan
// does).
type Owners interface{ Owner(proc int) int }

// Role is what a node of a Matching stands for in the happened-before
// relation.
type Role uint8

const (
	// RoleSend: an event whose time others must not precede (mpi_send,
	// coll_begin, remote_dep_out).
	RoleSend Role = iota + 1
	// RoleRecv: an event that must not precede its sender (mpi_recv,
	// coll_end, remote_dep_in). A matched one has exactly one input.
	RoleRecv
	// RoleColl: the virtual node of one collective instance; its inputs
	// are the members' relevant coll_begin nodes and its outputs their
	// relevant coll_end nodes, so an instance of N members costs O(N)
	// edges.
	RoleColl
)

// MatchOptions tune Match.
type MatchOptions struct {
	// MaxListed bounds the warnings listed per rank (default 10).
	MaxListed int
	// Scans, when set, recycles the event scans between processes.
	Scans *trace.Scans
	// Release, when set, is called on every rank as the join's records,
	// most of the phase's peak, are dropped, to collect them (the driver's
	// per-process collection): once the sends and the partitions are,
	// before the edges' lists are made, and once the receives and the
	// collectives' records are, before the DAG's arrays are. The collector
	// would otherwise let the new arrays grow beside them.
	Release func() error
	// DropCommLogs releases each process's communication log
	// (trace.Process.DropCommLog) as soon as its scan is done, for a
	// caller that reads it nowhere else: the logs of the processes
	// scanned would otherwise stay beside the records until Match
	// returns (5 MB of the 10 M-event halo's 39 MiB at the scan's end).
	DropCommLogs bool
	// Check, when set, is called on every rank the same number of times:
	// along the scan (comm.Checkpoints over the nodes it makes), once the
	// channels' edges are added, and in the DAG's build
	// (BuildOptions.Check): a memory limit's check, collective, where
	// Release would collect for nothing. On nearest --radix 64 at two
	// ranks the scan grew 4 MiB a rank before the first Release, the
	// edges' lists 3 MiB between the second and the third.
	Check func() error
}

// scanChecks makes Checkpoints' checks along a rank's scan as its nodes
// are made, without a division an event.
type scanChecks struct {
	checks comm.Checkpoints
	units  int   // the nodes the census bounds
	made   int   // checks made
	next   int32 // nodes after which the next check falls
	err    error // a check's, which ends the scan
}

func newScanChecks(check func() error, units int) *scanChecks {
	s := &scanChecks{checks: comm.Checkpoints{Check: check}, units: max(units, 1), next: math.MaxInt32}
	if check != nil {
		s.next = s.due()
	}
	return s
}

// due is the nodes made at which Checkpoints.After makes check made+1.
func (s *scanChecks) due() int32 {
	if s.made >= comm.ChecksPerLoop {
		return math.MaxInt32
	}
	return int32(((s.made+1)*s.units + comm.ChecksPerLoop - 1) / comm.ChecksPerLoop)
}

// at is told the nodes made so far; it returns whether the scan goes on.
func (s *scanChecks) at(n int32) bool {
	if s.err != nil {
		return false
	}
	if n >= s.next {
		s.err = s.checks.After(int(n)-1, s.units)
		s.made = min(comm.ChecksPerLoop, int(n)*comm.ChecksPerLoop/s.units)
		s.next = s.due()
	}
	return s.err == nil
}

// MatchStats counts what one rank matched (sum them over ranks for totals).
// Messages and dependences count at the receiving process's rank,
// collectives at the instance's coordinating rank.
type MatchStats struct {
	Messages           int64 // matched point-to-point messages
	RemoteDeps         int64 // matched remote task dependences
	Collectives        int64 // matched collective instances
	UnmatchedSends     int64
	UnmatchedRecvs     int64
	UnmatchedDepOuts   int64
	UnmatchedDepIns    int64
	BadCollectives     int64 // instances missing members or whose members disagree
	BadEvents          int64 // unknown communicators, peers out of range, unpaired coll_begin/coll_end
	CollectiveCalls    int64 // coll_begin events of communicators with ≥ 2 members
	PointToPointEvents int64 // mpi_send and mpi_recv events seen
	CancelledSends     int64 // mpi_send events withdrawn by their request's mpi_cancelled
	FreedRecvs         int64 // mpi_recv_freed events: receives freed while active
}

func (s *MatchStats) add(o *MatchStats) {
	s.Messages += o.Messages
	s.RemoteDeps += o.RemoteDeps
	s.Collectives += o.Collectives
	s.UnmatchedSends += o.UnmatchedSends
	s.UnmatchedRecvs += o.UnmatchedRecvs
	s.UnmatchedDepOuts += o.UnmatchedDepOuts
	s.UnmatchedDepIns += o.UnmatchedDepIns
	s.BadCollectives += o.BadCollectives
	s.BadEvents += o.BadEvents
	s.CollectiveCalls += o.CollectiveCalls
	s.PointToPointEvents += o.PointToPointEvents
	s.CancelledSends += o.CancelledSends
	s.FreedRecvs += o.FreedRecvs
}

// Vector returns the counts in field order, for reductions.
func (s *MatchStats) Vector() []int64 {
	return []int64{s.Messages, s.RemoteDeps, s.Collectives, s.UnmatchedSends, s.UnmatchedRecvs,
		s.UnmatchedDepOuts, s.UnmatchedDepIns, s.BadCollectives, s.BadEvents, s.CollectiveCalls, s.PointToPointEvents,
		s.CancelledSends, s.FreedRecvs}
}

// MatchStatsFrom is the inverse of Vector; a vector of another length (a
// peer built from other sources) gives zeros. The positional literal stops
// compiling when a field is added, and the length is Vector's own.
func MatchStatsFrom(v []int64) MatchStats {
	var s MatchStats
	if len(v) == len(s.Vector()) {
		s = MatchStats{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]}
	}
	return s
}

// Warnings counts tolerated problems and lists the first few. Lists are in
// process order, and ranks own contiguous blocks of processes, so joining
// the ranks' lists in rank order gives the same first entries for any
// number of ranks.
type Warnings struct {
	Count int64
	First []string
}

// Matching is one rank's part of the happened-before graph of a trace: a
// node for every communication event of its processes (in each process's
// merged event order, one chain per process), a virtual node per collective
// instance it coordinates, and the matched edges between them.
//
// Node arrays are dense and indexed by node id. Event nodes of local
// process i are [ProcNodes[i], ProcNodes[i+1]); collective nodes follow.
type Matching struct {
	DAG       *DAG
	Procs     []*trace.Process // this rank's processes, in process order
	ProcNodes []int32          // event nodes of process i: [ProcNodes[i], ProcNodes[i+1])

	Role []Role
	// thread is each node's thread + 1 (0 for a collective node), in a
	// byte while nearly all fit, 2 bytes past (ThreadOf).
	thread narrow.Step[uint8, uint16, uint16]
	// event is each node's index in its thread (collective node: its
	// instance number), mostly 2 bytes (eventCol; EventOf).
	event eventCol
	// Pos is each event node's position in its process's full merged
	// order (MergedTimes), −1 for collective nodes; nil until SetPositions
	// (only the CLC needs it, and the match reads only the threads that
	// communicate).
	Pos  []int64
	Kind []trace.Kind // event kind (collective node: coll_begin)
	// recorded is each event's time when Match ran (as recorded, before
	// any correction; RecordedAt), dense so censuses need not touch the
	// events, 4.1 bytes a node where it can (nodeTimes). Collective nodes
	// have 0.
	recorded nodeTimes
	// dropped is set once DropRecorded released the times.
	dropped bool
	// park is where ParkColumns wrote the kinds, threads and events.
	park *parkedColumns
	// SelfPairs are matched (send, receive) node pairs within one process:
	// messages a process sends itself, between its threads. They are not
	// DAG edges: a process's events share one clock, so they constrain no
	// synchronization, and two threads' equal timestamps may put the
	// receive first in the merged order, where an edge would close a
	// cycle. ExchangeEdges still reports them.
	SelfPairs [][2]int32

	Stats    MatchStats
	Warnings Warnings

	collComm []int64 // communicator id of collective node ProcNodes[len(Procs)] + k
	scans    *trace.Scans
}

// Len returns the number of nodes.
func (m *Matching) Len() int32 { return int32(len(m.Role)) }

// ProcOf returns the local process index of node n, −1 for a collective
// node. Nodes are in process order, so a process's nodes are one range:
// no column per node.
func (m *Matching) ProcOf(n int32) int32 {
	if n >= m.ProcNodes[len(m.Procs)] {
		return -1
	}
	i, _ := slices.BinarySearch(m.ProcNodes[1:], n+1) // first end past n
	return int32(i)
}

// ProcCursor finds nodes' processes (Matching.ProcOf) where they come
// nearly in order: the last one's range is tried first, not a binary
// search per node.
type ProcCursor struct{ lo, hi, proc int32 }

// Of returns m.ProcOf(n).
func (c *ProcCursor) Of(m *Matching, n int32) int32 {
	if n < c.lo || n >= c.hi {
		c.proc = m.ProcOf(n)
		c.lo, c.hi = 0, 0
		if c.proc >= 0 {
			c.lo, c.hi = m.ProcNodes[c.proc], m.ProcNodes[c.proc+1]
		}
	}
	return c.proc
}

// ThreadOf returns node n's thread, −1 for a collective node.
func (m *Matching) ThreadOf(n int32) int32 { return int32(m.thread.At(int(n)) - 1) }

// EventOf returns node n's index in its thread (a collective node's
// instance number).
func (m *Matching) EventOf(n int32) int64 { return m.event.At(int(n)) }

// DropSyncColumns releases what only clock synchronization and the edge
// exchange read (Pos, SelfPairs, the collective nodes' communicators and
// the DAG's inputs' side): the wait states, which keep the matching to
// their end, read the rest, Recorded until they have recorded the calls
// (DropRecorded). 4 bytes an edge, and Pos's 8 a node when it was set.
func (m *Matching) DropSyncColumns() {
	m.Pos, m.SelfPairs, m.collComm = nil, nil, nil
	if m.DAG != nil {
		m.DAG.DropInputs() // the replays are done; PropagateMax reads the outputs
	}
}

// DropDAG releases the happened-before DAG once nothing will send along
// its edges (the wait states' PropagateMax is the last): 4–6 bytes a node.
func (m *Matching) DropDAG() { m.DAG = nil }

// RecordedAt returns node n's time as recorded (0 for a collective
// node); not after DropRecorded.
func (m *Matching) RecordedAt(n int32) int64 { return m.recorded.at(n) }

// HasRecorded reports whether the recorded times are still held.
func (m *Matching) HasRecorded() bool { return !m.dropped }

// DropRecorded releases the nodes' recorded times (about 4 bytes a node);
// Describe no longer names nodes then.
func (m *Matching) DropRecorded() { m.recorded, m.dropped = nodeTimes{}, true }

// Describe names node n for messages: "process 3 (rank-00003.ptrace) thread 0 event 17
// (mpi_recv)", or the collective instance.
func (m *Matching) Describe(n int32) string {
	if m.dropped || m.park != nil {
		return fmt.Sprintf("node %d", n)
	}
	p := m.ProcOf(n)
	if p < 0 && m.collComm == nil {
		return fmt.Sprintf("collective call #%d", m.EventOf(n)+1)
	}
	if p < 0 {
		return fmt.Sprintf("collective call #%d on communicator %s", m.EventOf(n)+1, trace.CommLabel(int64(m.collComm[n-m.ProcNodes[len(m.Procs)]])))
	}
	return eventRef(m.Procs[p], m.ThreadOf(n), m.EventOf(n), m.Kind[n])
}

// fileOf names the file holding node n's event (trace.Process.EventFile).
func (m *Matching) fileOf(n int32) string {
	return m.Procs[m.ProcOf(n)].EventFile(int(m.ThreadOf(n)))
}

// Record kinds of the matching: the channels' records (joinRecs) are of
// the first two, a collective member's record has a fixed size and the
// third.
const (
	recP2P  = 1 // a point-to-point message
	recDep  = 2 // a remote dependence
	recColl = 3 // one member's part of a collective instance, to its coordinator's rank

)

// chanKey identifies a channel: point-to-point messages of one
// (communicator, source, destination, tag) match in order, and so do remote
// dependences of one (source, destination, predecessor task, successor task).
type chanKey struct {
	a, b     int64 // p2p: communicator id, tag; dependences: predecessor and successor task
	src, dst int32
	typ      int32
}

// collRec is one member's part of a collective instance, decoded an
// instance at a time from where it arrived (collIn): what the instance's
// check and edges read (the members' threads and events, which nothing
// read, took 24 bytes more on the wire).
type collRec struct {
	comm      int64
	inst      int64
	op        int64
	member    int32 // world rank
	nmembers  int32
	root      int32
	rank      int32 // analysis rank holding the member
	begin     int32 // node
	end       int32 // node
	coord     int32 // coordinating process (for warning order)
	memberIdx int32
	// payload says whether the member sends and receives data in the
	// call (trace.CollPayload's bits): a collective without payload
	// synchronizes nobody (see edgesOf).
	payload uint8
}

// Match builds the happened-before graph of the trace processes this rank
// holds (procs, in process order; owners tells where the others are). It
// is collective and distributed: every rank scans only its own processes,
// sends each send-like record to the rank holding its receiver and each
// collective member record to the instance's coordinator (an Alltoallv
// each), matches there, and builds the DAG (one more Alltoallv; two small
// ones ask for the senders of the unmatched sends it lists).
//
// Point-to-point messages match per (communicator id, source, destination,
// tag) in order: the k-th send with a key matches the k-th receive, both in
// their process's merged order. mpi_recv carries the actual source and
// tag, so wildcards are already resolved. Remote task dependences match per
// (predecessor process, successor process, predecessor task, successor
// task) the same way. Collectives match per communicator: the k-th
// coll_begin of every member forms instance k, coordinated by member
// k mod N, which owns its virtual node.
//
// Nothing in the input makes Match fail: unmatched or inconsistent events
// are counted in Stats and listed in Warnings, and their nodes get no edge.
func Match(c comm.Comm, owners Owners, procs []*trace.Process, opts MatchOptions) (*Matching, error) {
	if opts.MaxListed <= 0 {
		opts.MaxListed = 10
	}
	k, me := c.Size(), c.Rank()
	m := &Matching{Procs: procs, ProcNodes: make([]int32, len(procs)+1), scans: opts.Scans}
	b := NewBuilder(me, k)
	// Size the node arrays and the record buffers from the census (upper
	// bounds: PROC_NULL and bad events make no node): growing them by
	// appending would copy them several times.
	var nodes, nrecv, nsend int
	for _, p := range procs {
		k := &p.Census.Kinds
		nodes += int(k[trace.MPISend] + k[trace.RemoteDepOut] + k[trace.MPIRecv] + k[trace.RemoteDepIn] + k[trace.CollBegin] + k[trace.CollEnd] +
			k[trace.CollStart] + k[trace.CollComplete])
		nrecv += int(k[trace.MPIRecv] + k[trace.RemoteDepIn])
		nsend += int(k[trace.MPISend] + k[trace.RemoteDepOut])
		nodes += collNodesBound(p)
	}
	// The channels' records go into the join's partitions, or to the
	// receivers' ranks, as the scan makes them; the collectives' travel
	// in an Alltoallv of their own, to be read where they arrive.
	recs, outColl := newJoinRecs(k, me, owners, nrecv, nsend), newCollOut(k, owners)
	m.grow(nodes)
	b.chained.grow(nodes)
	w := &warner{max: opts.MaxListed}
	var serr error
	checks := newScanChecks(opts.Check, nodes)
	for i := range procs {
		err := m.scan(b, int32(i), recs, outColl, w, checks)
		if checks.err != nil {
			// On every rank at the same check: the guard's is collective.
			return nil, checks.err
		}
		if err != nil && serr == nil {
			serr = fmt.Errorf("rank %d: graph: %s: %w", me, procs[i].File, err)
		}
		if opts.DropCommLogs {
			procs[i].DropCommLog()
		}
		m.ProcNodes[i+1] = b.Len()
	}
	if err := checks.checks.Finish(); err != nil {
		return nil, err
	}
	if err := comm.Agree(c, serr); err != nil {
		return nil, err
	}
	release := func() error {
		if opts.Release == nil {
			return nil
		}
		return opts.Release()
	}
	check := func() error {
		if opts.Check == nil {
			return nil
		}
		return opts.Check()
	}
	// The streams to each rank are made whole, and the chunks they were
	// written in and the logs dropped are collected before what the
	// exchange and the join make lands beside them (the match's peak on
	// halo: 43.0 → 37.8 MiB for the logs).
	sends, collsOut := recs.wire(), outColl.wire()
	outColl = nil
	if err := release(); err != nil {
		return nil, err
	}
	recv, err := c.Alltoallv(sends)
	if err != nil {
		return nil, err
	}
	sends = nil
	recvColl, err := c.Alltoallv(collsOut)
	if err != nil {
		return nil, err
	}
	collsOut = nil
	colls, lerr := readColls(recvColl, me)
	// The sends from other ranks join this rank's partitions, each rank's
	// stream dropped once read.
	for q := range recv {
		if q != me && lerr == nil {
			lerr = recs.arrive(q, recv[q])
		}
		recv[q] = nil
	}
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	// The join gives each receive its sender; the edges are declared
	// after it, in node order, once the partitions are collected, into
	// lists sized for them and for the collectives' edges.
	listed, found, from := m.matchChannels(recs, me, w)
	recs = nil
	if err := release(); err != nil {
		return nil, err
	}
	b.growEdges(found.local+colls.local, found.remote+colls.remote)
	m.addChannelEdges(b, from, found.self)
	from = nil
	if err := check(); err != nil {
		return nil, err
	}
	if err := m.describeUnmatched(c, listed, w); err != nil {
		return nil, err
	}
	m.matchCollectives(b, colls, w)
	colls = nil
	if err := release(); err != nil {
		return nil, err
	}
	m.Warnings = w.done()
	dag, err := b.Build(c, BuildOptions{Release: release, Check: opts.Check})
	if err != nil {
		return nil, err
	}
	m.DAG = dag
	return m, nil
}

// collNodesBound bounds the collective nodes the instances that process p
// coordinates can make: an instance needs its coordinator's call, and the
// k-th call on a communicator of n members is coordinated by member k mod
// n, so p coordinates at most ⌈calls/n⌉ of its calls there, at most
// calls/n + 1 summed over its communicators of n members or more. Reserved
// with the event nodes, so that the columns are not copied to add them
// after the scan (one copy of 16 bytes a node: 53 MB on the 64-process
// mpi trace, for 17 k collective nodes).
func collNodesBound(p *trace.Process) int {
	me := int(p.Header.Rank)
	minSize, ncomms := 0, 0
	for i := range p.Comms {
		c := &p.Comms[i]
		if n := c.Size(); n >= 2 && c.Contains(me) {
			ncomms++
			if minSize == 0 || n < minSize {
				minSize = n
			}
		}
	}
	if ncomms == 0 {
		return 0
	}
	return int(p.Census.Kinds[trace.CollBegin]+p.Census.Kinds[trace.CollStart])/minSize + ncomms
}

// grow makes room for n more event nodes.
func (m *Matching) grow(n int) {
	m.Role = slices.Grow(m.Role, n)
	m.thread.Reserve(n)
	m.event.Reserve(n)
	m.Kind = slices.Grow(m.Kind, n)
	m.recorded.reserve(n)
}

// SetPositions fills Pos for the nodes of local process i from its full
// merged order (MergedTimes): one walk of order with a cursor per thread
// and one into each thread's nodes, which are in the thread's event order.
func (m *Matching) SetPositions(i int, order []uint16) {
	if m.Pos == nil {
		m.Pos = make([]int64, m.Len())
		for v := range m.Pos {
			m.Pos[v] = -1
		}
	}
	lo, hi := m.ProcNodes[i], m.ProcNodes[i+1]
	nth := 0
	for v := lo; v < hi; v++ {
		nth = max(nth, int(m.ThreadOf(v))+1)
	}
	next := make([]int32, nth) // per thread: its next node
	for th := range next {
		next[th] = -1
	}
	// Thread t's nodes in event order, linked through succ.
	succ := make([]int32, hi-lo)
	for v := hi - 1; v >= lo; v-- {
		if th := m.ThreadOf(v); th >= 0 {
			succ[v-lo] = next[th]
			next[th] = v
		}
	}
	idx := make([]int64, nth) // per thread: index of its next event
	for pos, t := range order {
		th := int(t)
		if th >= nth {
			continue
		}
		if v := next[th]; v >= 0 && m.EventOf(v) == idx[th] {
			m.Pos[v] = int64(pos)
			next[th] = succ[v-lo]
		}
		idx[th]++
	}
}

// addNode appends an event node.
func (m *Matching) addNode(b *Builder, role Role, proc, thread int32, event int64, kind trace.Kind, recorded int64) int32 {
	n := b.AddNode(b.Len() > m.ProcNodes[proc])
	m.appendColumns(role, int64(thread)+1, event, kind, recorded)
	return n
}

// appendColumns appends a node's row to the node columns: an event node's
// (addNode) or a collective instance's (thread 0, its instance number).
func (m *Matching) appendColumns(role Role, thread1, event int64, kind trace.Kind, recorded int64) {
	m.Role = append(m.Role, role)
	m.thread.Append(thread1)
	m.event.Append(event)
	m.Kind = append(m.Kind, kind)
	m.recorded.add(recorded)
}

type openColl struct {
	inst    int64
	node    int32
	end     int32 // a nonblocking collective's completion node (−1: none)
	op      int64
	root    int32
	thread  int32
	event   int64
	comm    *trace.Communicator
	midx    int32 // this process's index in comm
	payload uint8
}

// The scan's bookkeeping of collectives, a lookup or two per collective
// call: maps keyed by communicator id and thread were 1.2 % of the pure
// MPI program's analysis (a collective every few events).

// commCalls counts each communicator's collective calls (by id), the
// last communicator's found without a lookup.
type commCalls struct {
	byID   map[int64]*int64
	lastID int64
	last   *int64
}

// next returns communicator id's calls so far and counts one more.
func (c *commCalls) next(id int64) int64 {
	if c.last == nil || c.lastID != id {
		if c.byID == nil {
			c.byID = map[int64]*int64{}
		}
		n, ok := c.byID[id]
		if !ok {
			n = new(int64)
			c.byID[id] = n
		}
		c.lastID, c.last = id, n
	}
	*c.last++
	return *c.last - 1
}

// openColls holds each thread's open blocking collectives (an entry
// whose comm is nil is free): a thread has one open at a time but where
// a coll_end is missing, so a short list a thread; a thread's list past
// openListMax entries moves to a map.
type openColls struct {
	byThread [][]openColl
	many     map[[2]int64]*openColl
}

const openListMax = 8

// at returns the entry of communicator id on thread t: the open one, or
// a free one to fill.
func (o *openColls) at(id int64, t int32) *openColl {
	if o.many != nil {
		if oc, ok := o.many[[2]int64{id, int64(t)}]; ok {
			return oc
		}
	}
	for int(t) >= len(o.byThread) {
		o.byThread = append(o.byThread, nil)
	}
	l := o.byThread[t]
	free := -1
	for k := range l {
		switch {
		case l[k].comm == nil:
			free = k
		case l[k].comm.ID == id:
			return &l[k]
		}
	}
	if free >= 0 {
		return &l[free]
	}
	if len(l) < openListMax {
		o.byThread[t] = append(l, openColl{})
		return &o.byThread[t][len(l)]
	}
	if o.many == nil {
		o.many = map[[2]int64]*openColl{}
	}
	oc := new(openColl)
	o.many[[2]int64{id, int64(t)}] = oc
	return oc
}

// take removes and returns communicator id's open collective on thread t.
func (o *openColls) take(id int64, t int32) (openColl, bool) {
	if int(t) < len(o.byThread) {
		l := o.byThread[t]
		for k := range l {
			if l[k].comm != nil && l[k].comm.ID == id {
				oc := l[k]
				l[k] = openColl{}
				return oc, true
			}
		}
	}
	if o.many != nil {
		key := [2]int64{id, int64(t)}
		if oc, ok := o.many[key]; ok && oc.comm != nil {
			delete(o.many, key)
			return *oc, true
		}
	}
	return openColl{}, false
}

// appendAll appends every open collective to out, in no order.
func (o *openColls) appendAll(out []openColl) []openColl {
	for _, l := range o.byThread {
		for _, oc := range l {
			if oc.comm != nil {
				out = append(out, oc)
			}
		}
	}
	for _, oc := range o.many {
		if oc.comm != nil {
			out = append(out, *oc)
		}
	}
	return out
}

// memberCache is the last communicator's index of this process (-1: not
// a member): collectives come on few communicators.
type memberCache struct {
	cm  *trace.Communicator
	idx int32
}

func (c *memberCache) of(cm *trace.Communicator, me int32) int32 {
	if c.cm != cm {
		c.cm, c.idx = cm, int32(cm.IndexOf(int(me)))
	}
	return c.idx
}

// scan makes the nodes of local process i in merged order and adds the
// channels' records to recs and the collective records to outColl, in one
// decode of the process.
func (m *Matching) scan(b *Builder, i int32, recs *joinRecs, outColl *collOut, w *warner, checks *scanChecks) error {
	p := m.Procs[i]
	me := int32(p.Header.Rank)
	nprocs := int32(p.Header.NRanks)
	var calls commCalls // communicator id → coll_begin and coll_start calls so far
	var open openColls  // (communicator id, thread) → its open collective
	var member memberCache
	// Nonblocking collectives started and not yet completed, by request
	// (a completion may come on another thread); comm nil: a start that
	// synchronizes nobody (a communicator of one) or was reported.
	started := map[int64]openColl{}
	// A collective's root as a world rank; −1 for none, or one out of range.
	rootOf := func(r int64) int32 {
		if r >= 0 && r < int64(nprocs) {
			return int32(r)
		}
		return -1
	}
	bad := func(t int32, idx int64, kind trace.Kind, format string, args ...any) {
		m.Stats.BadEvents++
		w.add(int(me), eventRef(p, t, idx, kind)+": "+fmt.Sprintf(format, args...))
	}
	withdrawn, err := cancelledSends(p, m.scans)
	if err != nil {
		return err
	}
	// Only threads with communication events: the others hold no node.
	err = commWalk(p, m.scans, func(th int, idx int64, e *trace.Event) {
		if !checks.at(b.Len()) {
			return // stopped: the rest of the walk makes nothing
		}
		t := int32(th)
		switch e.Kind {
		case trace.MPISend, trace.MPIRecv:
			m.Stats.PointToPointEvents++
			peer, tag := e.Args[0], e.Args[1]
			if peer == -1 {
				return // MPI_PROC_NULL: no message
			}
			if e.Kind == trace.MPISend && withdrawn[[2]int64{int64(t), idx}] {
				m.Stats.CancelledSends++
				return // cancelled: the message never left
			}
			cm, ok := p.CommByIndex(e.Args[2])
			switch {
			case !ok:
				bad(t, idx, e.Kind, "unknown communicator index %d", e.Args[2])
				return
			case peer < 0 || peer >= int64(nprocs):
				bad(t, idx, e.Kind, "peer %d outside 0..%d", peer, nprocs-1)
				return
			}
			if e.Kind == trace.MPISend {
				n := m.addNode(b, RoleSend, i, t, idx, e.Kind, e.Time)
				recs.send(&chanKey{typ: recP2P, src: me, dst: int32(peer), a: cm.ID, b: tag}, n)
			} else {
				m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
				recs.recv(&chanKey{typ: recP2P, src: int32(peer), dst: me, a: cm.ID, b: tag})
			}
		case trace.MPIRecvFreed:
			// A receive freed while active takes a message when it
			// arrives, which no event records: by MPI's order the
			// channel's next one, which would otherwise pair with the
			// channel's later receives, each one off. Its node pairs
			// with that send and makes no edge (the arrival time is
			// unknown); with a wildcard the channel is unknown too.
			m.Stats.FreedRecvs++
			peer, tag := e.Args[0], e.Args[1]
			cm, ok := p.CommByIndex(e.Args[2])
			switch {
			case !ok:
				bad(t, idx, e.Kind, "unknown communicator index %d", e.Args[2])
			case peer >= int64(nprocs) || peer < -1:
				bad(t, idx, e.Kind, "peer %d outside 0..%d", peer, nprocs-1)
			case peer < 0 || tag < 0:
				w.add(int(me), fmt.Sprintf("%s: a receive from %s, tag %s, communicator %s, freed while active (MPI_Request_free): the message it takes is unknown, so a later receive of that message's channel may pair with it, each one off",
					eventRef(p, t, idx, e.Kind), anyOr(peer, "any source"), anyOr(tag, "any"), trace.CommLabel(cm.ID)))
			default:
				m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
				recs.recv(&chanKey{typ: recP2P, src: int32(peer), dst: me, a: cm.ID, b: tag})
				w.add(int(me), fmt.Sprintf("%s: a receive from process %d, tag %d, communicator %s, freed while active (MPI_Request_free): it takes the channel's next message, at a time no event records (no wait state, no happened-before edge)",
					eventRef(p, t, idx, e.Kind), peer, tag, trace.CommLabel(cm.ID)))
			}
		case trace.RemoteDepOut, trace.RemoteDepIn:
			task, peer, rtask := e.Args[0], e.Args[1], e.Args[2]
			if peer < 0 || peer >= int64(nprocs) {
				bad(t, idx, e.Kind, "peer %d outside 0..%d", peer, nprocs-1)
				return
			}
			if e.Kind == trace.RemoteDepOut {
				n := m.addNode(b, RoleSend, i, t, idx, e.Kind, e.Time)
				recs.send(&chanKey{typ: recDep, src: me, dst: int32(peer), a: task, b: rtask}, n)
			} else {
				m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
				recs.recv(&chanKey{typ: recDep, src: int32(peer), dst: me, a: rtask, b: task})
			}
		case trace.CollBegin:
			cm, ok := p.CommByIndex(e.Args[1])
			if !ok {
				bad(t, idx, e.Kind, "unknown communicator index %d", e.Args[1])
				return
			}
			if cm.Size() < 2 {
				return // nobody to wait for
			}
			if member.of(cm, me) < 0 {
				bad(t, idx, e.Kind, "communicator %s does not list this process", trace.CommLabel(cm.ID))
				return
			}
			oc := open.at(cm.ID, t)
			if oc.comm != nil {
				bad(oc.thread, oc.event, trace.CollBegin, "%s on communicator %s has no coll_end", trace.CollOp(oc.op), trace.CommLabel(cm.ID))
			}
			m.Stats.CollectiveCalls++
			n := m.addNode(b, RoleSend, i, t, idx, e.Kind, e.Time)
			root := rootOf(e.Args[2])
			*oc = openColl{inst: calls.next(cm.ID), node: n, op: e.Args[0], root: root, thread: t, event: idx, comm: cm,
				midx: member.of(cm, me), payload: trace.CollPayload(e)}
		case trace.CollStart:
			req := e.Args[4]
			if oc, busy := started[req]; busy && oc.comm != nil {
				bad(oc.thread, oc.event, trace.CollStart, "%s on communicator %s (request %#x) has no coll_complete before the request starts again",
					trace.CollOp(oc.op), trace.CommLabel(oc.comm.ID), req)
				oc.end = -1
				m.emitColl(outColl, me, &oc)
			}
			skip := openColl{thread: t, event: idx, op: e.Args[0]}
			cm, ok := p.CommByIndex(e.Args[1])
			switch {
			case !ok:
				bad(t, idx, e.Kind, "unknown communicator index %d", e.Args[1])
				started[req] = skip
				return
			case cm.Size() < 2:
				started[req] = skip // nobody to wait for
				return
			case member.of(cm, me) < 0:
				bad(t, idx, e.Kind, "communicator %s does not list this process", trace.CommLabel(cm.ID))
				started[req] = skip
				return
			}
			m.Stats.CollectiveCalls++
			n := m.addNode(b, RoleSend, i, t, idx, e.Kind, e.Time)
			root := rootOf(e.Args[2])
			var pay uint8
			if e.Args[3] > 0 {
				pay = trace.CollSends
			}
			// Numbered with the blocking collectives: MPI orders every
			// collective on a communicator alike on all its members.
			started[req] = openColl{inst: calls.next(cm.ID), node: n, op: e.Args[0], root: root, thread: t, event: idx, comm: cm,
				midx: member.of(cm, me), payload: pay}
		case trace.CollComplete:
			req := e.Args[4]
			oc, ok := started[req]
			if !ok {
				bad(t, idx, e.Kind, "request %#x completes no coll_start", req)
				return
			}
			delete(started, req)
			if oc.comm == nil {
				return // reported at coll_start, or nobody to wait for
			}
			if cm, ok := p.CommByIndex(e.Args[1]); !ok || cm.ID != oc.comm.ID || e.Args[0] != oc.op {
				bad(t, idx, e.Kind, "request %#x completes %s on communicator %s, started as %s on communicator %s",
					req, trace.CollOp(e.Args[0]), commName(cm, ok, e.Args[1]), trace.CollOp(oc.op), trace.CommLabel(oc.comm.ID))
				oc.end = -1
				m.emitColl(outColl, me, &oc)
				return
			}
			oc.end = m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
			if e.Args[3] > 0 {
				oc.payload |= trace.CollReceives
			}
			m.emitColl(outColl, me, &oc)
		case trace.CollEnd:
			cm, ok := p.CommByIndex(e.Args[1])
			if !ok {
				bad(t, idx, e.Kind, "unknown communicator index %d", e.Args[1])
				return
			}
			if cm.Size() < 2 || member.of(cm, me) < 0 {
				return // reported at coll_begin
			}
			oc, ok := open.take(cm.ID, t)
			if !ok {
				bad(t, idx, e.Kind, "coll_end on communicator %s without coll_begin", trace.CommLabel(cm.ID))
				return
			}
			oc.end = m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
			m.emitColl(outColl, me, &oc)
		}
	})
	// Unfinished collectives, in a stable order.
	var left []openColl
	left = open.appendAll(left)
	slices.SortFunc(left, func(a, b openColl) int { return cmp.Or(cmp.Compare(a.thread, b.thread), cmp.Compare(a.event, b.event)) })
	for _, oc := range left {
		bad(oc.thread, oc.event, trace.CollBegin, "%s on communicator %s has no coll_end", trace.CollOp(oc.op), trace.CommLabel(oc.comm.ID))
	}
	// Nonblocking collectives never completed: reported, and their
	// starts still take part (the others wait for them), without an end.
	left = left[:0]
	for _, oc := range started {
		if oc.comm != nil {
			left = append(left, oc)
		}
	}
	slices.SortFunc(left, func(a, b openColl) int { return cmp.Or(cmp.Compare(a.thread, b.thread), cmp.Compare(a.event, b.event)) })
	for i := range left {
		oc := &left[i]
		bad(oc.thread, oc.event, trace.CollStart, "%s on communicator %s has no coll_complete", trace.CollOp(oc.op), trace.CommLabel(oc.comm.ID))
		oc.end = -1
		m.emitColl(outColl, me, oc)
	}
	return err
}

// emitColl sends the member record of collective oc (begun or started at
// node oc.node, ended or completed at node oc.end; −1 for a nonblocking
// one never completed) to its instance's coordinator.
func (m *Matching) emitColl(outColl *collOut, me int32, oc *openColl) {
	cm := oc.comm
	nm := int32(cm.Size())
	coord := int32(cm.Member(int(oc.inst % int64(nm))))
	r := collRec{comm: cm.ID, inst: oc.inst, member: me, nmembers: nm, op: oc.op, root: oc.root,
		begin: oc.node, end: oc.end, coord: coord, memberIdx: oc.midx, payload: oc.payload}
	if oc.end < 0 {
		r.end, r.payload = oc.node, oc.payload&^trace.CollReceives|payloadNoEnd
	}
	outColl.coll(&r)
}

// payloadNoEnd marks, in a collRec's payload, a member that started a
// nonblocking collective and never completed it: its start takes part,
// it has no end to wait (edgesOf).
const payloadNoEnd uint8 = 4

// commName labels communicator index idx of a process (cm, ok: what
// CommByIndex gave).
func commName(cm *trace.Communicator, ok bool, idx int64) string {
	if !ok {
		return fmt.Sprintf("index %d (unknown)", idx)
	}
	return trace.CommLabel(cm.ID)
}

// countRecords sets first[q+1] from first[q] and the n records that came
// from rank q, refusing more records than an int32 numbers.
func countRecords(first []int32, q int, n int32, me int, what string) error {
	if int64(first[q])+int64(n) > math.MaxInt32 {
		return fmt.Errorf("rank %d: graph: more than %d %s", me, math.MaxInt32, what)
	}
	first[q+1] = first[q] + n
	return nil
}

// readColls checks the collective members' records that arrived from
// every rank (known kinds, whole records, fields in range) and notes where
// each starts, as they are read where they arrived (collIn).
func readColls(recvColl [][]byte, me int) (*collIn, error) {
	colls := &collIn{bufs: recvColl, first: make([]int32, len(recvColl)+1)}
	for q, buf := range recvColl {
		if uint64(len(buf)) > math.MaxUint32 {
			return nil, fmt.Errorf("rank %d: graph: %d bytes of collective records from rank %d", me, len(buf), q)
		}
		var n int32
		for at := 0; at < len(buf); n++ {
			if buf[at] != recColl {
				return nil, fmt.Errorf("rank %d: graph: unknown match record %d from rank %d", me, buf[at], q)
			}
			r := recReader{buf: buf, at: at}
			c := r.coll(int32(q))
			if q == me {
				colls.local += collEdges(&c)
			} else {
				colls.remote += collEdges(&c)
			}
			if r.err != nil {
				return nil, fmt.Errorf("rank %d: graph: %w among the collective records from rank %d, at byte %d", me, r.err, q, at)
			}
			colls.off = append(colls.off, uint32(at))
			at = r.at
		}
		if err := countRecords(colls.first, q, n, me, "collective records"); err != nil {
			return nil, err
		}
	}
	return colls, nil
}

// collIn holds the collective members' records that arrived, read where
// they arrived (about 14 bytes a member and 4 for where it starts, where
// a decoded copy took 56): those from rank q are records first[q]… of
// bufs[q], record i at off[i].
type collIn struct {
	bufs  [][]byte
	first []int32
	off   []uint32
	// The edges the records would make on this rank and declared to
	// others (collEdges).
	local, remote int
}

func (c *collIn) len() int { return int(c.first[len(c.bufs)]) }

// raw returns record i's bytes on and the rank that sent it.
func (c *collIn) raw(i int32) ([]byte, int32) {
	lo, hi := 0, len(c.bufs)-1
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); c.first[mid+1] <= i {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return c.bufs[lo][c.off[i]:], int32(lo)
}

// rec returns record i decoded.
func (c *collIn) rec(i int32) collRec {
	b, q := c.raw(i)
	r := recReader{buf: b}
	return r.coll(q)
}

// memberIdx returns record i's member index, inst its instance number:
// the record's first fields, which readColls checked, read inline (the
// grouping's sorts read them several times a record).
func (c *collIn) memberIdx(i int32) int32 {
	b, _ := c.raw(i)
	v, _ := uvarintAt(b, 1)
	return int32(v)
}

func (c *collIn) inst(i int32) int64 {
	b, _ := c.raw(i)
	_, at := uvarintAt(b, 1)
	v, _ := uvarintAt(b, at)
	return int64(v)
}

// uvarintAt reads the varint at b[at:], a checked one, and returns it and
// where the next begins.
func uvarintAt(b []byte, at int) (uint64, int) {
	if c := b[at]; c < 0x80 {
		return uint64(c), at + 1
	}
	v, n := binary.Uvarint(b[at:])
	return v, at + n
}

// eachHead calls f with every record's communicator and instance, in
// order: the record's first fields.
func (c *collIn) eachHead(f func(i int32, comm, inst int64)) {
	for i := range int32(len(c.off)) {
		b, _ := c.raw(i)
		r := recReader{buf: b, at: 1}
		var h [3]uint64
		r.fields(h[:])
		f(i, unzig(h[2]), int64(h[1]))
	}
}

// each calls f with every record, in order.
// (One record is decoded into, out of the loop: f's pointer escapes, and a
// record declared in the loop would be an allocation each.)
func (c *collIn) each(f func(i int32, r *collRec)) {
	i := int32(0)
	var r collRec
	for q, buf := range c.bufs {
		rd := recReader{buf: buf}
		for n := c.first[q+1] - c.first[q]; n > 0; n-- {
			r = rd.coll(int32(q))
			f(i, &r)
			i++
		}
	}
}

// chanHash mixes a channel key into 64 bits: the high bits choose the
// partition, the low bits the slot in the partition's table.
func chanHash(k *chanKey) uint64 {
	h := uint64(k.typ) ^ uint64(uint32(k.src))<<8 ^ uint64(uint32(k.dst))<<36
	h = (h ^ uint64(k.a)*0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9
	h = (h ^ uint64(k.b)*0x94d049bb133111eb ^ h>>29) * 0x9e3779b97f4a7c15
	return h ^ h>>32
}

// matchChannels pairs the sends with the local receives, in order per
// channel, and returns each receive's sender.
//
// It is a radix-partitioned hash join: the scan and the arrival of the
// other ranks' sends wrote both sides into partitions by a hash of the
// channel, each partition's records in their order (joinRecs), and the
// join reads them partition by partition through a small open-addressing
// table reused between partitions. One table over all channels would miss
// the cache on every record when channels carry one message each, as
// remote dependences do (a channel per task pair). Each partition's
// records are read in sequence and dropped once joined.
func (m *Matching) matchChannels(recs *joinRecs, me int, w *warner) ([]unmatched, channelEdges, *joinFrom) {
	var found channelEdges
	from := newJoinFrom(int(recs.nrecv), recs.k)
	// A channel's unmatched receives form a linked list through next (by
	// position in the partition); it also counts the receives and sends it
	// has seen.
	type queue struct {
		key                      chanKey
		head, tail, nrecv, nsend int32
	}
	var queues []queue
	var slots []int32 // open addressing, linear probing: index in queues, −1 empty
	lookup := func(k *chanKey) *queue {
		mask := uint64(len(slots) - 1)
		for i := chanHash(k) & mask; ; i = (i + 1) & mask {
			q := slots[i]
			if q < 0 {
				slots[i] = int32(len(queues))
				queues = append(queues, queue{key: *k, head: -1, tail: -1})
				return &queues[len(queues)-1]
			}
			if queues[q].key == *k {
				return &queues[q]
			}
		}
	}
	var next []int32 // by position in the partition
	var rnum []int64 // by position in the partition: the receive's number
	var left []unmatched
	count := func(k *chanKey, recvs, sends int64) {
		if k.typ == recP2P {
			m.Stats.UnmatchedRecvs += recvs
			m.Stats.UnmatchedSends += sends
		} else {
			m.Stats.UnmatchedDepIns += recvs
			m.Stats.UnmatchedDepOuts += sends
		}
		w.count += recvs + sends
	}
	slots = make([]int32, 16)
	for g := range recs.recvs.parts {
		// Size the table for the partition's records: about as many as
		// their bytes over 4 (a record takes 6 or more).
		n := 0
		for _, c := range recs.recvs.parts[g] {
			n += len(c)
		}
		for _, c := range recs.sends.parts[g] {
			n += len(c)
		}
		size := 16
		for size < n/2 {
			size *= 2
		}
		if cap(slots) < size {
			slots = make([]int32, size)
		}
		slots = slots[:size]
		for i := range slots {
			slots[i] = -1
		}
		queues = queues[:0]
		next, rnum = next[:0], rnum[:0]
		mark := len(left)
		var k chanKey
		rp := recs.recvs.reader(g)
		for rp.more() {
			d, _ := rp.next(&k, false, false)
			rp.seq += d
			p := int32(len(next))
			q := lookup(&k)
			next, rnum = append(next, -1), append(rnum, rp.seq)
			if q.head < 0 {
				q.head = p
			} else {
				next[q.tail] = p
			}
			q.tail = p
			q.nrecv++
		}
		recs.recvs.parts[g] = nil
		sp := recs.sends.reader(g)
		for sp.more() {
			d, rank := sp.next(&k, true, recs.k > 1)
			sp.seq += d
			node := int32(sp.seq)
			q := lookup(&k)
			if q.head >= 0 {
				self := k.src == k.dst
				switch {
				case self:
					found.self++
				case int(rank) == me:
					found.local++
				default:
					found.remote++
				}
				from.set(rnum[q.head], rank, node, self)
				if k.typ == recP2P {
					m.Stats.Messages++
				} else {
					m.Stats.RemoteDeps++
				}
				q.head = next[q.head]
			} else {
				count(&k, 0, 1)
				left = append(left, unmatched{key: k, nth: q.nsend, send: true, rank: rank, node: node})
			}
			q.nsend++
		}
		recs.sends.parts[g] = nil
		// The receives left are the channel's last ones: the sends took
		// the first nsend.
		for qi := range queues {
			q := &queues[qi]
			nth := q.nsend
			for p := q.head; p >= 0; p = next[p] {
				count(&q.key, 1, 0)
				left = append(left, unmatched{key: q.key, nth: nth, recv: rnum[p]})
				nth++
			}
		}
		// Each warning says how many sends and receives its channel has:
		// the side with fewer lost some (a trace cut short or damaged).
		for i := mark; i < len(left); i++ {
			q := lookup(&left[i].key)
			left[i].nsend, left[i].nrecv = q.nsend, q.nrecv
		}
	}
	// Listed in the receiving process's order, whatever the partition.
	slices.SortFunc(left, func(a, b unmatched) int {
		return cmp.Or(cmp.Compare(a.key.dst, b.key.dst), cmp.Compare(a.key.src, b.key.src), cmp.Compare(a.key.typ, b.key.typ),
			cmp.Compare(a.key.a, b.key.a), cmp.Compare(a.key.b, b.key.b), cmp.Compare(a.nth, b.nth), boolCmp(a.send, b.send))
	})
	left = left[:min(len(left), w.max)]
	m.placeUnmatchedRecvs(left)
	return left, found, from
}

// isRecvKind tells the kinds whose nodes are the join's receives, numbered
// in node order.
func isRecvKind(k trace.Kind) bool {
	return k == trace.MPIRecv || k == trace.RemoteDepIn || k == trace.MPIRecvFreed
}

// placeUnmatchedRecvs gives the listed unmatched receives their threads
// and events: one walk of the nodes finds the receives by number.
func (m *Matching) placeUnmatchedRecvs(left []unmatched) {
	var idx []int
	for i := range left {
		if !left[i].send {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(left[a].recv, left[b].recv) })
	nr := int64(0)
	for n, kind := range m.Kind {
		if len(idx) == 0 {
			break
		}
		if !isRecvKind(kind) {
			continue
		}
		for len(idx) > 0 && left[idx[0]].recv == nr {
			u := &left[idx[0]]
			u.th, u.event, u.file, u.freed = m.ThreadOf(int32(n)), m.EventOf(int32(n)), m.fileOf(int32(n)), kind == trace.MPIRecvFreed
			idx = idx[1:]
		}
		nr++
	}
}

// channelEdges counts the matched messages and dependences by the edge
// they make: between two processes of this rank, from another rank, or
// none (within one process).
type channelEdges struct{ local, remote, self int }

// addChannelEdges declares the edges of the matched receives, in node
// order: from the sender into the receive, or a self pair within one
// process (not a DAG edge: a process's events share one clock, so they
// constrain no synchronization, and two threads' equal timestamps may put
// the receive first in the merged order, where an edge would close a
// cycle; ExchangeEdges still reports them). In node order the DAG's build
// fills its inputs' lists in order, where the join's order was at random.
// The receives are numbered in node order: a walk of the nodes' kinds
// finds each.
func (m *Matching) addChannelEdges(b *Builder, from *joinFrom, self int) {
	if self > 0 {
		m.SelfPairs = make([][2]int32, 0, self)
	}
	i := 0
	for n, kind := range m.Kind {
		if !isRecvKind(kind) {
			continue
		}
		rank, node, isSelf, ok := from.at(i)
		i++
		switch {
		case !ok, kind == trace.MPIRecvFreed: // a freed receive's message arrives at no known time
		case isSelf:
			m.SelfPairs = append(m.SelfPairs, [2]int32{node, int32(n)})
		default:
			b.AddRemoteIn(int32(n), NodeRef{Rank: int(rank), Node: node})
		}
	}
}

// unmatched is an unmatched send or receive, for a warning: its channel,
// its number in the channel and its thread and event, which for a send
// its rank's describeUnmatched fills in from its node, for a receive
// placeUnmatchedRecvs from its number.
type unmatched struct {
	key        chanKey
	nth        int32
	nsend      int32 // the channel's sends
	nrecv      int32 // and receives
	send       bool
	rank, node int32 // a send's rank and node
	recv       int64 // a receive's number
	th         int32
	event      int64
	file       string // the file holding the event (trace.Process.EventFile)
	freed      bool   // a receive freed while active (mpi_recv_freed)
}

// describeUnmatched gives the listed unmatched sends their threads and
// events, asking the ranks that hold them (one request and one answer in
// two Alltoallv; a send of this rank's reads its node), and lists the
// warnings in order. It is collective.
func (m *Matching) describeUnmatched(c comm.Comm, listed []unmatched, w *warner) error {
	k, me := c.Size(), c.Rank()
	le := binary.LittleEndian
	ask := make([][]byte, k)
	for i := range listed {
		u := &listed[i]
		switch {
		case !u.send:
		case int(u.rank) == me:
			u.th, u.event, u.file = m.ThreadOf(u.node), m.EventOf(u.node), m.fileOf(u.node)
		default:
			ask[u.rank] = le.AppendUint32(ask[u.rank], uint32(u.node))
		}
	}
	asked, err := c.Alltoallv(ask)
	if err != nil {
		return err
	}
	answer := make([][]byte, k)
	var lerr error
	for q, buf := range asked {
		if len(buf)%4 != 0 {
			lerr = fmt.Errorf("rank %d: graph: truncated request for %d bytes from rank %d", me, len(buf), q)
			break
		}
		for ; len(buf) >= 4; buf = buf[4:] {
			n := int32(le.Uint32(buf))
			if n < 0 || n >= m.ProcNodes[len(m.Procs)] {
				lerr = fmt.Errorf("rank %d: graph: rank %d asks for node %d, which is not an event node here", me, q, n)
				break
			}
			answer[q] = le.AppendUint32(answer[q], uint32(m.ThreadOf(n)))
			answer[q] = le.AppendUint64(answer[q], uint64(m.EventOf(n)))
			f := m.fileOf(n)
			answer[q] = le.AppendUint16(answer[q], uint16(min(len(f), math.MaxUint16)))
			answer[q] = append(answer[q], f[:min(len(f), math.MaxUint16)]...)
		}
	}
	if err := comm.Agree(c, lerr); err != nil {
		return err
	}
	got, err := c.Alltoallv(answer)
	if err != nil {
		return err
	}
	for i := range listed {
		u := &listed[i]
		if !u.send || int(u.rank) == me {
			continue
		}
		q := u.rank
		if len(got[q]) < 14 || len(got[q]) < 14+int(le.Uint16(got[q][12:])) {
			lerr = fmt.Errorf("rank %d: graph: rank %d answers fewer nodes than asked", me, q)
			break
		}
		u.th, u.event = int32(le.Uint32(got[q])), int64(le.Uint64(got[q][4:]))
		nf := int(le.Uint16(got[q][12:]))
		u.file = string(got[q][14 : 14+nf])
		got[q] = got[q][14+nf:]
	}
	if err := comm.Agree(c, lerr); err != nil {
		return err
	}
	for _, u := range listed {
		k := u.key
		var s string
		switch {
		case k.typ == recP2P && u.send:
			s = fmt.Sprintf("unmatched mpi_send: process %d → %d, tag %d, communicator %s: message #%d of this channel (thread %d event %d of process %d, in %s) was never received%s",
				k.src, k.dst, k.b, trace.CommLabel(int64(k.a)), u.nth+1, u.th, u.event, k.src, u.file, channelCounts(k, u))
		case k.typ == recP2P:
			what := "mpi_recv"
			if u.freed {
				what = "mpi_recv_freed (a receive freed while active)"
			}
			s = fmt.Sprintf("unmatched %s: process %d ← %d, tag %d, communicator %s: message #%d of this channel (thread %d event %d of process %d, in %s) was never sent%s",
				what, k.dst, k.src, k.b, trace.CommLabel(int64(k.a)), u.nth+1, u.th, u.event, k.dst, u.file, channelCounts(k, u))
		case u.send:
			s = fmt.Sprintf("unmatched remote_dep_out: process %d task %#x → process %d task %#x (#%d; thread %d event %d of process %d, in %s)",
				k.src, k.a, k.dst, k.b, u.nth+1, u.th, u.event, k.src, u.file)
		default:
			s = fmt.Sprintf("unmatched remote_dep_in: process %d task %#x ← process %d task %#x (#%d; thread %d event %d of process %d, in %s)",
				k.dst, k.b, k.src, k.a, u.nth+1, u.th, u.event, k.dst, u.file)
		}
		w.list(int(k.dst), s)
	}
	return nil
}

// channelCounts says, for an unmatched message's warning, how many sends
// and receives its channel has and which process's trace lacks some: a
// channel's messages pair in order, so when a trace lost one in the
// middle, the later ones paired with the wrong partners and the one left
// over is the last, not the lost one.
func channelCounts(k chanKey, u unmatched) string {
	if u.nsend == u.nrecv {
		return ""
	}
	short, what := k.dst, "receives"
	if u.nsend < u.nrecv {
		short, what = k.src, "sends"
	}
	return fmt.Sprintf(": process %d records %d sends on this channel, process %d %d receives (process %d's trace lacks %s: cut short or damaged? messages pair in order, so a %s lost before this one leaves this one over)",
		k.src, u.nsend, k.dst, u.nrecv, short, what, strings.TrimSuffix(what, "s"))
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// collEdges returns how many edges member record r would make when its
// instance is complete (edgesOf): an all-to-all member an input and an
// output, a rooted one either (a bystander none), a scan's member up to
// prefixWindow inputs and an output. readColls sums them, on this rank
// and declared to others, so that room for them is made once, with the
// channels'.
func collEdges(r *collRec) int {
	if !trace.CollOp(r.op).Valid() {
		return 0
	}
	in, out := edgesOf(r, r.member == r.root)
	n := 0
	if in {
		n++
		if trace.CollOp(r.op).Class() == trace.Prefix {
			n += int(min(r.nmembers, prefixWindow)) - 1
		}
	}
	if out {
		n++
	}
	return n
}

// prefixWindow bounds the members before it whose enters a scan's member
// waits for (prefixEdges): a node per member with an edge from each of
// them costs O(N²) edges, which past 64 members are the 64 nearest (a
// wait for an earlier one is missed; no edge is false).
const prefixWindow = 64

// prefixEdges gives a scan instance (records by member index) a virtual
// node per member that waits, with edges from the enters of the members
// before it that send (MPI_Scan: and its own; at most prefixWindow of
// them, the nearest) and to its exit: the exchange's two rounds (enters
// to virtual nodes, virtual nodes to exits) have no room for a chain.
func (m *Matching) prefixEdges(b *Builder, inst []collRec) {
	inclusive := trace.CollOp(inst[0].op) == trace.CollScan
	for i := range inst {
		r := &inst[i]
		if _, out := edgesOf(r, false); !out {
			continue
		}
		hi := i - 1
		if inclusive {
			hi = i
		}
		var v int32 = -1
		for j, n := hi, 0; j >= 0 && n < prefixWindow; j-- {
			p := &inst[j]
			if in, _ := edgesOf(p, false); !in {
				continue
			}
			if v < 0 {
				v = b.AddNode(false)
				m.appendColumns(RoleColl, 0, r.inst, trace.CollBegin, 0)
				m.collComm = append(m.collComm, r.comm)
			}
			b.AddRemoteIn(v, NodeRef{Rank: int(p.rank), Node: p.begin})
			n++
		}
		if v >= 0 {
			b.AddRemoteOut(v, NodeRef{Rank: int(r.rank), Node: r.end})
		}
	}
}

// edgesOf says whether member record r of a collective instance has an
// edge from its coll_begin into the instance (in) and one from the
// instance to its coll_end (out): one-to-all, every exit after the root's
// enter; all-to-one, the root's exit after every other enter; all-to-all,
// every exit after every enter (a member's own enter included). As in
// Scalasca ("no payload -> no syncpoint -> no waitstate"), only a member
// that moves data takes part, but in a barrier: a root that sends
// (one-to-all) or receives (all-to-one) some, a non-root that receives
// from it or sends to it, an all-to-all member's enter when it sends or
// receives some, its exit when it receives some (MPI_Reduce_scatter with
// a count of 0 for it: it has nothing to wait for; Scalasca would give it
// a wait at N×N of at most its call's few hundred nanoseconds). MPI
// libraries return from a collective of count 0 at once (Open MPI's
// MPI_Allreduce, MPI_Reduce, MPI_Bcast: IMB-MPI1's first message size),
// which an edge would make a clock violation, moved by the controlled
// logical clock, and a wait state.
func edgesOf(r *collRec, isRoot bool) (in, out bool) {
	op := trace.CollOp(r.op)
	class := op.Class()
	if class.Rooted() && r.root < 0 {
		return false, false // a bystander in an intercommunicator's root group (rootOf)
	}
	in, out = edgesOfPayload(op, class, r.payload, isRoot)
	// A nonblocking collective's member that never completed it: its
	// start counts for the others, it has no end to wait.
	return in, out && r.payload&payloadNoEnd == 0
}

func edgesOfPayload(op trace.CollOp, class trace.CollClass, payload uint8, isRoot bool) (in, out bool) {
	sends, receives := payload&trace.CollSends != 0, payload&trace.CollReceives != 0
	switch {
	case op == trace.CollBarrier, op.IsWindow():
		// A window's fence, creation and free move no data of their own
		// but synchronise the window's group as a barrier does (Scalasca's
		// Wait at Fence, Create, Free).
		return true, true
	case class == trace.AllToAll:
		return sends || receives, receives
	case class == trace.Prefix:
		// Scalasca's Early Scan: a member that sends (its enter counts
		// for the members after it) and one that moves data (waits for
		// those before it).
		return sends, sends || receives
	case class == trace.OneToAll:
		return isRoot && sends, !isRoot && receives
	case class == trace.AllToOne:
		return !isRoot && sends, isRoot && receives
	}
	return false, false
}

// groupInstances returns the indices of the member records by instance, in
// (communicator, instance) order and each instance's by member index
// (equal ones in arrival order), and where each instance starts (one
// bound more than instances).
//
// Records arrive by rank, so by process, each process's in its calls'
// order: a counting sort by communicator then by instance replaces a
// comparison sort of the records, which was most of the phase on a trace
// of many collectives of many members. An instance's records, from its
// members in process order, are mostly sorted by member index already.
func groupInstances(recs *collIn) (idx, starts []int32) {
	type commSpan struct {
		id     int64
		n      int32 // records
		lo, hi int64 // instances
		first  int32 // its first record in idx
	}
	at := map[int64]int32{} // communicator id → index in comms
	var comms []commSpan
	which := make([]int32, recs.len()) // communicator index of each record
	last := int32(-1)
	recs.eachHead(func(i int32, comm, inst int64) {
		if last < 0 || comms[last].id != comm {
			c, ok := at[comm]
			if !ok {
				c = int32(len(comms))
				at[comm] = c
				comms = append(comms, commSpan{id: comm, lo: inst, hi: inst})
			}
			last = c
		}
		cs := &comms[last]
		cs.n++
		cs.lo, cs.hi = min(cs.lo, inst), max(cs.hi, inst)
		which[i] = last
	})
	// Communicators by id: each one's place, then its records' range.
	order := make([]int32, len(comms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(comms[a].id, comms[b].id) })
	next := int32(0)
	for _, c := range order {
		comms[c].first = next
		next += comms[c].n
	}
	idx = make([]int32, recs.len())
	fill := make([]int32, len(comms))
	for c := range comms {
		fill[c] = comms[c].first
	}
	for i, c := range which {
		idx[fill[c]] = int32(i)
		fill[c]++
	}
	which, fill = nil, nil
	tmp := make([]int32, 0, 64)
	var count []int32
	byMember := func(a, b int32) int { return cmp.Compare(recs.memberIdx(a), recs.memberIdx(b)) }
	starts = make([]int32, 0, recs.len()/2+1)
	for _, c := range order {
		cs := &comms[c]
		seg := idx[cs.first : cs.first+cs.n]
		span := cs.hi - cs.lo + 1
		if span > 2*int64(cs.n)+64 || span <= 0 {
			// Sparse instance numbers (members that disagree wildly): a
			// table by instance would be larger than the records.
			slices.SortStableFunc(seg, func(a, b int32) int {
				return cmp.Or(cmp.Compare(recs.inst(a), recs.inst(b)), byMember(a, b))
			})
		} else {
			count = slices.Grow(count[:0], int(span)+1)[:span+1]
			clear(count)
			for _, i := range seg {
				count[recs.inst(i)-cs.lo+1]++
			}
			for k := 1; k < len(count); k++ {
				count[k] += count[k-1]
			}
			tmp = slices.Grow(tmp[:0], len(seg))[:len(seg)]
			for _, i := range seg {
				k := recs.inst(i) - cs.lo
				tmp[count[k]] = i
				count[k]++
			}
			copy(seg, tmp)
		}
		for lo := 0; lo < len(seg); {
			hi := lo + 1
			for inst := recs.inst(seg[lo]); hi < len(seg) && recs.inst(seg[hi]) == inst; {
				hi++
			}
			if g := seg[lo:hi]; !slices.IsSortedFunc(g, byMember) {
				slices.SortStableFunc(g, byMember)
			}
			starts = append(starts, cs.first+int32(lo))
			lo = hi
		}
	}
	return idx, append(starts, int32(recs.len()))
}

// matchCollectives checks the member records of each instance and gives
// each complete instance a virtual node with edges by its class.
func (m *Matching) matchCollectives(b *Builder, recs *collIn, w *warner) {
	idx, starts := groupInstances(recs)
	var inst []collRec // an instance's records, copied out in order
	for g := 0; g+1 < len(starts); g++ {
		inst = inst[:0]
		for _, i := range idx[starts[g]:starts[g+1]] {
			inst = append(inst, recs.rec(i))
		}
		if msg := m.checkInstance(inst); msg != "" {
			m.Stats.BadCollectives++
			r := &inst[0]
			w.add(int(r.coord), fmt.Sprintf("%s call #%d on communicator %s: %s", trace.CollOp(r.op), r.inst+1, trace.CommLabel(int64(r.comm)), msg))
			continue
		}
		m.Stats.Collectives++
		if !trace.CollOp(inst[0].op).Valid() {
			// Matched, but not an operation that orders its members:
			// Score-P records communicator and handle creation and
			// destruction (MPI_Comm_dup, _split, _free) as collectives of
			// its own kinds, op 0 here; MPI_Comm_free is local in Open
			// MPI, and Scalasca's timestamp correction drops them too. An
			// edge from the last member's enter to every exit moved
			// correct clocks by up to 12 ms on LULESH and halo archives.
			continue
		}
		if trace.CollOp(inst[0].op).Class() == trace.Prefix {
			m.prefixEdges(b, inst)
			continue
		}
		root := rootOf(inst)
		anyIn, anyOut := false, false
		for i := range inst {
			in, out := edgesOf(&inst[i], inst[i].member == root)
			anyIn, anyOut = anyIn || in, anyOut || out
		}
		if !anyIn || !anyOut {
			continue // no member waits for another (no payload)
		}
		v := b.AddNode(false)
		m.appendColumns(RoleColl, 0, inst[0].inst, trace.CollBegin, 0)
		m.collComm = append(m.collComm, inst[0].comm)
		for i := range inst {
			r := &inst[i]
			in, out := edgesOf(r, r.member == root)
			if in {
				b.AddRemoteIn(v, NodeRef{Rank: int(r.rank), Node: r.begin})
			}
			if out {
				b.AddRemoteOut(v, NodeRef{Rank: int(r.rank), Node: r.end})
			}
		}
	}
}

// rootOf returns the root the members of a collective instance name, −1
// for none. In a rooted collective on an intercommunicator the root's own
// group apart from the root passes MPI_PROC_NULL and takes no part: the
// collector records no root (−1) for those members, and the others name
// the root.
func rootOf(inst []collRec) int32 {
	for i := range inst {
		if inst[i].root >= 0 {
			return inst[i].root
		}
	}
	return -1
}

// checkInstance returns why an instance's member records cannot be matched,
// or "" when they can (records sorted by member index).
func (m *Matching) checkInstance(inst []collRec) string {
	r0 := &inst[0]
	n := int(r0.nmembers)
	root := rootOf(inst)
	rooted := trace.CollOp(r0.op).Class().Rooted()
	for i := range inst {
		r := &inst[i]
		switch {
		case r.nmembers != r0.nmembers:
			return fmt.Sprintf("members disagree on its size (%d vs %d)", r0.nmembers, r.nmembers)
		case r.op != r0.op:
			return fmt.Sprintf("process %d calls %s, process %d %s", r0.member, trace.CollOp(r0.op), r.member, trace.CollOp(r.op))
		case r.root != root && !(rooted && r.root < 0 && r.member != root):
			return fmt.Sprintf("process %d names root %d, process %d root %d", r0.member, root, r.member, r.root)
		case i > 0 && r.memberIdx == inst[i-1].memberIdx:
			return fmt.Sprintf("process %d appears twice", r.member)
		}
	}
	if len(inst) != n {
		return fmt.Sprintf("only %d of its %d members call it (collective counts differ between members: %s)", len(inst), n, m.missingMembers(inst))
	}
	if rooted {
		found := false
		for i := range inst {
			found = found || inst[i].member == root && inst[i].root == root
		}
		if !found {
			return fmt.Sprintf("its root %d is not a member", root)
		}
	}
	return ""
}

// missingMembers names the members of a collective instance that have no
// record in inst (sorted by member index): the processes whose traces
// lack the call, or lack earlier calls on the communicator so that their
// numbering is behind. The coordinating process is a member, held by this
// rank, so its trace knows the communicator's members; member indices name
// them when it does not (its definition lost with a damaged end). Only that
// process is asked: another process of this rank could know them where a
// rank count that places it elsewhere would not, and the warnings must not
// depend on how processes are placed.
func (m *Matching) missingMembers(inst []collRec) string {
	const most = 4
	var cm *trace.Communicator
	for _, p := range m.Procs {
		if int32(p.Header.Rank) != inst[0].coord {
			continue
		}
		for i := range p.Comms {
			if p.Comms[i].ID == inst[0].comm {
				cm = &p.Comms[i]
				break
			}
		}
		break
	}
	var names []string
	j, missing := 0, 0
	for idx := int32(0); idx < inst[0].nmembers; idx++ {
		if j < len(inst) && inst[j].memberIdx == idx {
			j++
			continue
		}
		missing++
		switch {
		case missing > most:
		case cm != nil && int(idx) < cm.Size():
			names = append(names, fmt.Sprintf("process %d", cm.Member(int(idx))))
		default:
			names = append(names, fmt.Sprintf("member %d", idx))
		}
	}
	if missing > most {
		names = append(names, fmt.Sprintf("%d more", missing-most))
	}
	verb := "has"
	if missing > 1 {
		verb = "have"
	}
	whose := "its trace records"
	if missing > 1 {
		whose = "their traces record"
	}
	return fmt.Sprintf("%s %s none: %s fewer calls on this communicator, cut short or damaged?", strings.Join(names, ", "), verb, whose)
}

// warner counts warnings and keeps the first few, ordered by the process
// they concern.
type warner struct {
	max   int
	count int64
	seq   int
	items []warnItem
}

type warnItem struct {
	proc int
	seq  int
	msg  string
}

// add counts and lists one warning about process proc.
func (w *warner) add(proc int, msg string) {
	w.count++
	w.list(proc, msg)
}

// list records a warning already counted.
func (w *warner) list(proc int, msg string) {
	w.items = append(w.items, warnItem{proc, w.seq, msg})
	w.seq++
	if len(w.items) > 4*w.max {
		w.trim() // keep memory bounded on a trace full of problems
	}
}

// trim keeps the first max items in (process, insertion) order.
func (w *warner) trim() {
	slices.SortFunc(w.items, func(a, b warnItem) int { return cmp.Or(cmp.Compare(a.proc, b.proc), cmp.Compare(a.seq, b.seq)) })
	w.items = w.items[:min(len(w.items), w.max)]
}

func (w *warner) done() Warnings {
	w.trim()
	out := Warnings{Count: w.count}
	for _, it := range w.items {
		out.First = append(out.First, it.msg)
	}
	return out
}

// eventRef names event idx of thread th of process p for a warning, with
// the file that holds it (trace.Process.EventFile), so a user can find it.
func eventRef(p *trace.Process, th int32, idx int64, k trace.Kind) string {
	return fmt.Sprintf("process %d (%s) thread %d event %d (%s)", p.Header.Rank, p.EventFile(int(th)), th, idx, k)
}

// anyOr is v in decimal, or what when it is negative (a wildcard).
func anyOr(v int64, what string) string {
	if v < 0 {
		return what
	}
	return strconv.FormatInt(v, 10)
}

// cancelledSends returns the mpi_send events (thread, index) of p whose
// request a later mpi_cancelled withdrew: the message never left, so no
// receive may pair with it (the receive that would pairs with the
// channel's next message). Only a process with mpi_cancelled events is
// read (one more decode of its threads: MPI 4.0 deprecates cancelling a
// send, few programs do); the communication log keeps no request.
func cancelledSends(p *trace.Process, pool *trace.Scans) (map[[2]int64]bool, error) {
	if p.Census.Kinds[trace.MPICancelled] == 0 {
		return nil, nil
	}
	sent := map[int64][2]int64{} // request → its mpi_send
	var cancelled []int64
	for th := range p.NumThreads() {
		sc := pool.Get(p, th, nil)
		for sc.Next() {
			e := sc.Event()
			switch {
			case e.Kind == trace.MPISend && e.Args[4] != 0:
				sent[e.Args[4]] = [2]int64{int64(th), sc.Index()}
			case e.Kind == trace.MPICancelled:
				cancelled = append(cancelled, e.Args[0])
			}
		}
		err := sc.Err()
		pool.Put(sc)
		if err != nil {
			return nil, err
		}
	}
	out := make(map[[2]int64]bool, len(cancelled))
	for _, r := range cancelled {
		if at, ok := sent[r]; ok {
			out[at] = true
		}
	}
	return out, nil
}
