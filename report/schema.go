// Package report owns the analysis report: its data model, which is the JSON
// contract "ptrace.report/v1" (docs/report-schema.md), and its renderings —
// terminal summary, JSON, CSV tables, HTML with plots — plus the timeline
// export for Perfetto. It renders; it computes nothing about the trace.
package report

// SchemaVersion is the value of the report's "schema" key.
const SchemaVersion = "ptrace.report/v1"

// Report is the whole analysis result as rank 0 emits it. Times are integer
// nanoseconds (keys end in _ns); ratios are floats in [0,1]. A section is nil
// when its analysis did not run. Nothing in it depends on the number of
// analysis ranks or the backend, so reports of one trace compare byte for byte.
type Report struct {
	Schema       string        `json:"schema"`
	Trace        TraceInfo     `json:"trace"`
	ClockSync    *ClockSync    `json:"clocksync,omitempty"`
	Breakdown    *Breakdown    `json:"breakdown,omitempty"`
	POP          *POP          `json:"pop,omitempty"`
	CriticalPath *CriticalPath `json:"critical_path,omitempty"`
	Graph        *Graph        `json:"graph,omitempty"`
	Tasks        *Tasks        `json:"tasks,omitempty"`
	Anomalies    *Anomalies    `json:"anomalies,omitempty"`
	WaitStates   *WaitStates   `json:"wait_states,omitempty"`
}

// TraceInfo describes the analysed trace.
type TraceInfo struct {
	Dir        string   `json:"dir"`
	Producer   string   `json:"producer,omitempty"`
	Command    []string `json:"command,omitempty"`
	Processes  int      `json:"processes"`
	Threads    int      `json:"threads"`
	Events     int64    `json:"events"`
	Bytes      int64    `json:"bytes"`
	FirstNS    int64    `json:"first_ns"`
	LastNS     int64    `json:"last_ns"`
	DurationNS int64    `json:"duration_ns"`
	Hosts      int      `json:"hosts"`
	Window     *Window  `json:"window,omitempty"`
	// Partial is set when events of some process are missing (a file cut
	// short, a salvaged tail or thread, counts disagreeing with the end
	// frame, events the collector dropped): totals are lower bounds.
	Partial bool `json:"partial"`
	// Unavailable names what the trace's records cannot carry, so the
	// values computed from it are not to be read as measured:
	// "task_dependences" (OTF2 input with tasks) means the critical path,
	// span, parallelism, graph metrics and the ready-task idleness treat
	// tasks as independent (ready at creation).
	Unavailable []string `json:"unavailable,omitempty"`
	// Notes say what the input held that the analysis leaves out (an OTF2
	// archive's metric and accelerator locations, its records without a
	// counterpart in ptrace's model, threads of no OpenMP runtime); they
	// are not problems.
	Notes    []string  `json:"notes,omitempty"`
	Warnings *Warnings `json:"warnings,omitempty"`
	// NoOpenMP is set when no process has an OpenMP event (parallel
	// region, implicit or explicit task): a pure MPI program, where
	// Tallent's class and the OpenMP efficiencies (1 by construction) say
	// nothing, so the text and HTML reports leave them out.
	NoOpenMP bool `json:"no_openmp,omitempty"`
	// UserThreads is set when some process has threads it started itself
	// (pthread_create, std::thread: thread type user): their efficiencies
	// are POP's thread-level ones, which the reports show under OpenMP's
	// names even without OpenMP.
	UserThreads bool `json:"user_threads,omitempty"`
	// TaskWorkers is set when some process has worker threads of a task
	// runtime (an OTF2 archive's threads that run TASK-role regions with
	// no OpenMP or thread-creation records, docs/otf2.md): threads of type
	// user too, idle between their tasks (`worker_idle`).
	TaskWorkers bool `json:"task_workers,omitempty"`
}

// Window is the part of the run the breakdown, the POP efficiencies and
// the critical path measure. Bounds is "mpi" when it runs from the first
// exit from MPI_Init to the last entry into MPI_Finalize (TALP's region),
// "trace" when it is the whole trace (no MPI, or analyze --whole-run),
// "user" as analyze --window asked, "recorded" when recording was switched
// off (an OTF2 archive's MeasurementOnOff records) and the window is the
// longest stretch of the default one in which every process recorded.
type Window struct {
	StartNS    int64  `json:"start_ns"`
	EndNS      int64  `json:"end_ns"`
	DurationNS int64  `json:"duration_ns"`
	Bounds     string `json:"bounds"`
}

// Warnings counts problems the analysis tolerated, with the first few listed.
type Warnings struct {
	Count int64    `json:"count"`
	First []string `json:"first"`
}

// ClockSync reports timestamp correction (section "clocksync").
// Corrections are what the controlled logical clock added to the
// offset-corrected (interpolated) times; the offsets themselves are per
// process. A violation is a receive-like event (mpi_recv, coll_end,
// remote_dep_in) earlier than its send-like event + min_latency_ns.
type ClockSync struct {
	// Method is "none", or the offset model followed by "+clc":
	// "interpolation+clc", "alignment+clc" (first events aligned, no
	// offset measurements) or "interpolation+alignment+clc".
	Method                 string         `json:"method"`
	Messages               int64          `json:"messages"`                // matched point-to-point messages
	RemoteDependences      int64          `json:"remote_dependences"`      // matched remote task dependences
	Collectives            int64          `json:"collectives"`             // matched collective calls (instances)
	ViolationsBefore       int64          `json:"violations_before"`       // on the recorded timestamps
	ViolationsInterpolated int64          `json:"violations_interpolated"` // after offset interpolation
	ViolationsAfter        int64          `json:"violations_after"`
	MaxCorrectionNS        int64          `json:"max_correction_ns"`
	MeanCorrectionNS       int64          `json:"mean_correction_ns"` // over all events
	MinLatencyNS           int64          `json:"min_latency_ns"`
	Gamma                  float64        `json:"gamma"`
	DeltaNS                int64          `json:"delta_ns"`
	UnmatchedSends         int64          `json:"unmatched_sends"`
	UnmatchedReceives      int64          `json:"unmatched_receives"`
	UnmatchedDependences   int64          `json:"unmatched_dependences"` // remote_dep_out or _in without partner
	UnmatchedCollectives   int64          `json:"unmatched_collectives"` // calls missing members or inconsistent
	PerProcess             []ClockProcess `json:"per_process"`
}

// ClockProcess is one process's clock correction.
type ClockProcess struct {
	Rank                   int     `json:"rank"`
	OffsetSource           string  `json:"offset_source"` // "init+finalize", "init", "finalize", "first event", "reference"
	OffsetInitNS           int64   `json:"offset_init_ns"`
	OffsetFinalNS          int64   `json:"offset_final_ns"`
	DriftPPM               float64 `json:"drift_ppm"`
	MaxCorrectionNS        int64   `json:"max_correction_ns"`
	Violations             int64   `json:"violations"` // receive-like events of this process, recorded timestamps
	ViolationsInterpolated int64   `json:"violations_interpolated"`
}

// Breakdown is POT's parallel time breakdown extended with MPI (section
// "breakdown"): for every thread, work + mpi + overhead + idleness equals its
// accounted time.
type Breakdown struct {
	ThreadTimeNS       int64 `json:"thread_time_ns"`
	WorkNS             int64 `json:"work_ns"`
	MPINS              int64 `json:"mpi_ns"`
	OverheadNS         int64 `json:"overhead_ns"`
	IdlenessNS         int64 `json:"idleness_ns"`
	IdlenessSerialNS   int64 `json:"idleness_serial_ns"`
	IdlenessParallelNS int64 `json:"idleness_parallel_ns"`
	// Raw components inside the above, for other conventions: the team
	// fork/join time (in OverheadNS), non-working time while another thread
	// of the process is in MPI, and its part outside parallel regions.
	ForkJoinNS            int64 `json:"fork_join_ns"`
	IdleDuringMPINS       int64 `json:"idle_during_mpi_ns"`
	IdleSerialDuringMPINS int64 `json:"idle_serial_during_mpi_ns"`
	// InstrumentationNS is the collector's recording time taken out of
	// work by the instrumentation correction (0 when off or not known);
	// work + MPI + overhead + idleness + instrumentation = thread time.
	InstrumentationNS         int64                      `json:"instrumentation_ns"`
	InstrumentationCorrection *InstrumentationCorrection `json:"instrumentation_correction,omitempty"`
	// BufferFlushes is the tracer's writing of its full buffers, when it
	// flushed inside the window.
	BufferFlushes *BufferFlushes `json:"buffer_flushes,omitempty"`
	// SyncRuntimeNS is the part of OverheadNS that tasks spent in the
	// runtime's code of a barrier, taskwait or taskgroup outside its wait
	// (sync_region begin to sync_region_wait begin, wait end to end;
	// docs/task-model.md). SyncRuntimeAsWork is true under analyze
	// --sync-runtime-as-work: that time is then work, as in POT, and
	// SyncRuntimeNS is 0.
	SyncRuntimeNS     int64 `json:"sync_runtime_ns"`
	SyncRuntimeAsWork bool  `json:"sync_runtime_as_work"`
	// InitFinalizeNS is the part of MPINS the processes spent in their
	// own MPI_Init or MPI_Finalize inside the window (which runs from the
	// first exit from MPI_Init to the last entry into MPI_Finalize): a
	// process that left MPI_Init later, or entered MPI_Finalize earlier,
	// than another. The critical path gives that time no weight.
	InitFinalizeNS int64          `json:"mpi_init_finalize_ns,omitempty"`
	WorkRatio      float64        `json:"work_ratio"`
	MPIRatio       float64        `json:"mpi_ratio"`
	OverheadRatio  float64        `json:"overhead_ratio"`
	IdlenessRatio  float64        `json:"idleness_ratio"`
	Class          string         `json:"class"` // Tallent's LL, LH, HL, HH
	Interpretation string         `json:"interpretation"`
	Advice         *Advice        `json:"advice,omitempty"`
	Thresholds     Thresholds     `json:"thresholds"`
	PerProcess     []ProcessTimes `json:"per_process"`
}

// Advice is what dominates the threads' non-working time, with the
// numbers it was decided from (sums over threads, ns); they partition
// idleness + overhead + the MPI calls' time but MPI_Init and MPI_Finalize.
type Advice struct {
	Dominant     string `json:"dominant"` // serial, mpi, imbalance, starvation, overhead, mpi_calls or none
	Text         string `json:"text"`
	SerialNS     int64  `json:"serial_ns"`
	MPIWaitNS    int64  `json:"mpi_wait_ns"`
	ImbalanceNS  int64  `json:"imbalance_ns"`
	StarvationNS int64  `json:"starvation_ns"`
	OverheadNS   int64  `json:"overhead_ns"`
	MPICallsNS   int64  `json:"mpi_calls_ns"`
}

// InstrumentationCorrection says how the breakdown took the collector's own
// recording cost out of work (docs/ACCURACY.md): each event recorded inside
// a stretch of work costs the thread EventCostNS (measured by the collector
// at start-up, header field event_cost_ns), subtracted from that work.
// Applied is false under analyze --no-instrumentation-correction, or when no
// trace carries a cost (then nothing is subtracted).
type InstrumentationCorrection struct {
	Applied     bool  `json:"applied"`
	EventCostNS int64 `json:"event_cost_ns"` // the largest of the processes'
	Events      int64 `json:"events"`        // events corrected
	CorrectedNS int64 `json:"corrected_ns"`  // = instrumentation_ns
}

// BufferFlushes is the time the tracer spent writing its full buffers out
// on the threads that filled them, inside the window (ptrace's collector;
// Score-P's BUFFER_FLUSH records): the threads' in the traced run, not the
// program's. The part in work is taken out of it into instrumentation_ns
// (unless KeptInWork); the rest stays where it fell (sim/flush.go).
type BufferFlushes struct {
	Count  int64 `json:"count"`
	NS     int64 `json:"ns"`
	WorkNS int64 `json:"work_ns"` // while the thread worked
	MPINS  int64 `json:"mpi_ns"`  // inside MPI calls: in mpi_ns
	// OverheadNS is the part in overhead (a task was ready that the
	// flushing thread could not run, or it forked, joined or ran the
	// runtime's code), IdleNS the part in idleness: both left there.
	OverheadNS int64 `json:"overhead_ns"`
	IdleNS     int64 `json:"idle_ns"`
	// KeptInWork: analyze --no-instrumentation-correction left work_ns in
	// work_ns.
	KeptInWork bool `json:"kept_in_work"`
	Processes  int  `json:"processes"` // processes that flushed
	// MaxRank is the process that flushed longest, MaxNS its flush time.
	MaxRank int   `json:"max_rank"`
	MaxNS   int64 `json:"max_ns"`
	// Setting is the recording setting whose larger value avoids them
	// (SCOREP_TOTAL_MEMORY, PTRACE_BUFFER_MB; empty when unknown).
	Setting string `json:"setting,omitempty"`
}

// Thresholds are the ratios above which idleness or overhead count as high.
type Thresholds struct {
	Idleness float64 `json:"idleness"`
	Overhead float64 `json:"overhead"`
}

// ProcessTimes is one process's breakdown, summed over its threads.
type ProcessTimes struct {
	Rank                  int    `json:"rank"`
	Host                  string `json:"host"`
	Threads               int    `json:"threads"`
	ThreadTimeNS          int64  `json:"thread_time_ns"`
	WorkNS                int64  `json:"work_ns"`
	MPINS                 int64  `json:"mpi_ns"`
	OverheadNS            int64  `json:"overhead_ns"`
	IdlenessNS            int64  `json:"idleness_ns"`
	IdlenessSerialNS      int64  `json:"idleness_serial_ns"`
	IdlenessParallelNS    int64  `json:"idleness_parallel_ns"`
	ForkJoinNS            int64  `json:"fork_join_ns"`
	IdleDuringMPINS       int64  `json:"idle_during_mpi_ns"`
	IdleSerialDuringMPINS int64  `json:"idle_serial_during_mpi_ns"`
	InstrumentationNS     int64  `json:"instrumentation_ns"`
	SyncRuntimeNS         int64  `json:"sync_runtime_ns"`
	InitFinalizeNS        int64  `json:"mpi_init_finalize_ns,omitempty"`
	BufferFlushes         int64  `json:"buffer_flushes,omitempty"`
	BufferFlushNS         int64  `json:"buffer_flush_ns,omitempty"`
	Class                 string `json:"class"`
}

// POP holds TALP's hybrid efficiencies (section "pop") and the raw
// components they come from, so either accounting convention can be
// recomputed.
type POP struct {
	Processes         int     `json:"processes"`
	ThreadsPerProcess float64 `json:"threads_per_process"`
	ElapsedNS         int64   `json:"elapsed_ns"`     // T
	UsefulNS          int64   `json:"useful_ns"`      // T^U
	UsefulSumNS       int64   `json:"useful_sum_ns"`  // Σ of useful time over all threads, exact (compare's computation scalability)
	MPINS             int64   `json:"mpi_ns"`         // T^M
	IdleNS            int64   `json:"idle_ns"`        // T^I
	IdleSerialNS      int64   `json:"idle_serial_ns"` // T^{I_serial}
	IdleLBNS          int64   `json:"idle_lb_ns"`     // T^{I_lb}
	IdleSchedNS       int64   `json:"idle_sched_ns"`  // T^{I_sch}
	MaxNonMPINS       int64   `json:"max_non_mpi_ns"` // max_i (T_i − T_i^M)
	// Raw components inside IdleNS, for other conventions (report-schema.md).
	ForkJoinNS                 int64        `json:"fork_join_ns"`              // team fork and join (in IdleLBNS/IdleSchedNS)
	IdleDuringMPINS            int64        `json:"idle_during_mpi_ns"`        // non-work while another thread of the process is in MPI
	IdleSerialDuringMPINS      int64        `json:"idle_serial_during_mpi_ns"` // its part outside parallel regions (in IdleSerialNS)
	HybridEfficiency           float64      `json:"hybrid_efficiency"`
	MPIParallelEfficiency      float64      `json:"mpi_parallel_efficiency"`
	MPILoadBalance             float64      `json:"mpi_load_balance"`
	MPICommunicationEfficiency float64      `json:"mpi_communication_efficiency"`
	OMPParallelEfficiency      float64      `json:"omp_parallel_efficiency"`
	OMPSerializationEfficiency float64      `json:"omp_serialization_efficiency"`
	OMPLoadBalance             float64      `json:"omp_load_balance"`
	OMPSchedulingEfficiency    float64      `json:"omp_scheduling_efficiency"`
	PerProcess                 []POPProcess `json:"per_process"`
	// ProcessesWithoutEvents are the ranks left out of everything above:
	// processes whose trace holds no event (not measured).
	ProcessesWithoutEvents []int `json:"processes_without_events,omitempty"`
}

// POPProcess is one process's TALP components and OpenMP efficiencies.
type POPProcess struct {
	Rank                       int     `json:"rank"`
	Threads                    int     `json:"threads"`
	ElapsedNS                  int64   `json:"elapsed_ns"`
	UsefulNS                   int64   `json:"useful_ns"`
	MPINS                      int64   `json:"mpi_ns"`
	IdleNS                     int64   `json:"idle_ns"`
	IdleSerialNS               int64   `json:"idle_serial_ns"`
	IdleLBNS                   int64   `json:"idle_lb_ns"`
	IdleSchedNS                int64   `json:"idle_sched_ns"`
	ForkJoinNS                 int64   `json:"fork_join_ns"`
	IdleDuringMPINS            int64   `json:"idle_during_mpi_ns"`
	IdleSerialDuringMPINS      int64   `json:"idle_serial_during_mpi_ns"`
	OMPParallelEfficiency      float64 `json:"omp_parallel_efficiency"`
	OMPSerializationEfficiency float64 `json:"omp_serialization_efficiency"`
	OMPLoadBalance             float64 `json:"omp_load_balance"`
	OMPSchedulingEfficiency    float64 `json:"omp_scheduling_efficiency"`
}

// CriticalPath summarises the longest path through the distributed DAG
// (section "critical_path").
type CriticalPath struct {
	LengthNS       int64   `json:"length_ns"`
	RunTimeNS      int64   `json:"run_time_ns"`
	ShareOfRunTime float64 `json:"share_of_run_time"`
	WorkNS         int64   `json:"work_ns"` // T1
	Parallelism    float64 `json:"parallelism"`
	// ComputeParallelism is T1 over the computation on the path (its
	// task, region and serial nodes), present when MPI calls or message
	// latencies lie on it: T∞ then holds communication that is no work,
	// and Parallelism can fall below 1.
	ComputeParallelism float64     `json:"compute_parallelism,omitempty"`
	Nodes              int64       `json:"nodes"`
	RankCrossings      int64       `json:"rank_crossings"`
	ZeroSlackTasks     int64       `json:"zero_slack_tasks"` // tasks on some critical path
	ByKind             []PathShare `json:"by_kind"`
	ByConstruct        []PathShare `json:"by_construct"`
	ByProcess          []PathShare `json:"by_process"`
	Longest            []PathNode  `json:"longest_nodes"`
	// Segments is the path itself in time order, consecutive nodes of one
	// thread merged, for the Gantt strip of the HTML report and the
	// timeline export (at most MaxPathSegments; Truncated says when cut).
	Segments  []PathNode `json:"segments,omitempty"`
	Truncated bool       `json:"segments_truncated,omitempty"`
	// OffPath accounts for the window's time the path does not cover:
	// nil when the path has no node of positive weight.
	OffPath *OffPath `json:"off_path,omitempty"`
}

// OffPath splits run_time_ns − length_ns by where it lies along the path:
// before its first node of positive weight, after its last, and between
// consecutive ones, classified by what a gap sits between. The fields sum
// exactly: Before + Between + After = NS, and the seven classes sum to
// Between. A gap is the next node's start minus the node before's start
// plus weight (path order); it can be negative where an MPI call's
// weight, which leaves out its waiting, ends after the next node began
// (an MPI call is placed to begin no earlier than the node before ends).
type OffPath struct {
	NS      int64   `json:"ns"`    // run_time_ns − length_ns
	Share   float64 `json:"share"` // of run_time_ns
	Before  int64   `json:"before_first_ns"`
	Between int64   `json:"between_ns"`
	After   int64   `json:"after_last_ns"`
	// WakeUp: on one thread, after its region code (or between two nodes
	// of serial code): the runtime waking the thread after a barrier or a
	// join.
	WakeUp int64 `json:"wake_up_ns"`
	// Fork: from outside parallel regions (serial code, an MPI call) to
	// a region's code on one process, any thread.
	Fork int64 `json:"fork_ns"`
	// Tasks: on one process, before or after an explicit task (not a
	// fork): its thread ran other work meanwhile, or the task waited for
	// a thread (scheduling).
	Tasks int64 `json:"tasks_ns"`
	// Threads: between other nodes of two threads of one process.
	Threads int64 `json:"across_threads_ns"`
	// Processes: between two processes, or around a message latency or
	// remote dependence node (but for an explicit task).
	Processes int64 `json:"across_processes_ns"`
	// MPI: one thread's consecutive nodes of which one is an MPI call.
	MPI int64 `json:"mpi_ns"`
	// StartSkew: between processes, the part of a gap before the later
	// process did its first work in the window (its MPI_Init ended late).
	StartSkew int64 `json:"start_skew_ns"`
}

// Shown tells whether the text and HTML reports show op: from
// OffPathShown of the run time on.
func (op *OffPath) Shown() bool { return op != nil && op.Share >= OffPathShown }

// OffPathPart is one part of OffPath: its JSON key, its name in the
// reports and its time.
type OffPathPart struct {
	Key, Name string
	NS        int64
}

// PartList lists op's parts in the reports' order: the classes between
// nodes, then before the first node and after the last.
func (op *OffPath) PartList() []OffPathPart {
	return []OffPathPart{
		{"wake_up_ns", "wake-ups after barriers and joins", op.WakeUp}, {"fork_ns", "forks", op.Fork},
		{"tasks_ns", "around tasks (scheduling)", op.Tasks}, {"across_threads_ns", "across threads", op.Threads},
		{"across_processes_ns", "across processes", op.Processes}, {"mpi_ns", "around MPI calls", op.MPI},
		{"start_skew_ns", "start skew", op.StartSkew},
		{"before_first_ns", "before the first node", op.Before}, {"after_last_ns", "after the last node", op.After},
	}
}

// Parts names op's nonzero parts with their times, for the reports'
// line, in PartList's order.
func (op *OffPath) Parts() []string {
	var out []string
	for _, p := range op.PartList() {
		if p.NS != 0 {
			out = append(out, p.Name+" "+Dur(p.NS))
		}
	}
	return out
}

// OffPathShown is the share of the run time off the path from which the
// text and HTML reports show OffPath: 1 %, below which the path is the
// run for a reader.
const OffPathShown = 0.01

// WorkOnPath returns the computation on the path: its task, region and
// serial nodes' time.
func (cp *CriticalPath) WorkOnPath() int64 {
	var w int64
	for _, k := range cp.ByKind {
		if k.Name == "task" || k.Name == "region" || k.Name == "serial" {
			w += k.NS
		}
	}
	return w
}

// MaxPathSegments bounds CriticalPath.Segments so the report stays
// O(ranks) in size whatever the trace.
const MaxPathSegments = 10000

// PathShare is how much of the critical path one category accounts for.
type PathShare struct {
	Name  string  `json:"name"`
	NS    int64   `json:"ns"`
	Share float64 `json:"share"`
	Nodes int64   `json:"nodes"`
}

// PathNode is one node on the critical path.
type PathNode struct {
	Rank      int    `json:"rank"`
	Thread    int    `json:"thread"`
	Kind      string `json:"kind"`
	Construct string `json:"construct"`
	StartNS   int64  `json:"start_ns"`
	DurNS     int64  `json:"dur_ns"`
}

// Graph holds the task-dependence graph metrics of seed §4.5.3 (section
// "graph"): each root's longest path relative to the critical path.
type Graph struct {
	Tasks          int64     `json:"tasks"`
	Edges          int64     `json:"edges"`
	RemoteEdges    int64     `json:"remote_edges"`
	Roots          int64     `json:"roots"`
	Leaves         int64     `json:"leaves"`
	CriticalPathNS int64     `json:"critical_path_ns"`
	RootPaths      RootPaths `json:"root_paths"`
}

// RootPaths are the statistics of root longest paths relative to the
// critical path (Table 5.8 of the OMPC seed).
type RootPaths struct {
	Max        float64 `json:"max"`
	MaxCount   int64   `json:"max_count"`
	Min        float64 `json:"min"`
	MinCount   int64   `json:"min_count"`
	Mean       float64 `json:"mean"`
	Median     float64 `json:"median"`
	Within4Pct int64   `json:"within_4pct"`
	Histogram  []int64 `json:"histogram"` // 10 buckets of width 0.1 over (0,1]
}

// Tasks holds per-construct task statistics (section "tasks").
type Tasks struct {
	Count      int64       `json:"count"`
	Constructs []Construct `json:"constructs"`
	Findings   []Finding   `json:"findings"`
	// ReadySeries is the number of ready tasks over time, summed over
	// processes (time-averaged per bin): StarVZ's ready-task panel.
	ReadySeries *Series `json:"ready_series,omitempty"`
}

// Series is a time series in fixed bins from StartNS.
type Series struct {
	StartNS int64     `json:"start_ns"`
	BinNS   int64     `json:"bin_ns"`
	Values  []float64 `json:"values"`
}

// Construct is one task construct (source location) and kind.
type Construct struct {
	Name           string  `json:"name"`
	Kind           string  `json:"kind"`
	Count          int64   `json:"count"`
	Executed       int64   `json:"executed"`
	SumNS          int64   `json:"sum_ns"`
	MeanNS         int64   `json:"mean_ns"`
	MinNS          int64   `json:"min_ns"`
	MaxNS          int64   `json:"max_ns"`
	Share          float64 `json:"share"`
	CreateNS       int64   `json:"create_ns"`
	TasksPerThread float64 `json:"tasks_per_thread"`
	// Histogram counts durations in power-of-two buckets: bucket i holds
	// durations in [2^i, 2^(i+1)) ns (bucket 0 also holds 0).
	Histogram []int64 `json:"histogram"`
}

// Finding is a plain-language diagnosis.
type Finding struct {
	Severity string `json:"severity"` // "info", "warning", "problem"
	Topic    string `json:"topic"`
	Message  string `json:"message"`
}

// Anomalies lists tasks much longer than their type's model predicts
// (section "anomalies", StarVZ §4.1): per construct, a duration model, and
// the tasks above its one-sided prediction bound at family-wise level Alpha,
// Bonferroni-corrected for the number of tasks tested.
type Anomalies struct {
	Model  string    `json:"model"`
	Alpha  float64   `json:"alpha"`
	Tested int64     `json:"tested"`
	Found  int64     `json:"found"`
	Tasks  []Anomaly `json:"tasks"`
	// Truncated is true when more than Found tasks were listed as
	// anomalies would be: Tasks holds the highest-scoring ones.
	Truncated bool           `json:"truncated,omitempty"`
	Models    []AnomalyModel `json:"models"`
	Groups    []AnomalyGroup `json:"groups"`
}

// AnomalyModel is the duration model fitted for one construct:
// ln(dur_ns) = intercept + slope·ln(cost) (kind "loglog", cost from the
// task attribute named by Attribute) or ln(dur_ns) = intercept (kind
// "location": the median of log durations), with robust residual scale
// Scale (1.4826·MAD of log residuals, floored). A task is anomalous when its
// duration exceeds BoundFactor× the prediction.
type AnomalyModel struct {
	Construct   string  `json:"construct"`
	Kind        string  `json:"kind"` // "loglog", "location", "untested"
	Attribute   string  `json:"attribute,omitempty"`
	Tasks       int64   `json:"tasks"`
	Intercept   float64 `json:"intercept"`
	Slope       float64 `json:"slope"`
	Scale       float64 `json:"scale"`
	BoundFactor float64 `json:"bound_factor"`
	Found       int64   `json:"found"`
}

// AnomalyGroup is a cluster of anomalies close in time (each within a few
// predicted durations of the next): one perturbation rather than many.
// Rank and Thread are -1 when the group spans several.
type AnomalyGroup struct {
	ID      int   `json:"id"`
	Tasks   int64 `json:"tasks"`
	Rank    int   `json:"rank"`
	Thread  int   `json:"thread"`
	Threads int   `json:"threads"`
	StartNS int64 `json:"start_ns"`
	EndNS   int64 `json:"end_ns"`
}

// Anomaly is one outlier task.
type Anomaly struct {
	Rank        int     `json:"rank"`
	Thread      int     `json:"thread"`
	Task        int64   `json:"task"`
	Construct   string  `json:"construct"`
	StartNS     int64   `json:"start_ns"`
	DurNS       int64   `json:"dur_ns"`
	PredictedNS int64   `json:"predicted_ns"`
	BoundNS     int64   `json:"bound_ns"`
	Score       float64 `json:"score"` // log residual in units of the model's scale
	Group       int     `json:"group"` // AnomalyGroup.ID
}

// WaitStates is the MPI time of the analysis window split into Scalasca's
// wait-state patterns (section "wait_states"; absent when the window holds
// no MPI call). The patterns are disjoint: each MPI call is charged to at
// most one, for at most its duration, and Other is the rest of the MPI
// time (transfer, software overhead, calls that wait for nobody), so the
// patterns and Other add up to MPINS.
type WaitStates struct {
	WaitTimes
	CallSites  []WaitSite    `json:"call_sites"`
	PerProcess []WaitProcess `json:"per_process"`
	// Causes are the waits by the process waited for (the direct cause),
	// the waiters' call site and pattern, most first.
	Causes []WaitCause `json:"causes"`
	// Delays charge the waiting to the excess computation that caused
	// it (short-term delay costs), most first.
	Delays []WaitDelay `json:"delays"`
	// OpenMP splits the threads' time neither working nor in MPI (the
	// breakdown's overhead + idleness − fork/join − sync runtime) by where they wait and
	// why no work was there; absent without such time.
	OpenMP *OMPWaits `json:"openmp,omitempty"`
}

// OMPWaits is the threads' waiting outside MPI, split twice: by where the
// thread waits (the Sync fields) and by why it had no work (the Reason
// fields). Each split is a partition of WaitingNS, which is the
// breakdown's overhead + idleness − fork/join − sync runtime; TaskReadyNS
// is its overhead − fork/join − sync runtime and DependencesNS + NoTaskNS its idleness.
type OMPWaits struct {
	OMPWaitTimes
	// Constructs are the sync constructs (and the time outside any), most
	// waiting first.
	Constructs []OMPWaitConstruct `json:"constructs"`
	PerProcess []OMPWaitProcess   `json:"per_process"`
	// Mutexes are the locks, critical sections, ordered regions, atomics
	// and POSIX threads mutexes the trace records acquiring (mutex
	// events), most waiting first; absent without such events.
	Mutexes []OMPMutex `json:"mutexes,omitempty"`
}

// OMPMutex is the acquisitions of one kind of mutex at one call site over
// all processes. The wait (acquire to acquired) is time the acquiring task
// runs for the simulator: it is inside the breakdown's work, not in
// WaitingNS.
type OMPMutex struct {
	Kind         string `json:"kind"`
	Construct    string `json:"construct,omitempty"`
	Acquisitions int64  `json:"acquisitions"`
	WaitNS       int64  `json:"wait_ns"`
	MaxWaitNS    int64  `json:"max_wait_ns"`
	HoldNS       int64  `json:"hold_ns"`
	// ContentionNS is the part of WaitNS until the mutex was free:
	// Scalasca's lock contention, from the acquire to the last release of
	// the mutex before the acquisition (0 when it was free at the
	// acquire). The rest of the wait is the hand-over after the release.
	ContentionNS int64 `json:"contention_ns"`
}

// OMPWaitTimes is one row's waiting by place and by reason.
type OMPWaitTimes struct {
	WaitingNS         int64 `json:"waiting_ns"`
	BarrierImplicitNS int64 `json:"barrier_implicit_ns"`
	BarrierExplicitNS int64 `json:"barrier_explicit_ns"`
	TaskwaitNS        int64 `json:"taskwait_ns"`
	TaskgroupNS       int64 `json:"taskgroup_ns"`
	OtherSyncNS       int64 `json:"other_sync_ns"`
	OutsideSyncNS     int64 `json:"outside_sync_ns"`
	// ThreadSyncNS: waiting for the program's own threads: joins
	// (pthread_join), condition variables, their barriers; absent when
	// none.
	ThreadSyncNS int64 `json:"thread_sync_ns,omitempty"`
	// TaskReadyNS: some task of the process was ready (runtime and
	// scheduling overhead); DependencesNS: none was ready but created tasks
	// waited on dependences; NoTaskNS: none was ready or waiting.
	TaskReadyNS   int64 `json:"task_ready_ns"`
	DependencesNS int64 `json:"dependences_ns"`
	NoTaskNS      int64 `json:"no_task_ns"`
	// MutexWaitNS is the time waiting to acquire mutexes (Mutexes): inside
	// the breakdown's work, not part of WaitingNS.
	MutexWaitNS int64 `json:"mutex_wait_ns,omitempty"`
}

// OMPWaitConstruct is the waiting at one sync construct over all
// processes: its kind (barrier_implicit, barrier_explicit, taskwait,
// taskgroup, other_sync, or outside_sync for the time in none), its
// location and the parallel region's.
type OMPWaitConstruct struct {
	Kind      string `json:"kind"`
	Construct string `json:"construct,omitempty"`
	Region    string `json:"region,omitempty"`
	// Count is how many times a thread entered it.
	Count         int64 `json:"count"`
	WaitingNS     int64 `json:"waiting_ns"`
	TaskReadyNS   int64 `json:"task_ready_ns"`
	DependencesNS int64 `json:"dependences_ns"`
	NoTaskNS      int64 `json:"no_task_ns"`
}

// OMPWaitProcess is one process's waiting over all constructs.
type OMPWaitProcess struct {
	Rank int `json:"rank"`
	OMPWaitTimes
}

// WaitTimes is one row's MPI time split into the patterns.
type WaitTimes struct {
	MPINS           int64 `json:"mpi_ns"`
	Calls           int64 `json:"calls"`
	LateSenderNS    int64 `json:"late_sender_ns"`
	LateReceiverNS  int64 `json:"late_receiver_ns"`
	WaitNxNNS       int64 `json:"wait_nxn_ns"`
	WaitBarrierNS   int64 `json:"wait_barrier_ns"`
	LateBroadcastNS int64 `json:"late_broadcast_ns"`
	EarlyReduceNS   int64 `json:"early_reduce_ns"`
	// One-sided synchronisation collective over a window's group
	// (Scalasca's Wait at Fence, Wait at Create, Wait at Free): absent
	// when 0, as in every report of a program without MPI windows.
	WaitAtFenceNS     int64 `json:"wait_at_fence_ns,omitempty"`
	WaitAtWinCreateNS int64 `json:"wait_at_win_create_ns,omitempty"`
	WaitAtWinFreeNS   int64 `json:"wait_at_win_free_ns,omitempty"`
	// General active target synchronisation (MPI_Win_post, _start,
	// _complete, _wait): an origin's MPI_Win_start waiting for the last
	// target of its group to post (Scalasca's Late Post), a target's
	// MPI_Win_wait waiting for the last origin to enter MPI_Win_complete
	// (Scalasca's Early Wait). Absent when 0, as in every report of a
	// program without them.
	LatePostNS  int64 `json:"late_post_ns,omitempty"`
	EarlyWaitNS int64 `json:"early_wait_ns,omitempty"`
	// Passive target synchronisation: an origin's one-sided calls of a
	// lock epoch waiting for another origin's conflicting lock on the
	// same target of the same window to be released (Scalasca's Lock
	// Contention). Absent when 0, as in every report of a program
	// without lock epochs.
	LockContentionNS int64 `json:"lock_contention_ns,omitempty"`
	// A nonblocking collective's member waiting, in the call that
	// completes it, for another member to enter the MPI call that
	// progresses it (Scalasca's name for the one-sided analogue, Wait
	// for Progress): absent when 0, as in every report of a program
	// without nonblocking collectives.
	WaitForProgressNS int64 `json:"wait_for_progress_ns,omitempty"`
	OtherNS           int64 `json:"other_ns"`
	// WaitingCalls counts the calls charged to a pattern.
	WaitingCalls int64 `json:"waiting_calls"`
}

// Waiting returns the row's time charged to any pattern.
func (w *WaitTimes) Waiting() int64 {
	var n int64
	for _, pt := range waitPatterns(w) {
		n += pt.ns
	}
	return n
}

// Windows says whether the row has any one-sided synchronisation wait:
// the HTML page shows their columns only then.
func (w *WaitTimes) Windows() bool {
	return w.WaitAtFenceNS > 0 || w.WaitAtWinCreateNS > 0 || w.WaitAtWinFreeNS > 0
}

// Epochs says whether the row has any wait of general active target
// synchronisation: the HTML page shows their columns only then.
func (w *WaitTimes) Epochs() bool { return w.LatePostNS > 0 || w.EarlyWaitNS > 0 }

// Locks says whether the row has any lock contention: the HTML page
// shows its column, the CUBE file its metric, only then.
func (w *WaitTimes) Locks() bool { return w.LockContentionNS > 0 }

// Progress says whether the row has any wait for progress: the HTML page
// shows its column only then.
func (w *WaitTimes) Progress() bool { return w.WaitForProgressNS > 0 }

// WaitSite is one call site (the MPI function, the call's location and
// the innermost user region around the call, if any) over all processes.
// Site is the location of the call in the program: "file:line:col" with
// debug information, "function+0xoffset" without (compile with -g for
// lines), empty when the trace does not record it (format versions 1–3,
// OTF2).
type WaitSite struct {
	Func   string `json:"func"`
	Site   string `json:"site,omitempty"`
	Region string `json:"region,omitempty"`
	WaitTimes
}

// WaitProcess is one process's split, over all its call sites.
type WaitProcess struct {
	Rank int `json:"rank"`
	WaitTimes
	// CausedNS is the waiting of other processes' calls that waited for
	// this one's.
	CausedNS int64 `json:"caused_ns"`
	// DelayNS is the part of CausedNS this process's excess computation
	// explains (short-term delay cost).
	DelayNS int64 `json:"delay_ns"`
	// LongTermNS is its delays' long-term cost: waiting propagated from
	// the waits its delays caused (its rows of Delays, summed).
	LongTermNS int64 `json:"long_term_ns,omitempty"`
}

// WaitDelay is the waiting one process's excess computation in one code
// region caused (Böhme et al.'s short-term delay cost).
type WaitDelay struct {
	Rank int    `json:"rank"`
	Code string `json:"code"`
	// Site is the call the code ran before, the one waited for: "MPI_Send
	// at file:line:col" (empty when unknown).
	Site  string  `json:"site,omitempty"`
	NS    int64   `json:"ns"`
	Share float64 `json:"share"` // of all waiting time
	// LongTermNS is the long-term delay cost: waits propagated from the
	// waits this delay caused, by the backward replay's shares.
	LongTermNS   int64 `json:"long_term_ns,omitempty"`
	PropagatedNS int64 `json:"propagated_ns"`
	Waits        int64 `json:"waits"`

	// Pattern is the wait state these costs are of (late_sender, …): the
	// waits the delay caused directly (NS) and through the waits it
	// caused in turn (LongTermNS), as Scalasca's delay_<pattern> and
	// delay_<pattern>_longterm.
	Pattern string `json:"pattern"`
}

// WaitCause is the waiting one process caused at one call site of the
// waiters, in one pattern.
type WaitCause struct {
	Rank    int     `json:"rank"`
	Func    string  `json:"func"`
	Site    string  `json:"site,omitempty"` // the waiters' call site (WaitSite.Site)
	Region  string  `json:"region,omitempty"`
	Pattern string  `json:"pattern"`
	NS      int64   `json:"ns"`
	Share   float64 `json:"share"` // of all waiting time
	Calls   int64   `json:"calls"`
}
