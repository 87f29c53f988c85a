package graph

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// Longest holds the longest-path values of a weighted distributed DAG: for
// every local node its earliest finish EF (the heaviest path ending with
// it, its own weight included) and, when asked, BL (the heaviest path
// starting with it); the span is the largest EF over all ranks.
type Longest struct {
	ef   *vstore // EF, read with EFAt (narrow from LongestPathsOf on a DAG built OutsOnly)
	BL   []int64
	Arg  *ArgColumn // the input that gave each node's EF: chain predecessor or explicit input
	Span int64
	// End names the node the critical path ends at: its rank and local id
	// (ties between equal EFs go to the smallest key).
	End NodeRef
	// Order is the forward replay's order on a DAG built OutsOnly, for
	// BackLengths.
	Order *Order
	// ties are the forward replay's tied inputs (LongestPathsFollowing),
	// for OnLongestPathsColumn.
	ties *tieLog
	// weighed: the forward replay read the weights from its store
	// (LongestPathsWeighted), and a node's start EF − w is its Arg's EF
	// (startOf): slotVal holds the EFs that came for its in-slots.
	weighed bool
	slotVal slotCol
}

// startOf returns local node n's earliest start, EF − w, after
// LongestPathsWeighted: its Arg's EF, 0 for a node without inputs. A
// node's EF is its weight plus the largest of its inputs' EFs, which its
// Arg has (ReplayOptions.ChainArg); with weights whose sums do not wrap
// (narrow.Framed.Summable) no EF does, so the difference is the weight
// exactly.
func (lp *Longest) startOf(ef *vstore, n int32) int64 {
	e := lp.Arg.At(n)
	switch {
	case e == NoEntry:
		return 0
	case e >= 0:
		return ef.get(int32(e))
	}
	return lp.slotVal.get(int32(^e))
}

// WeightStore is a forward replay's store of values holding the nodes'
// weights until it writes their EFs (LongestPathsWeighted): a node's
// bytes hold its weight, then its EF, where a column of weights beside
// the EFs took 1–3 bytes a node more at the critical path's peak.
type WeightStore struct{ v vstore }

// NewWeightStore returns a store of the weights of w, whose sums must
// not wrap (w.Summable(): a weight past 2³² is kept in a block kept
// whole, as one past the store's width). A parked w is read from its file a
// piece at a time and stays parked (narrow.Framed.Blocks): the store and
// the whole column never coexist.
func NewWeightStore(w *narrow.Framed) (*WeightStore, error) {
	if !w.Summable() {
		return nil, errors.New("graph: negative weights, or weights whose sums wrap, are not kept in a store")
	}
	v, err := newWeightStore(w, w.Len())
	if err != nil {
		return nil, fmt.Errorf("graph: weights: %w", err)
	}
	return &WeightStore{v: v}, nil
}

// NewWeightStoreOf returns a store of n weights that fill adds in node
// order, each in [0, 2³²): made from where the weights are kept (a
// process's packed fragment weights) without a column of them first.
func NewWeightStoreOf(n int, fill func(add func(x int64))) (*WeightStore, error) {
	v := newNarrowStore(n)
	v.done = make([]uint64, (n+63)/64)
	k, bad := 0, int64(-1)
	fill(func(x int64) {
		if k < n && uint64(x) < 1<<32 {
			v.setWeight(int32(k), x)
		} else if bad < 0 && k < n {
			bad = int64(k)
		}
		k++
	})
	switch {
	case bad >= 0:
		return nil, fmt.Errorf("graph: weights: node %d weighs outside [0, 2³²)", bad)
	case k != n:
		return nil, fmt.Errorf("graph: weights: %d for %d nodes", k, n)
	}
	return &WeightStore{v: v}, nil
}

// Len returns the number of nodes.
func (s *WeightStore) Len() int { return s.v.len() }

// LongestPathsWeighted is LongestPathsFollowing with the weights in s,
// which it consumes: its values become the EFs. The weights' column is
// not read (OnLongestPathsColumn's starts are the arguments' EFs), so
// the caller may park it until the path's summary.
func LongestPathsWeighted(c comm.Comm, g *DAG, s *WeightStore, key func(n int32) int64) (*Longest, error) {
	if s.Len() != int(g.Len()) {
		return nil, fmt.Errorf("graph: %d weights for %d nodes", s.Len(), g.Len())
	}
	v := s.v
	s.v = vstore{}
	o := ReplayOptions{inStore: &v, KeysFollowNodes: true}
	if g.OutsOnly() {
		o.ties = &tieLog{limit: int(g.Len()/32) + 64}
	}
	return longestPaths(c, g, o, key, false)
}

// LongestPaths runs a forward replay (EF) and, with backward, a backward
// one (BL) over g with node weights w. On a DAG built OutsOnly the forward
// replay counts down the DAG's input counts (ReplayOptions.ConsumeCounts)
// and records its order for the backward (Longest.Order). key gives partition-independent tie
// keys (say, process<<32 | node index within the process), so the path
// chosen among equally long ones does not depend on the partition.
func LongestPaths(c comm.Comm, g *DAG, w []int64, key func(n int32) int64, backward bool) (*Longest, error) {
	return longestPaths(c, g, ReplayOptions{Weights: w}, key, backward)
}

// LongestPathsOf is LongestPaths with node n weighing weight(n), one call
// a node (weights kept narrower than int64, say). On a DAG built OutsOnly
// the forward values are kept narrow (ReplayOptions.NarrowValues: earliest
// finishes of nodes made one after another are close), read with EFAt.
func LongestPathsOf(c comm.Comm, g *DAG, weight func(n int32) int64, key func(n int32) int64, backward bool) (*Longest, error) {
	return longestPaths(c, g, ReplayOptions{Eval: weighing(weight), NarrowValues: g.OutsOnly()}, key, backward)
}

// LongestPathsFollowing is LongestPathsOf, without BL, with node n
// weighing w.At(n) (ReplayOptions.WeightsFramed), for tie keys that order the
// local nodes as their ids do (ReplayOptions.KeysFollowNodes): the
// critical path's keys, made of the process and the node's index in it,
// on a rank whose processes come in order.
//
// It also logs the tied inputs (at most one a 32 nodes) for
// OnLongestPathsColumn.
func LongestPathsFollowing(c comm.Comm, g *DAG, w *narrow.Framed, key func(n int32) int64) (*Longest, error) {
	return longestPathsFollowing(c, g, w, key, nil)
}

// longestPathsFollowing is LongestPathsFollowing in the arrays r holds
// (nil: none).
func longestPathsFollowing(c comm.Comm, g *DAG, w *narrow.Framed, key func(n int32) int64, r *Recycler) (*Longest, error) {
	o := ReplayOptions{WeightsFramed: w, NarrowValues: g.OutsOnly(), KeysFollowNodes: true, recycle: r}
	if g.OutsOnly() {
		o.ties = &tieLog{limit: int(g.Len()/32) + 64}
	}
	return longestPaths(c, g, o, key, false)
}

// Recycler keeps the per-node arrays of a longest-path replay whose values
// were consumed (OnLongestPathsColumn), its forward values and arguments,
// for the next replay on another DAG that they have room for: the critical
// path's processes, replayed one after the other, made them again for
// each, 8 bytes a node of garbage that the phase's collector (at +10 %)
// ran after. The zero Recycler holds nothing.
type Recycler struct {
	vals *vstore
	arg  *ArgColumn
}

// LongestPathsFollowing is the package's LongestPathsFollowing in the
// arrays r holds, when they have room.
func (r *Recycler) LongestPathsFollowing(c comm.Comm, g *DAG, w *narrow.Framed, key func(n int32) int64) (*Longest, error) {
	return longestPathsFollowing(c, g, w, key, r)
}

// OnLongestPathsColumn is the package's OnLongestPathsColumn, after which
// r keeps lp's forward values and arguments for the next replay.
func (r *Recycler) OnLongestPathsColumn(c comm.Comm, g *DAG, w *narrow.Framed, lp *Longest) (OnLongest, error) {
	ef, arg := lp.ef, lp.Arg
	on, err := OnLongestPathsColumn(c, g, w, lp)
	if err == nil {
		r.vals, r.arg = ef, arg
	}
	return on, err
}

// EFAt returns local node n's EF.
func (lp *Longest) EFAt(n int32) int64 { return lp.ef.get(n) }

// weighing is ReplayOptions.Weights' evaluation with the weights of a
// function.
func weighing(weight func(n int32) int64) func(n int32, x Input) int64 {
	return func(n int32, x Input) int64 { return heaviestOf(weight(n), &x) }
}

// longestPaths is LongestPaths with the weights of w (Weights or Eval).
func longestPaths(c comm.Comm, g *DAG, w ReplayOptions, key func(n int32) int64, backward bool) (*Longest, error) {
	o := ReplayOptions{Weights: w.Weights, WeightsFramed: w.WeightsFramed, Eval: w.Eval, TrackArg: true, ChainArg: true, TieKey: key, KeysFollowNodes: w.KeysFollowNodes, RecordOrder: g.OutsOnly(), ConsumeCounts: g.OutsOnly(), NarrowValues: w.NarrowValues, ties: w.ties, recycle: w.recycle, inStore: w.inStore}
	fw, err := Replay(c, g, o)
	if err != nil {
		return nil, err
	}
	lp := &Longest{ef: fw.vals, Arg: fw.Arg, Order: fw.Order, ties: fw.ties, weighed: w.inStore != nil, slotVal: fw.slotVal}
	lp.ef.done = nil // every value is written
	if backward {
		bw, err := backReplay(c, g, w, lp.Order, false)
		if err != nil {
			return nil, err
		}
		lp.BL = bw.Values
	}
	// The span and the node reaching it with the smallest key. With keys
	// that follow the ids, the local maximum's first node is that node
	// when the maximum is the span: one pass.
	span := int64(0)
	n := g.Len()
	first := int32(-1)
	for i := int32(0); i < n; i++ {
		if v := lp.ef.get(i); v > span {
			span, first = v, i
		}
	}
	g1, err := c.AllreduceInt64(comm.Max, []int64{span})
	if err != nil {
		return nil, err
	}
	lp.Span = g1[0]
	best := int64(math.MaxInt64)
	bestNode := int32(-1)
	switch {
	case w.KeysFollowNodes && span == lp.Span && first >= 0:
		best, bestNode = key(first), first
	case w.KeysFollowNodes && span == lp.Span:
		// Every node's EF is 0 (or none is above it): the first at 0.
		for i := int32(0); i < n; i++ {
			if lp.ef.get(i) == lp.Span {
				best, bestNode = key(i), i
				break
			}
		}
	case !w.KeysFollowNodes:
		for i := int32(0); i < n; i++ {
			if lp.ef.get(i) == lp.Span {
				if k := key(i); k < best {
					best, bestNode = k, i
				}
			}
		}
	}
	g2, err := c.AllreduceInt64(comm.Min, []int64{best})
	if err != nil {
		return nil, err
	}
	owner := int64(math.MaxInt64)
	if bestNode >= 0 && best == g2[0] {
		owner = int64(c.Rank())
	}
	g3, err := c.AllreduceInt64(comm.Min, []int64{owner})
	if err != nil {
		return nil, err
	}
	lp.End = NodeRef{Rank: -1, Node: -1}
	if g3[0] != math.MaxInt64 {
		lp.End.Rank = int(g3[0])
		if lp.End.Rank == c.Rank() {
			lp.End.Node = bestNode
		}
	}
	return lp, nil
}

// BackLengths runs the backward replay alone, node n weighing weight(n):
// for every local node, the heaviest path starting with it (Longest.BL),
// read with the result's Value. The values are narrow (ReplayOptions.
// NarrowValues: 4.1 bytes a node where a task graph's wide ones took 8,
// 7 MB of the 10 M-event stencil's critical-path peak): nodes made one
// after another start paths of similar lengths. A caller that needs BL
// only at some nodes can run it after dropping the forward values it no
// longer needs, so the two never coexist in full. After a forward replay
// that recorded its order on a DAG built OutsOnly (Longest.Order), it
// runs in the reverse of that order (ReplayInReverse); with ord nil it is
// Replay's, which on a DAG built InsOnly counts down the DAG's output
// counts (ConsumeCounts: OutDegree reads 0 afterwards).
func BackLengths(c comm.Comm, g *DAG, weight func(n int32) int64, ord *Order) (*Result, error) {
	return backReplay(c, g, ReplayOptions{Eval: weighing(weight)}, ord, true)
}

// BackLengthsFramed is BackLengths with node n weighing w.At(n)
// (ReplayOptions.WeightsFramed), read with no call a node.
func BackLengthsFramed(c comm.Comm, g *DAG, w *narrow.Framed, ord *Order) (*Result, error) {
	return backReplay(c, g, ReplayOptions{WeightsFramed: w}, ord, true)
}

// backReplay is BackLengths' replay with the weights of w (Weights,
// WeightsFramed or Eval), its values narrow when narrowValues is set
// (LongestPaths' BL are wide: Result.Values).
func backReplay(c comm.Comm, g *DAG, w ReplayOptions, ord *Order, narrowValues bool) (*Result, error) {
	o := ReplayOptions{Weights: w.Weights, WeightsFramed: w.WeightsFramed, Eval: w.Eval, NarrowValues: narrowValues}
	if ord == nil {
		o.Backward, o.ConsumeCounts = true, true
		return Replay(c, g, o)
	}
	return ReplayInReverse(c, g, ord, o)
}

// OnLongest tells, per local node, whether it lies on a longest path
// (OnLongestPaths).
type OnLongest struct{ on []uint64 }

// On reports whether local node n lies on some longest path of the DAG.
func (o OnLongest) On(n int32) bool { return bitAt(o.on, n) }

// OnLongestPaths marks the nodes that lie on a longest path, from the
// forward values alone: a node does when its EF is the span, or when some
// output (or its chain successor) does and starts exactly at the node's EF
// (a tight edge). That is EF + BL − w == span without BL: on any path from
// a node, each output starts no earlier than the node's EF, so the path's
// tail weighs span − EF exactly when every edge of it is tight and it ends
// at the span. It runs ReplayInReverse in the order lp recorded (a DAG
// built OutsOnly), the marks kept a bit a node and each node's value
// written over its EF: the start of its longest path through it (EF − w)
// when it is on one, else EF + 1. An output starts no earlier than the
// node's EF (its EF is at least that plus its weight, which is not
// negative), so an output off every longest path, at EF + 1 or more, is
// never taken for a tight one, and the minimum over the outputs is the
// node's EF exactly when a tight output is on a longest path. The values
// stay times near the node's own, which the forward values' narrow store
// holds as it holds them (a mark outside every time, as before, would
// not fit it). The forward values are consumed: lp.EFAt reads them no more.
// It is collective.
func OnLongestPaths(c comm.Comm, g *DAG, weight func(n int32) int64, lp *Longest) (OnLongest, error) {
	ef, span := lp.ef, lp.Span
	if ef == nil || int64(ef.len()) != int64(g.Len()) {
		return OnLongest{}, fmt.Errorf("graph: no forward values for %d nodes", g.Len())
	}
	lp.ef = nil
	on := make([]uint64, (int(g.Len())+63)/64)
	var negative int32 = -1
	_, err := ReplayInReverse(c, g, lp.Order, ReplayOptions{Min: true, into: ef, Eval: func(n int32, x Input) int64 {
		// ef.get(n) is still the node's EF: the replay writes a node's
		// value after its Eval, and reads only values of nodes already
		// evaluated.
		f, w := ef.get(n), weight(n)
		if w < 0 && negative < 0 {
			negative = n
		}
		if f == span || x.HasIn && x.In == f || x.HasPrev && x.Prev == f {
			setBit(on, n)
			return f - w
		}
		return f + 1
	}})
	if err != nil {
		return OnLongest{}, err
	}
	var bad error
	if negative >= 0 {
		bad = fmt.Errorf("graph: OnLongestPaths: node %d weighs %d: weights must not be negative", negative, weight(negative))
	}
	if err := comm.Agree(c, bad); err != nil {
		return OnLongest{}, err
	}
	return OnLongest{on: on}, nil
}

// OnLongestPathsColumn is OnLongestPaths with node n weighing w.At(n),
// read with no call a node. It consumes lp's Arg too. After
// LongestPathsWeighted w may be nil: a node's start is then its Arg's EF,
// and the weights were in [0, 2³²) (NewWeightStoreOf's).
//
// The nodes it marks are those a longest path's end reaches backwards
// through tight inputs (an input whose EF is its output's start): the
// argmax, the chain predecessor when it ties, and the inputs that tied
// with the best in the forward replay, which LongestPathsFollowing logs.
// When every rank has its log (few ties) and weights whose sums do not
// wrap (w.Summable(): so that no EF wraps around, and a node's outputs start no
// earlier than its EF), the marks are that search from the ends, on the
// nodes of the longest paths only, not the backward replay over every
// node (a fifth of fib(27)'s critical path; at 2 ranks, 0.4 s of the
// 10 M-event mpi's): a tight input on another rank gets the start it
// must have, and that rank goes on from it.
func OnLongestPathsColumn(c comm.Comm, g *DAG, w *narrow.Framed, lp *Longest) (OnLongest, error) {
	ef, span := lp.ef, lp.Span
	if ef == nil || int64(ef.len()) != int64(g.Len()) || w == nil && !lp.weighed || w != nil && int64(w.Len()) < int64(g.Len()) {
		return OnLongest{}, fmt.Errorf("graph: no forward values or weights for %d nodes", g.Len())
	}
	if lp.weighed && (lp.Arg == nil || lp.Arg.Len() != int(g.Len())) {
		return OnLongest{}, fmt.Errorf("graph: no forward arguments for %d nodes", g.Len())
	}
	lp.ef = nil
	on := make([]uint64, (int(g.Len())+63)/64)
	var search int64
	if t := lp.ties; t != nil && !t.full && (w == nil || w.Summable()) && lp.Arg != nil && lp.Arg.Len() == int(g.Len()) {
		search = 1
	}
	all, err := c.AllreduceInt64(comm.Min, []int64{search})
	if err != nil {
		return OnLongest{}, err
	}
	// A node's start is EF − w (weights of a summable column are never
	// negative; another's are read as they are), or after
	// LongestPathsWeighted its Arg's EF (startOf), which the replay below
	// still reads: an input of a node is evaluated after it backwards, its
	// EF unchanged until then. The weight is read for the nodes on a
	// longest path alone, through a cursor: a lookup in the framed column
	// is a chain of dependent loads.
	start := func(n int32) int64 { return lp.startOf(ef, n) }
	if !lp.weighed {
		wc := w.Cursor()
		start = func(n int32) int64 { return ef.get(n) - wc.At(int(n)) }
	}
	if all[0] == 1 {
		err := markLongest(c, g, ef, start, span, lp.Arg, lp.ties, on)
		lp.Arg, lp.ties, lp.slotVal = nil, nil, slotCol{}
		if err != nil {
			return OnLongest{}, err
		}
		return OnLongest{on: on}, nil
	}
	lp.ties = nil
	if !lp.weighed {
		lp.Arg = nil // its starts do not read it
	}
	_, err = ReplayInReverse(c, g, lp.Order, ReplayOptions{Min: true, into: ef, onLongest: &onLongestEval{ef: ef, span: span, on: on, start: start}})
	lp.Arg, lp.slotVal = nil, slotCol{}
	if err != nil {
		return OnLongest{}, err
	}
	return OnLongest{on: on}, nil
}

// markLongest marks in on the nodes that the nodes of EF span reach
// backwards through tight inputs: the argmax arg, the chain predecessor
// and the logged ties whose EF is the node's start. An input on another
// rank gets the start in a token, and its rank marks it when its EF is
// that: rounds of one Exchange each, until no token is sent anywhere (as
// many as the search crosses ranks, one on a single rank). It is
// collective.
func markLongest(c comm.Comm, g *DAG, ef *vstore, startOf func(n int32) int64, span int64, arg *ArgColumn, ties *tieLog, on []uint64) error {
	t := ties.byNode()
	var stack []int32
	out := newOutbox(c.Size())
	var sent int64
	mark := func(e Entry, start int64) {
		if n, ok := e.Node(); ok {
			if !bitAt(on, n) && ef.get(n) == start {
				setBit(on, n)
				stack = append(stack, n)
			}
			return
		}
		if s, ok := e.Slot(); ok {
			peer, k := g.slotAddr(s)
			b := out.buf(peer, 12)
			*b = binary.LittleEndian.AppendUint32(*b, k)
			*b = binary.LittleEndian.AppendUint64(*b, uint64(start))
			sent++
		}
	}
	for n := range g.Len() {
		mark(Entry(n), span)
	}
	var bad error
	next := window(0, 1)
	for round := 1; ; round++ {
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			start := startOf(n)
			if g.chained.has(n) {
				mark(Entry(n-1), start)
			}
			mark(arg.At(n), start)
			for _, e := range t.of(n) {
				mark(e, start)
			}
		}
		if c.Size() == 1 {
			return nil // no slot: the search is done
		}
		recv, err := c.Exchange(out.take())
		if err != nil {
			return err
		}
		for _, m := range recv {
			// Tokens come for this rank's sources, its out-slots, and a
			// slot may get several (no arrived marks).
			err := g.eachArrival(m, 12, true, nil, func(s int32, rec []byte) {
				mark(Entry(g.slotNode[s]), int64(binary.LittleEndian.Uint64(rec[4:])))
			})
			if err != nil && bad == nil {
				bad = err
			}
		}
		out.recycle(recv)
		// The end is agreed after a window of rounds (Walk's): no token
		// sent anywhere in the last round leaves none to go on with.
		if round < next {
			sent = 0
			continue
		}
		next = round + window(round, 1)
		if done, err := walkEnded(c, sent, bad); done || err != nil {
			return err
		}
		sent = 0
	}
}

// tieLog is the inputs a forward replay found tied with a node's best:
// (input, node) pairs, the input that held the best before too, so that
// every input that ever gave the node its final value is the argmax or
// logged. Past its limit it stops (full) and OnLongestPathsColumn takes
// the backward replay: a log of a pair a tie would hold 8 bytes for each
// of the lean stencil's 4.8 M ties.
type tieLog struct {
	in, node []int32
	limit    int
	full     bool
}

func (t *tieLog) add(e, held Entry, n int32) {
	if t.full || len(t.in)+2 > t.limit {
		// A full log is never read: its arrays go now, not with the
		// replay's (they were at the forward replay's peak on every rank
		// of the gen traces, whose ties fill it).
		t.full, t.in, t.node = true, nil, nil
		return
	}
	t.in, t.node = append(t.in, int32(e)), append(t.node, n)
	if held != e {
		t.in, t.node = append(t.in, int32(held)), append(t.node, n)
	}
}

// tiesByNode are a log's inputs by node.
type tiesByNode struct {
	node []int32 // sorted
	in   []Entry
}

func (t *tieLog) byNode() tiesByNode {
	idx := make([]int, len(t.in))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(t.node[a], t.node[b]) })
	out := tiesByNode{node: make([]int32, len(idx)), in: make([]Entry, len(idx))}
	for k, i := range idx {
		out.node[k], out.in[k] = t.node[i], Entry(t.in[i])
	}
	return out
}

// of returns the inputs logged for node n.
func (t tiesByNode) of(n int32) []Entry {
	lo, _ := slices.BinarySearch(t.node, n)
	hi := lo
	for hi < len(t.node) && t.node[hi] == n {
		hi++
	}
	return t.in[lo:hi]
}

// onLongestEval is OnLongestPathsColumn's evaluation of a node in its
// backward replay, a node's start EF − w given by start.
type onLongestEval struct {
	ef    *vstore
	span  int64
	on    []uint64
	start func(n int32) int64 // a node's start EF − w
}

func (e *onLongestEval) eval(n int32, x *Input) int64 {
	// ef.get(n) is still the node's EF: the replay writes a node's value
	// after its evaluation, and reads only values of nodes already
	// evaluated. The start is asked for the nodes on a longest path alone.
	f := e.ef.get(n)
	if f == e.span || x.HasIn && x.In == f || x.HasPrev && x.Prev == f {
		setBit(e.on, n)
		return e.start(n)
	}
	return f + 1
}

// PathStep is one node of the critical path as the rank owning it saw it:
// Depth counts from the path's end (0) towards its start.
type PathStep struct {
	Node  int32
	Depth int64
	// Cross is true when the path, going backwards, leaves this node for a
	// node on another rank.
	Cross bool
}

// Path is a rank's nodes of the critical path (WalkPath): 4 bytes and a
// bit a node. A path of untied tasks in a chain, a pipeline through
// ranks or an MPI ping-pong has millions of nodes, which as PathSteps
// (24 bytes, in a slice grown by copying, then sorted by depth) were 80 MB
// at the walk's peak on a 1.67 M-node chain. The walk reaches a rank's
// nodes one depth after the other until it leaves the rank, so the depths
// are kept per run of consecutive depths; the nodes go in chunks that
// are never copied.
type Path struct {
	chunks [][]int32 // the nodes in the order the walk reached them, pathChunk a chunk
	n      int
	cross  []uint64 // bit k: the walk left the k-th node for another rank
	runs   []pathRun
}

// pathChunk is how many nodes a chunk of a Path holds (the first grows up
// to it).
const pathChunk = 1 << 14

// pathRun is a run of nodes at consecutive depths: the at-th to the
// (at+n−1)-th node reached, at depths depth, depth+1, ...
type pathRun struct {
	at, n int
	depth int64
}

// add appends node n reached at depth.
func (p *Path) add(n int32, depth int64, cross bool) {
	k := p.n
	if r := len(p.runs); r > 0 && p.runs[r-1].depth+int64(p.runs[r-1].n) == depth {
		p.runs[r-1].n++
	} else {
		p.runs = append(p.runs, pathRun{at: k, n: 1, depth: depth})
	}
	if k%64 == 0 {
		p.cross = append(p.cross, 0)
	}
	if cross {
		p.cross[k/64] |= 1 << (k % 64)
	}
	if c := len(p.chunks); c == 0 || len(p.chunks[c-1]) == pathChunk {
		var next []int32
		if c > 0 {
			next = make([]int32, 0, pathChunk)
		}
		p.chunks = append(p.chunks, next)
	}
	last := &p.chunks[len(p.chunks)-1]
	*last = append(*last, n)
	p.n++
}

// node returns the k-th node reached.
func (p *Path) node(k int) int32 { return p.chunks[k/pathChunk][k%pathChunk] }

// Len returns the number of the path's nodes on this rank.
func (p *Path) Len() int { return p.n }

// Steps returns the rank's steps in path order (start first: decreasing
// depth).
func (p *Path) Steps() iter.Seq[PathStep] {
	return func(yield func(PathStep) bool) {
		for r := len(p.runs) - 1; r >= 0; r-- {
			run := p.runs[r]
			for k := run.at + run.n - 1; k >= run.at; k-- {
				st := PathStep{Node: p.node(k), Depth: run.depth + int64(k-run.at), Cross: p.cross[k/64]&(1<<(k%64)) != 0}
				if !yield(st) {
					return
				}
			}
		}
	}
}

// WalkPath walks the critical path back from lp.End along the inputs that
// gave each node its EF, across ranks, and returns the steps on this rank
// (Path.Steps gives them in path order, start first). A node whose EF is
// its own weight (no input contributed) starts the path.
func WalkPath(c comm.Comm, g *DAG, lp *Longest) (*Path, error) {
	p := &Path{}
	var starts []int32
	if lp.End.Rank == c.Rank() && lp.End.Node >= 0 {
		starts = []int32{lp.End.Node}
	}
	err := Walk(c, g, starts, func(n int32, depth int64) Entry {
		// The input that gave EF, chain predecessor or explicit input, the
		// one with the smaller key on equal values (ReplayOptions.ChainArg),
		// so that the path does not depend on the partition, nor on which
		// edges the graph holds as chains. Inputs of weight zero are
		// followed too, so the path reaches a root.
		next := lp.Arg.At(n)
		_, remote := next.Slot()
		p.add(n, depth, remote)
		return next
	})
	if err != nil {
		return nil, err
	}
	// One walk from one end: each depth is reached once, on one rank, in
	// increasing order on each; the runs in order of their depths (stable:
	// were a depth reached twice, its nodes keep the walk's order).
	slices.SortStableFunc(p.runs, func(a, b pathRun) int { return cmp.Compare(a.depth, b.depth) })
	return p, nil
}
