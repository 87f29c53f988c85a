package sim

// Runtime code inside synchronisation constructs (docs/task-model.md,
// "Runtime time inside sync regions"). A task that enters a barrier or a
// taskwait runs the runtime's code, not its own, from the construct's begin
// (OMPT sync_region begin) to its wait's begin (sync_region_wait begin), and
// again from the wait's end to the construct's end; likewise the tail of a
// taskgroup after its wait. POT's model keeps the task ⑤ there, so its
// work holds that code; ptrace books it as runtime overhead (Tallent's "the
// parallel system orchestrating tasks"), whatever δr says, as it books a
// team's fork and join: ThreadTimes.SyncRuntime, inside Overhead. The
// bounds are the trace's own events: nothing is estimated. A task the
// thread runs inside the construct (a task scheduling point) is work as
// ever; the time inside the wait stays idleness or overhead by δr.
// Sim.SyncRuntimeAsWork (analyze --sync-runtime-as-work) restores POT's
// booking.

// EnterSyncRuntime notes that thread th's current task runs runtime code of
// a synchronisation construct from now on (while it is running), until
// LeaveSyncRuntime. Entering twice for the same task is one entry.
func (s *Sim) EnterSyncRuntime(th int) {
	thr := &s.Threads[th]
	t := thr.Current()
	if s.SyncRuntimeAsWork || t == NoTask {
		return
	}
	if n := len(thr.Sync); n > 0 && thr.Sync[n-1] == t {
		return
	}
	if len(thr.Sync) >= maxSyncDepth {
		// Entries of tasks that left the thread inside a construct (an
		// untied task resumed elsewhere) are never left here; they only
		// accumulate in a broken trace. Drop the oldest.
		copy(thr.Sync, thr.Sync[1:])
		thr.Sync = thr.Sync[:len(thr.Sync)-1]
	}
	thr.Sync = append(thr.Sync, t)
}

// LeaveSyncRuntime ends the construct of thread th's current task, and of
// any task above it that left the thread without leaving its own.
func (s *Sim) LeaveSyncRuntime(th int) {
	thr := &s.Threads[th]
	t := thr.Current()
	if t == NoTask {
		// Nothing runs on the thread: whatever it entered is over (a
		// worker's implicit barrier reported after its region ended).
		thr.Sync = thr.Sync[:0]
		return
	}
	for i := len(thr.Sync) - 1; i >= 0; i-- {
		if thr.Sync[i] == t {
			thr.Sync = thr.Sync[:i]
			return
		}
	}
}

// maxSyncDepth bounds a thread's open constructs: one per task nested on
// its stack at most, in a consistent trace.
const maxSyncDepth = 256

// inSyncRuntime reports whether task t, on top of the thread and running,
// runs runtime code of a synchronisation construct.
func (t *Thread) inSyncRuntime(top Task) bool {
	n := len(t.Sync)
	return n > 0 && t.Sync[n-1] == top
}
