package waitstate

import (
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// The polling calls of a request come back as runs of consecutive calls
// from the one holding its mpi_polled to the one before its completion;
// the thread keeps its Test-family calls as runs while a request is in
// flight, so a request tested once an iteration for a whole run holds a
// run an iteration, not every call.
func TestPollStateRuns(t *testing.T) {
	const test, other = 1, 2
	s := newPollState(1)
	tb := &trace.Tables{Strings: []string{"", "MPI_Test", "MPI_Send"}} // test, other
	calls := []struct {
		k  int32
		fn int64
	}{{1, test}, {2, test}, {3, test}, {4, test}, {5, other}, {6, test}, {7, test}, {8, other}, {9, test}, {10, test}, {11, test}}
	for _, c := range calls {
		s.enter(tb, 0, c.k, c.fn)
		if c.k == 2 {
			s.polled(0, 2, 77, 100)
		}
	}
	if got, want := s.tests[0], []int32{2, 4, 6, 7, 9, 11}; !slices.Equal(got, want) {
		t.Fatalf("the thread's test calls %v, want runs %v (from the last call before the request was polled)", got, want)
	}
	runs, p := s.done(77, 11)
	if want := []int32{2, 4, 6, 7, 9, 10}; !slices.Equal(runs, want) || p.first != 2 || p.ev != 100 {
		t.Errorf("done: runs %v, ref %+v; want %v from call 2, event 100", runs, p, want)
	}
	// Nothing in flight: the next call starts the list anew.
	s.enter(tb, 0, 12, test)
	if got := s.tests[0]; !slices.Equal(got, []int32{12, 12}) {
		t.Errorf("after the completion: %v, want [12 12]", got)
	}
	// A request polled in a later call of a run, completed in another run.
	s.enter(tb, 0, 13, test)
	s.polled(0, 13, 78, 200)
	s.enter(tb, 0, 14, other)
	s.enter(tb, 0, 15, test)
	if runs, _ := s.done(78, 15); !slices.Equal(runs, []int32{13, 13}) {
		t.Errorf("runs %v, want [13 13]", runs)
	}
	if runs, _ := s.done(79, 16); runs != nil {
		t.Errorf("a request never polled: runs %v, want none", runs)
	}
}

// A polled request freed (MPI_Request_free: the collector writes its
// mpi_polled again, in that call) is in flight no more: no completion
// ever takes it, and kept it held the thread's Test-family calls, a run
// each, for the rest of the run. Another request polled before it and
// completed after it keeps its own runs.
func TestPollStateFreed(t *testing.T) {
	const test, free = 1, 2
	s := newPollState(1)
	tb := &trace.Tables{Strings: []string{"", "MPI_Test", "MPI_Request_free", "MPI_Send"}}
	s.enter(tb, 0, 1, test)
	s.polled(0, 1, 77, 10)
	s.enter(tb, 0, 2, test)
	s.polled(0, 2, 78, 20)
	s.enter(tb, 0, 3, free)
	s.polled(0, 3, 78, 30) // freed
	if _, ok := s.reqs[78]; ok || s.pend[0] != 1 {
		t.Fatalf("after the free: requests %v, in flight %d; want 77 alone", s.reqs, s.pend[0])
	}
	s.enter(tb, 0, 4, test)
	if runs, p := s.done(77, 5); !slices.Equal(runs, []int32{1, 2, 4, 4}) || p.first != 1 {
		t.Errorf("77: runs %v from %d, want [1 2 4 4] from 1", runs, p.first)
	}
	if runs, _ := s.done(78, 5); runs != nil {
		t.Errorf("the freed request completes with runs %v", runs)
	}
	for k := int32(6); k < 100; k++ {
		s.enter(tb, 0, k, test)
		s.enter(tb, 0, k, 3)
	}
	if s.pend[0] != 0 || len(s.tests[0]) > 2 {
		t.Errorf("nothing in flight: %d pending, %d test runs held", s.pend[0], len(s.tests[0])/2)
	}
}
