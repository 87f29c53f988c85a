package clocksync

// Summary is the whole trace's clock synchronization, computed on rank 0
// from every rank's ProcessStats rows (gathered in process order).
type Summary struct {
	// Method is "none", or how offsets were modelled followed by "+clc":
	// "interpolation+clc" (offset measurements), "alignment+clc" (first
	// events aligned), "interpolation+alignment+clc" (some of each).
	Method                 string
	Options                Options
	ViolationsBefore       int64
	ViolationsInterpolated int64
	ViolationsAfter        int64
	MaxCorrectionNS        int64
	MeanCorrectionNS       int64 // over all events
	PerProcess             []ProcessStats
}

// Summarize combines the rows of all processes (method and options as in
// every rank's Local).
func Summarize(method string, o Options, rows []ProcessStats) *Summary {
	s := &Summary{Method: method, Options: o, PerProcess: rows}
	var sum, events int64
	measured, aligned := false, false
	for i := range rows {
		r := &rows[i]
		s.ViolationsBefore += r.ViolationsBefore
		s.ViolationsInterpolated += r.ViolationsInterpolated
		s.ViolationsAfter += r.ViolationsAfter
		s.MaxCorrectionNS = max(s.MaxCorrectionNS, r.MaxCorrectionNS)
		sum += r.SumCorrectionNS
		events += r.Events
		switch r.OffsetSource {
		case SourceFirstEvent:
			aligned = true
		case SourceInit, SourceFinalize, SourceInitFinalize:
			measured = true
		}
	}
	if events > 0 {
		s.MeanCorrectionNS = sum / events
	}
	if method == MethodCLC {
		switch {
		case measured && aligned:
			s.Method = "interpolation+alignment+clc"
		case aligned:
			s.Method = "alignment+clc"
		default:
			s.Method = "interpolation+clc"
		}
	}
	return s
}
