package sim

import (
	"math/bits"

	"github.com/ptrace-dev/ptrace/trace"
)

// HistBuckets is the number of power-of-two duration buckets: bucket i
// holds durations in [2^i, 2^(i+1)) ns, bucket 0 also 0 ns.
const HistBuckets = 40

// Bucket returns the histogram bucket of a duration.
func Bucket(ns int64) int {
	if ns <= 1 {
		return 0
	}
	return min(bits.Len64(uint64(ns))-1, HistBuckets-1)
}

// ConstructStats are the statistics of the explicit tasks of one construct
// (source location) in one process.
type ConstructStats struct {
	Loc      int32 // location id, -1 unknown
	Count    int64
	Executed int64 // tasks that ran (some may never run in a cut trace)
	SumNS    int64 // time Running, summed
	MinNS    int64
	MaxNS    int64
	CreateNS int64 // Σ time from task_create to the creator's next event
	Hist     [HistBuckets]int64
}

// TaskStats gathers per-construct statistics (Score-P style) and how many
// tasks each thread executed. It runs beside the simulation because the
// creation interval needs the creating thread's next event.
type TaskStats struct {
	byLoc     map[int32]int
	Stats     []ConstructStats
	PerThread []int64 // explicit tasks started per thread
	createNS  []int64 // per task, filled at the creator's next event
	// Per thread: the task it created last and when, until the thread's
	// next event that is not part of the creation (its dependences and
	// attributes come right after task_create) ends the creation.
	creating  []Task
	createdAt []int64
}

// NewTaskStats returns the pass.
func NewTaskStats() *TaskStats { return &TaskStats{byLoc: map[int32]int{}} }

func (ts *TaskStats) Before(s *Sim, e *trace.Event, th int, dt int64) {}

// Kinds implements Filtered: After reads task creations and what ends
// them, every event but a creation's dependences and attributes.
func (ts *TaskStats) Kinds() (before, after KindSet) {
	return 0, AllKinds &^ KindsOf(trace.TaskDeps, trace.TaskDependence, trace.TaskAttr)
}

func (ts *TaskStats) After(s *Sim, e *trace.Event, th int) {
	if th < 0 || th >= len(s.Threads) {
		return
	}
	if ts.creating == nil {
		ts.creating = make([]Task, len(s.Threads))
		ts.createdAt = make([]int64, len(s.Threads))
		for i := range ts.creating {
			ts.creating[i] = NoTask
		}
	}
	if t := ts.creating[th]; t != NoTask {
		ts.createNS[t] = e.Time - ts.createdAt[th]
		ts.creating[th] = NoTask
	}
	if e.Kind != trace.TaskCreate {
		return
	}
	if ts.createNS == nil {
		n := s.Tasks.Len()
		if sp := s.Spare; sp != nil && cap(sp.createNS) >= n {
			ts.createNS, sp.createNS = sp.createNS[:n], nil
			clear(ts.createNS)
		} else {
			ts.createNS = make([]int64, n)
		}
	}
	if t := s.lastCreated; s.valid(t) && int(t) < len(ts.createNS) {
		ts.creating[th], ts.createdAt[th] = t, e.Time
	}
}

// Finish computes the statistics from the final task table.
func (ts *TaskStats) Finish(s *Sim) {
	ts.PerThread = make([]int64, len(s.Threads))
	tk := s.Tasks
	for t := 0; t < tk.Len(); t++ {
		if tk[t].State == NotCreated || tk[t].Kind != KindExplicit {
			continue
		}
		i, ok := ts.byLoc[tk[t].Loc]
		if !ok {
			i = len(ts.Stats)
			ts.byLoc[tk[t].Loc] = i
			ts.Stats = append(ts.Stats, ConstructStats{Loc: tk[t].Loc, MinNS: -1})
		}
		c := &ts.Stats[i]
		c.Count++
		if ts.createNS != nil {
			c.CreateNS += ts.createNS[t]
		}
		if tk[t].Started < 0 {
			continue
		}
		d := s.RunNS(Task(t))
		c.Executed++
		c.SumNS += d
		if c.MinNS < 0 || d < c.MinNS {
			c.MinNS = d
		}
		c.MaxNS = max(c.MaxNS, d)
		c.Hist[Bucket(d)]++
		if th := tk[t].Thread; th >= 0 && int(th) < len(ts.PerThread) {
			ts.PerThread[th]++
		}
	}
	for i := range ts.Stats {
		if ts.Stats[i].MinNS < 0 {
			ts.Stats[i].MinNS = 0
		}
	}
	if sp := s.Spare; sp != nil && cap(ts.createNS) > cap(sp.createNS) {
		sp.createNS = ts.createNS[:0]
	}
	ts.createNS = nil
}

// ReadySeries integrates the number of ready tasks over fixed time bins:
// Values[i] is Σ ready-count × ns within bin i (exact integers, so sums over
// processes do not depend on their order).
type ReadySeries struct {
	Start, Bin int64
	Values     []int64
}

// NewReadySeries returns a pass with n bins of width bin from start.
func NewReadySeries(start, bin int64, n int) *ReadySeries {
	return &ReadySeries{Start: start, Bin: max(bin, 1), Values: make([]int64, n)}
}

// ReadyOver implements ReadyWatcher: n tasks were ready over (from, to].
func (r *ReadySeries) ReadyOver(s *Sim, from, to int64, n int) {
	if n > 0 {
		r.add(from, to, int64(n))
	}
}

func (r *ReadySeries) Before(s *Sim, e *trace.Event, th int, dt int64) {}

func (r *ReadySeries) add(a, b, n int64) {
	a = max(a, r.Start)
	for a < b {
		// a ≥ Start and b > a: the differences are exact as unsigned,
		// where int64 ones overflow when a damaged trace's times span
		// more than 2^63 ns (a negative bin index).
		off := uint64(a) - uint64(r.Start)
		i := off / uint64(r.Bin)
		if i >= uint64(len(r.Values)) {
			return
		}
		end := b
		if left := uint64(r.Bin) - off%uint64(r.Bin); left < uint64(b)-uint64(a) {
			end = a + int64(left) // the bin's end
		}
		r.Values[i] += n * (end - a)
		a = end
	}
}

func (r *ReadySeries) After(s *Sim, e *trace.Event, th int) {}

// Kinds implements Filtered: the pass follows the ready count
// (ReadyOver), no event.
func (r *ReadySeries) Kinds() (before, after KindSet) { return 0, 0 }
func (r *ReadySeries) Finish(s *Sim)                  {}
