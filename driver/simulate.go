package driver

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sort"

	"github.com/ptrace-dev/ptrace/anomaly"
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/critpath"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/internal/spill"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
	"github.com/ptrace-dev/ptrace/waitstate"
)

// readyBins is the resolution of the ready-task series.
const readyBins = 200

// simRow is what each process's simulation sends to rank 0: O(threads +
// constructs), never O(events).
type simRow struct {
	Rank       int
	Host       string
	Threads    int
	Times      reduce.Times
	TALP       reduce.TALPRow
	Constructs []reduce.ConstructRow
	Executed   int64 // explicit tasks run
	Requeued   int64 // times a task was switched out and re-queued
	WarnCount  int64
	Warnings   []string
	Instr      instrRow
	OMPWaits   []waitstate.OMPRow
	Mutexes    []waitstate.MutexRow
}

// window sets the analysis window, r.first and r.last, the same on every
// rank.
func (r *run) window() error {
	// Every process is accounted over one global window (from the first
	// exit from MPI_Init to the last entry into MPI_Finalize unless the
	// whole run or a window was asked for), and the ready series uses the
	// same bins on every rank.
	first, last, bounded := int64(1<<62), int64(-1<<62), int64(0)
	tFirst, tLast := first, last
	for i, p := range r.procs {
		if p.NumEvents() == 0 {
			// A rank file holding its header alone (the rank killed
			// before its first flush) has no time range: its 0, 0 would
			// start the window at the clock's zero (boot).
			continue
		}
		a, b := p.TimeRange(r.timebase(i))
		tFirst, tLast = min(tFirst, a), max(tLast, b)
		if !r.opts.WholeRun && r.opts.Window == nil {
			var ok bool
			if a, b, ok = p.MPIWindow(r.timebase(i)); ok {
				bounded = 1
			}
		}
		first, last = min(first, a), max(last, b)
	}
	mn, err := r.c.AllreduceInt64(comm.Min, []int64{first, tFirst})
	if err != nil {
		return err
	}
	mx, err := r.c.AllreduceInt64(comm.Max, []int64{last, bounded, tLast})
	if err != nil {
		return err
	}
	if mn[1] > mx[2] { // no events at all
		mn[0], mn[1], mx[0], mx[2] = 0, 0, 0, 0
	}
	r.first, r.last = mn[0], mx[0]
	bounds := "trace"
	switch {
	case r.opts.Window != nil:
		// Relative to the trace's first event, cut to the trace.
		w := r.opts.Window
		r.first = min(max(mn[1]+w.StartNS, mn[1]), mx[2])
		r.last = max(min(mn[1]+w.EndNS, mx[2]), r.first)
		if w.EndNS < w.StartNS {
			return fmt.Errorf("window ends (%s) before it starts (%s)", report.Dur(w.EndNS), report.Dur(w.StartNS))
		}
		if mn[1]+w.StartNS >= mx[2] {
			return fmt.Errorf("window starts at %s, at or after the end of the trace (it lasts %s)", report.Dur(w.StartNS), report.Dur(mx[2]-mn[1]))
		}
		bounds = "user"
	case mx[1] != 0:
		bounds = "mpi"
	}
	r.traceFirst = mn[1]
	if len(r.cut) > 0 {
		bounds = r.cutWindow(bounds)
	}
	if r.c.Rank() == 0 {
		r.rep.Trace.Window = &report.Window{StartNS: r.first, EndNS: r.last, DurationNS: r.last - r.first, Bounds: bounds}
	}
	return nil
}

// simulate runs POT's simulation on every owned process and reduces the
// breakdown, POP and task statistics to rank 0.
func (r *run) simulate() error {
	if g := r.opts.GC; g.Simulate > 0 && g.Normal > 0 {
		heavy, err := r.taskHeavy()
		if err != nil {
			return err
		}
		if heavy {
			defer r.phaseGC(g.Simulate)()
		}
	}
	bin := max((r.last-r.first+readyBins-1)/readyBins, 1)
	readySum := make([]int64, readyBins)

	var failure error
	rows := make([]simRow, 0, len(r.procs))
	for i, p := range r.procs {
		s := sim.New(p, r.timebase(i), r.opts.Strict)
		s.Scans, s.Spare = &r.scans, &r.simSpare
		s.SetWindow(r.first, r.last)
		s.RecordDeps = true
		s.EventCostNS = r.eventCost(p)
		s.KeepRecordingCost = r.opts.NoInstrumentationCorrection
		s.SyncRuntimeAsWork = r.opts.SyncRuntimeAsWork
		// A process's simulation can take minutes: its progress, and a stop
		// at once when the live heap outgrows the memory limit.
		s.Interrupt = func(done int64) error {
			if n := p.NumEvents(); n > 0 {
				r.progress("simulate", (float64(i)+min(1, float64(done)/float64(n)))/float64(len(r.procs)))
			}
			return r.guard.exceeded("simulate")
		}
		// Large tables dropped mid-simulation (the dependence tracker's,
		// once every task is created) are collected at once (sim.Sim.OnDrop).
		s.OnDrop = func(n int64) {
			if n >= 16<<20 {
				runtime.GC()
			}
		}
		model := ompt.NewModel()
		model.Spare = &r.ompSpare
		model.KeepDependences()
		stats := sim.NewTaskStats()
		ready := sim.NewReadySeries(r.first, bin, readyBins)
		frags := sim.NewFragPass(critpath.PredTimes(r.edges, i, &r.preds))
		if i < len(r.edges) {
			r.edges[i].DropPredTimes() // copied into the lookup: no later phase reads it
		}
		frags.DepsApart = true // the critical path adds them from the task pairs (criticalPath)
		frags.Spill = r.spiller()
		if i < len(r.lrSources) {
			frags.Sources, r.lrSources[i] = r.lrSources[i], nil
		}
		if i < len(r.polls) {
			frags.Polls, r.polls[i] = r.polls[i], nil
		}
		omp := waitstate.NewOMPPass(p.Header.Rank, p.NumThreads())
		passes := []sim.Pass{stats, ready, frags, omp}
		rd := critpath.NewRemoteDeps(model)
		if k := &p.Census.Kinds; k[trace.RemoteDepOut]+k[trace.RemoteDepIn] > 0 {
			passes = append(passes, rd)
		}
		if err := s.Run(model, passes...); err != nil {
			failure = fmt.Errorf("rank %d: simulation: %w", p.Header.Rank, err)
			if oe := (*outgrownError)(nil); errors.As(err, &oe) {
				failure = err // the memory limit's: the rank's processes, not this one
			}
			break
		}
		for b, v := range ready.Values {
			readySum[b] += v
		}
		row := r.simSummary(p.Header.Rank, p.Header.Host, s, stats)
		row.OMPWaits, row.Mutexes = omp.Rows, omp.Mutexes
		rows = append(rows, row)
		// The rank's last process: what only its simulation read goes
		// before the later phases' tables are made beside the rest, and
		// the run times once the critical path's column has them (about a
		// third of a task-heavy trace's simulation state: the peak was the
		// two together, twenty-seventh round).
		last := i == len(r.procs)-1
		if last {
			s.DropWorkingState()
			// Collected before the critical path's tables are made from
			// the rest: they take its pages (the gen tree's highest
			// resident set was there, 2 MiB above its next).
			if len(s.Tasks) >= collectTasks {
				runtime.GC()
			}
		}
		pg := critpath.NewProc(p, s, frags.Take(), rd)
		r.spillFrags(pg)
		if last {
			s.DropRunTimes()
			if len(s.Tasks) >= collectTasks {
				runtime.GC()
			}
		}
		pg.CompactDeps()
		r.tasks = append(r.tasks, newTaskTable(s, model, last))
		r.cp = append(r.cp, pg)
		// Every pass over the events is done: what follows works on the
		// tables the simulation built.
		p.ReleaseEvents()
		s.Recycle()
		model.Recycle()
		if r.clock != nil && i < len(r.clock.Timebases) {
			r.clock.Timebases[i] = nil
		}
		if model.CostKey != "" {
			r.costKey = model.CostKey
		}
		r.progress("simulate", float64(i+1)/float64(len(r.procs)))
	}
	r.scans = trace.Scans{} // no pass decodes events after this one
	r.simSpare, r.ompSpare, r.preds = sim.Spare{}, ompt.Spare{}, nil
	if err := agree(r.c, failure); err != nil {
		return err
	}
	all, err := reduce.GatherRows(r.c, rows)
	if err != nil {
		return err
	}
	series, err := r.c.ReduceInt64(0, comm.Sum, readySum)
	if err != nil {
		return err
	}
	if r.c.Rank() == 0 {
		r.fillSimSections(all, series, bin)
	}
	return nil
}

// collectTasks is the task slots from which the simulation's state dropped
// at a rank's last process is collected at once (a few MiB: its pages,
// 8 bytes a task and more, and the successor cells), before the tables
// the later phases keep are made.
const collectTasks = 1 << 16

// taskHeavyEvents is the most events a task the trace of a task-heavy
// analysis has: a recorded fib's have 5, the lean stencil's 4; the gen
// stencil's and nearest's 8.1, halo's none.
const taskHeavyEvents = 6

// taskHeavy reports, the same on every rank, whether the traces create a
// task for every taskHeavyEvents events or fewer: then the simulation's
// tables, which grow steadily to its peak, are the analysis's peak, and
// the simulation runs at its own collector growth (GCPercents.Simulate:
// 9.5 MiB of RSS less on the lean stencil). Elsewhere the peak is in
// another phase and a lower growth only costs collections (20–30 more on
// the 10 M-event stencil and halo).
func (r *run) taskHeavy() (bool, error) {
	var tasks, events int64
	for _, p := range r.procs {
		tasks += p.Census.Kinds[trace.TaskCreate]
		events += p.NumEvents()
	}
	sum, err := r.c.AllreduceInt64(comm.Sum, []int64{tasks, events})
	if err != nil {
		return false, err
	}
	return sum[0] > 0 && sum[0]*taskHeavyEvents >= sum[1], nil
}

// taskTable is what the anomaly detection needs of a process's executed
// explicit tasks beyond their run times (critpath.Proc.RunTime), kept from the
// simulation to the anomalies phase: which tasks ran and completed (a bit
// a task slot), and for those, in task order, start, thread and construct,
// and their cost attribute, packed (about 5 bytes a task, 2 more with a
// cost: the anomalies read them in order; the trace ids come back from the
// model's index mapping). A table of 28 bytes a task held 57 MB on the
// 10 M-event stencil trace at the simulation's peak, one of 16 bytes and a
// cost per task slot 39 MB.
type taskTable struct {
	completed []uint64 // bit t: explicit task t ran and completed
	start     packed.Ints
	thread    packed.Ints
	loc       runs
	ids       ompt.TaskIDs
	cost      runs // empty when tasks carry no cost attribute
}

// runs is a column of values read in order, kept as runs of equal values
// (a byte a task before the twenty-seventh round: 0.5 MB on BOTS health):
// the constructs of tasks made one after another, nearly always one; the
// tasks' cost attributes, one value on a gen trace (3 bytes a task as a
// varint each: 5 MB on the 10 M-event stencil, twenty-eighth round). A
// run is its value's difference from the run before's, never 0, then,
// for a run longer than one, 0 and the count after its first value: a
// column of values that change at every task costs what a varint list
// of their differences does. The first run is its value and its length.
type runs struct {
	p     packed.Ints
	last  int64
	n     int64 // the open run's length
	prev  int64 // the value of the run before the open one
	runs  int   // runs written
	count int   // values appended
}

// Append adds v at the end.
func (r *runs) Append(v int64) {
	r.count++
	if r.n > 0 && v == r.last {
		r.n++
		return
	}
	r.flush()
	r.last, r.n = v, 1
}

func (r *runs) flush() {
	switch {
	case r.n == 0:
		return
	case r.runs == 0:
		r.p.Append(r.last)
		r.p.Append(r.n)
	default:
		r.p.Append(r.last - r.prev) // not 0: the runs' values differ
		if r.n > 1 {
			r.p.Append(0)
			r.p.Append(r.n - 1)
		}
	}
	r.prev, r.runs, r.n = r.last, r.runs+1, 0
}

// Len returns the number of values appended.
func (r *runs) Len() int { return r.count }

// Finish closes the last run and drops the spare capacity; the column is
// read after it only.
func (r *runs) Finish() {
	r.flush()
	r.p.Trim()
}

// Values returns a reader of the values in order.
func (r *runs) Values() runsReader { return runsReader{v: r.p.Values()} }

// runsReader reads a runs column value by value (Next).
type runsReader struct {
	v         *packed.Values
	cur, left int64
	started   bool
}

// Next returns the next value.
func (r *runsReader) Next() int64 {
	if r.left > 0 {
		r.left--
		return r.cur
	}
	switch x := r.v.Next(); {
	case !r.started:
		r.started = true
		r.cur, r.left = x, r.v.Next()-1
	case x == 0: // the rest of the run after its first value
		r.left = r.v.Next() - 1
	default:
		r.cur += x
	}
	return r.cur
}

// spillFrags moves what is still in memory of pg's fragment nodes'
// attributes and weights to the rank's spill file, which the simulation
// streamed the rest to (sim.FragPass.Spill): of the attributes, 2.5–3.5
// bytes a node held from the simulation's end to the critical path's (5
// MB of the 10 M-event stencil's peak heap, twenty-eighth round), the
// critical path reads those of its own nodes only. Where no file can be
// made or written (no writable temporary directory, a full disk), they
// stay in memory, as before; a read back that fails stops the critical
// path with its error.
func (r *run) spillFrags(pg *critpath.Proc) { r.park(pg.SpillFrags) }

// park hands the rank's spill file to write, where there is one: what a
// phase does not read for a while goes there. A failed write ends the
// file's use for the run (spillFile); what write did not write stays in
// memory.
func (r *run) park(write func(f packed.Spiller) error) {
	if f := r.spillFile(); f != nil && write(f) != nil {
		r.spillFailed = true
	}
}

// spiller is spillFile as a packed.Spiller: nil, not a nil *spill.File,
// where there is none.
func (r *run) spiller() packed.Spiller {
	if f := r.spillFile(); f != nil {
		return f
	}
	return nil
}

// spillFile returns the rank's spill file, made at the first call; nil
// where none can be made or one failed to be written.
func (r *run) spillFile() *spill.File {
	if r.spillFailed {
		return nil
	}
	if r.spill == nil {
		f, err := spill.Create("")
		if err != nil {
			r.spillFailed = true
			return nil
		}
		r.spill = f
	}
	return r.spill
}

// closeSpill closes the spill file, which goes with it.
func (r *run) closeSpill() {
	if r.spill != nil {
		r.spill.Close()
		r.spill = nil
	}
}

// newTaskTable makes the anomalies' table of s's tasks. With drop (the
// rank's last process, whose first starts nothing reads after), each page
// of first starts goes once read, so that the table grows as they go.
func newTaskTable(s *sim.Sim, m *ompt.Model, drop bool) taskTable {
	ran := func(t int, start int64) bool {
		tk := &s.Tasks[t]
		return tk.Kind == sim.KindExplicit && start >= 0 && tk.State >= sim.Completed
	}
	// How many ran, for the columns' first blocks: a task that started
	// has a thread (a count, not the table: the starts are read once).
	n := 0
	for t := range s.Tasks {
		if tk := &s.Tasks[t]; tk.Kind == sim.KindExplicit && tk.Thread() >= 0 && tk.State >= sim.Completed {
			n++
		}
	}
	tt := taskTable{completed: make([]uint64, (len(s.Tasks)+63)/64), ids: m.IDs(), start: packed.NewDeltas()}
	tt.start.Grow(n, 3)
	tt.thread.Grow(n, 1)
	times := s.Times()
	for t := range s.Tasks {
		st, _ := times.At(sim.Task(t))
		if drop {
			s.DropStartsBelow(sim.Task(t))
		}
		if tk := &s.Tasks[t]; ran(t, st) {
			tt.completed[t/64] |= 1 << (t % 64)
			tt.start.Append(st)
			tt.thread.Append(int64(tk.Thread()))
			tt.loc.Append(int64(s.Loc(sim.Task(t))))
			if m.Cost != nil {
				tt.cost.Append(m.Cost[t])
			}
		}
	}
	tt.start.Trim()
	tt.thread.Trim()
	tt.loc.Finish()
	tt.cost.Finish()
	return tt
}

// recordChunk is how many task records are made at a time: the anomaly
// detection looks at one task at a time, so records of a whole process
// (56 bytes a task) need never exist together.
const recordChunk = 4096

// eachRecords calls fn with the task records of pg's process that want
// keeps (want nil: all), recordChunk at a time, in buf's storage (valid
// until fn returns); it returns buf. want sees what decides a sample or
// a test (the task's id, construct and run time) before the record is
// made: most records need not be.
func (tt *taskTable) eachRecords(pg *critpath.Proc, buf []anomaly.Task, want func(id int64, construct string, dur int64) bool, fn func([]anomaly.Task)) []anomaly.Task {
	buf = buf[:0]
	// Batch readers: a value is a few instructions, not a call.
	start, thread, loc, cost := tt.start.Values(), tt.thread.Values(), tt.loc.Values(), tt.cost.Values()
	lastLoc, name := int32(-2), "" // tasks come in runs of one construct
	ids := tt.ids.Cursor()         // and in increasing order
	for t := range tt.completed {
		for set := tt.completed[t]; set != 0; set &= set - 1 {
			task := t*64 + bits.TrailingZeros64(set)
			if l := int32(loc.Next()); l != lastLoc {
				lastLoc, name = l, pg.TaskName(l)
			}
			// Every column's reader moves on, whether the record is made
			// or not.
			id, th, st, dur := ids.ID(sim.Task(task)), thread.Next(), start.Next(), pg.RunTime(task)
			var c int64
			if tt.cost.Len() > 0 {
				c = cost.Next()
			}
			if want != nil && !want(id, name, dur) {
				continue
			}
			rec := anomaly.Task{Rank: int32(pg.Rank()), Thread: int32(th), ID: id,
				Construct: name, StartNS: st, DurNS: dur, Cost: float64(c)}
			if buf = append(buf, rec); len(buf) == recordChunk {
				fn(buf)
				buf = buf[:0]
			}
		}
	}
	if len(buf) > 0 {
		fn(buf)
	}
	return buf
}

func (r *run) simSummary(rank int, host string, s *sim.Sim, stats *sim.TaskStats) simRow {
	row := simRow{Rank: rank, Host: host}
	window := s.End - s.Begin
	for th, tt := range s.Breakdown.Threads {
		if !s.HasEvents(th) {
			continue
		}
		row.Threads++
		row.Times.Add(reduce.Times{
			ThreadTime: window, Work: tt.Work, MPI: tt.MPI,
			Overhead: tt.Overhead + tt.OverheadSerial, Idle: tt.Idle + tt.IdleSerial,
			IdleSerial: tt.IdleSerial, OverheadSerial: tt.OverheadSerial,
			ForkJoin: tt.ForkJoin, IdleInMPI: tt.IdleInMPI, IdleInMPISerial: tt.IdleInMPISerial, Instrumentation: tt.Instrumentation,
			SyncRuntime: tt.SyncRuntime, InitFinalize: tt.InitFinalize,
			Flushes: tt.Flushes, Flush: tt.Flush, FlushWork: tt.FlushWork, FlushMPI: tt.FlushMPI, FlushOverhead: tt.FlushOverhead,
		})
	}
	row.Instr = instrSummary(s)
	t := s.TALP()
	row.TALP = reduce.TALPRow{Rank: rank, Threads: t.Threads, ElapsedNS: t.ElapsedNS, Useful: t.Useful,
		MPI: t.MPI, Idle: t.Idle, Serial: t.Serial, LB: t.LB, Sched: t.Sched,
		ForkJoin: t.ForkJoin, IdleInMPI: t.IdleInMPI, IdleInMPISerial: t.IdleInMPISerial}
	for _, c := range stats.Stats {
		name := "<unknown>"
		if c.Loc >= 0 {
			name = s.Proc.LocationName(int64(c.Loc))
		}
		row.Constructs = append(row.Constructs, reduce.ConstructRow{Name: name, Kind: "task",
			Count: c.Count, Executed: c.Executed, SumNS: c.SumNS, MinNS: c.MinNS, MaxNS: c.MaxNS,
			CreateNS: c.CreateNS, Hist: trimHist(c.Hist[:])})
		row.Executed += c.Executed
	}
	row.Requeued = s.Requeues
	row.WarnCount = s.Warn.Total()
	for _, w := range s.Warn.Examples {
		row.Warnings = append(row.Warnings, fmt.Sprintf("rank %d: %s", rank, w))
	}
	return row
}

// trimHist drops trailing empty buckets.
func trimHist(h []int64) []int64 {
	n := len(h)
	for n > 0 && h[n-1] == 0 {
		n--
	}
	return append([]int64(nil), h[:n]...)
}

func (r *run) fillSimSections(rows []simRow, series []int64, bin int64) {
	rep := r.rep
	th := reduce.DefaultThresholds()
	b := &report.Breakdown{Thresholds: report.Thresholds{Idleness: th.Idleness, Overhead: th.Overhead}}
	var tot reduce.Times
	talp := make([]reduce.TALPRow, len(rows))
	cons := make([][]reduce.ConstructRow, len(rows))
	threads := 0
	var ompWaits []waitstate.OMPRow
	var mutexes []waitstate.MutexRow
	for i, row := range rows {
		tot.Add(row.Times)
		talp[i] = row.TALP
		cons[i] = row.Constructs
		threads += row.Threads
		cl := reduce.Classify(row.Times, th)
		b.PerProcess = append(b.PerProcess, report.ProcessTimes{
			Rank: row.Rank, Host: row.Host, Threads: row.Threads, ThreadTimeNS: row.Times.ThreadTime,
			WorkNS: row.Times.Work, MPINS: row.Times.MPI, OverheadNS: row.Times.Overhead, IdlenessNS: row.Times.Idle,
			IdlenessSerialNS: row.Times.IdleSerial, IdlenessParallelNS: row.Times.Idle - row.Times.IdleSerial, Class: cl.Code,
			ForkJoinNS: row.Times.ForkJoin, IdleDuringMPINS: row.Times.IdleInMPI, IdleSerialDuringMPINS: row.Times.IdleInMPISerial, InstrumentationNS: row.Times.Instrumentation,
			SyncRuntimeNS: row.Times.SyncRuntime, InitFinalizeNS: row.Times.InitFinalize,
			BufferFlushes: row.Times.Flushes, BufferFlushNS: row.Times.Flush,
		})
		addWarnings(rep, row.WarnCount, row.Warnings)
		if row.WarnCount > 0 {
			// The model repaired events that contradict the OpenMP
			// sequences it relies on (docs/task-model.md): what it
			// computed from them is a guess.
			rep.Trace.Partial = true
		}
		ompWaits = append(ompWaits, row.OMPWaits...)
		mutexes = append(mutexes, row.Mutexes...)
	}
	ws := r.waits
	if omp := waitstate.OpenMPReport(ompWaits, mutexes); omp != nil {
		if ws == nil {
			ws = waitstate.EmptyReport()
		}
		ws.OpenMP = omp
	}
	rep.WaitStates, r.waits = ws, nil
	b.ThreadTimeNS, b.WorkNS, b.MPINS, b.OverheadNS, b.IdlenessNS = tot.ThreadTime, tot.Work, tot.MPI, tot.Overhead, tot.Idle
	b.IdlenessSerialNS, b.IdlenessParallelNS = tot.IdleSerial, tot.Idle-tot.IdleSerial
	b.ForkJoinNS, b.IdleDuringMPINS, b.IdleSerialDuringMPINS = tot.ForkJoin, tot.IdleInMPI, tot.IdleInMPISerial
	b.BufferFlushes = r.flushReport(rows, tot)
	flushTaken := int64(0)
	if b.BufferFlushes != nil && !b.BufferFlushes.KeptInWork {
		flushTaken = tot.FlushWork
	}
	b.InstrumentationNS, b.InstrumentationCorrection = tot.Instrumentation, r.instrReport(rows, max(tot.Instrumentation-flushTaken, 0))
	b.SyncRuntimeNS, b.SyncRuntimeAsWork = tot.SyncRuntime, r.opts.SyncRuntimeAsWork
	b.InitFinalizeNS = tot.InitFinalize
	if tot.ThreadTime > 0 {
		tt := float64(tot.ThreadTime)
		b.WorkRatio, b.MPIRatio = float64(tot.Work)/tt, float64(tot.MPI)/tt
		b.OverheadRatio, b.IdlenessRatio = float64(tot.Overhead)/tt, float64(tot.Idle)/tt
	}
	// A process without events (a rank file holding its header alone:
	// MPICH's Hydra kills the other ranks of an MPI_Abort before they
	// flush) was not measured: as a process of no useful time and no MPI
	// time it set the MPI load balance's maximum and halved the mean (0.55
	// on an MPICH abort run). POP and the advice cover the measured
	// processes; the others are named. When none was measured, all stay
	// (there is nothing to measure against).
	talp, missing := measuredTALP(talp)
	for _, rank := range missing {
		addWarnings(rep, 1, []string{fmt.Sprintf("process %d has no events: left out of the POP efficiencies (pop.processes_without_events)", rank)})
	}
	cl := reduce.Classify(tot, th)
	adv := reduce.Advise(tot, talp, th)
	var executed, requeued int64
	for _, row := range rows {
		executed, requeued = executed+row.Executed, requeued+row.Requeued
	}
	adv.NoteRequeues(executed, requeued)
	if rep.Trace.NoOpenMP && rep.Trace.UserThreads {
		adv.NoteUserThreads()
	}
	if rep.Trace.NoOpenMP && rep.Trace.TaskWorkers {
		adv.NoteTaskWorkers()
	}
	b.Class, b.Interpretation = cl.Code, adv.Text
	b.Advice = &report.Advice{Dominant: adv.Dominant, Text: adv.Text, SerialNS: adv.SerialNS, MPIWaitNS: adv.MPIWaitNS, ImbalanceNS: adv.ImbalanceNS,
		StarvationNS: adv.StarvationNS, OverheadNS: adv.OverheadNS, MPICallsNS: adv.MPICallsNS}
	rep.Breakdown = b

	p := reduce.ComputePOP(talp)
	pop := &report.POP{
		Processes: p.N, ThreadsPerProcess: p.MeanThreads,
		ElapsedNS: round(p.T), UsefulNS: round(p.U), MPINS: round(p.C), IdleNS: round(p.I),
		IdleSerialNS: round(p.ISerial), IdleLBNS: round(p.ILB), IdleSchedNS: round(p.ISched), MaxNonMPINS: round(p.MaxNonMPI),
		ForkJoinNS: round(p.ForkJoin), IdleDuringMPINS: round(p.IdleInMPI), IdleSerialDuringMPINS: round(p.IdleInMPISerial),
		HybridEfficiency: p.HybridEff, MPIParallelEfficiency: p.MPIEff, MPILoadBalance: p.MPILB, MPICommunicationEfficiency: p.MPIComm,
		OMPParallelEfficiency: p.OMPEff, OMPSerializationEfficiency: p.OMPSerial, OMPLoadBalance: p.OMPLB, OMPSchedulingEfficiency: p.OMPSched,
		ProcessesWithoutEvents: missing,
	}
	for _, q := range p.PerProcess {
		pop.PerProcess = append(pop.PerProcess, report.POPProcess{
			Rank: q.Rank, Threads: q.Threads, ElapsedNS: round(q.T), UsefulNS: round(q.U), MPINS: round(q.C), IdleNS: round(q.I),
			IdleSerialNS: round(q.ISerial), IdleLBNS: round(q.ILB), IdleSchedNS: round(q.ISched),
			ForkJoinNS: round(q.ForkJoin), IdleDuringMPINS: round(q.IdleInMPI), IdleSerialDuringMPINS: round(q.IdleInMPISerial),
			OMPParallelEfficiency: q.OMPEff, OMPSerializationEfficiency: q.OMPSerial, OMPLoadBalance: q.OMPLB, OMPSchedulingEfficiency: q.OMPSched,
		})
	}
	for _, row := range talp {
		pop.UsefulSumNS += row.Useful
	}
	rep.POP = pop

	merged := reduce.MergeConstructs(cons)
	tasks := &report.Tasks{}
	for _, c := range merged {
		tasks.Count += c.Count
		tpt := 0.0
		if threads > 0 {
			tpt = float64(c.Executed) / float64(threads)
		}
		tasks.Constructs = append(tasks.Constructs, report.Construct{Name: c.Name, Kind: c.Kind, Count: c.Count, Executed: c.Executed,
			SumNS: c.SumNS, MeanNS: c.MeanNS, MinNS: c.MinNS, MaxNS: c.MaxNS, Share: c.Share, CreateNS: c.CreateNS / max(c.Count, 1),
			TasksPerThread: tpt, Histogram: c.Hist})
	}
	for _, f := range reduce.TaskFindings(merged, threads) {
		tasks.Findings = append(tasks.Findings, report.Finding{Severity: f.Severity, Topic: f.Topic, Message: f.Message})
	}
	tasks.Findings = append(tasks.Findings, grainFindings(b.InstrumentationCorrection, merged)...)
	if b.Class != "LL" {
		tasks.Findings = append(tasks.Findings, report.Finding{Severity: "warning", Topic: "breakdown",
			Message: fmt.Sprintf("%s: %s (idleness %.0f%%, overhead %.0f%% of thread time)", b.Class, b.Interpretation, 100*b.IdlenessRatio, 100*b.OverheadRatio)})
	}
	sort.SliceStable(tasks.Findings, func(i, j int) bool {
		return severityRank(tasks.Findings[i].Severity) < severityRank(tasks.Findings[j].Severity)
	})
	vals := make([]float64, len(series))
	for i, v := range series {
		vals[i] = float64(v) / float64(bin)
	}
	tasks.ReadySeries = &report.Series{StartNS: r.first, BinNS: bin, Values: vals}
	rep.Tasks = tasks
}

// measuredTALP returns the rows of the processes with a thread that has
// events, and the ranks of the others; all rows when none has.
func measuredTALP(rows []reduce.TALPRow) ([]reduce.TALPRow, []int) {
	var kept []reduce.TALPRow
	var missing []int
	for _, r := range rows {
		if r.Threads > 0 {
			kept = append(kept, r)
		} else {
			missing = append(missing, r.Rank)
		}
	}
	if len(kept) == 0 || len(missing) == 0 {
		return rows, nil
	}
	return kept, missing
}

func severityRank(s string) int {
	switch s {
	case "problem":
		return 0
	case "warning":
		return 1
	}
	return 2
}

func round(v float64) int64 {
	if v < 0 {
		return int64(v - 0.5)
	}
	return int64(v + 0.5)
}
