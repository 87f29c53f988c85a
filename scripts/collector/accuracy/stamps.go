package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/trace"
)

// stampsReport sets the program's own clock reads (examples/imbalance.c
// with IMBALANCE_STAMPS=FILE) against the trace's events of the same run,
// both CLOCK_MONOTONIC ns, and prints per thread the medians over the
// iterations (the first left out) of the four gaps between the ends of
// what the program measures and the events that bound the trace's work:
//
//	barrier return:  the explicit barrier's sync_end (implicit_task begin
//	                 for the first iteration) → the program's read after it
//	taskwait entry:  the program's read before the taskwait → its sync_begin
//	task start:      task_schedule(switch) → the spin's first read
//	task end:        the spin's last read → task_schedule(complete)
//
// and the stretches themselves, trace against program. Each gap holds the
// runtime's code and the collector's callback on one side of the event, and
// the program's own code outside its clock reads (half a clock read, the
// bookkeeping) on the other.
func stampsReport(stampsPath, dir string) error {
	type own struct{ a, b, spinThread, start, end float64 }
	var prog [][]own // [thread][iteration]
	f, err := os.Open(stampsPath)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var th, it int
		var o own
		if _, err := fmt.Sscanf(sc.Text(), "%d %d %f %f %f %f %f", &th, &it, &o.a, &o.b, &o.spinThread, &o.start, &o.end); err != nil {
			f.Close()
			return fmt.Errorf("%s: %q: %w", stampsPath, sc.Text(), err)
		}
		for len(prog) <= th {
			prog = append(prog, nil)
		}
		if it != len(prog[th]) {
			f.Close()
			return fmt.Errorf("%s: thread %d: iteration %d out of order", stampsPath, th, it)
		}
		prog[th] = append(prog[th], o)
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return err
	}

	// the trace: per thread, the benchmark region's iteration starts
	// (implicit task begin, then each explicit barrier's sync_end),
	// taskwait sync_begins and the (switch, complete) pairs it ran
	type tr struct {
		starts, tw      []int64
		switches, compl []int64
	}
	var ths []*tr
	_, threads, err := benchEvents(dir, func(t int, e *trace.Event, begin bool) {
		for len(ths) <= t {
			ths = append(ths, &tr{})
		}
		s := ths[t]
		if begin {
			// a worker's warm-up implicit task also passes: start over
			*s = tr{starts: []int64{e.Time}}
			return
		}
		switch {
		case e.Kind == trace.SyncEnd && e.Args[0] == ompt.SyncBarrierExplicit:
			s.starts = append(s.starts, e.Time)
		case e.Kind == trace.SyncBegin && e.Args[0] == ompt.SyncTaskwait:
			s.tw = append(s.tw, e.Time)
		case e.Kind == trace.TaskSchedule && e.Args[1] == ompt.StatusSwitch:
			s.switches = append(s.switches, e.Time)
		case e.Kind == trace.TaskSchedule && e.Args[1] == ompt.StatusComplete:
			s.compl = append(s.compl, e.Time)
		}
	})
	if err != nil {
		return err
	}
	for len(ths) < threads {
		ths = append(ths, &tr{})
	}

	fmt.Println("| thread | iterations | barrier return | taskwait entry | task start | task end | implicit: trace / own | task: trace / own |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for th := range prog {
		if th >= len(ths) {
			return fmt.Errorf("%s: no events of thread %d", dir, th)
		}
		s := ths[th]
		var ret, entry, in, out, trImpl, ownImpl, trTask, ownTask []float64
		n := min(len(prog[th]), len(s.tw), len(s.starts))
		for it := 1; it < n; it++ {
			o := prog[th][it]
			ret = append(ret, o.a-float64(s.starts[it]))
			entry = append(entry, float64(s.tw[it])-o.b)
			trImpl = append(trImpl, float64(s.tw[it]-s.starts[it]))
			ownImpl = append(ownImpl, o.b-o.a)
		}
		// the tasks this thread ran, in the program's order of their starts
		var ran []own
		for t := range prog {
			for it := 1; it < len(prog[t]); it++ {
				if int(prog[t][it].spinThread) == th {
					ran = append(ran, prog[t][it])
				}
			}
		}
		slices.SortFunc(ran, func(x, y own) int {
			switch {
			case x.start < y.start:
				return -1
			case x.start > y.start:
				return 1
			}
			return 0
		})
		// the trace's pairs after the first iteration's: match by time
		k := 0
		for _, o := range ran {
			for k < len(s.switches) && float64(s.switches[k]) < o.start-float64(1e5) {
				k++ // not this spin's (the first iteration's, or a lost match)
			}
			if k >= len(s.switches) || k >= len(s.compl) || float64(s.switches[k]) > o.start || float64(s.compl[k]) < o.end {
				continue
			}
			in = append(in, o.start-float64(s.switches[k]))
			out = append(out, float64(s.compl[k])-o.end)
			trTask = append(trTask, float64(s.compl[k]-s.switches[k]))
			ownTask = append(ownTask, o.end-o.start)
			k++
		}
		if len(ret) == 0 || len(in) == 0 {
			return fmt.Errorf("%s: thread %d: nothing to compare (%d iterations, %d tasks matched)", dir, th, len(ret), len(in))
		}
		fmt.Printf("| %d | %d (%d tasks) | %.0f ns | %.0f ns | %.0f ns | %.0f ns | %.0f / %.0f ns | %.0f / %.0f ns |\n", th, len(ret), len(in),
			median(ret), median(entry), median(in), median(out), median(trImpl), median(ownImpl), median(trTask), median(ownTask))
	}
	return nil
}
