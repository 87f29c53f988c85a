package reduce

import "fmt"

// Times is a breakdown summed over threads (and processes).
type Times struct {
	ThreadTime     int64
	Work           int64
	MPI            int64
	Overhead       int64 // in and outside parallel regions
	Idle           int64 // in and outside parallel regions
	IdleSerial     int64 // idleness outside parallel regions
	OverheadSerial int64
	// Raw components inside the above (sim.ThreadTimes): fork/join time
	// (in Overhead), non-working time while another thread of the process
	// is in MPI, and its part outside parallel regions.
	ForkJoin        int64
	IdleInMPI       int64
	IdleInMPISerial int64
	// Instrumentation is the recording time the instrumentation correction
	// took out of Work.
	Instrumentation int64
	// SyncRuntime is the runtime's code inside sync constructs, outside
	// their waits, booked as overhead (inside Overhead; sim/runtime.go).
	SyncRuntime int64
	// InitFinalize is the MPI time in the processes' own MPI_Init and
	// MPI_Finalize inside the window (inside MPI).
	InitFinalize int64
	// Flushes counts the tracer's buffer flushes, Flush their time;
	// FlushWork is its part in work (in Instrumentation, or in Work when
	// the instrumentation correction is off), FlushMPI inside MPI calls
	// (in MPI), FlushOverhead in overhead; the rest is idleness
	// (sim/flush.go).
	Flushes, Flush, FlushWork, FlushMPI, FlushOverhead int64
}

// Add accumulates o into t.
func (t *Times) Add(o Times) {
	t.ThreadTime += o.ThreadTime
	t.Work += o.Work
	t.MPI += o.MPI
	t.Overhead += o.Overhead
	t.Idle += o.Idle
	t.IdleSerial += o.IdleSerial
	t.OverheadSerial += o.OverheadSerial
	t.ForkJoin += o.ForkJoin
	t.IdleInMPI += o.IdleInMPI
	t.IdleInMPISerial += o.IdleInMPISerial
	t.Instrumentation += o.Instrumentation
	t.SyncRuntime += o.SyncRuntime
	t.InitFinalize += o.InitFinalize
	t.Flushes += o.Flushes
	t.Flush += o.Flush
	t.FlushWork += o.FlushWork
	t.FlushMPI += o.FlushMPI
	t.FlushOverhead += o.FlushOverhead
}

// Thresholds decide when idleness or overhead count as high in Tallent's
// table (seed pot-dependent-task-time-breakdown.txt, Table 1): a share of
// the accounted thread time.
type Thresholds struct {
	Idleness float64
	Overhead float64
}

// DefaultThresholds: idleness is high above 20% of thread time, overhead
// above 10%. Overhead gets the lower bar because, unlike idleness, it is
// pure runtime cost that no amount of extra parallelism hides.
func DefaultThresholds() Thresholds { return Thresholds{Idleness: 0.20, Overhead: 0.10} }

// Class is Tallent's reading of a breakdown.
type Class struct {
	Code           string // "LL", "LH", "HL", "HH" (idleness, overhead)
	Interpretation string
}

func interpretation(code string) string {
	switch code {
	case "LH":
		return "coarsen concurrency granularity: overheads dominate"
	case "HL":
		return "refine concurrency granularity: threads starve for ready tasks"
	case "HH":
		return "switch parallelization strategies"
	}
	return "effectively parallel; focus on serial performance"
}

// Classify applies Tallent's table to a breakdown. The table is about
// parallel execution: idleness and overhead count inside parallel regions
// only (a thread idle outside any region is waiting for serial code, which
// no task granularity changes; Advise names it). MPI time is neither
// idleness nor overhead: it is judged by the POP MPI efficiencies.
func Classify(t Times, th Thresholds) Class {
	if t.ThreadTime <= 0 {
		return Class{Code: "LL", Interpretation: interpretation("LL")}
	}
	code := []byte("LL")
	if float64(t.Idle-t.IdleSerial)/float64(t.ThreadTime) > th.Idleness {
		code[0] = 'H'
	}
	if float64(t.Overhead-t.OverheadSerial)/float64(t.ThreadTime) > th.Overhead {
		code[1] = 'H'
	}
	return Class{Code: string(code), Interpretation: interpretation(string(code))}
}

// Advice names what dominates the non-working time of the threads, from
// the numbers: the candidates partition non-work (idleness + overhead +
// the MPI calls' own time).
type Advice struct {
	// Dominant is "serial", "mpi", "imbalance", "starvation", "overhead",
	// "mpi_calls", or "none" when non-work stays below the idleness
	// threshold.
	Dominant string
	Text     string
	// SerialNS: idle or overhead outside parallel regions while no thread
	// of the process is in MPI (threads wait for serial code between
	// regions). MPIWaitNS: the same while another thread of the process is
	// in MPI (workers waiting for their master's MPI calls: the MPI waits,
	// imbalance across ranks or communication, not serial code, keep
	// them). ImbalanceNS: inside regions, waiting for
	// the slowest thread of each region (TALP's I_lb, summed over threads).
	// StarvationNS: the rest of the idleness inside regions (no task ready).
	// OverheadNS: runtime overhead inside regions (task management with
	// tasks ready, team fork and join). MPICallsNS: the threads' time
	// inside MPI calls but MPI_Init and MPI_Finalize (a pure MPI program's
	// whole non-working time). All summed over threads.
	SerialNS, MPIWaitNS, ImbalanceNS, StarvationNS, OverheadNS, MPICallsNS int64
}

// NoteRequeues adds to overhead advice what the runtime's re-queues of
// tasks say: when at least a quarter of the executed tasks were switched
// out and re-queued, the overhead is mostly those round trips through the
// queue (LLVM libomp runs an untied task's stub first and re-queues it:
// BOTS fib 60 ms traced untied against 5 ms tied), which coarser tasks
// would not remove the way making them tied does.
func (a *Advice) NoteRequeues(executed, requeued int64) {
	if a.Dominant != "overhead" || requeued == 0 || 4*requeued < executed {
		return
	}
	a.Text += fmt.Sprintf("; %d of %d tasks were re-queued by the runtime before they ran on: untied tasks cost a re-queue each in LLVM libomp (it runs an untied task's stub, which puts it back in the queue), so declare tasks tied unless they must move between threads", requeued, executed)
}

// NoteUserThreads rewords serial advice for a program whose threads are its
// own (pthreads, std::thread) and that has no OpenMP: its "serial"
// idleness is its threads before they start, after they end, and blocked
// in joins, condition variables or barriers, not code between parallel
// regions.
func (a *Advice) NoteUserThreads() {
	if a.Dominant != "serial" {
		return
	}
	a.Text = "the program's threads idle: before they start, after they end, or blocked in joins, condition variables or barriers (the thread sync rows of the thread wait states); start them earlier, give them more of the work, or keep fewer threads"
}

// NoteTaskWorkers rewords serial advice for a program whose threads are a
// task runtime's workers (otf2: APEX's HPX threads) and that has no
// OpenMP: its "serial" idleness is mostly its workers waiting for work
// between their tasks.
func (a *Advice) NoteTaskWorkers() {
	if a.Dominant != "serial" {
		return
	}
	a.Text = "the task runtime's worker threads wait for work between their tasks (the worker_idle row of the thread wait states: starvation and the scheduler's own time, which the trace does not tell apart), or idle before their first task and after their last: expose more concurrency (more or earlier tasks) or run fewer workers"
}

// Advise decides what dominates non-working time from the breakdown totals
// and the processes' TALP rows (for the load-imbalance share of the
// in-region non-work), and says what to do about it.
func Advise(t Times, talp []TALPRow, th Thresholds) Advice {
	var lb int64
	for _, r := range talp {
		lb += r.LB
	}
	parIdle, parOv := t.Idle-t.IdleSerial, t.Overhead-t.OverheadSerial
	// In-region non-work is T^I_lb + T^I_sch = parIdle + parOv. Overhead is
	// measured exactly; TALP's imbalance (the members' waits for the
	// slowest, which may include overhead) is cut to the idleness, the rest
	// of which is starvation.
	imb := max(0, min(lb, parIdle))
	serial := t.IdleSerial + t.OverheadSerial
	inMPI := min(max(t.IdleInMPISerial, 0), serial)
	a := Advice{SerialNS: serial - inMPI, MPIWaitNS: inMPI, ImbalanceNS: imb, StarvationNS: max(0, parIdle-imb), OverheadNS: parOv,
		MPICallsNS: max(0, t.MPI-t.InitFinalize)}
	nonWork := a.SerialNS + a.MPIWaitNS + a.ImbalanceNS + a.StarvationNS + a.OverheadNS + a.MPICallsNS
	if t.ThreadTime <= 0 {
		// Nothing accounted is no verdict: "effectively parallel" would
		// read as one.
		a.Dominant, a.Text = "none", "no thread modelled: no thread time to judge (see the notes)"
		return a
	}
	if float64(nonWork)/float64(t.ThreadTime) <= th.Idleness {
		a.Dominant, a.Text = "none", "effectively parallel; focus on serial performance"
		return a
	}
	a.Dominant, a.Text = "serial", "serial code between parallel regions dominates: threads wait outside any region; parallelize or shorten it"
	best := a.SerialNS
	for _, c := range []struct {
		ns       int64
		dom, txt string
	}{
		{a.MPIWaitNS, "mpi", "threads wait outside parallel regions while their process is in MPI: the MPI calls (imbalance across ranks, communication; see the wait states), not serial code, keep them; balance the ranks or overlap communication with computation (tasks, or work the workers can do meanwhile)"},
		{a.ImbalanceNS, "imbalance", "load imbalance inside parallel regions dominates: threads wait for the slowest one; balance the work (finer chunks, dynamic schedule, tasks)"},
		{a.StarvationNS, "starvation", "threads starve for ready tasks inside parallel regions: refine task granularity or expose more concurrency"},
		{a.OverheadNS, "overhead", "runtime overhead dominates (task management, team fork/join): coarsen task granularity, merge parallel regions"},
		{a.MPICallsNS, "mpi_calls", ""},
	} {
		if c.ns > best {
			best, a.Dominant, a.Text = c.ns, c.dom, c.txt
		}
	}
	if a.Dominant == "mpi_calls" {
		a.Text = mpiCallsText(ComputePOP(talp))
	}
	return a
}

// mpiCallsText says which of POP's two MPI factors costs more when the
// threads' time in MPI calls dominates, and what helps against it.
func mpiCallsText(p POP) string {
	if p.MPILB < p.MPIComm {
		return fmt.Sprintf("the threads spend their time inside MPI calls, and the ranks' load imbalance costs more than communication (MPI load balance %.2f, communication efficiency %.2f): balance the work across ranks; the wait states name who waits for whom", p.MPILB, p.MPIComm)
	}
	return fmt.Sprintf("the threads spend their time inside MPI calls, and communication costs more than the ranks' load imbalance (communication efficiency %.2f, MPI load balance %.2f): send fewer and larger messages, overlap communication with computation, or use fewer processes; the wait states name the calls that wait", p.MPIComm, p.MPILB)
}
