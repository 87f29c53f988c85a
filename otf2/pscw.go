package otf2

import (
	"slices"

	"github.com/ptrace-dev/ptrace/trace"
)

// General active target synchronisation (MPI_Win_post, _start, _complete,
// _wait, _test) converted as ptrace's collector records it
// (docs/trace-format.md): a target's MPI_Win_post sends trace.TagWinPost
// to each origin of its group right after the call's Enter, received by
// each origin's MPI_Win_start right before its Leave; an origin's
// MPI_Win_complete sends trace.TagWinComplete to each target of its start
// group right after its Enter, received by the target's MPI_Win_wait, or
// the MPI_Win_test that ended the exposure epoch, right before its Leave;
// all on the window's own communicator entry (c.winIndex).
//
// Score-P (8.4) writes one RmaGroupSync (syncLevel, window, group: the
// epoch's partners as an MPI group of world ranks) inside each of these
// calls: MPI_Win_post and _start at their Enter, MPI_Win_wait and
// _complete after the MPI call, before the Leave; MPI_Win_test writes
// syncLevel PROCESS|MEMORY when it returned true (the epoch ends there)
// and NONE when it returned false. Pass 1 finds, per location, the call
// each record is in (the MPI region entered last and not left, with no
// region open inside it) and keys what it sends by the call's Enter and
// what it receives by its Leave (the location's Enter and Leave records
// counted in order, as both passes read them); pass 2 emits the messages
// there. A record in no such call is not used (Stats.Ignored: noted); a
// second one in a call is a counted warning and skipped, and so is one
// whose window or group the process cannot translate (pass 2), and a
// partner outside the window's communicator. Score-P does not record MPI_MODE_NOCHECK: the messages
// are made for such an epoch too (Scalasca's analysis does the same).

// The five calls, by region name (regInfo.pscw).
const (
	pscwNone uint8 = iota
	pscwPost
	pscwStart
	pscwComplete
	pscwWait
	pscwTest
)

var pscwCalls = map[string]uint8{
	"MPI_Win_post": pscwPost, "MPI_Win_start": pscwStart, "MPI_Win_complete": pscwComplete,
	"MPI_Win_wait": pscwWait, "MPI_Win_test": pscwTest,
}

// rmaSyncNone is OTF2_RMA_SYNC_LEVEL_NONE: Score-P's level in an
// MPI_Win_test that returned false.
const rmaSyncNone = 0

// pscwSync is one RmaGroupSync record turned into its call's messages.
type pscwSync struct {
	tag   int64  // trace.TagWinPost or trace.TagWinComplete
	win   uint32 // global OTF2 window id
	group uint32 // global OTF2 group id
	off   int64  // the record's file offset (warnings)
}

// pscwLoc is one location's general active target synchronisation: what
// its calls send, by the location's Enter count of the call's Enter, and
// receive, by the Leave count of its Leave (pass 1); the counts pass 2
// has reached.
type pscwLoc struct {
	sends, recvs   map[int]pscwSync
	enters, leaves int
}

// openCall follows the call of a kind (a small number of the caller's,
// 0: none) a location's records are in: its region and how many regions
// entered inside it are not left. The PSCW and lock conversions find a
// record's call with it.
type openCall struct {
	kind   uint8
	region uint32
	depth  int
}

// enter follows the Enter of region id, which begins a call of kind k
// (0: none); it reports whether a call began.
func (o *openCall) enter(id uint32, k uint8) bool {
	if o.kind != 0 {
		o.depth++
		return false
	}
	if k == 0 {
		return false
	}
	*o = openCall{kind: k, region: id}
	return true
}

// leave follows the Leave of region id and returns the kind of the call
// it ends (0: none).
func (o *openCall) leave(id uint32) uint8 {
	switch {
	case o.kind == 0:
	case id == o.region && o.depth == 0:
		k := o.kind
		*o = openCall{}
		return k
	case o.depth > 0:
		o.depth--
	}
	return 0
}

// in reports whether a record stands in the call itself: a call is open
// and no region inside it.
func (o *openCall) in() bool { return o.kind != 0 && o.depth == 0 }

// pscwScan follows one location's records in pass 1.
type pscwScan struct {
	enters, leaves int
	// the call open (kind pscwPost … pscwTest), its Enter count, whether
	// its record came and what it receives
	openCall
	enter  int
	synced bool
	recv   *pscwSync
}

// pscwEnter and pscwLeave follow the Enter and Leave records of location
// t in pass 1 (every one, of a defined region or not: pass 2 counts
// alike); id is the region (r nil: undefined).
func (c *conv) pscwEnter(s *pscwScan, id uint32, r *Region) {
	s.enters++
	k := pscwNone
	if r != nil && s.kind == pscwNone {
		k = c.info(id, r).pscw
	}
	if s.openCall.enter(id, k) {
		s.enter, s.synced, s.recv = s.enters, false, nil
	}
}

func (c *conv) pscwLeave(t int, s *pscwScan, id uint32) {
	s.leaves++
	if s.leave(id) == pscwNone {
		return
	}
	if s.recv != nil {
		c.pscwLocOf(t).recvs[s.leaves] = *s.recv
	}
	s.synced, s.recv = false, nil
}

// pscwSyncRecord takes an RmaGroupSync record of location t in pass 1.
func (c *conv) pscwSyncRecord(t int, s *pscwScan, e *Event) {
	ld := c.local[t]
	switch {
	case !s.in():
		c.st.Ignored[e.Type]++ // in another call: not used (noted)
		return
	case s.synced:
		c.pscwDup.add("%s: offset %d: a second RmaGroupSync in one MPI_Win_post, _start, _complete, _wait or _test; skipped", c.a.evtPath(c.p.locations[t].ID), e.Offset)
		return
	}
	s.synced = true
	sy := pscwSync{tag: trace.TagWinPost, win: uint32(ld.Map(mapRmaWin, e.A[1])), group: uint32(ld.Map(mapGroup, e.A[2])), off: e.Offset}
	switch s.kind {
	case pscwComplete, pscwWait, pscwTest:
		sy.tag = trace.TagWinComplete
	}
	switch s.kind {
	case pscwPost, pscwComplete:
		c.pscwLocOf(t).sends[s.enter] = sy
	case pscwTest:
		if e.A[0] == rmaSyncNone {
			return // returned false: the epoch goes on
		}
		fallthrough
	default:
		s.recv = &sy
	}
}

func (c *conv) pscwLocOf(t int) *pscwLoc {
	if c.pscw == nil {
		c.pscw = make([]*pscwLoc, len(c.p.locations))
	}
	if c.pscw[t] == nil {
		c.pscw[t] = &pscwLoc{sends: map[int]pscwSync{}, recvs: map[int]pscwSync{}}
	}
	return c.pscw[t]
}

// pscwAt counts an Enter or Leave record of location t in pass 2 and
// returns the messages its call sends after it (Enter) or receives before
// it (Leave), nil when none.
func (c *conv) pscwAt(t int, enter bool) *pscwSync {
	if c.pscw == nil || c.pscw[t] == nil {
		return nil
	}
	l := c.pscw[t]
	m, k := l.recvs, &l.leaves
	if enter {
		m, k = l.sends, &l.enters
	}
	*k++
	if s, ok := m[*k]; ok {
		return &s
	}
	return nil
}

// pscwEmit emits the messages of s at now on h: kind trace.MPISend or
// trace.MPIRecv, one to or from each rank of its group, on the window's
// entry.
func (c *conv) pscwEmit(h *thr, s *pscwSync, kind trace.Kind, now int64, evt string) {
	wi, ok := c.winIndex[s.win]
	if !ok {
		c.pscwBad.add("%s: offset %d: RmaGroupSync on RMA window %d, which is not a window of an MPI communicator of this process; skipped", evt, s.off, s.win)
		return
	}
	ranks, ok := c.pscwGroup(s.group)
	if !ok {
		c.pscwBad.add("%s: offset %d: RmaGroupSync of group %d, which is no MPI group of ranks; skipped", evt, s.off, s.group)
		return
	}
	ci, ok := c.cutComm(int64(wi), now)
	if !ok {
		return
	}
	members := c.commRanks[c.winComm[s.win]]
	for _, r := range ranks {
		if !slices.Contains(members, r) {
			c.pscwBad.add("%s: offset %d: RmaGroupSync names rank %d, outside RMA window %d's communicator; that partner is skipped", evt, s.off, r, s.win)
			continue
		}
		h.emit(kind, now, int64(r), s.tag, ci, 0, 0)
	}
}

// pscwGroup returns the world ranks of an RmaGroupSync's group: an MPI
// group of ranks (Score-P's COMM_GROUP, whose members are world ranks) or
// MPI_COMM_SELF's.
func (c *conv) pscwGroup(id uint32) ([]int, bool) {
	gr := c.a.Defs.Group(id)
	if gr == nil || gr.Paradigm != paradigmMPI {
		return nil, false
	}
	switch gr.Type {
	case groupTypeCommSelf:
		return []int{int(c.p.rank)}, true
	case groupTypeCommGroup:
		ranks := make([]int, len(gr.Members))
		for i, m := range gr.Members {
			if m >= uint64(len(c.a.procs)) {
				return nil, false
			}
			ranks[i] = int(m)
		}
		return ranks, true
	}
	return nil, false
}
