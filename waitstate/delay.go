package waitstate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/bitrank"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/trace"
)

// Delay costs, as Scalasca 2.6's scout computes them (Böhme et al., ICPP
// 2010; scout's Delay.MPI.pattern, SynchpointHandler, TmapCacheHandler,
// DelayOps, MpiDelayOps, DelayCostMap).
//
// A synchronization point is an event where a process synchronized with
// others: a wait (Late Sender: the receive; Late Receiver: the send's
// completion; a collective's), the partner's side of a point-to-point
// wait (the send a receiver waited for, the receive request a sender
// waited for), every member of a barrier or an N×N collective, the root
// of a broadcast someone waited for and the last sender of a reduce whose
// root waited, and MPI_Init. A nonblocking collective's are in the calls
// that complete it (MPI_Wait, …), where its members waited, but for the
// member someone waited for (a broadcast's root, the latest start of an
// N×N collective or a barrier, a reduce's last sender), whose point is its
// start (MPI_I*): its time before the start is what delayed the others
// (scout has no delay costs of nonblocking collectives); a wait for
// progress's cause's is its completing call (progress.go). Each has its
// partners (the processes it synchronized with), its wait and its
// completion time (how long the call went on after the earliest partner's
// end).
//
// A wait's synchronization interval is, on each side, from that side's
// previous synchronization point *with the other* to the one that met.
// Each side's time map is its time in the interval per call path — the
// code it computed in (user region, parallel region or serial code) and
// each MPI call site, MPI time included — less the waits of the
// synchronization points inside it, and less the previous point's own
// call but for its completion time. The delay is the sum over call paths
// of the cause's excess over the waiter, positive parts only (d, summing
// to D); W is the waiting inside the cause's interval. The wait w is split
// in proportion: each call path gets d·s as short-term cost, each wait in
// the cause's interval its wait·s as propagated cost (of w's pattern),
// s = min(1, w/(D+W)) for point-to-point waits, s = w/(D+W) for
// collectives. A wait's propagated costs (per pattern: the pattern of the
// wait they came from) are in turn split over its own cause's delay
// (long-term cost of that pattern) and the waits in that cause's
// interval, with scale cost/(D+W): a backward replay, which processes a
// wait's split only once every later wait in its process has passed its
// costs on to it.
//
// Every wait's time ends as short-term or long-term cost of some call
// path, or as "propagated" (the part no delay explains: a point-to-point
// wait longer than D+W, costs reaching a wait with no cause, D+W of 0),
// rounded to the nanosecond so that nothing is lost or counted twice.
//
// Where ptrace differs from scout: a call path is the innermost user
// region or the MPI call site (function, call site, innermost user
// region), not the whole call stack; collectives end at their call's exit
// (scout: the collective end event), and a broadcast's waiter, a reduce's
// root, know only the root's end, all non-roots' ends (scout: the waiting
// members', the last sender's); scans and MPI_Alltoallv/w synchronize like
// other N×N collectives (scout ignores them). As scout, a collective's
// member that synchronized with the root after the others passes its
// share of the root's waits only from the next such member's point on
// (groupLo), and a process's first point is MPI_Init.

// costs computes the delay costs of the waits this rank's processes
// caused: the partners' synchronization points are exchanged, every wait
// travels with the waiter's time map to its cause's rank (in rounds of
// bounded size), which charges its short-term cost there, and the backward
// replay hands the rest on (long-term costs). Rows in process order, then
// by call path, site and pattern: the same for any number of ranks.
func (d *delays) costs(lr []lrCalls) ([]Delay, error) {
	c := d.c
	recv, err := c.Alltoallv(d.notes)
	d.notes = nil
	if err != nil {
		return nil, err
	}
	if err := comm.Agree(c, d.applyNotes(recv)); err != nil {
		return nil, err
	}
	d.ops = opCursor{} // addSyncs is done
	if err := d.taskCounts(); err != nil {
		return nil, err
	}
	// Two passes over the charged waits. The first tells each wait's
	// cause where its task is (the point waited for and the interval),
	// which needs what finds nodes, calls and points; those go before the
	// second, which sends the waiters' time maps, and the tasks are made
	// of them: the matching and the finders are not held beside the
	// tasks' delays and the time maps' rounds, the phase's peak.
	headsDone := func(recv [][]byte) error {
		if d.rowsErr != nil {
			return d.rowsErr
		}
		return d.taskHeads(recv)
	}
	d.headHits = make([]headHit, 1<<headHitBits)
	if err := d.rounds(func(cursor *[2]int) ([][]byte, bool) { return d.heads(lr, cursor) }, headsDone); err != nil {
		return nil, err
	}
	d.headHits = nil
	d.progCause = nil
	if err := comm.Agree(d.c, d.tasksFilled()); err != nil {
		return nil, err
	}
	clear(lr)
	d.dropFinders()
	if d.a.Release != nil {
		if err := d.a.Release(); err != nil {
			return nil, err
		}
	}
	d.sortTasks()
	for i := range d.procs {
		// About a call path a task and a quarter more (1.1 on a pure-MPI
		// code): grown past that, by a quarter. Made once the finders are
		// gone.
		p := &d.procs[i]
		p.td = makeTaskDelays(len(p.tasks))
		room := len(p.tasks) + len(p.tasks)/4
		p.cpD = make([]uint32, 0, room)
		p.cpRef.Reserve(room)
	}
	d.cmaps, d.hints = make([]causeMap, 1<<causeMapBits), make([]taskHint, 1<<taskHintBits)
	if err := d.rounds(d.records, d.tasks); err != nil {
		return nil, err
	}
	d.cmaps, d.rec = nil, recCursor{}
	// The time maps are made: the replay reads of the calls only their
	// call sites and codes (17 MB of enter times and durations of the
	// 2.78 M calls of the 64-process pure-MPI trace, under the replay's
	// order).
	for i := range d.a.procs {
		d.a.procs[i].dropTimes()
	}
	if err := d.replay(); err != nil {
		return nil, err
	}
	d.hints = nil
	out := d.out
	slices.SortStableFunc(out, func(x, y Delay) int {
		return cmp.Or(cmp.Compare(x.Rank, y.Rank), cmp.Compare(x.Label, y.Label), cmp.Compare(x.Site, y.Site), cmp.Compare(x.Pattern, y.Pattern))
	})
	return out, nil
}

// syncPt is a synchronization point of one thread: the event (thread,
// call, event index) and what scout's SynchpointInfo and synch ranks
// hold, in 24 bytes (a process has about one a call). The event index is
// 40 bits (evLo, evHi: event), as eventRef's. The wait and the
// completion are nanoseconds in 32 bits (2.1 s): one that does not fit
// is wideMark there and kept whole in its process's wide map (waitOf,
// complOf).
type syncPt struct {
	call int32
	// with is whom the point synchronized with (withOf): a world rank
	// (≥ 0), every process (−1), a communicator's members or a list of
	// ranks (below); but for a wait at a barrier or an N×N collective
	// (pattern WaitBarrier, WaitNxN) it is the process waited for, and
	// the point synchronized with its call's communicator (collComms:
	// delays.withOf). A wait's cause is the rank it synchronized with
	// (causeOf).
	with  int32
	wait  int32
	compl int32
	evLo  uint32
	th    uint16 // below trace.MaxThreads, as every thread index
	evHi  uint8
	pat   Pattern // the wait's, None for no wait
}

// evMax is the largest event index a point holds: MPI_Init's point is
// after every event of its call (math.MaxInt64 made), no event is past it.
const evMax = 1<<40 - 1

// event returns s's event index.
func (s *syncPt) event() int64 { return int64(s.evHi)<<32 | int64(s.evLo) }

// sameEvent reports whether s and x are points of the same event.
func (s *syncPt) sameEvent(x *syncPt) bool {
	return s.th == x.th && s.call == x.call && s.evLo == x.evLo && s.evHi == x.evHi
}

// wideMark is a point's wait or completion kept in the wide map.
const wideMark = math.MinInt32

// ptKey is a point's event: the wide map's key. Two points of an event
// (a process's own and a partner's notification, which a consistent trace
// does not have) are one once sorted, the first made (applyNotes), so
// the map holds the first's values (wideVals.at).
type ptKey struct {
	ev   int64
	call int32
	th   uint16
}

// wideVals are a point's wait and completion, whole, and where it was
// made in its process's points (before they are sorted).
type wideVals struct {
	wait, compl int64
	at          int
}

func (s *syncPt) key() ptKey { return ptKey{s.event(), s.call, s.th} }

// narrow32 returns x as a point's field, wideMark when it does not fit.
func narrow32(x int64) (int32, bool) {
	if x <= math.MinInt32 || x > math.MaxInt32 {
		return wideMark, false
	}
	return int32(x), true
}

// push appends point s, at event index ev, of wait w and completion c,
// to p's points.
func (p *delayProc) push(s syncPt, ev int64, w, c int64) {
	ev = max(0, min(ev, evMax))
	s.evLo, s.evHi = uint32(ev), uint8(ev>>32)
	var okw, okc bool
	s.wait, okw = narrow32(w)
	s.compl, okc = narrow32(c)
	if !okw || !okc {
		p.keepWide(&s, len(p.syncs), w, c)
	}
	p.syncs = append(p.syncs, s)
}

// keepWide keeps the whole wait and completion of point s, made at
// index j of p's points, unless an earlier point of its event holds the
// key (s will be dropped for it).
func (p *delayProc) keepWide(s *syncPt, j int, w, c int64) {
	if p.wide == nil {
		p.wide = map[ptKey]wideVals{}
	}
	if e, ok := p.wide[s.key()]; !ok || e.at >= j {
		p.wide[s.key()] = wideVals{w, c, j}
	}
}

// setCompl sets the completion of point j (not yet sorted) to c.
func (p *delayProc) setCompl(j int, c int64) {
	s := &p.syncs[j]
	w := p.waitOf(s)
	var ok bool
	if s.compl, ok = narrow32(c); !ok {
		p.keepWide(s, j, w, c)
	}
}

// waitOf returns point s's wait.
func (p *delayProc) waitOf(s *syncPt) int64 {
	if s.wait != wideMark {
		return int64(s.wait)
	}
	return p.wide[s.key()].wait
}

// chargedAt reports whether point j (sorted) is a wait charged to a cause:
// one with a task there, to which it passes its costs.
func (p *delayProc) chargedAt(j int32) bool {
	return p.charged[j/64]&(1<<(j%64)) != 0
}

// waitAt returns the wait of point j (sorted).
func (p *delayProc) waitAt(j int32) int64 {
	if w := p.pts.wait[j]; w != wideMark {
		return int64(w)
	}
	s := p.pts.at(j)
	return p.wide[s.key()].wait
}

// complAt returns the completion of point j (sorted).
func (p *delayProc) complAt(j int32) int64 {
	if c := int32(p.pts.compl.At(int(j))); c != wideMark {
		return int64(c)
	}
	s := p.pts.at(j)
	return p.wide[s.key()].compl
}

// complOf returns point s's completion.
func (p *delayProc) complOf(s *syncPt) int64 {
	if s.compl != wideMark {
		return int64(s.compl)
	}
	return p.wide[s.key()].compl
}

// withOf encodes a point's partner, the world rank synchronized with, or
// for none (−1) its set: set ≥ 0 is a communicator's index (its members),
// −1 every process (MPI_Init, a collective of no known communicator),
// −2 − j the list lists[j]. Communicators are −2 − 2c, lists −3 − 2j; an
// index past maxSet (no table holds so many) is maxSet, of no
// communicator either.
func withOf(partner, set int32) int32 {
	switch {
	case partner >= 0:
		return partner
	case set == -1:
		return -1
	case set >= 0:
		return -2 - 2*min(set, maxSet)
	}
	return -3 - 2*min(-2-set, maxSet)
}

const maxSet = 1<<30 - 1

// set returns the set s synchronized with (withOf), −1 for a partner or
// every process; s is not a wait at a collective (delays.withOf).
func (s *syncPt) set() int32 { return setOf(s.with) }

// setOf returns the set of a with (withOf), −1 for a partner or every
// process.
func setOf(with int32) int32 {
	if with >= -1 {
		return -1
	}
	x := -2 - with
	if x%2 == 0 {
		return x / 2
	}
	return -2 - (x-1)/2
}

// causeOf returns the process point s waited for, −1 for none: a wait
// (a pattern) synchronized with its cause alone, but at a barrier or an
// N×N collective, whose point holds its cause there.
func causeOf(s *syncPt) int32 {
	if s.pat == None || s.with < 0 {
		return -1
	}
	return s.with
}

// withOfAt returns whom point j (sorted) of process i synchronized with
// (withOf's encoding): a wait at a barrier or an N×N collective with its
// call's communicator's members, and so a wait for progress at one (not
// at a broadcast or a reduce: progRoot).
func (d *delays) withOfAt(i int, j int32) int32 {
	pts := &d.procs[i].pts
	if pat := pts.pat[j]; !pat.barrierLike() && (pat != WaitForProgress || d.procs[i].progRoot[pts.callAt(j)]) {
		return int32(pts.with.At(int(j)))
	}
	cm, ok := d.procs[i].colls.of(pts.callAt(j))
	if !ok {
		cm = -1
	}
	return withOf(-1, cm)
}

// cpRef is a call path of a process: an MPI call site (site ≥ 0) or a
// code (a label: user region, parallel region, serial code).
type cpRef struct {
	site int32
	code int64
}

// wideNS marks a task's D + W or a call path's delay too wide for 32
// bits (or negative, which neither is).
const wideNS = math.MaxUint32

// wideAside keeps the values of 32-bit fields that did not fit, whole,
// by the index of the field's record. The zero wideAside is empty.
type wideAside map[int32]int64

// put returns v as record k's field: itself, or wideNS with v kept aside.
func (w *wideAside) put(k int32, v int64) uint32 {
	if v >= 0 && v < wideNS {
		return uint32(v)
	}
	if *w == nil {
		*w = wideAside{}
	}
	(*w)[k] = v
	return wideNS
}

// get returns the value of record k's field f (put's).
func (w wideAside) get(k int32, f uint32) int64 {
	if f != wideNS {
		return int64(f)
	}
	return w[k]
}

// cpWide is a call path's delay while its task is made.
type cpWide struct {
	d   int64
	ref int32
}

// task is a wait charged to the process that caused it, at that process's
// synchronization point pos (−1: not found), in 12 bytes: the waiter's
// world rank (below trace.MaxRanks, 24 bits), the pattern (3) and the
// flags (4) share a word (wpf), as 1.5 M tasks of 16 bytes were the
// largest array of the delay costs but the points on the 64-process
// pure-MPI trace. A process's
// tasks are in the order of their waits (waiter, wsync: sortTasks). What
// its record gives it, its D + W and the call paths of its delay, is in
// columns of the process's (taskDelays), made with the records: not
// held while the heads are (where the finders are). The first point of
// the cause's interval whose waits receive its costs is found again each
// time they are passed (taskLo), not kept.
type task struct {
	pos   int32
	wsync int32  // the wait's synchronization point at the waiter
	wpf   uint32 // waiter<<8 | pattern<<4 | flags (taskColl, taskMade, taskReady, taskDone)
}

func makeTask(pos, waiter, wsync int32, pat Pattern) task {
	return task{pos: pos, wsync: wsync, wpf: uint32(waiter)<<8 | uint32(pat)<<4}
}

// waiter returns the world rank of t's waiter.
func (t *task) waiter() int32 { return int32(t.wpf >> 8) }

// pat returns the pattern of t's wait.
func (t *task) pat() Pattern { return Pattern(t.wpf >> 4 & 0xf) }

// has reports whether t has flag f.
func (t *task) has(f uint32) bool { return t.wpf&f != 0 }

// set gives t flag f.
func (t *task) set(f uint32) { t.wpf |= f }

// taskDelays are a process's tasks' D + W and call paths, by task, in 10
// bytes: den is D + W (wideNS: in the process's wideDen); the call paths'
// delays are cps[cpOff:cpOff+ncp] of the process (cpsOf), since the
// records that make them come in any order; ncp is wideCount for a
// count kept in the process's wideN.
type taskDelays struct {
	den   []uint32
	cpOff []int32
	ncp   []uint16
}

func makeTaskDelays(n int) taskDelays {
	return taskDelays{den: make([]uint32, n), cpOff: make([]int32, n), ncp: make([]uint16, n)}
}

const (
	taskColl  = 1 << iota // it waited for a collective (groupLo)
	taskMade              // its record came (tasks)
	taskReady             // its wait's costs have come (ready)
	taskDone
)

// wideCount marks a task's count of call paths kept in wideN.
const wideCount = math.MaxUint16

// setCount sets the number of call paths of task j's delay to n.
func (p *delayProc) setCount(j int32, n int) {
	if n < wideCount {
		p.td.ncp[j] = uint16(n)
		return
	}
	p.td.ncp[j] = wideCount
	if p.wideN == nil {
		p.wideN = wideAside{}
	}
	p.wideN[j] = int64(n)
}

// cpsOf returns the range of the call paths' delays of process p's task
// j in p.cps.
func (p *delayProc) cpsOf(j int32) (lo, hi int32) {
	n := int32(p.td.ncp[j])
	if n == wideCount {
		n = int32(p.wideN[j])
	}
	return p.td.cpOff[j], p.td.cpOff[j] + n
}

// amount returns the delay of call path k of the process's tasks.
func (p *delayProc) amount(k int32) int64 { return p.wideCP.get(k, p.cpD[k]) }

// cpRefAt returns the call path (an index in p.refs) of k.
func (p *delayProc) cpRefAt(k int32) int32 { return int32(p.cpRef.At(int(k))) }

// addAmount appends a call path's delay d, of call path ref.
func (p *delayProc) addAmount(d int64, ref int32) {
	p.cpD = append(p.cpD, p.wideCP.put(int32(len(p.cpD)), d))
	p.cpRef.Append(int64(ref))
}

// den returns task j's D + W.
func (p *delayProc) den(j int32) int64 { return p.wideDen.get(j, p.td.den[j]) }

// setDen sets the D + W of task j.
func (p *delayProc) setDen(j int32, den int64) { p.td.den[j] = p.wideDen.put(j, den) }

// refIndex returns the index in p.refs of call path cp, learnt at time
// map slot s (which learns the same call path nearly always).
func (p *delayProc) refIndex(s int32, cp cpRef) int32 {
	for int(s) >= len(p.slotRef) {
		p.slotRef = append(p.slotRef, -1)
	}
	if r := p.slotRef[s]; r >= 0 && p.refs[r] == cp {
		return r
	}
	r, ok := p.refAt[cp]
	if !ok {
		r = int32(len(p.refs))
		p.refs = append(p.refs, cp)
		p.refAt[cp] = r
	}
	p.slotRef[s] = r
	return r
}

// ready is a task whose wait's costs have come, to be done: its local
// process and index, the costs per pattern.
type ready struct {
	proc, task int32
	in         [delayPatterns]int64
}

// delayProc is one process's part of the delay analysis.
type delayProc struct {
	// syncs are the points while they are made (addSyncs, applyNotes),
	// pts once sorted.
	syncs []syncPt
	pts   syncCols
	own   []byte // the process's own points until applyNotes (appendPts)
	nOwn  int
	wide  map[ptKey]wideVals // the points' waits or completions wider than 32 bits
	lists [][]int32
	// costs are the costs passed to the waits with a cause, at their
	// points' slot (few of them reach one: hasSlot, a bit a point, saves
	// the lookup for the others).
	costs   [][delayPatterns]int64
	slot    map[int32]int32
	hasSlot []uint64
	charged []uint64 // a bit a point: chargedAt
	// syncHint is where findSync found the last point: a waiter's tasks
	// come in the order of its points, so of the cause's.
	syncHint int
	// The waits at synchronization points finBound and later have passed
	// their costs on (finalize).
	finBound int32
	tasks    []task
	td       taskDelays
	// The call paths' delays of the tasks, in 5 bytes (8 as a struct
	// of the two): the delay in ns, positive, in 32 bits (4.3 s; wideNS:
	// kept whole in wideCP, at the amount's index), and the call path, an
	// index in refs (few: a byte), made room for at the records' start
	// (15 MB as structs of the 1.9 M of the 64-process pure-MPI trace).
	cpD     []uint32
	cpRef   narrow.Step[uint8, uint16, uint32]
	wideCP  wideAside // the delays of cps too wide for 32 bits
	wideDen wideAside // the D + W of tasks too wide for 32 bits
	wideN   wideAside // the counts of call paths of tasks from wideCount on
	refs    []cpRef   // the call paths of cps
	refAt   map[cpRef]int32
	slotRef []int32 // per time map slot, the index of its last call path
	order   []int32 // task indices by pos, latest first
	hi      int     // order[:hi] are done
	// The call paths by slot, one per distinct key (a hash of the name:
	// the call paths' identity across processes), so that a time map
	// is a dense array (tmap); a site's and a code's slot, and per
	// where (calls.wheres) the slot of its label, −1 until known.
	keys      []uint64
	keySlot   map[uint64]int32
	siteSlot  []int32
	codeSlot  map[int64]int32
	whereSlot []int32
	rows      map[rowKey]int32
	// colls are the process's collective calls and their communicators;
	// groups the previous synchronization points with the
	// members of a collective's communicator, at the collective's points
	// groupAt (ascending; made for those that caused a wait); hint is
	// where the last was found: a waiter's tasks come in the order of
	// its points, so of the causes' points too.
	colls   collComms
	groupAt []int32
	groups  []group
	hint    int
	// progRoot are the calls whose wait for progress is at a broadcast
	// or a reduce: their points synchronized with the cause alone
	// (withOfAt).
	progRoot map[int32]bool
}

type callComm struct{ call, comm int32 }

// collComms are a process's collective calls, a bit a call, and each
// one's communicator (an index in its table), in call order: 1 byte where
// it fits (8 bytes a collective call as a list of callComm). A call that
// holds several collectives (no MPI call does) has the first's, in node
// order.
type collComms struct {
	set  bitrank.Set
	comm narrow.Column[int8]
}

// makeCollComms returns the collComms of cs, the collective calls of a
// process of n calls in node order (sorted here).
func makeCollComms(cs []callComm, n int) collComms {
	byCall := func(x, y callComm) int { return cmp.Compare(x.call, y.call) }
	// In node order they are in call order but where threads interleave:
	// a stable sort of sorted calls still merges every block.
	if !slices.IsSortedFunc(cs, byCall) {
		slices.SortStableFunc(cs, byCall)
	}
	cs = slices.CompactFunc(cs, func(x, y callComm) bool { return x.call == y.call })
	words := make([]uint64, (n+63)/64)
	var c collComms
	c.comm.Reserve(len(cs))
	for _, x := range cs {
		words[x.call/64] |= 1 << (x.call % 64)
		c.comm.Append(int64(x.comm))
	}
	c.set = bitrank.Make(n, func(w int) uint64 { return words[w] })
	return c
}

// of returns the communicator of collective call k (ok false: none).
func (c *collComms) of(k int32) (int32, bool) {
	j, ok := c.set.Rank(k)
	if !ok {
		return 0, false
	}
	return int32(c.comm.At(int(j))), true
}

// group is where the members of a collective's communicator last
// synchronized with its root before it (scout's
// findPreviousMpiGroupSynchpoints): prev for all but those that did so
// later, at the points inter (ascending).
type group struct {
	prev  int32
	inter []int32
}

type rowKey struct {
	cp   cpRef
	site int32
	pat  Pattern
}

// delays is the delay analysis of this rank's processes.
type delays struct {
	a        *Analysis
	c        comm.Comm
	owners   graph.Owners
	rowsErr  error // a failed read of the rows' predecessors (unparkPreds)
	procs    []delayProc
	local    localRanks // world rank → local process
	out      []Delay
	tm       tmap     // the time map being built
	ops      opCursor // addSyncs's
	recBufs  [][]byte
	ents     []tmEntry
	notes    [][]byte
	queue    []ready  // the replay's tasks to do
	cps      []cpWide // the call paths' delays of the task being made
	scratch  []syncPt
	ptsBuf   []syncPt   // applyNotes's, a process's points at a time
	runs     []int      // sortSyncs's
	colls    []callComm // addSyncs's collective calls, before makeCollComms
	tBase    int64      // the notifications' times are from it (noteMax)
	enc      []byte     // addSyncs's encoded points
	outgoing [][]byte
	lerr     error
	// taskAt and taskEnd are, for process i's tasks of waits from rank
	// q (at i·size + q), where the next goes and where they end, while
	// the heads come (taskCounts).
	taskAt, taskEnd []int32
	rowHits         [1 << rowHitBits]rowHit
	rec             recCursor  // the records'
	cmaps           []causeMap // the tasks' time maps of their causes, while made
	hints           []taskHint // taskOf's hints by cause and waiter, from the records to the replay's end
	headHits        []headHit  // the heads' points by the node they name, while the heads come
	// progCause are the causes' completions the waits for progress waited
	// for, by the waiter's point (progressEdges).
	progCause map[progKey]progRef
}

// Notifications of partner synchronization points (step 1): target
// process, thread and event (a node of its: see resolve), kind, the
// partner's world rank, the partner's exit time (from the earliest exit
// of MPI_Init, d.tBase), as varints: about 12 bytes (32 as fixed-size
// fields; with their buffers' room, 27 MB of the 64-process pure-MPI
// trace's 463 k notifications at the phase's peak, where they are made
// before every process's points are). A thread is rotated so that its
// Late Receiver flag (lrFlag) is its lowest bit.
const noteMax = 3*binary.MaxVarintLen32 + 3*binary.MaxVarintLen64

// appendNote appends a notification to b.
func appendNote(b []byte, proc, th int32, ev int64, kind int, from int32, t int64) []byte {
	b = binary.AppendUvarint(b, uint64(uint32(proc)))
	b = binary.AppendUvarint(b, uint64(bits.RotateLeft32(uint32(th), 1)))
	b = binary.AppendVarint(b, ev)
	b = binary.AppendUvarint(b, uint64(uint32(kind)))
	b = binary.AppendUvarint(b, uint64(uint32(from)))
	return binary.AppendVarint(b, t)
}

// noteLen returns the length of the notification at the start of b, its
// six varints' (0: cut short).
func noteLen(b []byte) int {
	ends := 0
	for k, c := range b {
		if c < 0x80 {
			if ends++; ends == 6 {
				return k + 1
			}
		}
	}
	return 0
}

// noteVal is a notification read (readNote).
type noteVal struct {
	proc, th int32
	ev       int64
	kind     int
	from     int32
	t        int64
}

// readNote reads the notification at the start of b and returns its
// length (0: cut short or corrupt).
func readNote(b []byte) (noteVal, int) {
	var x noteVal
	n := 0
	u32 := func() uint32 {
		v, k := binary.Uvarint(b[n:])
		if k <= 0 || v > math.MaxUint32 {
			n = -1 << 30 // negative whatever follows adds (fits a 32-bit int)
			return 0
		}
		n += k
		return uint32(v)
	}
	i64 := func() int64 {
		if n < 0 {
			return 0
		}
		v, k := binary.Varint(b[n:])
		if k <= 0 {
			n = -1 << 30 // negative whatever follows adds (fits a 32-bit int)
			return 0
		}
		n += k
		return v
	}
	x.proc = int32(u32())
	if n < 0 {
		return x, 0
	}
	x.th = int32(bits.RotateLeft32(u32(), -1))
	if n < 0 {
		return x, 0
	}
	x.ev = i64()
	if n < 0 {
		return x, 0
	}
	x.kind = int(u32())
	if n < 0 {
		return x, 0
	}
	x.from = int32(u32())
	if n < 0 {
		return x, 0
	}
	x.t = i64()
	return x, max(0, n)
}

const (
	noteSend   = iota // the sender of a Late Sender wait: its send node
	noteRecv          // the receiver of a Late Receiver wait: its receive node
	noteRoot          // a broadcast's root, a nonblocking N×N collective's or barrier's latest start, someone waited for: a node of its call
	noteLatest        // a reduce's last sender its root waited for
	noteColl          // a collective's latest member (records only)
)

// localOf returns the local process of world rank proc.
func (d *delays) localOf(proc int) (int, bool) { return d.local.get(proc) }

// localRanks finds a local process by its world rank: a rank's processes
// are a range of world ranks, so a slice over that range (−1: not here)
// rather than a map, whose hash was 1 % of the pure MPI program's
// analysis (a lookup per wait record, cost and notification); a map
// only where the ranks are spread over more than four times their
// number.
type localRanks struct {
	lo  int
	idx []int32
	m   map[int]int
}

func makeLocalRanks(ranks []int) localRanks {
	if len(ranks) == 0 {
		return localRanks{}
	}
	lo, hi := slices.Min(ranks), slices.Max(ranks)
	if hi-lo >= 4*len(ranks)+64 {
		l := localRanks{m: make(map[int]int, len(ranks))}
		for i, r := range ranks {
			l.m[r] = i
		}
		return l
	}
	l := localRanks{lo: lo, idx: make([]int32, hi-lo+1)}
	for i := range l.idx {
		l.idx[i] = -1
	}
	for i, r := range ranks {
		l.idx[r-lo] = int32(i)
	}
	return l
}

// get returns the local process of world rank r.
func (l *localRanks) get(r int) (int, bool) {
	if l.m != nil {
		i, ok := l.m[r]
		return i, ok
	}
	if k := uint(r - l.lo); k < uint(len(l.idx)) {
		if i := l.idx[k]; i >= 0 {
			return int(i), true
		}
	}
	return 0, false
}

func newDelays(a *Analysis, c comm.Comm, owners graph.Owners) *delays {
	d := &delays{a: a, c: c, owners: owners, procs: make([]delayProc, len(a.tp)),
		notes: make([][]byte, c.Size()), outgoing: make([][]byte, c.Size())}
	ranks := make([]int, len(a.tp))
	for i, p := range a.tp {
		ranks[i] = p.Header.Rank
	}
	d.local = makeLocalRanks(ranks)
	for i := range a.tp {
		d.procs[i].rows = map[rowKey]int32{}
		d.procs[i].keySlot = map[uint64]int32{}
		d.procs[i].refAt = map[cpRef]int32{}
		d.procs[i].slot = map[int32]int32{}
		d.procs[i].codeSlot = map[int64]int32{}
	}
	return d
}

func (d *delays) note(proc int32, th int32, ev int64, kind int, from int32, t int64) {
	to := d.owners.Owner(int(proc))
	// Wrapping arithmetic: the difference read back is t for any tBase.
	d.notes[to] = appendNote(double(d.notes[to], noteMax), proc, th, ev, kind, from, t-d.tBase)
}

// double returns s with room for n more, its capacity doubled when it
// has to grow: append grows large slices by a quarter, copying them
// (four times their size in garbage) where they are appended to a value
// at a time.
func double[S ~[]E, E any](s S, n int) S {
	if cap(s)-len(s) < n {
		s = slices.Grow(s, max(n, len(s)))
	}
	return s
}

// waitOf is what Analyze found of one call's wait, for the delay costs.
type waitOf struct {
	call  int32
	node  int32 // the node waited at (a receive, a collective's end), −1 for a Late Receiver
	cause int32
	pat   Pattern
	wait  int64 // charged: inside the window
}

// addSyncs makes local process i's own synchronization points: its waits,
// the members of barriers and N×N collectives, MPI_Init; and notifies the
// partners of its point-to-point waits and of broadcasts and reduces.
// vals are PropagateMax's (latest enter, minus the earliest exit) of the
// process's receive-like nodes in a call, waits Analyze's charged waits with a cause (by
// call) and at, per call, its index there (−1: none), initMin the
// earliest exit of MPI_Init over all processes.
func (d *delays) addSyncs(i int, vals *nodeVals, waits []waitOf, at []int32, lr *lrCalls, initMin int64) {
	a, m := d.a, d.a.m
	cs := &a.procs[i]
	p := &d.procs[i]
	me := int32(m.Procs[i].Header.Rank)
	// The points grow in a buffer of the rank's, then are kept encoded
	// (appendPts) until applyNotes adds the partners' (every process's
	// are held at once there).
	p.syncs = d.scratch[:0]
	colls := d.colls[:0]
	defer func() {
		d.scratch = p.syncs[:0]
		d.enc = appendPts(d.enc[:0], p.syncs)
		p.own, p.nOwn = slices.Clone(d.enc), len(p.syncs)
		p.syncs = nil
		p.colls = makeCollComms(colls, cs.len())
		d.colls = colls[:0]
	}()
	jv := 0 // in vals
	for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
		k := a.callOf(v)
		if k < 0 || m.Role[v] != graph.RoleRecv {
			continue
		}
		latest, earliest := vals.at(jv, cs.enterAt(k), cs.exitAt(k))
		jv++
		if isCollEnd(m.Kind[v]) {
			if op, cm, _ := d.ops.at(v); op.Valid() {
				colls = append(colls, callComm{k, cm})
			}
		}
		if latest == math.MinInt64 {
			continue
		}
		earliest = -earliest
		var w *waitOf
		if j := at[k]; j >= 0 {
			w = &waits[j]
		}
		th, ev := m.ThreadOf(v), m.EventOf(v)
		exit := cs.exitAt(k)
		own := w != nil && w.node == v
		switch m.Kind[v] {
		case trace.MPIRecv:
			if !own || !w.pat.p2p() {
				continue
			}
			// Completion: from the sender's exit (PropagateMax's).
			p.push(syncPt{call: k, th: uint16(th), with: withOf(w.cause, -1), pat: w.pat}, ev,
				w.wait, max(0, exit-earliest))
			if pp, pth, pev := a.pred(i, v); pp >= 0 {
				d.note(pp, pth, pev, noteSend, me, exit)
			}
		case trace.CollEnd, trace.CollComplete:
			op, cm, tail := d.ops.at(v)
			if !op.Valid() {
				continue
			}
			sp := syncPt{call: k, th: uint16(th), with: withOf(-1, cm)}
			wait := int64(0)
			if own {
				// The cause where the set was: the set is the call's
				// communicator's (withOf), the first collective's of
				// the call (no MPI call holds two).
				sp.pat, sp.with, wait = w.pat, withOf(w.cause, -1), w.wait
			}
			lb := min(latest, exit-tail) // the wait's end (Analyze's)
			if own && w.pat == WaitForProgress {
				// A wait for progress begins at the latest start or
				// the enter and ends the wait later: its completion is
				// the rest (progress.go).
				lb = max(cs.enterAt(k), lb) + wait
			}
			switch op.Class() {
			case trace.Prefix:
				// Not a synchronization point of Scalasca's delay
				// analysis (its SynchpointHandler has none for scans).
				continue
			case trace.AllToAll:
				// Every member synchronizes with every other. The call
				// that completes a nonblocking one may begin after the
				// latest start: then all of it is after the point.
				from := max(earliest, lb)
				if m.Kind[v] == trace.CollComplete {
					from = max(from, cs.enterAt(k))
				}
				p.push(sp, ev, wait, max(0, exit-from))
				// A nonblocking one's waiter waited, in the call that
				// completes it, for its cause's start (the node the
				// latest enter came from): the cause's point is there,
				// at its MPI_I* call, as a nonblocking broadcast's
				// root's, not at its own completion. Its time before
				// the start is what delayed the others. A wait for
				// progress's cause's point is its own completion's
				// (progress.go).
				if own && w.pat == WaitForProgress {
					a.markProgDelay(i, v, false)
				} else if own && m.Kind[v] == trace.CollComplete {
					if pp, pth, pev := a.pred(i, v); pp >= 0 && pp == w.cause {
						d.note(pp, pth, pev, noteRoot, me, exit)
					}
				}
			case trace.OneToAll:
				// A non-root that waited for the root.
				if !own {
					continue
				}
				sp.with = withOf(w.cause, -1)
				p.push(sp, ev, wait, max(0, exit-max(min(exit, earliest), lb)))
				if w.pat == WaitForProgress {
					d.progRooted(i, k, v)
				} else if pp, pth, pev := a.pred(i, v); pp >= 0 {
					d.note(pp, pth, pev, noteRoot, me, exit)
				}
			case trace.AllToOne:
				// The root, which waited for the last sender.
				if !own {
					continue
				}
				sp.with = withOf(w.cause, -1)
				p.push(sp, ev, wait, max(0, exit-max(min(exit, earliest), lb)))
				if w.pat == WaitForProgress {
					d.progRooted(i, k, v)
				} else if pp, pth, pev := a.pred(i, v); pp >= 0 {
					d.note(pp, pth, pev, noteLatest, me, exit)
				}
			}
		}
	}
	for j := range waits {
		w := &waits[j]
		if w.pat != LateReceiver {
			continue
		}
		// The send's completion; scout's completion of it is the send's
		// end less the receive request's end when that is later, else 0
		// (never positive: PatternMPI_LateReceiver's bws POST_SEND).
		k := w.call
		l, ok := lr.wait(k)
		if !ok {
			continue // Analyze charges a Late Receiver only of lr's
		}
		exit := cs.exitAt(k)
		compl := int64(0)
		if exit <= l.reqExit {
			compl = exit - l.reqExit
		}
		p.push(syncPt{call: k, th: uint16(l.sendTh), with: withOf(w.cause, -1), pat: LateReceiver}, l.sendEv, w.wait, compl)
		d.note(w.cause, l.recvTh|lrFlag, l.recvEv, noteRecv, me, exit)
	}
	if k := cs.initCall; k >= 0 {
		p.push(syncPt{call: k, th: uint16(cs.initTh), with: withOf(-1, -1)}, math.MaxInt64,
			0, max(0, cs.exitAt(k)-initMin))
	}
}

// resolve finds the event a notification or record names at local
// process i: kind's node (thread th, event ev) and the synchronization
// point's call, thread and event. coll reports a collective's (found by
// its call alone).
func (d *delays) resolve(i int, kind int, th int32, ev int64) (call, sth int32, sev int64, coll, ok bool) {
	a := d.a
	if th != -1 && th&lrFlag != 0 {
		th &^= lrFlag
	}
	v := a.nodeAt(i, th, ev)
	if v < 0 || a.callOf(v) < 0 {
		return 0, 0, 0, false, false
	}
	switch kind {
	case noteRecv:
		// The receive began where it was posted (its MPI_Irecv).
		if kc, rth, idx, ok := a.reqOf(v); ok {
			return kc, rth, idx, false, true
		}
		return a.callOf(v), th, ev, false, true
	case noteRoot, noteLatest, noteColl:
		return a.callOf(v), th, ev, true, true
	}
	return a.callOf(v), th, ev, false, true
}

// applyNotes adds the partners' synchronization points the notifications
// name, then orders every process's points by thread and event.
func (d *delays) applyNotes(recv [][]byte) error {
	type rootKey struct {
		proc int
		th   int32
		call int32
	}
	roots := map[rootKey]int{} // a broadcast root's point, by call
	// Each process's notifications, in the order they came (their
	// buffer and index there), so that the processes' points grow to
	// their size one process at a time: grown all at once, every
	// process's own points were held twice at once (40 MB on the
	// 64-process pure-MPI trace). k is the notification's offset in
	// its buffer.
	type noteAt struct{ q, k int32 }
	start := make([]int, len(d.procs)+1)
	for q, buf := range recv {
		if len(buf) > math.MaxInt32 {
			return fmt.Errorf("rank %d: waitstate: %d bytes of synchronization points from rank %d", d.c.Rank(), len(buf), q)
		}
		for k := 0; k < len(buf); {
			// The process and the length here; the fields are read (and
			// checked) once, as the points are made.
			proc, m := binary.Uvarint(buf[k:])
			n := noteLen(buf[k:])
			if m <= 0 || n == 0 || proc > math.MaxUint32 {
				return fmt.Errorf("rank %d: waitstate: the synchronization points from rank %d are corrupt at byte %d of %d", d.c.Rank(), q, k, len(buf))
			}
			i, ok := d.local.get(int(int32(proc)))
			if !ok {
				return fmt.Errorf("rank %d: waitstate: rank %d sent a synchronization point of process %d, not held here", d.c.Rank(), q, int32(proc))
			}
			start[i+1]++
			k += n
		}
	}
	for i := range d.procs {
		start[i+1] += start[i]
	}
	at := make([]noteAt, start[len(d.procs)])
	next := slices.Clone(start)
	for q, buf := range recv {
		for k := 0; k < len(buf); {
			proc, _ := binary.Uvarint(buf[k:])
			i, _ := d.local.get(int(int32(proc)))
			at[next[i]] = noteAt{int32(q), int32(k)}
			next[i]++
			k += noteLen(buf[k:])
		}
	}
	for i := range d.procs {
		p := &d.procs[i]
		own := p.nOwn // the process's own points come first
		// One array for every process's points, by turns (a fresh one
		// each was 9 % of the phase's allocations on the pure MPI
		// program, each a collection's share).
		buf := d.ptsBuf
		if need := own + start[i+1] - start[i]; cap(buf) < need {
			buf = make([]syncPt, 0, need)
		}
		p.syncs = readPts(p.own, buf[:0])
		p.own = nil
		for _, x := range at[start[i]:start[i+1]] {
			nt, n := readNote(recv[x.q][x.k:])
			if n == 0 {
				return fmt.Errorf("rank %d: waitstate: the synchronization points from rank %d are corrupt at byte %d", d.c.Rank(), x.q, x.k)
			}
			th, ev, kind, from, t := nt.th, nt.ev, nt.kind, nt.from, nt.t+d.tBase
			k, sth, sev, _, ok := d.resolve(i, kind, th, ev)
			if !ok {
				continue
			}
			cs := &d.a.procs[i]
			exit := cs.exitAt(k)
			switch kind {
			case noteSend, noteRecv:
				p.push(syncPt{call: k, th: uint16(sth), with: withOf(from, -1)}, sev, 0, max(0, exit-t))
			case noteLatest:
				lb := min(cs.enterAt(k), exit)
				p.push(syncPt{call: k, th: uint16(sth), with: withOf(from, -1)}, sev,
					0, max(0, exit-max(min(exit, t), lb)))
			case noteRoot:
				// One point for all the waiters, whose earliest end
				// bounds its completion.
				rk := rootKey{i, sth, k}
				lb := min(cs.enterAt(k), exit)
				j, ok := roots[rk]
				if !ok {
					j = len(p.syncs)
					roots[rk] = j
					p.push(syncPt{call: k, th: uint16(sth), with: withOf(-1, int32(-2-len(p.lists)))}, sev,
						0, max(0, exit-max(min(exit, t), lb)))
					p.lists = append(p.lists, nil)
				}
				// From the earliest waiter's end (scout's earliest_end
				// over the waiting members).
				s := &p.syncs[j]
				l := -2 - s.set()
				p.lists[l] = append(p.lists[l], from)
				p.setCompl(j, max(p.complOf(s), max(0, exit-max(min(exit, t), lb))))
			}
		}
		d.sortSyncs(p.syncs) // stably: the own first among equals
		// One point per event: the first (a process's own wait before a
		// partner's notification of the same event, which a consistent
		// trace does not have).
		p.syncs = slices.CompactFunc(p.syncs, func(x, y syncPt) bool { return x.sameEvent(&y) })
		for _, l := range p.lists {
			slices.Sort(l)
		}
		// Held as columns from here, a process at a time.
		p.pts = makeSyncCols(p.syncs)
		d.ptsBuf, p.syncs = p.syncs[:0], nil
		p.finBound = int32(p.pts.len())
		p.hasSlot = make([]uint64, (p.pts.len()+63)/64)
		// Which points are charged, read at every point by the task
		// counts, the two rounds of records and the replay: a bit a point.
		p.charged = make([]uint64, (p.pts.len()+63)/64)
		for j := range int32(p.pts.len()) {
			if p.pts.causeAt(j) >= 0 && p.waitAt(j) > 0 {
				p.charged[j/64] |= 1 << (j % 64)
			}
		}
	}
	d.scratch, d.runs, d.ptsBuf = nil, nil, nil
	return nil
}

// sortSyncs sorts a process's points by thread, call and event, stably:
// its own come first (made in node order, but for its Late
// Receivers' and MPI_Init's), the rest the partners' notifications (in
// their senders' order), so the points are a few sorted runs, merged
// pairwise: 0.05 s on the 64-process pure-MPI trace, where a stable sort
// of each part (insertion sorts and in-place merges) took 0.14 s.
func (d *delays) sortSyncs(ss []syncPt) {
	// Thread and call in one word (the call's sign bit flipped), then
	// the event.
	less := func(x, y *syncPt) bool {
		kx := uint64(x.th)<<32 | uint64(uint32(x.call)^1<<31)
		ky := uint64(y.th)<<32 | uint64(uint32(y.call)^1<<31)
		if kx != ky {
			return kx < ky
		}
		return x.event() < y.event()
	}
	runs := d.runs[:0]
	runs = append(runs, 0)
	for k := 1; k < len(ss); k++ {
		if less(&ss[k], &ss[k-1]) {
			runs = append(runs, k)
		}
	}
	runs = append(runs, len(ss))
	buf := d.scratch[:0]
	// Runs r and r+1 merged into one, for every even r, until one is left.
	for len(runs) > 2 {
		m, n := len(runs)-1, 0
		for r := 0; r < m; r += 2 {
			lo := runs[r]
			if r+1 < m {
				mid, hi := runs[r+1], runs[r+2]
				buf = mergeRuns(ss[lo:hi], mid-lo, less, buf)
			}
			runs[n] = lo
			n++
		}
		runs[n] = len(ss)
		runs = runs[:n+1]
	}
	d.runs, d.scratch = runs[:0], buf[:0]
}

// mergeRuns merges the sorted runs ss[:mid] and ss[mid:] in place,
// stably, the shorter one set aside in buf (returned for reuse): a
// process's own points are one long run but for a few points at its end.
func mergeRuns(ss []syncPt, mid int, less func(x, y *syncPt) bool, buf []syncPt) []syncPt {
	if mid <= len(ss)-mid {
		// The left aside, merged from the front; the left first among
		// equals.
		buf = append(buf[:0], ss[:mid]...)
		i, j, k := 0, mid, 0
		for i < len(buf) && j < len(ss) {
			if less(&ss[j], &buf[i]) {
				ss[k] = ss[j]
				j++
			} else {
				ss[k] = buf[i]
				i++
			}
			k++
		}
		copy(ss[k:], buf[i:])
		return buf
	}
	// The right aside, merged from the back; the right last among equals.
	buf = append(buf[:0], ss[mid:]...)
	i, j, k := mid-1, len(buf)-1, len(ss)-1
	for j >= 0 && i >= 0 {
		if less(&buf[j], &ss[i]) {
			ss[k] = ss[i]
			i--
		} else {
			ss[k] = buf[j]
			j--
		}
		k--
	}
	copy(ss[:k+1], buf[:j+1])
	return buf
}

// withAt reports whether synchronization point j (sorted) of process i
// synchronized with world rank r.
func (d *delays) withAt(i int, j int32, r int32) bool {
	w := d.withOfAt(i, j)
	switch set := setOf(w); {
	case w >= 0:
		return w == r
	case w == -1:
		return true
	case set >= 0:
		cm, ok := d.a.tp[i].Tables.CommByIndex(int64(set))
		return ok && cm.Contains(int(r))
	default:
		_, ok := slices.BinarySearch(d.procs[i].lists[-2-set], r)
		return ok
	}
}

// prevSync returns the synchronization point of process i before j on
// its thread that synchronized with world rank r (scout's
// findPreviousMpiSynchpoint), −1 for none, and the thread's first point.
func (d *delays) prevSync(i int, j int32, r int32) (prev, first int32) {
	ss := &d.procs[i].pts
	th := ss.thAt(j)
	for q := j - 1; q >= 0 && ss.thAt(q) == th; q-- {
		if d.withAt(i, q, r) {
			return q, q
		}
		first = q
	}
	if j == 0 || ss.thAt(j-1) != th {
		first = j
	}
	return -1, first
}

// slotOf returns process i's slot of call path key k.
func (p *delayProc) slotOf(k uint64) int32 {
	if j, ok := p.keySlot[k]; ok {
		return j
	}
	j := int32(len(p.keys))
	p.keys = append(p.keys, k)
	p.keySlot[k] = j
	return j
}

// siteSlot returns the slot of process i's call site st: its key is a
// hash of the function, call site and region names.
func (d *delays) siteSlot(i int, st int32) int32 {
	p := &d.procs[i]
	if p.siteSlot == nil {
		cs := &d.a.procs[i]
		p.siteSlot = make([]int32, len(cs.sites))
		t := &d.a.tp[i].Tables
		for s, x := range cs.sites {
			h := fnv.New64a()
			h.Write([]byte{'m', 0})
			h.Write([]byte(t.String(x.fn)))
			h.Write([]byte{0})
			h.Write([]byte(t.SiteName(x.loc)))
			h.Write([]byte{0})
			if x.region >= 0 {
				h.Write([]byte(t.String(x.region)))
			}
			p.siteSlot[s] = p.slotOf(h.Sum64())
		}
	}
	return p.siteSlot[st]
}

// codeSlot returns the slot of process i's code (a label): its key is a
// hash of the code's name.
func (d *delays) codeSlot(i int, code int64) int32 {
	p := &d.procs[i]
	if j, ok := p.codeSlot[code]; ok {
		return j
	}
	h := fnv.New64a()
	h.Write([]byte{'c', 0})
	h.Write([]byte(d.a.labelName(i, code)))
	j := p.slotOf(h.Sum64())
	p.codeSlot[code] = j
	return j
}

// whereLabelSlot returns the slot of the code a call of process i's
// where w follows (its label): no map lookup a call.
func (d *delays) whereLabelSlot(i int, w int64) int32 {
	p, cs := &d.procs[i], &d.a.procs[i]
	if p.whereSlot == nil {
		p.whereSlot = make([]int32, len(cs.wheres))
		for w := range p.whereSlot {
			p.whereSlot[w] = -1
		}
	}
	if p.whereSlot[w] < 0 {
		p.whereSlot[w] = d.codeSlot(i, cs.wheres[w].label)
	}
	return p.whereSlot[w]
}

// tmap is a time map: ns per call path slot of one process, the slots
// touched since the last reset, and (with refs) the call path that last
// added to each, as a map by key would learn it (call paths of one name
// share a key, so a slot).
type tmap struct {
	val     []int64
	ref     []cpRef
	flag    []uint8 // tmTouched, tmRef
	touched []int32
}

const (
	tmTouched = 1 << iota
	tmRef
)

func (t *tmap) reset() {
	for _, s := range t.touched {
		t.val[s], t.flag[s] = 0, 0
	}
	t.touched = t.touched[:0]
}

func (t *tmap) touch(s int32) {
	for int(s) >= len(t.val) {
		t.val = append(t.val, 0)
		t.ref = append(t.ref, cpRef{})
		t.flag = append(t.flag, 0)
	}
	if t.flag[s]&tmTouched == 0 {
		t.flag[s] |= tmTouched
		t.touched = append(t.touched, s)
	}
}

// add adds ns to slot s, call path cp (learnt with refs).
func (t *tmap) add(s int32, cp cpRef, ns int64, refs bool) {
	if ns == 0 {
		return
	}
	t.touch(s)
	t.val[s] += ns
	if refs {
		t.ref[s] = cp
		t.flag[s] |= tmRef
	}
}

// refOf returns the call path slot s learnt, the zero cpRef for none.
func (t *tmap) refOf(s int32) cpRef {
	if t.flag[s]&tmRef != 0 {
		return t.ref[s]
	}
	return cpRef{}
}

// tmEntry is a time map's entry on the wire: key and ns.
type tmEntry struct {
	k  uint64
	ns int64
}

// timeMap builds in d.tm the time map of process i's interval from
// synchronization point a (−1: the thread's first call) to b: the time per
// call path from a's call's enter to b's, less the waits of the points
// between them, less a's call but for its completion (scout's
// getRuntimes and PruneDelayTimemap). It returns the waiting between. The
// map's entries are its touched slots of positive value; with refs it
// learns each slot's call path.
func (d *delays) timeMap(i int, a, b int32, refs bool) (waits int64) {
	tm := &d.tm
	tm.reset()
	p := &d.procs[i]
	cs, ss := &d.a.procs[i], &p.pts
	kb, ka := ss.callAt(b), int32(-1)
	if a >= 0 {
		ka = ss.callAt(a)
	}
	// Each call's where and enter are read once: as the call's, then as
	// the previous one's (pk's where, enter and duration are k's next).
	wk, ek := cs.where.At(int(kb)), cs.enterAt(kb)
	for k := kb; k != ka; {
		pk := cs.prevAt(k)
		if pk < 0 {
			break // the thread's first call: the time before it is not in
		}
		wp, ep, dp := cs.where.At(int(pk)), cs.enterAt(pk), cs.durAt(pk)
		// A process without user regions has no split (a pure-MPI code):
		// no call to eachSplit a step.
		if len(cs.splitOff) == 0 || !cs.eachSplit(k, func(code, ns int64) { tm.add(d.codeSlot(i, code), cpRef{site: -1, code: code}, ns, refs) }) {
			tm.add(d.whereLabelSlot(i, wk), cpRef{site: -1, code: cs.wheres[wk].label}, ek-(ep+dp), refs)
		}
		st := cs.wheres[wp].site
		tm.add(d.siteSlot(i, st), cpRef{site: st}, dp, refs)
		k, wk, ek = pk, wp, ep
	}
	for j := a + 1; j < b; j++ {
		if w := p.waitAt(j); w > 0 {
			s := d.siteSlot(i, cs.siteAt(ss.callAt(j)))
			tm.touch(s)
			tm.val[s] -= w
			waits += w
		}
	}
	// No entry of zero or less (a value of 0 is no entry).
	for _, s := range tm.touched {
		tm.val[s] = max(0, tm.val[s])
	}
	if a >= 0 {
		s := d.siteSlot(i, cs.siteAt(ka))
		tm.touch(s)
		tm.val[s] = max(0, tm.val[s]-(cs.durAt(ka)-p.complAt(a)))
	}
	return waits
}

// A wait's head (the first pass of the records): the cause's process,
// thread and event (a node: see resolve), the kind of node, the waiter's
// world rank and synchronization point, the pattern.
const headSize = 4 + 4 + 8 + 4 + 4 + 4 + 4

// A wait's record (the second pass): the cause's process, the waiter's
// world rank and synchronization point (the task's key), the wait, the
// number of time map entries; then the entries (key, ns).
const recHead = 4 + 4 + 4 + 8 + 4

// recRound bounds the bytes of wait heads or records a rank sends in one
// round (as lateReceivers' rounds).
const recRound = 1 << 20

// rounds exchanges what next makes, a round at a time from a cursor,
// and applies what every round brings, until no rank has more to send.
// The buffers may be the same each round (roundBufs): those of the last
// are done with once every rank has applied them (agreed first).
func (d *delays) rounds(next func(cursor *[2]int) ([][]byte, bool), apply func([][]byte) error) error {
	for cursor := [2]int{}; ; {
		bufs, more := next(&cursor)
		recv, err := d.c.Alltoallv(bufs)
		if err != nil {
			return err
		}
		if err := comm.Agree(d.c, apply(recv)); err != nil {
			return err
		}
		m := int64(0)
		if more {
			m = 1
		}
		left, err := d.c.AllreduceInt64(comm.Max, []int64{m})
		if err != nil {
			return err
		}
		if left[0] == 0 {
			return nil
		}
	}
}

// roundBufs returns the rank's round buffers, emptied.
func (d *delays) roundBufs() [][]byte {
	if d.recBufs == nil {
		d.recBufs = make([][]byte, d.c.Size())
	}
	for q := range d.recBufs {
		d.recBufs[q] = d.recBufs[q][:0]
	}
	return d.recBufs
}

// eachCharged calls fn with every wait charged to a cause (point j of
// process i) from cursor on, and adds the bytes fn says it appended, until
// they pass recRound: more reports whether waits are left for another
// round. enter is called as the cursor reaches process i.
func (d *delays) eachCharged(cursor *[2]int, enter func(i int), fn func(i int, j int32) int) (more bool) {
	size := 0
	for ; cursor[0] < len(d.procs); cursor[0], cursor[1] = cursor[0]+1, 0 {
		i := cursor[0]
		enter(i)
		p := &d.procs[i]
		for ; cursor[1] < p.pts.len(); cursor[1]++ {
			if size >= recRound {
				return true
			}
			if j := int32(cursor[1]); p.chargedAt(j) {
				size += fn(i, j)
			}
		}
	}
	return false
}

// nextCharged returns process i's first point from j on that is charged
// to a cause, the number of points for none.
func (p *delayProc) nextCharged(j int32) int32 {
	n := int32(p.pts.len())
	for j < n {
		w := p.charged[j/64] >> (j % 64)
		if w != 0 {
			return min(n, j+int32(bits.TrailingZeros64(w)))
		}
		j = (j/64 + 1) * 64
	}
	return n
}

// recCursor is where the records are: each process's next charged point
// and its call's enter time (math.MaxInt64: none left), and the width
// of the windows of time they are made in.
type recCursor struct {
	at   []int32
	t    []int64
	span int64
}

// eachChargedByTime calls fn as eachCharged does, with the waits of all
// the processes in windows of time (each process's in order): the waits
// at a collective, of every member but its cause, then reach the cause
// together, which makes its time map of their interval once (causeMaps).
func (d *delays) eachChargedByTime(fn func(i int, j int32) int) (more bool) {
	rc := &d.rec
	timeOf := func(i int, j int32) int64 {
		p := &d.procs[i]
		if int(j) >= p.pts.len() {
			return math.MaxInt64
		}
		return d.a.procs[i].enterAt(p.pts.callAt(j))
	}
	if rc.at == nil {
		rc.at, rc.t, rc.span = make([]int32, len(d.procs)), make([]int64, len(d.procs)), 1
		for i := range d.procs {
			rc.at[i] = d.procs[i].nextCharged(0)
			rc.t[i] = timeOf(i, rc.at[i])
		}
	}
	size := 0
	for {
		lo := int64(math.MaxInt64)
		for _, t := range rc.t {
			lo = min(lo, t)
		}
		if lo == math.MaxInt64 {
			return false
		}
		hi := lo + rc.span
		if hi < lo {
			hi = math.MaxInt64 - 1
		}
		n := 0
		for i := range d.procs {
			for rc.t[i] <= hi {
				if size >= recRound {
					return true
				}
				size += fn(i, rc.at[i])
				n++
				rc.at[i] = d.procs[i].nextCharged(rc.at[i] + 1)
				rc.t[i] = timeOf(i, rc.at[i])
			}
		}
		// About 4 to 32 waits a process a window.
		switch {
		case n < 4*len(d.procs) && rc.span < math.MaxInt64/2:
			rc.span *= 2
		case n > 32*len(d.procs) && rc.span > 1:
			rc.span /= 2
		}
	}
}

// heads makes the next round of wait heads of this rank's processes
// (from cursor on, about recRound bytes): every wait charged to a cause,
// naming the node of the cause's it waited for, for the rank of its
// cause. more reports whether waits are left for another round.
func (d *delays) heads(lr []lrCalls, cursor *[2]int) (bufs [][]byte, more bool) {
	a, m := d.a, d.a.m
	le := binary.LittleEndian
	bufs = d.roundBufs()
	more = d.eachCharged(cursor, func(i int) {
		if i > 0 {
			lr[i-1] = lrCalls{} // the process's heads are made
			d.parkRows(i - 1)
		}
		d.unparkPreds(i)
	}, func(i int, j int32) int {
		// The node of the cause's the wait names (none found: a task all
		// propagated).
		pts := &d.procs[i].pts
		pat, cause := pts.pat[j], pts.causeAt(j)
		kind, th, ev := noteSend, int32(-1), int64(-1)
		switch {
		case pat == LateReceiver:
			l := lr[i].recv(pts.callAt(j))
			kind, th, ev = noteRecv, l.recvTh|lrFlag, l.recvEv
		default:
			// The node waited at: the point's own (a Late Sender's
			// receive, a collective's end).
			v := a.nodeAt(i, int32(pts.thAt(j)), pts.eventAt(j))
			if v < 0 {
				break
			}
			// Rows that could not be read back are not looked up: the
			// round's end stops every rank. A wait for progress names
			// the cause's completion (progressEdges).
			if pat == WaitForProgress {
				if c, ok := d.progCause[progKey{int32(i), int32(pts.thAt(j)), pts.eventAt(j)}]; ok {
					th, ev = c.th, c.ev
				}
			} else if pp, pth, pev := d.predOf(i, v); pp == cause {
				th, ev = pth, pev
			}
			if isCollEnd(m.Kind[v]) {
				kind = noteColl
			}
		}
		to := d.owners.Owner(int(cause))
		b := le.AppendUint32(bufs[to], uint32(cause))
		b = le.AppendUint32(b, uint32(th))
		b = le.AppendUint64(b, uint64(ev))
		b = le.AppendUint32(b, uint32(kind))
		b = le.AppendUint32(b, uint32(a.tp[i].Header.Rank))
		b = le.AppendUint32(b, uint32(j))
		bufs[to] = le.AppendUint32(b, uint32(pat))
		return headSize
	})
	return bufs, more
}

// unparkPreds brings back process i's rows' predecessors for its wait
// heads (Analyze parked the rows); the first failed read is kept
// (rowsErr), agreed at the round's end.
func (d *delays) unparkPreds(i int) {
	if a := d.a; d.rowsErr == nil && i < len(a.edges) {
		if err := a.edges[i].UnparkPreds(); err != nil {
			d.rowsErr = fmt.Errorf("rank %d: wait states: %w", d.c.Rank(), err)
		}
	}
}

// predOf is Analysis.pred, none after a failed read of the rows.
func (d *delays) predOf(i int, v int32) (proc, thread int32, event int64) {
	if d.rowsErr != nil {
		return -1, 0, 0
	}
	return d.a.pred(i, v)
}

// parkRows parks process i's rows again once its heads are made (on an
// error they stay in memory).
func (d *delays) parkRows(i int) {
	if a := d.a; i < len(a.edges) {
		a.parkRows(a.edges[i : i+1])
	}
}

// records makes the next round of wait records of this rank's processes
// (from d.rec on, about recRound bytes; cursor is not used): every wait
// charged to a cause with the waiter's time map of its interval, for the
// rank of its cause. more reports whether waits are left for another
// round.
func (d *delays) records(_ *[2]int) (bufs [][]byte, more bool) {
	le := binary.LittleEndian
	bufs = d.roundBufs()
	more = d.eachChargedByTime(func(i int, j int32) int {
		p := &d.procs[i]
		cause := p.pts.causeAt(j)
		prev, _ := d.prevSync(i, j, cause)
		d.timeMap(i, prev, j, false)
		ents := d.ents[:0]
		for _, x := range d.tm.touched {
			if v := d.tm.val[x]; v > 0 {
				ents = append(ents, tmEntry{p.keys[x], v})
			}
		}
		slices.SortFunc(ents, func(x, y tmEntry) int { return cmp.Compare(x.k, y.k) })
		d.ents = ents
		to := d.owners.Owner(int(cause))
		b := le.AppendUint32(bufs[to], uint32(cause))
		b = le.AppendUint32(b, uint32(d.a.tp[i].Header.Rank))
		b = le.AppendUint32(b, uint32(j))
		b = le.AppendUint64(b, uint64(p.waitAt(j)))
		b = le.AppendUint32(b, uint32(len(ents)))
		for _, e := range ents {
			b = le.AppendUint64(b, e.k)
			b = le.AppendUint64(b, uint64(e.ns))
		}
		n := len(b) - len(bufs[to])
		bufs[to] = b
		return n
	})
	return bufs, more
}

// taskCounts tells every rank how many waits its processes caused, so
// that their tasks are made at their size: per cause, its world rank and
// count (8 bytes). Each process's tasks are made room for by the rank
// their heads come from (taskAt), so that they are in order without a
// sort where the ranks hold ascending runs of waiters (sortTasks).
func (d *delays) taskCounts() error {
	le := binary.LittleEndian
	n := map[int32]uint32{}
	for i := range d.procs {
		p := &d.procs[i]
		for j := range int32(p.pts.len()) {
			if p.chargedAt(j) {
				n[p.pts.causeAt(j)]++
			}
		}
	}
	bufs := make([][]byte, d.c.Size())
	causes := make([]int32, 0, len(n))
	for q := range n {
		causes = append(causes, q)
	}
	slices.Sort(causes)
	for _, q := range causes {
		to := d.owners.Owner(int(q))
		bufs[to] = le.AppendUint32(le.AppendUint32(bufs[to], uint32(q)), n[q])
	}
	recv, err := d.c.Alltoallv(bufs)
	if err != nil {
		return err
	}
	size := d.c.Size()
	byRank := make([]int, len(d.procs)*size) // process i's from rank q: i·size + q
	var lerr error
	for q, buf := range recv {
		if len(buf)%8 != 0 {
			lerr = fmt.Errorf("rank %d: waitstate: %d bytes of wait counts from rank %d", d.c.Rank(), len(buf), q)
			break
		}
		for ; len(buf) > 0; buf = buf[8:] {
			if i, ok := d.local.get(int(le.Uint32(buf))); ok {
				byRank[i*size+q] += int(le.Uint32(buf[4:]))
			}
		}
	}
	d.taskAt, d.taskEnd = make([]int32, len(byRank)), make([]int32, len(byRank))
	for i := range d.procs {
		at := 0
		for q := range size {
			k := i*size + q
			d.taskAt[k] = int32(min(at, math.MaxInt32))
			at += byRank[k]
			d.taskEnd[k] = int32(min(at, math.MaxInt32))
		}
		if at > math.MaxInt32 && lerr == nil {
			lerr = fmt.Errorf("rank %d: waitstate: %d waits caused by process %d", d.c.Rank(), at, d.a.tp[i].Header.Rank)
		}
		d.procs[i].tasks = make([]task, min(at, math.MaxInt32))
	}
	return comm.Agree(d.c, lerr)
}

// tasksFilled checks that every rank sent the heads of as many waits as
// it counted (taskAt is where the next would go) and lets go of taskAt.
func (d *delays) tasksFilled() error {
	for k := range d.taskAt {
		if d.taskAt[k] != d.taskEnd[k] {
			size := d.c.Size()
			return fmt.Errorf("rank %d: waitstate: rank %d sent fewer waits of process %d than it counted", d.c.Rank(), k%size, d.a.tp[k/size].Header.Rank)
		}
	}
	d.taskAt, d.taskEnd = nil, nil
	return nil
}

// splitter splits an amount over weights in proportion, rounding each
// running total to the nanosecond (so the parts add up to the amount
// exactly and none is negative): part(w) for weights adding up to total.
type splitter struct {
	amount, total, cum, done int64
}

func (s *splitter) part(w int64) int64 {
	s.cum += w
	// amount·cum/total, rounded, in 128 bits: cum ≤ total, so the
	// quotient fits.
	hi, lo := bits.Mul64(uint64(s.amount), uint64(s.cum))
	q, r := bits.Div64(hi, lo, uint64(s.total))
	if 2*r >= uint64(s.total) {
		q++
	}
	p := int64(q) - s.done
	s.done = int64(q)
	return p
}

// row returns process i's row for call path cp before its call site site,
// pattern pat (valid until the next row is made).
func (d *delays) row(i int, cp cpRef, site int32, pat Pattern) *Delay {
	k := rowKey{cp, site, pat}
	// A task's rows are its call paths' before one site and pattern,
	// the same as those of the tasks before it nearly always: a few
	// rows looked up again and again (the map's hashing of the key was
	// a fifth of making the tasks of the 64-process pure-MPI trace).
	h := &d.rowHits[rowHash(i, &k)]
	if h.k == k && h.i == int32(i) && h.j > 0 {
		return &d.out[h.j-1]
	}
	p := &d.procs[i]
	j, ok := p.rows[k]
	if !ok {
		j = int32(len(d.out))
		p.rows[k] = j
		name := d.a.labelName(i, cp.code)
		if cp.site >= 0 {
			name = d.a.siteName(i, cp.site)
		}
		d.out = append(d.out, Delay{Rank: d.a.tp[i].Header.Rank, Label: name, Site: d.a.siteName(i, site), Pattern: pat})
	}
	*h = rowHit{k: k, i: int32(i), j: j + 1}
	return &d.out[j]
}

// rowHit is a row found (j − 1 in d.out, 0: none) by its process i and
// key: the cache in front of the processes' maps of rows.
type rowHit struct {
	k    rowKey
	i, j int32
}

const rowHitBits = 8

// rowHash returns the slot of d.rowHits for process i's row key k.
func rowHash(i int, k *rowKey) uint32 {
	x := uint64(i)*0x9e3779b97f4a7c15 ^ uint64(uint32(k.cp.site))*0xc2b2ae3d27d4eb4f ^
		uint64(k.cp.code)*0x165667b19e3779f9 ^ uint64(uint32(k.site))*0x27d4eb2f165667c5 ^ uint64(k.pat)
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	return uint32(x >> (64 - rowHitBits))
}

// taskHeads makes a task of every wait head of a round: where its wait
// is charged (the cause's point and the first point of its interval).
func (d *delays) taskHeads(recv [][]byte) error {
	le := binary.LittleEndian
	for q, buf := range recv {
		if len(buf)%headSize != 0 {
			return fmt.Errorf("rank %d: waitstate: %d bytes of waits from rank %d", d.c.Rank(), len(buf), q)
		}
		for ; len(buf) > 0; buf = buf[headSize:] {
			proc, th, ev := int(le.Uint32(buf)), int32(le.Uint32(buf[4:])), int64(le.Uint64(buf[8:]))
			kind, waiter, wsync := int(le.Uint32(buf[16:])), int32(le.Uint32(buf[20:])), int32(le.Uint32(buf[24:]))
			pat := Pattern(le.Uint32(buf[28:]))
			if pat <= None || pat >= delayPatterns || waiter < 0 || waiter >= trace.MaxRanks {
				return fmt.Errorf("rank %d: waitstate: a wait from rank %d is corrupt", d.c.Rank(), q)
			}
			i, ok := d.localOf(proc)
			if !ok {
				return fmt.Errorf("rank %d: waitstate: rank %d sent a wait caused by process %d, not held here", d.c.Rank(), q, proc)
			}
			k := i*d.c.Size() + q
			if d.taskAt[k] >= d.taskEnd[k] {
				return fmt.Errorf("rank %d: waitstate: rank %d sent more waits of process %d than it counted", d.c.Rank(), q, proc)
			}
			d.procs[i].tasks[d.taskAt[k]] = d.taskHead(i, kind, th, ev, waiter, wsync, pat)
			d.taskAt[k]++
		}
	}
	return nil
}

// taskHead returns the task of a wait of world rank waiter at its point
// wsync, charged at local process i to the node kind, th, ev names: the
// point it waited for (−1: none found).
func (d *delays) taskHead(i int, kind int, th int32, ev int64, waiter, wsync int32, pat Pattern) task {
	t := makeTask(-1, waiter, wsync, pat)
	h := d.headOf(i, kind, th, ev)
	t.pos = h.pos
	if h.coll {
		t.set(taskColl)
	}
	return t
}

// headHit is the point a wait head's node resolved to (pos −1: none) by
// its local process i, kind, thread and event: the cache in front of
// resolve and findSync.
type headHit struct {
	ev      int64
	i, th   int32
	pos     int32
	kind    uint8
	coll    bool
	present bool
}

// headHitBits sizes the cache of the heads' points: a round's heads come
// waiter by waiter (eachCharged), each waiter's a few thousand, so a
// collective's point named by the waiters of a round recurs that far
// apart.
const headHitBits = 14

// headOf returns the point of local process i that the wait head of
// kind on thread th, event ev names (resolve, then findSync), made once
// for the waits that name the same node: a collective's cause is named
// by every member that waited for it (63 of 64 on the 64-process
// pure-MPI trace), and each search was a gallop over the cause's nodes
// and points from another waiter's last.
func (d *delays) headOf(i int, kind int, th int32, ev int64) headHit {
	x := (uint64(uint32(i))<<40 ^ uint64(uint32(th))<<44 ^ uint64(ev) ^ uint64(kind)<<60) * 0x9e3779b97f4a7c15
	h := &d.headHits[x>>(64-headHitBits)]
	if h.present && h.ev == ev && h.i == int32(i) && h.th == th && h.kind == uint8(kind) {
		return *h
	}
	*h = headHit{ev: ev, i: int32(i), th: th, pos: -1, kind: uint8(kind), present: true}
	if call, sth, sev, coll, ok := d.resolve(i, kind, th, ev); ok {
		h.pos, h.coll = d.findSync(i, call, sth, sev, coll), coll
	}
	return *h
}

// taskLo returns the first synchronization point of process i whose
// waits receive task t's costs, prev and first being prevSync's of its
// point and waiter.
func (d *delays) taskLo(i int, t *task, prev, first int32) int32 {
	lo := first
	if prev >= 0 {
		lo = prev + 1
	}
	if t.has(taskColl) {
		lo = d.groupLo(i, t.pos, d.procs[i].pts.callAt(t.pos), prev, lo)
	}
	return lo
}

// sortTasks puts every process's tasks in the order of their waits
// (waiter, point), where the records and the replay find them by
// bisection: they come so from each rank and are placed by rank
// (taskCounts), so they are but where the ranks' waiters interleave (a
// sort of the 1.3 M tasks the processes of rank 1 of 2 caused on the
// 64-process pure-MPI trace took 0.07 s).
func (d *delays) sortTasks() {
	byWaiter := func(x, y task) int {
		return cmp.Or(cmp.Compare(x.waiter(), y.waiter()), cmp.Compare(x.wsync, y.wsync))
	}
	for i := range d.procs {
		if p := &d.procs[i]; !slices.IsSortedFunc(p.tasks, byWaiter) {
			slices.SortFunc(p.tasks, byWaiter)
		}
	}
}

// taskOf returns the index of the task of the wait (waiter, wsync). A
// waiter's records reach its cause in the order of its points (the
// rounds) or about the reverse (the replay's deliveries), so the search
// gallops from the last task found of the waiter (*hint, updated; none
// when past the tasks), then bisects: a bisection over all of a
// process's tasks (1.9 M on the 64-process pure-MPI trace, most of them
// the waits at collectives the process came late to) missed the cache at
// every step.
func (p *delayProc) taskOf(waiter, wsync int32, hint *int) (int32, bool) {
	key := waitKey(waiter, wsync)
	ts := p.tasks
	lo := tasksBelow(ts, *hint, key)
	if lo < len(ts) {
		*hint = lo
	}
	return int32(lo), lo < len(ts) && waitKey(ts[lo].waiter(), ts[lo].wsync) == key
}

// tasksBelow returns the first j of ts whose waitKey is not below key
// (len(ts) for none; the tasks are sorted by it): by galloping from hint,
// forward or back, then bisecting, for searches whose answer is near the
// last one's. The test is a closure called here, which the compiler
// inlines: passed to a shared search it was a call a step, about half of
// the search's instructions on the 64-process pure-MPI trace.
// syncCols.below is the same search over the points.
func tasksBelow(ts []task, hint int, key uint64) int {
	n := len(ts)
	below := func(j int) bool { return waitKey(ts[j].waiter(), ts[j].wsync) < key }
	lo, hi := 0, n
	if hint >= 0 && hint < n {
		if below(hint) {
			lo = hint + 1
			for step := 1; hint+step < n; step <<= 1 {
				j := hint + step
				if !below(j) {
					hi = j
					break
				}
				lo = j + 1
			}
		} else {
			hi = hint
			for step := 1; hint-step >= 0; step <<= 1 {
				j := hint - step
				if below(j) {
					lo = j + 1
					break
				}
				hi = j
			}
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if below(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// below returns the first point j of c at or after (thread, call) key
// (thread<<32 | call; c.len() for none), galloping from hint as
// tasksBelow does.
func (c *syncCols) below(hint int, key uint64) int {
	n := c.len()
	below := func(j int) bool { return uint64(c.thAt(int32(j)))<<32|uint64(uint32(c.callAt(int32(j)))) < key }
	lo, hi := 0, n
	if hint >= 0 && hint < n {
		if below(hint) {
			lo = hint + 1
			for step := 1; hint+step < n; step <<= 1 {
				j := hint + step
				if !below(j) {
					hi = j
					break
				}
				lo = j + 1
			}
		} else {
			hi = hint
			for step := 1; hint-step >= 0; step <<= 1 {
				j := hint - step
				if below(j) {
					lo = j + 1
					break
				}
				hi = j
			}
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if below(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// tasks completes the task of every wait record of a round: its delay
// (the cause's excess over the waiter per call path), its short-term
// cost and the costs it passes to the waits of its interval.
func (d *delays) tasks(recv [][]byte) error {
	le := binary.LittleEndian
	tw := d.ents[:0]
	defer func() { d.ents = tw[:0] }()
	for q, buf := range recv {
		for len(buf) > 0 {
			if len(buf) < recHead {
				return fmt.Errorf("rank %d: waitstate: %d bytes of waits from rank %d", d.c.Rank(), len(buf), q)
			}
			proc, waiter, wsync := int(le.Uint32(buf)), int32(le.Uint32(buf[4:])), int32(le.Uint32(buf[8:]))
			w, n := int64(le.Uint64(buf[12:])), int(le.Uint32(buf[20:]))
			buf = buf[recHead:]
			if len(buf)/16 < n {
				return fmt.Errorf("rank %d: waitstate: a wait from rank %d is cut short or corrupt", d.c.Rank(), q)
			}
			i, ok := d.localOf(proc)
			if !ok {
				return fmt.Errorf("rank %d: waitstate: rank %d sent a wait caused by process %d, not held here", d.c.Rank(), q, proc)
			}
			j, ok := d.procs[i].taskOf(waiter, wsync, d.taskHintOf(i, waiter))
			if !ok || d.procs[i].tasks[j].has(taskMade) {
				return fmt.Errorf("rank %d: waitstate: rank %d sent a wait process %d has no task for", d.c.Rank(), q, proc)
			}
			tw = tw[:0]
			for e := range n {
				tw = append(tw, tmEntry{le.Uint64(buf[16*e:]), int64(le.Uint64(buf[16*e+8:]))})
			}
			buf = buf[16*n:]
			d.task(i, j, w, tw)
		}
	}
	return nil
}

// waiterTime returns the ns of key k in the waiter's time map tw
// (sorted by key), 0 for none.
func waiterTime(tw []tmEntry, k uint64) int64 {
	lo, hi := 0, len(tw)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if tw[h].k < k {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(tw) && tw[lo].k == k {
		return tw[lo].ns
	}
	return 0
}

// task completes local process i's task j of a wait w, the waiter's
// time map being tw.
func (d *delays) task(i int, j int32, w int64, tw []tmEntry) {
	p := &d.procs[i]
	t := &p.tasks[j]
	t.set(taskMade)
	p.td.cpOff[j] = int32(len(p.cpD))
	pat := t.pat()
	if t.pos < 0 {
		r := d.row(i, cpRef{site: -1, code: -1}, -1, pat)
		r.Propagated += max(0, w)
		r.Waits++
		return
	}
	prev, first := d.prevSync(i, t.pos, t.waiter())
	cm := d.causeMapOf(i, prev, t.pos)
	waits, site, code := cm.waits, cm.site, cm.code
	residue := func(ns int64) {
		if ns > 0 {
			d.row(i, cpRef{site: -1, code: code}, site, pat).Propagated += ns
		}
	}
	var D int64
	cps := d.cps[:0]
	for _, e := range cm.ents {
		if dv := e.ns - waiterTime(tw, p.keys[e.slot]); dv > 0 {
			cps = append(cps, cpWide{dv, p.refIndex(e.slot, e.ref)})
			D += dv
		}
	}
	d.cps = cps
	slices.SortFunc(cps, func(x, y cpWide) int {
		a, b := &p.refs[x.ref], &p.refs[y.ref]
		return cmp.Or(cmp.Compare(a.site, b.site), cmp.Compare(a.code, b.code))
	})
	for _, c := range cps {
		p.addAmount(c.d, c.ref)
	}
	p.setCount(j, len(cps))
	den := D + waits
	p.setDen(j, den)
	if den <= 0 {
		residue(w)
		d.row(i, cpRef{site: -1, code: code}, site, pat).Waits++
		return
	}
	// Short-term: the wait in proportion to the delay and the waits of
	// the interval, at most all of both for a point-to-point wait.
	amount := w
	if pat.p2p() || pat == LateReceiver {
		amount = min(w, den)
	}
	residue(w - amount)
	sp := splitter{amount: amount, total: den}
	counted := false
	for _, c := range cps {
		if ns := sp.part(c.d); ns > 0 {
			r := d.row(i, p.refs[c.ref], site, pat)
			r.NS += ns
			r.Waits++
			counted = true
		}
	}
	if !counted {
		d.row(i, cpRef{site: -1, code: code}, site, pat).Waits++
	}
	d.pass(i, t, d.taskLo(i, t, prev, first), pat, &sp, code, site)
}

// causeMap is the time map of a cause's interval, from point prev to
// pos of local process i, with its waits and pos's call site and code:
// its entries of positive value
// in the order timeMap touched their slots, each with the call path it
// learnt.
type causeMap struct {
	i, pos, prev int32
	ok           bool
	site         int32 // pos's call site and code
	code         int64
	waits        int64
	ents         []causeEnt
}

type causeEnt struct {
	ns   int64
	ref  cpRef
	slot int32
}

// causeMapBits sizes the cache of the causes' time maps: the waits of
// the windows of a round (eachChargedByTime) at a few hundred
// collectives.
const causeMapBits = 11

// causeMapOf returns the time map of process i's interval from prev to
// pos, made once for the waits that share it: all the members' but the
// cause's of a collective (63 of 64 on the 64-process pure-MPI trace,
// where the cause's time maps were a third of making its tasks).
func (d *delays) causeMapOf(i int, prev, pos int32) *causeMap {
	x := uint64(uint32(i))<<42 ^ uint64(uint32(pos))<<21 ^ uint64(uint32(prev))
	x *= 0x9e3779b97f4a7c15
	c := &d.cmaps[x>>(64-causeMapBits)]
	if c.ok && c.i == int32(i) && c.pos == pos && c.prev == prev {
		return c
	}
	c.i, c.pos, c.prev, c.ok = int32(i), pos, prev, true
	call := d.procs[i].pts.callAt(pos)
	c.site, c.code = d.a.procs[i].siteAt(call), d.a.procs[i].labelAt(call)
	c.waits = d.timeMap(i, prev, pos, true)
	c.ents = c.ents[:0]
	for _, s := range d.tm.touched {
		if ns := d.tm.val[s]; ns > 0 {
			c.ents = append(c.ents, causeEnt{ns, d.tm.refOf(s), s})
		}
	}
	return c
}

// taskHint is where taskOf last found a task of cause i (local) and
// waiter: the waiters' records reach a cause interleaved
// (eachChargedByTime), each in the order of its points, and their costs
// in the replay about the reverse.
type taskHint struct {
	i, waiter int32
	at        int
}

const taskHintBits = 13

// taskHintOf returns the hint of local process i's tasks of waiter.
func (d *delays) taskHintOf(i int, waiter int32) *int {
	x := (uint64(uint32(i))<<32 | uint64(uint32(waiter))) * 0x9e3779b97f4a7c15
	h := &d.hints[x>>(64-taskHintBits)]
	if h.i != int32(i) || h.waiter != waiter {
		*h = taskHint{i: int32(i), waiter: waiter, at: math.MaxInt} // none: taskOf bisects
	}
	return &h.at
}

// pass hands the rest of sp (after the call paths' parts) to the waits of
// task t's interval, as costs of pattern pat; a wait that has passed its
// costs on already, or has no cause, keeps none, and what is left over
// (the waits of the interval before lo) neither: that part is propagated.
func (d *delays) pass(i int, t *task, lo int32, pat Pattern, sp *splitter, code int64, site int32) {
	p := &d.procs[i]
	var lost int64
	for j := lo; j < t.pos; j++ {
		w := p.waitAt(j)
		if w <= 0 {
			continue
		}
		ns := sp.part(w)
		if p.pts.causeAt(j) < 0 || j >= p.finBound {
			lost += ns
			continue
		}
		x, ok := int32(0), p.hasSlot[j/64]&(1<<(j%64)) != 0
		if ok {
			x = p.slot[j]
		} else {
			x = int32(len(p.costs))
			p.costs = append(p.costs, [delayPatterns]int64{})
			p.slot[j] = x
			p.hasSlot[j/64] |= 1 << (j % 64)
		}
		p.costs[x][pat] += ns
	}
	// What the waits before lo would have had (scout's rule for a
	// collective's members, groupLo) reaches no delay.
	lost += sp.amount - sp.done
	if lost > 0 {
		d.row(i, cpRef{site: -1, code: code}, site, pat).Propagated += lost
	}
}

// findSync returns the index of process i's synchronization point at
// (call, th, ev), any of the call's for a collective; −1 for none.
func (d *delays) findSync(i int, call, th int32, ev int64, coll bool) int32 {
	ss := &d.procs[i].pts
	n := ss.len()
	if th < 0 || th >= trace.MaxThreads {
		return -1
	}
	// The first point of (th, call) or after, from the last one found.
	key := uint64(th)<<32 | uint64(uint32(call))
	at := func(j int) uint64 { return uint64(ss.thAt(int32(j)))<<32 | uint64(uint32(ss.callAt(int32(j)))) }
	p := &d.procs[i]
	lo := ss.below(p.syncHint, key)
	for j := lo; j < n && at(j) == key; j++ {
		if coll || ss.eventAt(int32(j)) == ev {
			p.syncHint = j
			return int32(j)
		}
	}
	return -1
}

// dropFinders lets go of what found the nodes, calls and points the
// notifications and the wait heads name, and of the matching, before the
// tasks are made of the records: those and the replay read the calls,
// the points, the collective calls' communicators and the tasks only
// (Analyze is the last user).
func (d *delays) dropFinders() {
	a := d.a
	a.parkRows(a.edges)
	a.byThread, a.oneThread, a.nodeHint, a.edge, a.rowSet, a.edges = nil, nil, nil, nil, bitrank.Set{}, nil
	a.m, a.call, a.calls, a.bare = nil, nil, nodeCalls{}, nil
	a.reqCall, a.reqEv, a.p2p = narrow.Step[int8, int16, int32]{}, narrow.Step[int8, int16, int32]{}, nodeRank{}
}

// The replay's messages: the cause's process, the waiter's world rank and
// synchronization point, a bit per pattern whose cost is not 0 (two
// bytes), then those costs in pattern order: 14 bytes for a wait no cost
// reached (a byte less before there were more than 8 patterns; 72 with
// every pattern's then, which at 2 ranks held 50 MiB of buffers in the
// first round on the 64-process pure-MPI trace).
const inflowHead = 4 + 4 + 4 + 2

// appendInflow appends the message of the costs in to b.
func appendInflow(b []byte, cause, waiter, wsync int32, in *[delayPatterns]int64) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(cause))
	b = le.AppendUint32(b, uint32(waiter))
	b = le.AppendUint32(b, uint32(wsync))
	var mask uint16
	for pt, v := range in {
		if v != 0 {
			mask |= 1 << pt
		}
	}
	b = le.AppendUint16(b, mask)
	for _, v := range in {
		if v != 0 {
			b = le.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// readInflow reads the message at the start of b: its fields and the
// bytes after it; ok is false when b is cut short.
func readInflow(b []byte) (cause, waiter, wsync int32, in [delayPatterns]int64, rest []byte, ok bool) {
	le := binary.LittleEndian
	if len(b) < inflowHead {
		return 0, 0, 0, in, nil, false
	}
	cause, waiter, wsync = int32(le.Uint32(b)), int32(le.Uint32(b[4:])), int32(le.Uint32(b[8:]))
	mask := le.Uint16(b[12:])
	b = b[inflowHead:]
	for pt := range in {
		if mask&(1<<pt) == 0 {
			continue
		}
		if len(b) < 8 {
			return 0, 0, 0, in, nil, false
		}
		in[pt] = int64(le.Uint64(b))
		b = b[8:]
	}
	return cause, waiter, wsync, in, b, mask < 1<<delayPatterns
}

// replay passes the waits' costs back: a task, once the wait it charges
// has received every cost it will (every later task of the waiter's
// process is done), splits them over its delay (long-term costs) and the
// waits of its interval. Tasks of this rank's processes are done as soon
// as they can; costs for other ranks' tasks are exchanged in rounds (one
// per rank crossing of the longest chain). A task waits only for tasks
// at later points of its waiter, each reached from its own along a
// matched edge and program order, so the tasks wait in a circle only if
// the happened-before graph does, which the matching rejects. Should no
// task be able to proceed on any rank all the same, each process's latest
// wait yet to pass its costs passes them as they are (what reaches it
// later stays propagated): the replay ends on any input.
func (d *delays) replay() error {
	var count []int32
	for i := range d.procs {
		p := &d.procs[i]
		// By point, latest first, in task order among equals: a
		// counting sort (a point is −1 … len(syncs)−1).
		n := p.pts.len() + 1
		count = slices.Grow(count[:0], n+1)[:n+1]
		clear(count)
		at := func(t *task) int { return p.pts.len() - 1 - int(t.pos) }
		for j := range p.tasks {
			count[at(&p.tasks[j])+1]++
		}
		for b := 1; b <= n; b++ {
			count[b] += count[b-1]
		}
		p.order = make([]int32, len(p.tasks))
		for j := range p.tasks {
			b := at(&p.tasks[j])
			p.order[count[b]] = int32(j)
			count[b]++
		}
	}
	for i := range d.procs {
		d.advance(i)
	}
	for {
		d.drain()
		if d.lerr != nil {
			break
		}
		var msgs []comm.Msg
		for r, b := range d.outgoing {
			if len(b) > 0 {
				msgs = append(msgs, comm.Msg{Peer: r, Buf: b})
				d.outgoing[r] = nil
			}
		}
		left := int64(0)
		for i := range d.procs {
			left += int64(len(d.procs[i].order) - d.procs[i].hi)
		}
		n, err := d.c.AllreduceInt64(comm.Sum, []int64{int64(len(msgs)), left})
		if err != nil {
			return err
		}
		if n[0] == 0 && n[1] == 0 {
			break
		}
		if n[0] == 0 {
			// Stalled: force the latest waits yet to pass their costs.
			for i := range d.procs {
				p := &d.procs[i]
				for q := p.finBound - 1; q >= 0; q-- {
					if p.chargedAt(q) {
						d.finalize(i, q)
						p.finBound = q
						break
					}
				}
			}
			continue
		}
		got, err := d.c.Exchange(msgs)
		if err != nil {
			return err
		}
		for _, g := range got {
			for buf := g.Buf; len(buf) > 0 && d.lerr == nil; {
				cause, waiter, wsync, in, rest, ok := readInflow(buf)
				if !ok {
					d.lerr = fmt.Errorf("rank %d: waitstate: %d bytes of delay costs from rank %d are cut short or corrupt", d.c.Rank(), len(g.Buf), g.Peer)
					break
				}
				buf = rest
				if !d.deliver(int(cause), waiter, wsync, in) {
					d.lerr = fmt.Errorf("rank %d: waitstate: rank %d sent delay costs for a wait no process here caused", d.c.Rank(), g.Peer)
				}
				// Done at once, with what it makes ready here: not all
				// of a round's queued first (64 bytes each).
				d.drain()
			}
		}
		if err := comm.Agree(d.c, d.lerr); err != nil {
			return err
		}
	}
	return comm.Agree(d.c, d.lerr)
}

// deliver gives the task of the wait (waiter, wsync) at world rank proc
// its costs; false when there is no such task here.
func (d *delays) deliver(proc int, waiter, wsync int32, in [delayPatterns]int64) bool {
	i, ok := d.localOf(proc)
	if !ok {
		return false
	}
	p := &d.procs[i]
	j, ok := p.taskOf(waiter, wsync, d.taskHintOf(i, waiter))
	if !ok {
		return false
	}
	t := &p.tasks[j]
	if t.has(taskReady) {
		return false
	}
	t.set(taskReady)
	d.queue = append(d.queue, ready{int32(i), j, in})
	return true
}

// waitKey packs a wait's (waiter, wsync) so that the keys sort as the
// pairs do (both are int32).
func waitKey(waiter, wsync int32) uint64 {
	return uint64(uint32(waiter)^1<<31)<<32 | uint64(uint32(wsync)^1<<31)
}

// finalize passes the costs of process i's wait at synchronization point
// q to the task of its cause.
func (d *delays) finalize(i int, q int32) {
	p := &d.procs[i]
	if !p.chargedAt(q) {
		return
	}
	cause := p.pts.causeAt(q)
	me := int32(d.a.tp[i].Header.Rank)
	var in [delayPatterns]int64
	if p.hasSlot[q/64]&(1<<(q%64)) != 0 {
		in = p.costs[p.slot[q]]
	}
	if j, ok := d.localOf(int(cause)); ok {
		if !d.deliver(int(d.a.tp[j].Header.Rank), me, q, in) && d.lerr == nil {
			d.lerr = fmt.Errorf("rank %d: waitstate: process %d has no task for a wait of process %d", d.c.Rank(), cause, me)
		}
		return
	}
	to := d.owners.Owner(int(cause))
	d.outgoing[to] = appendInflow(double(d.outgoing[to], inflowHead+8*int(delayPatterns)), cause, me, q, &in)
}

// advance moves process i's bound of done tasks on and finalizes the
// waits no task left to do can still pass costs to.
func (d *delays) advance(i int) {
	p := &d.procs[i]
	for p.hi < len(p.order) && p.tasks[p.order[p.hi]].has(taskDone) {
		p.hi++
	}
	bound := int32(0)
	if p.hi < len(p.order) {
		bound = max(0, p.tasks[p.order[p.hi]].pos)
	}
	for q := p.finBound - 1; q >= bound; q-- {
		d.finalize(i, q)
	}
	p.finBound = min(p.finBound, bound)
}

// drain does the ready tasks, and those they make ready on this rank.
func (d *delays) drain() {
	for len(d.queue) > 0 {
		x := d.queue[len(d.queue)-1]
		d.queue = d.queue[:len(d.queue)-1]
		i := int(x.proc)
		p := &d.procs[i]
		d.longTerm(i, x.task, &x.in)
		p.tasks[x.task].set(taskDone)
		d.advance(i)
	}
}

// longTerm splits the costs that reached task t's wait over its delay
// (long-term cost, per pattern) and the waits of its interval.
func (d *delays) longTerm(i int, j int32, inflow *[delayPatterns]int64) {
	cs, p := &d.a.procs[i], &d.procs[i]
	t := &p.tasks[j]
	site, code := int32(-1), int64(-1)
	if t.pos >= 0 {
		call := d.procs[i].pts.callAt(t.pos)
		site, code = cs.siteAt(call), cs.labelAt(call)
	}
	lo := int32(-1) // taskLo's, found at the first pattern that needs it
	for pat := None + 1; pat < delayPatterns; pat++ {
		in := inflow[pat]
		if in <= 0 {
			continue
		}
		den := p.den(j)
		if t.pos < 0 || den <= 0 {
			d.row(i, cpRef{site: -1, code: code}, site, pat).Propagated += in
			continue
		}
		if lo < 0 {
			prev, first := d.prevSync(i, t.pos, t.waiter())
			lo = d.taskLo(i, t, prev, first)
		}
		sp := splitter{amount: in, total: den}
		for k, hi := p.cpsOf(j); k < hi; k++ {
			if ns := sp.part(p.amount(k)); ns > 0 {
				d.row(i, p.refs[p.cpRefAt(k)], site, pat).LongTerm += ns
			}
		}
		d.pass(i, t, lo, pat, &sp, code, site)
	}
}

// groupLo returns the first synchronization point of the interval of a
// collective's root at pos whose waits receive the costs of a member's
// wait, the member having last synchronized with the root at prev (lo
// after it): scout hands a member's share to the waits after the group's
// previous synchronization point (lo) when the member synchronized there,
// but for a member that synchronized with the root later only from the
// next such later point on, and not at all when none follows
// (CalculateScales' sum scales, as DelayCostMap::addCosts applies them).
func (d *delays) groupLo(i int, pos, call, prev, lo int32) int32 {
	p := &d.procs[i]
	j := p.hint
	if j < len(p.groupAt) && p.groupAt[j] != pos {
		j++
	}
	if j >= len(p.groupAt) || p.groupAt[j] != pos {
		var ok bool
		if j, ok = slices.BinarySearch(p.groupAt, pos); !ok {
			p.groupAt = slices.Insert(p.groupAt, j, pos)
			p.groups = slices.Insert(p.groups, j, d.group(i, pos, call))
		}
	}
	p.hint = j
	g := &p.groups[j]
	if prev <= g.prev {
		return lo
	}
	if q, _ := slices.BinarySearch(g.inter, prev+1); q < len(g.inter) {
		return g.inter[q]
	}
	return pos
}

// group scans process i's synchronization points back from the
// collective's at pos until every other member of its communicator is
// met: the last point that meets all the members not met before is the
// group's previous one, those before it that met some are intermediate.
func (d *delays) group(i int, pos, call int32) group {
	p := &d.procs[i]
	ci, ok := p.colls.of(call)
	if !ok {
		return group{prev: math.MaxInt32}
	}
	cm, ok := d.a.tp[i].Tables.CommByIndex(int64(ci))
	if !ok {
		return group{prev: math.MaxInt32}
	}
	me := int32(d.a.tp[i].Header.Rank)
	member := func(r int32) bool { return r != me && cm.Contains(int(r)) }
	left := cm.Size()
	if cm.Contains(int(me)) {
		left--
	}
	met := map[int32]bool{}
	meet := func(r int32) {
		if member(r) && !met[r] {
			met[r] = true
			left--
		}
	}
	g := group{prev: -1}
	ss := &p.pts
	for q := pos - 1; q >= 0 && ss.thAt(q) == ss.thAt(pos) && left > 0; q-- {
		w := d.withOfAt(i, q)
		set := setOf(w)
		before := left
		switch {
		case w >= 0:
			meet(w)
		case set == -1 || set == ci:
			left = 0 // every member
		case set >= 0:
			if c2, ok := d.a.tp[i].Tables.CommByIndex(int64(set)); ok {
				for k := range min(c2.Size(), trace.MaxRanks) {
					meet(int32(c2.Member(k)))
				}
			}
		default:
			for _, r := range p.lists[-2-set] {
				meet(r)
			}
		}
		switch {
		case left == 0:
			g.prev = q
		case left < before:
			g.inter = append(g.inter, q)
		}
	}
	slices.Reverse(g.inter)
	return g
}
