package critpath

import (
	"encoding/binary"
	"errors"

	"github.com/ptrace-dev/ptrace/report"
)

// The classes of the gaps between consecutive nodes of the path
// (report.OffPath's fields, in this order).
const (
	gapWakeUp = iota
	gapFork
	gapThreads
	gapProcesses
	gapMPI
	gapSkew
	gapTasks
	gapClasses
)

// The kinds of node a gap's class is decided on.
const (
	nodeOther uint8 = iota // joins
	nodeSerial
	nodeRegion
	nodeTask
	nodeMPI
	nodeLatency
)

// nodeClass maps a node's kind (Proc.describe) to what a gap's class reads.
func nodeClass(kind string) uint8 {
	switch kind {
	case "serial":
		return nodeSerial
	case "region":
		return nodeRegion
	case "task":
		return nodeTask
	case "mpi":
		return nodeMPI
	case "latency":
		return nodeLatency
	}
	return nodeOther
}

// gapNode is a node of positive weight on the path, as far as its gaps
// need: where it ran, what it is, and the time its weight took: from its
// start for a fragment of code, the tail of an MPI call (its weight is
// what is left of it after its wait for its partner, sim.Attr.Wait), so
// that a node placed by itself begins no earlier than the node before it
// on the path ended, and no gap is negative. (Placed from its enter, a
// call that waited overlapped the node before; moved to begin where the
// node before ended as recorded, two such calls in a row overlapped each
// other: −248 µs across processes on an imbalanced halo.)
type gapNode struct {
	rank       int64
	thread     int64
	class      uint8
	start, end int64
}

// addGap adds the gap from a to b, consecutive on the path, to sums.
// Between processes, the part of it before b's process did its first work
// in the window (ready: its first node of positive weight's start; a late
// MPI_Init's end) is start skew, which the DAG has no node for. It
// returns the class of the gap's remainder.
func addGap(sums *[gapClasses]int64, a, b gapNode, ready func(rank int64) (int64, bool)) int {
	c := gapClass(a, b)
	g := b.start - a.end
	if c == gapProcesses && a.rank != b.rank && g > 0 {
		if r, ok := ready(b.rank); ok && r > a.end {
			skew := min(r, b.start) - a.end
			sums[gapSkew] += skew
			g -= skew
		}
	}
	sums[c] += g
	return c
}

// gapClass classifies the gap from a to b, consecutive on the path: a
// region's code entered from outside regions (serial code, an MPI call)
// is a fork; a gap around an explicit task is scheduling (its thread ran
// other work, or the task waited for a thread); a thread's next node
// after its region code is its wake-up after a barrier or join; then MPI.
func gapClass(a, b gapNode) int {
	switch {
	case a.rank != b.rank:
		return gapProcesses
	case b.class == nodeRegion && a.class != nodeRegion && a.class != nodeTask:
		return gapFork
	case a.class == nodeTask || b.class == nodeTask:
		return gapTasks
	case a.thread < 0 || b.thread < 0 || a.class == nodeLatency || b.class == nodeLatency:
		return gapProcesses
	case a.thread != b.thread:
		return gapThreads
	case a.class == nodeRegion:
		return gapWakeUp
	case a.class == nodeMPI || b.class == nodeMPI:
		return gapMPI
	}
	return gapWakeUp
}

// A stretch is a maximal run of consecutive path steps (depths Hi down
// to Lo) on one analysis rank. The gaps after its second node of positive
// weight are summed where it was walked; rank 0 adds those before its
// first node and after it, joining the stretches of all ranks
// in path order: every gap is counted once whatever the partition.
// pathSummary.Stretches holds them in the rank's path order (decreasing
// Hi), each encoded in varints (appendStretch): Hi, how many nodes of
// positive weight (0, 1, 2, or stretchMore for more), the first node's
// rank, thread, class, start and end, the second's likewise, and when
// there are more the last's rank, thread, class and end (with two, the
// second is the last). 18 int64s a
// stretch, decoded whole on rank 0, took a 1 M-event pipeline's critical
// path at mpirun -np 3 (a stretch every two nodes: the path changes
// process at every other one) from 8 to 57 MiB of heap on rank 0 and 6 to
// 23 on the others; about 21 bytes a stretch now, which rank 0 merges in
// path order as it reads them.
const stretchMore = 3

// stretchEnc appends a stretch's fields to a rank's Stretches.
type stretchEnc []byte

func (e stretchEnc) int(v int64) stretchEnc { return binary.AppendVarint(e, v) }

func (e stretchEnc) node(n gapNode, rank, time int64) stretchEnc {
	e = e.int(n.rank - rank).int(n.thread)
	e = append(e, n.class)
	return e.int(n.start - time).int(n.end - n.start)
}

// appendStretch appends the stretch that g walked last to b.
func (g *gapWalk) appendStretch(b []byte) []byte {
	e := stretchEnc(b).int(g.hi)
	e = append(e, byte(min(g.count, stretchMore)))
	if g.count >= 1 {
		e = e.node(g.first, 0, 0)
	}
	if g.count >= 2 {
		e = e.node(g.second, g.first.rank, g.first.end)
	}
	if g.count > 2 {
		l := g.last
		e = e.int(l.rank - g.first.rank).int(l.thread)
		e = append(e, l.class)
		e = e.int(l.end - g.second.end)
	}
	return e
}

// stretch is one decoded: its first and second nodes (n of them, at most
// 2), and its last (its start not read).
type stretch struct {
	hi                  int64
	n                   int
	first, second, last gapNode
}

// stretchDec reads a rank's Stretches in order.
type stretchDec struct {
	b   []byte
	err bool
}

func (d *stretchDec) int() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *stretchDec) byte() byte {
	if len(d.b) == 0 {
		d.err = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *stretchDec) node(rank, time int64) gapNode {
	n := gapNode{rank: rank + d.int(), thread: d.int(), class: d.byte()}
	n.start = time + d.int()
	n.end = n.start + d.int()
	return n
}

// next decodes the next stretch; false at the end or on malformed input
// (d.err).
func (d *stretchDec) next(s *stretch) bool {
	if len(d.b) == 0 || d.err {
		return false
	}
	*s = stretch{hi: d.int()}
	k := d.byte()
	if k > stretchMore {
		d.err = true
	}
	s.n = int(min(k, 2))
	if k >= 1 {
		s.first = d.node(0, 0)
	}
	if k >= 2 {
		s.second = d.node(s.first.rank, s.first.end)
		s.last = s.second
	}
	if k > 2 {
		s.last = gapNode{rank: s.first.rank + d.int(), thread: d.int(), class: d.byte()}
		s.last.end = s.second.end + d.int()
	}
	return !d.err
}

// gapWalk follows the rank's path steps in path order (decreasing depth)
// and sums the gaps between its consecutive nodes of positive weight.
type gapWalk struct {
	sums      [gapClasses]int64
	stretches []byte
	hasStep   bool
	lastDepth int64
	hi        int64
	count     int
	first     gapNode
	second    gapNode
	last      gapNode
	// ready gives a process's first work in the window (addGap), for the
	// rank's processes.
	ready func(rank int64) (int64, bool)
}

// step notes a path step at depth d, weighted or not.
func (g *gapWalk) step(d int64) {
	if g.hasStep && d == g.lastDepth-1 {
		g.lastDepth = d
		return
	}
	g.close()
	g.hasStep, g.hi, g.lastDepth, g.count = true, d, d, 0
}

// node notes the node of positive weight at the step noted last.
func (g *gapWalk) node(n gapNode) {
	// Rank 0 reads the first work of the process of the stretch's first
	// two nodes for the gaps it adds.
	if g.count < 2 {
		g.ready(n.rank)
	}
	switch g.count {
	case 0:
		g.first = n
	case 1:
		g.second = n
	default:
		addGap(&g.sums, g.last, n, g.ready)
	}
	g.count++
	g.last = n
}

// close ends the stretch being walked.
func (g *gapWalk) close() {
	if !g.hasStep {
		return
	}
	g.stretches = g.appendStretch(g.stretches)
	g.hasStep = false
}

var errStretches = errors.New("critical path: malformed stretches of the path")

// offPath joins the ranks' gap sums and stretches into the report's
// account of the window's time off the path (window: its start and
// length; span: the path's length). nil when the path has no node of
// positive weight. The stretches are merged in path order (the greatest
// Hi first) from the ranks' lists, each in that order already: rank 0
// holds a stretch of each rank at a time beside what it received.
func offPath(parts []pathSummary, winStart, runTime, span int64) (*report.OffPath, error) {
	var sums [gapClasses]int64
	ready := map[int64]int64{}
	var q stretchQueue
	for i, p := range parts {
		if len(p.Gaps) != 0 && len(p.Gaps) != gapClasses || len(p.Ready)%2 != 0 {
			return nil, errStretches
		}
		for k := 0; k < len(p.Ready); k += 2 {
			ready[p.Ready[k]] = p.Ready[k+1]
		}
		for k, v := range p.Gaps {
			sums[k] += v
		}
		if err := q.push(i, &stretchDec{b: p.Stretches}); err != nil {
			return nil, err
		}
	}
	readyAt := func(r int64) (int64, bool) { t, ok := ready[r]; return t, ok }
	var first, last gapNode
	has := false
	for len(q.h) > 0 {
		s := q.h[0].s
		if err := q.advance(); err != nil {
			return nil, err
		}
		if s.n == 0 {
			continue
		}
		if has {
			addGap(&sums, last, s.first, readyAt)
		} else {
			first, has = s.first, true
		}
		last = s.first
		if s.n > 1 {
			addGap(&sums, s.first, s.second, readyAt)
			last = s.last // the gaps up to it were added where it was walked
		}
	}
	if !has {
		return nil, nil
	}
	op := &report.OffPath{NS: runTime - span, Before: first.start - winStart, After: winStart + runTime - last.end,
		StartSkew: sums[gapSkew], Tasks: sums[gapTasks], WakeUp: sums[gapWakeUp], Fork: sums[gapFork], Threads: sums[gapThreads], Processes: sums[gapProcesses], MPI: sums[gapMPI]}
	for _, v := range sums {
		op.Between += v
	}
	if runTime > 0 {
		op.Share = float64(op.NS) / float64(runTime)
	}
	return op, nil
}

// stretchQueue merges the ranks' stretches by decreasing Hi: a binary
// heap of each rank's next one.
type stretchQueue struct {
	h []*stretchHead
}

type stretchHead struct {
	part int
	s    stretch
	d    *stretchDec
}

// stretchBefore orders the heads: the greater Hi first, ties by part.
func stretchBefore(a, b *stretchHead) bool {
	return a.s.hi > b.s.hi || a.s.hi == b.s.hi && a.part < b.part
}

// push adds part's first stretch.
func (q *stretchQueue) push(part int, d *stretchDec) error {
	h := &stretchHead{part: part, d: d}
	if !d.next(&h.s) {
		if d.err {
			return errStretches
		}
		return nil
	}
	q.h = append(q.h, h)
	heapUp(q.h, len(q.h)-1, stretchBefore)
	return nil
}

// advance replaces the top with its part's next stretch (or drops it).
// A part's stretches must come in decreasing Hi.
func (q *stretchQueue) advance() error {
	top := q.h[0]
	hi := top.s.hi
	if top.d.next(&top.s) {
		if top.s.hi >= hi {
			return errStretches
		}
	} else {
		if top.d.err {
			return errStretches
		}
		q.h[0] = q.h[len(q.h)-1]
		q.h = q.h[:len(q.h)-1]
	}
	heapDown(q.h, 0, stretchBefore)
	return nil
}
