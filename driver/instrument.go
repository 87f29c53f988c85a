package driver

import (
	"fmt"

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

// resolveFactor is how many per-event costs a task must last for the
// breakdown to resolve it: about four events bracket a task (create,
// start, end, the sync around it), and what remains of their cost after
// the correction (its spread from event to event, the runtime's own call
// into the tool) is a fraction of each; below 40 costs that remainder
// exceeds ~10 % of the task (docs/ACCURACY.md: +37 % at 1 µs, 50 ns per event).
const resolveFactor = 40

// grainFindings warns, per task construct, when its mean task is shorter
// than what the collector's recording cost lets the breakdown resolve.
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
			Message: fmt.Sprintf("tasks of %s last %s on average, below what the collector resolves (%s: %d ns per recorded event × %d): their work and the idleness around them carry the recording cost, %s",
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
