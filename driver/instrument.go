package driver

import (
	"fmt"
	"math"

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
func grainFindings(c *report.InstrumentationCorrection, cons []reduce.Construct) []report.Finding {
	if c == nil || c.EventCostNS <= 0 {
		return nil
	}
	limit := resolveFactor * c.EventCostNS
	var out []report.Finding
	for _, k := range cons {
		typical := typicalNS(k)
		if k.Executed == 0 || typical >= limit {
			continue
		}
		out = append(out, report.Finding{Severity: "warning", Topic: "resolution",
			Message: fmt.Sprintf("tasks of %s typically last %s, below what the collector resolves (%s: %d ns per recorded event × %d): their work still holds runtime and recording time around each task, %s",
				k.Name, report.Dur(typical), report.Dur(limit), c.EventCostNS, resolveFactor, correctionState(c))})
	}
	return out
}

// typicalNS is a construct's median task duration, read off its histogram
// (interpolated in log scale inside the power-of-two bucket holding it), or
// its mean without one. Not the mean: a few tasks whose thread the OS
// descheduled for milliseconds would lift it above the limit.
func typicalNS(k reduce.Construct) int64 {
	var n int64
	for _, v := range k.Hist {
		n += v
	}
	half, seen := float64(n)/2, int64(0)
	for i, v := range k.Hist {
		if v > 0 && float64(seen+v) >= half {
			frac := (half - float64(seen)) / float64(v)
			return int64(math.Round(math.Exp2(float64(i) + frac)))
		}
		seen += v
	}
	return k.MeanNS
}

func correctionState(c *report.InstrumentationCorrection) string {
	if c.Applied {
		return "less what the instrumentation correction subtracts"
	}
	return "uncorrected (--no-instrumentation-correction)"
}
