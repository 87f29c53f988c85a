package driver

import (
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A process without events beside others (a rank file holding its header
// alone: MPICH's Hydra kills the other ranks of an MPI_Abort with SIGKILL,
// and a rank that had not flushed its buffer yet leaves its header) has no
// time range: its 0, 0 started the trace and the analysis window at the
// clock's zero (an MPICH run of 0.2 s reported as 8.7e4 s, the machine's
// uptime, all of it idle).
func TestEventlessProcessHasNoTimeRange(t *testing.T) {
	const t0 = int64(87_000_000_000_000) // CLOCK_MONOTONIC after a day
	procs := twoProcs(func(r int, peer int64) []trace.Event {
		return []trace.Event{ev(t0+10, trace.ThreadBegin, 1), ev(t0+40, trace.ThreadEnd)}
	})
	procs[0].Events = nil // rank 0, the clocks' reference, has none
	dir := writeTrace(t, procs)
	for k := 1; k <= 2; k++ {
		rep, _, err := analyze(t, Options{Dir: dir}, k)
		if err != nil {
			t.Fatal(err)
		}
		tr := rep.Trace
		if tr.Events != 2 || tr.FirstNS != t0+10 || tr.LastNS != t0+40 || tr.DurationNS != 30 ||
			tr.Window == nil || tr.Window.StartNS != t0+10 || tr.Window.EndNS != t0+40 {
			t.Errorf("k=%d: events %d, trace %d…%d (%d ns), window %+v; want %d…%d", k, tr.Events, tr.FirstNS, tr.LastNS, tr.DurationNS, tr.Window, t0+10, t0+40)
		}
	}
}
