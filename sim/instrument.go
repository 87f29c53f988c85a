package sim

// The instrumentation correction. Every event the collector records costs
// the traced thread a fixed time (the OMPT callback storing its record); the
// collector stamps events that begin or end a stretch of work so that this
// cost falls outside the stretch (docs/ACCURACY.md), but an event recorded in
// the middle of one (a task created, a dependence list, a task switch between
// two working tasks) puts its whole cost into the work it interrupts. The
// collector measures that cost at start-up and writes it in the trace header
// (event_cost_ns); with the correction on, each such event takes that much
// out of the thread's work, into ThreadTimes.Instrumentation, never more than
// the work interval it falls in. Traces without the header field (ptrace gen,
// older collectors) are not corrected. Switched off by the driver
// (analyze --no-instrumentation-correction) by leaving Sim.EventCostNS at 0.

// instrCorrection is the correction's state inside Breakdown.
type instrCorrection struct {
	cost    int64   // ns per event, 0 when off
	pending []int64 // per thread: cost accumulated in its open work interval
	// Events counts the events corrected inside the window.
	Events int64
}

func newInstrCorrection(cost int64, threads int) instrCorrection {
	if cost <= 0 {
		return instrCorrection{pending: make([]int64, threads)}
	}
	return instrCorrection{cost: cost, pending: make([]int64, threads)}
}

// event notes an event of thread th, applied already; was is the thread's
// category before it. Only an event inside work on both sides is corrected:
// one that starts or ends work was stamped so that its cost lies outside.
func (c *instrCorrection) event(s *Sim, b *Breakdown, th int, was category) {
	if c.cost == 0 || was != catWork || b.th[th].cat != catWork || s.Now < s.Begin || s.Now > s.End {
		return
	}
	c.pending[th] += c.cost
	c.Events++
}

// take returns the correction of thread th's work interval of d ns (inside
// the window) that is being closed.
func (c *instrCorrection) take(th int, d int64) int64 {
	return min(c.pending[th], d)
}

// InstrumentedEvents returns how many events the correction applied to.
func (b *Breakdown) InstrumentedEvents() int64 { return b.instr.Events }
