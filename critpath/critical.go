package critpath

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime/debug"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
)

// collectDropped runs the garbage collector and returns the free pages to
// the system (debug.FreeOSMemory) before a phase allocates large arrays, or
// after it dropped arrays of about n elements, when they are large. The
// wait states, the task graph and the fragment DAG each allocate a few
// large arrays into a heap the simulation left full of holes; pages
// released first are what they fault in, instead of freed pages kept on top
// of theirs: on the 10 M-event traces, max RSS 148 → 141 MiB (stencil),
// 138 → 124 (nearest), 134 → 128 (halo), for 1–5 % more wall
// (PERFORMANCE.md, thirteenth round). On the small objects of thousands of
// small processes a collection costs tens of milliseconds, so small
// processes skip it; so does a rank with fewer than 2^17 elements, whose
// later arrays fit in the pages its simulation's peak left: on the stop
// hook's trace (91 000 nodes a rank) the calls were 6 % of the wall for
// no change in max RSS, where on 4 M-event traces (300 000–500 000 a
// rank) skipping them cost 2–3.5 MB.
// In-process ranks each release the pages, unlike the collection after each
// phase (comm.PerProcess): released once for the process, when every rank
// had arrived, the critical path's peak heap on the 10 M-event halo was
// 104.8 MiB instead of 99.6 (PERFORMANCE.md, fifteenth round).
func (in *Input) collectDropped(n int) {
	if len(in.Procs) > 0 && n >= 1<<17 && n/len(in.Procs) >= 1<<14 {
		debug.FreeOSMemory()
	}
}

// procOf returns the process whose nodes hold node n, given where each
// process's nodes begin (a process without nodes begins where the next
// does: the last of equal bases is the one holding n).
func procOf(bases []int32, n int32) int {
	i, _ := slices.BinarySearch(bases, n+1)
	return i - 1
}

// nodeKey is a partition-independent name of node n of process proc.
func nodeKey(proc int, n int32) int64 { return int64(proc)<<32 | int64(n) }

func predKey(proc, thread int32, event int64) graph.Key {
	return graph.Key{A: int64(proc)<<32 | int64(thread), B: event}
}

// Analyze builds the distributed fragment DAG of all processes, finds its
// longest path and walks it back across ranks, and computes the task
// graph's per-root metrics (seed ompc-distributed-task-profiling.txt
// §4.5.3). It is collective: every rank calls it, and only summaries
// travel to rank 0, whose Result holds the report's sections.
func Analyze(in *Input) (Result, error) {
	var res Result
	var nodes, edges int
	for i, pg := range in.Procs {
		nodes += pg.frags.Len()
		if i < len(in.Edges) {
			edges += in.Edges[i].Len() // cross-process edges into this rank's processes
		}
	}
	// Without a cross-process edge on any rank, each process's DAG is a
	// graph of its own: built, replayed and dropped one after the other,
	// when some rank holds several. A rank of one process builds the one
	// DAG below: the recorded fib(27) (one process, 636 000 tasks) peaked
	// 6–13 MiB higher in the phase, and 11–17 MiB of RSS, the other way.
	several := int64(0)
	if len(in.Procs) > 1 {
		several = 1
	}
	// The keys follow the node ids when the rank's processes come in trace
	// order (Input.Procs), each process's nodes in theirs, the orphan
	// last: ties among local nodes are then decided by id.
	following := true
	for i := 1; i < len(in.Procs); i++ {
		following = following && in.Procs[i].rank > in.Procs[i-1].rank
	}
	// Where every rank's keys follow its nodes and every weight is known
	// to be narrow (sim.Frags.NarrowWeights), the forward replay's store
	// of weights is filled from the processes' packed weights directly
	// (the path's summary reads its nodes' there too): no column of the
	// rank's weights is made, whose plan, drain and read into the store
	// decoded each weight three times (weightsDirect). Not where a
	// process has remote dependences: the task graph reads its latency
	// nodes' weights from the column a chunk at a time, where the packed
	// weights give them all at once (Frags.WeightsOf: 12 bytes a remote
	// dependence, 2 MB a rank on nearest --radix 64 at the task graph's
	// peak).
	notDirect := int64(0)
	if in.columnWeights {
		notDirect = 1
	}
	for _, pg := range in.Procs {
		if !following || !pg.frags.NarrowWeights() || pg.depIn.Len() > 0 {
			notDirect = 1
		}
	}
	sums, err := in.Comm.AllreduceInt64(comm.Sum, []int64{int64(edges), int64(nodes), several, notDirect})
	if err != nil {
		return res, err
	}
	apart := sums[0] == 0 && sums[1] > 0 && sums[2] > 0
	direct := sums[3] == 0 && !apart
	// What the simulation and the wait states dropped goes back to the
	// system before the graphs allocate.
	in.collectDropped(nodes)
	// The fragment nodes' weights, packed since the simulation, into one
	// column of the rank, packed by frame of reference (a process's
	// fragments weigh alike: 1–3 bytes a node where 32 bits took 4), the
	// orphan node's last (the replays read them through weight, a call a
	// node, or the column). Its words are counted first (a pass over the
	// packed weights): grown as they came, they made about three times
	// their bytes of garbage, which the phase's collector at +10 % ran
	// after (9 more collections on the 10 M-event stencil). Made before
	// the task graph, whose latency nodes read it, since it is smaller
	// than the packed weights (3.6 MB for 5.4 on the 10 M-event stencil
	// at the task graph's peak, the phase's). Processes apart drain
	// theirs one at a time (analyzeApart).
	var w narrow.Framed
	if !apart && !direct {
		in.drainParked(&w, nodes)
	}
	if err := in.check(); err != nil {
		return res, err
	}
	// The task graph first: its DAG is gone before the fragment DAG is
	// built, and the dependence pairs it reads become the fragment DAG's
	// dependence edges below.
	tg, err := in.taskGraph()
	if err != nil {
		return res, err
	}
	in.fragW = nil
	if in.AfterTaskGraph != nil {
		in.AfterTaskGraph()
	}
	// The task graph's DAG and values are garbage: collected now, their
	// pages take the fragment DAG's arrays instead of fresh ones.
	tasks := 0
	for _, pg := range in.Procs {
		tasks += pg.taskW.Len()
	}
	in.collectDropped(tasks)
	// What the task graph's build parked comes back into the pages its
	// arrays left; a failed read stops every rank (comm.Agree: the others
	// learn the failing rank's error).
	var parkErr error
	for _, pg := range in.Procs {
		if pg.frags != nil && parkErr == nil {
			parkErr = pg.frags.Unpark()
		}
	}
	if err := comm.Agree(in.Comm, parkErr); err != nil {
		return res, fmt.Errorf("critical path: %w", err)
	}
	if err := in.check(); err != nil {
		return res, err
	}
	if apart {
		return in.analyzeApart(tg)
	}
	weight := func(n int32) int64 { return w.At(int(n)) }
	// Fragment DAG: every process's nodes, offset per process, in the
	// order of the weights.
	b := graph.NewBuilder(in.Comm.Rank(), in.Comm.Size())
	bases := make([]int32, len(in.Procs))
	// A cross-process edge from a process of another rank is declared to
	// it by key, the others are local edges: each reserved as counted.
	me := in.Comm.Rank()
	away := 0
	for i := range min(len(in.Procs), len(in.Edges)) {
		e := &in.Edges[i]
		for k := range e.Len() {
			if in.Owners.Owner(int(e.PredProcAt(k))) != me {
				away++
			}
		}
	}
	b.Reserve(nodes+1, edges-away)
	b.ReserveRemoteKeys(away)
	// The dependences' maps' tasks' last fragments (fragBatch), room for
	// the most tasks of a process whose pairs are mapped: none for
	// processes without dependences (1.9 MB of BOTS health's build).
	maxTasks := 0
	for _, pg := range in.Procs {
		if pg.mapsDeps() {
			maxTasks = max(maxTasks, pg.taskW.Len())
		}
	}
	lasts := make([]int32, 0, maxTasks)
	for i, pg := range in.Procs {
		bases[i] = b.Len()
		pg.addFragments(b, bases[i], &lasts)
	}
	// A node for cross-process edges whose source cannot be found (a send
	// outside any fragment in a damaged trace): counted, not fatal. A
	// source outside the graph by design (on a thread of type unknown, or
	// in an MPI call made while no task ran: sim.Frags.OutsideGraph) has
	// no node either: the edge is left out
	// (from the orphan, which weighs nothing and follows nothing),
	// uncounted.
	orphan := b.AddNode(false)
	// Tie keys: process rank and node within the process, computed from
	// the node id (processes' nodes are contiguous, in process order).
	key := func(n int32) int64 {
		if n == orphan {
			return math.MaxInt64
		}
		i := procOf(bases, n)
		return nodeKey(in.Procs[i].rank, n-bases[i])
	}
	var orphans int64
	// The senders' nodes are looked up by cursor: a process's local
	// senders, and the keys other ranks send, come mostly in event order.
	sendAt := make([]sim.EventCursor, len(in.Procs))
	for i, pg := range in.Procs {
		sendAt[i] = pg.frags.SendNode.Cursor()
	}
	resolve := func(key graph.Key) (int32, bool) {
		proc, th := int(key.A>>32), int(key.A&0xffffffff)
		i := proc - in.First
		if i < 0 || i >= len(in.Procs) {
			orphans++
			return orphan, true
		}
		n, ok := sendAt[i].Get(th, key.B)
		if !ok {
			if !in.Procs[i].frags.OutsideGraph(th, key.B) {
				orphans++
			}
			return orphan, true
		}
		return bases[i] + n, true
	}
	for i, pg := range in.Procs {
		if i >= len(in.Edges) {
			break
		}
		e := &in.Edges[i]
		recvAt := pg.frags.RecvNode.Cursor()
		for k := range e.Len() {
			dst, ok := recvAt.Get(int(e.ThreadAt(k)), e.EventAt(k))
			if !ok {
				continue
			}
			key := predKey(e.PredProcAt(k), e.PredThreadAt(k), e.PredEventAt(k))
			if owner := in.Owners.Owner(int(e.PredProcAt(k))); owner != me {
				b.AddRemoteInKey(bases[i]+dst, owner, key)
				continue
			}
			// A sender on this rank is an edge between local nodes: no
			// declaration travels (or waits) for it.
			src, _ := resolve(key)
			b.AddEdge(src, bases[i]+dst)
		}
		pg.frags.RecvNode = sim.EventNodes{}
	}
	// Declared: nothing after this reads the cross-process edges, and the
	// caller holds no other reference (Input.Edges): their arrays go.
	in.Edges = nil
	// The outputs' side alone: the forward replay pushes each value to
	// the node's outputs and records its order, and the backward replay
	// runs in the reverse of that order, pulling from the outputs
	// (graph.ReplayInReverse). The inputs' CSR (4 bytes an edge) is never
	// built.
	dag, err := b.Build(in.Comm, graph.BuildOptions{Resolve: resolve, OutsOnly: true, Release: in.check})
	if err != nil {
		return res, err
	}
	if err := in.check(); err != nil {
		return res, err
	}
	if in.Spill != nil {
		dag.SpillTo(in.Spill) // the forward replay's order
	}
	sendAt, lasts = nil, nil
	// The tasks' first fragments are read again only to count the tasks
	// of zero slack, once the longest paths are marked: a bit a node
	// marks them through the replays instead (firstMarks; 1.5 MB less at
	// the forward replay on the 10 M-event nearest).
	firsts := make([][]uint64, len(in.Procs))
	for i, pg := range in.Procs {
		pg.frags.SendNode = sim.EventNodes{} // Build resolved every key
		pg.deps = packed.Pairs{}             // and mapped the task pairs
		pg.frags.DropLast()
		if firsts[i] = pg.firstMarks(); firsts[i] != nil {
			pg.frags.DropFirst()
		}
	}
	// The tasks' run times are read again only once the path is marked
	// (eachRan; the report's task records after the phase): they wait in
	// the spill file through the replays (1 MB of BOTS health's peak).
	if in.Spill != nil {
		for _, pg := range in.Procs {
			if pg.taskW.Park(in.Spill) != nil {
				break // the rest stay in memory
			}
		}
	}
	in.collectDropped(nodes) // the builder's packed edges: the replay takes their pages
	// The forward replay reads a node's weight once, as it writes its EF:
	// the weights go into the EFs' store (graph.WeightStore), and their
	// column waits in the spill file until the path's summary (6.7 MB of
	// the 10 M-event halo's peak). Made here, not before the DAG: where
	// the weights are alike (the gen stencil's), their column is a third
	// of the store, and the DAG's build held 2 MB more beside the store.
	// The store is filled from the column where it waits, a piece at a
	// time: read back whole beside the store and the DAG, it was the
	// phase's peak (6.6 MB of the gen tree's). Weights past 2³² go there
	// too, their sums being int64s (BOTS health large's three main
	// fragments of 4.3 to 70 s read its column back whole beside the DAG,
	// 1.2 MB of the phase's peak). Every rank decides alike:
	// the replays that follow are collective, and a failed read stops
	// every rank.
	var ws *graph.WeightStore
	store := direct
	if !direct {
		wide := int64(0)
		if !following || !w.Summable() {
			wide = 1
		}
		all, err := in.Comm.AllreduceInt64(comm.Max, []int64{wide})
		if err != nil {
			return res, err
		}
		store = all[0] == 0
	}
	if store {
		var serr error
		if direct {
			ws, serr = in.weightsDirect(nodes + 1)
			weight = in.weightsAt(bases, orphan)
		} else {
			ws, serr = graph.NewWeightStore(&w)
		}
		if serr != nil {
			serr = fmt.Errorf("rank %d: critical path: fragment weights: %w", in.Comm.Rank(), serr)
		}
		if err := comm.Agree(in.Comm, serr); err != nil {
			return res, err
		}
	} else if err := comm.Agree(in.Comm, in.unparkWeights(&w)); err != nil {
		return res, err
	}
	var lp *graph.Longest
	switch {
	case ws != nil:
		lp, err = graph.LongestPathsWeighted(in.Comm, dag, ws, key)
		ws = nil
	case following:
		lp, err = graph.LongestPathsFollowing(in.Comm, dag, &w, key)
	default:
		lp, err = graph.LongestPathsOf(in.Comm, dag, weight, key, false)
	}
	if err != nil {
		return res, err
	}
	if err := in.check(); err != nil {
		return res, err
	}
	dag.DropInputs() // their counts: no forward replay follows
	path, err := graph.WalkPath(in.Comm, dag, lp)
	if err != nil {
		return res, err
	}
	// A task has zero slack (it could not start any later without
	// lengthening the run) when its first fragment lies on a longest
	// path. The backward replay marks those nodes from the forward values
	// alone, in their array: no backward lengths, and no copy of the
	// forward values at the tasks' first fragments. It consumes the
	// forward values and the arguments, which the walk no longer needs,
	// before the path's summary is made: on a long path the summary's
	// lists are the phase's largest arrays after the DAG's.
	span := lp.Span
	col := &w
	if direct {
		col = nil // the starts are the arguments' EFs
	}
	on, err := graph.OnLongestPathsColumn(in.Comm, dag, col, lp)
	if err != nil {
		return res, err
	}
	if err := in.check(); err != nil {
		return res, err
	}
	// The DAG, the forward values and the arguments are garbage: collected
	// first, their pages take what comes back from the spill file.
	in.collectDropped(nodes)
	var uerr error
	if !direct {
		uerr = in.unparkWeights(&w) // the path's summary weighs its nodes
	}
	for _, pg := range in.Procs {
		if uerr != nil {
			break
		}
		if err := pg.taskW.Unpark(); err != nil {
			uerr = fmt.Errorf("rank %d: critical path: %w", in.Comm.Rank(), err)
		}
	}
	if err := comm.Agree(in.Comm, uerr); err != nil {
		return res, err
	}
	var t1, zero int64
	for i, pg := range in.Procs {
		f := pg.frags
		t1 += f.Work
		if marks := firsts[i]; marks != nil {
			for k, word := range marks {
				for ; word != 0; word &= word - 1 {
					if on.On(bases[i] + int32(k*64+bits.TrailingZeros64(word))) {
						zero++
					}
				}
			}
			continue
		}
		pg.eachRan(func(t int32, _ int64) {
			if first := f.FirstOf(t); first >= 0 && on.On(bases[i]+first) {
				zero++
			}
		})
	}
	summary := in.pathSummary(path, 0, orphan, weight, bases)
	return in.finish(tg, span, t1, zero, orphans, &summary)
}

// drainParked drains the weights of in's processes (nodes in all) into w,
// the rank's column (Input.fragW), and parks it in the spill file where
// there is one: neither the task graph, but for its latency nodes' few
// weights (narrow.Framed.Gather), nor the DAG's build reads them (6.6 MB
// of the gen tree's task graph and build). On a failed write it stays in
// memory.
func (in *Input) drainParked(w *narrow.Framed, nodes int) {
	*w = drainWeights(in.Procs, nodes)
	in.fragW = w
	if in.Spill != nil {
		_ = w.Park(in.Spill)
	}
}

// weightsDirect returns the forward replay's store of the rank's n
// fragment weights, filled from its processes' packed weights, which it
// keeps (weightsAt reads them again), and the orphan node's 0: one
// decode of each weight. The first failed read of them is returned.
func (in *Input) weightsDirect(n int) (*graph.WeightStore, error) {
	ws, err := graph.NewWeightStoreOf(n, func(add func(x int64)) {
		for _, pg := range in.Procs {
			pg.frags.EachWeight(add)
		}
		add(0)
	})
	for _, pg := range in.Procs {
		if err == nil {
			err = pg.frags.Err()
		}
	}
	return ws, err
}

// weightsAt returns the weight of the rank's node n from its process's
// packed weights (weightsDirect), through a cursor (the path's summary
// reads a process's nodes mostly in order): weightSlots of them, process
// i's in slot i%weightSlots, so that a path through thousands of
// processes holds a few, and one alternating between processes keeps
// each one's. The orphan node's, and that of a node past it, is 0.
func (in *Input) weightsAt(bases []int32, orphan int32) func(n int32) int64 {
	type slot struct {
		proc int
		c    *sim.WeightCursor
	}
	var slots [weightSlots]slot
	return func(n int32) int64 {
		i := procOf(bases, n)
		if i < 0 || n >= orphan {
			return 0
		}
		s := &slots[i%weightSlots]
		switch {
		case s.c == nil:
			s.proc, s.c = i, in.Procs[i].frags.WeightCursor()
		case s.proc != i:
			s.proc = i
			s.c.Reset(in.Procs[i].frags)
		}
		return s.c.At(n - bases[i])
	}
}

// weightSlots is how many processes' weight cursors weightsAt keeps.
const weightSlots = 64

// unparkWeights reads the fragment weights' column back from the spill
// file (narrow.Framed.Unpark), its error naming the rank.
func (in *Input) unparkWeights(w *narrow.Framed) error {
	if err := w.Unpark(); err != nil {
		return fmt.Errorf("rank %d: critical path: fragment weights: %w", in.Comm.Rank(), err)
	}
	return nil
}

// drainWeights moves the weights of procs' fragment nodes (nodes in all)
// into a framed column, in node order, and a last weight 0 (the orphan
// node's, of Analyze's DAG), its words counted first.
func drainWeights(procs []*Proc, nodes int) narrow.Framed {
	var plan narrow.FramedPlan
	for _, pg := range procs {
		pg.frags.PlanWeights(&plan)
	}
	plan.Add(0)
	var wb narrow.FramedBuilder
	wb.Reserve(nodes + 1)
	wb.ReserveWords(plan.Words())
	for _, pg := range procs {
		pg.frags.DrainWeightsTo(&wb)
	}
	wb.Append(0)
	return wb.Finish()
}

// finish sums the phase's counts over the ranks and brings the path's
// summaries to rank 0, which makes the report's sections.
func (in *Input) finish(tg *report.Graph, span, t1, zero, orphans int64, summary *pathSummary) (Result, error) {
	var res Result
	// The path's summary read the attributes of its nodes, and the DAG
	// the weights of all, which the simulation may have written to the
	// spill file (sim.Frags.Err): a failed read stops every rank here,
	// before the summaries travel.
	var readErr error
	for _, pg := range in.Procs {
		if pg.frags != nil && readErr == nil {
			readErr = pg.frags.Err()
		}
	}
	bad := int64(0)
	if readErr != nil {
		bad = 1
	}
	sums, err := in.Comm.AllreduceInt64(comm.Sum, []int64{t1, zero, orphans, bad})
	if err != nil {
		return res, err
	}
	if sums[3] > 0 {
		if readErr != nil {
			return res, fmt.Errorf("critical path: %w", readErr)
		}
		return res, errors.New("critical path: another rank could not read its fragment attributes or weights back")
	}
	all, err := in.gatherSummaries(summary)
	if err != nil {
		return res, err
	}
	if in.Comm.Rank() == 0 {
		res.CriticalPath, res.Path, err = in.cpReport(span, sums[0], sums[1], all)
		if err != nil {
			return Result{}, err
		}
		res.Graph = tg
		if sums[2] > 0 {
			res.Warnings = report.Warnings{Count: sums[2], First: []string{fmt.Sprintf("critical path: %d cross-process edges whose source event has no fragment (damaged trace?)", sums[2])}}
		}
	}
	return res, nil
}

// gatherSummaries brings every rank's summary to rank 0, in rank order:
// the summaries themselves, then the bytes of their node lists, each
// apart (Gatherv, which within the process hands the slices over).
func (in *Input) gatherSummaries(s *pathSummary) ([]pathSummary, error) {
	all, err := reduce.GatherRows(in.Comm, []pathSummary{*s})
	if err != nil {
		return nil, err
	}
	segs, err := in.Comm.Gatherv(0, s.Segments.join())
	if err != nil {
		return nil, err
	}
	var full [][]byte
	if in.Path {
		if full, err = in.Comm.Gatherv(0, s.Full.join()); err != nil {
			return nil, err
		}
	}
	if in.Comm.Rank() != 0 {
		return nil, nil
	}
	if len(all) != len(segs) || in.Path && len(full) != len(all) {
		return nil, fmt.Errorf("critical path: %d summaries, %d lists of segments", len(all), len(segs))
	}
	for r := range all {
		all[r].Segments.buf = segs[r]
		if in.Path {
			all[r].Full.buf = full[r]
		}
	}
	return all, nil
}

// pathSummary is one rank's share of the critical path, summarised.
type pathSummary struct {
	Nodes     int64
	Crossings int64
	ByKind    map[string][2]int64 // name → ns, nodes
	ByCons    map[string][2]int64
	ByProc    map[int][2]int64
	Longest   pathNodes
	Names     []string // what Segments' and Full's kinds and constructs index
	Segments  nodeList
	Full      nodeList // only with Input.Path
	// The gaps between consecutive nodes of positive weight within the
	// rank's stretches of the path, by class, and the stretches (offPath).
	Gaps      []int64
	Stretches []byte
	Ready     []int64 // trace rank, its first work's start: per process on the path
}

// nameTable interns the kinds and constructs of a rank's path nodes.
type nameTable struct {
	names []string
	index map[string]uint32
	// The names of a node's kind and construct, by process and the
	// node's kind and location: looked up once each.
	desc     map[descKey][2]uint32
	lastKey  descKey
	lastDesc [2]uint32
	hasLast  bool
}

type descKey struct {
	proc int
	kind sim.FragKind
	loc  int32
}

func (t *nameTable) id(s string) uint32 {
	i, ok := t.index[s]
	if !ok {
		i = uint32(len(t.names))
		t.index[s] = i
		t.names = append(t.names, s)
	}
	return i
}

// describe returns the ids of the kind and construct of node attributes
// a of process i (Proc.describe).
func (t *nameTable) describe(i int, pg *Proc, a sim.Attr) (kind, cons uint32) {
	k := descKey{i, a.Kind, a.Loc}
	if t.hasLast && k == t.lastKey {
		return t.lastDesc[0], t.lastDesc[1]
	}
	d, ok := t.desc[k]
	if !ok {
		kn, cn := pg.describe(a)
		d = [2]uint32{t.id(kn), t.id(cn)}
		t.desc[k] = d
	}
	t.lastKey, t.lastDesc, t.hasLast = k, d, true
	return d[0], d[1]
}

// segment is a path segment being made: consecutive nodes of one thread.
type segment struct {
	rank       int
	thread     int32
	kind, cons uint32
	start, dur int64
}

// pathSummary summarises the rank's steps of the critical path, whose
// nodes are the rank's nodes from offset on (bases: where each process's
// begin; end: where the last one's end, the orphan node's id in the
// rank's DAG; weight(n) weighs node n).
func (in *Input) pathSummary(path *graph.Path, offset, end int32, weight func(n int32) int64, bases []int32) pathSummary {
	s := pathSummary{ByKind: map[string][2]int64{}, ByCons: map[string][2]int64{}, ByProc: map[int][2]int64{}}
	names := nameTable{index: map[string]uint32{}, desc: map[descKey][2]uint32{}}
	// Time and nodes by name id and by process, made maps at the end.
	var byKind, byCons [][2]int64
	byProc := make([][2]int64, len(in.Procs))
	addAt := func(m *[][2]int64, k uint32, ns int64) {
		for int(k) >= len(*m) {
			*m = append(*m, [2]int64{})
		}
		(*m)[k][0] += ns
		(*m)[k][1]++
	}
	mixed := uint32(math.MaxUint32)
	var seg segment
	hasSeg := false
	prevProc, prevDepth := -1, int64(-2)
	// The path visits each process's nodes mostly in increasing order: a
	// cursor per process decodes their attributes as it goes instead of
	// from their block's start each time.
	cursors := make([]sim.AttrCursor, len(in.Procs))
	for i, pg := range in.Procs {
		if pg.frags != nil {
			cursors[i] = pg.frags.Attrs.Cursor()
		}
	}
	// broken: since the last segment began, the path left its process (or
	// passed through nodes on another rank); only nodes reached without a
	// break merge, so segments do not depend on the partition.
	broken := true
	ci := -1 // the process of the node before, whose range is tried first
	var gaps gapWalk
	var classes []uint8 // by kind id, 255: not yet known
	// Each process's first work in the window (gapWalk.ready): the
	// start of its first node of positive weight, looked for when the
	// path first reaches the process (the simulation makes nodes about
	// in time order). weight is valid for the path's processes.
	ready := map[int64]int64{}
	gaps.ready = func(rank int64) (int64, bool) {
		if t, ok := ready[rank]; ok {
			return t, true
		}
		i := int(rank) - in.First
		if i < 0 || i >= len(in.Procs) || in.Procs[i].frags == nil {
			return 0, false
		}
		c := in.Procs[i].frags.Attrs.Cursor()
		for k := int32(0); int(k) < in.Procs[i].frags.Len(); k++ {
			if weight(bases[i]+k) > 0 {
				t := c.At(k).Start
				ready[rank] = t
				s.Ready = append(s.Ready, rank, t)
				return t, true
			}
		}
		return 0, false
	}
	for st := range path.Steps() {
		gaps.step(st.Depth)
		st.Node += offset
		if st.Cross {
			s.Crossings++
		}
		i := ci
		if i < 0 || st.Node < bases[i] || i+1 < len(bases) && st.Node >= bases[i+1] {
			i = procOf(bases, st.Node)
		}
		// The orphan node follows the last process's nodes: procOf gives
		// it the last process, which has none when its events are all
		// missing (a rank file holding its header alone).
		if i < 0 || i >= len(in.Procs) || st.Node >= end {
			broken = true
			continue // the orphan node
		}
		pg := in.Procs[i]
		n := st.Node - bases[i]
		ci = i
		if prevDepth != st.Depth+1 || prevProc != i {
			broken = true
			if prevProc >= 0 && prevProc != i && prevDepth == st.Depth+1 {
				s.Crossings++ // a change of process between two nodes on this rank
			}
		}
		prevProc, prevDepth = i, st.Depth
		s.Nodes++
		ns := weight(st.Node)
		a := cursors[i].At(n)
		kind, cons := names.describe(i, pg, a)
		addAt(&byKind, kind, ns)
		addAt(&byCons, cons, ns)
		byProc[i][0] += ns
		byProc[i][1]++
		// Every output places a node where its weight happened: an MPI
		// call that waited for its partner weighs its tail, from the
		// end of its wait (measured from the window's start if later).
		at := a.Start
		if a.Wait > 0 {
			at = max(a.Start, in.WindowStartNS) + a.Wait
		}
		if in.Path {
			s.Full.add(pg.rank, a.Thread, kind, cons, at, ns)
		}
		if ns > 0 {
			for int(kind) >= len(classes) {
				classes = append(classes, 255)
			}
			if classes[kind] == 255 {
				classes[kind] = nodeClass(names.names[kind])
			}
			// A node begun before the window (a fragment recording
			// switched on inside, its weight the part in the window) is
			// on the path from the window's start: from its recorded
			// start, the time before the window was a negative gap.
			start := max(at, in.WindowStartNS)
			gaps.node(gapNode{rank: int64(pg.rank), thread: int64(a.Thread), class: classes[kind], start: start, end: start + ns})
			pn := report.PathNode{Rank: pg.rank, Thread: int(a.Thread), Kind: names.names[kind], Construct: names.names[cons], StartNS: at, DurNS: ns}
			s.Longest = keepLongest(s.Longest, pn, maxLongest)
			// Consecutive nodes on one thread merge into one segment.
			if !broken && hasSeg && seg.rank == pg.rank && seg.thread == a.Thread {
				seg.dur = max(seg.dur, at+ns-seg.start)
				if seg.kind != kind {
					if mixed == math.MaxUint32 {
						mixed = names.id("mixed")
					}
					seg.kind = mixed
				}
			} else {
				if hasSeg {
					s.Segments.add(seg.rank, seg.thread, seg.kind, seg.cons, seg.start, seg.dur)
				}
				seg, hasSeg = segment{rank: pg.rank, thread: a.Thread, kind: kind, cons: cons, start: at, dur: ns}, true
			}
			broken = false
		}
	}
	if hasSeg {
		s.Segments.add(seg.rank, seg.thread, seg.kind, seg.cons, seg.start, seg.dur)
	}
	gaps.close()
	s.Gaps, s.Stretches = gaps.sums[:], gaps.stretches
	s.Names = names.names
	for k, v := range byKind {
		if v[1] > 0 {
			s.ByKind[names.names[k]] = v
		}
	}
	for k, v := range byCons {
		if v[1] > 0 {
			s.ByCons[names.names[k]] = v
		}
	}
	for i, v := range byProc {
		if v[1] > 0 {
			s.ByProc[in.Procs[i].rank] = v
		}
	}
	return s
}

// maxLongest is how many of the critical path's longest nodes are listed.
const maxLongest = 20

// longer orders path nodes for the longest list: by duration, longest
// first, then by start, rank and thread.
func longer(a, b report.PathNode) int {
	return cmp.Or(cmp.Compare(b.DurNS, a.DurNS), cmp.Compare(a.StartNS, b.StartNS), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Thread, b.Thread))
}

// topNodes returns the first k of ns in a stable sort by longer.
func topNodes(ns []report.PathNode, k int) []report.PathNode {
	slices.SortStableFunc(ns, longer)
	if len(ns) > k {
		ns = ns[:k]
	}
	return ns
}

// keepLongest adds pn to top, the first k (at most) of the nodes so far in
// a stable sort by longer: after those it does not sort before, so that
// it is topNodes of every node, made as the path streams by without
// holding it (a node a step of a long path: 20 MB on the 10 M-event
// halo).
func keepLongest(top []report.PathNode, pn report.PathNode, k int) []report.PathNode {
	i := len(top)
	for i > 0 && longer(pn, top[i-1]) < 0 {
		i--
	}
	if i >= k {
		return top
	}
	if len(top) < k {
		top = append(top, report.PathNode{})
	}
	copy(top[i+1:], top[i:])
	top[i] = pn
	return top
}

// describe names a fragment's kind and construct for the report.
func (pg *Proc) describe(a sim.Attr) (kind, construct string) {
	switch a.Kind {
	case sim.FragTask:
		return "task", pg.names[a.Loc]
	case sim.FragImplicit:
		if l := a.Loc; l >= 0 && int(l) < len(pg.strs) {
			return "region", pg.strs[l] + " (parallel-region code)" // the user region it ran in most
		}
		return "region", "parallel-region code"
	case sim.FragSerial:
		if l := a.Loc; l >= 0 && int(l) < len(pg.strs) {
			return "serial", pg.strs[l] + " (serial code)"
		}
		return "serial", "serial code"
	case sim.FragMPI, sim.FragPost:
		name := "MPI"
		if l := a.Loc; l >= 0 && int(l) < len(pg.sites) {
			name = pg.sites[l]
		}
		return "mpi", name
	case sim.FragLatency:
		return "latency", "remote task dependence"
	default:
		return "join", "synchronisation"
	}
}

// cpReport merges the ranks' summaries into the report's section, and,
// with Input.Path, the whole path in time order.
func (in *Input) cpReport(span, t1, zero int64, parts []pathSummary) (*report.CriticalPath, report.PathSource, error) {
	cp := &report.CriticalPath{LengthNS: span, WorkNS: t1, RunTimeNS: in.RunTimeNS, ZeroSlackTasks: zero}
	if span > 0 {
		cp.Parallelism = float64(t1) / float64(span)
	}
	if cp.RunTimeNS > 0 {
		cp.ShareOfRunTime = float64(span) / float64(cp.RunTimeNS)
	}
	kinds := map[string][2]int64{}
	cons := map[string][2]int64{}
	procs := map[string][2]int64{}
	var longest []report.PathNode
	var segs int64
	for _, p := range parts {
		cp.Nodes += p.Nodes
		cp.RankCrossings += p.Crossings
		for k, v := range p.ByKind {
			kinds[k] = [2]int64{kinds[k][0] + v[0], kinds[k][1] + v[1]}
		}
		for k, v := range p.ByCons {
			cons[k] = [2]int64{cons[k][0] + v[0], cons[k][1] + v[1]}
		}
		for k, v := range p.ByProc {
			key := fmt.Sprintf("rank %d", k)
			procs[key] = [2]int64{procs[key][0] + v[0], procs[key][1] + v[1]}
		}
		longest = append(longest, p.Longest...)
		segs += p.Segments.N
	}
	cp.ByKind, cp.ByConstruct, cp.ByProcess = shares(kinds, span), shares(cons, span), shares(procs, span)
	if comp := cp.WorkOnPath(); comp > 0 && comp < span {
		cp.ComputeParallelism = float64(t1) / float64(comp)
	}
	cp.Longest = topNodes(longest, maxLongest)
	capper := newSegmentCap(report.MaxPathSegments, segs)
	if err := mergeLists(parts, func(p *pathSummary) *nodeList { return &p.Segments }, capper.add); err != nil {
		return nil, nil, err
	}
	cp.Segments, cp.Truncated = capper.result()
	var err error
	if cp.OffPath, err = offPath(parts, in.WindowStartNS, in.RunTimeNS, span); err != nil {
		return nil, nil, err
	}
	var full report.PathSource
	if in.Path {
		full = func(fn func(report.PathNode)) error {
			return mergeLists(parts, func(p *pathSummary) *nodeList { return &p.Full }, fn)
		}
	}
	return cp, full, nil
}

// shares lists categories by decreasing time with their share of the span.
func shares(m map[string][2]int64, span int64) []report.PathShare {
	out := make([]report.PathShare, 0, len(m))
	for k, v := range m {
		s := report.PathShare{Name: k, NS: v[0], Nodes: v[1]}
		if span > 0 {
			s.Share = float64(v[0]) / float64(span)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b report.PathShare) int {
		return cmp.Or(cmp.Compare(b.NS, a.NS), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// segmentCap keeps at most k of the path's segments, given in time order
// one at a time: all of them when there are k or fewer; else it merges
// neighbours on the same rank and thread (regardless of gaps), and keeps
// the k longest of those if still too many, in time order. It holds O(k)
// whatever the number of segments (capSegments of the whole list, which
// the tests keep).
type segmentCap struct {
	k, total int64
	all      []report.PathNode // with total ≤ k: every segment
	run      report.PathNode   // the merged run being made
	hasRun   bool
	runs     int64             // merged runs emitted
	first    []report.PathNode // the first k runs emitted
	top      []rankedNode      // the k longest runs: a heap, the least long at the root
}

// rankedNode is a run with its index among the runs, which orders runs
// that longer calls equal as the stable sort did.
type rankedNode struct {
	report.PathNode
	i int64
}

func newSegmentCap(k int, total int64) *segmentCap {
	return &segmentCap{k: int64(k), total: total}
}

func (c *segmentCap) add(s report.PathNode) {
	if c.total <= c.k {
		c.all = append(c.all, s)
		return
	}
	if c.hasRun && c.run.Rank == s.Rank && c.run.Thread == s.Thread {
		c.run.DurNS = max(c.run.DurNS, s.StartNS+s.DurNS-c.run.StartNS)
		if c.run.Kind != s.Kind {
			c.run.Kind = "mixed"
		}
		return
	}
	c.flush()
	c.run, c.hasRun = s, true
}

// worse orders runs from the longest: by longer, then by index.
func worse(a, b rankedNode) bool {
	if c := longer(a.PathNode, b.PathNode); c != 0 {
		return c > 0
	}
	return a.i > b.i
}

// flush emits the run being made.
func (c *segmentCap) flush() {
	if !c.hasRun {
		return
	}
	r := rankedNode{c.run, c.runs}
	c.runs++
	c.hasRun = false
	if int64(len(c.first)) < c.k {
		c.first = append(c.first, r.PathNode)
	}
	h := c.top
	switch {
	case int64(len(h)) < c.k:
		h = append(h, r)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	case len(h) > 0 && worse(h[0], r):
		h[0] = r
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			m := l
			if l+1 < len(h) && worse(h[l+1], h[l]) {
				m = l + 1
			}
			if !worse(h[m], h[i]) {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	c.top = h
}

// result returns the segments kept and whether any was dropped or merged.
func (c *segmentCap) result() ([]report.PathNode, bool) {
	if c.total <= c.k {
		return c.all, false
	}
	c.flush()
	if c.runs <= c.k {
		return c.first, true
	}
	// The k longest as topNodes orders them, then in time order (stable:
	// ties keep that order).
	slices.SortFunc(c.top, func(a, b rankedNode) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	keep := make([]report.PathNode, len(c.top))
	for i, r := range c.top {
		keep[i] = r.PathNode
	}
	slices.SortStableFunc(keep, timeOrder)
	return keep, true
}

// addFragments adds pg's fragment nodes to b, the first one at base, with
// their edges: each node's from the node before it where the fragments
// chain, the others (which move into the builder: each array is held
// once), and the task dependences, the predecessor's last fragment before
// the successor's first, of tasks that ran, without repeats (which change
// no path) (FragPass.DepsApart; made by taskGraph).
func (pg *Proc) addFragments(b *graph.Builder, base int32, lasts *[]int32) {
	f := pg.frags
	for n := 0; n < f.Len(); n++ {
		b.AddNode(f.Chained(int32(n)))
	}
	b.AddPairs(f.Edges, base)
	f.Edges = packed.Pairs{} // the builder has them now
	f.DropChained()
	pg.addFragDeps(b, base, lasts)
}

// apartSteps is how many points of a process's DAG analyzeApart checks
// at under a memory limit: once its fragments are in the builder, once
// its DAG is built, after its forward replay and after its backward one.
const apartSteps = 4

// analyzeApart is Analyze's fragment DAG when no process has an edge from
// another, on any rank (Edges are empty): each process's DAG is then a
// graph of its own, built, replayed and dropped one after the other over
// a communicator of one rank. The whole rank's DAG and its replays'
// arrays (the forward values, the arguments and the weights, 12 bytes a
// node) were live at once: on the 10 M-event imbalance (16 processes of
// fork-join tasks, 3.9 M nodes on one rank) 85 MiB at the phase's peak,
// twice the simulation's. The values are those of the rank's DAG: it is
// the processes' DAGs side by side, whose tie keys follow each one's node
// ids.
//
// A process's longest path is its span; the run's span is the largest.
// The path is walked in the process reaching it first (by trace rank; a
// process's own End is its first node reaching its span), kept from the
// walk of each process that beat the rank's best so far; the zero-slack
// tasks are marked in each process from its own span, and counted in
// those whose span is the run's.
//
// Under a memory limit (Input.Check) the loop is checked along its
// processes' steps where their DAGs grow (apartSteps a process), as
// often on every rank whatever its processes (comm.Checkpoints: the
// checks are collective): a rank of a few processes at each step, one of
// many every few processes, whose peaks the guard still sees (it reads
// the resident set's high-water mark), for a loop's eight checks (four a
// process, 8 192 on 2 048 processes at one rank, took 0.4–2.4 s more).
// Before, the phase's checks were only around the loop: a rank ran all
// its processes' replays past the limit before a check saw it.
func (in *Input) analyzeApart(tg *report.Graph) (Result, error) {
	in.Edges = nil
	self := selfComm{}
	checks := comm.Checkpoints{Check: in.Check}
	steps := apartSteps * len(in.Procs)
	// step makes the checks due after step k of process i.
	step := func(i, k int) error { return checks.After(i*apartSteps+k, steps) }
	var t1 int64
	spans := make([]int64, len(in.Procs))
	zeros := make([]int64, len(in.Procs))
	bases := make([]int32, len(in.Procs)) // each process's nodes in the rank's numbering
	var total int32
	for i, pg := range in.Procs {
		bases[i] = total
		total += int32(pg.frags.Len())
	}
	best := -1 // the process whose path is kept
	var path *graph.Path
	// The weights of the process being replayed, and of the one whose
	// path is kept.
	var w, pathW narrow.Framed
	// And the forward values and arguments of the last replay, and the
	// tasks' last fragments of the process built last (fragBatch).
	var rc graph.Recycler
	var lasts []int32
	// A process's error (a failed read of its streamed edges or order, a
	// cycle) ends the loop; every rank learns it before the collectives
	// below, as with one DAG for the rank.
	var ferr error
procs:
	for i, pg := range in.Procs {
		f := pg.frags
		t1 += f.Work
		n := f.Len()
		w = drainWeights(in.Procs[i:i+1], n)
		b := graph.NewBuilder(0, 1)
		b.Reserve(n, 0)
		pg.addFragments(b, 0, &lasts)
		if err := step(i, 0); err != nil {
			return Result{}, err
		}
		dag, err := b.Build(self, graph.BuildOptions{OutsOnly: true})
		if err != nil {
			ferr = fmt.Errorf("rank %d: process %d: %w", in.Comm.Rank(), pg.rank, err)
			break
		}
		if err := step(i, 1); err != nil {
			return Result{}, err
		}
		if in.Spill != nil {
			dag.SpillTo(in.Spill)
		}
		f.SendNode, f.RecvNode = sim.EventNodes{}, sim.EventNodes{}
		pg.deps = packed.Pairs{}
		f.DropLast()
		if n == 0 {
			// A process with no fragment (a trace salvaged down to its
			// header) has no path: replaying its empty DAG would find no
			// forward values to mark.
			dag.DropInputs()
			continue
		}
		rank := pg.rank
		cw := &w
		lp, err := rc.LongestPathsFollowing(self, dag, cw, func(m int32) int64 { return nodeKey(rank, m) })
		if err != nil {
			ferr = fmt.Errorf("rank %d: process %d: %w", in.Comm.Rank(), pg.rank, err)
			break
		}
		dag.DropInputs()
		if err := step(i, 2); err != nil {
			return Result{}, err
		}
		spans[i] = lp.Span
		if n > 0 && (best < 0 || lp.Span > spans[best] || lp.Span == spans[best] && rank < in.Procs[best].rank) {
			p, err := graph.WalkPath(self, dag, lp)
			if err != nil {
				ferr = fmt.Errorf("rank %d: process %d: %w", in.Comm.Rank(), pg.rank, err)
				break procs
			}
			best, path = i, p
			w, pathW = pathW, w // this process's weights are pathW now
			cw = &pathW
		}
		on, err := rc.OnLongestPathsColumn(self, dag, cw, lp)
		if err != nil {
			ferr = fmt.Errorf("rank %d: process %d: %w", in.Comm.Rank(), pg.rank, err)
			break
		}
		pg.eachRan(func(t int32, _ int64) {
			if first := f.FirstOf(t); first >= 0 && on.On(first) {
				zeros[i]++
			}
		})
		if err := step(i, 3); err != nil {
			return Result{}, err
		}
	}
	// The checks this rank's loop did not make (a process without
	// fragments skips its last three, an error ends the loop).
	if err := checks.Finish(); err != nil {
		return Result{}, err
	}
	if err := comm.Agree(in.Comm, ferr); err != nil {
		return Result{}, err
	}
	mine := int64(0)
	if best >= 0 {
		mine = spans[best]
	}
	g, err := in.Comm.AllreduceInt64(comm.Max, []int64{mine})
	if err != nil {
		return Result{}, err
	}
	span := g[0]
	owner := int64(math.MaxInt64)
	if best >= 0 && spans[best] == span {
		owner = int64(in.Procs[best].rank)
	}
	o, err := in.Comm.AllreduceInt64(comm.Min, []int64{owner})
	if err != nil {
		return Result{}, err
	}
	var zero int64
	for i := range in.Procs {
		if spans[i] == span {
			zero += zeros[i]
		}
	}
	var summary pathSummary
	if best >= 0 && o[0] == owner {
		at := bases[best]
		summary = in.pathSummary(path, at, total, func(m int32) int64 { return pathW.At(int(m - at)) }, bases)
	} else {
		summary = in.pathSummary(&graph.Path{}, 0, total, nil, bases)
	}
	return in.finish(tg, span, t1, zero, 0, &summary)
}
