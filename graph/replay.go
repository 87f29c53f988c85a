package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/internal/bitrank"
	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// ReplayOptions configure one replay of a DAG.
type ReplayOptions struct {
	// Backward replays the reversed graph: a node's inputs are its
	// outputs, its chain predecessor is the next node of its chain.
	Backward bool
	// Min combines explicit inputs with min instead of max.
	Min bool
	// NoChains ignores chain edges: values flow along explicit edges only,
	// and the replay takes as many supersteps as the longest path of
	// explicit remote edges (a plain exchange when that is one).
	NoChains bool
	// Eval computes a node's value from its inputs. It is called once per
	// node, after all of the node's inputs (chain predecessor and explicit
	// inputs, in the replay's direction) have values; nodes of one chain
	// are evaluated in chain order. It must not call into comm.
	Eval func(n int32, in Input) int64
	// Weights, instead of Eval, makes a node's value its weight plus the
	// heavier of its explicit inputs' best and its chain predecessor's
	// value: the heaviest path ending (backward: starting) with it, the
	// critical path's replays, evaluated without a call per node.
	Weights []int64
	// WeightsFramed, instead of Eval or Weights, is Weights packed by
	// frame of reference (a fragment's or a task's weight 0–2 bytes
	// instead of 8), read with no call.
	WeightsFramed *narrow.Framed
	// TrackArg records, per node, which explicit input gave In (Result.Arg).
	TrackArg bool
	// ChainArg, with TrackArg and TieKey, makes Arg the input that gave the
	// node's value among the chain predecessor and the explicit inputs: the
	// heavier (lighter with Min), on equal values the one with the smaller
	// key, as if the chain were one more explicit edge.
	ChainArg bool
	// TieKey, when set, gives each local node a key; among inputs with
	// equal values the one with the smallest key wins. Keys travel with
	// remote values, so a key that does not depend on the partition (say,
	// a global event id) makes Arg independent of it too. Without keys,
	// ties go to the first input in Ins order, which depends on the
	// partition. It is called on ties and for values sent to other ranks
	// only, so a key computed from the node id costs no array.
	TieKey func(n int32) int64
	// KeysFollowNodes tells that TieKey orders the local nodes as their
	// ids do (TieKey(a) < TieKey(b) exactly when a < b), as a key made of
	// the process and the node's index in it does when a rank's processes
	// come in order: two local inputs are then compared by id, without a
	// call, and only a remote input's key is looked up.
	KeysFollowNodes bool
	// Describe names a node in errors (default "node N of rank R").
	Describe func(n int32) string
	// RecordOrder keeps the order in which this rank evaluated its nodes,
	// superstep by superstep (Result.Order), for ReplayInReverse.
	RecordOrder bool
	// Into, for ReplayInReverse, is where the values are written (its
	// length the DAG's nodes) instead of a new array: Eval may read a
	// node's own entry, which holds what the caller put there until the
	// node is evaluated (OnLongestPaths reads the forward values there).
	Into []int64
	// NarrowValues keeps the values 32 bits from a base per 64 nodes
	// (vstore) instead of 64 bits (Result.Values is then nil; the values
	// are read through Result.Value): for values close to each other
	// among nearby nodes, such as times.
	NarrowValues bool
	// into is Into as a store (OnLongestPaths: the forward values,
	// narrow).
	into *vstore
	// onLongest, instead of Eval, is OnLongestPathsColumn's evaluation,
	// for ReplayInReverse.
	onLongest *onLongestEval
	// inStore, instead of the other weights, is a store of the nodes'
	// weights (newWeightStore) that a forward push replay with TrackArg
	// evaluates the nodes with and writes their values to: a node's best
	// input so far is then its arg's value, not held beside it.
	inStore *vstore
	// ties, with TrackArg on a forward push replay, logs the inputs that
	// gave a node the same value as its best (tieLog), for
	// OnLongestPathsColumn.
	ties *tieLog
	// recycle, with NarrowValues and TrackArg, holds a store and an arg
	// array an earlier replay left (Recycler), used when they have room.
	recycle *Recycler
	// budget, when positive, is how many nodes a superstep evaluates at
	// most, on any number of ranks (drainBudget otherwise).
	budget int64
	// ConsumeCounts lets a backward replay of a DAG built InsOnly count
	// down the DAG's own output counts, or a forward replay of one built
	// OutsOnly its input counts, instead of a copy (4 bytes a node less);
	// OutDegree or InDegree then reads 0. Ignored on a DAG built whole.
	ConsumeCounts bool
}

// Input is what a node's evaluation sees.
type Input struct {
	Prev    int64 // value of the chain predecessor (in the replay's direction)
	HasPrev bool
	In      int64 // max (or min) over the explicit inputs' values
	HasIn   bool
	Arg     Entry // the input that gave In; NoEntry without inputs
}

// Result is the outcome of a replay on one rank.
type Result struct {
	Values     []int64    // by local node (nil with NarrowValues: Value)
	Arg        *ArgColumn // by local node, with TrackArg; NoEntry without inputs
	Supersteps int
	Order      *Order // with RecordOrder
	vals       *vstore
	ties       *tieLog
	slotVal    slotCol // with inStore: the values that came for the in-slots
}

// Value returns local node n's value.
func (r *Result) Value(n int32) int64 { return r.vals.get(n) }

// checkWeights checks that o has one of Eval, Weights and WeightsFramed, and
// weights for n nodes.
func (o *ReplayOptions) checkWeights(n int32) error {
	k := 0
	for _, set := range []bool{o.Eval != nil, o.Weights != nil, o.WeightsFramed != nil, o.inStore != nil} {
		if set {
			k++
		}
	}
	switch {
	case k != 1:
		return errors.New("graph: a replay needs one of Eval, Weights and WeightsFramed")
	case o.Weights != nil && int64(len(o.Weights)) < int64(n):
		return fmt.Errorf("graph: %d weights for %d nodes", len(o.Weights), n)
	case o.WeightsFramed != nil && int64(o.WeightsFramed.Len()) < int64(n):
		return fmt.Errorf("graph: %d weights for %d nodes", o.WeightsFramed.Len(), n)
	case o.inStore != nil && int64(o.inStore.len()) != int64(n):
		return fmt.Errorf("graph: %d weights for %d nodes", o.inStore.len(), n)
	}
	return nil
}

// values returns where a replay of n nodes writes its values: into (the
// store itself: the caller's Eval may read it), Into, or a new store,
// narrow with NarrowValues.
func (o *ReplayOptions) values(n int32) *vstore {
	var v vstore
	switch {
	case o.into != nil:
		return o.into
	case o.inStore != nil:
		return o.inStore
	case o.Into != nil:
		v = wideStoreOf(o.Into)
	case o.NarrowValues && o.recycle != nil && o.recycle.vals != nil && o.recycle.vals.reuseNarrow(int(n)):
		vals := o.recycle.vals
		o.recycle.vals = nil
		return vals
	case o.NarrowValues:
		v = newNarrowStore(int(n))
	default:
		v = newWideStore(int(n))
	}
	return &v
}

// Order is the order in which a forward replay evaluated one rank's
// nodes: the reverse, superstep by superstep, is an order in which every
// node comes after all its outputs, on every rank (ReplayInReverse).
type Order struct {
	nodes    nodeList // local nodes in evaluation order
	stepEnds []int32  // the first stepEnds[t] nodes were evaluated by the end of superstep t
	// slotStep is, for each in-slot, the superstep in which its value was
	// sent (the remote source's superstep); −1 for out-slots. A byte a
	// slot while the supersteps are fewer than 128 (narrow.Step).
	slotStep narrow.Step[int8, int16, int32]
	noChains bool
	backward bool // recorded by a backward replay: no use to ReplayInReverse
}

// CycleError reports a replay that cannot finish: some nodes wait, directly
// or not, for themselves. Every rank returns the same error.
type CycleError struct {
	Remaining int64  // nodes never evaluated, over all ranks
	Example   string // one waiting node and what it waits for
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("happened-before cycle: %d events can never be replayed, e.g. %s", e.Remaining, e.Example)
}

// replayer is one rank's state during a replay: dense arrays indexed by
// local node or slot, nothing allocated per node.
type replayer struct {
	c   comm.Comm
	g   *DAG
	o   *ReplayOptions
	esz int // bytes per remote value: k, value[, key]
	// ev evaluates a node in drainPush: made once for the replay, not
	// for each superstep (its framed weights' cursor holds 64 KiB: made
	// for each of a replay's thousands of supersteps across ranks, they
	// held 30 MB more at the critical path's peak).
	ev nodeEval

	vals    *vstore
	arg     *ArgColumn
	pend    counts   // inputs not yet known
	slotVal slotCol  // by in-slot (values arrive there)
	slotKey slotCol  // by in-slot, with TieKey
	arrived slotBits // in-slots whose value has come
	stack   []int32
	out     outbox

	min bool // ReplayOptions.Min

	// push: a backward replay of an InsOnly DAG or a forward replay of an
	// OutsOnly one (drainPush); until a node is evaluated, vals holds the
	// best of its inputs so far (arg which input gave it), and has whether
	// it got any.
	push bool
	has  []uint64
	// ws: the weights are in vals (ReplayOptions.inStore), and a node's
	// best input so far is its arg's value (valueOf): a local node's, or
	// a remote one's in slotVal.
	ws bool

	order *Order // with RecordOrder
	step  int32  // the current superstep, from 0

	evaluated int64
	remaining int64
	bad       error
	// budget is how many nodes a superstep evaluates at most (drain,
	// drainPush); the rest wait on the stack for the next.
	budget int64
}

// drainBudget is how many nodes a rank evaluates in a superstep of a
// replay over several ranks before it hands what it has to send to the
// others: a rank that would drain the whole of its graph first (where
// values flow one way, as from the last process to arrive at an MPI
// collective to the others) kept the others waiting for all of it, on
// the 10 M-event mpi half of the forward replay at 2 ranks. About a
// millisecond of work a superstep, against microseconds for the
// exchange.
const drainBudget = 1 << 15

// Replay evaluates every node of g once, in an order consistent with its
// edges, on every rank together: each rank evaluates whatever is ready,
// values for other ranks are batched per destination, and the batches move
// in bulk-synchronous supersteps (one Exchange and one Allreduce each, so
// a superstep costs a rank O(its messages), not O(ranks)).
// Nodes within a rank are processed with a ready stack (Kahn's algorithm)
// that runs along chains without touching the stack, so the cost per node
// is a few array accesses and one Eval call.
//
// A replay over an acyclic graph always finishes, whatever the partition;
// a superstep without progress while nodes remain means a cycle, reported
// as a *CycleError on every rank. Values do not depend on the partition or
// evaluation order as long as Eval is a function of its node and inputs.
func Replay(c comm.Comm, g *DAG, o ReplayOptions) (*Result, error) {
	if err := o.checkWeights(g.Len()); err != nil {
		return nil, err
	}
	if g.inOff == nil && g.inPk == nil && !g.OutsOnly() {
		return nil, errors.New("graph: replay of a DAG whose inputs were dropped")
	}
	if o.Into != nil || o.into != nil {
		return nil, errors.New("graph: Replay writes its own values (Into is ReplayInReverse's)")
	}
	n := g.Len()
	r := &replayer{c: c, g: g, o: &o, esz: 12, vals: o.values(n), min: o.Min,
		arrived: newSlotBits(g.Slots()),
		out:     newOutbox(c.Size()),
	}
	r.ev = evaluator(r.o)
	switch {
	case o.budget > 0:
		r.budget = o.budget
	case c.Size() > 1:
		r.budget = drainBudget
	default:
		r.budget = math.MaxInt64
	}
	if o.Backward && g.consumedOut || !o.Backward && g.consumedIn {
		return nil, errors.New("graph: an earlier replay in this direction consumed the DAG's counts (ConsumeCounts)")
	}
	// The slots the values arrive at: the inputs' (in-slots) forward, the
	// outputs' backward; made for the columns that hold values at them,
	// once (a backward push replay holds none).
	var insSet *bitrank.Set
	ins := func() *bitrank.Set {
		if insSet == nil {
			insSet = slotsOf(g, o.Backward)
		}
		return insSet
	}
	if g.InsOnly() {
		// Without the outputs' adjacency a node cannot look its inputs up
		// when it is evaluated: each evaluated node pushes its value to
		// its inputs instead (the replay's outputs), which is the same max
		// whatever the order, and the same values, as long as nothing
		// records which input gave it.
		if !o.Backward || o.TrackArg || o.TieKey != nil {
			return nil, errors.New("graph: a DAG built InsOnly replays backward, without Arg or tie keys")
		}
		r.push = true
		r.has = make([]uint64, (n+63)/64)
	} else if g.OutsOnly() {
		// Without the inputs' adjacency each evaluated node pushes its
		// value to its outputs; the argmax follows the pushes, ties
		// broken by key, so it needs keys to be the pull's.
		if o.Backward {
			return nil, errors.New("graph: a DAG built OutsOnly replays forward (backward: ReplayInReverse)")
		}
		if o.TrackArg && o.TieKey == nil {
			return nil, errors.New("graph: a DAG built OutsOnly tracks the argmax only with tie keys")
		}
		r.push = true
		r.has = make([]uint64, (n+63)/64)
		if o.inStore != nil {
			if !o.TrackArg {
				return nil, errors.New("graph: a replay of weights in its store tracks the argmax")
			}
			r.ws, r.slotVal = true, newSlotCol(ins())
		}
	} else {
		r.slotVal = newSlotCol(ins())
	}
	if o.inStore != nil && !r.ws {
		return nil, errors.New("graph: weights in the store replay an OutsOnly DAG forward")
	}
	// Only once the replay is sure to run: a refused one leaves the counts.
	consumed := true // the pending counts are the DAG's, explicit inputs counted
	switch {
	case o.ConsumeCounts && o.Backward && !g.outDeg.null():
		r.pend, g.consumedOut = g.outDeg, true
	case o.ConsumeCounts && !o.Backward && !g.inDeg.null():
		r.pend, g.consumedIn = g.inDeg, true
	default:
		r.pend, consumed = newCounts(int(n)), false
	}
	if o.TieKey != nil {
		r.esz = 20
		r.slotKey = newSlotCol(ins())
	}
	if o.TrackArg {
		var reuse *ArgColumn
		if rc := o.recycle; rc != nil {
			reuse, rc.arg = rc.arg, nil
		}
		r.arg = newArgColumn(n, reuse)
	}
	if o.RecordOrder {
		r.order = &Order{noChains: o.NoChains, backward: o.Backward}
		r.order.nodes.blocks.StreamTo(g.spill)
		r.order.slotStep.Reserve(int(g.Slots()))
		for range g.Slots() {
			r.order.slotStep.Append(-1)
		}
	}
	if consumed {
		// The counts are there: a chain predecessor adds one, and the
		// nodes left at zero are ready.
		c, chains, d := r.pend.c, !o.NoChains, int32(0)
		if o.Backward {
			d = 1 // the predecessor is the next node of the chain
		}
		for i := int32(0); i < n; i++ {
			j, sh := i>>1, uint(i&1)<<2
			if chains && g.chained.has(i+d) {
				if c[j]>>sh&15 < countBig-1 {
					c[j] += 1 << sh
				} else {
					r.pend.set(i, r.pend.get(i)+1)
				}
			} else if c[j]>>sh&15 == 0 {
				r.stack = append(r.stack, i)
			}
		}
	} else {
		for i := int32(0); i < n; i++ {
			var p int32
			if o.Backward {
				p = g.OutDegree(i) // a backward replay's inputs are the outputs
			} else {
				p = g.InDegree(i)
			}
			if r.prevOf(i) >= 0 {
				p++
			}
			r.pend.set(i, p)
			if p == 0 {
				r.stack = append(r.stack, i)
			}
		}
	}
	r.remaining = int64(n)
	res := &Result{}
	before := r.evaluated
	nextCheck := checkWindow(0)
	last := int32(-1) // the last superstep in which this rank evaluated a node
	for {
		res.Supersteps++
		was := r.evaluated
		if r.push {
			r.drainPush()
		} else {
			r.drain()
		}
		if r.evaluated > was {
			last = r.step
		}
		if r.order != nil {
			r.order.stepEnds = append(r.order.stepEnds, int32(r.order.nodes.len()))
		}
		recv, err := c.Exchange(r.out.take())
		if err != nil {
			return nil, err
		}
		r.receive(recv)
		r.out.recycle(recv)
		r.step++
		// Whether to stop is agreed after a window of supersteps only: a
		// replay whose path crosses ranks at every step runs thousands of
		// supersteps, and each agreement is one more rendezvous. A rank
		// done early exchanges nothing meanwhile; a superstep without
		// progress anywhere freezes the replay, so a window without any
		// is a cycle as surely as one superstep was. The window grows as
		// the square root of the supersteps run (checkWindow): over S
		// supersteps about √(2S) agreements, and as many empty supersteps
		// at most after the last node, instead of S/4 agreements (1 600
		// of the 10 M-event stencil's 6 500 supersteps at 2 ranks).
		if res.Supersteps < nextCheck {
			continue
		}
		nextCheck = res.Supersteps + checkWindow(res.Supersteps)
		bad := int64(0)
		if r.bad != nil {
			bad = 1
		}
		tot, err := c.AllreduceInt64(comm.Sum, []int64{r.evaluated - before, r.remaining, bad})
		if err != nil {
			return nil, err
		}
		before = r.evaluated
		if tot[2] > 0 {
			return nil, comm.Agree(c, r.bad)
		}
		if tot[1] == 0 {
			if r.order != nil {
				// The supersteps after the last node evaluated anywhere
				// are empty: their reverse (ReplayInReverse) would be
				// exchanges of nothing.
				l, err := c.AllreduceInt64(comm.Max, []int64{int64(last)})
				if err != nil {
					return nil, err
				}
				r.order.stepEnds = r.order.stepEnds[:l[0]+1]
			}
			break
		}
		if tot[0] == 0 {
			return nil, r.cycle(tot[1])
		}
	}
	res.Values, res.Arg, res.Order, res.vals, res.ties = r.vals.wide, r.arg, r.order, r.vals, o.ties
	if r.ws {
		res.slotVal = r.slotVal
	}
	return res, nil
}

// ReplayInReverse is the backward replay of g in the reverse of the order
// a forward replay recorded (ReplayOptions.RecordOrder): superstep by
// superstep from the last, each rank evaluates that superstep's nodes last
// first, pulling its outputs' values (and its chain successor's), then
// sends each remote input the value its source's superstep needs. A node's
// outputs came after it in the forward replay (later in its superstep, or
// in a later one, on any rank), so they are evaluated before it: no
// inputs' adjacency, no pending counts, no ready stack. The values are
// Replay's with Backward. It needs the outputs' adjacency (a DAG built
// whole or OutsOnly); o takes Eval or Weights, Min and NoChains (as the
// forward's), not TrackArg or TieKey. It is collective.
func ReplayInReverse(c comm.Comm, g *DAG, ord *Order, o ReplayOptions) (*Result, error) {
	n := g.Len()
	switch {
	case o.onLongest == nil && o.checkWeights(n) != nil:
		return nil, o.checkWeights(n)
	case g.InsOnly():
		return nil, errors.New("graph: ReplayInReverse of a DAG without its outputs")
	case ord == nil || ord.backward || int64(ord.nodes.len()) != int64(n) || ord.slotStep.Len() != int(g.Slots()):
		return nil, errors.New("graph: ReplayInReverse needs the order of a complete forward replay of the same DAG")
	case o.TrackArg || o.TieKey != nil:
		return nil, errors.New("graph: ReplayInReverse computes values only")
	case o.NoChains != ord.noChains:
		return nil, errors.New("graph: ReplayInReverse must follow the chains as the forward replay did")
	case o.Into != nil && int64(len(o.Into)) != int64(n):
		return nil, fmt.Errorf("graph: ReplayInReverse into %d values for %d nodes", len(o.Into), n)
	case o.into != nil && int64(o.into.len()) != int64(n):
		return nil, fmt.Errorf("graph: ReplayInReverse into %d values for %d nodes", o.into.len(), n)
	}
	// In-slots by the superstep whose value they received, the one whose
	// reverse must have their node's value.
	steps := len(ord.stepEnds)
	byStep := make([]int32, steps+1)
	for s := range g.Slots() {
		if t := ord.slotStep.At(int(s)); !g.slotIsOut(s) && t >= 0 && int(t) < steps {
			byStep[t+1]++
		}
	}
	for t := 0; t < steps; t++ {
		byStep[t+1] += byStep[t]
	}
	inSlots := make([]int32, byStep[steps])
	fill := slices.Clone(byStep[:steps])
	for s := range g.Slots() {
		if t := ord.slotStep.At(int(s)); !g.slotIsOut(s) && t >= 0 && int(t) < steps {
			inSlots[fill[t]] = s
			fill[t]++
		}
	}
	ev := evaluator(&o)
	vals := o.values(n)
	useMin := o.Min
	slotVal := newSlotCol(slotsOf(g, true)) // values come back along the out-slots
	arrived := newSlotBits(g.Slots())
	chained := &g.chained
	if o.NoChains {
		chained = nil
	}
	out := newOutbox(c.Size())
	var bad error
	fail := func(err error) {
		if bad == nil {
			bad = err
		}
	}
	// The order waited in the spill file since the forward replay
	// (DAG.SpillTo): its blocks are read back as the replay reaches
	// them, a failed read agreed at the end (the nodes left read as one,
	// and the values are not used).
	nodes := ord.nodes.backward()
	for t := steps - 1; t >= 0; t-- {
		lo := int32(0)
		if t > 0 {
			lo = ord.stepEnds[t-1]
		}
		for i := ord.stepEnds[t] - 1; i >= lo; i-- {
			n := nodes.next()
			x := Input{Arg: NoEntry}
			if chained != nil && chained.has(n+1) {
				x.Prev, x.HasPrev = vals.get(n+1), true
			}
			take := func(e Entry) {
				var v int64
				if e >= 0 {
					v = vals.get(int32(e))
				} else {
					v = slotVal.get(int32(^e))
				}
				if !x.HasIn || (useMin && v < x.In) || (!useMin && v > x.In) {
					x.In, x.HasIn = v, true
				}
			}
			if g.outPk != nil {
				lo, hi := g.outAt.span(n)
				for p := g.outPk[lo:hi]; len(p) > 0; {
					v, k := uint64(p[0]), 1
					if v >= 0x80 {
						v, k = longCode(p)
					}
					take(decodeEntry(n, v))
					p = p[k:]
				}
			} else {
				for _, e := range g.out[g.outOff[n]:g.outOff[n+1]] {
					take(e)
				}
			}
			var v int64
			switch { // what evalNode does, written out: it does not inline
			case ev.w64 != nil:
				v = heaviestOf(ev.w64[n], &x)
			case ev.wf != nil:
				v = heaviestOf(ev.wf.At(int(n)), &x)
			case ev.on != nil:
				v = ev.on.eval(n, &x)
			default:
				v = ev.eval(n, x)
			}
			vals.set(n, v)
		}
		if t == 0 {
			break // every rank stops here: as many exchanges as supersteps less one
		}
		// The sources of these in-slots run in superstep t−1's reverse,
		// next: their outputs' values go now.
		for _, s := range inSlots[byStep[t-1]:byStep[t]] {
			peer, k := g.slotAddr(s)
			b := out.buf(peer, 12)
			*b = binary.LittleEndian.AppendUint32(*b, k)
			*b = binary.LittleEndian.AppendUint64(*b, uint64(vals.get(g.slotNode[s])))
		}
		recv, err := c.Exchange(out.take())
		if err != nil {
			return nil, err
		}
		for _, m := range recv {
			// Values come back along the out-slots (the replay's inputs).
			if err := g.eachArrival(m, 12, true, arrived, func(s int32, rec []byte) {
				slotVal.set(s, int64(binary.LittleEndian.Uint64(rec[4:])))
			}); err != nil {
				fail(err)
			}
		}
		out.recycle(recv)
	}
	if nodes.err != nil {
		fail(fmt.Errorf("rank %d: graph: the forward replay's order: %w", c.Rank(), nodes.err))
	}
	if err := comm.Agree(c, bad); err != nil {
		return nil, err
	}
	return &Result{Values: vals.wide, Supersteps: steps, vals: vals}, nil
}

// heaviestOf is ReplayOptions.Weights' value of a node of weight w.
func heaviestOf(w int64, x *Input) int64 {
	v := w
	if x.HasIn {
		v += x.In
	}
	if x.HasPrev {
		v = max(v, x.Prev+w)
	}
	return v
}

// checkWindow is how many supersteps a replay runs, after steps of them,
// before it next agrees on whether it is done (Replay): 4 at first,
// √(2·steps) later, at most 128.
func checkWindow(steps int) int { return window(steps, 4) }

// walkEnded agrees, on every rank, whether a walk over ranks (Walk,
// markLongest) is over: no rank sent a token in its last superstep
// (sent, this rank's), or one failed (bad, this rank's; err then names
// the failure on every rank).
func walkEnded(c comm.Comm, sent int64, bad error) (done bool, err error) {
	flag := int64(0)
	if bad != nil {
		flag = 1
	}
	tot, err := c.AllreduceInt64(comm.Sum, []int64{sent, flag})
	if err != nil {
		return true, err
	}
	if tot[1] > 0 {
		return true, comm.Agree(c, bad)
	}
	return tot[0] == 0, nil
}

// window is checkWindow from lo supersteps: the walks (Walk, markLongest)
// check from the first, as most end there.
func window(steps, lo int) int {
	w := lo
	for w < 128 && w*w < 2*steps {
		w++
	}
	return w
}

// prevOf returns the chain predecessor of n in the replay's direction, or −1.
func (r *replayer) prevOf(n int32) int32 {
	if r.o.NoChains {
		return -1
	}
	if r.o.Backward {
		if r.g.chained.has(n + 1) {
			return n + 1
		}
		return -1
	}
	if r.g.chained.has(n) {
		return n - 1
	}
	return -1
}

// drain evaluates every node that is or becomes ready on this rank.
func (r *replayer) drain() {
	g, o := r.g, r.o
	inOff, in, outOff, out := g.inOff, g.in, g.outOff, g.out
	if o.Backward {
		inOff, in, outOff, out = outOff, out, inOff, in
	}
	vals, pend, slotVal, keyed := r.vals, &r.pend, &r.slotVal, o.TieKey != nil
	useMin := o.Min
	eval, w := o.Eval, o.Weights
	// Chain neighbours in the replay's direction: prevDelta is how to step
	// from a node to its chain predecessor, chainOf tells whether node m is
	// chained to m−1.
	chained := &g.chained
	if o.NoChains {
		chained = nil
	}
	back := o.Backward
	stop := r.evaluated + min(r.budget, math.MaxInt64-r.evaluated)
	for len(r.stack) > 0 && r.evaluated < stop {
		n := r.stack[len(r.stack)-1]
		r.stack = r.stack[:len(r.stack)-1]
		for {
			x := Input{Arg: NoEntry}
			if chained != nil {
				if !back && chained.has(n) {
					x.Prev, x.HasPrev = vals.get(n-1), true
				} else if back && chained.has(n+1) {
					x.Prev, x.HasPrev = vals.get(n+1), true
				}
			}
			ins := in[inOff[n]:inOff[n+1]]
			if !keyed && !useMin {
				for _, e := range ins {
					var v int64
					if e >= 0 {
						v = vals.get(int32(e))
					} else {
						v = slotVal.get(int32(^e))
					}
					if !x.HasIn || v > x.In {
						x.In, x.Arg, x.HasIn = v, e, true
					}
				}
			} else {
				// The best input's key is looked up on the first tie only.
				var best int64
				known := false
				for _, e := range ins {
					var v int64
					if e >= 0 {
						v = vals.get(int32(e))
					} else {
						v = slotVal.get(int32(^e))
					}
					switch {
					case !x.HasIn || (useMin && v < x.In) || (!useMin && v > x.In):
						x.In, x.Arg, x.HasIn, known = v, e, true, false
					case keyed && v == x.In:
						if !known {
							best, known = r.key(x.Arg), true
						}
						if k := r.key(e); k < best {
							x.Arg, best = e, k
						}
					}
				}
			}
			var v int64
			if w != nil {
				v = heaviestOf(w[n], &x)
			} else {
				v = eval(n, x)
			}
			vals.set(n, v)
			if r.arg != nil {
				if x.HasPrev && o.ChainArg && keyed {
					r.arg.Set(n, r.chainArg(n, x))
				} else {
					r.arg.Set(n, x.Arg)
				}
			}
			if r.order != nil {
				r.order.nodes.add(n)
			}
			r.evaluated++
			r.remaining--
			for _, e := range out[outOff[n]:outOff[n+1]] {
				if e >= 0 {
					if pend.dec(int32(e)) {
						r.stack = append(r.stack, int32(e))
					}
					continue
				}
				peer, k := g.slotAddr(^int32(e))
				b := r.out.buf(peer, r.esz)
				*b = binary.LittleEndian.AppendUint32(*b, k)
				*b = binary.LittleEndian.AppendUint64(*b, uint64(v))
				if keyed {
					*b = binary.LittleEndian.AppendUint64(*b, uint64(o.TieKey(n)))
				}
			}
			nx := int32(-1)
			if chained != nil {
				if !back && chained.has(n+1) {
					nx = n + 1
				} else if back && chained.has(n) {
					nx = n - 1
				}
			}
			if nx < 0 {
				break
			}
			if !pend.dec(nx) {
				break
			}
			if r.evaluated >= stop {
				r.stack = append(r.stack, nx) // ready: the next superstep's
				break
			}
			n = nx
		}
	}
}

// key returns the tie key of input e: a local node's from TieKey, a remote
// one's as it arrived.
func (r *replayer) key(e Entry) int64 {
	if e >= 0 {
		return r.o.TieKey(int32(e))
	}
	return r.slotKey.get(int32(^e))
}

// less reports whether input a's tie key is smaller than b's.
func (r *replayer) less(a, b Entry) bool {
	if r.o.KeysFollowNodes && a >= 0 && b >= 0 {
		return a < b
	}
	return r.key(a) < r.key(b)
}

// chainArg picks the input that gave x between node n's chain predecessor
// and its best explicit input (ReplayOptions.ChainArg).
func (r *replayer) chainArg(n int32, x Input) Entry {
	prev := Entry(n - 1)
	if r.o.Backward {
		prev = Entry(n + 1)
	}
	switch {
	case !x.HasIn, r.o.Min && x.Prev < x.In, !r.o.Min && x.Prev > x.In:
		return prev
	case x.Prev == x.In && r.less(prev, x.Arg):
		return prev
	}
	return x.Arg
}

// drainPush is drain for a backward replay of an InsOnly DAG, or a
// forward replay of an OutsOnly one: an evaluated node offers its value to
// each of its inputs (backward) or outputs (forward), local nodes at once,
// remote ones batched to their rank, instead of the receivers looking it
// up.
func (r *replayer) drainPush() {
	g, o := r.g, r.o
	ev := r.ev // a copy: the cursor it points to is the replay's
	vals := r.vals
	chained := &g.chained
	if o.NoChains {
		chained = nil
	}
	fwd, keyed := !o.Backward, o.TieKey != nil
	chainArg := r.arg != nil && o.ChainArg && keyed
	// Push mode runs on a one-sided DAG, whose list is packed.
	pk, at := g.outPk, &g.outAt
	if !fwd {
		pk, at = g.inPk, &g.inAt
	}
	stop := r.evaluated + min(r.budget, math.MaxInt64-r.evaluated)
	for len(r.stack) > 0 && r.evaluated < stop {
		n := r.stack[len(r.stack)-1]
		r.stack = r.stack[:len(r.stack)-1]
		for {
			x := Input{Arg: NoEntry}
			if chained != nil {
				if fwd && chained.has(n) {
					x.Prev, x.HasPrev = vals.get(n-1), true
				} else if !fwd && chained.has(n+1) {
					x.Prev, x.HasPrev = vals.get(n+1), true
				}
			}
			if bitAt(r.has, n) {
				switch {
				case r.ws:
					x.Arg = r.arg.At(n)
					x.In, x.HasIn = r.valueOf(x.Arg), true
				case r.arg != nil:
					x.Arg = r.arg.At(n)
					fallthrough
				default:
					x.In, x.HasIn = vals.get(n), true
				}
			}
			var v int64
			switch { // what evalNode does, written out: it does not inline
			case r.ws:
				v = heaviestOf(vals.weight(n), &x)
			case ev.w64 != nil:
				v = heaviestOf(ev.w64[n], &x)
			case ev.wf != nil:
				v = heaviestOf(ev.wf.At(int(n)), &x)
			case ev.on != nil:
				v = ev.on.eval(n, &x)
			default:
				v = ev.eval(n, x)
			}
			if r.ws {
				// Done first: a block kept whole, or the store widened, as
				// v is written takes n's new value, not its weight.
				setBit(vals.done, n)
			}
			vals.set(n, v)
			if chainArg && x.HasPrev {
				// r.chainArg, its forward cases written out.
				switch {
				case !fwd:
					r.arg.Set(n, r.chainArg(n, x))
				case !x.HasIn || r.min == (x.Prev < x.In) && x.Prev != x.In:
					r.arg.Set(n, Entry(n-1))
				case x.Prev == x.In && r.less(Entry(n-1), x.Arg):
					r.arg.Set(n, Entry(n-1))
				}
				if x.HasIn && x.Prev == x.In && o.ties != nil {
					// The explicit best ties with the chain's: logged,
					// whichever the argmax is (the chain's is found
					// again without a log).
					o.ties.add(x.Arg, x.Arg, n)
				}
			}
			if r.order != nil {
				r.order.nodes.add(n)
			}
			r.evaluated++
			r.remaining--
			lo, hi := at.span(n)
			for p := pk[lo:hi]; len(p) > 0; {
				code, size := uint64(p[0]), 1
				if code >= 0x80 {
					code, size = longCode(p)
				}
				e := decodeEntry(n, code)
				p = p[size:]
				if e >= 0 {
					r.offer(int32(e), v, Entry(n))
					continue
				}
				peer, k := g.slotAddr(^int32(e))
				b := r.out.buf(peer, r.esz)
				*b = binary.LittleEndian.AppendUint32(*b, k)
				*b = binary.LittleEndian.AppendUint64(*b, uint64(v))
				if keyed {
					*b = binary.LittleEndian.AppendUint64(*b, uint64(o.TieKey(n)))
				}
			}
			nx := int32(-1)
			if chained != nil {
				if fwd && chained.has(n+1) {
					nx = n + 1
				} else if !fwd && chained.has(n) {
					nx = n - 1
				}
			}
			if nx < 0 {
				break
			}
			// pend.dec by hand: too large for the compiler to inline,
			// and this is the replay's most frequent step.
			if i, sh := nx>>1, uint(nx&1)<<2; r.pend.c[i]>>sh&15-1 < countBig-1 {
				r.pend.c[i] -= 1 << sh
				if r.pend.c[i]>>sh&15 != 0 {
					break
				}
			} else if !r.pend.decRare(nx) {
				break
			}
			if r.evaluated >= stop {
				r.stack = append(r.stack, nx) // ready: the next superstep's
				break
			}
			n = nx
		}
	}
}

// offer gives unevaluated node m the value v of its input src in push
// mode, and makes m ready when it was the last. With TrackArg, m's arg is
// the input of the best value, on equal values the one of the smaller key
// (as the pull's, whatever order the values come in).
func (r *replayer) offer(m int32, v int64, src Entry) {
	if r.ws {
		r.offerArg(m, v, src)
	} else if !bitAt(r.has, m) {
		r.vals.set(m, v)
		setBit(r.has, m)
		if r.arg != nil {
			r.arg.Set(m, src)
		}
	} else if old := r.vals.get(m); v != old {
		if r.min == (v < old) {
			r.vals.set(m, v)
			if r.arg != nil {
				r.arg.Set(m, src)
			}
		}
	} else if r.arg != nil {
		held := r.arg.At(m)
		if r.o.ties != nil {
			r.o.ties.add(src, held, m)
		}
		if r.less(src, held) {
			r.arg.Set(m, src)
		}
	}
	if i, sh := m>>1, uint(m&1)<<2; r.pend.c[i]>>sh&15-1 < countBig-1 { // pend.dec by hand
		r.pend.c[i] -= 1 << sh
		if r.pend.c[i]>>sh&15 == 0 {
			r.stack = append(r.stack, m)
		}
	} else if r.pend.decRare(m) {
		r.stack = append(r.stack, m)
	}
}

// offerArg is offer's choice of m's best input in a replay of weights in
// its store (ReplayOptions.inStore): the best so far is the arg's value.
func (r *replayer) offerArg(m int32, v int64, src Entry) {
	if !bitAt(r.has, m) {
		setBit(r.has, m)
		r.arg.Set(m, src)
		return
	}
	held := r.arg.At(m)
	if old := r.valueOf(held); v != old {
		if r.min == (v < old) {
			r.arg.Set(m, src)
		}
		return
	}
	if r.o.ties != nil {
		r.o.ties.add(src, held, m)
	}
	if r.less(src, held) {
		r.arg.Set(m, src)
	}
}

// valueOf returns the value of input e, evaluated: a local node's, or
// the one that came for a slot (ReplayOptions.inStore).
func (r *replayer) valueOf(e Entry) int64 {
	if e >= 0 {
		return r.vals.get(int32(e))
	}
	return r.slotVal.get(int32(^e))
}

// receive stores the values that arrived and releases the nodes waiting
// for them.
func (r *replayer) receive(recv []comm.Msg) {
	for _, m := range recv {
		// Values arrive at the in-slots of the replay's direction.
		if err := r.g.eachArrival(m, r.esz, r.o.Backward, r.arrived, r.arrive); err != nil {
			r.fail(err)
		}
	}
}

// arrive takes the value (and key) of record rec, which came for slot s.
func (r *replayer) arrive(s int32, rec []byte) {
	if r.order != nil {
		r.order.slotStep.Set(int(s), int64(r.step))
	}
	if !r.slotKey.null() {
		r.slotKey.set(s, int64(binary.LittleEndian.Uint64(rec[12:])))
	}
	v, n := int64(binary.LittleEndian.Uint64(rec[4:])), r.g.slotNode[s]
	if r.push {
		if r.ws {
			r.slotVal.set(s, v)
		}
		r.offer(n, v, Entry(^s))
		return
	}
	r.slotVal.set(s, v)
	if r.pend.dec(n) {
		r.stack = append(r.stack, n)
	}
}

// eachArrival checks message m's records, esz bytes each (the slot's index
// k among m.Peer's, then the value and whatever follows), against this
// rank's slots: k in range, the local end an output (out) or an input, no
// value before (with arrived nil, a slot may have several: markLongest's
// tokens). It marks each slot arrived and calls fn with it and its
// record; the first bad record ends the message and is returned. The
// replays, the walks and the exchanges along the edges (ExchangeEdges,
// PropagateMax) all read their peers' records through it.
func (g *DAG) eachArrival(m comm.Msg, esz int, out bool, arrived slotBits, fn func(s int32, rec []byte)) error {
	q, buf := m.Peer, m.Buf
	base, cnt := g.peerBase[q], g.peerBase[q+1]-g.peerBase[q]
	if len(buf)%esz != 0 {
		return fmt.Errorf("rank %d: graph: message of %d bytes along the edges from rank %d, not a whole number of %d-byte records", g.rank, len(buf), q, esz)
	}
	for ; len(buf) > 0; buf = buf[esz:] {
		k := binary.LittleEndian.Uint32(buf)
		if k >= uint32(cnt) {
			return fmt.Errorf("rank %d: graph: rank %d sent a value for edge %d of %d", g.rank, q, k, cnt)
		}
		s := base + int32(k)
		if g.slotIsOut(s) != out || arrived != nil && arrived.has(s) {
			return fmt.Errorf("rank %d: graph: rank %d sent an unexpected value for edge %d", g.rank, q, k)
		}
		if arrived != nil {
			arrived.set(s)
		}
		fn(s, buf[:esz])
	}
	return nil
}

// slotBits is a bit a slot (a DAG's slots number in the millions on a
// pure MPI program at several ranks: a byte each was 1 MB of each
// replay and exchange along the edges there).
type slotBits []uint64

func newSlotBits(n int32) slotBits { return make(slotBits, (n+63)/64) }

func (b slotBits) has(s int32) bool { return b[s>>6]>>(s&63)&1 != 0 }

func (b slotBits) set(s int32) { b[s>>6] |= 1 << (s & 63) }

func (r *replayer) fail(err error) {
	if r.bad == nil {
		r.bad = err
	}
}

func (r *replayer) describe(n int32) string {
	if r.o.Describe != nil {
		return r.o.Describe(n)
	}
	return fmt.Sprintf("node %d of rank %d", n, r.g.rank)
}

// cycle builds the CycleError every rank returns: the lowest rank with a
// waiting node describes one whose chain predecessor is done, so it waits
// only on explicit inputs, and names those.
func (r *replayer) cycle(remaining int64) error {
	var ex string
	g := r.g
	inOff, in := g.inOff, g.in
	if r.o.Backward {
		inOff, in = g.outOff, g.out
	}
	for n := int32(0); n < g.Len() && ex == ""; n++ {
		if r.pend.get(n) == 0 {
			continue
		}
		if p := r.prevOf(n); p >= 0 && r.pend.get(p) > 0 {
			continue
		}
		if inOff == nil {
			// InsOnly or OutsOnly: what n waits for is not listed anywhere.
			what := "successors"
			if !r.o.Backward {
				what = "predecessors"
			}
			ex = r.describe(n) + fmt.Sprintf(" waits for %d of its %s", r.pend.get(n), what)
			break
		}
		ex = r.describe(n) + " waits for "
		sep := ""
		for _, e := range in[inOff[n]:inOff[n+1]] {
			if m, ok := e.Node(); ok && r.pend.get(m) > 0 {
				ex += sep + r.describe(m)
			} else if s, ok := e.Slot(); ok && !r.arrived.has(s) {
				ex += sep + fmt.Sprintf("an event held by analysis rank %d", g.slotPeer(s))
			} else {
				continue
			}
			sep = " and "
			if len(ex) > 400 {
				ex += " …"
				break
			}
		}
	}
	msgs, err := r.c.Gatherv(0, []byte(ex))
	if err != nil {
		return err
	}
	var first []byte
	if r.c.Rank() == 0 {
		for _, m := range msgs {
			if len(m) > 0 {
				first = m
				break
			}
		}
	}
	first, err = r.c.Bcast(0, first)
	if err != nil {
		return err
	}
	return &CycleError{Remaining: remaining, Example: string(first)}
}

// Walk follows paths through the DAG by token passing, for walking back
// along the inputs a replay chose (Result.Arg) across ranks. Every rank
// starts tokens at its starts (often none). For a token at local node n
// reached after depth steps, step returns the next entry to visit, or
// NoEntry to end the token's path; a local entry continues at once, a slot
// sends the token to the peer, which continues at its end of the edge in
// the next superstep. Walk returns when no token is left anywhere. It is
// collective; an error is returned on every rank.
func Walk(c comm.Comm, g *DAG, starts []int32, step func(n int32, depth int64) Entry) error {
	type token struct {
		n     int32
		depth int64
	}
	tot, err := c.AllreduceInt64(comm.Sum, []int64{int64(g.Len()), int64(len(starts))})
	if err != nil {
		return err
	}
	// An acyclic walk visits each node at most once per start.
	limit := (tot[0] + 1) * max(tot[1], 1)
	var queue []token
	for _, s := range starts {
		queue = append(queue, token{s, 0})
	}
	var bad error
	out := newOutbox(c.Size())
	next := int64(window(0, 1))
	for superstep := int64(0); ; superstep++ {
		var sent int64
		for len(queue) > 0 && bad == nil {
			t := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			for {
				if t.n < 0 || t.n >= g.Len() {
					bad = fmt.Errorf("rank %d: graph: walk reached node %d of %d", g.rank, t.n, g.Len())
					break
				}
				if t.depth > limit {
					bad = fmt.Errorf("rank %d: graph: walk longer than the graph: its steps form a cycle", g.rank)
					break
				}
				e := step(t.n, t.depth)
				if e == NoEntry {
					break
				}
				if m, ok := e.Node(); ok {
					t = token{m, t.depth + 1}
					continue
				}
				s, _ := e.Slot()
				if s >= g.Slots() {
					bad = fmt.Errorf("rank %d: graph: walk step to slot %d of %d", g.rank, s, g.Slots())
					break
				}
				peer, k := g.slotAddr(s)
				b := out.buf(peer, 12)
				*b = binary.LittleEndian.AppendUint32(*b, k)
				*b = binary.LittleEndian.AppendUint64(*b, uint64(t.depth+1))
				sent++
				break
			}
		}
		recv, err := c.Exchange(out.take())
		if err != nil {
			return err
		}
		for _, m := range recv {
			q, buf := m.Peer, m.Buf
			for ; len(buf) >= 12 && bad == nil; buf = buf[12:] {
				k := binary.LittleEndian.Uint32(buf)
				base := g.peerBase[q]
				if int32(k) >= g.peerBase[q+1]-base {
					bad = fmt.Errorf("rank %d: graph: walk token for edge %d from rank %d", g.rank, k, q)
					break
				}
				queue = append(queue, token{g.slotNode[base+int32(k)], int64(binary.LittleEndian.Uint64(buf[4:]))})
			}
		}
		out.recycle(recv)
		// Whether the walk is over is agreed after a window of
		// supersteps (window), as a replay's end: a path that crosses
		// ranks at every step takes as many. No token sent anywhere in the
		// last superstep leaves none to go on with.
		if superstep+1 < next {
			continue
		}
		next = superstep + 1 + int64(window(int(superstep+1), 1))
		if done, err := walkEnded(c, sent, bad); done || err != nil {
			return err
		}
		if superstep > limit {
			return comm.Agree(c, fmt.Errorf("graph: walk longer than the graph: its steps form a cycle"))
		}
	}
}

// outbox batches a superstep's messages per destination rank for Exchange:
// an index per rank (O(ranks) once per replay), a list of the ranks
// written to, so building and handing over a superstep's messages costs
// O(messages).
type outbox struct {
	at   []int32 // by rank: index in msgs + 1, 0 if none yet
	msgs []comm.Msg
	free [][]byte // received buffers, read, to send in again
}

func newOutbox(ranks int) outbox { return outbox{at: make([]int32, ranks)} }

// buf returns the buffer of the message to peer, with room for a record
// of rec bytes: made for 64 records on first use, and doubled when full.
// append's growth of a large slice is 1.25 times: a replay's message of
// megabytes (a pure MPI trace's first superstep) was copied into some 40
// fresh arrays, five times its bytes, the pages of each faulted in.
func (o *outbox) buf(peer int32, rec int) *[]byte {
	i := o.at[peer]
	if i == 0 {
		var b []byte
		if n := len(o.free); n > 0 {
			b, o.free = o.free[n-1][:0], o.free[:n-1]
		} else {
			b = make([]byte, 0, 64*rec)
		}
		o.msgs = append(o.msgs, comm.Msg{Peer: int(peer), Buf: b})
		i = int32(len(o.msgs))
		o.at[peer] = i
	}
	b := &o.msgs[i-1].Buf
	if cap(*b)-len(*b) < rec {
		*b = slices.Grow(*b, max(len(*b), rec))
	}
	return b
}

// recycle keeps the buffers of messages received and read, which belong to
// their receiver (comm.Comm), for later supersteps' messages: a replay
// crossing ranks thousands of times allocated a buffer per peer and
// superstep (60 MB on the 10 M-event halo).
//
// It keeps as many as there are ranks: where values flow one way, the
// receiver sends none of them, and would hold every message it got.
func (o *outbox) recycle(recv []comm.Msg) {
	for _, m := range recv {
		if cap(m.Buf) > 0 && len(o.free) < len(o.at) {
			o.free = append(o.free, m.Buf)
		}
	}
}

// take hands over the batched messages and empties the outbox.
func (o *outbox) take() []comm.Msg {
	m := o.msgs
	for _, x := range m {
		o.at[x.Peer] = 0
	}
	o.msgs = nil
	return m
}
