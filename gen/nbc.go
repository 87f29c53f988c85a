package gen

import (
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// The nbc workload is pureMPI (one thread per process) whose iterations
// are nonblocking collectives, each started by an MPI_I* call (coll_start
// inside it, with a request made as the collector makes it) and completed
// by an MPI_Wait (coll_complete inside, same request). Iteration k:
//
//   - k%3 == 0, a late start: rank i computes ComputeNS scaled by its rank
//     (1 + RankImbalance·i/(R−1)), MPI_Iallreduce, computes nbcOverlap,
//     MPI_Wait, which ends LatencyNS after the later of the last start and
//     its own enter: the early starters wait in MPI_Wait for the last one
//     (wait_nxn);
//   - k%3 == 1, a wait for progress: every rank starts MPI_Iallreduce at
//     once, computes its scaled time, and MPI_Wait ends LatencyNS after the
//     last member's MPI_Wait enter: the others wait for it
//     (wait_for_progress);
//   - k%3 == 2, a late root: MPI_Ibcast from root (k/3) mod R, which
//     starts ComputeNS·RankImbalance after the others; each computes
//     nbcOverlap before its MPI_Wait, which ends LatencyNS after the later
//     of the root's start and its own enter (late_broadcast).
//
// Every iteration begins when the last rank left the one before; then the
// final MPI_Barrier after a reverse imbalance, as mpi's. Each waiting
// MPI_Wait is charged by the definitions (docs/report-schema.md): the
// late-start wait and the progress wait are both computed, the longer
// kept (the late start on a tie), so the expected values follow from the
// schedule whatever --ranks and --latency make of it; the delay costs
// follow from them by the delay model (nbcSync), the waits for progress's
// too.

// nbcKinds is how many kinds of iteration nbc cycles through.
const nbcKinds = 3

// nbcOverlap is the computation between a start and its MPI_Wait.
func nbcOverlap(c *Config) int64 { return c.ComputeNS / 20 }

// nbcMember is one rank's part of a nonblocking collective: its start
// call's enter, its MPI_Wait's enter (the progress point) and exit (the
// completion), and the index of that MPI_Wait in its schedule.
type nbcMember struct {
	start, enter, exit int64
	call               int
}

func (w *pureMPI) planNBC() error {
	c := w.cfg
	R := c.Ranks
	if c.Events > 0 {
		// 6 events a rank and iteration: two calls, each with one event inside
		c.Iterations = int(max(1, c.Events/(6*int64(R))))
	}
	I := c.Iterations
	C, L, O := c.ComputeNS, c.LatencyNS, nbcOverlap(c)
	if R == 1 {
		L = 0 // as a collective of one: nobody to wait for
	}
	delta := int64(math.Round(float64(C) * c.RankImbalance))
	w.calls = make([][]mpiCall, R)
	now := make([]int64, R)
	var seq int64
	for k := 0; k < I; k++ {
		begin := int64(math.MinInt64) // the iteration begins when all are out
		for _, t := range now {
			begin = max(begin, t)
		}
		seq++
		req := trace.MakeID(0, seq) // thread 0's seq-th id, as ptr_new_id
		start := make([]int64, R)
		enter := make([]int64, R)
		op, root, fn := trace.CollAllreduce, int64(-1), "MPI_Iallreduce"
		switch k % nbcKinds {
		case 0:
			for i := range start {
				start[i] = begin + scaled(C, c.RankImbalance, i, R)
				enter[i] = start[i] + O
			}
		case 1:
			for i := range start {
				start[i] = begin
				enter[i] = begin + scaled(C, c.RankImbalance, i, R)
			}
		default:
			op, fn = trace.CollBcast, "MPI_Ibcast"
			root = int64((k / nbcKinds) % R)
			for i := range start {
				start[i] = begin + C
				if i == int(root) {
					start[i] += delta
				}
				enter[i] = start[i] + O
			}
		}
		// Completion: L after the later of the own enter and the last
		// start of the members waited for (k%3 != 1), or of the last
		// MPI_Wait enter (k%3 == 1).
		last, lastEnter := int64(math.MinInt64), int64(math.MinInt64)
		for i := range start {
			last, lastEnter = max(last, start[i]), max(lastEnter, enter[i])
		}
		m := make([]nbcMember, R)
		nc := &nbcColl{root: int(root), start: start, startCall: make([]int, R)}
		for i := range m {
			var x int64
			switch {
			case k%nbcKinds == 1:
				x = lastEnter + L
			case root >= 0 && i == int(root):
				x = enter[i] + L // the root waits for nobody
			case root >= 0:
				x = max(enter[i], start[root]) + L
			default:
				x = max(enter[i], last) + L
			}
			sent, recvd := int64(8), int64(8)
			if root >= 0 {
				sent, recvd = 0, c.Bytes
				if i == int(root) {
					sent, recvd = c.Bytes, 0
				}
			}
			w.calls[i] = append(w.calls[i], mpiCall{fn: fn, enter: start[i], exit: start[i], cause: -1, evs: []mpiEvent{
				{trace.CollStart, start[i], []int64{int64(op), 0, root, sent, req}}}})
			m[i] = nbcMember{start: start[i], enter: enter[i], exit: x, call: len(w.calls[i])}
			nc.startCall[i] = len(w.calls[i]) - 1
			w.calls[i] = append(w.calls[i], mpiCall{fn: "MPI_Wait", enter: enter[i], exit: x, cause: -1, nbc: nc, evs: []mpiEvent{
				{trace.CollComplete, x, []int64{int64(op), 0, root, recvd, req}}}})
			now[i] = x
		}
		pat := "wait_nxn"
		if root >= 0 {
			pat = "late_broadcast"
		}
		w.nbcWaits(m, int(root), pat)
		lo, hi := nbcPath(m, int(root))
		w.pathMPI[0] += lo
		w.pathMPI[1] += hi
	}
	// MPI_Barrier after a reverse imbalance, as mpi's.
	last, who := int64(math.MinInt64), 0
	enter := make([]int64, R)
	for i := range enter {
		enter[i] = now[i] + scaled(C, c.RankImbalance, R-1-i, R)
		if enter[i] > last {
			last, who = enter[i], i
		}
	}
	w.collective("MPI_Barrier", trace.CollBarrier, "wait_barrier", enter, last, who, now)
	w.pathMPI[0] += now[0] - last // every member's barrier after the last enter
	w.pathMPI[1] += now[0] - last
	w.fin = now[0]
	w.initNS = 2*C + L
	return nil
}

// nbcWaits sets the wait of every member's MPI_Wait by the definitions:
// the members it waits for are all (root < 0) or the root (a non-root of
// a broadcast; the root waits for nobody); the late-start wait runs from
// its enter to their latest start, the progress wait from the later of its
// enter and that start to their latest progress point (MPI_Wait enter),
// both at most to its completion; the longer is kept, the late start on a
// tie, its cause the member latest (ties: the lowest rank).
func (w *pureMPI) nbcWaits(m []nbcMember, root int, pat string) {
	if len(m) == 1 {
		return
	}
	for i := range m {
		if i == root {
			continue
		}
		var of []int
		if root >= 0 {
			of = []int{root}
		} else {
			for j := range m {
				of = append(of, j)
			}
		}
		ls, lsWho, pp, ppWho := int64(math.MinInt64), -1, int64(math.MinInt64), -1
		for _, j := range of {
			if m[j].start > ls {
				ls, lsWho = m[j].start, j
			}
			if m[j].enter > pp {
				pp, ppWho = m[j].enter, j
			}
		}
		late := min(ls, m[i].exit) - m[i].enter
		prog := min(pp, m[i].exit) - max(m[i].enter, ls)
		switch {
		case prog > late && prog > 0:
			w.setWait(i, m[i].call, "wait_for_progress", prog, ppWho, m[ppWho].call)
		case late > 0:
			w.setWait(i, m[i].call, pat, late, lsWho, m[lsWho].call-1)
		}
	}
}

// nbcPath returns the least and the most MPI time a nonblocking
// collective can put on the critical path (docs/engine.md): the path
// crosses it through one member's MPI_Wait (a start call takes no time
// here), which weighs from the latest of its enter, the latest start of
// the members it waits for (the matched edge) and, where it waited for
// their progress and completed after it, their latest progress point
// (the MPI_Wait enter: the progress edge) to its completion. Which
// member's it is may be a tie (a member done early computes until the
// next iteration begins), hence the range.
func nbcPath(m []nbcMember, root int) (lo, hi int64) {
	lo, hi = int64(math.MaxInt64), int64(math.MinInt64)
	for i := range m {
		from := m[i].enter
		if len(m) > 1 && i != root {
			ls, pp := int64(math.MinInt64), int64(math.MinInt64)
			for j := range m {
				if root < 0 || j == root {
					ls, pp = max(ls, m[j].start), max(pp, m[j].enter)
				}
			}
			from = max(from, min(ls, m[i].exit))
			if pp > from && pp <= m[i].exit {
				from = pp
			}
		}
		lo, hi = min(lo, m[i].exit-from), max(hi, m[i].exit-from)
	}
	return lo, hi
}

// nbcColl is a nonblocking collective of nbc: its root (−1: an
// MPI_Iallreduce), its members' starts and their start calls (index in
// w.calls).
type nbcColl struct {
	root      int
	start     []int64
	startCall []int
}

// nbcSync adds the synchronization points of rank r's MPI_Wait k (index
// in w.calls) of a nonblocking collective to the delay model's calls
// (docs/report-schema.md). The collective's matched edges are its
// members' starts: a member's synchronization with the others ends with
// the latest start (or the root's: a broadcast's non-root), and all of its
// MPI_Wait after that and after its own enter is its completion, which the
// next interval's time map holds — but for a wait for progress, which ends
// later: its completion is from the wait's end. An MPI_Iallreduce's
// MPI_Wait is a point with every rank; an MPI_Ibcast's is one with the
// root only where it waited for the root. A wait at N×N or a late
// broadcast is measured against its cause's start call (MPI_I*), one
// point there with all the waiters it had, completing as the call ends
// (0: a start takes no time here); a wait for progress against its cause's
// MPI_Wait, the point of its own an MPI_Iallreduce's member has there (a
// broadcast's root, which has none, gets one with all such waiters, which
// completes from the earliest one's exit on: a root later than the others
// by less than nbcOverlap, whose non-roots wait for its progress from
// their enter to their completion).
func (w *pureMPI) nbcSync(calls [][]dmCall, r, k int) {
	cl := &w.calls[r][k]
	nc := cl.nbc
	me := &calls[r][k+1]
	lastStart := int64(math.MinInt64)
	for _, t := range nc.start {
		lastStart = max(lastStart, t)
	}
	prog := cl.pat == "wait_for_progress"
	from := cl.enter // the completion's beginning
	if prog {
		// After the latest start waited for, the wait.
		ls := lastStart
		if nc.root >= 0 {
			ls = nc.start[nc.root]
		}
		from = max(from, ls) + cl.wait
	}
	var s dmSync
	switch {
	case nc.root < 0:
		s = everyone(max(0, cl.exit-max(lastStart, from)))
	case cl.pat != "":
		s = noWait(max(0, cl.exit-max(nc.start[nc.root], from)), nc.root)
	default:
		return
	}
	if cl.pat != "" {
		// The cause's point: at its start call, or (a wait for
		// progress) its MPI_Wait, right after it.
		sc := nc.startCall[cl.cause] + 1
		if prog {
			sc++
		}
		peer := &calls[cl.cause][sc]
		switch {
		case prog && nc.root < 0:
			// Its own.
		case len(peer.syncs) == 0:
			compl := int64(0)
			if prog {
				compl = max(0, peer.exit-max(min(peer.exit, cl.exit), peer.enter))
			}
			peer.syncs = []dmSync{noWait(compl, r)}
		default:
			peer.syncs[0].partners = append(peer.syncs[0].partners, r)
			if prog {
				peer.syncs[0].compl = max(peer.syncs[0].compl, max(0, peer.exit-max(min(peer.exit, cl.exit), peer.enter)))
			}
		}
		s.wait, s.pat, s.cause, s.causeCall, s.causeSync, s.coll = cl.wait, cl.pat, cl.cause, sc, 0, true
	}
	me.syncs = []dmSync{s}
}
