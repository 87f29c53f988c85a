package report

import (
	"fmt"
	"strings"
)

// The sentences below are shared by the text and HTML reports so that both
// say the same thing with the same numbers.

// ClockSummary says what clock synchronization did, step by step: which
// step removed the violations (the offset model, then the CLC) and what the
// CLC then changed. A CLC that moved nothing is said so, rather than left
// as "max correction 0 ns" beside vanished violations.
func ClockSummary(cs *ClockSync) string {
	var b strings.Builder
	b.WriteString(cs.Method)
	offset, clc := offsetStep(cs.Method), strings.HasSuffix(cs.Method, "clc")
	if cs.Messages > 0 || cs.ViolationsBefore > 0 {
		fmt.Fprintf(&b, ", %d messages, violations %d recorded", cs.Messages, cs.ViolationsBefore)
		if offset != "" {
			fmt.Fprintf(&b, " → %d after %s", cs.ViolationsInterpolated, offset)
		}
		if clc {
			fmt.Fprintf(&b, " → %d after the CLC", cs.ViolationsAfter)
		}
	}
	if clc {
		if cs.MaxCorrectionNS == 0 {
			b.WriteString("; the CLC then moved no event")
		} else {
			fmt.Fprintf(&b, "; the CLC then moved events forward by up to %s (mean %s over all events)", Dur(cs.MaxCorrectionNS), Dur(cs.MeanCorrectionNS))
		}
	}
	if cs.UnmatchedSends+cs.UnmatchedReceives > 0 {
		fmt.Fprintf(&b, ", unmatched %d sends / %d receives", cs.UnmatchedSends, cs.UnmatchedReceives)
	}
	return b.String()
}

// offsetStep names the offset model of a ClockSync.Method.
func offsetStep(method string) string {
	m := strings.TrimSuffix(strings.TrimSuffix(method, "clc"), "+")
	switch m {
	case "interpolation":
		return "the offset interpolation"
	case "alignment":
		return "the first-event alignment"
	case "interpolation+alignment":
		return "the offset interpolation (first-event alignment where unmeasured)"
	}
	return ""
}

// RawLine lists the raw components inside the breakdown's categories that
// let other conventions be recomputed (sums over threads).
func RawLine(forkJoin, idleMPI, idleMPISerial int64) string {
	return fmt.Sprintf("fork/join %s; idle while another thread is in MPI %s (serial %s)",
		Dur(forkJoin), Dur(idleMPI), Dur(idleMPISerial))
}

// FlushLine says how long the tracer wrote its buffers out, and where the
// time fell, of threadTime ns of thread time over processes processes.
func FlushLine(f *BufferFlushes, threadTime int64, processes int) string {
	where := "taken out of it, as instrumentation"
	if f.KeptInWork {
		where = "kept in it: --no-instrumentation-correction"
	}
	share := ""
	if threadTime > 0 {
		pct := Pct(float64(f.NS) / float64(threadTime))
		if pct == "0.0%" {
			pct = "< 0.1%"
		}
		share = " = " + pct + " of thread time"
	}
	most := ""
	if f.Processes > 1 {
		most = fmt.Sprintf("; rank %d flushed longest, %s", f.MaxRank, Dur(f.MaxNS))
	}
	avoid := "a larger trace buffer"
	if f.Setting != "" {
		avoid = "a larger " + f.Setting
	}
	return fmt.Sprintf("trace buffer flushes: %d on %d of %d processes, %s%s: %s in work (%s), %s inside MPI calls, %s in overhead, %s idle%s. "+
		"That is the tracer's time, not the program's, and so are the waits of other threads behind it; %s avoids them",
		f.Count, f.Processes, processes, Dur(f.NS), share, Dur(f.WorkNS), where, Dur(f.MPINS), Dur(f.OverheadNS), Dur(f.IdleNS), most, avoid)
}

// AdviceLine is the advice with the numbers it was decided from.
func AdviceLine(a *Advice) string {
	return fmt.Sprintf("advice (%s): %s [non-work: serial %s, waiting for MPI %s, imbalance %s, starvation %s, overhead %s, in MPI calls %s]",
		a.Dominant, a.Text, Dur(a.SerialNS), Dur(a.MPIWaitNS), Dur(a.ImbalanceNS), Dur(a.StarvationNS), Dur(a.OverheadNS), Dur(a.MPICallsNS))
}
