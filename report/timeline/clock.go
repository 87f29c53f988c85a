package timeline

import (
	"github.com/ptrace-dev/ptrace/clocksync"

	"github.com/ptrace-dev/ptrace/trace"
)

// ProcessClock is what a ClockModel knows of one process when asked for
// its mapping: its rank, its clock-offset measurements against rank 0 and
// the range of its local timestamps.
type ProcessClock struct {
	Rank            int
	Offsets         []trace.ClockOffset
	FirstNS, LastNS int64 // local time of the first and last event
	// SameClock: the process reads rank 0's clock (clocksync.SameClock).
	SameClock bool
}

// Mapping turns one process's local timestamps into reference time. It
// must be non-decreasing in local time for each thread, so per-thread
// event order survives the correction.
type Mapping interface {
	Map(thread int, local int64) int64
}

// ClockModel gives each process its Mapping. Interpolation is the default;
// a replay-based model (clocksync's controlled logical clock, whose
// corrections differ per event) plugs in here by implementing Mapping with
// per-thread piecewise-linear corrections.
type ClockModel interface {
	Process(pc ProcessClock) (Mapping, error)
}

// Interpolation is the linear offset interpolation of DESIGN step 3a: the
// offset to rank 0 is interpolated between the init and finalize
// measurements (constant with one measurement). A process without any
// measurement keeps its timestamps (AlignStarts changes that).
type Interpolation struct {
	// AlignStarts shifts processes without measurements so that their
	// first event coincides with ReferenceStartNS (DESIGN's fallback
	// "else align starts").
	AlignStarts      bool
	ReferenceStartNS int64
}

// offsetMap applies clocksync's offset model (the same as the analysis's
// first step) plus a constant shift for processes aligned by first event.
type offsetMap struct {
	m     clocksync.OffsetModel
	shift int64
}

func (o offsetMap) Map(_ int, t int64) int64 { return o.m.Apply(t) + o.shift }

// Process implements ClockModel.
func (ip Interpolation) Process(pc ProcessClock) (Mapping, error) {
	m := clocksync.NewOffsetModel(pc.Rank, pc.Offsets, pc.SameClock)
	if !m.Measured() && ip.AlignStarts {
		return offsetMap{m: m, shift: ip.ReferenceStartNS - pc.FirstNS}, nil
	}
	return offsetMap{m: m}, nil
}
