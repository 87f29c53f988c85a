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
// Results do not depend on the number of analysis ranks: each target's
// epochs are ordered on one rank. MPI_Win_lock_all's epochs (target −1)
// and MPI_MODE_NOCHECK ones take no part.

// lockEpoch is one lock epoch of a local process: its thread's
// one-sided calls (the lock's first, the unlock's last), its window's
// communicator id, the target's world rank and the lock type.
type lockEpoch struct {
	calls  []int32
	win    int64
	target int32
	typ    int8
}

// openLock is an epoch whose unlock has not come yet.
type openLock struct {
	comm, peer int64
	typ        int8
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

// lockEvent follows an rma_lock or rma_unlock inside thread th's open
// call (which lockCall added to the epochs open on the thread).
func (r *callRecorder) lockEvent(e *trace.Event, th int) {
	if r.lockOpen == nil {
		return
	}
	k := r.open[th]
	if e.Kind == trace.RMALock {
		typ := int8(e.Args[2])
		if e.Args[0] < 0 || typ != trace.LockExclusive && typ != trace.LockShared {
			return // lock_all, MPI_MODE_NOCHECK, unknown: no part
		}
		r.lockOpen[th] = append(r.lockOpen[th], openLock{comm: e.Args[1], peer: e.Args[0], typ: typ, calls: []int32{k}})
		return
	}
	os := r.lockOpen[th]
	for j := len(os) - 1; j >= 0; j-- {
		o := os[j]
		if o.comm != e.Args[1] || o.peer != e.Args[0] {
			continue
		}
		r.lockOpen[th] = slices.Delete(os, j, j+1)
		cm, ok := r.tables.CommByIndex(o.comm)
		if !ok || o.peer >= trace.MaxRanks {
			return
		}
		if n := len(o.calls); n == 0 || o.calls[n-1] != k {
			o.calls = append(o.calls, k) // the unlock, had lockCall not seen it as the epoch's
		}
		a := r.a
		if a.locks == nil {
			a.locks = make([][]lockEpoch, len(a.m.Procs))
		}
		a.locks[r.proc] = append(a.locks[r.proc], lockEpoch{calls: o.calls, win: cm.ID, target: int32(o.peer), typ: o.typ})
		return
	}
}

// lockRecSize and lockAnsSize are the sizes of an epoch sent to its
// target's rank and of the answer sent back.
const (
	lockRecSize = 48
	lockAnsSize = 24
)

// lockWait is an epoch's wait: until when (the releasing unlock's enter)
// and the holder's world rank.
type lockWait struct {
	epoch int32
	until int64
	cause int32
}

// lockWaits orders every window target's lock epochs on the target's
// rank and returns, per local process, the epochs that waited for a
// conflicting holder. Collective; nil everywhere when no process has an
// epoch.
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
			to := owners.Owner(int(e.target))
			b := le.AppendUint32(bufs[to], uint32(me))
			b = le.AppendUint32(b, uint32(j))
			b = le.AppendUint64(b, uint64(e.win))
			b = le.AppendUint32(b, uint32(e.target))
			b = le.AppendUint32(b, uint32(e.typ))
			b = le.AppendUint64(b, uint64(cs.enterAt(lk)))
			b = le.AppendUint64(b, uint64(cs.enterAt(un)))
			bufs[to] = le.AppendUint64(b, uint64(cs.exitAt(un)))
		}
	}
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	type rec struct {
		origin, epoch       int32
		win                 int64
		target              int32
		typ                 int8
		request, rel, relEx int64
	}
	var rs []rec
	var perr error
	for q, buf := range recv {
		if len(buf)%lockRecSize != 0 {
			perr = fmt.Errorf("rank %d: waitstate: %d bytes of lock epochs from rank %d", c.Rank(), len(buf), q)
			break
		}
		for ; len(buf) > 0; buf = buf[lockRecSize:] {
			rs = append(rs, rec{origin: int32(le.Uint32(buf)), epoch: int32(le.Uint32(buf[4:])), win: int64(le.Uint64(buf[8:])),
				target: int32(le.Uint32(buf[16:])), typ: int8(le.Uint32(buf[20:])), request: int64(le.Uint64(buf[24:])),
				rel: int64(le.Uint64(buf[32:])), relEx: int64(le.Uint64(buf[40:]))})
		}
	}
	if err := comm.Agree(c, perr); err != nil {
		return nil, err
	}
	// One window target's epochs in the order of their unlocks' exits
	// (ties: by origin, then epoch, as on any number of ranks).
	slices.SortFunc(rs, func(x, y rec) int {
		return cmp.Or(cmp.Compare(x.win, y.win), cmp.Compare(x.target, y.target), cmp.Compare(x.relEx, y.relEx),
			cmp.Compare(x.origin, y.origin), cmp.Compare(x.epoch, y.epoch))
	})
	bufs = make([][]byte, c.Size())
	lastEx, shared := -1, -1 // the last exclusive epoch, the shared one since released last
	for j := range rs {
		r := &rs[j]
		if j == 0 || rs[j-1].win != r.win || rs[j-1].target != r.target {
			lastEx, shared = -1, -1
		}
		cause := lastEx
		if r.typ == trace.LockExclusive && shared >= 0 && (cause < 0 || rs[shared].rel > rs[cause].rel) {
			cause = shared
		}
		if r.typ == trace.LockExclusive {
			lastEx, shared = j, -1
		} else if shared < 0 || r.rel > rs[shared].rel {
			shared = j
		}
		if cause < 0 || rs[cause].rel <= r.request {
			continue
		}
		to := owners.Owner(int(r.origin))
		b := le.AppendUint32(bufs[to], uint32(r.origin))
		b = le.AppendUint32(b, uint32(r.epoch))
		b = le.AppendUint64(b, uint64(rs[cause].rel))
		bufs[to] = le.AppendUint64(b, uint64(rs[cause].origin))
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
	for q, buf := range recv {
		if len(buf)%lockAnsSize != 0 {
			perr = fmt.Errorf("rank %d: waitstate: %d bytes of lock waits from rank %d", c.Rank(), len(buf), q)
			break
		}
		for ; len(buf) > 0; buf = buf[lockAnsSize:] {
			i, ok := local[int32(le.Uint32(buf))]
			ep := int32(le.Uint32(buf[4:]))
			if !ok || i >= len(a.locks) || ep < 0 || int(ep) >= len(a.locks[i]) {
				perr = fmt.Errorf("rank %d: waitstate: rank %d sent a lock wait of an epoch not held here", c.Rank(), q)
				break
			}
			out[i] = append(out[i], lockWait{epoch: ep, until: int64(le.Uint64(buf[8:])), cause: int32(min(le.Uint64(buf[16:]), math.MaxInt32))})
		}
	}
	if err := comm.Agree(c, perr); err != nil {
		return nil, err
	}
	return out, nil
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
