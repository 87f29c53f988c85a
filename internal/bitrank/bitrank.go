// Package bitrank numbers the members of a set of positions 0…n−1 in
// increasing order: a bit a position and the count of members before each
// word of 64 (1/8 + 1/16 bytes a position where an index a position takes
// 4). A column that holds values for some of a graph's nodes only (the
// receive-like ones, the point-to-point ones) finds a node's value at the
// node's rank among them.
package bitrank

import "math/bits"

// Set is a set of positions with their ranks. The zero Set is empty.
type Set struct {
	words  []uint64
	before []int32 // members before word w; its last entry counts them all
}

// Make returns the set of n positions whose word w (positions 64w to
// 64w+63) is word(w).
func Make(n int, word func(w int) uint64) Set {
	nw := (n + 63) / 64
	s := Set{words: make([]uint64, nw), before: make([]int32, nw+1)}
	count := int32(0)
	for w := range s.words {
		s.before[w] = count
		x := word(w)
		s.words[w] = x
		count += int32(bits.OnesCount64(x))
	}
	s.before[nw] = count
	return s
}

// Len returns the number of members.
func (s *Set) Len() int32 {
	if len(s.before) == 0 {
		return 0
	}
	return s.before[len(s.words)]
}

// Before returns the number of members before position v: none before 0,
// all of them past the last word.
func (s *Set) Before(v int32) int32 {
	if v <= 0 {
		return 0
	}
	w := int(v) / 64
	if w >= len(s.words) {
		return s.Len()
	}
	return s.before[w] + int32(bits.OnesCount64(s.words[w]&(1<<(uint(v)%64)-1)))
}

// Rank returns the number of members before v and whether v is one.
func (s *Set) Rank(v int32) (int32, bool) {
	w := int(v) / 64
	if v < 0 || w >= len(s.words) {
		return 0, false
	}
	x, bit := s.words[w], uint64(1)<<(uint(v)%64)
	if x&bit == 0 {
		return 0, false
	}
	return s.before[w] + int32(bits.OnesCount64(x&(bit-1))), true
}
