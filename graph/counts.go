package graph

// counts are the nodes' input (or output) counts that a replay counts
// down, a byte a node: almost every node has a few, and the rare count of
// 255 or more is kept exactly in big (an all-to-one collective's root).
// On the 10 M-event halo this is 7 MB less than 32 bits a node at the
// forward replay's peak.
type counts struct {
	c   []uint8
	big map[int32]int32
}

const countBig = 255

func newCounts(n int) counts { return counts{c: make([]uint8, n)} }

func (k *counts) null() bool { return k.c == nil }

func (k *counts) get(n int32) int32 {
	if v := k.c[n]; v < countBig {
		return int32(v)
	}
	return k.big[n]
}

func (k *counts) set(n, v int32) {
	if v >= 0 && v < countBig {
		if k.big != nil && k.c[n] == countBig {
			delete(k.big, n)
		}
		k.c[n] = uint8(v)
		return
	}
	if k.big == nil {
		k.big = map[int32]int32{}
	}
	k.c[n], k.big[n] = countBig, v
}

// inc adds one to n's count.
func (k *counts) inc(n int32) {
	if v := k.c[n]; v < countBig-1 {
		k.c[n] = v + 1
		return
	}
	k.set(n, k.get(n)+1)
}

// dec takes one from n's count and reports whether it reached zero; a
// count at zero stays there (an input counted twice: never ready twice).
func (k *counts) dec(n int32) bool {
	v := k.c[n] - 1
	if v >= countBig-1 { // it was 0 or 255: one compare for both
		return k.decRare(n)
	}
	k.c[n] = v
	return v == 0
}

//go:noinline
func (k *counts) decRare(n int32) bool { // kept out of dec, which inlines

	if k.c[n] == 0 {
		return false
	}
	k.set(n, k.big[n]-1)
	return k.c[n] == 0
}
