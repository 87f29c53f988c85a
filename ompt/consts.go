// Package ompt owns ptrace's OpenMP model: the meaning of the OMPT-derived
// events in a trace. It maps them onto task-state transitions for the
// runtime-agnostic simulator in sim/ (POT's "Update", Alg. 2) and resolves
// OpenMP depend semantics from address lists. The constants here are OMPT's
// own numbers, which the collector records unchanged.
package ompt

// Task flags (ompt_task_flag_t).
const (
	TaskInitial    = 0x00000001
	TaskImplicit   = 0x00000002
	TaskExplicit   = 0x00000004
	TaskTarget     = 0x00000008
	TaskTaskwait   = 0x00000010
	TaskUndeferred = 0x08000000
	TaskUntied     = 0x10000000
	TaskFinal      = 0x20000000
	TaskMergeable  = 0x40000000
	TaskMerged     = 0x80000000
)

// Task status of task_schedule's prior task (ompt_task_status_t).
const (
	StatusComplete         = 1
	StatusYield            = 2
	StatusCancel           = 3
	StatusDetach           = 4
	StatusEarlyFulfill     = 5
	StatusLateFulfill      = 6
	StatusSwitch           = 7
	StatusTaskwaitComplete = 8
)

// Sync region kinds (ompt_sync_region_t).
const (
	SyncBarrier                  = 1 // deprecated in OpenMP 5.1
	SyncBarrierImplicit          = 2 // deprecated in OpenMP 5.1
	SyncBarrierExplicit          = 3
	SyncBarrierImplementation    = 4
	SyncTaskwait                 = 5
	SyncTaskgroup                = 6
	SyncReduction                = 7
	SyncBarrierImplicitWorkshare = 8
	SyncBarrierImplicitParallel  = 9
	SyncBarrierTeams             = 10
)

// IsBarrier reports whether a sync region kind is a barrier of some sort.
func IsBarrier(kind int64) bool {
	switch kind {
	case SyncBarrier, SyncBarrierImplicit, SyncBarrierExplicit, SyncBarrierImplementation,
		SyncBarrierImplicitWorkshare, SyncBarrierImplicitParallel, SyncBarrierTeams:
		return true
	}
	return false
}

// Cancel flags (ompt_cancel_flag_t).
const (
	CancelParallel      = 0x01
	CancelSections      = 0x02
	CancelLoop          = 0x04
	CancelTaskgroup     = 0x08
	CancelActivated     = 0x10
	CancelDetected      = 0x20
	CancelDiscardedTask = 0x40
)

// Parallel flags (ompt_parallel_flag_t).
const (
	ParallelInvokerProgram = 0x00000001
	ParallelInvokerRuntime = 0x00000002
	ParallelLeague         = 0x40000000
	ParallelTeam           = 0x80000000
)

// Work-sharing types (ompt_work_t).
const (
	WorkLoop           = 1
	WorkSections       = 2
	WorkSingleExecutor = 3
	WorkSingleOther    = 4
	WorkWorkshare      = 5
	WorkDistribute     = 6
	WorkTaskloop       = 7
	WorkScope          = 8
)

// Mutex kinds (ompt_mutex_t).
const (
	MutexLock         = 1
	MutexTestLock     = 2
	MutexNestLock     = 3
	MutexTestNestLock = 4
	MutexCritical     = 5
	MutexAtomic       = 6
	MutexOrdered      = 7
)
