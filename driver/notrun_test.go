package driver_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/trace"
)

// Tasks created with dependences that never run (a trace cut before any
// task started) analyse: the task graph and the critical path have no
// task to put the dependences on, and indexed the per-task tables that a
// process without tasks that ran does not keep (a panic until 2026-11-24).
func TestDependencesOfTasksThatNeverRan(t *testing.T) {
	bases, err := fuzzTraces()
	if err != nil {
		t.Fatal(err)
	}
	base := bases[1] // stencil: tasks with dependences
	procs := make([]fuzzProc, len(base))
	for i := range base {
		procs[i] = clone(&base[i])
		for th, evs := range procs[i].Events {
			kept := evs[:0]
			for _, e := range evs {
				if e.Kind != trace.TaskSchedule {
					kept = append(kept, e)
				}
			}
			procs[i].Events[th] = kept
		}
	}
	dir := t.TempDir()
	if !writeTrace(dir, procs) {
		t.Fatal("the writer refused the trace")
	}
	for k := 1; k <= 2; k++ {
		err := inproc.Run(k, func(c comm.Comm) error {
			_, err := driver.Run(c, driver.Options{Dir: dir})
			return err
		})
		if err != nil {
			t.Errorf("%d analysis ranks: %v", k, err)
		}
	}
}
