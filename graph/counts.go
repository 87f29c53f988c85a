package graph

// counts are the nodes' input (or output) counts that a replay counts
// down, a byte a node: almost every node has a few, and the rare count of
// 255 or more is kept exactly in big (a join of many tasks, an
// all-to-one collective's root). On the 10 M-event halo this is 7 MB less
// than 32 bits a node at the forward replay's peak. A large count is
// counted up or down as many times as it is large, mostly several times
// in a row, so the last one looked up is kept at hand: the map is read
// once a run of them, not once a step.
type counts struct {
	c   []uint8
	big *bigCounts // shared by the copies of counts (a replay's pending counts are the DAG's)
}

// bigCounts are the large counts, each in a cell, and the cell used last.
type bigCounts struct {
	m     map[int32]*int32
	last  int32  // the node lastp counts (when lastp is set)
	lastp *int32 // its cell
}

const countBig = 255

func newCounts(n int) counts { return counts{c: make([]uint8, n), big: &bigCounts{}} }

func (k *counts) null() bool { return k.c == nil }

// bigOf returns large count n's cell.
func (k *counts) bigOf(n int32) *int32 {
	b := k.big
	if b.lastp == nil || b.last != n {
		b.last, b.lastp = n, b.m[n]
	}
	return b.lastp
}

func (k *counts) get(n int32) int32 {
	if v := k.c[n]; v < countBig {
		return int32(v)
	}
	return *k.bigOf(n)
}

func (k *counts) set(n, v int32) {
	small := v >= 0 && v < countBig
	switch {
	case k.c[n] == countBig && small:
		delete(k.big.m, n)
		if k.big.last == n {
			k.big.lastp = nil
		}
	case k.c[n] == countBig:
		*k.bigOf(n) = v
		return
	case !small:
		if k.big.m == nil {
			k.big.m = map[int32]*int32{}
		}
		p := new(int32)
		*p = v
		k.big.m[n], k.c[n] = p, countBig
		k.big.last, k.big.lastp = n, p
		return
	}
	k.c[n] = uint8(v)
}

// inc adds one to n's count.
func (k *counts) inc(n int32) {
	if c := k.c; c[n] < countBig-1 {
		c[n]++
	} else {
		k.incRare(n)
	}
}

// incRare is inc of a count at 254 or more, kept out of inc, which
// inlines.
func (k *counts) incRare(n int32) {
	if k.c[n] == countBig {
		*k.bigOf(n)++
		return
	}
	k.set(n, countBig)
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
	p := k.bigOf(n)
	if *p--; *p < countBig {
		k.set(n, *p)
	}
	return false // a large count stepped down stays above zero
}
