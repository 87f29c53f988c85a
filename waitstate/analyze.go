package waitstate

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/bitrank"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Row is one process's MPI time at one call site, split into the patterns.
// Rank 0 receives O(processes × call sites) of them.
type Row struct {
	Rank   int
	Func   string
	Site   string // the call's location (file:line:col, function+offset), "" when unknown
	Region string
	MPINS  int64
	Calls  int64
	Wait   [NumPatterns]int64 // ns charged per pattern (None: unused)
	Count  [NumPatterns]int64 // calls charged per pattern
}

// Cause is the waiting one process made others spend at one call site
// (the waiters' site) in one pattern: the direct cause of the waits, the
// process whose late call they waited for.
type Cause struct {
	Rank    int // the process waited for
	Func    string
	Site    string
	Region  string
	Pattern Pattern
	NS      int64
	Calls   int64
}

// Other returns the row's MPI time no pattern explains.
func (r *Row) Other() int64 {
	o := r.MPINS
	for p := None + 1; p < NumPatterns; p++ {
		o -= r.Wait[p]
	}
	return o
}

// Analyze charges every recorded MPI call of this rank's processes to a
// pattern, each wait to the process waited for (Cause) and to that
// process's delays (Delay: Scalasca's delay costs, delay.go), and gathers
// the rows at rank 0 (nil elsewhere). edges are the processes' matched
// predecessors (graph.ExchangeEdges) and owners maps a process to its
// analysis rank: Late Receiver waits are known at the receiver and needed
// at the sender, delays are measured on both sides and charged at the
// cause. Times are cut
// to the window [first, last]. Collective; an error is returned on every
// rank.
func (a *Analysis) Analyze(c comm.Comm, owners graph.Owners, edges []graph.RemoteEdges, first, last int64) ([]Row, []Cause, []Delay, error) {
	m := a.m
	a.packCalls() // Record is done: the nodes' calls are read only
	for _, ops := range a.ops {
		slices.SortFunc(ops, func(x, y nodeOp) int { return cmp.Compare(x.node, y.node) })
	}
	// Each receive-like node gets the latest enter time of its senders
	// (the waits) and minus the earliest exit of their calls (the delay
	// costs' completion times: a message's sender's, a collective's first
	// member out).
	// They are kept, as the per-process loop reads them, in each
	// process's nodeVals as they arrive (no graph.Maxima). Where the
	// trace has nonblocking collectives, a third value is the start
	// nodes' progress points and their members (progress.go).
	a.sortProgs()
	ps, err := a.progressScale(c)
	if err != nil {
		return nil, nil, nil, err
	}
	width := 2
	if ps.on {
		width = 3
	}
	progs := progCursor{pts: a.progs}
	if ps.on {
		a.keepProgDone()
	}
	a.progs = nil
	proc := 0 // of the last node in a call: nodes come in order
	nv, at := a.makeNodeVals()
	// The matched edges come back from the spill file (graph.DAG.Park)
	// once the calls are packed, their arrays collected first.
	if a.Release != nil {
		if err := a.Release(); err != nil {
			return nil, nil, nil, err
		}
	}
	var uerr error
	if err := m.DAG.Unpark(); err != nil {
		uerr = fmt.Errorf("rank %d: wait states: %w", c.Rank(), err)
	}
	if err := comm.Agree(c, uerr); err != nil {
		return nil, nil, nil, err
	}
	to := 0 // the process of the node delivered to last
	// The calls a sender entered after (Late Senders, lsCalls), as the
	// values arrive: the Late Receiver rounds read them, before the nodes'
	// values come back to be charged.
	a.lsCalls = make([][]uint64, len(m.Procs))
	err = graph.PropagateMaxTo(c, m, width, func(n int32, v []int64) {
		if a.callOf(n) >= 0 && (n < m.ProcNodes[proc] || n >= m.ProcNodes[proc+1]) {
			proc = int(m.ProcOf(n))
		}
		v[0], v[1] = a.enter(proc, n), math.MinInt64
		if t := a.exit(proc, n); t != math.MinInt64 {
			v[1] = -t
		}
		if width > 2 {
			v[2] = math.MinInt64
			if at, ok := progs.at(n); ok {
				v[2] = ps.enc(at, worldRank(m.Procs[proc]))
			}
		}
	}, func(n int32, v []int64) {
		j, ok := at.Rank(n)
		if !ok {
			return // outside any call: not read
		}
		if n < m.ProcNodes[to] || n >= m.ProcNodes[to+1] {
			to = int(m.ProcOf(n))
		}
		k := a.callOf(n)
		cs := &a.procs[to]
		b := cs.enterAt(k)
		nv[to].max(int(j-at.Before(m.ProcNodes[to])), v, b, cs.exitAt(k))
		if len(v) > 2 && v[2] != math.MinInt64 {
			nv[to].maxProg(int(j-at.Before(m.ProcNodes[to])), v[2])
		}
		if v[0] > b { // none is math.MinInt64
			ls := a.lsCalls[to]
			if ls == nil {
				ls = make([]uint64, (cs.len()+63)/64)
				a.lsCalls[to] = ls
			}
			ls[k/64] |= 1 << (k % 64)
		}
	})
	if err != nil {
		return nil, nil, nil, err
	}
	// Nothing travels along the matched edges after this: the DAG goes
	// before the Late Receiver rounds and the delay records are made
	// (Analyze is the matching's last reader).
	m.DropDAG()
	// The nodes' values wait in the spill file until their process's
	// turn below: at most one process's are in memory beside the rows and
	// columns that come back (3.4 MB of the 10 M-event halo's phase).
	if a.Spill != nil {
		for i := range nv {
			// A process's few values are not worth the file's calls
			// (16 384 processes of a halo exchange on one rank).
			if nv[i].lat.Bytes()+nv[i].ex.Bytes() < nodeValsParkMin {
				continue
			}
			if nv[i].park(a.Spill) != nil {
				break // the rest stay in memory
			}
		}
	}
	// The rows, and the nodes' kinds, threads and events, wait in the
	// spill file while the matched edges are walked (graph.RemoteEdges.
	// ParkRows, graph.Matching.ParkColumns): the rest of the phase reads
	// them.
	// The DAG's arrays are collected first: what comes back takes their
	// pages.
	if a.Release != nil {
		if err := a.Release(); err != nil {
			return nil, nil, nil, err
		}
	}
	rerr := m.UnparkColumns()
	if rerr == nil {
		rerr = unparkRows(edges)
	}
	if rerr != nil {
		rerr = fmt.Errorf("rank %d: wait states: %w", c.Rank(), rerr)
	}
	if err := comm.Agree(c, rerr); err != nil {
		return nil, nil, nil, err
	}
	a.edges = edges
	a.edge, a.rowSet = a.edgeRows(edges)
	lr, err := a.lateReceivers(c, owners, edges)
	a.lsCalls = nil
	for i := range a.procs {
		a.procs[i].kinds = nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	lw, err := a.lockWaits(c, owners)
	if err != nil {
		return nil, nil, nil, err
	}
	// From here on the rows are read one process at a time, and only
	// their predecessors (pred): they wait in the spill file, each
	// process's predecessors brought back at its turn in the loop below
	// and in the delay costs' wait heads (27.7 MB of the loop's peak on
	// the 10 M-event pure-MPI trace), and all come back at the phase's
	// end.
	a.parkRows(edges)
	// MPI_Init synchronizes every process; its completion time (the delay
	// costs') runs from the earliest exit.
	initMin := int64(math.MaxInt64)
	for i := range m.Procs {
		if k := a.procs[i].initCall; k >= 0 {
			initMin = min(initMin, a.procs[i].exitAt(k))
		}
	}
	im, err := c.AllreduceInt64(comm.Min, []int64{initMin})
	if err != nil {
		return nil, nil, nil, err
	}
	dl := newDelays(a, c, owners)
	dl.tBase = im[0] // every rank's: the notifications' times are from it
	var rows []Row
	// The causes by (cause's rank, waiter's call site, pattern), in the
	// order first met: a process's own (a site is an index there, and
	// no two processes share an entry), found by one 64-bit key (the
	// sites' whole names hashed per charged wait were 1 % of the pure
	// MPI program's analysis).
	var causeList []*Cause
	procCauses := map[uint64]*Cause{}
	type wideCause struct {
		cause, site int32
		pat         Pattern
	}
	var wideCauses map[wideCause]*Cause // a process of 2²⁴ call sites or more
	// Each call's wait, pattern and cause, per process: sized for the
	// largest and reused, not made anew for each (on MPI-heavy traces
	// 21 bytes a call, 22 MB of garbage on the 10 M-event halo).
	most := 0
	for i := range m.Procs {
		most = max(most, a.procs[i].len())
	}
	waitAll, patAll := make([]int64, most), make([]Pattern, most)
	causeAll, causeNodeAll := make([]int32, most), make([]int32, most)
	// The charged waits with a cause of the process (by call), and per
	// call its index there (−1: none): addSyncs makes its points of
	// them, then they are done with (a process's at a time, not all
	// processes' at once).
	var wo []waitOf
	woAt := make([]int32, most)
	for k := range woAt {
		woAt[k] = -1
	}
	var perr error // a process's values that could not be read back
	checks := comm.Checkpoints{Check: a.Check}
	for i, p := range m.Procs {
		if i > 0 {
			// The previous process's: a stop here leaves nothing half
			// made.
			if err := checks.After(i-1, len(m.Procs)); err != nil {
				return nil, nil, nil, err
			}
		}
		if err := nv[i].unpark(); err != nil {
			perr = fmt.Errorf("rank %d: wait states: %w", c.Rank(), err)
			break
		}
		if i < len(edges) {
			if err := edges[i].UnparkPreds(); err != nil {
				perr = fmt.Errorf("rank %d: wait states: %w", c.Rank(), err)
				break
			}
		}
		cs := &a.procs[i]
		n := cs.len()
		wait, pat, cause, causeNode := waitAll[:n], patAll[:n], causeAll[:n], causeNodeAll[:n]
		clear(wait)
		clear(pat)
		clear(cause)
		clear(causeNode)
		// The collectives' operations, read in node order here and in
		// addSyncs, and not after.
		ops := opCursor{ops: a.ops[i], tails: a.tails}
		dl.ops = opCursor{ops: a.ops[i], tails: a.tails}
		a.ops[i] = nil
		// Collectives first: a call holding both a collective and a
		// message (none in MPI) is charged to the collective.
		// book charges node v's wait w of pattern pt, caused by pred,
		// to call k, unless the call holds a wait that goes first.
		book := func(k int32, pt Pattern, w int64, pred int32, v int32) {
			coll := !pt.p2p()
			switch {
			case pat[k] == None, coll && pat[k].p2p():
				pat[k], wait[k], cause[k], causeNode[k] = pt, w, pred, v
			case pat[k] == pt && (w > wait[k] || w == wait[k] && pred < cause[k]):
				wait[k], cause[k], causeNode[k] = w, pred, v
			case coll && (pt == WaitForProgress) != (pat[k] == WaitForProgress) && w > wait[k]:
				// A call completing several nonblocking collectives
				// keeps the longer of a progress wait and a late
				// start's (progress.go).
				pat[k], wait[k], cause[k], causeNode[k] = pt, w, pred, v
			}
		}
		j := 0 // in nv[i]
		for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
			k := a.callOf(v)
			if k < 0 || m.Role[v] != graph.RoleRecv {
				continue
			}
			enter := cs.enterAt(k)
			lv, _ := nv[i].at(j, enter, cs.exitAt(k))
			prog, hasProg := nv[i].progAt(j, &ps)
			j++
			pred, _, _ := a.pred(i, v)
			var w int64
			var pt Pattern
			// The pattern of a wait until lv, and its cause, for the
			// calls that polled the node's request (poll.go).
			lvPt, lvPred := None, pred
			switch m.Kind[v] {
			case trace.MPIRecv:
				if lv != math.MinInt64 {
					w, pt = lv-enter, LateSender
					if rp, ok := a.rma[v]; ok {
						pt = rp
					}
				}
			case trace.CollEnd, trace.CollComplete:
				op, _, tail := ops.at(v)
				// A collective's wait ends at its coll_end at the latest,
				// not at the call's exit (Scalasca 2.6's "restrict wait
				// time to time spent in operation" takes the
				// MpiCollectiveEnd record's time): the two differ only
				// where the clocks let the others' enters come after it.
				if end := cs.exitAt(k) - tail; lv != math.MinInt64 && lv > end {
					lv = end
				}
				switch {
				case !op.Valid():
				case op == trace.CollBarrier:
					w, pt = lv-enter, WaitBarrier
				case op == trace.CollWinFence:
					w, pt = lv-enter, WaitAtFence
				case op == trace.CollWinCreate:
					w, pt = lv-enter, WaitAtWinCreate
				case op == trace.CollWinFree:
					w, pt = lv-enter, WaitAtWinFree
				case op.Class() == trace.AllToAll, op.Class() == trace.Prefix:
					// A scan's member waits for the members before it
					// (Scalasca's Early Scan, counted here as N×N).
					w, pt = lv-enter, WaitNxN
				case op.Class() == trace.OneToAll:
					w, pt = lv-enter, LateBroadcast
				case op.Class() == trace.AllToOne:
					// Until the last sender entered (Scalasca 2.6's
					// Early Reduce: "the waiting time due to the latest
					// sending process").
					w, pt = lv-enter, EarlyReduce
				}
				if lv == math.MinInt64 {
					pt = None
				}
				lvPt = pt
				// The wait for another member's progress after the last
				// start, when longer than the wait for the start
				// (progress.go).
				if hasProg && op.Valid() {
					end := cs.exitAt(k) - tail
					pw := progressWait(enter, lv, end, prog)
					if pw > 0 && (pt == None || pw > w) {
						w, pt, pred = pw, WaitForProgress, prog.rank
					}
					// The critical path's edge from the progress point,
					// when the completion came after it, and the cause's
					// point of the delay costs (progressEdges).
					if pw > 0 {
						a.progReqs = append(a.progReqs, progReq{proc: int32(i), node: v, cause: prog.rank, at: prog.at, edge: prog.at <= end})
					}
				}
			default:
				continue
			}
			if m.Kind[v] == trace.MPIRecv {
				lvPt = pt
			}
			// The calls that polled the request before this one wait
			// too, each for its part before lv (poll.go).
			polled := a.polls != nil && lvPt != None && a.pollWaits(cs, v, lv, func(kp int32, wp int64) {
				book(kp, lvPt, wp, lvPred, v)
			})
			if pt == None || w <= 0 && !polled {
				// No wait: no pattern (a Late Receiver may still apply
				// to the call, as in Scalasca).
				continue
			}
			if pt == None || w <= 0 {
				// Only the polling calls waited: the call completing
				// the request holds the instance and its cause.
				pt, w, pred = lvPt, 0, lvPred
			}
			book(k, pt, w, pred, v)
		}
		if lw != nil {
			a.bookLocks(i, lw[i], book)
		}
		for _, lw := range lr[i].waits {
			if k := lw.call; pat[k] == None {
				pat[k], wait[k], cause[k], causeNode[k] = LateReceiver, lw.wait, lw.cause, -1
			}
		}
		wo = wo[:0]
		// The polling calls' parts of each polled request's wait, by its
		// node (poll.go): added to the call completing it when that call
		// is charged to that node, not to another node's wait (a
		// MPI_Waitall charged to a later sender: the polls waited for
		// another cause, whose delay costs they are not).
		var pollAcc map[int32]int64
		if a.polls != nil {
			pollAcc = map[int32]int64{}
		}
		clear(procCauses)
		wideCauses = nil
		if len(cs.sites) >= 1<<24 {
			wideCauses = map[wideCause]*Cause{}
		}
		byProc := make([]Row, len(cs.sites))
		tb := &p.Tables
		for s, st := range cs.sites {
			byProc[s] = Row{Rank: p.Header.Rank, Func: tb.String(st.fn), Site: tb.SiteName(st.loc)}
			if st.region >= 0 {
				byProc[s].Region = tb.String(st.region)
			}
		}
		for k := int32(0); k < int32(n); k++ {
			b, e := cs.enterAt(k), cs.exitAt(k)
			sk := cs.siteAt(k)
			row := &byProc[sk]
			if b < first && e > first {
				// A call begun before the window counts for its part
				// inside it, and as a call only when it began inside.
				row.MPINS += clip(b, e, first, last)
			}
			if b < first || b >= last {
				continue
			}
			row.Calls++
			row.MPINS += clip(b, e, first, last)
			// A polling call's part of a later call's wait (poll.go):
			// no instance of its own, and added to that call's for the
			// delay costs.
			part, polls := false, int64(0)
			if a.polls != nil && pat[k] != None {
				if u := causeNode[k]; u >= 0 {
					part = a.callOf(u) != k
					if !part {
						polls = pollAcc[u]
					}
				}
			}
			if w := min(wait[k], e-b); pat[k] != None && (w > 0 || polls > 0) {
				if cw := clip(b, b+max(0, w), first, last); cw > 0 || polls > 0 && !part {
					row.Wait[pat[k]] += cw
					if !part {
						row.Count[pat[k]]++
					}
					if cause[k] >= 0 {
						var x *Cause
						var ok bool
						st := sk
						ck := uint64(uint32(cause[k]))<<32 | uint64(uint32(st))<<8 | uint64(pat[k])
						if wideCauses == nil {
							x, ok = procCauses[ck]
						} else {
							x, ok = wideCauses[wideCause{cause[k], st, pat[k]}]
						}
						if !ok {
							x = &Cause{Rank: int(cause[k]), Func: row.Func, Site: row.Site, Region: row.Region, Pattern: pat[k]}
							if wideCauses == nil {
								procCauses[ck] = x
							} else {
								wideCauses[wideCause{cause[k], st, pat[k]}] = x
							}
							causeList = append(causeList, x)
						}
						x.NS += cw
						switch {
						case part:
							pollAcc[causeNode[k]] += cw
						default:
							x.Calls++
							// The wait goes to its cause for the delay
							// costs.
							wo = append(wo, waitOf{call: k, pat: pat[k], wait: cw + polls, cause: cause[k], node: causeNode[k]})
						}
					}
				}
			}
		}
		for _, row := range byProc {
			if row.Calls > 0 || row.MPINS > 0 {
				rows = append(rows, row)
			}
		}
		for j, w := range wo {
			woAt[w.call] = int32(j)
		}
		dl.addSyncs(i, &nv[i], wo, woAt, &lr[i], im[0])
		nv[i] = nodeVals{}
		if i < len(edges) {
			a.parkRows(edges[i : i+1])
		}
		dl.ops = opCursor{}
		lr[i].keepRecvs()
		for _, w := range wo {
			woAt[w.call] = -1
		}
	}
	a.locks = nil
	if err := checks.Finish(); err != nil {
		return nil, nil, nil, err
	}
	if err := comm.Agree(c, perr); err != nil {
		return nil, nil, nil, err
	}
	if ps.on {
		if err := a.progressEdges(c, owners, &ps, dl); err != nil {
			return nil, nil, nil, err
		}
	}
	// Merge over this rank's processes (sites are per process, names
	// are not): one row per (cause, site name, pattern).
	type nameKey struct {
		rank             int
		fn, site, region string
		pat              Pattern
	}
	merged := map[nameKey]int{}
	var cs []Cause
	for _, x := range causeList {
		nk := nameKey{x.Rank, x.Func, x.Site, x.Region, x.Pattern}
		if j, ok := merged[nk]; ok {
			cs[j].NS += x.NS
			cs[j].Calls += x.Calls
			continue
		}
		merged[nk] = len(cs)
		cs = append(cs, *x)
	}
	// The delay costs read the rows' predecessors only, one process's at
	// a time as they name the waits' causes (delays.heads), and no row
	// once their finders go: the rows stay in the spill file through
	// them, and come back for the phases that follow once the costs are
	// made.
	delays, err := dl.costs(lr)
	a.byThread, a.oneThread, a.nodeHint, a.edges, a.edge, a.rowSet = nil, nil, nil, nil, nil, bitrank.Set{}
	if err != nil {
		return nil, nil, nil, err
	}
	var rowsErr error
	if err := unparkRows(edges); err != nil {
		rowsErr = fmt.Errorf("rank %d: wait states: %w", c.Rank(), err)
	}
	if err := comm.Agree(c, rowsErr); err != nil {
		return nil, nil, nil, err
	}
	all, err := reduce.GatherRows(c, rows)
	allCauses, err2 := reduce.GatherRows(c, cs)
	allDelays, err3 := reduce.GatherRows(c, delays)
	return all, allCauses, allDelays, errors.Join(err, err2, err3)
}

// parkRows parks the rows of edges in the phase's spill file, where it
// has one (graph.RemoteEdges.ParkRows); after a failed write the rest
// stay in memory.
func (a *Analysis) parkRows(edges []graph.RemoteEdges) {
	if a.Spill == nil {
		return
	}
	for i := range edges {
		if edges[i].ParkRows(a.Spill) != nil {
			return
		}
	}
}

// unparkRows brings back the rows of edges, to the first failed read.
func unparkRows(edges []graph.RemoteEdges) error {
	for i := range edges {
		if err := edges[i].UnparkRows(); err != nil {
			return err
		}
	}
	return nil
}

// nodeVals are PropagateMax's values of one process's receive-like nodes
// inside a call, in node order (the order Analyze's loop and addSyncs
// read them in): the latest enter of the senders as a difference from
// the call's enter, and minus the earliest exit as one from the call's
// exit (wrapping: exact for any times), each none (math.MinInt64) flagged
// by a bit. At most about 8 bytes a node against graph.Maxima's 16 and its
// bit a node of every node, kept as the values arrive
// (graph.PropagateMaxTo), and each process's go once its points are made:
// on the 64-process pure-MPI trace Maxima was 26 MiB at the loop's end.
// The differences are 4 bytes each (narrow.Column, a value that does not
// fit kept aside): in a narrow.Step of the narrowest width most fit they
// took 3 bytes a node on the 10 M-event halo, 2.6 MiB less at the wait
// states' peak, which lies under the critical path's, for 1.5 % more
// instructions on a pure-MPI trace (the values are set as they arrive, in
// no order).
type nodeVals struct {
	lat, ex narrow.Column[int32]
	none    []uint64 // bit 2j: node j's latest is none; 2j+1: its earliest
	// The latest progress point of the members a nonblocking
	// collective's completion waits for and its member (progress.go), by
	// j, as progScale.enc packs it: only those nodes have one. Kept in
	// progD (one plus the value, 0 for none; progDense values, made at
	// the first) where the process's completions are a quarter or more
	// of its nodes here, else in progM: a map took 63 bytes a completion
	// on 16 processes of nonblocking collectives (16 MB of the wait
	// states' peak of the 1.5 M-event trace at --ranks 1), the slice 8 a
	// node.
	progD     []int64
	progM     map[int32]int64
	progDense int
}

// nodeValsParkMin is the least a process's nodes' values must hold for
// Analyze to park them.
const nodeValsParkMin = 16 << 10

// park writes the values to f until unpark (the bits of none stay).
func (nv *nodeVals) park(f packed.Spiller) error {
	if err := nv.lat.Park(f); err != nil {
		return err
	}
	return nv.ex.Park(f)
}

// unpark reads back what park wrote.
func (nv *nodeVals) unpark() error {
	if err := nv.lat.Unpark(); err != nil {
		return err
	}
	return nv.ex.Unpark()
}

// makeNodeVals returns n nodes' values, each none.
func makeNodeVals(n int) nodeVals {
	var nv nodeVals
	nv.lat.Reserve(n)
	nv.ex.Reserve(n)
	for range n {
		nv.lat.Append(0)
		nv.ex.Append(0)
	}
	nv.none = make([]uint64, (n+31)/32)
	for w := range nv.none {
		nv.none[w] = ^uint64(0)
	}
	return nv
}

// max makes node j's values (at's) the larger, per column, of what they
// were and v, in the call of enter and exit; a value of v that is
// math.MinInt64 changes nothing.
func (nv *nodeVals) max(j int, v []int64, enter, exit int64) {
	// A node's first value (a message's only one) is taken without
	// reading the none it replaces.
	b := nv.none[j/32] >> (2 * (j % 32))
	if v[0] != math.MinInt64 && (b&1 != 0 || v[0] > nv.lat.At(j)+enter) {
		nv.lat.Set(j, v[0]-enter)
		nv.none[j/32] &^= 1 << (2 * (j % 32))
	}
	if v[1] != math.MinInt64 && (b&2 != 0 || v[1] > nv.ex.At(j)-exit) {
		nv.ex.Set(j, v[1]+exit)
		nv.none[j/32] &^= 2 << (2 * (j % 32))
	}
}

// at returns node j's values, in the call of enter and exit.
func (nv *nodeVals) at(j int, enter, exit int64) (latest, negEarliest int64) {
	latest, negEarliest = nv.lat.At(j)+enter, nv.ex.At(j)-exit
	b := nv.none[j/32] >> (2 * (j % 32))
	if b&1 != 0 {
		latest = math.MinInt64
	}
	if b&2 != 0 {
		negEarliest = math.MinInt64
	}
	return latest, negEarliest
}

// makeNodeVals returns, per process, the values of its receive-like
// nodes inside a call, the nodes Analyze's loop reads, each none yet,
// and the set of those nodes: a node's rank in it, less the rank of its
// process's first node, is its index in its process's values.
func (a *Analysis) makeNodeVals() ([]nodeVals, bitrank.Set) {
	m := a.m
	first := int(m.ProcNodes[len(m.Procs)])
	at := bitrank.Make(first, func(w int) uint64 {
		var b uint64
		for v := int32(w * 64); v < int32(min(first, w*64+64)); v++ {
			if m.Role[v] == graph.RoleRecv && a.callOf(v) >= 0 {
				b |= 1 << (v % 64)
			}
		}
		return b
	})
	out := make([]nodeVals, len(m.Procs))
	for i, p := range m.Procs {
		n := int(at.Before(m.ProcNodes[i+1]) - at.Before(m.ProcNodes[i]))
		out[i] = makeNodeVals(n)
		if done := p.Census.Kinds[trace.CollComplete]; done > 0 && int64(n) <= 4*done {
			out[i].progDense = n
		}
	}
	return out, at
}

// Delay is the waiting one process's delay in one call path caused, in
// one pattern (Böhme et al.'s delay costs, as Scalasca computes them): its
// excess time over the waiters' in their synchronization intervals, before
// the call they waited for. NS is the short-term cost (of the waits of
// Pattern it caused directly), LongTerm the long-term cost (of waits of
// Pattern its waits caused in turn, propagated back through them),
// Propagated the waiting charged to this call that no delay explains.
// Over all delays NS + LongTerm + Propagated is the waiting of the waits
// charged.
type Delay struct {
	Rank       int
	Label      string // the call path: code ("serial code", a region) or an MPI call site (its time outside waits)
	Site       string // the call waited for: "MPI_Send at file:line:col"
	Pattern    Pattern
	NS         int64
	LongTerm   int64
	Propagated int64
	Waits      int64
}

// lrFlag marks a delay record's thread: the wait is a Late Receiver's.
const lrFlag = int32(-1 << 31)

// siteName names call site st of process i ("MPI_Send at file:line:col"),
// "" for none.
func (a *Analysis) siteName(i int, st int32) string {
	if st < 0 {
		return ""
	}
	x := a.procs[i].sites[st]
	return trace.CallSiteName(&a.tp[i].Tables, x.fn, x.loc)
}

// labelName names a parallel region's location: "func (file:line:col)".
func (a *Analysis) labelName(i int, loc int64) string {
	t := &a.tp[i].Tables
	if loc <= -2 {
		return t.String(-2 - loc) // a user region (callRecorder.label)
	}
	if loc < 0 {
		return "serial code"
	}
	name := t.LocationName(loc)
	if loc < int64(len(t.Locations)) {
		if f := t.Locations[loc].Func; f != "" && f != name {
			return f + " (" + name + ")"
		}
	}
	return name
}

// edgeRows returns the set of nodes with a row in their process's edges
// (the matched predecessor: the sender, the root, or the collective's
// latest member), and, only when some process's rows are not in the
// order of their nodes, per node its row (−1: none). In order, a node's
// row is its rank in the set less that of its process's first node, and
// a row's node the next member (rowWalk): a bit a node where a node a row
// took 4 bytes (8.4 MB at the wait states' peak on the 10 M-event
// pure-MPI trace).
//
// The exchange lists a process's rows in the order of their nodes, so one
// walk of the nodes beside the rows finds them all; rows out of that order
// (none today) are looked up by thread and event.
func (a *Analysis) edgeRows(edges []graph.RemoteEdges) (rows []int32, has bitrank.Set) {
	m := a.m
	first := m.ProcNodes[len(m.Procs)]
	words := make([]uint64, (first+63)/64)
	inOrder := true
	for i := range m.Procs {
		if i >= len(edges) {
			break
		}
		e := &edges[i]
		k := 0
		for v := m.ProcNodes[i]; v < m.ProcNodes[i+1] && k < e.Len(); v++ {
			if m.Role[v] == graph.RoleRecv && m.ThreadOf(v) == e.ThreadAt(k) && m.EventOf(v) == e.EventAt(k) {
				words[v/64] |= 1 << (v % 64)
				k++
			}
		}
		if k < e.Len() {
			inOrder = false
		}
	}
	if inOrder {
		return nil, bitrank.Make(int(first), func(w int) uint64 { return words[w] })
	}
	words = nil
	rows = make([]int32, m.Len())
	for v := range rows {
		rows[v] = -1
	}
	for i := range m.Procs {
		if i >= len(edges) {
			break
		}
		e := &edges[i]
		for k := range e.Len() {
			if v := a.nodeAt(i, e.ThreadAt(k), e.EventAt(k)); v >= 0 {
				rows[v] = int32(k)
			}
		}
	}
	return rows, bitrank.Set{}
}

// rowWalk gives the nodes of one process's rows, asked in row order.
type rowWalk struct {
	a *Analysis
	i int
	v int32 // in node order: where row k's node is looked for
	k int
}

func (a *Analysis) walkRows(i int) rowWalk { return rowWalk{a: a, i: i, v: a.m.ProcNodes[i]} }

// node returns the node of row k (−1: none); the rows are asked in
// increasing order.
func (w *rowWalk) node(k int) int32 {
	a, m := w.a, w.a.m
	if a.edge != nil {
		e := &a.edges[w.i]
		return a.nodeAt(w.i, e.ThreadAt(k), e.EventAt(k))
	}
	for hi := m.ProcNodes[w.i+1]; w.v < hi; w.v++ {
		if m.Role[w.v] != graph.RoleRecv {
			continue
		}
		if _, ok := a.rowSet.Rank(w.v); ok {
			if w.k++; w.k-1 == k {
				w.v++
				return w.v - 1
			}
		}
	}
	return -1
}

// rowOf returns node v's row in process i's edges, −1 for none.
func (a *Analysis) rowOf(i int, v int32) int32 {
	if a.edge != nil {
		return a.edge[v]
	}
	if i < 0 || i >= len(a.edges) || i >= len(a.m.Procs) {
		return -1
	}
	r, ok := a.rowSet.Rank(v)
	if !ok {
		return -1
	}
	return r - a.rowSet.Before(a.m.ProcNodes[i])
}

// pred returns the world rank, thread and event of the matched
// predecessor of node v of process i; −1, 0, 0 for none.
func (a *Analysis) pred(i int, v int32) (proc, thread int32, event int64) {
	k := a.rowOf(i, v)
	if k < 0 {
		return -1, 0, 0
	}
	e := &a.edges[i]
	return e.PredProcAt(int(k)), e.PredThreadAt(int(k)), e.PredEventAt(int(k))
}

// clip returns the length of [b, e] inside [first, last].
func clip(b, e, first, last int64) int64 {
	return max(0, min(e, last)-max(b, first))
}

// blockingSend reports whether an MPI function is a blocking send that
// can wait until the receive begins (standard or synchronous mode; a
// buffered or ready send, and MPI_Sendrecv, cannot be a Late Receiver in
// Scalasca's definition either), waitCall whether it waits for requests
// (one or many): an MPI_Isend completed in it can. Late Receiver applies
// to them when the data shows the call ended after the receive began.
func blockingSend(fn string) bool {
	return strings.EqualFold(fn, "MPI_Send") || strings.EqualFold(fn, "MPI_Ssend")
}

func waitCall(fn string) bool {
	for _, w := range [...]string{"MPI_Wait", "MPI_Waitany", "MPI_Waitall", "MPI_Waitsome"} {
		if strings.EqualFold(fn, w) {
			return true
		}
	}
	return false
}

// A call site's function, as lateReceived reads it: a blocking send
// (siteSends), a wait for requests (siteWaits); siteKnown once looked at.
const (
	siteSends = 1 << iota
	siteWaits
	siteKnown
)

// siteKind returns the kind of call site st (blockingSend, waitCall),
// its function's name compared once per site, not per Late Receiver
// record (two to four case-insensitive compares each).
func (c *calls) siteKind(tb *trace.Tables, st int32) uint8 {
	if c.kinds == nil {
		c.kinds = make([]uint8, len(c.sites))
	}
	if c.kinds[st]&siteKnown == 0 {
		fn := tb.String(c.sites[st].fn)
		c.kinds[st] = siteKnown
		if blockingSend(fn) {
			c.kinds[st] |= siteSends
		}
		if waitCall(fn) {
			c.kinds[st] |= siteWaits
		}
	}
	return c.kinds[st]
}

// A receive-start record of lateReceivers: the sender's process, thread
// and event (its send node), the receive's start and the receiver's rank,
// the receive node's thread and event and the start event's (its
// mpi_recv_post, or the receive node itself for a blocking receive), and
// the exit of the call the receive began in.
const lrRecSize = 4 + 4 + 8 + 8 + 4 + 4 + 8 + 4 + 8 + 8

// lrWait is a call's Late Receiver wait, the receiver's rank and its
// receive node (thread and event), to which the wait's delay is charged,
// the sender's event that completed the send (its synchronization point)
// and the exit of the receiver's call where the receive began.
type lrWait struct {
	wait    int64
	cause   int32
	recvTh  int32
	recvEv  int64
	sendTh  int32
	call    int32 // the call that waited
	sendEv  int64
	reqExit int64
}

// lrCalls are one process's Late Receiver waits, by call: waits (48
// bytes each) until its synchronization points are made, then the
// receive nodes the heads name (recvCall, recvTh, recvEv: 13 bytes each,
// 16 as lrRecv structs).
type lrCalls struct {
	waits    []lrWait
	recvCall []int32
	recvTh   narrow.Step[int8, int16, int32]
	recvEv   []int64
}

// lrRecv is a Late Receiver wait's call and the receiver's node.
type lrRecv struct {
	call   int32
	recvTh int32
	recvEv int64
}

// wait returns the wait of call k (ok false: none).
func (l *lrCalls) wait(k int32) (w *lrWait, ok bool) {
	j, ok := slices.BinarySearchFunc(l.waits, k, func(x lrWait, k int32) int { return cmp.Compare(x.call, k) })
	if !ok {
		return nil, false
	}
	return &l.waits[j], true
}

// recv returns the receiver's node of call k's wait, after keepRecvs.
func (l *lrCalls) recv(k int32) lrRecv {
	j, ok := slices.BinarySearch(l.recvCall, k)
	if !ok {
		return lrRecv{call: k} // none: Analyze charges a Late Receiver only of the waits
	}
	return lrRecv{call: k, recvTh: int32(l.recvTh.At(j)), recvEv: l.recvEv[j]}
}

// sortWaits orders the waits by call, and keeps one a call: the longest,
// of the lowest cause among those, the first to come among equals.
func (l *lrCalls) sortWaits() {
	slices.SortStableFunc(l.waits, func(x, y lrWait) int {
		return cmp.Or(cmp.Compare(x.call, y.call), cmp.Compare(y.wait, x.wait), cmp.Compare(x.cause, y.cause))
	})
	l.waits = slices.CompactFunc(l.waits, func(x, y lrWait) bool { return x.call == y.call })
	if cap(l.waits) > len(l.waits)+len(l.waits)/8 {
		l.waits = slices.Clone(l.waits)
	}
}

// keepRecvs keeps of the waits what the heads read.
func (l *lrCalls) keepRecvs() {
	l.recvCall, l.recvEv = make([]int32, len(l.waits)), make([]int64, len(l.waits))
	l.recvTh.Reserve(len(l.waits))
	for j, w := range l.waits {
		l.recvCall[j], l.recvEv[j] = w.call, w.recvEv
		l.recvTh.Append(int64(w.recvTh))
	}
	l.waits = nil
}

// lrRound bounds the records a rank sends in one round of
// lateReceivers' exchange, so that they never take more than that (on the
// 10 M-event halo one Alltoallv of all of them held 12 MB at once; rounds
// of 1 MiB held 4 MB, the send and receive buffers of two ranks, at the
// wait states' peak; 256 KiB is 50 rounds there, each cheap).
const lrRound = 1 << 18

// lateReceivers finds the Late Receiver waits (Scalasca's definition):
// every receiver sends, for each point-to-point message, the time its
// receive began (the enter of the MPI_Irecv that posted it, or of the
// blocking receive) back to the sender's rank, in rounds of Alltoallv of
// at most lrRound bytes a rank; a blocking send, or the wait that
// completed an MPI_Isend, that began before that time and ended after it
// waited for the receiver from its own enter (a wait for many requests
// counts the longest such wait). It returns, per process, the waits by
// call index, and the edges for the critical path at the sender, and sets
// a.lrSources, the events they leave from, at the receiver. A call that
// waited for a sender too (a Late Sender, lsCalls) gets no edge: Analyze
// charges it the Late Sender, not the Late Receiver (Scalasca's rule for
// a wait for several requests), and the critical path leaves out that
// wait alone and comes through the sender, as Scalasca's path does.
func (a *Analysis) lateReceivers(c comm.Comm, owners graph.Owners, edges []graph.RemoteEdges) ([]lrCalls, error) {
	m := a.m
	out := make([]lrCalls, len(m.Procs))
	a.lrEdges = make([]graph.RemoteEdges, len(m.Procs))
	le := binary.LittleEndian
	// The messages whose record goes, in order: process i's edge row k
	// where sent[i] has bit k (a bit a row: found once, in one walk of
	// the rows' nodes).
	sent := make([][]uint64, len(m.Procs))
	var records int64
	for i := range m.Procs {
		if i >= len(edges) {
			break
		}
		e := &edges[i]
		w := a.walkRows(i)
		sent[i] = make([]uint64, (e.Len()+63)/64)
		for k := range e.Len() {
			if e.KindAt(k) != trace.MPIRecv || e.PredKindAt(k) != trace.MPISend {
				continue
			}
			if v := w.node(k); v >= 0 && a.callOf(v) >= 0 {
				sent[i][k/64] |= 1 << (k % 64)
				records++
			}
		}
	}
	perRound := int64(lrRound / lrRecSize)
	rounds, err := c.AllreduceInt64(comm.Max, []int64{(records + perRound - 1) / perRound})
	if err != nil {
		return nil, err
	}
	local := map[int]int{}
	for i, p := range m.Procs {
		local[p.Header.Rank] = i
	}
	var lerr error
	// A round's buffers are made at their size, from a count of its
	// records: appended, they grew by copying (five times their size in
	// garbage, 60 MB on the 10 M-event halo, which kept the heap at the
	// collector's goal). They are new each round: a receiver in this
	// process reads the sender's own buffers (comm.Comm's Alltoallv).
	need := make([]int, c.Size())
	ci, ck := 0, 0 // the next edge row to send
	var cw rowWalk
	if len(m.Procs) > 0 && len(edges) > 0 {
		cw = a.walkRows(0)
	}
	// round calls fn for the edge rows of the next round's records; w
	// gives their nodes (nil: not asked).
	round := func(w *rowWalk, fn func(i, k int, v int32)) {
		for n := int64(0); n < perRound && ci < len(m.Procs) && ci < len(edges); {
			if ck >= edges[ci].Len() {
				ci, ck = ci+1, 0
				if ci < len(m.Procs) && ci < len(edges) {
					cw = a.walkRows(ci)
				}
				continue
			}
			i, k := ci, ck
			ck++
			if sent[i][k/64]&(1<<(k%64)) != 0 {
				v := int32(-1)
				if w != nil {
					v = w.node(k)
				}
				fn(i, k, v)
				n++
			}
		}
	}
	for range rounds[0] {
		clear(need)
		at, atK, atW := ci, ck, cw
		round(nil, func(i, k int, _ int32) { need[owners.Owner(int(edges[i].PredProcAt(k)))] += lrRecSize })
		ci, ck, cw = at, atK, atW
		bufs := make([][]byte, c.Size())
		for q, n := range need {
			if n > 0 {
				bufs[q] = make([]byte, 0, n)
			}
		}
		round(&cw, func(i, k int, v int32) {
			e := &edges[i]
			start, sth, sev, end := a.enter(i, v), m.ThreadOf(v), m.EventOf(v), a.exit(i, v)
			if kc, th, idx, ok := a.reqOf(v); ok {
				start, sth, sev, end = a.procs[i].enterAt(kc), th, idx, a.procs[i].exitAt(kc)
			}
			to := owners.Owner(int(e.PredProcAt(k)))
			b := le.AppendUint32(bufs[to], uint32(e.PredProcAt(k)))
			b = le.AppendUint32(b, uint32(e.PredThreadAt(k)))
			b = le.AppendUint64(b, uint64(e.PredEventAt(k)))
			b = le.AppendUint64(b, uint64(start))
			b = le.AppendUint32(b, uint32(m.Procs[i].Header.Rank))
			b = le.AppendUint32(b, uint32(m.ThreadOf(v)))
			b = le.AppendUint64(b, uint64(m.EventOf(v)))
			b = le.AppendUint32(b, uint32(sth))
			b = le.AppendUint64(b, uint64(sev))
			bufs[to] = le.AppendUint64(b, uint64(end))
		})
		recv, err := c.Alltoallv(bufs)
		if err != nil {
			return nil, err
		}
		if lerr == nil {
			lerr = a.lateReceived(c, recv, local, out)
		}
	}
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	// The receivers learn which of their events an edge leaves from: the
	// buffers made at their size (appended, they grew by copying, the
	// wait states' peak on the 10 M-event pure-MPI trace).
	clear(need)
	for i := range a.lrEdges {
		e := &a.lrEdges[i]
		for k := range e.Len() {
			need[owners.Owner(int(e.PredProcAt(k)))] += 16
		}
	}
	bufs := make([][]byte, c.Size())
	for q, n := range need {
		if n > 0 {
			bufs[q] = make([]byte, 0, n)
		}
	}
	for i := range a.lrEdges {
		e := &a.lrEdges[i]
		for k := range e.Len() {
			to := owners.Owner(int(e.PredProcAt(k)))
			b := le.AppendUint32(bufs[to], uint32(e.PredProcAt(k)))
			b = le.AppendUint32(b, uint32(e.PredThreadAt(k)))
			bufs[to] = le.AppendUint64(b, uint64(e.PredEventAt(k)))
		}
	}
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	srcs := make([][]sim.EventRef, len(m.Procs))
	for q, buf := range recv {
		if len(buf)%16 != 0 && lerr == nil {
			lerr = fmt.Errorf("rank %d: waitstate: %d bytes of receive starts from rank %d", c.Rank(), len(buf), q)
			break
		}
		for ; len(buf) >= 16; buf = buf[16:] {
			proc := int(le.Uint32(buf))
			i, ok := local[proc]
			if !ok {
				if lerr == nil {
					lerr = fmt.Errorf("rank %d: waitstate: rank %d sent a receive start of process %d, not held here", c.Rank(), q, proc)
				}
				break
			}
			srcs[i] = append(srcs[i], sim.EventRef{Thread: int32(le.Uint32(buf[4:])), Event: int64(le.Uint64(buf[8:]))})
		}
	}
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	a.lrSources = make([]eventRefs, len(m.Procs))
	for i, l := range srcs {
		slices.SortFunc(l, sim.CompareEventRefs)
		a.lrSources[i] = packEventRefs(l)
		srcs[i] = nil
	}
	for i := range out {
		out[i].sortWaits()
	}
	return out, nil
}

// lateReceived applies one round of lateReceivers' records: for each of
// this rank's sends that waited for its receiver, the wait of the call
// that completed it (the latest receive start inside it) and the edge.
func (a *Analysis) lateReceived(c comm.Comm, recv [][]byte, local map[int]int, out []lrCalls) error {
	m := a.m
	le := binary.LittleEndian
	for q, buf := range recv {
		if len(buf)%lrRecSize != 0 {
			return fmt.Errorf("rank %d: waitstate: %d bytes of receive times from rank %d", c.Rank(), len(buf), q)
		}
		for ; len(buf) > 0; buf = buf[lrRecSize:] {
			proc, th := int(le.Uint32(buf)), int32(le.Uint32(buf[4:]))
			ev, t := int64(le.Uint64(buf[8:])), int64(le.Uint64(buf[16:]))
			from := int32(le.Uint32(buf[24:]))
			rth, rev := int32(le.Uint32(buf[28:])), int64(le.Uint64(buf[32:]))
			sth, sev := int32(le.Uint32(buf[40:])), int64(le.Uint64(buf[44:]))
			reqExit := int64(le.Uint64(buf[52:]))
			i, ok := local[proc]
			if !ok {
				return fmt.Errorf("rank %d: waitstate: rank %d sent a receive time for process %d, not held here", c.Rank(), q, proc)
			}
			v := a.nodeAt(i, th, ev)
			if v < 0 || a.callOf(v) < 0 {
				continue
			}
			cs := &a.procs[i]
			// The call that completed the send, and the event in it.
			k, dth, dev, kind := a.callOf(v), th, ev, trace.MPISend
			if kc, cth, cidx, ok := a.reqOf(v); ok {
				k, dth, dev, kind = kc, cth, cidx, trace.MPIRequestDone
				if cs.siteKind(&m.Procs[i].Tables, cs.siteAt(k))&siteWaits == 0 {
					continue
				}
			} else if cs.siteKind(&m.Procs[i].Tables, cs.siteAt(k))&siteSends == 0 {
				continue
			}
			b, e := cs.enterAt(k), cs.exitAt(k)
			if t <= b || e <= t {
				continue
			}
			pk := trace.MPIRecv
			if sth != rth || sev != rev {
				pk = trace.MPIRecvPost
			}
			if !a.lateSenderCall(i, k) {
				a.lrEdges[i].Append(dth, dev, kind, from, sth, sev, pk, t)
			}
			// Each wait of the call: lateReceivers keeps the longest.
			out[i].waits = append(double(out[i].waits, 1), lrWait{wait: t - b, cause: from, recvTh: rth, recvEv: rev,
				sendTh: dth, call: k, sendEv: dev, reqExit: reqExit})
		}
	}
	return nil
}

// lateSenderCall reports whether local process i's call k waited for a
// sender (lsCalls).
func (a *Analysis) lateSenderCall(i int, k int32) bool {
	ls := a.lsCalls[i]
	return ls != nil && ls[k/64]&(1<<(k%64)) != 0
}

// LateReceiverEdges returns local process i's Late Receiver edges (it is
// the sender), after Analyze, as rows to append to its RemoteEdges: a
// Late Receiver's happened-before edge, for the critical path, says the
// send that waited could not complete before the receive began. Its
// target is an event of the sender's (the blocking send's mpi_send, or
// the mpi_request_done of an MPI_Isend in the wait that completed it),
// its source an event of the receiver's (the mpi_recv_post of the
// MPI_Irecv that posted the receive, or the blocking receive's mpi_recv)
// and the time the receive began. Kept as the edges' narrow rows (about
// 13 bytes each where a struct took 40 and its slice grew by doubling).
func (a *Analysis) LateReceiverEdges(i int) *graph.RemoteEdges {
	if i < len(a.lrEdges) {
		return &a.lrEdges[i]
	}
	return &graph.RemoteEdges{}
}

// LateReceiverSources returns the events of local process i (it is the
// receiver) that Late Receiver edges leave from, sorted by thread and
// event, after Analyze (sim.FragPass.Sources).
func (a *Analysis) LateReceiverSources(i int) []sim.EventRef {
	if i < len(a.lrSources) {
		return a.lrSources[i].refs()
	}
	return nil
}

// addSources adds srcs[i], events of local process i that edges found
// after the Late Receiver's (progress, lock releases) leave from, to its
// sources: kept sorted, each once.
func (a *Analysis) addSources(srcs [][]sim.EventRef) {
	for i, l := range srcs {
		if len(l) == 0 {
			continue
		}
		l = append(l, a.lrSources[i].refs()...)
		slices.SortFunc(l, sim.CompareEventRefs)
		a.lrSources[i] = packEventRefs(slices.Compact(l))
	}
}

// eventRefs are events (thread, index), 9 bytes each where a
// sim.EventRef takes 16 (the Late Receiver sources: 2.6 MB of the wait
// states' peak on the 10 M-event pure-MPI trace).
type eventRefs struct {
	th narrow.Step[int8, int16, int32]
	ev []int64
}

func packEventRefs(l []sim.EventRef) eventRefs {
	var r eventRefs
	if len(l) == 0 {
		return r
	}
	r.th.Reserve(len(l))
	r.ev = make([]int64, len(l))
	for j, e := range l {
		r.th.Append(int64(e.Thread))
		r.ev[j] = e.Event
	}
	return r
}

// refs returns the events as sim.EventRefs (nil for none).
func (r *eventRefs) refs() []sim.EventRef {
	if len(r.ev) == 0 {
		return nil
	}
	out := make([]sim.EventRef, len(r.ev))
	for j, ev := range r.ev {
		out[j] = sim.EventRef{Thread: int32(r.th.At(j)), Event: ev}
	}
	return out
}

// nodeAt returns process i's node of (thread th, event ev), or −1, by
// bisection of the thread's nodes in event order: the process's own when
// they are all on one thread (pure MPI), else threadNodes's list. On one
// thread it gallops from the node found last when ev is past it (the
// records and the tasks ask in event order, mostly).
func (a *Analysis) nodeAt(i int, th int32, ev int64) int32 {
	m := a.m
	t := a.soleThread(i)
	if t < 0 {
		return findNode(m, a.threadNodes(i), th, ev)
	}
	if th != t {
		return -1
	}
	lo, hi := m.ProcNodes[i], m.ProcNodes[i+1]
	if h := a.nodeHint[i]; h < hi && m.EventOf(h) < ev {
		step := int32(1)
		for h+step < hi && m.EventOf(h+step) < ev {
			step *= 2
		}
		lo, hi = h+step/2+1, min(h+step, hi)
	}
	for lo < hi {
		h := lo + (hi-lo)/2
		if m.EventOf(h) < ev {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < m.ProcNodes[i+1] && m.EventOf(lo) == ev {
		a.nodeHint[i] = lo
		return lo
	}
	return -1
}

// soleThread returns the thread all of process i's nodes are on, −1 for
// several or none; found once (Record's recorder, then nodeAt's).
func (a *Analysis) soleThread(i int) int32 {
	m := a.m
	if a.oneThread == nil {
		a.oneThread = make([]int32, len(m.Procs))
		a.nodeHint = make([]int32, len(m.Procs))
		for j := range a.oneThread {
			a.oneThread[j] = -2 // not known yet
			a.nodeHint[j] = m.ProcNodes[j]
		}
	}
	t := a.oneThread[i]
	if t == -2 {
		lo, hi := m.ProcNodes[i], m.ProcNodes[i+1]
		t = -1
		if lo < hi {
			t = m.ThreadOf(lo)
			for v := lo + 1; v < hi && t >= 0; v++ {
				if m.ThreadOf(v) != t {
					t = -1
				}
			}
		}
		a.oneThread[i] = t
	}
	return t
}

// threadNodes returns process i's nodes per thread, in event order. It is
// made once per process (Analyze's lookups of senders, receivers and
// causes all use it) in one array sized by a first count.
func (a *Analysis) threadNodes(i int) [][]int32 {
	if a.byThread == nil {
		a.byThread = make([][][]int32, len(a.m.Procs))
	}
	if out := a.byThread[i]; out != nil {
		return out
	}
	m := a.m
	n := 0
	for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
		n = max(n, int(m.ThreadOf(v))+1)
	}
	a.byThread[i] = nodesByThread(m, i, n)
	return a.byThread[i]
}

// nodesByThread returns process i's nodes on threads 0…n−1, per thread in
// event order (nodes are in the process's merged order): one array sized
// by a first count, not n grown by appending.
func nodesByThread(m *graph.Matching, i, n int) [][]int32 {
	count := make([]int, n)
	for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
		if th := int(m.ThreadOf(v)); th >= 0 && th < n {
			count[th]++
		}
	}
	all := make([]int32, 0, m.ProcNodes[i+1]-m.ProcNodes[i])
	out := make([][]int32, n)
	for th, k := range count {
		out[th] = all[len(all) : len(all) : len(all)+k]
		all = all[:len(all)+k]
	}
	for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
		if th := int(m.ThreadOf(v)); th >= 0 && th < n {
			out[th] = append(out[th], v)
		}
	}
	return out
}

// findNode returns the node of (thread, event) among nodes, or −1.
func findNode(m *graph.Matching, nodes [][]int32, th int32, ev int64) int32 {
	if th < 0 || int(th) >= len(nodes) {
		return -1
	}
	ns := nodes[th]
	k, ok := slices.BinarySearchFunc(ns, ev, func(v int32, ev int64) int {
		switch {
		case m.EventOf(v) < ev:
			return -1
		case m.EventOf(v) > ev:
			return 1
		}
		return 0
	})
	if !ok {
		return -1
	}
	return ns[k]
}

// eachRecord calls f on each size-byte record of the buffers every rank
// sent (recv[q] from rank q), in rank order: a buffer that is not whole
// records, or f's error, ends the walk with that error (the caller agrees
// on it with the other ranks before it goes on).
func eachRecord(me int, recv [][]byte, size int, what string, f func(q int, rec []byte) error) error {
	for q, buf := range recv {
		if len(buf)%size != 0 {
			return fmt.Errorf("rank %d: waitstate: %d bytes of %s from rank %d", me, len(buf), what, q)
		}
		for ; len(buf) > 0; buf = buf[size:] {
			if err := f(q, buf[:size]); err != nil {
				return err
			}
		}
	}
	return nil
}
