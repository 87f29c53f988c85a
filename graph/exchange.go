package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/internal/bitrank"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/trace"
)

// RemoteEdges lists, for one process, the predecessor of each of its matched
// receive-like events (mpi_recv, coll_end, remote_dep_in) with the
// predecessor's identity and final timestamp: what the simulator and the
// critical path need about other processes. Rows are in the process's
// merged event order; the columns are narrow (below), read by accessors.
//
// The predecessor of an mpi_recv is its mpi_send; of a remote_dep_in its
// remote_dep_out; of a coll_end the latest relevant coll_begin of the
// instance (every member's for all-to-all collectives, the root's for
// one-to-all, every other member's for the root of all-to-one; ties go to
// the lowest process, thread, event), that is, the one that released it. The
// predecessor may be on the same process (a message to itself, see
// Matching.SelfPairs).
type RemoteEdges struct {
	// Time is the receive-like event's own time (as the exchange's times
	// give it), only from ExchangeEdges.
	Time []int64

	// The columns, about 12 bytes a row where they took 26 (23 MB of
	// every phase's peak from the exchange to the critical path on the
	// 10 M-event pure-MPI trace, twenty-ninth round): the threads a byte
	// each while they are below 127, the event an int16 from the first of
	// its block of 64 rows (eventCol), the predecessor's an int16 from the
	// first set in its block, its process a byte (+1, 0 for none: a rank
	// past 253 takes 2 or 4), the two kinds a byte, the predecessor's time
	// an int32 from its block's first receive-like event's time; a value
	// a column cannot hold is kept aside exactly (internal/narrow).
	thread     narrow.Step[int8, int16, int32]
	event      eventCol
	kinds      kindCol
	predProc   narrow.Step[uint8, uint16, uint32]
	predThread narrow.Step[int8, int16, int32]
	predEvent  predEventCol
	predTime   predTimeCol
	noTimes    bool // the predecessors' times were dropped (DropPredTimes)
	// kindsPk holds kinds.code while the rows are parked (ParkRows).
	kindsPk    *packed.ParkedBytes
	rowsParked bool
}

// ThreadAt returns the thread of row k's receive-like event.
func (r *RemoteEdges) ThreadAt(k int) int32 { return int32(r.thread.At(k)) }

// EventAt returns the index in its thread of row k's receive-like event.
func (r *RemoteEdges) EventAt(k int) int64 {
	return r.event.base[uint(k)/eventBlock] + r.event.off.At(k) // eventCol.At, inlined
}

// KindAt returns the kind of row k's receive-like event.
func (r *RemoteEdges) KindAt(k int) trace.Kind {
	kind, _ := r.kinds.At(k)
	return kind
}

// PredProcAt returns the world rank of row k's predecessor's process (−1
// while it has none, in the exchange).
func (r *RemoteEdges) PredProcAt(k int) int32 { return int32(r.predProc.At(k) - 1) }

// PredThreadAt returns the thread of row k's predecessor.
func (r *RemoteEdges) PredThreadAt(k int) int32 { return int32(r.predThread.At(k)) }

// PredEventAt returns the index in its thread of row k's predecessor.
func (r *RemoteEdges) PredEventAt(k int) int64 {
	return r.predEvent.base[uint(k)/edgeBlock] + r.predEvent.off.At(k) // predEventCol.At, inlined
}

// PredKindAt returns the kind of row k's predecessor.
func (r *RemoteEdges) PredKindAt(k int) trace.Kind {
	_, kind := r.kinds.At(k)
	return kind
}

// PredTimeAt returns the final time of row k's predecessor, until
// DropPredTimes.
func (r *RemoteEdges) PredTimeAt(k int) int64 {
	if r.noTimes || r.predTime.park != nil {
		panic("graph: RemoteEdges.PredTimeAt after DropPredTimes or while parked")
	}
	return r.predTime.At(k)
}

// ParkPredTimes writes the predecessors' times to f and lets them go
// from memory until UnparkPredTimes: the wait states, which do not read
// them, run beside 4 bytes a row less (6.9 MB of their peak on the
// 10 M-event pure-MPI trace). On an error they stay in memory. Rows are
// not appended while they are parked.
func (r *RemoteEdges) ParkPredTimes(f packed.Spiller) error {
	if r.noTimes {
		return nil
	}
	return r.predTime.parkTo(f)
}

// UnparkPredTimes reads the parked predecessors' times back.
func (r *RemoteEdges) UnparkPredTimes() error { return r.predTime.unpark() }

// HasPredTimes reports whether the predecessors' times are kept.
func (r *RemoteEdges) HasPredTimes() bool { return !r.noTimes }

// DropPredTimes lets the predecessors' times go (the simulation copies
// them into its lookup, and no later phase reads them): 4 bytes a row.
// Rows appended afterwards keep none either.
func (r *RemoteEdges) DropPredTimes() { r.predTime, r.noTimes = predTimeCol{}, true }

// Len returns the number of rows.
func (r *RemoteEdges) Len() int { return r.thread.Len() }

// Reserve makes room for n more rows, which then append without copying
// (the columns, made at their size, would grow by a quarter or more).
func (r *RemoteEdges) Reserve(n int) {
	if r.rowsParked {
		panic("graph: RemoteEdges.Reserve while the rows are parked")
	}
	if r.Time != nil {
		r.Time = slices.Grow(r.Time, n)
	}
	r.thread.Reserve(n)
	r.event.Reserve(n)
	r.kinds.Reserve(n)
	r.predProc.Reserve(n)
	r.predThread.Reserve(n)
	r.predEvent.Reserve(n)
	if !r.noTimes {
		r.predTime.Reserve(n)
	}
}

// Append adds a row: a receive-like event (thread, event, kind) whose
// predecessor is pred, of kind predKind, at predTime. Rows other phases
// derive (a Late Receiver's edge) join the exchanged ones this way; the
// receive-like event's own time is not kept (Time, once dropped, stays
// so).
func (r *RemoteEdges) Append(thread int32, event int64, kind trace.Kind, predProc, predThread int32, predEvent int64, predKind trace.Kind, predTime int64) {
	if r.predTime.park != nil || r.rowsParked {
		panic("graph: RemoteEdges.Append while the rows or the predecessors' times are parked")
	}
	if r.Time != nil {
		r.Time = append(r.Time, 0)
	}
	r.thread.Append(int64(thread))
	r.event.Append(event)
	r.kinds.Append(kind, predKind)
	r.predProc.Append(int64(predProc) + 1)
	r.predThread.Append(int64(predThread))
	r.predEvent.Append(predEvent)
	if !r.noTimes {
		r.predTime.Append(predTime)
	}
}

// AppendRows appends o's rows (with their predecessors' times while r
// keeps them).
func (r *RemoteEdges) AppendRows(o *RemoteEdges) {
	if o.Len() == 0 {
		return
	}
	r.Reserve(o.Len())
	for k := range o.Len() {
		r.appendRow(o, k)
	}
}

// appendRow appends o's row k (its predecessor's time while r keeps
// them; its own time, when both keep them).
func (r *RemoteEdges) appendRow(o *RemoteEdges, k int) {
	var t int64
	if !r.noTimes {
		t = o.PredTimeAt(k)
	}
	kind, pk := o.kinds.At(k)
	r.Append(o.ThreadAt(k), o.EventAt(k), kind, o.PredProcAt(k), o.PredThreadAt(k), o.PredEventAt(k), pk, t)
	if r.Time != nil && o.Time != nil {
		r.Time[len(r.Time)-1] = o.Time[k]
	}
}

// setPred makes p row k's predecessor.
func (r *RemoteEdges) setPred(k int, p *pred) {
	r.kinds.setPred(k, p.kind)
	r.predProc.Set(k, int64(p.proc)+1)
	r.predThread.Set(k, int64(p.thread))
	r.predEvent.Set(k, p.event)
	r.predTime.Set(k, p.time)
}

// fit drops reserved room beyond the rows.
func (r *RemoteEdges) fit() {
	r.thread.Fit()
	r.predProc.Fit()
	r.predThread.Fit()
}

// pred is one predecessor candidate: an event's identity and time.
type pred struct {
	time   int64
	proc   int32
	thread int32
	event  int64
	kind   trace.Kind
	ok     bool
}

// later reports whether a should replace b as the latest predecessor.
func (a *pred) later(b *pred) bool {
	switch {
	case !b.ok:
		return true
	case a.time != b.time:
		return a.time > b.time
	case a.proc != b.proc:
		return a.proc < b.proc
	case a.thread != b.thread:
		return a.thread < b.thread
	}
	return a.event < b.event
}

const predRecSize = 4 + 8 + 4 + 4 + 8 + 1

// ExchangeEdges gives every receive-like event of this rank's processes the
// identity and current timestamp of its predecessor. times holds the
// current time of every event node (clocksync's Local.NodeTimes after
// synchronization, the recorded ones without), which spares reading the
// scattered events; nil means Matching.RecordedAt. Send-like events travel along
// their edges in one Alltoallv; collective nodes take the latest of their
// inputs and pass it on in a second one, so an instance of N members costs
// O(N) records. It is collective; an error is returned on every rank.
//
// The rows are made before the exchange, one per receive-like node, and a
// delivered predecessor is written into its row: what it holds besides
// the rows is a row index per event node and a candidate per collective
// node, not a candidate per node.
func ExchangeEdges(c comm.Comm, m *Matching, times []int64) ([]RemoteEdges, error) {
	if times == nil {
		return exchangeEdges(c, m, func(_, v int32) int64 { return m.RecordedAt(v) }, true, Bounded{})
	}
	if int32(len(times)) != m.Len() {
		return nil, fmt.Errorf("graph: ExchangeEdges: %d times for %d nodes", len(times), m.Len())
	}
	return exchangeEdges(c, m, func(_, v int32) int64 { return times[v] }, true, Bounded{})
}

// ExchangeEdgesAt is ExchangeEdges with the time of event node v of local
// process proc given by time, and rows without their own times (Time
// nil): where the times are a function of the recorded ones (clocksync's
// interpolation), an array of them would be 8 bytes a node more at the
// exchange's peak (46 MB on spread), and the Time column 8 bytes a row
// (23 MB) that only a census of the synchronization reads, which can find
// a row's node by its thread and event (clocksync's CountAfter).
func ExchangeEdgesAt(c comm.Comm, m *Matching, time func(proc, v int32) int64) ([]RemoteEdges, error) {
	return exchangeEdges(c, m, time, false, Bounded{})
}

// Bounded is how an exchange along the edges runs under a memory limit.
// Check, when set, is called on every rank at fixed points (after each
// batch of records, and where the function says) and its error returned:
// the heap guard, collective, which stops the phase there on every rank.
// Batch, when positive, bounds the bytes a rank sends in one batch
// instead of EdgeBatchBytes: what a batch's buffers add is how far a
// phase can go past the limit before a check sees it. Neither changes
// what the exchange computes.
type Bounded struct {
	Check func() error
	Batch int
}

// check calls b.Check when set.
func (b Bounded) check() error {
	if b.Check == nil {
		return nil
	}
	return b.Check()
}

// batch returns the bytes of a batch.
func (b Bounded) batch() int {
	if b.Batch > 0 {
		return b.Batch
	}
	return EdgeBatchBytes
}

// ExchangeEdgesBounded is ExchangeEdgesAt under bd: checked once the rows
// are made, after each batch and once the send-like nodes' round is done.
func ExchangeEdgesBounded(c comm.Comm, m *Matching, time func(proc, v int32) int64, bd Bounded) ([]RemoteEdges, error) {
	return exchangeEdges(c, m, time, false, bd)
}

func exchangeEdges(c comm.Comm, m *Matching, time func(proc, v int32) int64, ownTimes bool, bd Bounded) ([]RemoteEdges, error) {
	check := bd.check
	g := m.DAG
	n := m.Len()
	rank := make([]int32, len(m.Procs))
	for i, p := range m.Procs {
		rank[i] = int32(p.Header.Rank)
	}
	out, row := m.edgeRows(time, ownTimes)
	first := m.ProcNodes[len(m.Procs)] // collective nodes from here
	perPeer := m.roundBytes(c.Size(), predRecSize)
	coll := make([]pred, n-first)
	matched := make([]int, len(m.Procs)) // rows given a predecessor
	var procOf ProcCursor
	deliver := func(to int32, p *pred) {
		if to >= first {
			if q := &coll[to-first]; p.later(q) {
				*q = *p
			}
			return
		}
		if m.Role[to] != RoleRecv {
			return // not an input; Build gives a send-like node none
		}
		i := procOf.Of(m, to)
		r, k := &out[i], int(row.row(i, to))
		if proc := r.PredProcAt(k); proc < 0 {
			r.setPred(k, p) // the first to arrive, a message's only one
			matched[i]++
		} else if cur := (pred{time: r.predTime.At(k), proc: proc, thread: r.PredThreadAt(k), event: r.predEvent.At(k), ok: true}); p.later(&cur) {
			r.setPred(k, p)
		}
	}
	nodePred := func(i, v int32) pred { // v of local process i
		return pred{time: time(i, v), proc: rank[i], thread: m.ThreadOf(v), event: m.EventOf(v), kind: m.Kind[v], ok: true}
	}
	send := func(bufs [][]byte, from int32, p *pred) int {
		sent := 0
		for _, e := range g.Outs(from) {
			if to, ok := e.Node(); ok {
				deliver(to, p)
				continue
			}
			s, _ := e.Slot()
			peer, k := g.slotAddr(s)
			bufs[peer] = encodePred(bufs[peer], k, p)
			sent += predRecSize
		}
		return sent
	}
	for _, sp := range m.SelfPairs {
		p := nodePred(m.ProcOf(sp[0]), sp[0])
		deliver(sp[1], &p)
	}
	arrived := newSlotBits(g.Slots())
	receive := func(recv [][]byte) error {
		for q, buf := range recv {
			if err := g.eachArrival(comm.Msg{Peer: q, Buf: buf}, predRecSize, false, arrived, func(s int32, rec []byte) {
				p := decodePred(rec)
				deliver(g.slotNode[s], &p)
			}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(); err != nil {
		return nil, err
	}
	proc := int32(0) // of the send-like node emitted last (nodes come in order)
	err := roundsAlongBy(c, bd.batch(), 0, first, perPeer[0], func(bufs [][]byte, v int32) int {
		if m.Role[v] != RoleSend {
			return 0
		}
		for v >= m.ProcNodes[proc+1] {
			proc++
		}
		p := nodePred(proc, v)
		return send(bufs, v, &p)
	}, receive, bd.Check)
	if err != nil {
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}
	err = roundsAlongBy(c, bd.batch(), first, n, perPeer[1], func(bufs [][]byte, v int32) int {
		if p := &coll[v-first]; p.ok {
			return send(bufs, v, p)
		}
		return 0
	}, receive, bd.Check)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if matched[i] < out[i].Len() {
			out[i].dropUnmatched()
		}
	}
	return out, nil
}

// recvRows finds the row of a receive-like event node in its process's
// RemoteEdges: the receive-like nodes before it in the process, counted
// from a bit a node and a count per 64 nodes (0.6 bytes a node where a row
// index per node took 4: 23 MB at the exchange's peak on spread).
type recvRows struct {
	recv  bitrank.Set // the receive-like event nodes
	first []int32     // per process: receive-like nodes before its first node
}

// row returns the row of receive-like node v of local process i.
func (x *recvRows) row(i, v int32) int32 { return x.recv.Before(v) - x.first[i] }

// roundBytes returns the bytes each peer is sent in each round of an
// exchange along the edges, of records of size bytes: one per outgoing
// slot, of a send-like node in the first round, of a collective node in
// the second. The buffers are made that size (appending would copy them
// as they double, up to twice what they hold).
func (m *Matching) roundBytes(k, size int) [2][]int {
	g, first := m.DAG, m.ProcNodes[len(m.Procs)]
	perPeer := [2][]int{make([]int, k), make([]int, k)}
	for s := range g.Slots() {
		if g.slotIsOut(s) {
			round := 0
			if g.slotNode[s] >= first {
				round = 1
			}
			perPeer[round][g.slotPeer(s)] += size
		}
	}
	return perPeer
}

// EdgeBatchBytes bounds what a rank sends in one Alltoallv of an exchange
// along the edges (roundsAlong): all of a round's records at once were
// 53 MB of spread's exchange at two ranks, beside the rows they fill.
const EdgeBatchBytes = 4 << 20

// roundsAlong runs one round of an exchange along the edges: emit appends
// the records of node v (lo ≤ v < hi, in order) to the buffers of the
// peers and returns their bytes; they travel in batches of about
// EdgeBatchBytes a rank, each handed to receive where it arrives, until
// every rank has sent all of its records. perPeer (roundBytes) sizes the
// buffers. It is collective; an error is returned on every rank.
func roundsAlong(c comm.Comm, lo, hi int32, perPeer []int, emit func(bufs [][]byte, v int32) int, receive func(recv [][]byte) error) error {
	return roundsAlongBy(c, EdgeBatchBytes, lo, hi, perPeer, emit, receive, nil)
}

// roundsAlongBy is roundsAlong in batches of batch bytes; check, when
// set, is called after each batch (every rank takes part in every batch
// until all are done) and its error returned.
func roundsAlongBy(c comm.Comm, batch int, lo, hi int32, perPeer []int, emit func(bufs [][]byte, v int32) int, receive func(recv [][]byte) error, check func() error) error {
	// Each peer's buffer holds its share of a batch and is reused from
	// batch to batch (its records have arrived once every rank agreed):
	// fresh buffers each batch would be garbage the collector lets grow to
	// a quarter of the live heap, more than one round's records.
	total := 0
	for _, n := range perPeer {
		total += max(n, 0)
	}
	bufs := make([][]byte, len(perPeer))
	for q, n := range perPeer {
		if n > 0 {
			bufs[q] = make([]byte, 0, min(n, int(int64(batch)*int64(n)/int64(total))+256))
		}
	}
	for v := lo; ; {
		for q := range bufs {
			bufs[q] = bufs[q][:0]
		}
		for sent := 0; v < hi && sent < batch; v++ {
			sent += emit(bufs, v)
		}
		recv, err := c.Alltoallv(bufs)
		if err != nil {
			return err
		}
		if err := comm.Agree(c, receive(recv)); err != nil {
			return err
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		more := int64(0)
		if v < hi {
			more = 1
		}
		all, err := c.AllreduceInt64(comm.Max, []int64{more})
		if err != nil {
			return err
		}
		if all[0] == 0 {
			return nil
		}
	}
}

// edgeRows makes each process's rows, one per receive-like node in node
// order with its own columns filled and no predecessor yet (its time
// column holding the row's own time, the base of its block), and the rows
// of the event nodes.
func (m *Matching) edgeRows(time func(proc, v int32) int64, ownTimes bool) ([]RemoteEdges, *recvRows) {
	out := make([]RemoteEdges, len(m.Procs))
	row := &recvRows{first: make([]int32, len(m.Procs))}
	row.recv = m.roleSet(1<<RoleRecv, m.ProcNodes[len(m.Procs)])
	for i := range m.Procs {
		lo, hi := m.ProcNodes[i], m.ProcNodes[i+1]
		row.first[i] = row.recv.Before(lo)
		k := row.recv.Before(hi) - row.first[i]
		r := &out[i]
		if ownTimes {
			r.Time = make([]int64, 0, k)
		}
		r.Reserve(int(k))
		for v := lo; v < hi; v++ {
			if m.Role[v] == RoleRecv {
				r.thread.Append(int64(m.ThreadOf(v)))
				r.event.Append(m.EventOf(v))
				r.kinds.Append(m.Kind[v], 0)
				r.predProc.Append(0)
				r.predThread.Append(0)
				r.predEvent.appendUnset()
				// A block's first row's own time is its base (the
				// others' until their predecessors arrive: any).
				if r.predTime.Len()%edgeBlock == 0 || ownTimes {
					t := time(int32(i), v)
					r.predTime.Append(t)
					if ownTimes {
						r.Time = append(r.Time, t)
					}
				} else {
					r.predTime.appendPending()
				}
			}
		}
		r.fit()
	}
	return out, row
}

// dropUnmatched removes the rows that got no predecessor. Unmatched
// receives are rare (a truncated or inconsistent trace): the columns are
// made anew only then.
func (r *RemoteEdges) dropUnmatched() {
	n := 0
	for j := range r.Len() {
		if r.PredProcAt(j) >= 0 {
			n++
		}
	}
	if n == r.Len() {
		return
	}
	var o RemoteEdges
	if r.Time != nil {
		o.Time = make([]int64, 0, n)
	}
	o.Reserve(n)
	for j := range r.Len() {
		if r.PredProcAt(j) >= 0 {
			o.appendRow(r, j)
		}
	}
	*r = o
}

func encodePred(buf []byte, k uint32, p *pred) []byte {
	le := binary.LittleEndian
	buf = le.AppendUint32(buf, k)
	buf = le.AppendUint64(buf, uint64(p.time))
	buf = le.AppendUint32(buf, uint32(p.proc))
	buf = le.AppendUint32(buf, uint32(p.thread))
	buf = le.AppendUint64(buf, uint64(p.event))
	return append(buf, byte(p.kind))
}

// decodePred reads the predecessor of a record (its slot index, first, is
// eachArrival's).
func decodePred(buf []byte) pred {
	le := binary.LittleEndian
	return pred{
		time: int64(le.Uint64(buf[4:])), proc: int32(le.Uint32(buf[12:])), thread: int32(le.Uint32(buf[16:])),
		event: int64(le.Uint64(buf[20:])), kind: trace.Kind(buf[28]), ok: true,
	}
}

// PropagateMax gives every receive-like node of m, for each of cols value
// columns, the largest value among its predecessors (through collective
// nodes): value fills v (length cols) for a send-like node. It is the
// census form of ExchangeEdges — the same two Alltoallv rounds, several
// columns at once, no identities — for counting violations under several
// clocks. Nodes without a predecessor get math.MinInt64; only
// receive-like nodes have values (Maxima.At). Collective; an error is
// returned on every rank.
func PropagateMax(c comm.Comm, m *Matching, cols int, value func(n int32, v []int64)) (*Maxima, error) {
	out := newMaxima(m, cols)
	err := PropagateMaxTo(c, m, cols, value, func(to int32, v []int64) {
		o := out.vals[int(out.has.Before(to))*cols:][:cols]
		for i, x := range v {
			o[i] = max(o[i], x)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PropagateMaxTo is PropagateMax handing each value that reaches a
// receive-like event node to deliver (to, the node; v, its cols values,
// valid for the call only) instead of keeping the largest: a node with
// several predecessors gets several calls, whose largest values per
// column are PropagateMax's. A caller that reads the values of some
// nodes only, or keeps them narrower, holds no Maxima (16 bytes a
// receive-like node at two columns: 6.5 MB at the 10 M-event halo's wait
// states). The collective nodes' values, the propagation's
// intermediates, are kept here. Collective; an error is returned on
// every rank.
func PropagateMaxTo(c comm.Comm, m *Matching, cols int, value func(n int32, v []int64), deliver func(to int32, v []int64)) error {
	return PropagateMaxToBounded(c, m, cols, value, deliver, Bounded{})
}

// PropagateMaxToBounded is PropagateMaxTo under bd: checked after each
// batch.
func PropagateMaxToBounded(c comm.Comm, m *Matching, cols int, value func(n int32, v []int64), deliver func(to int32, v []int64), bd Bounded) error {
	g := m.DAG
	n := m.Len()
	first := m.ProcNodes[len(m.Procs)] // collective nodes from here
	coll := make([]int64, int(n-first)*cols)
	for i := range coll {
		coll[i] = math.MinInt64
	}
	esz := 4 + 8*cols
	le := binary.LittleEndian
	take := func(to int32, v []int64) {
		if to >= first {
			o := coll[int(to-first)*cols:][:cols]
			for i, x := range v {
				o[i] = max(o[i], x)
			}
			return
		}
		if m.Role[to] == RoleRecv {
			deliver(to, v)
		} // else not receive-like: a predecessor for nobody
	}
	send := func(bufs [][]byte, from int32, v []int64) int {
		sent := 0
		for _, e := range g.Outs(from) {
			if to, ok := e.Node(); ok {
				take(to, v)
				continue
			}
			s, _ := e.Slot()
			peer, k := g.slotAddr(s)
			b := le.AppendUint32(bufs[peer], k)
			for _, x := range v {
				b = le.AppendUint64(b, uint64(x))
			}
			bufs[peer] = b
			sent += esz
		}
		return sent
	}
	v := make([]int64, cols)
	arrived := newSlotBits(g.Slots())
	perPeer := m.roundBytes(c.Size(), esz)
	receive := func(recv [][]byte) error {
		for q, buf := range recv {
			if err := g.eachArrival(comm.Msg{Peer: q, Buf: buf}, esz, false, arrived, func(s int32, rec []byte) {
				for i := range v {
					v[i] = int64(le.Uint64(rec[4+8*i:]))
				}
				take(g.slotNode[s], v)
			}); err != nil {
				return err
			}
		}
		return nil
	}
	err := roundsAlongBy(c, bd.batch(), 0, first, perPeer[0], func(bufs [][]byte, u int32) int {
		if m.Role[u] != RoleSend {
			return 0
		}
		value(u, v)
		return send(bufs, u, v)
	}, receive, bd.Check)
	if err != nil {
		return err
	}
	return roundsAlongBy(c, bd.batch(), first, n, perPeer[1], func(bufs [][]byte, u int32) int {
		if m.Role[u] != RoleColl {
			return 0
		}
		return send(bufs, u, coll[int(u-first)*cols:][:cols])
	}, receive, bd.Check)
}
