package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A kidStack gives back what was pushed, the latest first, whatever the
// differences between one value and the next (a byte to five, either
// sign), as drain reads a list; packed, a producer's children's last
// fragments a few nodes apart take a byte each.
func TestKidStack(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 50 {
		var k kidStack
		var pushed []int32
		v := int32(r.IntN(1 << 20))
		for range r.IntN(5000) {
			switch r.IntN(8) {
			case 0:
				v = r.Int32N(math.MaxInt32)
			case 1:
				v = int32(r.IntN(3))
			default:
				v = max(0, v+int32(r.IntN(9))-2)
			}
			k.push(v)
			pushed = append(pushed, v)
		}
		var got []int32
		k.each(func(v int32) { got = append(got, v) })
		slices.Reverse(pushed)
		if !slices.Equal(got, pushed) {
			t.Fatalf("trial %d: %d values back, differing from the %d pushed (latest first)", trial, len(got), len(pushed))
		}
	}
	var k kidStack
	for v := int32(150_000); v < 150_000+3*4096; v += 3 {
		k.push(v)
	}
	if n := len(k.b); n > 4096+2 {
		t.Errorf("4096 values 3 apart took %d bytes, want about 4096", n)
	}
}
