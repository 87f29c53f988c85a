package graph

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

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
}

// Vector returns the counts in field order, for reductions.
func (s *MatchStats) Vector() []int64 {
	return []int64{s.Messages, s.RemoteDeps, s.Collectives, s.UnmatchedSends, s.UnmatchedRecvs,
		s.UnmatchedDepOuts, s.UnmatchedDepIns, s.BadCollectives, s.BadEvents, s.CollectiveCalls, s.PointToPointEvents}
}

// MatchStatsFrom is the inverse of Vector.
func MatchStatsFrom(v []int64) MatchStats {
	var s MatchStats
	if len(v) == 11 {
		s = MatchStats{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]}
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

// Describe names node n for messages: "process 3 thread 0 event 17
// (mpi_recv)", or the collective instance.
func (m *Matching) Describe(n int32) string {
	if m.dropped {
		return fmt.Sprintf("node %d", n)
	}
	p := m.ProcOf(n)
	if p < 0 && m.collComm == nil {
		return fmt.Sprintf("collective call #%d", m.EventOf(n)+1)
	}
	if p < 0 {
		return fmt.Sprintf("collective call #%d on communicator %d", m.EventOf(n)+1, m.collComm[n-m.ProcNodes[len(m.Procs)]])
	}
	return fmt.Sprintf("process %d thread %d event %d (%s)", m.Procs[p].Header.Rank, m.ThreadOf(n), m.EventOf(n), m.Kind[n])
}

// Record kinds of the matching exchange. Records have fixed sizes; a
// rank's buffer to each destination holds them in scan order.
const (
	recP2P  = 1 // a point-to-point send, to the receiver's rank
	recDep  = 2 // a remote_dep_out, to the successor's rank
	recColl = 3 // one member's part of a collective instance, to its coordinator's rank

	sendRecSize = 1 + 4 + 4 + 8 + 8 + 4
	collRecSize = 1 + 8 + 8 + 4 + 4 + 8 + 4 + 4 + 4 + 4 + 4
)

// chanKey identifies a channel: point-to-point messages of one
// (communicator, source, destination, tag) match in order, and so do remote
// dependences of one (source, destination, predecessor task, successor task).
type chanKey struct {
	a, b     int64 // p2p: communicator id, tag; dependences: predecessor and successor task
	src, dst int32
	typ      int32
}

// recvRec is a local receive-like event waiting for its sender: its
// channel's key and its node, whose thread and event the Matching holds,
// in 24 bytes. The channel's destination is the node's process (procDst),
// and the record kind is the top bit of nt, above the node: a chanKey and
// a node took 32.
type recvRec struct {
	a, b int64
	src  int32
	nt   uint32 // node | 1<<31 for a remote dependence
}

func newRecvRec(typ, src int32, a, b int64, node int32) recvRec {
	nt := uint32(node)
	if typ == recDep {
		nt |= 1 << 31
	}
	return recvRec{a: a, b: b, src: src, nt: nt}
}

func (r *recvRec) node() int32 { return int32(r.nt &^ (1 << 31)) }

// key returns the channel of r, whose receiving process is dst.
func (r *recvRec) key(dst int32) chanKey {
	typ := int32(recP2P)
	if r.nt>>31 != 0 {
		typ = recDep
	}
	return chanKey{a: r.a, b: r.b, src: r.src, dst: dst, typ: typ}
}

// procDst returns the world rank of node n's process (an event node).
func (m *Matching) procDst(n int32) int32 { return int32(m.Procs[m.ProcOf(n)].Header.Rank) }

// eachRecvKey calls f with the channel of every receive record, in order:
// they are in node order, so a cursor over the processes' node ranges
// gives their destinations.
// (The key is passed by value: a pointer to it would escape, a heap
// allocation a record.)
func (m *Matching) eachRecvKey(recvs []recvRec, f func(i int, k chanKey)) {
	p, dst := 0, int32(-1)
	for i := range recvs {
		n := recvs[i].node()
		if dst < 0 || n >= m.ProcNodes[p+1] {
			for n >= m.ProcNodes[p+1] {
				p++
			}
			dst = int32(m.Procs[p].Header.Rank)
		}
		f(i, recvs[i].key(dst))
	}
}

// sendRec is a send record that arrived, decoded. The sender's thread and
// event are not on the wire (12 bytes a send): the few unmatched sends a
// warning lists ask their rank for them (describeUnmatched).
type sendRec struct {
	key  chanKey
	rank int32 // the analysis rank holding the sender
	node int32
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
	var nodes, nrecv, nsend, ncoll int
	for _, p := range procs {
		k := &p.Census.Kinds
		nodes += int(k[trace.MPISend] + k[trace.RemoteDepOut] + k[trace.MPIRecv] + k[trace.RemoteDepIn] + k[trace.CollBegin] + k[trace.CollEnd])
		nrecv += int(k[trace.MPIRecv] + k[trace.RemoteDepIn])
		nsend += int(k[trace.MPISend] + k[trace.RemoteDepOut])
		ncoll += int(k[trace.CollEnd])
		nodes += collNodesBound(p)
	}
	// Sends and collective records travel apart (two Alltoallv), so that
	// each arrives as a dense array of one record size, read in place.
	out, outColl := newMatchOut(k, owners, nsend*sendRecSize), newMatchOut(k, owners, ncoll*collRecSize)
	m.grow(nodes)
	b.chained.grow(nodes)
	recvs := make([]recvRec, 0, nrecv)
	w := &warner{max: opts.MaxListed}
	var serr error
	for i := range procs {
		if err := m.scan(b, int32(i), out, outColl, &recvs, w); err != nil && serr == nil {
			serr = fmt.Errorf("rank %d: graph: %s: %w", me, procs[i].File, err)
		}
		if opts.DropCommLogs {
			procs[i].DropCommLog()
		}
		m.ProcNodes[i+1] = b.Len()
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
	// The logs dropped are collected before what the exchange and the
	// join make lands beside them (the match's peak on halo: 43.0 →
	// 37.8 MiB).
	if opts.DropCommLogs {
		if err := release(); err != nil {
			return nil, err
		}
	}
	recv, err := c.Alltoallv(out.wire())
	if err != nil {
		return nil, err
	}
	recvColl, err := c.Alltoallv(outColl.wire())
	if err != nil {
		return nil, err
	}
	out, outColl = nil, nil
	in, colls, lerr := readInbox(recv, recvColl, me)
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	// The join writes each matched receive's sender into its record; the
	// edges are declared after it, in node order, once the sends and the
	// partitions are collected, into lists sized for them and for the
	// collectives' edges.
	listed, found := m.matchChannels(recvs, in, me, w)
	in = nil
	if err := release(); err != nil {
		return nil, err
	}
	cl, cr := collEdges(colls, me)
	b.growEdges(found.local+cl, found.remote+cr)
	m.addChannelEdges(b, recvs, found.self)
	recvs = nil
	if err := m.describeUnmatched(c, listed, w); err != nil {
		return nil, err
	}
	m.matchCollectives(b, colls, w)
	colls = nil
	if err := release(); err != nil {
		return nil, err
	}
	m.Warnings = w.done()
	dag, err := b.Build(c, BuildOptions{})
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
	return int(p.Census.Kinds[trace.CollBegin])/minSize + ncomms
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
	inst   int64
	node   int32
	op     int64
	root   int32
	thread int32
	event  int64
	comm   *trace.Communicator
}

// scan makes the nodes of local process i in merged order and adds send
// and collective records to out and receive records to recvs, in one
// decode of the process.
func (m *Matching) scan(b *Builder, i int32, out, outColl *matchOut, recvs *[]recvRec, w *warner) error {
	p := m.Procs[i]
	me := int32(p.Header.Rank)
	nprocs := int32(p.Header.NRanks)
	calls := map[int64]int64{}      // communicator id → coll_begin calls so far
	open := map[[2]int64]openColl{} // (communicator id, thread) → its open collective
	bad := func(t int32, idx int64, kind trace.Kind, format string, args ...any) {
		m.Stats.BadEvents++
		w.add(int(me), fmt.Sprintf("process %d thread %d event %d (%s): ", me, t, idx, kind)+fmt.Sprintf(format, args...))
	}
	// Only threads with communication events: the others hold no node.
	err := commWalk(p, m.scans, func(th int, idx int64, e *trace.Event) {
		t := int32(th)
		switch e.Kind {
		case trace.MPISend, trace.MPIRecv:
			m.Stats.PointToPointEvents++
			peer, tag := e.Args[0], e.Args[1]
			if peer == -1 {
				return // MPI_PROC_NULL: no message
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
				out.send(&chanKey{typ: recP2P, src: me, dst: int32(peer), a: cm.ID, b: tag}, n)
			} else {
				n := m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
				*recvs = append(*recvs, newRecvRec(recP2P, int32(peer), cm.ID, tag, n))
			}
		case trace.RemoteDepOut, trace.RemoteDepIn:
			task, peer, rtask := e.Args[0], e.Args[1], e.Args[2]
			if peer < 0 || peer >= int64(nprocs) {
				bad(t, idx, e.Kind, "peer %d outside 0..%d", peer, nprocs-1)
				return
			}
			if e.Kind == trace.RemoteDepOut {
				n := m.addNode(b, RoleSend, i, t, idx, e.Kind, e.Time)
				out.send(&chanKey{typ: recDep, src: me, dst: int32(peer), a: task, b: rtask}, n)
			} else {
				n := m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
				*recvs = append(*recvs, newRecvRec(recDep, int32(peer), rtask, task, n))
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
			if !cm.Contains(int(me)) {
				bad(t, idx, e.Kind, "communicator %d does not list this process", cm.ID)
				return
			}
			okey := [2]int64{cm.ID, int64(t)}
			if oc, busy := open[okey]; busy {
				bad(oc.thread, oc.event, trace.CollBegin, "%s on communicator %d has no coll_end", trace.CollOp(oc.op), cm.ID)
			}
			m.Stats.CollectiveCalls++
			n := m.addNode(b, RoleSend, i, t, idx, e.Kind, e.Time)
			root := int32(-1)
			if e.Args[2] >= 0 && e.Args[2] < int64(nprocs) {
				root = int32(e.Args[2])
			}
			open[okey] = openColl{inst: calls[cm.ID], node: n, op: e.Args[0], root: root, thread: t, event: idx, comm: cm}
			calls[cm.ID]++
		case trace.CollEnd:
			cm, ok := p.CommByIndex(e.Args[1])
			if !ok {
				bad(t, idx, e.Kind, "unknown communicator index %d", e.Args[1])
				return
			}
			if cm.Size() < 2 || !cm.Contains(int(me)) {
				return // reported at coll_begin
			}
			okey := [2]int64{cm.ID, int64(t)}
			oc, ok := open[okey]
			if !ok {
				bad(t, idx, e.Kind, "coll_end on communicator %d without coll_begin", cm.ID)
				return
			}
			delete(open, okey)
			n := m.addNode(b, RoleRecv, i, t, idx, e.Kind, e.Time)
			nm := int32(cm.Size())
			coord := int32(cm.Member(int(oc.inst % int64(nm))))
			outColl.coll(&collRec{comm: cm.ID, inst: oc.inst, member: me, nmembers: nm, op: oc.op, root: oc.root,
				begin: oc.node, end: n, coord: coord, memberIdx: int32(cm.IndexOf(int(me)))})
		}
	})
	// Unfinished collectives, in a stable order.
	var left []openColl
	for _, oc := range open {
		left = append(left, oc)
	}
	slices.SortFunc(left, func(a, b openColl) int { return cmp.Or(cmp.Compare(a.thread, b.thread), cmp.Compare(a.event, b.event)) })
	for _, oc := range left {
		bad(oc.thread, oc.event, trace.CollBegin, "%s on communicator %d has no coll_end", trace.CollOp(oc.op), oc.comm.ID)
	}
	return err
}

// matchOut collects the records a rank sends in the matching exchange: per
// destination a stream of records in scan order, written in place into
// chunks of one slab sized from the census, which bounds all destinations
// together but none alone. Per-destination buffers grown by appending
// allocate several times what they hold, and one scan-order buffer sorted
// by destination afterwards twice; wire permutes the chunks in place.
type matchOut struct {
	owners Owners
	slab   []byte
	chunk  int     // chunk size
	owner  []int32 // per chunk handed out: its destination
	cur    []int32 // per destination: the chunk it fills, −1 before its first
	fill   []int   // per destination: bytes used in cur
}

// newMatchOut makes room for about bytes of records to k ranks.
func newMatchOut(k int, owners Owners, bytes int) *matchOut {
	// One rank: one chunk. More: chunks of a few pages, small enough that
	// the partly filled last chunk of each destination wastes little.
	c := max(bytes, 64)
	if k > 1 {
		c = min(max(bytes/(8*k), 4<<10), 64<<10) &^ (4<<10 - 1)
	}
	// Destination d needs ⌈bytes_d/c⌉ chunks: at most ⌈bytes/c⌉+k−1 in all.
	// A rank sends to few ranks when there are many, so the slack for
	// partly filled chunks is bounded (an eighth), and the slab grows if
	// more destinations need one: k−1 chunks for each of k ranks would be
	// quadratic in k.
	full := (bytes + c - 1) / c
	n := full + min(k-1, max(full/8, 1))
	o := &matchOut{owners: owners, slab: make([]byte, n*c), chunk: c, owner: make([]int32, 0, n),
		cur: make([]int32, k), fill: make([]int, k)}
	for d := range o.cur {
		o.cur[d] = -1
	}
	return o
}

// put appends record r to destination d's stream.
func (o *matchOut) put(d int, r []byte) {
	for len(r) > 0 {
		c := o.cur[d]
		if c < 0 || o.fill[d] == o.chunk {
			c = int32(len(o.owner))
			if end := (int(c) + 1) * o.chunk; end > len(o.slab) {
				o.slab = slices.Grow(o.slab, o.chunk)[:end] // many destinations, or the census was short
			}
			o.owner = append(o.owner, int32(d))
			o.cur[d], o.fill[d] = c, 0
		}
		at := int(c)*o.chunk + o.fill[d]
		n := copy(o.slab[at:at+o.chunk-o.fill[d]], r)
		o.fill[d] += n
		r = r[n:]
	}
}

// dest returns the rank holding trace process proc.
func (o *matchOut) dest(proc int32) int {
	if len(o.cur) == 1 {
		return 0
	}
	return o.owners.Owner(int(proc))
}

// send adds a send record, for the rank holding k.dst.
func (o *matchOut) send(k *chanKey, node int32) {
	var r [sendRecSize]byte
	le := binary.LittleEndian
	r[0] = byte(k.typ)
	le.PutUint32(r[1:], uint32(k.src))
	le.PutUint32(r[5:], uint32(k.dst))
	le.PutUint64(r[9:], uint64(k.a))
	le.PutUint64(r[17:], uint64(k.b))
	le.PutUint32(r[25:], uint32(node))
	o.put(o.dest(k.dst), r[:])
}

// coll adds a collective member record, for the rank holding c.coord.
func (o *matchOut) coll(c *collRec) {
	var r [collRecSize]byte
	le := binary.LittleEndian
	r[0] = recColl
	le.PutUint64(r[1:], uint64(c.comm))
	le.PutUint64(r[9:], uint64(c.inst))
	le.PutUint32(r[17:], uint32(c.member))
	le.PutUint32(r[21:], uint32(c.nmembers))
	le.PutUint64(r[25:], uint64(c.op))
	le.PutUint32(r[33:], uint32(c.root))
	le.PutUint32(r[37:], uint32(c.begin))
	le.PutUint32(r[41:], uint32(c.end))
	le.PutUint32(r[45:], uint32(c.coord))
	le.PutUint32(r[49:], uint32(c.memberIdx))
	o.put(o.dest(c.coord), r[:])
}

// wire returns the streams for Alltoallv, by destination, as slices of
// the slab: it moves every destination's chunks together, in their order,
// following the permutation's cycles through one chunk of scratch.
func (o *matchOut) wire() [][]byte {
	k, c := len(o.cur), o.chunk
	base := make([]int32, k+1) // destination d's chunks go to [base[d], base[d+1])
	for _, d := range o.owner {
		base[d+1]++
	}
	for d := range k {
		base[d+1] += base[d]
	}
	from := make([]int32, len(o.owner)) // position p receives chunk from[p]
	at := slices.Clone(base[:k])
	for ch, d := range o.owner {
		from[at[d]] = int32(ch)
		at[d]++
	}
	// Only each destination's last chunk is partly filled: move what is
	// used, not to touch fresh pages.
	used := func(ch int32) int {
		if d := o.owner[ch]; o.cur[d] == ch {
			return o.fill[d]
		}
		return c
	}
	chunk := func(ch int32) []byte { return o.slab[int(ch)*c : int(ch+1)*c] }
	var tmp []byte
	for p := range from {
		if from[p] == int32(p) {
			continue // in place, or placed by an earlier cycle
		}
		if tmp == nil {
			tmp = make([]byte, c)
		}
		saved := copy(tmp, chunk(int32(p))[:used(int32(p))])
		for q := int32(p); ; {
			ch := from[q]
			from[q] = q
			if ch == int32(p) {
				copy(chunk(q), tmp[:saved])
				break
			}
			copy(chunk(q), chunk(ch)[:used(ch)])
			q = ch
		}
	}
	bufs := make([][]byte, k)
	for d := range bufs {
		if n := int(base[d+1] - base[d]); n > 0 {
			lo := int(base[d]) * c
			hi := lo + (n-1)*c + o.fill[d]
			bufs[d] = o.slab[lo:hi:hi]
		}
	}
	o.slab, o.owner = nil, nil
	return bufs
}

// inbox holds the send records that arrived, read where they arrived:
// those from rank q are the first first[q+1]-first[q] records of bufs[q],
// in the sender's scan order.
type inbox struct {
	bufs  [][]byte
	first []int32
	// Sends whose edge is local to this rank and sends from other ranks
	// (messages within one process make no edge), to size the builder.
	local, remote int
}

// len returns the number of send records.
func (in *inbox) len() int { return int(in.first[len(in.bufs)]) }

// at returns send record i and the rank that sent it.
func (in *inbox) at(i int32) ([]byte, int32) { return recordAt(in.bufs, in.first, sendRecSize, i) }

// recordAt returns record i of records of size bytes that arrived from
// every rank, those from rank q being records first[q]… of bufs[q], and
// the rank that sent it.
func recordAt(bufs [][]byte, first []int32, size int, i int32) ([]byte, int32) {
	lo, hi := 0, len(bufs)-1
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); first[mid+1] <= i {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	off := int(i-first[lo]) * size
	return bufs[lo][off : off+size], int32(lo)
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

// sendKey reads the channel of a send record.
func sendKey(r []byte) chanKey {
	le := binary.LittleEndian
	return chanKey{typ: int32(r[0]), src: int32(le.Uint32(r[1:])), dst: int32(le.Uint32(r[5:])), a: int64(le.Uint64(r[9:])), b: int64(le.Uint64(r[17:]))}
}

// readInbox checks the records that arrived from every rank (known kinds,
// whole records): sends, which matchChannels reads where they arrived, and
// collective members' records (collIn).
func readInbox(recv, recvColl [][]byte, me int) (*inbox, *collIn, error) {
	in := &inbox{bufs: recv, first: make([]int32, len(recv)+1)}
	for q, buf := range recv {
		var n int32
		for len(buf) > 0 {
			switch buf[0] {
			case recP2P, recDep:
				if len(buf) < sendRecSize {
					return nil, nil, fmt.Errorf("rank %d: graph: truncated match record from rank %d", me, q)
				}
				switch src, dst := buf[1:5], buf[5:9]; {
				case string(src) == string(dst):
				case q == me:
					in.local++
				default:
					in.remote++
				}
				n++
				buf = buf[sendRecSize:]
			default:
				return nil, nil, fmt.Errorf("rank %d: graph: unknown match record %d from rank %d", me, buf[0], q)
			}
		}
		if err := countRecords(in.first, q, n, me, "match records"); err != nil {
			return nil, nil, err
		}
	}
	colls := &collIn{bufs: recvColl, first: make([]int32, len(recvColl)+1)}
	for q, buf := range recvColl {
		var n int32
		for len(buf) > 0 {
			switch {
			case buf[0] != recColl:
				return nil, nil, fmt.Errorf("rank %d: graph: unknown match record %d from rank %d", me, buf[0], q)
			case len(buf) < collRecSize:
				return nil, nil, fmt.Errorf("rank %d: graph: truncated match record from rank %d", me, q)
			}
			n++
			buf = buf[collRecSize:]
		}
		if err := countRecords(colls.first, q, n, me, "collective records"); err != nil {
			return nil, nil, err
		}
	}
	return in, colls, nil
}

// collIn holds the collective members' records that arrived, read where
// they arrived (53 bytes a member, where a decoded copy took 56 more):
// those from rank q are records first[q]… of bufs[q].
type collIn struct {
	bufs  [][]byte
	first []int32
}

func (c *collIn) len() int { return int(c.first[len(c.bufs)]) }

// raw returns record i and the rank that sent it.
func (c *collIn) raw(i int32) ([]byte, int32) { return recordAt(c.bufs, c.first, collRecSize, i) }

// rec returns record i decoded.
func (c *collIn) rec(i int32) collRec {
	r, q := c.raw(i)
	return decodeColl(r, q)
}

// inst returns record i's instance number, memberIdx its member index.
func (c *collIn) inst(i int32) int64 {
	r, _ := c.raw(i)
	return int64(binary.LittleEndian.Uint64(r[9:]))
}

func (c *collIn) memberIdx(i int32) int32 {
	r, _ := c.raw(i)
	return int32(binary.LittleEndian.Uint32(r[49:]))
}

// each calls f with every record, in order.
// (One record is decoded into, out of the loop: f's pointer escapes, and a
// record declared in the loop would be an allocation each.)
func (c *collIn) each(f func(i int32, r *collRec)) {
	i := int32(0)
	var r collRec
	for q, buf := range c.bufs {
		for n := c.first[q+1] - c.first[q]; n > 0; n-- {
			r = decodeColl(buf, int32(q))
			f(i, &r)
			buf = buf[collRecSize:]
			i++
		}
	}
}

func decodeColl(buf []byte, rank int32) collRec {
	le := binary.LittleEndian
	return collRec{
		comm: int64(le.Uint64(buf[1:])), inst: int64(le.Uint64(buf[9:])),
		member: int32(le.Uint32(buf[17:])), nmembers: int32(le.Uint32(buf[21:])),
		op: int64(le.Uint64(buf[25:])), root: int32(le.Uint32(buf[33:])),
		begin: int32(le.Uint32(buf[37:])), end: int32(le.Uint32(buf[41:])),
		coord: int32(le.Uint32(buf[45:])), memberIdx: int32(le.Uint32(buf[49:])), rank: rank,
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

// matchChannels pairs the sends that arrived with the local receives, in
// order per channel, and declares an edge for every pair.
//
// It is a radix-partitioned hash join: both sides are partitioned by a hash
// of the channel (a stable counting sort, so a channel's records stay in
// order), then joined partition by partition through a small
// open-addressing table reused between partitions. One table over all
// channels would miss the cache on every record when channels carry one
// message each, as remote dependences do (a channel per task pair).
//
// The partitions hold indices, 4 bytes a record, not copies of the
// records: the join reads each record where it lies, gathering a block of
// them at a time so that the reads overlap. That costs less than writing
// copies into fresh memory, where the first touch of a page costs as much
// as about a hundred cache misses.
//
// A matched receive's record gets its sender instead of its channel
// (markMatched): its channel is in the partition's table by then.
func (m *Matching) matchChannels(recvs []recvRec, in *inbox, me int, w *warner) ([]unmatched, channelEdges) {
	var found channelEdges
	const perPart = 2048 // records per partition: its table fits in cache
	ns := in.len()
	bits := uint(0)
	for (len(recvs)+ns)>>bits > perPart {
		bits++
	}
	np := 1 << bits
	partOf := func(k *chanKey) int32 {
		if bits == 0 {
			return 0
		}
		return int32(chanHash(k) >> (64 - bits))
	}
	// The partition of each record, then its index in partition order.
	rOff, sOff := make([]int32, np+1), make([]int32, np+1)
	m.eachRecvKey(recvs, func(_ int, k chanKey) { rOff[partOf(&k)+1]++ })
	eachSend := func(f func(i int32, k *chanKey)) {
		i := int32(0)
		for q, buf := range in.bufs {
			buf = buf[:int(in.first[q+1]-in.first[q])*sendRecSize]
			for ; len(buf) > 0; buf = buf[sendRecSize:] {
				k := sendKey(buf)
				f(i, &k)
				i++
			}
		}
	}
	eachSend(func(_ int32, k *chanKey) { sOff[partOf(k)+1]++ })
	maxRecvs := int32(0) // in one partition
	for g := 0; g < np; g++ {
		maxRecvs = max(maxRecvs, rOff[g+1])
		rOff[g+1] += rOff[g]
		sOff[g+1] += sOff[g]
	}
	ri, si := make([]int32, len(recvs)), make([]int32, ns)
	at := append([]int32(nil), rOff[:np]...)
	m.eachRecvKey(recvs, func(i int, k chanKey) {
		g := partOf(&k)
		ri[at[g]] = int32(i)
		at[g]++
	})
	at = append(at[:0], sOff[:np]...)
	eachSend(func(i int32, k *chanKey) {
		g := partOf(k)
		si[at[g]] = i
		at[g]++
	})

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
	next, rnode := make([]int32, maxRecvs), make([]int32, maxRecvs) // by position in the partition
	var rblk [256]recvRec
	var sblk [256]sendRec
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
	le := binary.LittleEndian
	for g := 0; g < np; g++ {
		rp, sp := ri[rOff[g]:rOff[g+1]], si[sOff[g]:sOff[g+1]]
		size := 16
		for size < 2*(len(rp)+len(sp)) {
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
		// Each loop gathers a block of records first: those reads, at
		// random over arrays larger than the cache, are independent and
		// overlap; between the join's probes they would wait one by one.
		for lo := 0; lo < len(rp); lo += len(rblk) {
			blk := rblk[:min(len(rblk), len(rp)-lo)]
			for j := range blk {
				blk[j] = recvs[rp[lo+j]]
			}
			for j := range blk {
				p := int32(lo + j)
				n := blk[j].node()
				k := blk[j].key(m.procDst(n))
				q := lookup(&k)
				next[p], rnode[p] = -1, n
				if q.head < 0 {
					q.head = p
				} else {
					next[q.tail] = p
				}
				q.tail = p
				q.nrecv++
			}
		}
		for lo := 0; lo < len(sp); lo += len(sblk) {
			blk := sblk[:min(len(sblk), len(sp)-lo)]
			for j := range blk {
				r, rank := in.at(sp[lo+j])
				blk[j] = sendRec{key: sendKey(r), rank: rank, node: int32(le.Uint32(r[25:]))}
			}
			for j := range blk {
				s := &blk[j]
				q := lookup(&s.key)
				if q.head >= 0 {
					self := s.key.src == s.key.dst
					switch {
					case self:
						found.self++
					case int(s.rank) == me:
						found.local++
					default:
						found.remote++
					}
					recvs[rp[q.head]].markMatched(s.rank, s.node, self)
					if s.key.typ == recP2P {
						m.Stats.Messages++
					} else {
						m.Stats.RemoteDeps++
					}
					q.head = next[q.head]
				} else {
					count(&s.key, 0, 1)
					left = append(left, unmatched{key: s.key, nth: q.nsend, send: true, rank: s.rank, node: s.node})
				}
				q.nsend++
			}
		}
		// The receives left are the channel's last ones: the sends took
		// the first nsend.
		for qi := range queues {
			q := &queues[qi]
			nth := q.nsend
			for p := q.head; p >= 0; p = next[p] {
				count(&q.key, 1, 0)
				n := rnode[p]
				left = append(left, unmatched{key: q.key, nth: nth, th: m.ThreadOf(n), event: m.EventOf(n)})
				nth++
			}
		}
	}
	// Listed in the receiving process's order, whatever the partition.
	slices.SortFunc(left, func(a, b unmatched) int {
		return cmp.Or(cmp.Compare(a.key.dst, b.key.dst), cmp.Compare(a.key.src, b.key.src), cmp.Compare(a.key.typ, b.key.typ),
			cmp.Compare(a.key.a, b.key.a), cmp.Compare(a.key.b, b.key.b), cmp.Compare(a.nth, b.nth), boolCmp(a.send, b.send))
	})
	return left[:min(len(left), w.max)], found
}

// channelEdges counts the matched messages and dependences by the edge
// they make: between two processes of this rank, from another rank, or
// none (within one process).
type channelEdges struct{ local, remote, self int }

// markMatched replaces a matched receive's channel with its sender (rank
// and node), src −1 telling it from a channel's record (whose peer is a
// process), b whether the message stays within one process.
func (r *recvRec) markMatched(rank, node int32, self bool) {
	r.src, r.a, r.b = -1, int64(rank)<<32|int64(uint32(node)), 0
	if self {
		r.b = 1
	}
}

// addChannelEdges declares the edges of the matched receives, in node
// order: from the sender into the receive, or a self pair within one
// process (not a DAG edge: a process's events share one clock, so they
// constrain no synchronization, and two threads' equal timestamps may put
// the receive first in the merged order, where an edge would close a
// cycle; ExchangeEdges still reports them). In node order the DAG's build
// fills its inputs' lists in order, where the join's order was at random.
func (m *Matching) addChannelEdges(b *Builder, recvs []recvRec, self int) {
	if self > 0 {
		m.SelfPairs = make([][2]int32, 0, self)
	}
	for i := range recvs {
		r := &recvs[i]
		if r.src != -1 {
			continue // unmatched
		}
		rank, node := int32(r.a>>32), int32(uint32(r.a))
		if r.b != 0 {
			m.SelfPairs = append(m.SelfPairs, [2]int32{node, r.node()})
		} else {
			b.AddRemoteIn(r.node(), NodeRef{Rank: int(rank), Node: node})
		}
	}
}

// unmatched is an unmatched send or receive, for a warning: its channel,
// its number in the channel and its thread and event, which for a send
// its rank's describeUnmatched fills in from its node.
type unmatched struct {
	key        chanKey
	nth        int32
	send       bool
	rank, node int32 // a send's rank and node
	th         int32
	event      int64
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
			u.th, u.event = m.ThreadOf(u.node), m.EventOf(u.node)
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
		if len(got[q]) < 12 {
			lerr = fmt.Errorf("rank %d: graph: rank %d answers fewer nodes than asked", me, q)
			break
		}
		u.th, u.event = int32(le.Uint32(got[q])), int64(le.Uint64(got[q][4:]))
		got[q] = got[q][12:]
	}
	if err := comm.Agree(c, lerr); err != nil {
		return err
	}
	for _, u := range listed {
		k := u.key
		var s string
		switch {
		case k.typ == recP2P && u.send:
			s = fmt.Sprintf("unmatched mpi_send: process %d → %d, tag %d, communicator %d: message #%d of this channel (thread %d event %d of process %d) was never received",
				k.src, k.dst, k.b, k.a, u.nth+1, u.th, u.event, k.src)
		case k.typ == recP2P:
			s = fmt.Sprintf("unmatched mpi_recv: process %d ← %d, tag %d, communicator %d: message #%d of this channel (thread %d event %d of process %d) was never sent",
				k.dst, k.src, k.b, k.a, u.nth+1, u.th, u.event, k.dst)
		case u.send:
			s = fmt.Sprintf("unmatched remote_dep_out: process %d task %#x → process %d task %#x (#%d; thread %d event %d of process %d)",
				k.src, k.a, k.dst, k.b, u.nth+1, u.th, u.event, k.src)
		default:
			s = fmt.Sprintf("unmatched remote_dep_in: process %d task %#x ← process %d task %#x (#%d; thread %d event %d of process %d)",
				k.dst, k.b, k.src, k.a, u.nth+1, u.th, u.event, k.dst)
		}
		w.list(int(k.dst), s)
	}
	return nil
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

// collEdges returns how many edges the member records would make, on this
// rank and declared to others, when every instance is complete: an
// all-to-all member an input and an output, a rooted one either (a
// bystander none). Room for them is made once, with the channels'.
func collEdges(recs *collIn, me int) (local, remote int) {
	recs.each(func(_ int32, r *collRec) {
		n := 1
		switch {
		case !trace.CollOp(r.op).Valid():
			return
		case trace.CollOp(r.op).Class() == trace.AllToAll:
			n = 2
		case r.root < 0:
			return
		}
		if int(r.rank) == me {
			local += n
		} else {
			remote += n
		}
	})
	return local, remote
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
	recs.each(func(i int32, r *collRec) {
		if last < 0 || comms[last].id != r.comm {
			c, ok := at[r.comm]
			if !ok {
				c = int32(len(comms))
				at[r.comm] = c
				comms = append(comms, commSpan{id: r.comm, lo: r.inst, hi: r.inst})
			}
			last = c
		}
		cs := &comms[last]
		cs.n++
		cs.lo, cs.hi = min(cs.lo, r.inst), max(cs.hi, r.inst)
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
		if msg := checkInstance(inst); msg != "" {
			m.Stats.BadCollectives++
			r := &inst[0]
			w.add(int(r.coord), fmt.Sprintf("%s call #%d on communicator %d: %s", trace.CollOp(r.op), r.inst+1, r.comm, msg))
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
		v := b.AddNode(false)
		m.appendColumns(RoleColl, 0, inst[0].inst, trace.CollBegin, 0)
		m.collComm = append(m.collComm, inst[0].comm)
		root := rootOf(inst)
		class := trace.CollOp(inst[0].op).Class()
		for i := range inst {
			r := &inst[i]
			if class != trace.AllToAll && r.root < 0 {
				continue // a bystander in an intercommunicator's root group (rootOf)
			}
			isRoot := r.member == root
			// One-to-all: every exit after the root's enter; all-to-one:
			// the root's exit after every other enter; all-to-all: every
			// exit after every enter (a member's own enter included).
			in := class == trace.AllToAll || class == trace.OneToAll && isRoot || class == trace.AllToOne && !isRoot
			out := class == trace.AllToAll || class == trace.OneToAll && !isRoot || class == trace.AllToOne && isRoot
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
func checkInstance(inst []collRec) string {
	r0 := &inst[0]
	n := int(r0.nmembers)
	root := rootOf(inst)
	rooted := trace.CollOp(r0.op).Class() != trace.AllToAll
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
		return fmt.Sprintf("only %d of its %d members call it (collective counts differ between members)", len(inst), n)
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
