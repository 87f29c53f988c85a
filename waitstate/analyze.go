package waitstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/trace"
)

// Row is one process's MPI time at one call site, split into the patterns.
// Rank 0 receives O(processes × call sites) of them.
type Row struct {
	Rank   int
	Func   string
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
// process's excess computation (Delay), and gathers the rows at rank 0
// (nil elsewhere). edges are the processes' matched predecessors
// (graph.ExchangeEdges) and owners maps a process to its analysis rank:
// Late Receiver waits are known at the receiver and needed at the sender,
// delays are known at the waiter and measured at the cause. Times are cut
// to the window [first, last]. Collective; an error is returned on every
// rank.
func (a *Analysis) Analyze(c comm.Comm, owners graph.Owners, edges []graph.RemoteEdges, first, last int64) ([]Row, []Cause, []Delay, error) {
	m := a.m
	vals, err := graph.PropagateMax(c, m, 2, func(n int32, v []int64) {
		v[0], v[1] = a.enter[n], math.MinInt64
		if a.enter[n] != math.MinInt64 {
			v[1] = -a.enter[n]
		}
	})
	if err != nil {
		return nil, nil, nil, err
	}
	lr, err := a.lateReceivers(c, owners, edges)
	if err != nil {
		return nil, nil, nil, err
	}
	pred, predTh, predEv := a.predProcs(edges)
	// Waits travel to their cause's rank for the delay costs: cause
	// process, its thread and event, the waiter's gap and the wait.
	delayBufs := make([][]byte, c.Size())
	le := binary.LittleEndian
	var rows []Row
	type causeKey struct {
		rank int32
		site site // of the waiter's process
		proc int  // the waiter's, for whom site ids are meaningful
		pat  Pattern
	}
	causes := map[causeKey]*Cause{}
	var causeOrder []causeKey
	for i, p := range m.Procs {
		cs := &a.procs[i]
		n := len(cs.enter)
		wait := make([]int64, n)
		pat := make([]Pattern, n)
		cause := make([]int32, n)
		causeNode := make([]int32, n)
		// Collectives first: a call holding both a collective and a
		// message (none in MPI) is charged to the collective.
		for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
			k := a.call[v]
			if k < 0 || m.Role[v] != graph.RoleRecv {
				continue
			}
			enter := cs.enter[k]
			var w int64
			var pt Pattern
			switch m.Kind[v] {
			case trace.MPIRecv:
				if t := vals[2*v]; t != math.MinInt64 {
					w, pt = t-enter, LateSender
				}
			case trace.CollEnd:
				op := trace.CollOp(a.op[v])
				switch {
				case !op.Valid():
				case op == trace.CollBarrier:
					w, pt = vals[2*v]-enter, WaitBarrier
				case op.Class() == trace.AllToAll:
					w, pt = vals[2*v]-enter, WaitNxN
				case op.Class() == trace.OneToAll:
					w, pt = vals[2*v]-enter, LateBroadcast
				case op.Class() == trace.AllToOne:
					// Until the first sender entered: before it no
					// data could have been sent (Scalasca).
					if t := vals[2*v+1]; t != math.MinInt64 {
						w, pt = -t-enter, EarlyReduce
					}
				}
				if vals[2*v] == math.MinInt64 {
					pt = None
				}
			default:
				continue
			}
			if pt == None {
				continue
			}
			coll := pt != LateSender
			switch {
			case pat[k] == None, coll && pat[k] == LateSender:
				pat[k], wait[k], cause[k], causeNode[k] = pt, w, pred[v], v
			case pat[k] == pt && (w > wait[k] || w == wait[k] && pred[v] < cause[k]):
				wait[k], cause[k], causeNode[k] = w, pred[v], v
			}
		}
		for k, lw := range lr[i] {
			if pat[k] == None {
				pat[k], wait[k], cause[k] = LateReceiver, lw.wait, lw.cause
			}
		}
		byProc := make([]Row, len(cs.sites))
		tb := &p.Tables
		for s, st := range cs.sites {
			byProc[s] = Row{Rank: p.Header.Rank, Func: tb.String(st.fn)}
			if st.region >= 0 {
				byProc[s].Region = tb.String(st.region)
			}
		}
		for k := 0; k < n; k++ {
			b, e := cs.enter[k], cs.exit[k]
			row := &byProc[cs.site[k]]
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
			if w := min(wait[k], e-b); pat[k] != None && w > 0 {
				if cw := clip(b, b+w, first, last); cw > 0 {
					row.Wait[pat[k]] += cw
					row.Count[pat[k]]++
					if cause[k] >= 0 {
						ck := causeKey{cause[k], cs.sites[cs.site[k]], i, pat[k]}
						x, ok := causes[ck]
						if !ok {
							x = &Cause{Rank: int(cause[k]), Func: row.Func, Region: row.Region, Pattern: pat[k]}
							causes[ck] = x
							causeOrder = append(causeOrder, ck)
						}
						x.NS += cw
						x.Calls++
						if pat[k] != LateReceiver {
							v := causeNode[k]
							to := owners.Owner(int(cause[k]))
							b := le.AppendUint32(delayBufs[to], uint32(cause[k]))
							b = le.AppendUint32(b, uint32(predTh[v]))
							b = le.AppendUint64(b, uint64(predEv[v]))
							b = le.AppendUint64(b, uint64(cs.gap[k]))
							delayBufs[to] = le.AppendUint64(b, uint64(cw))
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
	}
	// Merge over this rank's processes (sites are per process, names
	// are not): one row per (cause, site name, pattern).
	type nameKey struct {
		rank       int
		fn, region string
		pat        Pattern
	}
	merged := map[nameKey]int{}
	var cs []Cause
	for _, ck := range causeOrder {
		x := causes[ck]
		nk := nameKey{x.Rank, x.Func, x.Region, x.Pattern}
		if j, ok := merged[nk]; ok {
			cs[j].NS += x.NS
			cs[j].Calls += x.Calls
			continue
		}
		merged[nk] = len(cs)
		cs = append(cs, *x)
	}
	delays, err := a.delayCosts(c, delayBufs)
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := reduce.GatherRows(c, rows)
	allCauses, err2 := reduce.GatherRows(c, cs)
	allDelays, err3 := reduce.GatherRows(c, delays)
	return all, allCauses, allDelays, errors.Join(err, err2, err3)
}

// Delay is the waiting one process's excess computation caused, by the
// code it ran (Böhme et al.'s short-term delay cost): for every wait it
// caused, the part its time outside MPI since its previous synchronizing
// call exceeds the waiter's over the same stretch, at most the wait. What
// remains of the waits it caused (Propagated) came from waits or delays
// before that stretch.
type Delay struct {
	Rank       int
	Label      string // the parallel region it ran last before the call waited for, or "serial code"
	NS         int64  // short-term delay cost
	Propagated int64
	Waits      int64
}

const delayRecSize = 4 + 4 + 8 + 8 + 8

// delayCosts receives the waits this rank's processes caused and charges
// them to the excess computation before the calls waited for.
func (a *Analysis) delayCosts(c comm.Comm, bufs [][]byte) ([]Delay, error) {
	m := a.m
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	local := map[int]int{}
	for i, p := range m.Procs {
		local[p.Header.Rank] = i
	}
	type key struct {
		proc  int
		label int64
	}
	idx := map[key]int{}
	var out []Delay
	nodes := make([][][]int32, len(m.Procs))
	var lerr error
	for q, buf := range recv {
		if len(buf)%delayRecSize != 0 {
			lerr = fmt.Errorf("rank %d: waitstate: %d bytes of waits from rank %d", c.Rank(), len(buf), q)
			break
		}
		for ; len(buf) > 0 && lerr == nil; buf = buf[delayRecSize:] {
			proc, th := int(le.Uint32(buf)), int32(le.Uint32(buf[4:]))
			ev, gapW, w := int64(le.Uint64(buf[8:])), int64(le.Uint64(buf[16:])), int64(le.Uint64(buf[24:]))
			i, ok := local[proc]
			if !ok {
				lerr = fmt.Errorf("rank %d: waitstate: rank %d sent a wait caused by process %d, not held here", c.Rank(), q, proc)
				break
			}
			if nodes[i] == nil {
				nodes[i] = a.threadNodes(i)
			}
			label := int64(-1)
			var short int64
			if v := findNode(m, nodes[i], th, ev); v >= 0 && a.call[v] >= 0 {
				cs := &a.procs[i]
				k := a.call[v]
				label = cs.label[k]
				if gapD := cs.gap[k]; gapD >= 0 && gapW >= 0 {
					short = min(w, max(0, gapD-gapW))
				}
			}
			kk := key{i, label}
			j, ok := idx[kk]
			if !ok {
				j = len(out)
				idx[kk] = j
				out = append(out, Delay{Rank: proc, Label: a.labelName(i, label)})
			}
			out[j].NS += short
			out[j].Propagated += w - short
			out[j].Waits++
		}
		if lerr != nil {
			break
		}
	}
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	// Rows in process order, then by first appearance: the same for any
	// number of ranks once rank 0 sums them by (rank, label).
	slices.SortStableFunc(out, func(x, y Delay) int { return x.Rank - y.Rank })
	return out, nil
}

// labelName names a parallel region's location: "func (file:line:col)".
func (a *Analysis) labelName(i int, loc int64) string {
	if loc < 0 {
		return "serial code"
	}
	t := &a.m.Procs[i].Tables
	name := t.LocationName(loc)
	if loc < int64(len(t.Locations)) {
		if f := t.Locations[loc].Func; f != "" && f != name {
			return f + " (" + name + ")"
		}
	}
	return name
}

// predProcs returns, per node, the world rank of its matched predecessor
// (graph.ExchangeEdges: the sender, the root, or the collective's latest
// member), −1 for none.
func (a *Analysis) predProcs(edges []graph.RemoteEdges) (out, thread []int32, event []int64) {
	m := a.m
	out, thread, event = make([]int32, m.Len()), make([]int32, m.Len()), make([]int64, m.Len())
	for v := range out {
		out[v] = -1
	}
	for i := range m.Procs {
		if i >= len(edges) {
			break
		}
		e := &edges[i]
		nodes := a.threadNodes(i)
		for k := range e.Thread {
			if v := findNode(m, nodes, e.Thread[k], e.Event[k]); v >= 0 {
				out[v], thread[v], event[v] = e.PredProc[k], e.PredThread[k], e.PredEvent[k]
			}
		}
	}
	return out, thread, event
}

// clip returns the length of [b, e] inside [first, last].
func clip(b, e, first, last int64) int64 {
	return max(0, min(e, last)-max(b, first))
}

// blockingSend reports whether an MPI function's send can block until
// the receive begins (synchronous mode, or a message too large for the
// eager protocol): Late Receiver applies to them when the data shows the
// call ended after the receive began.
func blockingSend(fn string) bool {
	return strings.EqualFold(fn, "MPI_Send") || strings.EqualFold(fn, "MPI_Ssend")
}

const lrRecSize = 4 + 4 + 8 + 8 + 4

// lrWait is a blocking send's Late Receiver wait and the receiver's rank.
type lrWait struct {
	wait  int64
	cause int32
}

// lateReceivers returns, per process, the Late Receiver wait of its
// blocking sends by call index: every receiver sends the enter time of
// its receive call back to the sender's rank (one Alltoallv of one record
// per point-to-point message), and a blocking send whose call ended after
// that time waited for it from its own enter.
func (a *Analysis) lateReceivers(c comm.Comm, owners graph.Owners, edges []graph.RemoteEdges) ([]map[int32]lrWait, error) {
	m := a.m
	out := make([]map[int32]lrWait, len(m.Procs))
	bufs := make([][]byte, c.Size())
	le := binary.LittleEndian
	for i := range m.Procs {
		if i >= len(edges) {
			break
		}
		e := &edges[i]
		nodes := a.threadNodes(i)
		for k := range e.Thread {
			if e.Kind[k] != trace.MPIRecv || e.PredKind[k] != trace.MPISend {
				continue
			}
			v := findNode(m, nodes, e.Thread[k], e.Event[k])
			if v < 0 || a.call[v] < 0 {
				continue
			}
			to := owners.Owner(int(e.PredProc[k]))
			b := le.AppendUint32(bufs[to], uint32(e.PredProc[k]))
			b = le.AppendUint32(b, uint32(e.PredThread[k]))
			b = le.AppendUint64(b, uint64(e.PredEvent[k]))
			b = le.AppendUint64(b, uint64(a.enter[v]))
			bufs[to] = le.AppendUint32(b, uint32(m.Procs[i].Header.Rank))
		}
	}
	recv, err := c.Alltoallv(bufs)
	if err != nil {
		return nil, err
	}
	local := map[int]int{}
	for i, p := range m.Procs {
		local[p.Header.Rank] = i
	}
	var lerr error
	nodes := make([][][]int32, len(m.Procs))
	for q, buf := range recv {
		if len(buf)%lrRecSize != 0 {
			lerr = fmt.Errorf("rank %d: waitstate: %d bytes of receive times from rank %d", c.Rank(), len(buf), q)
			break
		}
		for ; len(buf) > 0; buf = buf[lrRecSize:] {
			proc, th := int(le.Uint32(buf)), int32(le.Uint32(buf[4:]))
			ev, t := int64(le.Uint64(buf[8:])), int64(le.Uint64(buf[16:]))
			from := int32(le.Uint32(buf[24:]))
			i, ok := local[proc]
			if !ok {
				lerr = fmt.Errorf("rank %d: waitstate: rank %d sent a receive time for process %d, not held here", c.Rank(), q, proc)
				break
			}
			if nodes[i] == nil {
				nodes[i] = a.threadNodes(i)
			}
			v := findNode(m, nodes[i], th, ev)
			if v < 0 || a.call[v] < 0 {
				continue
			}
			cs := &a.procs[i]
			k := a.call[v]
			if !blockingSend(m.Procs[i].Tables.String(cs.sites[cs.site[k]].fn)) {
				continue
			}
			if b, e := cs.enter[k], cs.exit[k]; t > b && e > t {
				if out[i] == nil {
					out[i] = map[int32]lrWait{}
				}
				if w, ok := out[i][k]; !ok || t-b > w.wait || t-b == w.wait && from < w.cause {
					out[i][k] = lrWait{t - b, from}
				}
			}
		}
		if lerr != nil {
			break
		}
	}
	if err := comm.Agree(c, lerr); err != nil {
		return nil, err
	}
	return out, nil
}

// threadNodes returns process i's nodes per thread, in event order.
func (a *Analysis) threadNodes(i int) [][]int32 {
	m := a.m
	var out [][]int32
	for v := m.ProcNodes[i]; v < m.ProcNodes[i+1]; v++ {
		th := int(m.Thread[v])
		if th < 0 {
			continue
		}
		for len(out) <= th {
			out = append(out, nil)
		}
		out[th] = append(out[th], v)
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
		case m.Event[v] < ev:
			return -1
		case m.Event[v] > ev:
			return 1
		}
		return 0
	})
	if !ok {
		return -1
	}
	return ns[k]
}
