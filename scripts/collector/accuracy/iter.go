package main

import (
	"fmt"
	"slices"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// iterWork returns the median over the benchmark's iterations (the first
// left out, as the program does) of the work the trace shows in one
// iteration, summed over threads, and the same less the instrumentation
// correction (header event_cost_ns per event recorded inside work). A
// median iteration is one no thread was descheduled in, so on a loaded
// machine this says what the collector adds where the totals cannot.
//
// Work follows the simulation's rule for this benchmark: a thread works
// unless it is inside a taskwait or barrier (sync_begin … sync_end; with
// asWork, POT's booking, only inside its wait, sync_wait_begin … _end), and
// it works while it runs an explicit task there (sim/runtime.go). An
// iteration ends at the thread's explicit barrier's sync_end. Events are
// streamed chunk by chunk.
func iterWork(dir string, asWork bool) (raw, corrected float64, err error) {
	type state struct {
		waiting, inTask bool
		sync            bool // inside a taskwait or barrier
		last, work      int64
		events          int64   // inside work on both sides, this iteration
		iters           []int64 // work per iteration
		evs             []int64 // such events per iteration
	}
	var th []*state
	hdr, threads, err := benchEvents(dir, func(t int, e *trace.Event, begin bool) {
		for len(th) <= t {
			th = append(th, &state{})
		}
		s := th[t]
		if begin {
			s.last, s.work = e.Time, 0
		}
		working := func() bool {
			if asWork {
				return !s.waiting || s.inTask
			}
			return !s.sync || s.inTask
		}
		before := working()
		if before {
			s.work += e.Time - s.last
		}
		s.last = e.Time
		switch e.Kind {
		case trace.SyncBegin:
			s.sync = s.sync || e.Args[0] == ompt.SyncTaskwait || ompt.IsBarrier(e.Args[0])
		case trace.SyncEnd:
			s.sync = false
		case trace.SyncWaitBegin:
			s.waiting = true
		case trace.SyncWaitEnd:
			s.waiting = false
		case trace.TaskSchedule:
			switch e.Args[1] {
			case ompt.StatusSwitch:
				s.inTask = true
			case ompt.StatusComplete:
				s.inTask = false
			}
		}
		if before && working() {
			s.events++
		}
		if e.Kind == trace.SyncEnd && e.Args[0] == ompt.SyncBarrierExplicit {
			s.iters = append(s.iters, s.work)
			s.evs = append(s.evs, s.events)
			s.work, s.events = 0, 0
		}
	})
	if err != nil {
		return 0, 0, err
	}
	for len(th) < threads {
		th = append(th, &state{})
	}
	cost := hdr.EventCostNS
	// a worker's warm-up implicit task also passed the test above: keep
	// each thread's last run of iterations
	n := -1
	for _, s := range th {
		if len(s.iters) > 0 && (n < 0 || len(s.iters) < n) {
			n = len(s.iters)
		}
	}
	if n < 2 {
		return 0, 0, fmt.Errorf("%s: fewer than 2 iterations", dir)
	}
	var tot, corr []float64
	for k := 1; k < n; k++ {
		var w, ev int64
		for _, s := range th {
			if len(s.iters) >= n {
				off := len(s.iters) - n
				w += s.iters[off+k]
				ev += s.evs[off+k]
			}
		}
		tot = append(tot, float64(w))
		corr = append(corr, float64(w-cost*ev))
	}
	slices.Sort(tot)
	slices.Sort(corr)
	return tot[len(tot)/2], corr[len(corr)/2], nil
}
