package cube

// The metric tree ptrace writes: the same in every file, so that files
// of different runs compare (cube_diff, cube_merge, Extra-P). Unique names
// are Scalasca's where the meaning is the same (the MPI wait states, the
// OpenMP critical and lock contention, the critical path, mpi, time), and
// ptrace's own otherwise; none of ptrace's own names is one of Scalasca's.
// Each description says how ptrace defines the value (docs/report-schema.md
// holds the full definitions, docs/cube.md the mapping).

// mdef describes one metric of the tree. total says whether the report
// gives the metric's value per process (then the per-process value sits on
// the call tree's root and a value the report also attributes to a deeper
// call path moves there from the root); metrics without a per-process
// total only hold what the report attributes to a call path of a process.
type mdef struct {
	name, disp, unit, descr string
	dtype                   DType
	total                   bool
	kids                    []*mdef
}

// metricSet is one file's metric tree, every metric by name.
type metricSet struct {
	roots  []*Metric
	byName map[string]*Metric
	def    map[*Metric]*mdef
	parent map[*Metric]*Metric
}

func sec(name, disp, descr string, total bool, kids ...*mdef) *mdef {
	return &mdef{name: name, disp: disp, unit: "sec", descr: descr, dtype: Double, total: total, kids: kids}
}

func occ(name, disp, descr string, total bool, kids ...*mdef) *mdef {
	return &mdef{name: name, disp: disp, unit: "occ", descr: descr, dtype: Uint64, total: total, kids: kids}
}

// Metric unique names used by the renderer.
const (
	mTime              = "time"
	mWork              = "work"
	mMutex             = "omp_mutex_wait"
	mMutexCritical     = "omp_lock_contention_critical"
	mMutexLock         = "omp_lock_contention_api"
	mMutexOrdered      = "omp_ordered_wait"
	mMutexAtomic       = "omp_atomic_wait"
	mMutexPthread      = "pthread_lock_contention_mutex_lock"
	mMPI               = "mpi"
	mLateSender        = "mpi_latesender"
	mLateReceiver      = "mpi_latereceiver"
	mWaitNxN           = "mpi_wait_nxn"
	mWaitBarrier       = "mpi_barrier_wait"
	mLateBroadcast     = "mpi_latebroadcast"
	mEarlyReduce       = "mpi_earlyreduce"
	mRMAWaitFence      = "mpi_rma_wait_at_fence"
	mRMAWaitCreate     = "mpi_rma_wait_at_create"
	mRMAWaitFree       = "mpi_rma_wait_at_free"
	mRMALatePost       = "mpi_rma_sync_late_post"
	mRMAEarlyWait      = "mpi_rma_early_wait"
	mRMALockContention = "mpi_rma_lock_competition"
	mNBCProgress       = "mpi_nbc_wait_for_progress"
	mInitFinalize      = "mpi_init_finalize"
	mOverhead          = "runtime_overhead"
	mForkJoin          = "fork_join"
	mSyncRuntime       = "sync_runtime"
	mIdleness          = "idleness"
	mIdleSerial        = "idleness_serial"
	mIdleParallel      = "idleness_parallel"
	mInstrument        = "instrumentation"
	mOMPWaiting        = "omp_waiting"
	mOMPBarImplicit    = "omp_wait_barrier_implicit"
	mOMPBarExplicit    = "omp_wait_barrier_explicit"
	mOMPTaskwait       = "omp_wait_taskwait"
	mOMPTaskgroup      = "omp_wait_taskgroup"
	mOMPOtherSync      = "omp_wait_other_sync"
	mOMPOutside        = "omp_wait_outside_sync"
	mOMPWhy            = "omp_waiting_reason"
	mOMPTaskReady      = "omp_task_ready"
	mOMPDeps           = "omp_dependences"
	mOMPNoTask         = "omp_no_task"
	mDelay             = "mpi_delay"
	mDelayShort        = "mpi_delay_short_term"
	mDelayLong         = "mpi_delay_long_term"
	mDelayProp         = "mpi_delay_propagated"
	mCaused            = "mpi_caused"
	mCP                = "critical_path"
	mCPShare           = "critical_path_share"
	mCalls             = "mpi_calls"
	mWaitingCalls      = "mpi_waiting_calls"
	mTasksCreated      = "tasks_created"
	mTasksExecuted     = "tasks_executed"
	mTaskTime          = "task_execution"
	mSyncEntries       = "omp_sync_entries"
)

// causedName is the metric of the waiting a process caused in a pattern
// (report pattern names: late_sender, ...).
func causedName(pattern string) string { return "mpi_caused_" + pattern }

// cpKindName is the critical path's metric of a node kind (by_kind).
func cpKindName(kind string) string { return "critical_path_" + kind }

// patterns are the report's wait-state patterns, in the report's order,
// with the metric each is and its display name.
var patterns = []struct{ key, metric, disp string }{
	{"late_sender", mLateSender, "MPI Late Sender"},
	{"late_receiver", mLateReceiver, "MPI Late Receiver"},
	{"wait_nxn", mWaitNxN, "MPI Wait at N x N"},
	{"wait_barrier", mWaitBarrier, "MPI Wait at Barrier"},
	{"late_broadcast", mLateBroadcast, "MPI Late Broadcast"},
	{"early_reduce", mEarlyReduce, "MPI Early Reduce"},
	{"wait_at_fence", mRMAWaitFence, "MPI Wait at Fence"},
	{"wait_at_win_create", mRMAWaitCreate, "MPI Wait at Create"},
	{"wait_at_win_free", mRMAWaitFree, "MPI Wait at Free"},
	{"late_post", mRMALatePost, "MPI Late Post (Synchronization)"},
	{"early_wait", mRMAEarlyWait, "MPI Early Wait"},
	{"lock_contention", mRMALockContention, "MPI Lock Contention"},
	{"wait_for_progress", mNBCProgress, "MPI NBC Wait for Progress"},
}

// cpKinds are the critical path's node kinds (critical_path.by_kind).
var cpKinds = []struct{ kind, disp string }{
	{"task", "explicit tasks"},
	{"region", "parallel-region code"},
	{"serial", "serial code"},
	{"mpi", "MPI calls"},
	{"latency", "message and dependence latencies"},
	{"join", "join points"},
}

// metricTree is the tree every file has.
// metricTree is the metric definitions; locks adds Lock Contention's
// metrics, which only a report with lock contention has (the files of
// other reports as they were).
func metricTree(locks bool) []*mdef {
	waits := make([]*mdef, 0, len(patterns)+1)
	caused := make([]*mdef, 0, len(patterns))
	for _, p := range patterns {
		if p.key == "lock_contention" && !locks {
			continue
		}
		waits = append(waits, sec(p.metric, p.disp, patternDescr[p.key], true))
		caused = append(caused, sec(causedName(p.key), p.disp+" caused",
			"Waiting of other processes' calls in "+p.disp+" that waited for this process (wait_states.causes, the direct cause: the process waited for), at the waiters' call site.", false))
	}
	waits = append(waits, sec(mInitFinalize, "MPI_Init/MPI_Finalize in the window",
		"The part of the MPI time a process spent in its own MPI_Init, MPI_Init_thread or MPI_Finalize inside the analysis window (breakdown.mpi_init_finalize_ns): waiting for the other processes to start or to end.", true))
	cpk := make([]*mdef, 0, len(cpKinds))
	for _, k := range cpKinds {
		cpk = append(cpk, sec(cpKindName(k.kind), "On the path: "+k.disp,
			"Critical-path time in "+k.disp+" (critical_path.by_kind). The report gives it over all processes only: it is resolved to a process in single-process reports; otherwise it stays in the parent's own value.", false))
	}
	return []*mdef{
		sec(mTime, "Time", "Accounted thread time in the analysis window (trace.window), summed over the process's threads: work + MPI + overhead + idleness + instrumentation (breakdown.thread_time_ns).", true,
			sec(mWork, "Work", "A thread runs task code: explicit or implicit task bodies, or the initial task (a process's initial thread outside MPI and outside parallel regions) (breakdown.work_ns).", true,
				sec(mMutex, "OMP mutex waiting", "Time waiting to acquire locks, critical sections, ordered regions, atomics and POSIX threads mutexes (mutex_acquire to mutex_acquired; wait_states.openmp.mutex_wait_ns); the waiting task runs for the simulator, so this is inside work. By kind only where the report resolves it to a process (single-process reports); otherwise in this metric's own value. At a critical section or lock call its own value is the hand-over: the wait after the previous holder's release.", true,
					sec(mMutexCritical, "OMP Critical Contention", "Waiting for a critical section to become available, as Scalasca defines it: from the entry (mutex_acquire) to the previous holder's release, none when it was free (mutexes[].contention_ns, mutex kind critical).", false),
					sec(mMutexLock, "OMP Lock API Contention", "Waiting for an OpenMP lock to become available (omp_set_lock, omp_test_lock and their nest variants), as Scalasca defines it: from the call (mutex_acquire) to the previous holder's release, none when it was free (mutexes[].contention_ns).", false),
					sec(mMutexOrdered, "OMP ordered waiting", "Waiting to enter an ordered region (mutex kind ordered).", false),
					sec(mMutexAtomic, "OMP atomic waiting", "Waiting for an atomic (mutex kind atomic).", false),
					sec(mMutexPthread, "Pthread Mutex Lock Contention", "Waiting for a POSIX threads mutex to become available (pthread_mutex_lock, pthread_mutex_trylock), as Scalasca defines it: from the call (mutex_acquire) to the previous holder's release, none when it was free (mutexes[].contention_ns, mutex kind pthread_mutex; OTF2 archives of Score-P's pthread adapter).", false))),
			sec(mMPI, "MPI", "A thread is inside an MPI call (breakdown.mpi_ns). Its own value (not in a wait state) is transfer, MPI software and calls that waited for nobody (wait_states other_ns).", true, waits...),
			sec(mOverhead, "Overhead", "The OpenMP runtime works for the program: task creation and scheduling while tasks are ready, team fork/join, the runtime's code of barriers, taskwaits and taskgroups outside their waits (breakdown.overhead_ns). Its own value is task management and scheduling.", true,
				sec(mForkJoin, "Fork/join", "The encountering thread from parallel_begin to its implicit task's begin and from that task's end to parallel_end (breakdown.fork_join_ns).", true),
				sec(mSyncRuntime, "Sync construct runtime", "A running task inside a barrier, taskwait or taskgroup outside the construct's wait (breakdown.sync_runtime_ns; 0 under analyze --sync-runtime-as-work).", true)),
			sec(mIdleness, "Idleness", "A thread has nothing to run (breakdown.idleness_ns).", true,
				sec(mIdleSerial, "Idleness outside parallel regions", "Idleness outside parallel regions (breakdown.idleness_serial_ns).", true),
				sec(mIdleParallel, "Idleness in parallel regions", "Idleness inside parallel regions (breakdown.idleness_parallel_ns).", true)),
			sec(mInstrument, "Instrumentation", "The tracer's time taken out of work by the instrumentation correction: the collector's recording cost of events, and trace buffer flushes that fell in work (breakdown.instrumentation_ns).", true)),
		sec(mOMPWaiting, "OMP waiting", "The threads' time neither working, nor in MPI, nor forking or joining a team, nor in a sync construct's runtime code: overhead + idleness − fork/join − sync runtime (wait_states.openmp.waiting_ns), by the sync construct the thread waits in.", true,
			sec(mOMPBarImplicit, "OMP implicit barrier waiting", "Waiting in implicit, implementation, workshare, parallel and teams barriers (barrier_implicit_ns).", true),
			sec(mOMPBarExplicit, "OMP explicit barrier waiting", "Waiting in #pragma omp barrier (barrier_explicit_ns).", true),
			sec(mOMPTaskwait, "OMP taskwait waiting", "Waiting in taskwait (taskwait_ns).", true),
			sec(mOMPTaskgroup, "OMP taskgroup waiting", "Waiting at the end of a taskgroup (taskgroup_ns).", true),
			sec(mOMPOtherSync, "OMP other sync waiting", "Waiting in other sync regions, e.g. reductions (other_sync_ns).", true),
			sec(mOMPOutside, "OMP waiting outside sync constructs", "Waiting in no sync construct: a worker between regions or after its last one, a thread whose task was switched out (outside_sync_ns).", true)),
		sec(mOMPWhy, "OMP waiting by reason", "The same waiting as omp_waiting, split by why the thread had no work, from the simulator's task states.", true,
			sec(mOMPTaskReady, "A task was ready", "Some task of the process was ready: runtime and scheduling overhead (task_ready_ns).", true),
			sec(mOMPDeps, "Tasks waited for dependences", "No task was ready but created tasks waited for predecessors, local depend or remote dependences (dependences_ns).", true),
			sec(mOMPNoTask, "No task", "No task was ready or waiting (no_task_ns).", true)),
		sec(mDelay, "MPI waiting by root cause", "The MPI waiting charged to the excess computation of the process waited for (Böhme et al.'s delay costs; wait_states.delays), at that process and the code it ran: the last parallel region begun before the call waited for, or serial code.", false,
			sec(mDelayShort, "Short-term delay cost", "Over the waits a delay caused, the part of each by which the process's time outside MPI since its previous synchronizing call exceeds the waiter's (delays[].ns).", false),
			sec(mDelayLong, "Long-term delay cost", "Waiting propagated from the waits this delay caused (delays[].long_term_ns).", false),
			sec(mDelayProp, "Propagated, no further delay", "Waiting handed back along a chain of waits that ended at this delay's waits without reaching another delay (delays[].propagated_ns).", false)),
		sec(mCaused, "MPI waiting caused", "Waiting of other processes' calls that waited for this process's calls (wait_states.causes; per process caused_ns), at the waiters' call site.", false, caused...),
		sec(mCP, "Critical path", "Time of this process's nodes on the critical path, the longest path through the distributed task and message graph (critical_path.by_process; node weights leave out waiting).", true, cpk...),
		{name: mCPShare, disp: "Critical path share", unit: "", dtype: Double, total: true,
			descr: "The process's time on the critical path over the analysis window's length (critical_path.by_process over run_time_ns): summed over all processes it is critical_path.share_of_run_time."},
		occ(mCalls, "MPI calls", "MPI calls begun in the window (wait_states calls).", true,
			occ(mWaitingCalls, "MPI calls charged to a wait state", "Calls charged to a wait-state pattern (waiting_calls).", true)),
		occ(mTasksCreated, "Tasks created", "Explicit tasks created, at their construct (tasks.constructs[].count). The report gives it over all processes only: resolved in single-process reports.", false),
		occ(mTasksExecuted, "Tasks executed", "Tasks of the construct that ran (tasks.constructs[].executed); single-process reports only.", false),
		sec(mTaskTime, "Task execution time", "Execution time of the construct's tasks that ran: time in the running state, suspended parts excluded (tasks.constructs[].sum_ns); single-process reports only.", false),
		occ(mSyncEntries, "OMP sync construct entries", "Times a thread entered the sync construct (wait_states.openmp.constructs[].count); single-process reports only.", false),
	}
}

// patternDescr says how ptrace defines each wait state (docs/report-schema.md).
var patternDescr = map[string]string{
	"late_sender":        "A call completing receives (MPI_Recv, MPI_Wait* completing an MPI_Irecv, MPI_Sendrecv) waits from its enter until the latest matching sender's call enters; a call completing several receives is charged once, until the latest sender.",
	"late_receiver":      "A blocking send, or the wait completing an MPI_Isend, that began before its receive began and ended after it waits from its enter until the receive's start (the MPI_Irecv's enter, or the blocking receive's); not a call already waiting as a Late Sender.",
	"wait_nxn":           "All-to-all collectives (MPI_Allreduce, Allgather[v], Alltoall[vw], Reduce_scatter[_block], Scan, Exscan) wait from their enter until the last member enters.",
	"wait_barrier":       "MPI_Barrier waits from its enter until the last member enters.",
	"late_broadcast":     "Non-roots of 1-to-N collectives (Bcast, Scatter[v]) wait from their enter until the root enters.",
	"early_reduce":       "The root of an N-to-1 collective (Reduce, Gather[v]) waits from its enter until the first non-root enters.",
	"wait_at_fence":      "MPI_Win_fence waits from its enter until the last member of the window's group enters (Scalasca's Wait at Fence, its Early Fence included).",
	"wait_at_win_create": "A window's creation (MPI_Win_create, _allocate, _allocate_shared, _create_dynamic) waits from its enter until the last member of the communicator enters.",
	"wait_at_win_free":   "MPI_Win_free waits from its enter until the last member of the window's group enters.",
	"late_post":          "An origin's MPI_Win_start waits from its enter until the last target of its group enters MPI_Win_post (Scalasca's Late Post in synchronisation; Open MPI and MPICH wait for the exposure epoch in MPI_Win_start).",
	"lock_contention":    "An origin's one-sided calls of a lock epoch (MPI_Win_lock, the RMA calls, the flushes, MPI_Win_unlock: whichever the MPI acquires the lock in) wait until the previous holder of a conflicting lock on the same target of the same window enters MPI_Win_unlock (Scalasca's Lock Contention).",
	"early_wait":         "A target's MPI_Win_wait (or the MPI_Win_test that ends its exposure epoch) waits from its enter until the last origin of its group enters MPI_Win_complete (Scalasca's Early Wait).",
	"wait_for_progress":  "The call completing a nonblocking collective (MPI_Wait, MPI_Test, ...) waits, after every member it waits for started it, until the latest of them enters the MPI call in which it completes the collective: MPI without a progress thread advances a nonblocking collective only inside MPI calls (ptrace's pattern; Scalasca names the one-sided analogue Wait for Progress). When longer than the call's wait for a late start, which is then not counted. Its delay costs (mpi_delay_*) are the latest member's time up to that call (ptrace's; Scalasca has none).",
}

// newMetrics builds one file's metric tree (locks: metricTree's).
func newMetrics(locks bool) *metricSet {
	ms := &metricSet{byName: map[string]*Metric{}, def: map[*Metric]*mdef{}, parent: map[*Metric]*Metric{}}
	var build func(d *mdef, parent *Metric) *Metric
	build = func(d *mdef, parent *Metric) *Metric {
		m := &Metric{Name: d.name, Disp: d.disp, DType: d.dtype, Unit: d.unit, Descr: d.descr}
		ms.byName[d.name] = m
		ms.def[m] = d
		if parent != nil {
			ms.parent[m] = parent
		}
		for _, k := range d.kids {
			m.Children = append(m.Children, build(k, m))
		}
		return m
	}
	for _, d := range metricTree(locks) {
		ms.roots = append(ms.roots, build(d, nil))
	}
	return ms
}
