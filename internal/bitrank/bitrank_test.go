package bitrank

import (
	"math/rand/v2"
	"testing"
)

// Rank and Before count the members before each position as a walk over
// a plain list of them does, across word boundaries and past the end.
func TestRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 300} {
		member := make([]bool, n)
		for v := range member {
			member[v] = rng.IntN(3) == 0
		}
		s := Make(n, func(w int) uint64 {
			var x uint64
			for v := w * 64; v < min(n, w*64+64); v++ {
				if member[v] {
					x |= 1 << (v % 64)
				}
			}
			return x
		})
		count := int32(0)
		for v := range int32(n) {
			if got := s.Before(v); got != count {
				t.Fatalf("n=%d: Before(%d) = %d, want %d", n, v, got, count)
			}
			j, ok := s.Rank(v)
			if ok != member[v] || ok && j != count {
				t.Fatalf("n=%d: Rank(%d) = %d, %v; want %d, %v", n, v, j, ok, count, member[v])
			}
			if member[v] {
				count++
			}
		}
		if s.Len() != count || s.Before(int32(n)) != count || s.Before(1<<30) != count || s.Before(-1) != 0 {
			t.Errorf("n=%d: Len %d, Before(n) %d, Before(2^30) %d, Before(-1) %d; want %d members", n, s.Len(), s.Before(int32(n)), s.Before(1<<30), s.Before(-1), count)
		}
		for _, v := range []int32{-1, int32(n), 1 << 30} {
			if _, ok := s.Rank(v); ok {
				t.Errorf("n=%d: position %d, outside, has a rank", n, v)
			}
		}
	}
	var zero Set
	if _, ok := zero.Rank(0); ok || zero.Len() != 0 || zero.Before(5) != 0 {
		t.Error("the zero Set is not empty")
	}
}
