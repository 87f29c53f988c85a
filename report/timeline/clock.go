package timeline

import (
	"fmt"
	"math"

	"github.com/ptrace-dev/ptrace/trace"
)

// ProcessClock is what a ClockModel knows of one process when asked for
// its mapping: its rank, its clock-offset measurements against rank 0 and
// the range of its local timestamps.
type ProcessClock struct {
	Rank            int
	Offsets         []trace.ClockOffset
	FirstNS, LastNS int64 // local time of the first and last event
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

// linear maps t to t + o0 + (o1−o0)·(t−l0)/(l1−l0).
type linear struct {
	l0, o0 int64
	slope  float64 // (o1−o0)/(l1−l0)
}

func (m linear) Map(_ int, t int64) int64 {
	if m.slope == 0 {
		return t + m.o0
	}
	return t + m.o0 + int64(math.Round(m.slope*float64(t-m.l0)))
}

// Process implements ClockModel.
func (ip Interpolation) Process(pc ProcessClock) (Mapping, error) {
	var init, fin *trace.ClockOffset
	for i := range pc.Offsets {
		o := &pc.Offsets[i]
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
	case init != nil && fin != nil && fin.LocalNS != init.LocalNS:
		s := float64(fin.OffsetNS-init.OffsetNS) / float64(fin.LocalNS-init.LocalNS)
		if s <= -1 {
			return nil, fmt.Errorf("rank %d: clock offsets imply the clock runs backwards (slope %g)", pc.Rank, s)
		}
		return linear{l0: init.LocalNS, o0: init.OffsetNS, slope: s}, nil
	case init != nil:
		return linear{o0: init.OffsetNS}, nil
	case fin != nil:
		return linear{o0: fin.OffsetNS}, nil
	case ip.AlignStarts:
		return linear{o0: ip.ReferenceStartNS - pc.FirstNS}, nil
	}
	return linear{}, nil
}
