package sim

import (
	"github.com/ptrace-dev/ptrace/trace"
)

// Model turns a runtime's events into transitions (POT's "Update", Alg. 2).
// Prepare runs once before the simulation (to size task tables and count
// what must be known up front); Update runs for every event in time order;
// it may look ahead in the thread's own events (evs[i+1:]).
type Model interface {
	Prepare(s *Sim) error
	Update(s *Sim, th int, evs []trace.Event, i int)
}

// Pass is an analysis run beside the simulation (POT Alg. 1, "Analysis").
// Before sees the state before the event, with dt the time since the
// previous event of the process; After sees it once the event is applied.
type Pass interface {
	Before(s *Sim, e *trace.Event, th int, dt int64)
	After(s *Sim, e *trace.Event, th int)
	Finish(s *Sim)
}

// Sim is the simulated state of one process.
type Sim struct {
	Proc    *trace.Process
	Tasks   Tasks
	Threads []Thread
	Regions []Region
	Groups  []Group
	Ready   int // tasks in state Ready (δr = Ready > 0)
	// Completed counts tasks that reached Completed.
	Completed int64

	Now   int64 // time of the event being processed
	Begin int64 // first event of the process
	End   int64 // last event of the process
	Warn  Warnings

	// dependence edges: singly linked successor lists in a shared pool
	edgeTo   []Task
	edgeNext []int32

	// Breakdown is the built-in time-breakdown pass.
	Breakdown *Breakdown

	// RecordDeps keeps every dependence edge the model declares in
	// DepEdges, including those from tasks already completed (they are no
	// constraint at run time but are edges of the task graph). Duplicates
	// may occur.
	RecordDeps bool
	DepEdges   [][2]Task

	merge       *mergeHeap
	lastCreated Task
	taskOf      func(id int64) Task
	// touched lists other threads whose state the current event changed
	// (a region's end finishing its workers' implicit tasks).
	touched []int
}

// Pos returns the index, in thread th's events, of the event being
// processed (or, between events, of th's next one).
func (s *Sim) Pos(th int) int64 {
	if s.merge == nil {
		return -1
	}
	return int64(s.merge.pos[th])
}

// SetTaskMap tells passes how the model maps trace task ids to tasks.
func (s *Sim) SetTaskMap(f func(id int64) Task) { s.taskOf = f }

// Ahead returns thread th's events after the one being processed.
func (s *Sim) Ahead(th int) []trace.Event {
	if s.merge == nil {
		return nil
	}
	return s.Proc.Events[th][s.merge.pos[th]+1:]
}

// New prepares a simulation of p. strict turns warnings into an error.
func New(p *trace.Process, strict bool) *Sim {
	s := &Sim{Proc: p, Threads: make([]Thread, len(p.Events))}
	s.Warn.Strict = strict
	s.Begin, s.End = p.TimeRange()
	return s
}

// SetWindow sets the time window every thread is accounted over. The driver
// uses the run's global window, so that a process finishing early counts its
// threads as idle until the run ends (its processing units stay allocated),
// and all processes share one elapsed time T, as TALP's formulas assume.
// Events outside the window still drive the simulation; the breakdown and
// the fragment weights count only what lies inside it.
func (s *Sim) SetWindow(begin, end int64) {
	s.Begin, s.End = begin, end
}

// ReserveEdges pre-sizes the dependence-edge pool for about n edges.
func (s *Sim) ReserveEdges(n int) {
	s.edgeTo = make([]Task, 0, n)
	s.edgeNext = make([]int32, 0, n)
}

// AllocTasks sizes the task tables for n task slots.
func (s *Sim) AllocTasks(n int) { s.Tasks = newTasks(n) }

// Run replays every event of the process in time order through the model
// and the passes (Alg. 1). The breakdown pass always runs.
func (s *Sim) Run(m Model, passes ...Pass) error {
	if err := m.Prepare(s); err != nil {
		return err
	}
	p := s.Proc
	var h mergeHeap
	h.init(p.Events)
	s.merge = &h
	// Events before the window are simulated too: start at the earliest.
	last := s.Begin
	if h.len() > 0 {
		last = min(last, h.time[h.top()])
	}
	s.Now = last
	s.Breakdown = newBreakdown(s, last)
	b := s.Breakdown
	for h.len() > 0 {
		th := h.top()
		i := h.pos[th]
		evs := p.Events[th]
		e := &evs[i]
		dt := e.Time - last
		b.Before(s, e, th, dt)
		for _, ps := range passes {
			ps.Before(s, e, th, dt)
		}
		s.Now = e.Time
		last = e.Time
		m.Update(s, th, evs, i)
		b.After(s, e, th)
		for _, ps := range passes {
			ps.After(s, e, th)
		}
		if s.Warn.Err != nil {
			return s.Warn.Err
		}
		h.advance(th)
	}
	s.Now = max(s.End, last)
	for _, ps := range append([]Pass{b}, passes...) {
		ps.Before(s, nil, -1, s.Now-last)
		ps.Finish(s)
	}
	return s.Warn.Err
}

// tieClass orders events of different threads at equal times: what makes a
// task exist or ready (creation, completion, arrival of a remote
// dependence) goes before what starts or resumes one, so equal timestamps
// from a coarse clock do not look like a task started before it was ready.
func tieClass(e *trace.Event) uint8 {
	switch e.Kind {
	case trace.TaskCreate, trace.TaskDeps, trace.TaskDependence, trace.RemoteDepIn, trace.DetachFulfill,
		trace.ImplicitTaskEnd, trace.RemoteDepOut, trace.ThreadBegin:
		return 0
	case trace.TaskSchedule:
		if e.Args[1] != 7 && e.Args[1] != 2 { // anything but switch and yield finishes the prior task
			return 0
		}
		return 1
	case trace.SyncWaitBegin, trace.SyncBegin:
		return 0
	}
	return 1
}

// mergeHeap is a k-way merge of the threads' event streams by (time, tie
// class, thread). Each thread's head key is cached so comparisons touch two
// small arrays, not the events.
type mergeHeap struct {
	evs   [][]trace.Event
	pos   []int
	heap  []int32 // thread indices
	time  []int64 // per thread: time of its head event
	class []uint8 // per thread: tie class of its head event
}

func (h *mergeHeap) init(evs [][]trace.Event) {
	h.evs = evs
	h.pos = make([]int, len(evs))
	h.time = make([]int64, len(evs))
	h.class = make([]uint8, len(evs))
	for t, e := range evs {
		if len(e) > 0 {
			h.heap = append(h.heap, int32(t))
			h.time[t], h.class[t] = e[0].Time, tieClass(&e[0])
		}
	}
	for i := len(h.heap)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) len() int { return len(h.heap) }
func (h *mergeHeap) top() int { return int(h.heap[0]) }

func (h *mergeHeap) less(a, b int32) bool {
	if h.time[a] != h.time[b] {
		return h.time[a] < h.time[b]
	}
	if h.class[a] != h.class[b] {
		return h.class[a] < h.class[b]
	}
	return a < b
}

// advance moves the top thread to its next event.
func (h *mergeHeap) advance(th int) {
	h.pos[th]++
	if p := h.pos[th]; p < len(h.evs[th]) {
		e := &h.evs[th][p]
		h.time[th], h.class[th] = e.Time, tieClass(e)
		// Most often the same thread stays first: check before sifting.
		n := len(h.heap)
		if n < 2 || (h.less(int32(th), h.heap[1]) && (n < 3 || h.less(int32(th), h.heap[2]))) {
			return
		}
	} else {
		n := len(h.heap) - 1
		h.heap[0] = h.heap[n]
		h.heap = h.heap[:n]
	}
	if len(h.heap) > 0 {
		h.down(0)
	}
}

func (h *mergeHeap) down(i int) {
	n := len(h.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.heap[r], h.heap[l]) {
			m = r
		}
		if !h.less(h.heap[m], h.heap[i]) {
			return
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		i = m
	}
}
