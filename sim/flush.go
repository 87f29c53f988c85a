package sim

import "github.com/ptrace-dev/ptrace/trace"

// Buffer flushes. A tracer whose buffer fills writes it out on the thread
// that filled it, between flush_begin and flush_end (ptrace's collector;
// Score-P's BUFFER_FLUSH records, converted by package otf2). That time is
// the thread's in the traced run, but not the program's: inside work it
// lengthens the work it interrupts, so the breakdown takes it out of work
// into ThreadTimes.Instrumentation, as it does the recording cost of each
// event (instrument.go), and out of the running task's run time (its
// duration in the task metrics, the task graph and the anomaly test: a
// flush inside a task made it an anomaly), unless the correction is off
// (Sim.KeepRecordingCost). The critical path follows the run as it went.
// Inside an MPI call, overhead or idleness it stays where it is: the
// call's time and the waits it made on other ranks are what the traced run
// did, and the wait states, the critical path and POP read them so. Either
// way the flushes are counted per thread, with the state they fell in
// (ThreadTimes.Flush*; a flush while not working is overhead while a task
// was ready, as the breakdown's δr splits it), so that the report can say
// how much of what it shows the tracer made.

// flushState is the flush accounting's state inside Breakdown.
type flushState struct {
	from  []int64 // per thread: its open flush's start (−1: none); nil until the first flush
	ready []int64 // per thread: ∫ δr at its open flush's start
}

// flush accounts flush event e of thread th: a begin opens the thread's
// flush, an end closes it and, when it overlaps the window, counts it and
// books its time inside the window by the category the thread is in. An
// end without a begin is left out.
func (b *Breakdown) flush(s *Sim, e *trace.Event, th int) {
	f := &b.flushes
	if f.from == nil {
		f.from, f.ready = make([]int64, len(b.Threads)), make([]int64, len(b.Threads))
		for i := range f.from {
			f.from[i] = -1
		}
	}
	if e.Kind == trace.FlushBegin {
		f.from[th], f.ready[th] = s.Now, s.ReadyTime(s.Now).Value()
		return
	}
	from := f.from[th]
	if from < 0 {
		return
	}
	f.from[th] = -1
	if b.th[th].cat == catWork && !s.KeepRecordingCost {
		// not the running task's time either, inside the window or not:
		// its run time (task metrics, the task graph, the anomalies)
		// leaves the flush out, as work does
		thr := &s.Threads[th]
		thr.RunSince = min(thr.RunSince+s.Now-from, s.Now)
	}
	d := min(s.Now, s.End) - max(from, s.Begin)
	if d < 0 || d == 0 && s.Now > from {
		// outside the window, or touching it only at an edge (a flush in
		// MPI_Init is cut at its Leave, which can begin the window)
		return
	}
	t := &b.Threads[th]
	t.Flushes++
	t.Flush += d
	switch b.th[th].cat {
	case catWork:
		t.FlushWork += d
		if !s.KeepRecordingCost {
			b.instr.pending[th] += d
		}
	case catMPI, catMPISetup:
		t.FlushMPI += d
	case catForkJoin, catRuntime:
		t.FlushOverhead += d
	default:
		t.FlushOverhead += s.ReadyTime(s.Now).Over(s, from, f.ready[th], s.Now)
	}
}
