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
	// The creation intervals, summed per construct as they end, where a
	// column of a value per task took 8 bytes a task: createSum[k] is
	// construct createLoc[k]'s: a program has few constructs (recursive
	// ones taking turns), searched in order, and a map (createAt) beyond
	// the first few.
	createLoc []int32
	createSum []int64
	createAt  map[int32]int
	// odd holds the intervals of tasks that may be written more than once
	// or whose construct is not known yet: a task_create whose creation
	// failed (a task created twice, an unknown id) ends the interval of
	// the task created last, which its own creator may write too, and
	// before any creation that is task 0, not created yet. The last value
	// written counts, resolved in Finish; none in a sound trace.
	odd map[Task]int64
	// last is the value written for s.lastCreated while it is the task
	// created last (lastT, NoTask none): what it holds if it becomes odd.
	lastT Task
	lastV int64
	// prev is s.lastCreated after the previous event: a task_create that
	// left it unchanged created nothing.
	prev Task
	// Per thread: the task it created last and when, until the thread's
	// next event that is not part of the creation (its dependences and
	// attributes come right after task_create) ends the creation.
	creating  []Task
	createdAt []int64
}

// NewTaskStats returns the pass.
func NewTaskStats() *TaskStats {
	return &TaskStats{byLoc: map[int32]int{}, lastT: NoTask}
}

func (ts *TaskStats) Before(s *Sim, e *trace.Event, th int, dt int64) {}

// Kinds implements Filtered: After reads task creations and what ends
// them, every event but a creation's dependences and attributes.
func (ts *TaskStats) Kinds() (before, after KindSet) {
	return 0, AllKinds &^ KindsOf(trace.TaskDeps, trace.TaskDependence, trace.TaskAttr)
}

func (ts *TaskStats) After(s *Sim, e *trace.Event, th int) {
	created := s.lastCreated != ts.prev // this event created a task
	ts.prev = s.lastCreated
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
		ts.record(s, t, e.Time-ts.createdAt[th])
		ts.creating[th] = NoTask
	}
	if e.Kind != trace.TaskCreate {
		return
	}
	if t := s.lastCreated; s.valid(t) {
		if !created {
			ts.makeOdd(s, t) // its interval ends here too
		}
		ts.creating[th], ts.createdAt[th] = t, e.Time
	}
}

// record sets task t's creation interval to d.
func (ts *TaskStats) record(s *Sim, t Task, d int64) {
	if ts.odd != nil {
		if _, ok := ts.odd[t]; ok {
			ts.odd[t] = d
			return
		}
	}
	tk := &s.Tasks[t]
	if tk.State == NotCreated {
		ts.makeOdd(s, t)
		ts.odd[t] = d
		return
	}
	if t == s.lastCreated {
		ts.lastT, ts.lastV = t, d
	}
	if tk.Kind == KindExplicit {
		ts.addCreate(s.Loc(t), d)
	}
}

// makeOdd moves task t's interval, if written, from its construct's sum
// to odd. t is s.lastCreated, so its interval, if written, is last's.
func (ts *TaskStats) makeOdd(s *Sim, t Task) {
	if _, ok := ts.odd[t]; ok {
		return
	}
	if ts.odd == nil {
		ts.odd = map[Task]int64{}
	}
	var d int64
	if ts.lastT == t {
		d = ts.lastV
		if tk := &s.Tasks[t]; tk.State != NotCreated && tk.Kind == KindExplicit {
			ts.addCreate(s.Loc(t), -d)
		}
	}
	ts.odd[t] = d
}

// addCreate adds d to construct loc's creation intervals.
func (ts *TaskStats) addCreate(loc int32, d int64) {
	ts.createSum[ts.construct(loc)] += d
}

// construct returns loc's index in createLoc, adding it if new.
func (ts *TaskStats) construct(loc int32) int {
	if ts.createAt == nil {
		for k, l := range ts.createLoc {
			if l == loc {
				return k
			}
		}
		if len(ts.createLoc) == fewConstructs {
			ts.createAt = make(map[int32]int, 2*fewConstructs)
			for k, l := range ts.createLoc {
				ts.createAt[l] = k
			}
		}
	}
	if ts.createAt != nil {
		if k, ok := ts.createAt[loc]; ok {
			return k
		}
		ts.createAt[loc] = len(ts.createLoc)
	}
	ts.createLoc = append(ts.createLoc, loc)
	ts.createSum = append(ts.createSum, 0)
	return len(ts.createLoc) - 1
}

// fewConstructs is how many constructs TaskStats searches in order.
const fewConstructs = 8

// Finish computes the statistics from the final task table.
func (ts *TaskStats) Finish(s *Sim) {
	ts.PerThread = make([]int64, len(s.Threads))
	tk := s.Tasks
	times := s.Times()
	lastLoc, lastI := int32(0), -1 // tasks made one after another share a construct
	for t := 0; t < tk.Len(); t++ {
		// A taskwait with a depend clause is a task to OMPT, not to the
		// program: no construct row.
		if tk[t].State == NotCreated || tk[t].Kind != KindExplicit || tk[t].Flags&FlagTaskwait != 0 {
			continue
		}
		loc := s.Loc(Task(t))
		i := lastI
		if i < 0 || loc != lastLoc {
			var ok bool
			if i, ok = ts.byLoc[loc]; !ok {
				i = len(ts.Stats)
				ts.byLoc[loc] = i
				ts.Stats = append(ts.Stats, ConstructStats{Loc: loc, MinNS: -1})
			}
			lastLoc, lastI = loc, i
		}
		c := &ts.Stats[i]
		c.Count++
		st, d := times.At(Task(t))
		if st < 0 {
			continue
		}
		c.Executed++
		c.SumNS += d
		if c.MinNS < 0 || d < c.MinNS {
			c.MinNS = d
		}
		c.MaxNS = max(c.MaxNS, d)
		c.Hist[Bucket(d)]++
		if th := tk[t].Thread(); th >= 0 && th < len(ts.PerThread) {
			ts.PerThread[th]++
		}
	}
	for i := range ts.Stats {
		c := &ts.Stats[i]
		if c.MinNS < 0 {
			c.MinNS = 0
		}
		if len(ts.createLoc) > 0 {
			if k := ts.construct(c.Loc); k < len(ts.createSum) {
				c.CreateNS = ts.createSum[k]
			}
		}
	}
	for t, d := range ts.odd {
		if tk := &s.Tasks[t]; tk.State != NotCreated && tk.Kind == KindExplicit && tk.Flags&FlagTaskwait == 0 {
			ts.Stats[ts.byLoc[s.Loc(t)]].CreateNS += d
		}
	}
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
