package clocksync

import (
	"fmt"
	"hash/fnv"
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// Offset sources of a process's linear model.
const (
	SourceInitFinalize = "init+finalize" // both measurements: offset and drift
	SourceInit         = "init"          // one measurement: constant offset
	SourceFinalize     = "finalize"
	SourceFirstEvent   = "first event" // none: the first event aligned with rank 0's
	// SourceSameClock: the process reads rank 0's clock (SameClock) and
	// each of its measurements holds offset 0 within its error: 0.
	SourceSameClock = "same clock"
)

// SameClock reports whether processes of headers a and b read one clock:
// one host's CLOCK_MONOTONIC, which every process of a node shares.
func SameClock(a, b *trace.Header) bool {
	return nodeClock(a) && a.Host == b.Host && a.ClockSrc == b.ClockSrc
}

// nodeClock reports whether the process of header h read a clock the
// other processes of its node read too.
func nodeClock(h *trace.Header) bool { return h.Host != "" && h.ClockSrc == "CLOCK_MONOTONIC" }

// ClockKey is a number that processes reading one clock (SameClock) share,
// and processes reading others do not but by a 64-bit hash's collision;
// −1 for a clock no other process can share.
func ClockKey(h *trace.Header) int64 {
	if !nodeClock(h) {
		return -1
	}
	f := fnv.New64a()
	f.Write([]byte(h.Host))
	return int64(f.Sum64() &^ (1 << 63))
}

// holdsZero reports whether every one of offsets, with its error, holds
// offset 0 (and there is one).
func holdsZero(offsets []trace.ClockOffset) bool {
	for _, o := range offsets {
		if o.ErrorNS <= 0 || o.OffsetNS > o.ErrorNS || o.OffsetNS < -o.ErrorNS {
			return false
		}
	}
	return len(offsets) > 0
}

// maxDrift bounds the drift a pair of measurements may imply (1%): beyond
// it the measurements are wrong (a clock does not drift that much), and only
// the init offset is used.
const maxDrift = 0.01

// OffsetModel maps a process's clock to rank 0's from its offset
// measurements: t + off + round((t − at)·slope). The timeline export uses it
// too, so a trace's corrected times agree everywhere.
type OffsetModel struct {
	source string
	off    int64   // offset at local time at
	at     int64   // local time of the first measurement
	slope  float64 // change of the offset per local ns
	final  int64   // offset at the last measurement (for the report)
	note   string  // why a measurement was not used
}

// Apply returns rank 0's time for local time t.
func (m *OffsetModel) Apply(t int64) int64 {
	if m.slope == 0 {
		return t + m.off
	}
	return t + m.off + roundHalfUp(float64(t-m.at)*m.slope)
}

// Measured reports whether the model comes from offset measurements (not
// from aligning first events, which the caller must do).
func (m *OffsetModel) Measured() bool { return m.source != SourceFirstEvent }

// driftPPM is the process clock's rate error against rank 0 in ppm
// (positive: it runs fast). The offset changes by −p/(1+p) per local ns
// when the clock gains p per true ns.
func (m *OffsetModel) driftPPM() float64 {
	if m.slope == 0 {
		return 0
	}
	return -m.slope / (1 + m.slope) * 1e6
}

func roundHalfUp(x float64) int64 { return int64(math.Floor(x + 0.5)) }

// NewOffsetModel builds the linear model of process rank from its offset
// measurements: the first "init" and the last "finalize" ones. With both,
// the offset is interpolated linearly between them (and extrapolated
// beyond), which removes a constant drift exactly, unless they agree
// within their errors: then the closer measurement's offset is constant;
// with one, it is constant; with none, the caller aligns first events
// (alignTo).
//
// A process that, sameClock says, reads rank 0's clock (SameClock) has
// offset 0 when each of its measurements holds 0 within its error,
// whatever the measurements' own values: a loaded node's ping-pongs, all
// delayed the same way, measured −1.95 ms ± 1.99 ms at init and finalize
// alike, and moved the waits of a pure MPI run on one node by 8–16 ms. A
// measurement beyond its error from 0 (nodes that only share a host name)
// leaves the measured model.
func NewOffsetModel(rank int, offsets []trace.ClockOffset, sameClock bool) OffsetModel {
	if sameClock && holdsZero(offsets) {
		return OffsetModel{source: SourceSameClock}
	}
	var init, fin *trace.ClockOffset
	for i := range offsets {
		o := &offsets[i]
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
		d := fin.OffsetNS - init.OffsetNS
		// Two offsets that differ by less than their measurements' errors
		// (half the best round trip of each) show no drift at all, and
		// the one measured more closely holds for the whole run: a line
		// through both carried the other's error into every event. Two
		// processes of one node, whose init ping-pongs a loaded machine
		// delayed (1.59 ms ± 1.85 against −2 µs ± 3 µs at finalize),
		// had their waits moved by milliseconds that way, and a short
		// run's such pair implied 11 000 ppm.
		if e := init.ErrorNS + fin.ErrorNS; e > 0 && d <= e && d >= -e {
			if fin.ErrorNS < init.ErrorNS {
				return OffsetModel{source: SourceFinalize, off: fin.OffsetNS, at: fin.LocalNS, final: fin.OffsetNS}
			}
			return OffsetModel{source: SourceInit, off: init.OffsetNS, at: init.LocalNS, final: init.OffsetNS}
		}
		s := float64(d) / float64(fin.LocalNS-init.LocalNS)
		if math.Abs(s) > maxDrift {
			// Only a difference beyond the errors says a measurement is
			// wrong.
			return OffsetModel{source: SourceInit, off: init.OffsetNS, at: init.LocalNS, final: init.OffsetNS,
				note: fmt.Sprintf("process %d: the finalize clock offset implies a drift of %.0f ppm; using the init offset only", rank, -s/(1+s)*1e6)}
		}
		return OffsetModel{source: SourceInitFinalize, off: init.OffsetNS, at: init.LocalNS, slope: s, final: fin.OffsetNS}
	case init != nil:
		return OffsetModel{source: SourceInit, off: init.OffsetNS, at: init.LocalNS, final: init.OffsetNS}
	case fin != nil:
		return OffsetModel{source: SourceFinalize, off: fin.OffsetNS, at: fin.LocalNS, final: fin.OffsetNS}
	}
	return OffsetModel{source: SourceFirstEvent}
}

// firstEvent returns the earliest timestamp of p and whether it has events.
func firstEvent(p *trace.Process) (int64, bool) {
	first, seen := int64(0), false
	for th := range p.Events {
		if te := &p.Events[th]; te.N > 0 && (!seen || te.First < first) {
			first, seen = te.First, true
		}
	}
	return first, seen
}
