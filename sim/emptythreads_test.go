package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// A process file may claim thousands of thread indices that hold no event
// (FuzzAnalyzeValues moved one event to thread 16383: a 462 KB file of 214
// events took 119 ms to simulate, a decode scan and its buffers for every
// index). Threads without events get no scan: the simulation's allocations
// do not grow with them by more than a handful of per-process tables.
func TestEmptyThreadsCostNoScans(t *testing.T) {
	allocs := func(threads int) float64 {
		events := make([][]trace.Event, threads)
		deps := make([][]trace.Dep, threads)
		for _, th := range []int{0, threads - 1} {
			events[th] = []trace.Event{
				{Time: 0, Kind: trace.ThreadBegin, Args: [trace.MaxArgs]int64{1}},
				{Time: 10, Kind: trace.ThreadEnd},
			}
		}
		p, err := trace.NewProcess(trace.Header{NRanks: 1}, trace.Tables{}, events, deps)
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(5, func() {
			s := sim.New(p, nil, false) // no Scans pool: every scan is allocated
			if err := s.Run(ompt.NewModel()); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(2), allocs(16384)
	if many > few+200 {
		t.Errorf("%.0f allocations for 16384 thread indices of which 2 have events, %.0f for 2 threads", many, few)
	}
}
