package otf2

import (
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// Passive target synchronisation (MPI_Win_lock, _lock_all, _unlock,
// _unlock_all) converted as ptrace's collector records it
// (docs/trace-format.md): rma_lock(peer, comm, lock_type) right before
// the Leave of MPI_Win_lock (peer: the target's world rank) or
// MPI_Win_lock_all (peer −1, shared), rma_unlock(peer, comm) right before
// the Leave of the MPI_Win_unlock or MPI_Win_unlock_all that ends the
// epoch, on the window's own communicator entry (c.winIndex). The
// analysis orders one target's epochs itself (waitstate/lock.go).
//
// Score-P (8.4) writes one RmaRequestLock (window, remote: the target's
// rank in the window's communicator, UNDEFINED for lock_all; lock id 0;
// type EXCLUSIVE or SHARED, lock_all SHARED) inside MPI_Win_lock and
// MPI_Win_lock_all, stamped with the call's Enter, before the call's MPI
// work, and one RmaReleaseLock (window, remote, lock id) inside
// MPI_Win_unlock and _unlock_all after it, stamped with the Enter too. It
// writes RmaAcquireLock (a lock acquired) and RmaTryLock (an attempt that
// did not get it) only for SHMEM's locks; an RmaAcquireLock in an
// MPI_Win_lock is taken as its request would be (the epoch begins), an
// RmaTryLock there holds no lock (not used, noted). It does not record
// MPI_MODE_NOCHECK: such an epoch converts as a lock of its type (which
// the collector records as lock_type 3, no lock; Scalasca's analysis
// does the same as the conversion).
//
// A record is taken in the call it is in (the lock call entered last and
// not left, with no region open inside it); one in no such call is not
// used (Stats.Ignored: noted). A second one in a call, a release in a
// lock call or a request in an unlock call, a window that is no window of
// the process, a target outside its communicator (or none in
// MPI_Win_lock, one in MPI_Win_lock_all), an unknown type, a release of
// no epoch begun and an epoch never released are counted warnings naming
// the record's file and offset; the record is skipped (an epoch never
// released is converted: the analysis gives it no part, as the
// collector's).

// The lock calls, by region name (regInfo.lock).
const (
	lockNone uint8 = iota
	lockOne
	lockAll
	unlockOne
	unlockAll
)

var lockCallNames = [...]string{lockOne: "MPI_Win_lock", lockAll: "MPI_Win_lock_all", unlockOne: "MPI_Win_unlock", unlockAll: "MPI_Win_unlock_all"}

// lockCallOf maps a region name to its lock call.
var lockCallOf = map[string]uint8{
	"MPI_Win_lock": lockOne, "MPI_Win_lock_all": lockAll, "MPI_Win_unlock": unlockOne, "MPI_Win_unlock_all": unlockAll,
}

// OTF2_LockType.
const (
	otf2LockExclusive = 0
	otf2LockShared    = 1
)

// rmaLockState follows one location's lock calls and epochs in pass 2.
type rmaLockState struct {
	// the lock call open (kind lockOne … unlockAll) and its record
	// (rec.off ≥ 0)
	openCall
	rec rmaLockRec
	// the epochs begun and not released
	open []rmaLockRec
}

// rmaLockRec is one lock record of a lock call: its type, global window id,
// remote as stored, OTF2 lock type (typLk) and file offset; peer is the target's
// world rank (−1: every member) once translated.
type rmaLockRec struct {
	typ    uint8
	win    uint32
	remote uint64
	typLk  uint64
	off    int64
	peer   int64
}

// lockEnter and lockLeave follow the Enter and Leave records of defined
// regions of thread h; lockLeave writes the call's rma_lock or rma_unlock
// before the Leave's mpi_exit (call it before c.region).
func (c *conv) lockEnter(h *thr, id uint32, r *Region) {
	s := &h.lk
	k := lockNone
	if s.kind == lockNone {
		k = c.info(id, r).lock
	}
	if s.openCall.enter(id, k) {
		s.rec = rmaLockRec{off: -1}
	}
}

func (c *conv) lockLeave(h *thr, id uint32, now int64, evt string) {
	s := &h.lk
	if k := s.leave(id); k != lockNone && s.rec.off >= 0 {
		c.lockEmit(h, k, s.rec, now, evt)
	}
}

// lockRecord takes an RmaRequestLock, RmaAcquireLock, RmaTryLock or
// RmaReleaseLock record of thread h.
func (c *conv) lockRecord(h *thr, e *Event, evt string) {
	s := &h.lk
	release := e.Type == EvRmaReleaseLock
	switch {
	case !s.in(), e.Type == EvRmaTryLock:
		c.st.Ignored[e.Type]++ // in another call, or an attempt that got no lock: not used (noted)
		return
	case release != (s.kind == unlockOne || s.kind == unlockAll):
		c.lockBad.add("%s: offset %d: %s in %s; skipped", evt, e.Offset, EventName(e.Type), lockCallNames[s.kind])
		return
	}
	rec := rmaLockRec{typ: e.Type, win: uint32(c.local[h.t].Map(mapRmaWin, e.A[0])), remote: e.A[1], off: e.Offset}
	if !release {
		rec.typLk = e.A[3]
	}
	if s.rec.off >= 0 {
		p := s.rec
		if p.typ == EvRmaRequestLock && rec.typ == EvRmaAcquireLock && p.win == rec.win && p.remote == rec.remote && p.typLk == rec.typLk {
			return // the request's acquisition, as a writer may record both
		}
		c.lockBad.add("%s: offset %d: a second lock record in one %s; skipped", evt, e.Offset, lockCallNames[s.kind])
		return
	}
	s.rec = rec
}

// lockEmit writes the event of lock call k's record rec at now, the
// call's Leave, on h.
func (c *conv) lockEmit(h *thr, k uint8, rec rmaLockRec, now int64, evt string) {
	name := EventName(rec.typ)
	wi, ok := c.winIndex[rec.win]
	if !ok {
		c.lockBad.add("%s: offset %d: %s on RMA window %d, which is not a window of an MPI communicator of this process; skipped", evt, rec.off, name, rec.win)
		return
	}
	all := k == lockAll || k == unlockAll
	rec.peer = -1
	undef := rec.remote == undefined32 || rec.remote == math.MaxUint64
	switch {
	case all && !undef:
		c.lockBad.add("%s: offset %d: %s in %s names rank %d, not every member; skipped", evt, rec.off, name, lockCallNames[k], rec.remote)
		return
	case !all:
		if rec.peer = c.peer(c.winComm[rec.win], rec.remote); rec.peer < 0 {
			c.lockBad.add("%s: offset %d: %s names rank %d, outside RMA window %d's communicator; skipped", evt, rec.off, name, int64(rec.remote), rec.win)
			return
		}
	}
	var typ int64
	if k == lockOne || k == lockAll {
		switch {
		case rec.typLk == otf2LockExclusive && !all:
			typ = trace.LockExclusive
		case rec.typLk == otf2LockShared:
			typ = trace.LockShared
		default:
			c.lockBad.add("%s: offset %d: %s of lock type %d in %s; skipped", evt, rec.off, name, rec.typLk, lockCallNames[k])
			return
		}
		h.lk.open = append(h.lk.open, rec)
	} else {
		j := len(h.lk.open) - 1
		for ; j >= 0; j-- {
			if o := h.lk.open[j]; o.win == rec.win && o.peer == rec.peer {
				break
			}
		}
		if j < 0 {
			c.lockBad.add("%s: offset %d: %s of RMA window %d, target %d, whose epoch did not begin on this location; skipped", evt, rec.off, name, rec.win, rec.peer)
			return
		}
		h.lk.open = append(h.lk.open[:j], h.lk.open[j+1:]...)
	}
	ci, ok := c.cutComm(int64(wi), now)
	if !ok {
		return
	}
	if typ != 0 {
		h.emit(trace.RMALock, now, rec.peer, ci, typ)
	} else {
		h.emit(trace.RMAUnlock, now, rec.peer, ci)
	}
}

// lockEnd warns of thread h's epochs never released.
func (c *conv) lockEnd(h *thr) {
	for _, o := range h.lk.open {
		c.lockOpen.add("%s: offset %d: %s of RMA window %d, target %d, never released (no RmaReleaseLock in an MPI_Win_unlock after it); the epoch takes no part in Lock Contention",
			c.a.evtPath(c.p.locations[h.t].ID), o.off, EventName(o.typ), o.win, o.peer)
	}
	h.lk.open = nil
}
