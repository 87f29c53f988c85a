// Package waitstate finds MPI wait states in the synchronized trace:
// Scalasca's patterns (Late Sender, Late Receiver, Wait at N×N, Wait at
// Barrier, Late Broadcast, Early Reduce), per call site and per process,
// with the rest of the MPI time as transfer/other.
//
// It works in two steps. During the simulation a Recorder pass (one per
// process, a sim.Pass) sees every event with its corrected time and keeps,
// for each MPI call (outermost mpi_enter … mpi_exit of a thread), its
// enter and exit times and call site, and for each communication node of
// the graph.Matching the call around it. Then Analyze, collective, sends
// along the matched edges the enter time of the call around every
// send-like event (one graph.PropagateMax), so every receive-like event
// learns when the call that released it began, charges each call to at
// most one pattern and reduces rows of O(processes × call sites) to rank 0.
//
// A call's wait is the time from its enter until the partner's call began,
// capped by the call's duration and cut to the analysis window, so the
// patterns of a call never exceed its MPI time and each call counts in one
// pattern only: the categories are disjoint and add up, with Other, to the
// MPI time.
//
// The OpenMP wait states come from a second simulation pass (OMPPass,
// omp.go): the threads' time not working outside MPI, by the sync
// construct they wait in and by why no task was there to run, and the
// waits for locks and critical sections.
package waitstate

import (
	"math"
	"strings"

	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Pattern is a wait-state pattern.
type Pattern uint8

const (
	None Pattern = iota
	LateSender
	LateReceiver
	WaitNxN
	WaitBarrier
	LateBroadcast
	EarlyReduce
	NumPatterns
)

var patternNames = [NumPatterns]string{"none", "late_sender", "late_receiver", "wait_nxn", "wait_barrier", "late_broadcast", "early_reduce"}

func (p Pattern) String() string {
	if p < NumPatterns {
		return patternNames[p]
	}
	return "pattern?"
}

// site is a call site: the MPI function and the innermost user region
// (string ids of the process's table; −1 for no region).
type site struct{ fn, region int64 }

// calls are one process's MPI calls in the order they began per thread.
type calls struct {
	enter, exit []int64
	site        []int32
	// gap is the thread's time outside MPI from its previous
	// synchronizing call (one that completed a receive-like event, a
	// blocking send, or MPI_Init) to this call's enter, −1 when unknown; label the
	// location of the last parallel region begun in it (−1: none). They
	// measure a delay (Böhme et al.'s short-term cost).
	gap, label []int64
	// prev is the thread's previous synchronizing call (the one gap is
	// measured from), −1 for none: a wait there made this call late,
	// which is how waits propagate (long-term delay costs).
	prev []int32
	// The wait of each call that was sent to its cause as a delay
	// record (Analyze): its charged time and the node it waited on (−1:
	// none), so later waits can propagate back through it.
	charged  []int64
	waitNode []int32
	sites    []site
	siteIdx  map[site]int32
}

// Analysis holds what the Recorders of this rank's processes found, for
// Analyze.
type Analysis struct {
	m *graph.Matching
	// Per node: the enter time of the MPI call around it (its own time
	// when there is none), the call's index in its process's calls (−1:
	// none) and, for coll_end, the collective's operation.
	enter []int64
	call  []int32
	op    []uint8
	procs []calls
	// Per node, its matched predecessor's process, thread and event
	// (predProcs), kept by Analyze for the delay costs.
	pred, predTh []int32
	predEv       []int64
	// Per process, its nodes per thread in event order (threadNodes),
	// made once during Analyze and dropped at its end.
	byThread [][][]int32
}

// New prepares the analysis of m's processes.
func New(m *graph.Matching) *Analysis {
	n := m.Len()
	a := &Analysis{m: m, enter: make([]int64, n), call: make([]int32, n), op: make([]uint8, n), procs: make([]calls, len(m.Procs))}
	for v := range a.call {
		a.call[v] = -1
		a.enter[v] = math.MinInt64
	}
	return a
}

// Recorder is the simulation pass that records process i's MPI calls.
type Recorder struct {
	a    *Analysis
	proc int
	c    *calls
	// Per thread: its nodes in event order and the next one, the nesting
	// depth of MPI calls, the open call and the stack of user regions.
	nodes   [][]int32
	next    []int
	depth   []int32
	open    []int32
	regions [][]int64
	// Per thread since its last synchronizing call: its exit (−1 before
	// any), the MPI time spent, the last parallel region's location,
	// and whether the open call completed a receive-like event.
	lastSync, mpiSince, parSince []int64
	lastSyncCall                 []int32
	synced, sent                 []bool
}

// Recorder returns the pass for local process i (p).
func (a *Analysis) Recorder(i int, p *trace.Process) *Recorder {
	m := a.m
	T := p.NumThreads()
	r := &Recorder{a: a, proc: i, c: &a.procs[i], next: make([]int, T),
		depth: make([]int32, T), open: make([]int32, T), regions: make([][]int64, T),
		lastSync: make([]int64, T), mpiSince: make([]int64, T), parSince: make([]int64, T), lastSyncCall: make([]int32, T), synced: make([]bool, T), sent: make([]bool, T)}
	for th := range r.lastSync {
		r.lastSync[th], r.parSince[th], r.lastSyncCall[th] = -1, -1, -1
	}
	r.c.siteIdx = map[site]int32{}
	// One entry per outermost call: at most one per mpi_enter the load
	// counted, reserved so that the columns are not copied as they grow.
	n := int(p.Census.Kinds[trace.MPIEnter])
	c := r.c
	c.enter, c.exit, c.gap, c.label = make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	c.site, c.prev = make([]int32, 0, n), make([]int32, 0, n)
	r.nodes = nodesByThread(m, i, T)
	return r
}

// Before implements sim.Pass.
func (r *Recorder) Before(*sim.Sim, *trace.Event, int, int64) {}

// Finish implements sim.Pass.
func (r *Recorder) Finish(*sim.Sim) {}

// After implements sim.Pass: it follows MPI calls and user regions and
// ties the thread's next node, when this event is it, to the open call.
func (r *Recorder) After(s *sim.Sim, e *trace.Event, th int) {
	if th < 0 || th >= len(r.nodes) {
		return
	}
	switch e.Kind {
	case trace.MPIEnter:
		r.depth[th]++
		if r.depth[th] == 1 {
			st := site{fn: e.Args[0], region: -1}
			if rs := r.regions[th]; len(rs) > 0 {
				st.region = rs[len(rs)-1]
			}
			k, ok := r.c.siteIdx[st]
			if !ok {
				k = int32(len(r.c.sites))
				r.c.sites = append(r.c.sites, st)
				r.c.siteIdx[st] = k
			}
			r.open[th] = int32(len(r.c.enter))
			r.c.enter = append(r.c.enter, e.Time)
			r.c.exit = append(r.c.exit, e.Time)
			r.c.site = append(r.c.site, k)
			gap := int64(-1)
			if r.lastSync[th] >= 0 {
				gap = max(0, e.Time-r.lastSync[th]-r.mpiSince[th])
			}
			r.c.gap = append(r.c.gap, gap)
			r.c.label = append(r.c.label, r.parSince[th])
			r.c.prev = append(r.c.prev, r.lastSyncCall[th])
			r.synced[th], r.sent[th] = false, false
		}
		return
	case trace.MPIExit:
		if r.depth[th] > 0 {
			r.depth[th]--
			if r.depth[th] == 0 {
				k := r.open[th]
				r.c.exit[k] = e.Time
				fn := s.Proc.Tables.String(r.c.sites[r.c.site[k]].fn)
				// A blocking send bounds the interval too (the sender's
				// side of a message); a nonblocking one does not.
				blocking := r.sent[th] && !(len(fn) > 5 && strings.EqualFold(fn[:5], "MPI_I"))
				if r.synced[th] || blocking || fn == "MPI_Init" || fn == "MPI_Init_thread" {
					r.lastSync[th], r.mpiSince[th], r.parSince[th] = e.Time, 0, -1
					r.lastSyncCall[th] = k
				} else {
					r.mpiSince[th] += e.Time - r.c.enter[k]
				}
			}
		}
		return
	case trace.ParallelBegin:
		r.parSince[th] = e.Args[4]
		return
	case trace.RegionEnter:
		r.regions[th] = append(r.regions[th], e.Args[0])
		return
	case trace.RegionExit:
		if rs := r.regions[th]; len(rs) > 0 {
			r.regions[th] = rs[:len(rs)-1]
		}
		return
	}
	ns := r.nodes[th]
	k := r.next[th]
	if k >= len(ns) {
		return
	}
	v := ns[k]
	if r.a.m.Event[v] != s.Pos(th) {
		return
	}
	r.next[th]++
	a := r.a
	a.enter[v] = e.Time
	if r.depth[th] > 0 {
		c := r.open[th]
		a.call[v] = c
		a.enter[v] = r.c.enter[c]
		switch {
		case a.m.Role[v] == graph.RoleRecv:
			r.synced[th] = true
		case e.Kind == trace.MPISend:
			r.sent[th] = true
		}
	}
	if e.Kind == trace.CollEnd || e.Kind == trace.CollBegin {
		if e.Args[0] > 0 && e.Args[0] < trace.NumCollOps {
			a.op[v] = uint8(e.Args[0])
		}
	}
}
