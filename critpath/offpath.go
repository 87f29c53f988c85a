package critpath

import (
	"cmp"
	"errors"
	"slices"

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
// need: where it ran, what it is, when it began and ended on the path
// (its start plus its weight).
type gapNode struct {
	rank       int64
	thread     int64
	class      uint8
	start, end int64
}

// placed returns n as placed on the path after prev (both as recorded).
// An MPI call weighs from where it stopped waiting for its partner (sim:
// FragMPI) while its start is its enter: where it would begin before
// prev ended, it is moved to begin there, so that its wait counts as no
// gap rather than as a negative gap before it and a positive one after.
// The place depends on the two nodes as recorded alone, so that a rank
// places every node but the first of its stretches of the path, and rank
// 0 those.
func placed(n, prev gapNode) gapNode {
	if n.class == nodeMPI && n.start < prev.end {
		d := prev.end - n.start
		n.start += d
		n.end += d
	}
	return n
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
// to Lo) on one analysis rank. The gaps inside it from its second node of
// positive weight on are summed where it was walked; rank 0 places its
// first node after the node before on the path (placed), so it adds the
// gaps before the first and after it, joining the stretches of all ranks
// in path order: every gap is counted once whatever the partition. Flat
// in pathSummary.Stretches, stretchLen values each: Hi, Lo, how many
// nodes of positive weight (capped at 2), the first node's rank, thread,
// class, start and end as recorded, the second's likewise, the last's
// rank, thread, class, recorded end and end as placed.
const stretchLen = 18

// gapWalk follows the rank's path steps in path order (decreasing depth)
// and sums the gaps between its consecutive nodes of positive weight.
type gapWalk struct {
	sums      [gapClasses]int64
	stretches []int64
	hasStep   bool
	lastDepth int64
	hi        int64
	count     int
	first     gapNode
	second    gapNode
	last      gapNode // as recorded
	lastAt    gapNode // as placed
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
	at := n
	switch g.count {
	case 0:
		g.first = n
	case 1:
		g.second = n
		at = placed(n, g.last)
	default:
		at = placed(n, g.last)
		addGap(&g.sums, g.lastAt, at, g.ready)
	}
	g.count++
	g.last, g.lastAt = n, at
}

// close ends the stretch being walked.
func (g *gapWalk) close() {
	if !g.hasStep {
		return
	}
	f, s, l := g.first, g.second, g.last
	g.stretches = append(g.stretches, g.hi, g.lastDepth, int64(min(g.count, 2)),
		f.rank, f.thread, int64(f.class), f.start, f.end,
		s.rank, s.thread, int64(s.class), s.start, s.end,
		l.rank, l.thread, int64(l.class), l.end, g.lastAt.end)
	g.hasStep = false
}

var errStretches = errors.New("critical path: malformed stretches of the path")

// offPath joins the ranks' gap sums and stretches into the report's
// account of the window's time off the path (window: its start and
// length; span: the path's length). nil when the path has no node of
// positive weight.
func offPath(parts []pathSummary, winStart, runTime, span int64) (*report.OffPath, error) {
	var sums [gapClasses]int64
	var all [][]int64
	ready := map[int64]int64{}
	for _, p := range parts {
		if len(p.Stretches)%stretchLen != 0 || len(p.Gaps) != 0 && len(p.Gaps) != gapClasses || len(p.Ready)%2 != 0 {
			return nil, errStretches
		}
		for k := 0; k < len(p.Ready); k += 2 {
			ready[p.Ready[k]] = p.Ready[k+1]
		}
		for k, v := range p.Gaps {
			sums[k] += v
		}
		for s := p.Stretches; len(s) > 0; s = s[stretchLen:] {
			all = append(all, s[:stretchLen])
		}
	}
	// Path order: from the start, the greatest depth.
	slices.SortFunc(all, func(a, b []int64) int { return cmp.Compare(b[0], a[0]) })
	node := func(s []int64) gapNode {
		return gapNode{rank: s[0], thread: s[1], class: uint8(s[2]), start: s[3], end: s[4]}
	}
	readyAt := func(r int64) (int64, bool) { t, ok := ready[r]; return t, ok }
	var first, last, lastAt gapNode
	has := false
	for _, s := range all {
		if s[2] == 0 {
			continue
		}
		f := node(s[3:8])
		fAt := f
		if has {
			fAt = placed(f, last)
			addGap(&sums, lastAt, fAt, readyAt)
		} else {
			first, has = f, true
		}
		last, lastAt = f, fAt
		if s[2] > 1 {
			sec := node(s[8:13])
			secAt := placed(sec, f)
			addGap(&sums, fAt, secAt, readyAt)
			// The stretch's last node, placed where it was walked.
			l := gapNode{rank: s[13], thread: s[14], class: uint8(s[15]), end: s[16]}
			last, lastAt = l, l
			lastAt.end = s[17]
		}
	}
	if !has {
		return nil, nil
	}
	op := &report.OffPath{NS: runTime - span, Before: first.start - winStart, After: winStart + runTime - lastAt.end,
		StartSkew: sums[gapSkew], Tasks: sums[gapTasks], WakeUp: sums[gapWakeUp], Fork: sums[gapFork], Threads: sums[gapThreads], Processes: sums[gapProcesses], MPI: sums[gapMPI]}
	for _, v := range sums {
		op.Between += v
	}
	if runTime > 0 {
		op.Share = float64(op.NS) / float64(runTime)
	}
	return op, nil
}
