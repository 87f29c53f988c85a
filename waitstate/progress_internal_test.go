package waitstate

import (
	"math"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A progress point and its member's rank travel as one value whose
// maximum is the latest point, on a tie the lowest rank: exact over a
// trace's span, coarsened (never wrapped, never negative) over the
// span of corrupt clocks.
func TestProgScale(t *testing.T) {
	s := newProgScale(true, -5, 1_000_000, 3)
	if s.sh != 0 || s.rb != 2 {
		t.Fatalf("scale %+v, want no shift and 2 rank bits", s)
	}
	for _, at := range []int64{-5, 0, 7, 1_000_000} {
		for r := int32(0); r <= 3; r++ {
			if got := s.dec(s.enc(at, r)); got != (progVal{at, r}) {
				t.Errorf("%d of rank %d: back as %+v", at, r, got)
			}
		}
	}
	if s.enc(8, 3) <= s.enc(7, 0) || s.enc(7, 0) <= s.enc(7, 1) {
		t.Errorf("the later point, on a tie the lower rank, is not the larger value")
	}
	for _, c := range []struct{ lo, hi, top int64 }{
		{math.MinInt64, math.MaxInt64, trace.MaxRanks - 1},
		{math.MinInt64 + 1, 0, 1},
		{0, math.MaxInt64, 0},
	} {
		s := newProgScale(true, c.lo, c.hi, c.top)
		lo, hi := s.enc(c.lo, int32(c.top)), s.enc(c.hi, 0)
		if lo < 0 || hi < lo || hi == math.MaxInt64 {
			t.Errorf("%+v: values %d and %d, want 0 ≤ lo ≤ hi < MaxInt64", c, lo, hi)
		}
		for _, at := range []int64{c.lo, c.hi, c.lo/2 + c.hi/2} {
			p := s.dec(s.enc(at, 0))
			if p.rank != 0 || p.at > at || uint64(at)-uint64(p.at) >= 1<<s.sh {
				t.Errorf("%+v: %d back as %+v (shift %d)", c, at, p, s.sh)
			}
		}
	}
	// No point at all: the span is empty.
	if s := newProgScale(true, math.MaxInt64, math.MinInt64+1, 0); s.sh != 0 {
		t.Errorf("no points: scale %+v", s)
	}
}
