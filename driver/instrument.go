package driver

import (
	"fmt"
	"strings"

	"github.com/ptrace-dev/ptrace/reduce"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// instrRow is one process's instrumentation correction (sim/instrument.go).
type instrRow struct {
	EventCostNS int64 // from the header, whether applied or not
	Applied     bool
	Events      int64
}

// eventCost returns the per-event recording cost the simulation of p
// subtracts: the collector's measurement, unless the correction is off.
func (r *run) eventCost(p *trace.Process) int64 {
	if r.opts.NoInstrumentationCorrection {
		return 0
	}
	return max(p.Header.EventCostNS, 0)
}

func instrSummary(s *sim.Sim) instrRow {
	return instrRow{EventCostNS: max(s.Proc.Header.EventCostNS, 0), Applied: s.EventCostNS > 0, Events: s.Breakdown.InstrumentedEvents()}
}

// instrReport sums the processes' corrections for the report; nil when no
// trace carries a recording cost (ptrace gen, older collectors).
func (r *run) instrReport(rows []simRow, corrected int64) *report.InstrumentationCorrection {
	var c report.InstrumentationCorrection
	for _, row := range rows {
		c.EventCostNS = max(c.EventCostNS, row.Instr.EventCostNS)
		c.Applied = c.Applied || row.Instr.Applied
		c.Events += row.Instr.Events
	}
	if c.EventCostNS == 0 {
		return nil
	}
	c.CorrectedNS = corrected
	return &c
}

// flushReport sums the tracer's buffer flushes (sim/flush.go); nil when no
// process flushed inside the window.
func (r *run) flushReport(rows []simRow, tot reduce.Times) *report.BufferFlushes {
	if tot.Flushes == 0 {
		return nil
	}
	f := &report.BufferFlushes{Count: tot.Flushes, NS: tot.Flush, WorkNS: tot.FlushWork, MPINS: tot.FlushMPI,
		OverheadNS: tot.FlushOverhead, IdleNS: tot.Flush - tot.FlushWork - tot.FlushMPI - tot.FlushOverhead, KeptInWork: r.opts.NoInstrumentationCorrection, MaxRank: -1}
	for _, row := range rows {
		if row.Times.Flushes == 0 {
			continue
		}
		f.Processes++
		if row.Times.Flush > f.MaxNS || f.MaxRank < 0 {
			f.MaxRank, f.MaxNS = row.Rank, row.Times.Flush
		}
	}
	switch p := r.dir.Producer; {
	case strings.Contains(p, "Score-P"):
		f.Setting = "SCOREP_TOTAL_MEMORY"
	case strings.HasPrefix(p, "ptrace-collector"):
		f.Setting = "PTRACE_BUFFER_MB"
	}
	return f
}

// resolveFactor is how many per-event recording costs a task must last for
// the breakdown to resolve it. What neither the correction nor the booking
// of the sync regions' runtime code (sim/runtime.go) removes stays in the
// work around each task: the runtime's code between a callback and the
// task body, and between a barrier's return and the next taskwait, which
// no event bounds. On the load-imbalance benchmark (docs/ACCURACY.md) that
// is ~0.3–0.4 µs per task and its creator against a 10 ns recording cost;
// a task of 250 costs (2.5 µs) carries ~15 % of it, the bound issue 19 sets
// for 1 µs grains.
const resolveFactor = 250

// grainFindings warns, per task construct, when its mean task is shorter
// than what the collector's recording cost lets the breakdown resolve.
// The mean, not the median: what the construct's work holds of runtime
// code is about a constant per task, so its share of the work is that
// constant over the mean task. Tasks of 1 and 2 µs (the 1 µs grain of
// the load-imbalance benchmark) have a median at 2 µs, on the limit with
// an 8 ns recording cost, and a mean of 1.5 µs; a construct whose few
// long tasks (a thread the OS descheduled, say) lift the mean above the
// limit has that much more work to hold the same runtime code, and its
// work is resolved.
func grainFindings(c *report.InstrumentationCorrection, cons []reduce.Construct) []report.Finding {
	if c == nil || c.EventCostNS <= 0 {
		return nil
	}
	limit := resolveFactor * c.EventCostNS
	var out []report.Finding
	for _, k := range cons {
		if k.Executed == 0 || k.MeanNS >= limit {
			continue
		}
		out = append(out, report.Finding{Severity: "warning", Topic: "resolution",
			Message: fmt.Sprintf("tasks of %s last %s on average, below what the collector resolves (%s: %d ns per recorded event × %d): their work still holds runtime and recording time around each task, %s",
				k.Name, report.Dur(k.MeanNS), report.Dur(limit), c.EventCostNS, resolveFactor, correctionState(c))})
	}
	return out
}

func correctionState(c *report.InstrumentationCorrection) string {
	if c.Applied {
		return "less what the instrumentation correction subtracts"
	}
	return "uncorrected (--no-instrumentation-correction)"
}
