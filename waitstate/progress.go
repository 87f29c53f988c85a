package waitstate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Wait for progress (WaitForProgress).
//
// Open MPI and MPICH without a progress thread advance a nonblocking
// collective only inside MPI calls: in
//
//	MPI_Iallreduce(&req); compute(); MPI_Wait(&req)
//
// a member whose compute() is short waits in its MPI_Wait until the
// member computing longest enters the MPI call that completes the
// collective there, although every member started it on time. A member's
// progress point for an instance is the enter of the call in which that
// member completed it (its coll_complete's call; none when it never
// completed it), no earlier than the enter of its start's call (a
// progress point before the start, which only broken clocks give, is
// clipped to the start).
//
// The progress points travel with the nodes' other values (Analyze's
// graph.PropagateMaxTo), as a third value of the start nodes, along the
// causal start → completion edges the matching made by the operation's
// class: the matching makes no edge from a progress point, for under
// asynchronous progress (a progress thread, a network that completes the
// operation on its own) a completion does not follow another member's
// progress point, and the clock synchronization must see causal edges
// only. The critical path takes one where the completion came after the
// point (progressEdges, below). The third value is there only when some process has
// a coll_start (the width is agreed over the analysis ranks), so traces
// without nonblocking collectives keep their memory and their reports.
//
// A completing call of member i then has, beside the latest start lvStart
// of the members it waits for (the late-start wait, the class pattern:
// lvStart − enter), the latest progress point lvProg of the same members
// and who that is; its progress wait is
//
//	min(lvProg, completion) − max(enter, lvStart)
//
// when positive (the completion: the coll_complete's time, where the
// class wait ends too): the part of the call after every start during
// which a member had not yet entered the call that progressed the
// collective, as Scalasca's Wait for Progress counts the part of an RMA
// synchronization during which the target was outside MPI. A call counts
// in one pattern only: of the late-start part and the progress part the
// larger wins, the late start on a tie, each with its own extent and
// cause (the other part stays transfer/other, as all of it did before).
// So a member that waited for a late start and then briefly for the late
// starter's progress keeps its class pattern, and one that started with
// the others but waited for a member computing after its start waits for
// progress. The cause is the member whose progress point is latest (ties:
// the lowest rank); a progress wait's delay costs are charged to the
// cause's time up to its progress point (below: Delay costs of a wait for
// progress).

// delayPatterns bounds the patterns with delay costs: all of them, the
// waits for progress too (since 2026-12: delay costs of a wait for
// progress, below).
const delayPatterns = NumPatterns

// progPt is a nonblocking collective's start node and its member's
// progress point. 16 bytes (24 with node first): a rank holds one per
// nonblocking collective of its processes through the propagation,
// beside their progDone.
type progPt struct {
	at   int64
	node int32
	done int32 // the completion node whose call's enter at is
}

// progVal is the latest progress point a completion learnt and the
// world rank of its member.
type progVal struct {
	at   int64
	rank int32
}

// progScale packs a progress point and its member's world rank into one
// value whose maximum is the latest point, on a tie the lowest rank:
// (at − lo) >> sh in the high bits, top − rank in the low rb bits, so
// that graph.PropagateMaxTo's maximum per column carries the cause too.
// lo is the earliest progress point of all processes; sh is 0 unless the
// points span 2^(62−rb) ns or more, when they are coarsened to fit (a
// point rounded down to a multiple of 2^sh ns after lo, a tie between
// points that close going to the lowest rank). That span is 52 days up
// to 1024 ranks (rb 10) and 73 minutes up to 2^20 (rb 20), but 4.6
// minutes at trace.MaxRanks (rb 24): a run of 2^24 ranks over an hour
// has its progress points rounded to 16 ns (sh 4).
type progScale struct {
	on  bool // the trace has nonblocking collectives: width 3
	lo  int64
	sh  uint
	rb  uint
	top int64 // the largest world rank numbered
}

// progressScale agrees, over the analysis ranks, whether any process has
// a coll_start, and the scale of the progress points (progScale).
// Collective.
func (a *Analysis) progressScale(c comm.Comm) (progScale, error) {
	has, lo, hi, top := int64(0), int64(math.MaxInt64), int64(math.MinInt64+1), int64(0)
	for _, p := range a.m.Procs {
		if p.Census.Kinds[trace.CollStart] > 0 {
			has = 1
		}
		top = max(top, int64(worldRank(p)))
	}
	for _, pp := range a.progs {
		lo, hi = min(lo, pp.at), max(hi, pp.at)
	}
	g, err := c.AllreduceInt64(comm.Min, []int64{-has, lo, -hi, -top})
	if err != nil {
		return progScale{}, err
	}
	return newProgScale(g[0] < 0, g[1], -g[2], -g[3]), nil
}

// newProgScale returns the scale of progress points within [lo, hi]
// (none when hi < lo) of world ranks 0..top.
func newProgScale(on bool, lo, hi, top int64) progScale {
	s := progScale{on: on, lo: lo, top: top}
	s.rb = uint(bits.Len64(uint64(s.top)))
	if hi >= lo {
		if n := uint(bits.Len64(uint64(hi) - uint64(lo))); n > 62-s.rb {
			s.sh = n - (62 - s.rb)
		}
	}
	return s
}

// worldRank is p's world rank as a progress value numbers it: within
// 0..trace.MaxRanks−1.
func worldRank(p *trace.Process) int32 {
	return int32(min(max(p.Header.Rank, 0), trace.MaxRanks-1))
}

// enc packs progress point at (no earlier than lo) of world rank r.
func (s *progScale) enc(at int64, r int32) int64 {
	return int64((uint64(at)-uint64(s.lo))>>s.sh)<<s.rb | (s.top - int64(r))
}

// dec unpacks a value of enc.
func (s *progScale) dec(x int64) progVal {
	return progVal{at: int64(uint64(s.lo) + uint64(x>>s.rb)<<s.sh), rank: int32(s.top - x&(1<<s.rb-1))}
}

// later reports whether p is a later progress point than q (on a tie,
// of a lower rank).
func (p progVal) later(q progVal) bool {
	return p.at > q.at || p.at == q.at && p.rank < q.rank
}

// progCursor finds the start nodes' progress points, asked for in
// ascending node order mostly (graph.PropagateMaxTo sends the send-like
// nodes in order).
type progCursor struct {
	pts []progPt // sorted by node
	j   int
}

// at returns node v's progress point, ok false for none.
func (c *progCursor) at(v int32) (int64, bool) {
	if c.j > 0 && c.j <= len(c.pts) && c.pts[c.j-1].node >= v {
		c.j, _ = slices.BinarySearchFunc(c.pts, v, func(p progPt, v int32) int { return cmp.Compare(p.node, v) })
	}
	for c.j < len(c.pts) && c.pts[c.j].node < v {
		c.j++
	}
	if c.j < len(c.pts) && c.pts[c.j].node == v {
		return c.pts[c.j].at, true
	}
	return 0, false
}

// sortProgs orders the progress points by node, the latest of a node
// given twice (a corrupt trace) kept.
func (a *Analysis) sortProgs() {
	slices.SortFunc(a.progs, func(x, y progPt) int { return cmp.Or(cmp.Compare(x.node, y.node), cmp.Compare(y.at, x.at)) })
	a.progs = slices.CompactFunc(a.progs, func(x, y progPt) bool { return x.node == y.node })
}

// nbcEvent follows a nonblocking collective's start (node v) and
// completion (node v, another request's start node s) in the recorder's
// process: the completion gives the start node its progress point, the
// enter of the call it is in (Analysis.progs).
func (r *callRecorder) nbcEvent(e *trace.Event, v int32) {
	a := r.a
	req := e.Args[4]
	switch e.Kind {
	case trace.CollStart:
		if a.call[v] < 0 {
			return // outside any call: no progress point to give
		}
		if r.starts == nil {
			r.starts = map[int64]int32{}
		}
		r.starts[req] = v
	case trace.CollComplete:
		s, ok := r.starts[req]
		if !ok {
			return
		}
		delete(r.starts, req)
		if k := a.call[v]; k >= 0 {
			at := max(r.c.enterAt(k), r.c.enterAt(a.call[s]))
			a.progs = append(a.progs, progPt{node: s, at: at, done: v})
		}
	}
}

// progAt returns node j's progress value (the latest progress point of
// the members it waits for and its member), ok false for none.
func (nv *nodeVals) progAt(j int, s *progScale) (progVal, bool) {
	if nv.progD != nil {
		if x := nv.progD[j]; x != 0 {
			return s.dec(x - 1), true
		}
		return progVal{}, false
	}
	x, ok := nv.progM[int32(j)]
	if !ok {
		return progVal{}, false
	}
	return s.dec(x), true
}

// maxProg makes node j's progress value the later of what it was and x
// (progScale.enc's: the larger is the later point, on a tie the lower
// rank, as progVal.later).
func (nv *nodeVals) maxProg(j int, x int64) {
	if nv.progDense > 0 {
		if nv.progD == nil {
			nv.progD = make([]int64, nv.progDense)
		}
		nv.progD[j] = max(nv.progD[j], x+1) // 0: none
		return
	}
	if q, ok := nv.progM[int32(j)]; ok && x <= q {
		return
	}
	if nv.progM == nil {
		nv.progM = map[int32]int64{}
	}
	nv.progM[int32(j)] = x
}

// progressWait returns the progress wait of a completing call begun at
// enter whose class wait ends at lv (the latest start, capped by the
// completion end; math.MinInt64 for none), the latest progress point of
// the others p, and the completion end.
func progressWait(enter, lv, end int64, p progVal) int64 {
	return min(p.at, end) - max(enter, lv)
}

// The critical path through a wait for progress.
//
// A completion that waited for another member's progress point (its
// progress wait is positive) and came no earlier than that point
// depends on it: the member's computation up to the enter of its
// completing call held the collective back. The critical path takes an
// edge from that member's progress point (its completing call's post
// node, sim.FragPass.Sources) to the completion, so that it runs through
// the late member's computation instead of the waiter's wait. The edge
// is the critical path's alone, as a Late Receiver's is: it joins the
// rows after the clock synchronization, which sees causal edges only
// (under asynchronous progress a completion does not follow another
// member's progress point, and then it comes before it: no edge). A
// completion after its progress point gets the edge whichever pattern
// its call is charged, for the dependence is there either way: the
// longest path decides whether it runs through the late start or the
// late progress.
//
// The waiter knows the member (its world rank) and the progress point's
// time, not the member's event: progressEdges sends each such completion
// to the member's analysis rank, which finds its completion whose call's
// enter is that progress point (progDone) and answers with its event,
// now a source of its simulation's fragments, for the waiter's row.

// progDone is a progress point of one of this rank's processes and the
// completion node whose call's enter it is.
type progDone struct {
	at   int64
	proc int32 // local process
	done int32
}

// progReq is a completion that waited for a member's progress point:
// its local process and node, the member's world rank and the point
// (as the propagated value gives it: coarsened by progScale.sh); edge
// when the completion came no earlier than the point (the critical
// path's edge), delay when its call's wait is charged as a wait for
// progress with a synchronization point of the delay costs (addSyncs:
// markProgDelay), rooted when that wait is at a broadcast or a reduce,
// whose cause has no point of its own at its completion.
type progReq struct {
	proc              int32
	node              int32
	cause             int32
	at                int64
	edge, delay, root bool
}

// Flags of progressEdges' requests and answers.
const (
	progFlagEdge  = 1 << iota // the critical path's edge
	progFlagDelay             // the delay costs' cause point
	progFlagRoot              // … at a rooted collective: notify the cause
)

func (r *progReq) flags() uint32 {
	f := uint32(0)
	if r.edge {
		f |= progFlagEdge
	}
	if r.delay {
		f |= progFlagDelay
	}
	if r.root {
		f |= progFlagRoot
	}
	return f
}

// markProgDelay marks the request of local process i's node v (made in
// Analyze's loop, in process and node order) as a charged wait for
// progress with a synchronization point (root: at a broadcast or a
// reduce), so that progressEdges finds its cause's point for the delay
// costs.
func (a *Analysis) markProgDelay(i int, v int32, root bool) {
	j, ok := slices.BinarySearchFunc(a.progReqs, progReq{proc: int32(i), node: v}, func(x, y progReq) int {
		return cmp.Or(cmp.Compare(x.proc, y.proc), cmp.Compare(x.node, y.node))
	})
	if ok {
		a.progReqs[j].delay, a.progReqs[j].root = true, root
	}
}

// keepProgDone keeps, from the progress points (sorted by start node),
// each one's completion by process and time.
func (a *Analysis) keepProgDone() {
	if len(a.progs) == 0 {
		return
	}
	a.progDone = make([]progDone, 0, len(a.progs))
	for _, pp := range a.progs {
		if i := a.m.ProcOf(pp.node); i >= 0 && a.m.ProcOf(pp.done) == i {
			a.progDone = append(a.progDone, progDone{proc: i, at: pp.at, done: pp.done})
		}
	}
	slices.SortFunc(a.progDone, func(x, y progDone) int {
		return cmp.Or(cmp.Compare(x.proc, y.proc), cmp.Compare(x.at, y.at), cmp.Compare(x.done, y.done))
	})
}

// quant returns progress point at as enc keeps it (its time part).
func (s *progScale) quant(at int64) int64 { return int64((uint64(at) - uint64(s.lo)) >> s.sh) }

// findDone returns local process i's completion at progress point at
// (compared as s keeps it; several: the earliest point, then the first
// node), ok false for none.
func (a *Analysis) findDone(s *progScale, i int32, at int64) (progDone, bool) {
	q := s.quant(at)
	lo := sort.Search(len(a.progDone), func(j int) bool { return a.progDone[j].proc >= i })
	hi := sort.Search(len(a.progDone), func(j int) bool { return a.progDone[j].proc > i })
	l := a.progDone[lo:hi]
	j := sort.Search(len(l), func(j int) bool { return s.quant(l[j].at) >= q })
	if j == len(l) || s.quant(l[j].at) != q {
		return progDone{}, false
	}
	return l[j], true
}

// Sizes of progressEdges' records: a request (the member's world rank,
// the point, the waiter's world rank, thread and event, the flags) and
// an answer (the waiter's world rank, thread and event, the flags, the
// member's world rank, thread and event, the point's exact time).
const (
	progReqSize = 4 + 8 + 4 + 4 + 8 + 4
	progAnsSize = 4 + 4 + 8 + 4 + 4 + 4 + 8 + 8
)

// progressEdges makes the critical path's edges of the waits for progress
// (a.progReqs, from Analyze's loop) in two exchanges: the waiters' ranks
// ask the members' for their completions' events; those mark them as
// sources (a.lrSources) and answer; the waiters' ranks add the rows to
// a.lrEdges, per process in the order of their completions. The waits
// charged as waits for progress learn so their causes' completions, their
// causes' synchronization points of the delay costs (dl.progCause).
// Collective.
func (a *Analysis) progressEdges(c comm.Comm, owners graph.Owners, s *progScale, dl *delays) error {
	m := a.m
	le := binary.LittleEndian
	local := map[int]int32{}
	for i, p := range m.Procs {
		local[p.Header.Rank] = int32(i)
	}
	bufs := make([][]byte, c.Size())
	for _, r := range a.progReqs {
		if !r.edge && !r.delay {
			continue
		}
		to := owners.Owner(int(r.cause))
		b := le.AppendUint32(bufs[to], uint32(r.cause))
		b = le.AppendUint64(b, uint64(r.at))
		b = le.AppendUint32(b, uint32(m.Procs[r.proc].Header.Rank))
		b = le.AppendUint32(b, uint32(m.ThreadOf(r.node)))
		b = le.AppendUint64(b, uint64(m.EventOf(r.node)))
		bufs[to] = le.AppendUint32(b, r.flags())
	}
	a.progReqs = nil
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return err
	}
	srcs := make([][]sim.EventRef, len(m.Procs))
	bufs = make([][]byte, c.Size())
	perr := eachRecord(c.Rank(), recv, progReqSize, "progress points", func(q int, buf []byte) error {
		proc, at := int(le.Uint32(buf)), int64(le.Uint64(buf[4:]))
		i, ok := local[proc]
		if !ok {
			return fmt.Errorf("rank %d: waitstate: rank %d sent a progress point of process %d, not held here", c.Rank(), q, proc)
		}
		d, ok := a.findDone(s, i, at)
		if !ok {
			return nil // not a point of the process's: no edge
		}
		th, ev := m.ThreadOf(d.done), m.EventOf(d.done)
		if le.Uint32(buf[progReqSize-4:])&progFlagEdge != 0 {
			srcs[i] = append(srcs[i], sim.EventRef{Thread: th, Event: ev})
		}
		b := append(bufs[q], buf[12:progReqSize]...) // the waiter
		b = le.AppendUint32(b, uint32(proc))
		b = le.AppendUint32(b, uint32(th))
		b = le.AppendUint64(b, uint64(ev))
		bufs[q] = le.AppendUint64(b, uint64(d.at))
		return nil
	})
	a.progDone = nil
	if err := comm.Agree(c, perr); err != nil {
		return err
	}
	recv, err = c.Alltoallv(bufs)
	if err != nil {
		return err
	}
	type row struct {
		wth, pth, pproc int32
		wev, pev, at    int64
	}
	rows := make([][]row, len(m.Procs))
	perr = eachRecord(c.Rank(), recv, progAnsSize, "progress sources", func(q int, buf []byte) error {
		i, ok := local[int(le.Uint32(buf))]
		if !ok {
			return fmt.Errorf("rank %d: waitstate: rank %d answered for process %d, not held here", c.Rank(), q, le.Uint32(buf))
		}
		r := row{wth: int32(le.Uint32(buf[4:])), wev: int64(le.Uint64(buf[8:])),
			pproc: int32(le.Uint32(buf[20:])), pth: int32(le.Uint32(buf[24:])), pev: int64(le.Uint64(buf[28:])), at: int64(le.Uint64(buf[36:]))}
		f := le.Uint32(buf[16:])
		if f&progFlagEdge != 0 {
			rows[i] = append(rows[i], r)
		}
		if f&progFlagDelay != 0 {
			dl.progCauseOf(int(i), r.wth, r.wev, r.pproc, r.pth, r.pev, f&progFlagRoot != 0)
		}
		return nil
	})
	if err := comm.Agree(c, perr); err != nil {
		return err
	}
	for i, l := range rows {
		slices.SortFunc(l, func(x, y row) int { return cmp.Or(cmp.Compare(x.wth, y.wth), cmp.Compare(x.wev, y.wev)) })
		e := &a.lrEdges[i]
		e.Reserve(len(l))
		for _, r := range l {
			e.Append(r.wth, r.wev, trace.CollComplete, r.pproc, r.pth, r.pev, trace.CollComplete, r.at)
		}
	}
	a.addSources(srcs)
	return nil
}

// Delay costs of a wait for progress.
//
// A wait for progress is charged, as the other waits, to its cause's
// delay: its synchronization point is the call that completed the
// collective (MPI_Wait, …) where it waited, as a late start's wait's, and
// its cause's is the call in which the cause completed it, its progress
// point: the cause's time from its previous point with the waiter up to
// that call's enter — its computation after its start, which held the
// collective back — against the waiter's over its own interval. At an
// N×N collective or a barrier every member's completion is a point with
// the call's communicator already (the waiter's too: withOfAt); at a
// broadcast or a reduce the waiter's point is with the cause alone, and
// the cause, which has none of its own there, is notified (noteRoot: one
// point at its completing call with all its waiters, as a broadcast
// root's at its start). The waiter learns its cause's completion from
// progressEdges (the answer to its request) and names it in its wait's
// head (delays.heads); a late start's wait of the same call would name
// the cause's start (13206cb), which a wait for progress does not.

// progKey is a wait for progress's point: the waiter's local process,
// thread and event.
type progKey struct {
	proc, th int32
	ev       int64
}

// progRef is its cause's completion: thread and event.
type progRef struct {
	th int32
	ev int64
}

// progRooted marks local process i's call k, whose wait for progress at
// node v is at a broadcast or a reduce: its point synchronized with its
// cause alone, and the cause is notified of it once known.
func (d *delays) progRooted(i int, k, v int32) {
	p := &d.procs[i]
	if p.progRoot == nil {
		p.progRoot = map[int32]bool{}
	}
	p.progRoot[k] = true
	d.a.markProgDelay(i, v, true)
}

// progCauseOf keeps the cause's completion (world rank pproc, thread pth,
// event pev) of local process i's wait for progress at (wth, wev), and
// notifies the cause of its point where it has none of its own (root).
func (d *delays) progCauseOf(i int, wth int32, wev int64, pproc, pth int32, pev int64, root bool) {
	if d.progCause == nil {
		d.progCause = map[progKey]progRef{}
	}
	d.progCause[progKey{int32(i), wth, wev}] = progRef{pth, pev}
	if !root {
		return
	}
	a := d.a
	if v := a.nodeAt(i, wth, wev); v >= 0 {
		if k := a.callOf(v); k >= 0 {
			d.note(pproc, pth, pev, noteRoot, int32(a.tp[i].Header.Rank), a.procs[i].exitAt(k))
		}
	}
}
