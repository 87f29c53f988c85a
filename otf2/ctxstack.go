package otf2

import "fmt"

// Calling contexts. With unwinding (SCOREP_ENABLE_UNWINDING, Score-P 3.0
// and later) Score-P records an instrumented region's entry and exit as
// CallingContextEnter and CallingContextLeave (OTF2 2.0) instead of Enter
// and Leave: each names a node of the global calling-context tree, whose
// path to its root gives the region and the unwound frames around it
// (main, the user functions, runtime frames: regions of the SAMPLING
// paradigm). OTF2's unwind distance d says that the first d−1 nodes of the
// path (from the node up) were entered since the previous calling-context
// event, the next one is still running, and everything the previous path
// had below that node was left; a leave keeps the whole path and leaves
// its node. OTF2's own reader, without calling-context callbacks, replays
// the node's region alone as an Enter or Leave; Scalasca's replays every
// frame. ctxStack does what Scalasca does: it keeps the regions entered,
// outermost first, and turns each event into the Leave and Enter records
// that make them the event's path, so that the path's regions are code
// regions around the instrumented ones (the call path of an MPI call) and
// the MPI and OpenMP regions convert as from Enter and Leave.
//
// Frames are matched by region, not by node: Score-P makes a new node for
// the same frame at another instruction (a region's enter and leave, a
// caller at another line), so a sibling node of the same region is the
// same frame. Samples (CallingContextSample) are not replayed: their
// frames' times are guesses, and an event's path corrects the frames a
// sample would have changed.
type ctxStack struct {
	c      *conv
	ld     *LocalDefs
	count  bool // report problems (the first pass)
	fn     func(*Event, int64) error
	stack  []uint32 // regions entered, outermost first
	path   []uint32 // scratch: the event's path, innermost first
	last   int64    // the location's last record's time
	lastEv Event
	ev     Event // scratch: the Enter or Leave made (no allocation a record)
}

// globalRegion in A[1] of an Enter or Leave made from a calling context
// marks A[0] as a global region id (no mapping table applies).
const globalRegion = 1 << 40

// regionRef returns the global region id of an Enter or Leave record.
func regionRef(ld *LocalDefs, e *Event) uint32 {
	if e.A[1] == globalRegion {
		return uint32(e.A[0])
	}
	return uint32(ld.Map(mapRegion, e.A[0]))
}

// maxContextDepth bounds a calling context's path: a longer parent chain
// is a loop (bad input).
const maxContextDepth = 1 << 12

// event replays a CallingContextEnter or CallingContextLeave.
func (s *ctxStack) event(e *Event, now int64, file string) error {
	id := uint32(s.ld.Map(mapCallingContext, e.A[0]))
	if id == undefined32 {
		// OTF2_UNDEFINED_CALLING_CONTEXT names no node: no path (a leave
		// of it would leave the node below the root)
		if s.count {
			s.c.undefContext.add("%s: offset %d: %s of undefined calling context %d skipped", file, e.Offset, EventName(e.Type), id)
		}
		return nil
	}
	s.path = s.path[:0]
	for n := id; n != undefined32; {
		cc := s.c.a.Defs.CallingContext(n)
		if cc == nil {
			if s.count {
				s.c.undefContext.add("%s: offset %d: %s of undefined calling context %d skipped", file, e.Offset, EventName(e.Type), n)
			}
			return nil
		}
		if len(s.path) == maxContextDepth {
			if s.count {
				s.c.ctxLoop.add("%s: offset %d: %s: calling context %d has a parent chain of more than %d nodes; skipped", file, e.Offset, EventName(e.Type), id, maxContextDepth)
			}
			return nil
		}
		s.path = append(s.path, cc.Region)
		n = cc.Parent
	}
	depth := len(s.path)
	keep := depth // a leave keeps its whole path
	if e.Type == EvCallingContextEnter {
		// d−1 new frames (at least the node itself); an unwind distance
		// past the root means a whole new path.
		d := max(e.A[1], 1)
		keep = depth - int(min(d-1, uint64(depth)))
		if keep == depth {
			keep = depth - 1 // the entered node is new
		}
	}
	// The frames the event keeps are the path's outer part, outermost
	// first: leave what differs from it (and everything above it), then
	// enter what is missing and the new frames.
	m := 0
	for m < len(s.stack) && m < keep && s.stack[m] == s.path[depth-1-m] {
		m++
	}
	if err := s.unwind(m); err != nil {
		return err
	}
	for i := depth - 1 - m; i >= 0; i-- {
		if err := s.emit(EvEnter, s.path[i], e, now); err != nil {
			return err
		}
		s.stack = append(s.stack, s.path[i])
	}
	if e.Type == EvCallingContextLeave {
		return s.unwind(depth - 1)
	}
	return nil
}

// unwind leaves the regions above the first n.
func (s *ctxStack) unwind(n int) error {
	for len(s.stack) > n {
		r := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		if err := s.emit(EvLeave, r, &s.lastEv, s.last); err != nil {
			return err
		}
	}
	return nil
}

func (s *ctxStack) emit(t uint8, region uint32, at *Event, now int64) error {
	if r := s.c.a.Defs.Region(region); r != nil && r.Paradigm == paradigmSampling && r.File == "" {
		// An unwound frame without source is the runtime's or a
		// library's (libgomp's GOMP_parallel, OPARI2's POMP2_*, libc),
		// named by the nearest symbol Score-P found, often another
		// function's: no code of the program to charge a delay to.
		return nil
	}
	s.ev = Event{Type: t, Time: at.Time, Offset: at.Offset}
	s.ev.A[0], s.ev.A[1] = uint64(region), globalRegion
	if err := s.fn(&s.ev, now); err != nil {
		return fmt.Errorf("%s of a calling context: %w", EventName(t), err)
	}
	return nil
}
