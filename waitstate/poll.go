package waitstate

import (
	"math"
	"slices"
	"sort"

	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// Polled requests (docs/report-schema.md, "polled waits").
//
// A request a thread polls with Test-family calls (MPI_Test, MPI_Testany,
// MPI_Testsome, MPI_Testall) and that a later call completes carries an
// mpi_polled event in the first of those calls that tested it and did not
// complete it. Its wait (a receive's Late Sender, a nonblocking
// collective's class pattern) is the time the thread spent inside its
// Test-family calls from that call's enter until the latest predecessor's
// enter (the sender's, the last member's start), each call's part
// charged to that call, not the computation between the calls; the call
// that completes the request waits as before, from its own enter. The
// receive counts as one instance, at the call that completes it, which
// also holds, for the delay costs, the whole wait when it is charged to
// this request (not when it completes several and is charged to
// another's: that call's wait and cause stay its own, and the polling
// calls' part has no delay costs).

// pollRef is a polled request in flight: the thread that polled it and
// the first of its Test-family calls that did.
type pollRef struct {
	th    int
	first int32
	ev    int64 // the mpi_polled event's index in the thread
}

// pollState is a callRecorder's, on a process whose trace has mpi_polled
// events.
type pollState struct {
	// Per thread: its Test-family calls since the oldest polled request
	// of the thread in flight (only its last call when none is), as runs
	// of consecutive calls (first, last): a loop that only tests is one
	// run, so a request polled for the whole run (a termination message
	// tested once an iteration) holds a run an iteration, not a call; and
	// how many are in flight.
	tests [][]int32
	pend  []int32
	reqs  map[int64]pollRef
}

func newPollState(T int) *pollState {
	return &pollState{tests: make([][]int32, T), pend: make([]int32, T), reqs: map[int64]pollRef{}}
}

// enter notes thread th's outermost call k of func fn.
func (s *pollState) enter(tb *trace.Tables, th int, k int32, fn int64) {
	if !trace.IsMPITest(tb.String(fn)) {
		return
	}
	ts := s.tests[th]
	if s.pend[th] == 0 {
		ts = ts[:0]
	}
	if n := len(ts); n > 0 && ts[n-1] == k-1 {
		ts[n-1] = k
	} else {
		ts = append(ts, k, k)
	}
	s.tests[th] = ts
}

// polled notes request req's mpi_polled (event idx) in thread th's open call k; one
// of a request already polled is ignored. One outside a Test-family call
// ends the polling of a request in flight: the collector writes it in the
// MPI_Request_free that frees a polled request, which then completes
// unobserved (docs/trace-format.md); kept, the request held its thread's
// list of Test-family calls for the rest of the run.
func (s *pollState) polled(th int, k int32, req int64, idx int64) {
	ts := s.tests[th]
	if req == 0 {
		return
	}
	if len(ts) == 0 || ts[len(ts)-1] != k {
		if p, ok := s.reqs[req]; ok {
			delete(s.reqs, req)
			s.pend[p.th]--
		}
		return
	}
	if _, ok := s.reqs[req]; ok {
		return
	}
	s.reqs[req] = pollRef{th, k, idx}
	s.pend[th]++
}

// done notes the completion of request req in call k and returns the
// Test-family calls that polled it before k, as runs (first, last call),
// nil when it was not polled, and where it was polled.
func (s *pollState) done(req int64, k int32) ([]int32, pollRef) {
	p, ok := s.reqs[req]
	if !ok {
		return nil, p
	}
	delete(s.reqs, req)
	s.pend[p.th]--
	ts := s.tests[p.th]
	// The run holding the first polling call: runs are in call order.
	j := 2 * sort.Search(len(ts)/2, func(j int) bool { return ts[2*j+1] >= p.first })
	var runs []int32
	for ; j+1 < len(ts); j += 2 {
		lo, hi := max(ts[j], p.first), min(ts[j+1], k-1)
		if lo >= k {
			break
		}
		if lo <= hi {
			runs = append(runs, lo, hi)
		}
	}
	return runs, p
}

// pollWaits calls book(k, w) for each of node v's polling calls k (a.polls)
// with a wait w > 0 (its time inside until lv) and returns whether there
// was one.
func (a *Analysis) pollWaits(cs *calls, v int32, lv int64, book func(k int32, w int64)) bool {
	runs := a.polls[v]
	if len(runs) == 0 || lv == math.MinInt64 {
		return false
	}
	any := false
	for j := 0; j+1 < len(runs); j += 2 {
		for k := runs[j]; k <= runs[j+1]; k++ {
			b := cs.enterAt(k)
			if b >= lv {
				return any
			}
			if w := min(cs.exitAt(k), lv) - b; w > 0 {
				book(k, w)
				any = true
			}
		}
	}
	return any
}

// addPollRef notes, for the critical path, that local process i's node v
// completed a request whose mpi_polled is event ev of thread th.
func (a *Analysis) addPollRef(i int, th int, ev int64, v int32) {
	if a.pollRefs == nil {
		a.pollRefs = make([][]sim.PollRef, len(a.procs))
	}
	a.pollRefs[i] = append(a.pollRefs[i], sim.PollRef{Thread: int32(th), Event: ev,
		DoneThread: a.m.ThreadOf(v), DoneEvent: a.m.EventOf(v)})
}

// PollRefs returns local process i's polled requests (their mpi_polled
// events and the events that completed them), sorted by thread and event,
// for the critical path (sim.FragPass.Polls); nil when it has none.
func (a *Analysis) PollRefs(i int) []sim.PollRef {
	if i >= len(a.pollRefs) {
		return nil
	}
	l := a.pollRefs[i]
	a.pollRefs[i] = nil
	slices.SortFunc(l, func(x, y sim.PollRef) int { return sim.CompareEventRefs(x.EventRef(), y.EventRef()) })
	return l
}
