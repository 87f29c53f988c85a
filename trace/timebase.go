package trace

import "math"

// Timebase maps a process's recorded times to corrected ones without a
// second copy of every time: a linear offset model (the clock-offset
// interpolation)
//
//	t' = t + Off + round((t − Anchor)·Slope)
//
// plus, per thread, an optional column of per-event corrections (what the
// controlled logical clock added), allocated only for threads that got any,
// as int32 unless a correction needs more. A nil *Timebase is the identity.
type Timebase struct {
	Off, Anchor int64
	Slope       float64
	corr32      [][]int32
	corr64      [][]int64
}

// NewTimebase returns the timebase of the offset model (off, at, slope)
// for a process with nthreads thread slots.
func NewTimebase(off, at int64, slope float64, nthreads int) *Timebase {
	return &Timebase{Off: off, Anchor: at, Slope: slope, corr32: make([][]int32, nthreads), corr64: make([][]int64, nthreads)}
}

// Interp applies the offset model to a recorded time.
func (tb *Timebase) Interp(t int64) int64 {
	if tb == nil {
		return t
	}
	if tb.Slope == 0 {
		return t + tb.Off
	}
	return t + tb.Off + int64(math.Floor(float64(t-tb.Anchor)*tb.Slope+0.5))
}

// Correction returns the correction of event idx of thread th.
func (tb *Timebase) Correction(th int, idx int64) int64 {
	if tb == nil || th >= len(tb.corr32) {
		return 0
	}
	if c := tb.corr64[th]; c != nil {
		return c[idx]
	}
	if c := tb.corr32[th]; c != nil {
		return int64(c[idx])
	}
	return 0
}

// SetCorrection sets the correction of event idx of thread th, whose
// thread has n events. Zero on a thread without corrections costs nothing.
func (tb *Timebase) SetCorrection(th int, idx, n, v int64) {
	if c := tb.corr64[th]; c != nil {
		c[idx] = v
		return
	}
	c := tb.corr32[th]
	if c == nil {
		if v == 0 {
			return
		}
		c = make([]int32, n)
		tb.corr32[th] = c
	}
	if v != int64(int32(v)) {
		w := make([]int64, n)
		for i, x := range c {
			w[i] = int64(x)
		}
		tb.corr64[th], tb.corr32[th] = w, nil
		w[idx] = v
		return
	}
	c[idx] = int32(v)
}

// At returns the corrected time of event idx of thread th recorded at t.
func (tb *Timebase) At(th int, idx, t int64) int64 {
	if tb == nil {
		return t
	}
	return tb.Interp(t) + tb.Correction(th, idx)
}

// apply corrects, in place, the times of events first, first+1, … of
// thread th.
func (tb *Timebase) apply(th int, first int64, evs []Event) {
	if tb == nil {
		return
	}
	if tb.Off != 0 || tb.Slope != 0 {
		for i := range evs {
			evs[i].Time = tb.Interp(evs[i].Time)
		}
	}
	if th >= len(tb.corr32) {
		return
	}
	if c := tb.corr64[th]; c != nil {
		c = c[first : first+int64(len(evs))]
		for i := range evs {
			evs[i].Time += c[i]
		}
	} else if c := tb.corr32[th]; c != nil {
		c = c[first : first+int64(len(evs))]
		for i := range evs {
			evs[i].Time += int64(c[i])
		}
	}
}

// Bytes returns the memory the correction columns hold.
func (tb *Timebase) Bytes() int64 {
	if tb == nil {
		return 0
	}
	var n int64
	for th := range tb.corr32 {
		n += 4*int64(len(tb.corr32[th])) + 8*int64(len(tb.corr64[th]))
	}
	return n
}
