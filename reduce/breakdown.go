package reduce

// Times is a breakdown summed over threads (and processes).
type Times struct {
	ThreadTime     int64
	Work           int64
	MPI            int64
	Overhead       int64 // in and outside parallel regions
	Idle           int64 // in and outside parallel regions
	IdleSerial     int64 // idleness outside parallel regions
	OverheadSerial int64
	// Instrumentation is the recording time the instrumentation correction
	// took out of Work.
	Instrumentation int64
}

// Add accumulates o into t.
func (t *Times) Add(o Times) {
	t.ThreadTime += o.ThreadTime
	t.Work += o.Work
	t.MPI += o.MPI
	t.Overhead += o.Overhead
	t.Idle += o.Idle
	t.IdleSerial += o.IdleSerial
	t.OverheadSerial += o.OverheadSerial
	t.Instrumentation += o.Instrumentation
}

// Thresholds decide when idleness or overhead count as high in Tallent's
// table (seed pot-dependent-task-time-breakdown.txt, Table 1): a share of
// the accounted thread time.
type Thresholds struct {
	Idleness float64
	Overhead float64
}

// DefaultThresholds: idleness is high above 20% of thread time, overhead
// above 10%. Overhead gets the lower bar because, unlike idleness, it is
// pure runtime cost that no amount of extra parallelism hides.
func DefaultThresholds() Thresholds { return Thresholds{Idleness: 0.20, Overhead: 0.10} }

// Class is Tallent's reading of a breakdown.
type Class struct {
	Code           string // "LL", "LH", "HL", "HH" (idleness, overhead)
	Interpretation string
}

func interpretation(code string) string {
	switch code {
	case "LH":
		return "coarsen concurrency granularity: overheads dominate"
	case "HL":
		return "refine concurrency granularity: threads starve for ready tasks"
	case "HH":
		return "switch parallelization strategies"
	}
	return "effectively parallel; focus on serial performance"
}

// Classify applies Tallent's table to a breakdown. MPI time is neither
// idleness nor overhead: it is judged by the POP MPI efficiencies.
func Classify(t Times, th Thresholds) Class {
	if t.ThreadTime <= 0 {
		return Class{Code: "LL", Interpretation: interpretation("LL")}
	}
	code := []byte("LL")
	if float64(t.Idle)/float64(t.ThreadTime) > th.Idleness {
		code[0] = 'H'
	}
	if float64(t.Overhead)/float64(t.ThreadTime) > th.Overhead {
		code[1] = 'H'
	}
	return Class{Code: string(code), Interpretation: interpretation(string(code))}
}
