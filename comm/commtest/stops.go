package commtest

import (
	"errors"
	"testing"
)

// ErrStop is the error Stops' checks fail with.
var ErrStop = errors.New("over the limit")

// Stops drives a phase's collective checks (a memory limit's, say) in a
// test: each rank's check counts its calls and fails the StopAt'th with
// ErrStop (none when StopAt is 0), and Verify asserts that every rank made
// the same checks and stopped there, so that a collective check can
// neither hang nor pair with another rank's different one.
type Stops struct {
	StopAt int
	Calls  []int   // checks made, by rank
	Errs   []error // what the phase returned, by rank
}

// NewStops returns Stops for ranks ranks that fail check number stopAt.
func NewStops(ranks, stopAt int) *Stops {
	return &Stops{StopAt: stopAt, Calls: make([]int, ranks), Errs: make([]error, ranks)}
}

// Check returns rank's check.
func (s *Stops) Check(rank int) func() error {
	return func() error {
		s.Calls[rank]++
		if s.Calls[rank] == s.StopAt {
			return ErrStop
		}
		return nil
	}
}

// Verify asserts that each rank made points checks and returned no error
// when StopAt is 0, and otherwise made StopAt checks and returned ErrStop.
func (s *Stops) Verify(t *testing.T, what string, points int) {
	t.Helper()
	for r := range s.Calls {
		want := s.StopAt
		if s.StopAt == 0 {
			want = points
		}
		if s.Calls[r] != want || (s.StopAt > 0) != errors.Is(s.Errs[r], ErrStop) || s.StopAt == 0 && s.Errs[r] != nil {
			t.Errorf("%s, stop at check %d: rank %d made %d checks (want %d), returned %v", what, s.StopAt, r, s.Calls[r], want, s.Errs[r])
		}
	}
}
