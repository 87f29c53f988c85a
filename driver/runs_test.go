package driver

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRunsColumn: a runs column gives back every value appended, in
// order, for columns of one value, of values changing at every entry
// (zeros and the ends of int64 among them, whose differences wrap), and
// of runs of every length; a column of one value takes a few bytes.
func TestRunsColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 28))
	pick := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 50000}
	for trial := range 300 {
		var c runs
		var want []int64
		n := rng.IntN(2000)
		for len(want) < n {
			var v int64
			switch rng.IntN(3) {
			case 0:
				v = pick[rng.IntN(len(pick))]
			case 1:
				v = rng.Int64() - math.MaxInt64/2
			default:
				v = int64(rng.IntN(3))
			}
			for range 1 + rng.IntN(1+trial%7*20) {
				c.Append(v)
				want = append(want, v)
			}
		}
		c.Finish()
		if c.Len() != len(want) {
			t.Fatalf("trial %d: Len %d, %d appended", trial, c.Len(), len(want))
		}
		r := c.Values()
		for i, w := range want {
			if got := r.Next(); got != w {
				t.Fatalf("trial %d: value %d is %d, appended %d", trial, i, got, w)
			}
		}
	}
	var c runs
	for range 100000 {
		c.Append(50000)
	}
	c.Finish()
	if b := c.p.Bytes(); b > 64 {
		t.Errorf("100 000 equal values take %d bytes", b)
	}
}
