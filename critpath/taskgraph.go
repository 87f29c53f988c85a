package critpath

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
)

// taskGraph computes the graph metrics of seed §4.5.3 on the task graph:
// explicit tasks that ran, weighted by their run time, with data
// dependences and remote task dependences (weighted by their observed
// latency). For each root, the longest path from it, relative to the
// longest of all (the task graph's critical path). Rank 0 gets the section;
// root values never travel, only counts and exact order statistics found
// by a distributed search.
// gatherChunk is how many receives' weights the task graph reads from
// the parked fragment weights at a time.
const gatherChunk = 1 << 14

func (in *Input) taskGraph() (*report.Graph, error) {
	b := graph.NewBuilder(in.Comm.Rank(), in.Comm.Size())
	var edges, remote, tasks, leaves int64
	ran := make([][]uint64, len(in.Procs)) // per process, a bit per task that ran
	didRun := func(i int, t sim.Task) bool { return bitAt(ran[i], t) }
	// The graph's edges, per process: the dependence pairs of tasks that
	// ran, without repeats. Mostly that is every pair as the simulation
	// packed them (as its check found, or a pass here): then the graph
	// reads them in place, and so does the fragment DAG's builder, mapped,
	// after this graph is gone (addFragDeps): no second list. Otherwise
	// one pass makes both lists.
	pairs := make([]packed.Pairs, len(in.Procs))
	// Of the processes without remote dependences: the most task slots of
	// one.
	aloneMax := 0
	for i, pg := range in.Procs {
		ran[i] = make([]uint64, (pg.taskW.Len()+63)/64)
		alone := pg.depOut.Len() == 0 && pg.depIn.Len() == 0
		for t := range pg.taskW.Len() {
			if pg.taskW.At(t) >= 0 { // -1: the task never ran (eachRan)
				setBit(ran[i], int32(t))
				tasks++
			}
		}
		if alone {
			aloneMax = max(aloneMax, pg.taskW.Len())
		}
		tg := func(p, s sim.Task) (int32, int32, bool) {
			return p, s, didRun(i, p) && didRun(i, s)
		}
		if pg.kept || keepsAll(pg.deps, pg.taskW.Len(), pg.distinct, tg) {
			pairs[i] = pg.deps
		} else {
			maps := []edgeMap{tg}
			if f := pg.frags; f != nil {
				maps = append(maps, fragEdges(f))
			}
			lists := uniqueDeps(pg.deps, pg.taskW.Len(), pg.distinct, maps...)
			pairs[i] = lists[0]
			pg.deps = packed.Pairs{}
			if len(lists) > 1 {
				pg.fragDeps = lists[1]
				pg.frags.DropLast()
			}
		}
	}
	// What only the fragment DAG reads waits in the spill file (Analyze
	// reads it back): 6 MB of the 10 M-event nearest's 37 at this graph's
	// backward replay, the phase's peak (twenty-eighth round). What a
	// failed write leaves stays in memory.
	if in.Spill != nil {
		for _, pg := range in.Procs {
			if pg.frags != nil {
				_ = pg.frags.Park(in.Spill)
			}
		}
	}
	// Under a memory limit: the pairs' lists are made (a third of the
	// 18 MiB this graph grows by before its build on nearest --radix 64).
	if err := in.check(); err != nil {
		return nil, err
	}
	// The task graphs of processes without remote dependences, each on
	// its own (creationOrderBL), one after the other: 8 bytes of scratch a
	// task slot, for one process at a time, where every process's were
	// made first (on the 10 M-event forkjoin, 3.3 M tasks of 16 processes,
	// 40 MB at the task graph's peak), the run times read from the
	// process's column (a copy of them took 4 bytes a task more: 10 MB at
	// the lean stencil's peak); the roots' values 4 bytes each while they
	// fit 32 bits (rootVals), room made for each process's once they are
	// known (room for every task that ran held 10 MB for the lean
	// stencil's 16 roots).
	var rootBL rootVals
	scratch := make([]int64, aloneMax)
	general := make([]bool, len(in.Procs))
	for i, pg := range in.Procs {
		n := pg.taskW.Len()
		if pg.depOut.Len() != 0 || pg.depIn.Len() != 0 {
			general[i] = true
			continue
		}
		r, l, ok := creationOrderBL(&pairs[i], n, &pg.taskW, ran[i], scratch)
		if !ok {
			general[i] = true // the general graph below takes it
			continue
		}
		rootBL.reserve(r)
		for _, v := range scratch[:r] {
			rootBL.add(v)
		}
		leaves += l
		edges += int64(pairs[i].Len())
		pairs[i] = packed.Pairs{}
	}
	scratch = nil
	if err := in.check(); err != nil {
		return nil, err
	}
	// The others, and the remote dependences between them, in one
	// distributed DAG.
	// A node per task slot, in process then task order (a task that never
	// ran is a node without edges, which the counts below skip: no map
	// from tasks to nodes), then one per remote dependence. Sized once: the
	// builder's arrays would otherwise grow by copying.
	bases := make([]int32, len(in.Procs)+1)
	// Remote dependences whose predecessor is on another rank are
	// declared to it; those of a process on this rank are local edges,
	// declared to no one (as the fragment DAG's): a declaration held 40
	// bytes and its exchange 30 more, for each of the 1.67 M remote
	// dependences of a 16-process pipeline on one rank.
	me := in.Comm.Rank()
	remotes, declared, items := 0, 0, 0
	for i, pg := range in.Procs {
		bases[i+1] = bases[i]
		if general[i] {
			bases[i+1] += int32(pg.taskW.Len())
		}
		if general[i] && i < len(in.Edges) {
			// Only remote dependences make latency nodes (not messages).
			e := &in.Edges[i]
			remotes += min(e.Len(), pg.depIn.Len())
			items += e.Len()
			away := 0
			for k := range e.Len() {
				if in.Owners.Owner(int(e.PredProcAt(k))) != me {
					away++
				}
			}
			declared += min(away, pg.depIn.Len())
		}
	}
	slots := int(bases[len(in.Procs)])
	b.Reserve(slots+remotes+1, 0)
	b.ReserveRemoteKeys(declared)
	// The remote dependences' local edges, latency node → successor and
	// predecessor → latency node, packed (2–4 bytes an edge, where the
	// builder's arrays of edges added one by one take 8): the two lists
	// are the builder's largest on a pipeline through processes.
	lat, pred := packed.NewPairsByA(), packed.NewPairsByA()
	lat.Grow(remotes, 3)
	pred.Grow(remotes-declared, 3)
	// The nodes' weights, packed by frame of reference (tasks made one
	// after another run alike: 0–3 bytes a node where 32 bits took 4),
	// appended in node order: the task slots', the orphan's, then each
	// process's latency nodes' once their receives' weights are read.
	// Under a memory limit: the builder's room is made (its arrays come
	// zeroed from the heap's reused pages: 5–10 MiB a rank of the 20 this
	// graph grows by between two checks on nearest --radix 64).
	if err := in.check(); err != nil {
		return nil, err
	}
	var w narrow.FramedBuilder
	w.Reserve(slots + remotes + 1)
	for i, pg := range in.Procs {
		if !general[i] {
			continue
		}
		for t := range pg.taskW.Len() {
			b.AddNode(false)
			w.Append(max(pg.taskW.At(t), 0))
		}
		b.AddPairs(pairs[i], bases[i])
		edges += int64(pairs[i].Len())
	}
	// The node of a remote dependence's predecessor, from its key; the
	// orphan node, a node without inputs, stands for those that are not
	// found (no remote_dep_out of an isolated process either).
	if err := in.check(); err != nil {
		return nil, err
	}
	orphan := b.AddNode(false)
	w.Append(0)
	depOutAt := make([]sim.EventCursor, len(in.Procs))
	for i, pg := range in.Procs {
		depOutAt[i] = pg.depOut.Cursor()
	}
	resolve := func(key graph.Key) (int32, bool) {
		proc, th := int(key.A>>32), int(key.A&0xffffffff)
		i := proc - in.First
		if i < 0 || i >= len(in.Procs) || !general[i] {
			return orphan, true
		}
		t, ok := depOutAt[i].Get(th, key.B)
		if !ok || !didRun(i, t) {
			return orphan, true
		}
		return bases[i] + t, true
	}
	// Remote dependences: a latency node on the successor's side, weighing
	// the receive's fragment (read from the packed weights: the critical
	// path unpacks them all only after this graph).
	// (latency node, its receive's fragment) pairs of a process, in one
	// array for all: grown by appending, a process's after another's left
	// 38 times a process's pairs as garbage on a 16-process pipeline. And
	// the weights of a process's latency nodes, appended once read.
	var recv []int32
	var latW []int64
	// The receives' fragments in order, and their weights (Gather), and
	// the first failed read of them, agreed before the collective build.
	var ord []int32
	var idx []int
	var got []int64
	var gerr error
	// Where each process's fragment nodes begin in the rank's numbering
	// (Input.fragW's).
	fragBase := make([]int32, len(in.Procs))
	for i := 1; i < len(in.Procs); i++ {
		if f := in.Procs[i-1].frags; f != nil {
			fragBase[i] = fragBase[i-1] + int32(f.Len())
		} else {
			fragBase[i] = fragBase[i-1]
		}
	}
	for i, pg := range in.Procs {
		if i < len(in.Edges) && general[i] {
			m := min(in.Edges[i].Len(), pg.depIn.Len())
			recv = slices.Grow(recv, 2*m)
			latW = slices.Grow(latW, m)
		}
	}
	// Under a memory limit, checks along the remote dependences, the same
	// number on every rank (comm.Checkpoints): a unit an edge as its
	// latency node is made, as many once its receive's weight is read.
	// Between the two checks around this loop nearest --radix 64 grew by
	// 5 MiB a rank (one process of 176 128 remote dependences).
	checks := comm.Checkpoints{Check: in.Check}
	units, done := 2*items, 0
	for i, pg := range in.Procs {
		if i >= len(in.Edges) {
			break
		}
		if !general[i] {
			continue
		}
		e := &in.Edges[i]
		recv, latW = recv[:0], latW[:0]
		first := b.Len() // the process's first latency node
		// The edges come in their events' order: looked up by cursor.
		depAt := pg.depIn.Cursor()
		var recvAt sim.EventCursor
		if f := pg.frags; f != nil {
			recvAt = f.RecvNode.Cursor()
		}
		for k := range e.Len() {
			if err := checks.After(done+k, units); err != nil {
				return nil, err
			}
			succ, ok := depAt.Get(int(e.ThreadAt(k)), e.EventAt(k))
			if !ok || !didRun(i, succ) {
				continue
			}
			l := b.AddNode(false)
			latW = append(latW, 0)
			if pg.frags != nil {
				if n, ok := recvAt.Get(int(e.ThreadAt(k)), e.EventAt(k)); ok {
					recv = append(recv, l, n)
				}
			}
			lat.Append(l, bases[i]+succ)
			key := predKey(e.PredProcAt(k), e.PredThreadAt(k), e.PredEventAt(k))
			if owner := in.Owners.Owner(int(e.PredProcAt(k))); owner != me {
				b.AddRemoteInKey(l, owner, key)
			} else {
				// The order of a node's inputs changes no backward length.
				src, _ := resolve(key)
				pred.Append(src, l)
			}
			edges++
			remote++
		}
		switch {
		case len(recv) > 0 && in.fragW != nil:
			// Looked up in the order of their fragments: the column waits
			// in the spill file (Analyze), read where they fall. After a
			// failed read the rest are not looked up (the error ends the
			// phase on every rank): the processes' own weights were
			// drained into the column, none is left to read.
			if gerr != nil {
				break
			}
			m := len(recv) / 2
			ord = slices.Grow(ord[:0], m)[:m]
			for j := range ord {
				ord[j] = int32(j)
			}
			slices.SortFunc(ord, func(a, b int32) int { return cmp.Compare(recv[2*a+1], recv[2*b+1]) })
			// A chunk of them at a time: the indices and values of all
			// took 16 bytes a remote dependence (2.8 MB a rank on nearest
			// --radix 64).
			for lo := 0; lo < m && gerr == nil; lo += gatherChunk {
				part := ord[lo:min(lo+gatherChunk, m)]
				idx, got = slices.Grow(idx[:0], len(part))[:len(part)], slices.Grow(got[:0], len(part))[:len(part)]
				for j, o := range part {
					idx[j] = int(fragBase[i] + recv[2*o+1])
				}
				if gerr = in.fragW.Gather(idx, got); gerr != nil {
					gerr = fmt.Errorf("rank %d: task graph: fragment weights: %w", me, gerr)
					break
				}
				for j, o := range part {
					latW[recv[2*o]-first] = got[j]
				}
			}
		case len(recv) > 0:
			nodes := make([]int32, len(recv)/2)
			for j := range nodes {
				nodes[j] = recv[2*j+1]
			}
			for j, lw := range pg.frags.WeightsOf(nodes) {
				latW[recv[2*j]-first] = lw
			}
		}
		for _, lw := range latW {
			w.Append(lw)
		}
		done += 2 * e.Len()
		if err := checks.After(done-1, units); err != nil {
			return nil, err
		}
	}
	if err := checks.Finish(); err != nil {
		return nil, err
	}
	weights := w.Finish()
	lat.Trim()
	pred.Trim()
	b.AddPairs(lat, 0)
	b.AddPairs(pred, 0)
	if err := comm.Agree(in.Comm, gerr); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	// Only the backward replay runs on it: the inputs' side and the output
	// counts are all it reads (4 bytes an edge less, 20 MB on the
	// 10 M-event stencil at the critical path's peak).
	// Release: the remote dependences' declarations, by key, and their
	// exchange go before the DAG's arrays are made (on the 10 M-event
	// spread at four ranks the build held 190 MB of them there).
	dag, err := b.Build(in.Comm, graph.BuildOptions{InsOnly: true, Resolve: resolve, Check: in.Check,
		Release: func() error { in.collectDropped(slots); return in.check() }})
	if err != nil {
		return nil, err
	}
	pairs = nil
	// The remote dependences' events were looked up by the build alone:
	// they go with the builder's arrays (1.1 MB at the replays that
	// follow, on the 10 M-event nearest).
	for _, pg := range in.Procs {
		pg.depOut, pg.depIn = sim.EventNodes{}, sim.EventNodes{}
	}
	// The builder's arrays (and the task pairs it was handed, when they
	// are not the simulation's own) are garbage now: collected, their
	// pages take the replay's values instead of fresh ones.
	in.collectDropped(slots)
	if err := in.check(); err != nil {
		return nil, err
	}
	// Only the longest path from each root is reported: the backward
	// replay alone gives it, no forward pass, path or tie keys.
	// Leaves among task nodes (latency nodes are edge weights), counted
	// before the replay counts the output counts down.
	for i, pg := range in.Procs {
		if !general[i] {
			continue
		}
		for t := range int32(pg.taskW.Len()) {
			if didRun(i, t) && dag.OutDegree(bases[i]+t) == 0 {
				leaves++
			}
		}
	}
	// Weights from the framed column; the DAG's output counts serve as
	// the replay's pending counts.
	bl, err := graph.BackLengthsFramed(in.Comm, dag, &weights, nil)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	// Roots among task nodes, after the isolated processes'.
	for i, pg := range in.Procs {
		if !general[i] {
			continue
		}
		for t := range int32(pg.taskW.Len()) {
			if n := bases[i] + t; didRun(i, t) && dag.InDegree(n) == 0 {
				rootBL.add(bl.Value(n))
			}
		}
	}
	bl = nil
	var localMax int64
	var sumBL int64
	rootBL.each(func(v int64) {
		localMax = max(localMax, v)
		sumBL += v
	})
	tot, err := in.Comm.AllreduceInt64(comm.Sum, []int64{tasks, edges, remote, int64(rootBL.len()), leaves, sumBL})
	if err != nil {
		return nil, err
	}
	mx, err := in.Comm.AllreduceInt64(comm.Max, []int64{localMax})
	if err != nil {
		return nil, err
	}
	cp, nroots := mx[0], tot[3]
	g := &report.Graph{Tasks: tot[0], Edges: tot[1], RemoteEdges: tot[2], Roots: nroots, Leaves: tot[4], CriticalPathNS: cp}
	if nroots == 0 || cp == 0 {
		return g, nil
	}
	// Counts at the extremes, within 4% of critical, and the histogram, all
	// from exact integer comparisons with the critical path.
	localMin := int64(math.MaxInt64)
	rootBL.each(func(v int64) { localMin = min(localMin, v) })
	mn, err := in.Comm.AllreduceInt64(comm.Min, []int64{localMin})
	if err != nil {
		return nil, err
	}
	counts := make([]int64, 3+10)
	rootBL.each(func(v int64) {
		if v == cp {
			counts[0]++
		}
		if v == mn[0] {
			counts[1]++
		}
		if 100*v >= 96*cp {
			counts[2]++
		}
		// Bucket b holds relative values in (b/10, (b+1)/10].
		bk := int((10*v+cp-1)/cp) - 1
		counts[3+min(max(bk, 0), 9)]++
	})
	cs, err := in.Comm.AllreduceInt64(comm.Sum, counts)
	if err != nil {
		return nil, err
	}
	// The median: the order statistics at (n−1)/2 and n/2.
	var lo, hi int64
	if rootBL.wide {
		lo, hi, err = median(in.Comm, rootBL.v64, nroots, mn[0], cp)
	} else {
		lo, hi, err = median(in.Comm, rootBL.v32, nroots, mn[0], cp)
	}
	if err != nil {
		return nil, err
	}
	fcp := float64(cp)
	g.RootPaths = report.RootPaths{
		Max: 1, MaxCount: cs[0], Min: float64(mn[0]) / fcp, MinCount: cs[1],
		Mean:       float64(tot[5]) / float64(nroots) / fcp,
		Median:     (float64(lo) + float64(hi)) / 2 / fcp,
		Within4Pct: cs[2], Histogram: cs[3:],
	}
	return g, nil
}

// median returns the order statistics at (n−1)/2 and n/2 (from 0) of the
// n values spread over ranks, all in [lo, hi]; vals, this rank's, are
// reordered. On one rank, a selection among the values; on several, a
// binary search on the value (kth).
func median[T rootValue](c comm.Comm, vals []T, n, lo, hi int64) (int64, int64, error) {
	if c.Size() == 1 && int64(len(vals)) == n {
		k := int(n-1) / 2
		a := int64(selectKth(vals, k))
		if n%2 == 1 {
			return a, a, nil
		}
		return a, int64(slices.Min(vals[k+1:])), nil // the values after the k-th are not below it
	}
	a, err := kth(c, vals, (n-1)/2, lo, hi)
	if err != nil {
		return 0, 0, err
	}
	b, err := kth(c, vals, n/2, lo, hi)
	return a, b, err
}

// rootValue is how the roots' values are held (rootVals).
type rootValue interface{ ~uint32 | ~int64 }

// rootVals are the roots' longest paths: 4 bytes each while every one
// fits 32 bits (run times shorter than 4.29 s: every task of a program
// without dependences is a root), else 8.
type rootVals struct {
	v32  []uint32
	v64  []int64
	wide bool
}

// reserve makes room for n more values.
func (r *rootVals) reserve(n int) {
	if r.wide {
		r.v64 = slices.Grow(r.v64, n)
	} else {
		r.v32 = slices.Grow(r.v32, n)
	}
}

func (r *rootVals) add(v int64) {
	if !r.wide {
		if v >= 0 && v <= math.MaxUint32 {
			r.v32 = append(r.v32, uint32(v))
			return
		}
		r.v64 = make([]int64, len(r.v32), max(cap(r.v32), len(r.v32)+1))
		for i, x := range r.v32 {
			r.v64[i] = int64(x)
		}
		r.v32, r.wide = nil, true
	}
	r.v64 = append(r.v64, v)
}

func (r *rootVals) len() int {
	if r.wide {
		return len(r.v64)
	}
	return len(r.v32)
}

// each calls fn with every value.
func (r *rootVals) each(fn func(v int64)) {
	if r.wide {
		for _, v := range r.v64 {
			fn(v)
		}
		return
	}
	for _, v := range r.v32 {
		fn(int64(v))
	}
}

// selectKth returns the k-th smallest (from 0) of v, reordered so that no
// value before index k is above it and none after is below it: a
// quickselect that partitions three ways (a value repeated many times, as
// the roots' run times of a recursive program, ends it at once), and
// sorts what is left when its pivots split badly too often (O(n log n) at
// worst).
func selectKth[T rootValue](v []T, k int) T {
	lo, hi := 0, len(v)
	for depth := 2 * bits.Len(uint(len(v))); hi-lo > 16; depth-- {
		if depth == 0 {
			break
		}
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi-1]
		p := max(min(a, b), min(max(a, b), c)) // the median of three
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch x := v[i]; {
			case x < p:
				v[lt], v[i] = x, v[lt]
				lt, i = lt+1, i+1
			case x > p:
				gt--
				v[gt], v[i] = x, v[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return p
		}
	}
	slices.Sort(v[lo:hi])
	return v[k]
}

// kth returns the k-th smallest (from 0) of the values spread over ranks,
// all in [lo, hi]: a binary search on the value, counting with one
// reduction per step (about 64 steps whatever the number of values). A
// step that leaves at most 3/4 of the values it counted on the side the
// k-th is on moves that side to the front of vals (vals is reordered, its
// values kept): the next steps count only it, those below it once counted
// (a step that leaves more counts them all again, cheaper than a move).
func kth[T rootValue](c comm.Comm, vals []T, k, lo, hi int64) (int64, error) {
	var below int64 // values left behind below lo
	for lo < hi {
		// hi − lo may exceed int64 (values from a damaged trace span
		// both signs): halve the difference as unsigned, or mid would
		// leave [lo, hi) and the search never end.
		mid := lo + int64((uint64(hi)-uint64(lo))/2)
		n := 0
		for _, v := range vals {
			if int64(v) <= mid {
				n++
			}
		}
		tot, err := c.AllreduceInt64(comm.Sum, []int64{below + int64(n)})
		if err != nil {
			return 0, err
		}
		left := tot[0] > k
		side := n // values on the k-th's side
		if left {
			hi = mid
		} else {
			lo, side = mid+1, len(vals)-n
		}
		if 4*side > 3*len(vals) {
			continue // counted again next time: cheaper than moved
		}
		j := 0
		for i, v := range vals {
			if (int64(v) <= mid) == left {
				vals[j], vals[i] = v, vals[j]
				j++
			}
		}
		vals = vals[:j]
		if !left {
			below += int64(n)
		}
	}
	return lo, nil
}

// edgeMap maps a dependence (pred, succ) onto a graph's nodes; ok false
// leaves it out (a task that never ran has no node).
type edgeMap func(pred, succ sim.Task) (a, b int32, ok bool)

// fragEdges maps a dependence onto the fragment DAG: the predecessor's
// last fragment before the successor's first. The predecessors' last
// fragments are looked up packed (sim.Frags.LastOf), in no order (the
// task graph's pass over a process's pairs that are not all kept, which
// is rare). The successor's first is looked up once for its run of pairs.
func fragEdges(f *sim.Frags) edgeMap {
	cur, first := sim.NoTask, int32(-1)
	return func(p, s sim.Task) (int32, int32, bool) {
		if s != cur {
			cur, first = s, f.FirstOf(s)
		}
		a := f.LastOf(p)
		return a, first, a >= 0 && first >= 0
	}
}

// fragBatch is fragEdges for the builder, a batch of pairs a call
// (graph.PairMap). The predecessors' last fragments, looked up in no
// order, are unpacked for each pass over the process's pairs (4 bytes a
// task: packed, each lookup took most of the mapping's time), into buf,
// which every process's map shares: a build holds one process's at a
// time, not every process's (6.4 MB on the 10 M-event stencil at the
// fragment DAG's build), and makes no garbage of them.
func fragBatch(f *sim.Frags, buf *[]int32) graph.PairMap {
	var last []int32
	cur, first := sim.NoTask, int32(-1)
	return func(ps, ss []int32) int {
		if len(ps) == 0 {
			last, cur = nil, sim.NoTask // the pass is over: buf goes to the next list
			return 0
		}
		if last == nil {
			*buf = f.LastsInto(*buf)
			last = *buf
		}
		ss = ss[:len(ps)]
		k := 0
		for i, p := range ps {
			if s := ss[i]; s != cur {
				cur, first = s, f.FirstOf(s)
			}
			if a := last[p]; a >= 0 && first >= 0 {
				ps[k], ss[k] = a, first
				k++
			}
		}
		return k
	}
}

// addFragDeps adds pg's dependence edges to the fragment DAG's builder b
// (pg's nodes from base), after taskGraph: those it made, or, when it read
// the simulation's pairs in place (it keeps them only then: none
// repeats), those pairs mapped as b reads them, not packed again (the
// task pairs and the tasks' last fragments must then stay until b is
// built).
func (pg *Proc) addFragDeps(b *graph.Builder, base int32, lasts *[]int32) {
	switch {
	case pg.fragDeps.Len() > 0:
		b.AddPairs(pg.fragDeps, base)
	case pg.mapsDeps():
		b.AddPairsMapped(pg.deps, base, fragBatch(pg.frags, lasts))
	}
	pg.fragDeps = packed.Pairs{}
}

// mapsDeps reports whether addFragDeps maps pg's task pairs onto
// fragments as the build reads them (fragBatch: the tasks' last
// fragments unpacked).
func (pg *Proc) mapsDeps() bool {
	return pg.fragDeps.Len() == 0 && pg.deps.Len() > 0 && pg.frags != nil
}

// keepsAll reports whether uniqueDeps would keep every pair of deps
// through m: no pair repeats an earlier one, and m keeps each.
func keepsAll(deps packed.Pairs, tasks int, distinct bool, m edgeMap) bool {
	n := 0
	eachUnique(deps, tasks, distinct, func(p, s sim.Task) {
		if _, _, ok := m(p, s); ok {
			n++
		}
	}, func() { n = 0 })
	return n == deps.Len()
}

// uniqueDeps maps every dependence edge of deps, in order, but those that
// repeat an earlier one (a task reached through two dependence addresses of
// the same predecessor), through each of maps, and packs the edges each
// keeps: the task graph's and the fragment DAG's lists come from one pass.
// The model declares a task's dependences together, so a successor's edges
// form one run and are checked against each other as they stream by (one
// decode of the list); should a successor's edges come in two runs (a
// task_dependence event after others) or a run be longer than the pairwise
// check suits, the edges are unpacked and a sort of their indices decides
// (sortedDuplicates).
func uniqueDeps(deps packed.Pairs, tasks int, distinct bool, maps ...edgeMap) []packed.Pairs {
	out := make([]packed.Pairs, len(maps))
	for k := range out {
		out[k].Grow(deps.Len(), 3)
	}
	eachUnique(deps, tasks, distinct, func(p, s sim.Task) {
		for k, m := range maps {
			if a, b, ok := m(p, s); ok {
				out[k].Append(a, b)
			}
		}
	}, func() {
		for k := range out {
			out[k] = packed.Pairs{}
		}
	})
	for k := range out {
		out[k].Trim()
	}
	return out
}

// eachUnique calls fn for every pair of deps, in order, but those that
// repeat an earlier one (uniqueDeps): all of them when the pairs are known
// distinct. Should the streaming check be lost (sim.PairCheck), it calls
// restart and then fn again for every pair kept, found by a sort.
func eachUnique(deps packed.Pairs, tasks int, distinct bool, fn func(p, s sim.Task), restart func()) {
	if distinct {
		deps.Each(fn)
		return
	}
	var c sim.PairCheck
	apart := true
	deps.Each(func(p, s sim.Task) {
		switch {
		case !apart:
		case int(s) >= tasks:
			apart = false
		case c.Add(p, s):
		default:
			if apart = !c.Lost(); apart {
				fn(p, s)
			}
		}
	})
	if apart {
		return
	}
	restart()
	all := make([][2]sim.Task, 0, deps.Len())
	deps.Each(func(p, s sim.Task) { all = append(all, [2]sim.Task{p, s}) })
	for k, dup := range sortedDuplicates(all) {
		if !dup {
			fn(all[k][0], all[k][1])
		}
	}
}

// sortedDuplicates marks the edges that repeat an earlier one, in any
// order: a sort of all edge indices (4 bytes an edge, where a set of pairs
// costs ten times that).
func sortedDuplicates(deps [][2]sim.Task) []bool {
	idx := make([]int32, len(deps))
	for k := range idx {
		idx[k] = int32(k)
	}
	slices.SortFunc(idx, func(x, y int32) int {
		if c := cmp.Compare(deps[x][0], deps[y][0]); c != 0 {
			return c
		}
		if c := cmp.Compare(deps[x][1], deps[y][1]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	dup := make([]bool, len(deps))
	for k := 1; k < len(idx); k++ {
		if deps[idx[k]] == deps[idx[k-1]] {
			dup[idx[k]] = true
		}
	}
	return dup
}
