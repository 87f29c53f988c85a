// Package ompfault rewrites a valid trace process with one fault of its
// OpenMP or mutex events (issue 42): an event dropped or duplicated, a
// kind, id or location changed. The file stays valid byte-wise (written by
// trace.Rows.WriteFile, checksums and all), so what is tested is that the
// analysis checks the OMPT sequences the model relies on, not the decoder.
// The driver's tests and scripts/robustness.sh (through its mutate command)
// apply the same faults to `ptrace gen forkjoin` traces.
package ompfault

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/trace"
)

// Fault is one fault: Apply rewrites a process, Want is the warning kind
// (sim.Warnings) the analysis must report for it.
type Fault struct {
	Name  string
	Want  string
	Apply func(p *trace.Rows) error
}

// Critical is the wait id of the critical section AddCriticals inserts.
const Critical = 0x1000

// OMPT values used here.
const (
	mutexCritical = 5
	syncTaskwait  = 5
	statusSwitch  = 7
	statusDone    = 1
	taskInitial   = 1
)

// AddCriticals puts a critical section (mutex_acquire, mutex_acquired,
// mutex_released of kind critical and wait id Critical, at a location of
// its own) inside the run of every explicit task that starts with a
// task_schedule switch and completes on the same thread with nothing in
// between, as forkjoin's tasks do: the valid trace the mutex faults damage.
func AddCriticals(p *trace.Rows) error {
	loc := int64(len(p.Tables.Locations))
	p.Tables.Locations = append(p.Tables.Locations, trace.Location{File: "forkjoin.c", Line: 13, Col: 1, Func: "step"})
	n := 0
	for th, evs := range p.Events {
		out := make([]trace.Event, 0, len(evs))
		start := int64(-1)
		var task int64
		for _, e := range evs {
			if e.Kind == trace.TaskSchedule && e.Args[1] == statusDone && e.Args[0] == task && start >= 0 && e.Time-start >= 4 {
				d := e.Time - start
				for i, k := range []trace.Kind{trace.MutexAcquire, trace.MutexAcquired, trace.MutexReleased} {
					out = append(out, trace.Event{Time: start + int64(i+1)*d/4, Kind: k, Args: [trace.MaxArgs]int64{mutexCritical, Critical, loc}})
				}
				n++
			}
			start = -1
			if e.Kind == trace.TaskSchedule && e.Args[1] == statusSwitch {
				start, task = e.Time, e.Args[2]
			}
			out = append(out, e)
		}
		p.Events[th] = out
	}
	if n == 0 {
		return fmt.Errorf("no explicit task run to put a critical section in")
	}
	return nil
}

// at finds the nth (0-based) event of kind on thread th (−1: any thread,
// lowest first) that matches pred (nil: any).
func at(p *trace.Rows, th int, kind trace.Kind, nth int, pred func(*trace.Event) bool) (int, int, error) {
	for t := range p.Events {
		if th >= 0 && t != th {
			continue
		}
		k := nth
		for i := range p.Events[t] {
			e := &p.Events[t][i]
			if e.Kind == kind && (pred == nil || pred(e)) {
				if k == 0 {
					return t, i, nil
				}
				k--
			}
		}
	}
	return 0, 0, fmt.Errorf("no %s event #%d on thread %d", kind, nth, th)
}

// drop deletes, dup duplicates, set changes an argument of the event found
// by at.
func drop(th int, kind trace.Kind, nth int, pred func(*trace.Event) bool) func(*trace.Rows) error {
	return func(p *trace.Rows) error {
		t, i, err := at(p, th, kind, nth, pred)
		if err == nil {
			p.Events[t] = append(p.Events[t][:i], p.Events[t][i+1:]...)
		}
		return err
	}
}

func dup(th int, kind trace.Kind, nth int, pred func(*trace.Event) bool) func(*trace.Rows) error {
	return func(p *trace.Rows) error {
		t, i, err := at(p, th, kind, nth, pred)
		if err == nil {
			p.Events[t] = append(p.Events[t][:i+1], p.Events[t][i:]...)
		}
		return err
	}
}

func set(th int, kind trace.Kind, nth int, pred func(*trace.Event) bool, arg int, v int64) func(*trace.Rows) error {
	return func(p *trace.Rows) error {
		t, i, err := at(p, th, kind, nth, pred)
		if err == nil {
			p.Events[t][i].Args[arg] = v
		}
		return err
	}
}

// both applies fs in order.
func both(fs ...func(*trace.Rows) error) func(*trace.Rows) error {
	return func(p *trace.Rows) error {
		for _, f := range fs {
			if err := f(p); err != nil {
				return err
			}
		}
		return nil
	}
}

func syncKind(k int64) func(*trace.Event) bool {
	return func(e *trace.Event) bool { return e.Args[0] == k }
}
func notInitial(e *trace.Event) bool { return e.Args[4]&taskInitial == 0 }
func initial(e *trace.Event) bool    { return e.Args[4]&taskInitial != 0 }

// bogus is a parallel id no event of a gen trace uses.
const bogus = 0x7777

// Faults are the faults of issue 42, for a forkjoin process (thread 0 the
// master, thread 1 a worker; mutex faults need AddCriticals first).
var Faults = []Fault{
	// Mutexes.
	{"mutex-drop-acquire", "mutex_acquired without mutex_acquire", drop(-1, trace.MutexAcquire, 0, nil)},
	{"mutex-drop-acquired", "mutex_released without mutex_acquired", drop(-1, trace.MutexAcquired, 0, nil)},
	{"mutex-dup-acquired", "mutex acquired twice", dup(-1, trace.MutexAcquired, 0, nil)},
	{"mutex-dup-acquire", "mutex_acquired missing", both(dup(-1, trace.MutexAcquire, 0, nil), set(-1, trace.MutexAcquire, 0, nil, 1, Critical+8))},
	{"mutex-drop-released", "mutex acquired twice", drop(-1, trace.MutexReleased, 0, nil)},
	{"mutex-never-released", "mutex never released", func(p *trace.Rows) error {
		// the last release of the trace: nothing acquires the mutex after
		for t := len(p.Events) - 1; t >= 0; t-- {
			for i := len(p.Events[t]) - 1; i >= 0; i-- {
				if p.Events[t][i].Kind == trace.MutexReleased {
					p.Events[t] = append(p.Events[t][:i], p.Events[t][i+1:]...)
					return nil
				}
			}
		}
		return fmt.Errorf("no mutex_released")
	}},
	{"mutex-acquired-kind", "mutex kind mismatch", set(-1, trace.MutexAcquired, 0, nil, 0, 1)},
	{"mutex-acquired-id", "mutex wait id mismatch", set(-1, trace.MutexAcquired, 0, nil, 1, Critical+8)},
	{"mutex-released-kind", "mutex kind mismatch", set(-1, trace.MutexReleased, 0, nil, 0, 7)},
	{"mutex-released-id", "mutex_released without mutex_acquired", set(-1, trace.MutexReleased, 0, nil, 1, Critical+8)},
	{"mutex-loc-2^40", "location out of range", set(-1, trace.MutexAcquire, 0, nil, 2, 1<<40)},
	{"mutex-loc-neg", "location out of range", set(-1, trace.MutexAcquired, 0, nil, 2, -5)},
	{"mutex-kind-2^62", "unknown mutex kind", both(set(-1, trace.MutexAcquire, 0, nil, 0, 1<<62), set(-1, trace.MutexAcquired, 0, nil, 0, 1<<62), set(-1, trace.MutexReleased, 0, nil, 0, 1<<62))},
	// Sync regions (thread 0's first taskwait).
	{"sync-kind-2^50", "unknown sync kind", both(
		set(0, trace.SyncBegin, 0, syncKind(syncTaskwait), 0, 1<<50), set(0, trace.SyncWaitBegin, 0, syncKind(syncTaskwait), 0, 1<<50),
		set(0, trace.SyncWaitEnd, 0, syncKind(syncTaskwait), 0, 1<<50), set(0, trace.SyncEnd, 0, syncKind(syncTaskwait), 0, 1<<50))},
	{"sync-drop-begin", "sync_wait_begin without sync_begin", drop(0, trace.SyncBegin, 0, nil)},
	{"sync-dup-begin", "sync_end missing", dup(0, trace.SyncBegin, 0, nil)},
	{"sync-drop-end", "sync_end missing", drop(0, trace.SyncEnd, 0, nil)},
	{"sync-dup-end", "sync_end without sync_begin", dup(0, trace.SyncEnd, 0, nil)},
	{"sync-drop-wait-begin", "sync_wait_end without sync_wait_begin", drop(0, trace.SyncWaitBegin, 0, nil)},
	{"sync-drop-wait-end", "sync_wait_end missing", drop(0, trace.SyncWaitEnd, 0, nil)},
	{"sync-wait-kind", "sync_wait_begin without sync_begin", set(0, trace.SyncWaitBegin, 0, nil, 0, 6)},
	{"sync-end-kind", "sync_end without sync_begin", set(0, trace.SyncEnd, 0, nil, 0, 6)},
	{"sync-worker-drop-end", "sync_end missing", drop(1, trace.SyncEnd, 0, nil)},
	{"sync-loc-2^40", "location out of range", set(0, trace.SyncBegin, 0, nil, 3, 1<<40)},
	{"sync-parallel-bogus", "bad parallel id", set(1, trace.SyncBegin, 0, nil, 1, bogus)},
	// Parallel regions.
	{"parallel-begin-bogus", "bad parallel id", set(0, trace.ParallelBegin, 0, nil, 0, bogus)},
	{"parallel-end-bogus", "parallel_end without parallel_begin", set(0, trace.ParallelEnd, 0, nil, 0, bogus)},
	{"parallel-drop-begin", "bad parallel id", drop(0, trace.ParallelBegin, 0, nil)},
	{"parallel-drop-end", "parallel_end missing", drop(0, trace.ParallelEnd, 0, nil)},
	{"parallel-dup-begin", "parallel_end missing", dup(0, trace.ParallelBegin, 0, nil)},
	{"parallel-reuse-id", "parallel id reused", both(dup(0, trace.ParallelBegin, 0, nil), set(0, trace.ParallelBegin, 1, nil, 1, 0))},
	{"parallel-loc-2^40", "location out of range", set(0, trace.ParallelBegin, 0, nil, 4, 1<<40)},
	// Implicit tasks.
	{"implicit-bogus-parallel", "bad parallel id", set(1, trace.ImplicitTaskBegin, 0, notInitial, 0, bogus)},
	{"implicit-drop-begin-worker", "bad parallel id", drop(1, trace.ImplicitTaskBegin, 0, notInitial)},
	{"implicit-drop-end-worker", "implicit_task_end missing", drop(1, trace.ImplicitTaskEnd, 0, notInitial)},
	{"implicit-drop-end-master", "implicit_task_end missing", drop(0, trace.ImplicitTaskEnd, 0, notInitial)},
	{"implicit-drop-end-initial", "implicit_task_end missing", drop(0, trace.ImplicitTaskEnd, 0, initial)},
	// Tasks.
	{"task-loc-2^40", "location out of range", set(0, trace.TaskCreate, 0, nil, 3, 1<<40)},
	{"task-loc-neg", "location out of range", set(0, trace.TaskCreate, 1, nil, 3, -5)},
}

// ByName returns the fault named name.
func ByName(name string) (Fault, bool) {
	for _, f := range Faults {
		if f.Name == name {
			return f, true
		}
	}
	return Fault{}, false
}

// NeedsCriticals reports whether f damages mutex events (AddCriticals
// first).
func (f Fault) NeedsCriticals() bool { return len(f.Name) > 6 && f.Name[:6] == "mutex-" }
