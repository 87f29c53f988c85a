package waitstate

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
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
// class: no edge goes from a progress point, for under asynchronous
// progress (a progress thread, a network that completes the operation on
// its own) a completion does not follow another member's progress
// point, and the clock synchronization and the critical path must see
// causal edges only. The third value is there only when some process has
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
// the lowest rank); a progress wait has no delay costs (delay.go: the
// synchronization points are the matched edges', the starts').

// delayPatterns bounds the patterns with delay costs: the delay costs'
// arrays of costs per pattern hold those before WaitForProgress, which has
// none (8 bytes less a wait's costs than NumPatterns).
const delayPatterns = WaitForProgress

// progPt is a nonblocking collective's start node and its member's
// progress point.
type progPt struct {
	node int32
	at   int64
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
			a.progs = append(a.progs, progPt{node: s, at: at})
		}
	}
}

// prog returns node j's progress value (the latest progress point of
// the members it waits for and its member), ok false for none.
func (nv *nodeVals) progAt(j int) (progVal, bool) {
	p, ok := nv.prog[int32(j)]
	return p, ok
}

// maxProg makes node j's progress value the later of what it was and p.
func (nv *nodeVals) maxProg(j int, p progVal) {
	if q, ok := nv.prog[int32(j)]; ok && !p.later(q) {
		return
	}
	if nv.prog == nil {
		nv.prog = map[int32]progVal{}
	}
	nv.prog[int32(j)] = p
}

// progressWait returns the progress wait of a completing call begun at
// enter whose class wait ends at lv (the latest start, capped by the
// completion end; math.MinInt64 for none), the latest progress point of
// the others p, and the completion end.
func progressWait(enter, lv, end int64, p progVal) int64 {
	return min(p.at, end) - max(enter, lv)
}
