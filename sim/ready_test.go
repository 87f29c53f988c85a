package sim

import (
	"math"
	"slices"
	"testing"
)

// TestReadySeriesBins: time spread over bins as the intervals cover them,
// cut to the series; and times of a damaged trace that span more than
// 2^63 ns (a start far below zero, an event far above) fill the bins
// they reach instead of indexing a negative bin (a panic until
// 2026-11-26).
func TestReadySeriesBins(t *testing.T) {
	r := NewReadySeries(100, 10, 4)
	r.add(90, 125, 2)   // [100, 125): bins 0, 1 and half of 2
	r.add(135, 1000, 1) // half of bin 3, then past the end
	if want := []int64{20, 20, 10, 5}; !slices.Equal(r.Values, want) {
		t.Errorf("values %v, want %v", r.Values, want)
	}
	far := NewReadySeries(math.MinInt64+5, 1<<62, 3)
	far.add(math.MinInt64, math.MaxInt64, 1)
	if want := []int64{1 << 62, 1 << 62, 1 << 62}; !slices.Equal(far.Values, want) {
		t.Errorf("values %v, want %v", far.Values, want)
	}
	far.add(math.MaxInt64-10, math.MaxInt64, 1) // past the last bin
}
