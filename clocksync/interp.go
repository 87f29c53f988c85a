package clocksync

import (
	"fmt"
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// Offset sources of a process's linear model.
const (
	SourceInitFinalize = "init+finalize" // both measurements: offset and drift
	SourceInit         = "init"          // one measurement: constant offset
	SourceFinalize     = "finalize"
	SourceFirstEvent   = "first event" // none: the first event aligned with rank 0's
)

// maxDrift bounds the drift a pair of measurements may imply (1%): beyond
// it the measurements are wrong (a clock does not drift that much), and only
// the init offset is used.
const maxDrift = 0.01

// model maps a process's clock to rank 0's: t + off + round((t − at)·slope).
type model struct {
	source string
	off    int64   // offset at local time at
	at     int64   // local time of the first measurement
	slope  float64 // change of the offset per local ns
	final  int64   // offset at the last measurement (for the report)
	note   string  // why a measurement was not used
}

// apply returns rank 0's time for local time t.
func (m *model) apply(t int64) int64 {
	if m.slope == 0 {
		return t + m.off
	}
	return t + m.off + roundHalfUp(float64(t-m.at)*m.slope)
}

// identity reports whether apply changes nothing.
func (m *model) identity() bool { return m.off == 0 && m.slope == 0 }

// driftPPM is the process clock's rate error against rank 0 in ppm
// (positive: it runs fast). The offset changes by −p/(1+p) per local ns
// when the clock gains p per true ns.
func (m *model) driftPPM() float64 {
	if m.slope == 0 {
		return 0
	}
	return -m.slope / (1 + m.slope) * 1e6
}

func roundHalfUp(x float64) int64 { return int64(math.Floor(x + 0.5)) }

// newModel builds the linear model of one process from its offset
// measurements: the first "init" and the last "finalize" ones. With both,
// the offset is interpolated linearly between them (and extrapolated
// beyond), which removes a constant drift exactly; with one, it is
// constant; with none, the caller aligns first events (alignTo).
func newModel(p *trace.Process) model {
	var init, fin *trace.ClockOffset
	for i := range p.ClockOffsets {
		o := &p.ClockOffsets[i]
		switch o.When {
		case "init":
			if init == nil {
				init = o
			}
		case "finalize":
			fin = o
		}
	}
	switch {
	case init != nil && fin != nil && fin.LocalNS > init.LocalNS:
		s := float64(fin.OffsetNS-init.OffsetNS) / float64(fin.LocalNS-init.LocalNS)
		if math.Abs(s) > maxDrift {
			return model{source: SourceInit, off: init.OffsetNS, at: init.LocalNS, final: init.OffsetNS,
				note: fmt.Sprintf("process %d: the finalize clock offset implies a drift of %.0f ppm; using the init offset only", p.Header.Rank, -s/(1+s)*1e6)}
		}
		return model{source: SourceInitFinalize, off: init.OffsetNS, at: init.LocalNS, slope: s, final: fin.OffsetNS}
	case init != nil:
		return model{source: SourceInit, off: init.OffsetNS, at: init.LocalNS, final: init.OffsetNS}
	case fin != nil:
		return model{source: SourceFinalize, off: fin.OffsetNS, at: fin.LocalNS, final: fin.OffsetNS}
	}
	return model{source: SourceFirstEvent}
}

// firstEvent returns the earliest timestamp of p and whether it has events.
func firstEvent(p *trace.Process) (int64, bool) {
	first, seen := int64(0), false
	for _, ev := range p.Events {
		if len(ev) > 0 && (!seen || ev[0].Time < first) {
			first, seen = ev[0].Time, true
		}
	}
	return first, seen
}
