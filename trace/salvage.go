package trace

import "fmt"

// Salvage bookkeeping. A salvaging load (LoadOptions.Salvage) keeps what it
// can of a damaged file, and says so: everything it drops or tolerates
// becomes one warning, and the process is marked partial (Process.Partial,
// the report's trace.partial). The checks are small functions over one
// decoded chunk at a time, so any loader (whole-process or streaming) can
// call them:
//
//	cut := TimeOrderCut(c.Events, prev)   // first event going back in time
//	if cut < len(c.Events) {
//		if !salvage { return TimeOrderError(file, c, cut, before, prev) }
//		log.Cut(c.Thread, TimeOrderError(file, c, cut, before, prev), len(c.Events)-cut)
//		c.Events = c.Events[:cut]
//	}
//	if log.IsCut(c.Thread) { log.Drop(c.Thread, len(c.Events)) } // later chunks
//	…
//	mismatches := CountMismatches(end, present)   // at the end frame
//	warnings := log.Warnings()

// TimeOrderCut returns the index of the first event of evs that is earlier
// than the event before it (prev is the time of the thread's event before
// evs, math.MinInt64 if none), or len(evs) when evs is in time order.
func TimeOrderCut(evs []Event, prev int64) int {
	for i := range evs {
		if evs[i].Time < prev {
			return i
		}
		prev = evs[i].Time
	}
	return len(evs)
}

// TimeOrderError is the error for event i of chunk c going back in time;
// before is the number of events of c's thread before c, prev the time of
// the event preceding event i.
func TimeOrderError(file string, c *Chunk, i int, before int64, prev int64) error {
	if i > 0 {
		prev = c.Events[i-1].Time
	}
	return &FormatError{File: file, Offset: c.Offset + int64(i),
		Err: fmt.Errorf("thread %d: event %d (%s) at %d ns goes back in time (previous event at %d ns)",
			c.Thread, before+int64(i), c.Events[i].Kind, c.Events[i].Time, prev)}
}

// CountMismatch is a thread whose end-frame event count disagrees with the
// events the file holds.
type CountMismatch struct {
	Thread           int
	Claimed, Present int64
}

// CountMismatches compares the end frame's per-thread counts with present
// (events loaded per thread index). A thread missing from either side counts
// as 0 there.
func CountMismatches(end *End, present []int64) []CountMismatch {
	var out []CountMismatch
	for t := 0; t < max(len(end.Events), len(present)); t++ {
		var claimed, have int64
		if t < len(end.Events) {
			claimed = end.Events[t]
		}
		if t < len(present) {
			have = present[t]
		}
		if claimed != have {
			out = append(out, CountMismatch{Thread: t, Claimed: claimed, Present: have})
		}
	}
	return out
}

// SalvageLog collects what a salvaging load of one file did.
type SalvageLog struct {
	File  string
	notes []string
	cuts  map[int]*threadCut
	order []int // cut threads in the order they were cut
}

type threadCut struct {
	err     error
	dropped int64
}

// Note records something the load tolerated or dropped.
func (s *SalvageLog) Note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// Cut marks thread cut at the event err describes, dropping n events there.
func (s *SalvageLog) Cut(thread int, err error, n int) {
	if s.cuts == nil {
		s.cuts = map[int]*threadCut{}
	}
	if _, ok := s.cuts[thread]; !ok {
		s.cuts[thread] = &threadCut{err: err}
		s.order = append(s.order, thread)
	}
	s.cuts[thread].dropped += int64(n)
}

// IsCut reports whether thread was cut: its later events are dropped.
func (s *SalvageLog) IsCut(thread int) bool { return s.cuts[thread] != nil }

// Drop counts n more dropped events of a cut thread.
func (s *SalvageLog) Drop(thread int, n int) {
	if c := s.cuts[thread]; c != nil {
		c.dropped += int64(n)
	}
}

// Partial reports whether anything was dropped or tolerated.
func (s *SalvageLog) Partial() bool { return len(s.notes) > 0 || len(s.cuts) > 0 }

// Warnings returns one message per note and per cut thread.
func (s *SalvageLog) Warnings() []string {
	out := append([]string(nil), s.notes...)
	for _, t := range s.order {
		c := s.cuts[t]
		out = append(out, fmt.Sprintf("salvage: thread %d cut: %v; dropped %d events of thread %d from there", t, c.err, c.dropped, t))
	}
	return out
}
