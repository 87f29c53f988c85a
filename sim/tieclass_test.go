package sim

import (
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// tieClass puts first, at equal times, what makes a task exist or ready:
// creations, dependences, completions, a task_schedule that finishes its
// prior task (any status but switch, 7, and yield, 2), sync regions'
// begins; every other kind, an invalid one too, after.
func TestTieClass(t *testing.T) {
	first := map[trace.Kind]bool{
		trace.TaskCreate: true, trace.TaskDeps: true, trace.TaskDependence: true, trace.RemoteDepIn: true,
		trace.DetachFulfill: true, trace.ImplicitTaskEnd: true, trace.RemoteDepOut: true, trace.ThreadBegin: true,
		trace.SyncWaitBegin: true, trace.SyncBegin: true,
	}
	for k := range 256 {
		for _, status := range []int64{1, 2, 3, 7} {
			e := trace.Event{Kind: trace.Kind(k), Args: [5]int64{0, status}}
			want := uint8(1)
			if first[e.Kind] || e.Kind == trace.TaskSchedule && status != 7 && status != 2 {
				want = 0
			}
			if got := tieClass(&e); got != want {
				t.Errorf("kind %d, status %d: class %d, want %d", k, status, got, want)
			}
		}
	}
}
