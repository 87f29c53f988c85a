package waitstate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Lock Contention (Scalasca's mpi_rma_lock_competition): passive target
// synchronisation's wait. The collector records each lock epoch's ends
// (rma_lock in MPI_Win_lock, rma_unlock in MPI_Win_unlock); which origin
// gets a contended lock next is decided at run time, at the target, so
// the analysis orders one target's epochs itself:
//
//   - every epoch of a window's target goes to the target's analysis rank,
//     which sorts them by the exit of their MPI_Win_unlock (corrected
//     times). Conflicting epochs hold the lock in disjoint intervals, and
//     an epoch's unlock returns only after it held the lock, even where
//     MPI acquires it lazily (MPICH: in the unlock, a flush or an RMA
//     call), so the order of the exits is the order of acquisition;
//   - an epoch waits for the conflicting epochs before it (an exclusive
//     one for every epoch, a shared one for the exclusive ones) to
//     release: until the latest enter of their MPI_Win_unlock (where the
//     holder begins to release, as a Late Sender waits until the send's
//     enter); its cause is that epoch's origin;
//   - the wait is the time the origin's thread spends inside the epoch's
//     one-sided calls (MPI_Win_lock, the RMA communication calls, the
//     flushes, MPI_Win_unlock) before that point: whichever call the
//     implementation acquires the lock in holds the wait.
//
// MPI_Win_lock_all's epochs (target −1) are a shared lock on every
// member of the window: each is sent to every analysis rank, where it
// takes part in the order of each of the rank's targets of that window
// without a copy per target (it conflicts only with the exclusive epochs:
// an exclusive epoch looks up the latest release of the window's
// lock_all epochs before it, a lock_all epoch the latest release of the
// window's exclusive epochs before it, on any target, in per-window
// arrays sorted by the same order). Its wait is the latest of the
// ranks' answers. MPI_MODE_NOCHECK epochs take no lock: they neither wait
// nor hold anyone back.
//
// Results do not depend on the number of analysis ranks: each target's
// epochs are ordered on one rank, and among equal releases the holder is
// the first by (origin, thread, unlock event) everywhere.
//
// The waiting epoch depends on its holder's release: the critical path
// takes an edge from the holder's rma_unlock (its MPI_Win_unlock call's
// start, sim.FragPass.Sources) to the waiting epoch's call in which the
// release came, MPI_Win_lock's rma_lock or, where MPI acquired the lock
// lazily in it, MPI_Win_unlock's rma_unlock (a wait that ends in a flush
// or an RMA call, which have no event of their own, gets no edge). As a
// Late Receiver's edge, it is the critical path's alone (the clock
// synchronization sees causal edges only).

// lockEpoch is one lock epoch of a local process: its thread's
// one-sided calls (the lock's first, the unlock's last), its window's
// communicator id, the target's world rank (−1: every member, lock_all),
// the lock type, the thread and its rma_lock and rma_unlock events.
type lockEpoch struct {
	calls            []int32
	win              int64
	target           int32
	typ              int8
	th               int32
	lockEv, unlockEv int64
}

// openLock is an epoch whose unlock has not come yet.
type openLock struct {
	comm, peer int64
	typ        int8
	ev         int64
	calls      []int32
}

// lockCall adds call k of function fn, made on thread th, to the thread's
// open epochs when it is a one-sided call.
func (r *callRecorder) lockCall(th int, k int32, fn int64) {
	if !oneSided(r.tables.String(fn)) {
		return
	}
	for j := range r.lockOpen[th] {
		o := &r.lockOpen[th][j]
		o.calls = append(o.calls, k)
	}
}

// oneSided reports whether MPI function fn may hold a lock epoch's wait:
// the window's synchronisation and the RMA communication calls.
func oneSided(fn string) bool {
	if strings.HasPrefix(fn, "MPI_Win_") {
		return true
	}
	switch fn {
	case "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap",
		"MPI_Rput", "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate":
		return true
	}
	return false
}

// lockEvent follows an rma_lock or rma_unlock, event idx of thread th,
// inside the thread's open call (which lockCall added to the epochs open
// on the thread).
func (r *callRecorder) lockEvent(e *trace.Event, th int, idx int64) {
	if r.lockOpen == nil {
		return
	}
	k := r.open[th]
	if e.Kind == trace.RMALock {
		// An epoch of type 0 takes no part, but pairs with its unlock.
		var typ int8
		switch t := e.Args[2]; {
		case t == trace.LockNoCheck:
			// no lock taken
		case e.Args[0] < -1, t != trace.LockExclusive && t != trace.LockShared, e.Args[0] == -1 && t != trace.LockShared:
			// A damaged file's (lock_all is shared).
			r.lockWarn("rma_lock left out", th, idx, "target %d, lock type %d", e.Args[0], t)
		default:
			typ = int8(t)
		}
		r.lockOpen[th] = append(r.lockOpen[th], openLock{comm: e.Args[1], peer: e.Args[0], typ: typ, ev: idx, calls: []int32{k}})
		return
	}
	os := r.lockOpen[th]
	for j := len(os) - 1; j >= 0; j-- {
		o := os[j]
		if o.comm != e.Args[1] || o.peer != e.Args[0] {
			continue
		}
		r.lockOpen[th] = slices.Delete(os, j, j+1)
		if o.typ == 0 {
			return
		}
		// A target outside the trace's processes (a damaged file) has
		// no analysis rank to order its epochs: no part.
		cm, ok := r.tables.CommByIndex(o.comm)
		if !ok || o.peer >= int64(r.a.m.Procs[r.proc].Header.NRanks) || o.peer >= trace.MaxRanks {
			r.lockWarn("rma_lock left out", th, o.ev, "target %d of window entry %d: no process of the trace, or no such entry", o.peer, o.comm)
			return
		}
		if n := len(o.calls); n == 0 || o.calls[n-1] != k {
			o.calls = append(o.calls, k) // the unlock, had lockCall not seen it as the epoch's
		}
		a := r.a
		if a.locks == nil {
			a.locks = make([][]lockEpoch, len(a.m.Procs))
		}
		a.locks[r.proc] = append(a.locks[r.proc], lockEpoch{calls: o.calls, win: cm.ID, target: int32(o.peer), typ: o.typ,
			th: int32(th), lockEv: o.ev, unlockEv: idx})
		return
	}
	r.lockWarn("rma_unlock without its rma_lock", th, idx, "target %d of window entry %d", e.Args[0], e.Args[1])
}

// lockWarn counts a lock record of a damaged file the analysis leaves
// out, naming the event and its file.
func (r *callRecorder) lockWarn(kind string, th int, idx int64, format string, args ...any) {
	p := r.a.m.Procs[r.proc]
	r.a.Warn.Add(kind, "process %d (%s) thread %d event %d: "+format,
		append([]any{p.Header.Rank, p.EventFile(th), th, idx}, args...)...)
}

// Sizes of lockWaits' records: an epoch sent to its target's rank (the
// origin's world rank, the epoch, the window, the target, the type, the
// thread, the lock's enter, the unlock's enter and exit and its
// rma_unlock event), the answer sent back (the waiter's world rank and
// epoch, the holder's world rank and thread, the release, the holder's
// rma_unlock event and its unlock's exit) and an edge's source sent to
// the holder's rank (its world rank, thread and rma_unlock event).
const (
	lockRecSize = 4 + 4 + 8 + 4 + 4 + 4 + 8 + 8 + 8 + 8
	lockAnsSize = 4 + 4 + 4 + 4 + 8 + 8 + 8
	lockSrcSize = 4 + 4 + 8
)

// lockWait is an epoch's wait: until when (the releasing unlock's enter),
// the holder's world rank, thread, rma_unlock event and its unlock's exit.
type lockWait struct {
	epoch        int32
	cause, cth   int32
	until, cev   int64
	causeRelExit int64
}

// lockRec is an epoch at its target's rank.
type lockRec struct {
	origin, epoch       int32
	win                 int64
	target              int32
	typ                 int8
	th                  int32
	request, rel, relEx int64
	unlockEv            int64
}

// lockBefore orders one window target's epochs: by their unlocks' exits
// (ties: by origin, then epoch, as on any number of ranks).
func lockBefore(x, y *lockRec) int {
	return cmp.Or(cmp.Compare(x.relEx, y.relEx), cmp.Compare(x.origin, y.origin), cmp.Compare(x.epoch, y.epoch))
}

// holdsLonger reports whether holder x releases after holder y: the later
// unlock's enter, among equal ones the first by origin, thread and
// rma_unlock event (as on any number of ranks).
func holdsLonger(xRel int64, xo, xth int32, xev int64, yRel int64, yo, yth int32, yev int64) bool {
	if xRel != yRel {
		return xRel > yRel
	}
	return cmp.Or(cmp.Compare(xo, yo), cmp.Compare(xth, yth), cmp.Compare(xev, yev)) < 0
}

// latest returns, of holders rs[x] and rs[y] (−1: none), the one that
// releases last.
func latest(rs []lockRec, x, y int) int {
	if x < 0 {
		return y
	}
	if y < 0 {
		return x
	}
	a, b := &rs[x], &rs[y]
	if holdsLonger(b.rel, b.origin, b.th, b.unlockEv, a.rel, a.origin, a.th, a.unlockEv) {
		return y
	}
	return x
}

// prefixLatest returns, for the epochs idx (one window's, in lockBefore
// order, each window's run starting where first says), the holder that
// releases last among each one and those before it in its window.
func prefixLatest(rs []lockRec, idx []int32) []int32 {
	out := make([]int32, len(idx))
	for j, x := range idx {
		best := int(x)
		if j > 0 && rs[idx[j-1]].win == rs[x].win {
			best = latest(rs, int(out[j-1]), best)
		}
		out[j] = int32(best)
	}
	return out
}

// latestBefore returns the holder releasing last among the epochs idx of
// window win before r in lockBefore order (pre: prefixLatest's), −1 for
// none.
func latestBefore(rs []lockRec, idx, pre []int32, r *lockRec) int {
	j, _ := slices.BinarySearchFunc(idx, r, func(x int32, y *lockRec) int {
		return cmp.Or(cmp.Compare(rs[x].win, y.win), lockBefore(&rs[x], y))
	})
	if j == 0 || rs[idx[j-1]].win != r.win {
		return -1
	}
	return int(pre[j-1])
}

// lockWaits orders every window target's lock epochs on the target's
// rank and returns, per local process, the epochs that waited for a
// conflicting holder (one wait an epoch, in epoch order), and makes the
// critical path's edges of the waits (a.lrEdges, a.lrSources).
// Collective; nil everywhere when no process has an epoch.
func (a *Analysis) lockWaits(c comm.Comm, owners graph.Owners) ([][]lockWait, error) {
	m := a.m
	n := int64(0)
	for _, es := range a.locks {
		n += int64(len(es))
	}
	tot, err := c.AllreduceInt64(comm.Sum, []int64{n})
	if err != nil || tot[0] == 0 {
		return nil, err
	}
	le := binary.LittleEndian
	bufs := make([][]byte, c.Size())
	for i, es := range a.locks {
		cs := &a.procs[i]
		me := worldRank(m.Procs[i])
		for j, e := range es {
			lk, un := e.calls[0], e.calls[len(e.calls)-1]
			var b []byte
			b = le.AppendUint32(b, uint32(me))
			b = le.AppendUint32(b, uint32(j))
			b = le.AppendUint64(b, uint64(e.win))
			b = le.AppendUint32(b, uint32(e.target))
			b = le.AppendUint32(b, uint32(e.typ))
			b = le.AppendUint32(b, uint32(e.th))
			b = le.AppendUint64(b, uint64(cs.enterAt(lk)))
			b = le.AppendUint64(b, uint64(cs.enterAt(un)))
			b = le.AppendUint64(b, uint64(cs.exitAt(un)))
			b = le.AppendUint64(b, uint64(e.unlockEv))
			if e.target >= 0 {
				to := owners.Owner(int(e.target))
				bufs[to] = append(bufs[to], b...)
				continue
			}
			// lock_all: a shared lock on every target, on every rank.
			for q := range bufs {
				bufs[q] = append(bufs[q], b...)
			}
		}
	}
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	var rs []lockRec
	perr := eachRecord(c.Rank(), recv, lockRecSize, "lock epochs", func(_ int, buf []byte) error {
		rs = append(rs, lockRec{origin: int32(le.Uint32(buf)), epoch: int32(le.Uint32(buf[4:])), win: int64(le.Uint64(buf[8:])),
			target: int32(le.Uint32(buf[16:])), typ: int8(le.Uint32(buf[20:])), th: int32(le.Uint32(buf[24:])),
			request: int64(le.Uint64(buf[28:])), rel: int64(le.Uint64(buf[36:])), relEx: int64(le.Uint64(buf[44:])),
			unlockEv: int64(le.Uint64(buf[52:]))})
		return nil
	})
	if err := comm.Agree(c, perr); err != nil {
		return nil, err
	}
	// One window target's epochs in lockBefore order, the lock_all ones
	// (target −1) first in their window; beside them, per window in the
	// same order, the lock_all epochs and the exclusive ones (of any
	// target of this rank's).
	slices.SortFunc(rs, func(x, y lockRec) int {
		return cmp.Or(cmp.Compare(x.win, y.win), cmp.Compare(x.target, y.target), lockBefore(&x, &y))
	})
	var alls, excl []int32
	for j := range rs {
		switch {
		case rs[j].target < 0:
			alls = append(alls, int32(j))
		case rs[j].typ == trace.LockExclusive:
			excl = append(excl, int32(j))
		}
	}
	byWin := func(x, y int32) int { return cmp.Or(cmp.Compare(rs[x].win, rs[y].win), lockBefore(&rs[x], &rs[y])) }
	slices.SortFunc(excl, byWin)
	allPre, exclPre := prefixLatest(rs, alls), prefixLatest(rs, excl)
	bufs = make([][]byte, c.Size())
	answer := func(r, h *lockRec) {
		to := owners.Owner(int(r.origin))
		b := le.AppendUint32(bufs[to], uint32(r.origin))
		b = le.AppendUint32(b, uint32(r.epoch))
		b = le.AppendUint32(b, uint32(h.origin))
		b = le.AppendUint32(b, uint32(h.th))
		b = le.AppendUint64(b, uint64(h.rel))
		b = le.AppendUint64(b, uint64(h.unlockEv))
		bufs[to] = le.AppendUint64(b, uint64(h.relEx))
	}
	lastAny, lastEx := -1, -1 // of the target's epochs so far: the holders releasing last
	for j := range rs {
		r := &rs[j]
		if r.target < 0 {
			// A lock_all epoch waits for the window's exclusive epochs
			// before it, on any target.
			if h := latestBefore(rs, excl, exclPre, r); h >= 0 && rs[h].rel > r.request {
				answer(r, &rs[h])
			}
			continue
		}
		if j == 0 || rs[j-1].win != r.win || rs[j-1].target != r.target {
			lastAny, lastEx = -1, -1
		}
		// An exclusive epoch waits for every epoch before it, the
		// window's lock_all ones included; a shared one for the
		// exclusive ones.
		h := lastEx
		if r.typ == trace.LockExclusive {
			h = latest(rs, lastAny, latestBefore(rs, alls, allPre, r))
			lastEx = latest(rs, lastEx, j)
		}
		lastAny = latest(rs, lastAny, j)
		if h >= 0 && rs[h].rel > r.request {
			answer(r, &rs[h])
		}
	}
	recv, err = c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	local := map[int32]int{}
	for i, p := range m.Procs {
		local[worldRank(p)] = i
	}
	out := make([][]lockWait, len(m.Procs))
	perr = eachRecord(c.Rank(), recv, lockAnsSize, "lock waits", func(q int, buf []byte) error {
		i, ok := local[int32(le.Uint32(buf))]
		ep := int32(le.Uint32(buf[4:]))
		if !ok || i >= len(a.locks) || ep < 0 || int(ep) >= len(a.locks[i]) {
			return fmt.Errorf("rank %d: waitstate: rank %d sent a lock wait of an epoch not held here", c.Rank(), q)
		}
		out[i] = append(out[i], lockWait{epoch: ep, cause: int32(min(le.Uint32(buf[8:]), math.MaxInt32)), cth: int32(le.Uint32(buf[12:])),
			until: int64(le.Uint64(buf[16:])), cev: int64(le.Uint64(buf[24:])), causeRelExit: int64(le.Uint64(buf[32:]))})
		return nil
	})
	if err := comm.Agree(c, perr); err != nil {
		return nil, err
	}
	// A lock_all epoch's answers (a rank's each): the holder releasing
	// last.
	for i, ws := range out {
		slices.SortFunc(ws, func(x, y lockWait) int {
			return cmp.Or(cmp.Compare(x.epoch, y.epoch), cmp.Compare(y.until, x.until), cmp.Compare(x.cause, y.cause),
				cmp.Compare(x.cth, y.cth), cmp.Compare(x.cev, y.cev))
		})
		out[i] = slices.CompactFunc(ws, func(x, y lockWait) bool { return x.epoch == y.epoch })
	}
	return out, a.lockEdges(c, owners, out)
}

// lockEdges makes the critical path's edges of the lock waits (out, per
// local process): rows of a.lrEdges at the waiter, sources of
// a.lrSources at the holder (sent to its rank). Collective.
func (a *Analysis) lockEdges(c comm.Comm, owners graph.Owners, out [][]lockWait) error {
	m := a.m
	le := binary.LittleEndian
	bufs := make([][]byte, c.Size())
	for i, ws := range out {
		cs := &a.procs[i]
		for _, w := range ws {
			e := &a.locks[i][w.epoch]
			lk, un := e.calls[0], e.calls[len(e.calls)-1]
			ev, kind := e.lockEv, trace.RMALock
			switch {
			case w.until <= cs.exitAt(lk):
			case w.until > cs.enterAt(un):
				ev, kind = e.unlockEv, trace.RMAUnlock
			default:
				continue // the release came in a flush or an RMA call: no event there
			}
			a.lrEdges[i].Append(e.th, ev, kind, w.cause, w.cth, w.cev, trace.RMAUnlock, w.until)
			to := owners.Owner(int(w.cause))
			b := le.AppendUint32(bufs[to], uint32(w.cause))
			b = le.AppendUint32(b, uint32(w.cth))
			bufs[to] = le.AppendUint64(b, uint64(w.cev))
		}
	}
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return err
	}
	local := map[int32]int{}
	for i, p := range m.Procs {
		local[int32(p.Header.Rank)] = i
	}
	srcs := make([][]sim.EventRef, len(m.Procs))
	perr := eachRecord(c.Rank(), recv, lockSrcSize, "lock releases", func(q int, buf []byte) error {
		i, ok := local[int32(le.Uint32(buf))]
		if !ok {
			return fmt.Errorf("rank %d: waitstate: rank %d sent a lock release of process %d, not held here", c.Rank(), q, le.Uint32(buf))
		}
		srcs[i] = append(srcs[i], sim.EventRef{Thread: int32(le.Uint32(buf[4:])), Event: int64(le.Uint64(buf[8:]))})
		return nil
	})
	if err := comm.Agree(c, perr); err != nil {
		return err
	}
	a.addSources(srcs)
	return nil
}

// bookLocks charges local process i's lock waits to the epochs' calls:
// each its time before the holder's release.
func (a *Analysis) bookLocks(i int, ws []lockWait, book func(k int32, pt Pattern, w int64, pred int32, v int32)) {
	cs := &a.procs[i]
	for _, w := range ws {
		for _, k := range a.locks[i][w.epoch].calls {
			b, e := cs.enterAt(k), cs.exitAt(k)
			if d := min(e, w.until) - b; d > 0 {
				book(k, LockContention, d, w.cause, -1)
			}
		}
	}
}
