package graph

// counts are the nodes' input (or output) counts that a replay counts
// down, 4 bits a node, two to a byte: almost every node has a few (a
// fragment's chain predecessor and an edge or two), and the rare count of
// 15 or more is kept exactly in big (a join of many tasks, an all-to-one
// collective's root). A byte a node took twice that (4 MB of fib(30)'s
// critical-path peak, 1.2 MB of the 10 M-event halo's); 32 bits a node,
// 7 MB more on the halo. A large count is counted up or down as many
// times as it is large, mostly several times in a row, so the last one
// looked up is kept at hand: the map is read once a run of them, not
// once a step.
type counts struct {
	c   []uint8    // node n in c[n/2], the low 4 bits for even n
	big *bigCounts // shared by the copies of counts (a replay's pending counts are the DAG's)
}

// bigCounts are the large counts, in an open-addressing table (keys −1
// empty), and the slot used last. A node whose count fell back below
// countBig keeps its slot, unread, until it is large again: its 4 bits
// say which is current.
type bigCounts struct {
	keys []int32
	vals []int32
	n    int
	last int32 // the node slot last counts (slot ≥ 0)
	slot int
}

const countBig = 15

func newCounts(n int) counts {
	return counts{c: make([]uint8, (n+1)/2), big: &bigCounts{slot: -1}}
}

// nib returns node n's 4 bits.
func (k *counts) nib(n int32) uint8 { return k.c[n>>1] >> (uint(n&1) << 2) & 15 }

// setNib makes v (below 16) node n's 4 bits.
func (k *counts) setNib(n int32, v uint8) {
	sh := uint(n&1) << 2
	k.c[n>>1] = k.c[n>>1]&^(15<<sh) | v<<sh
}

func (k *counts) null() bool { return k.c == nil }

// bigOf returns large count n's cell, made (0) if n has none: a
// slot's cell moves only when the table grows, which resets the last.
func (k *counts) bigOf(n int32) *int32 {
	b := k.big
	if b.slot < 0 || b.last != n {
		b.last, b.slot = n, b.find(n)
	}
	return &b.vals[b.slot]
}

// find returns n's slot, taking one for it if it has none.
func (b *bigCounts) find(n int32) int {
	if 4*(b.n+1) > 3*len(b.keys) {
		b.grow()
	}
	mask := uint32(len(b.keys) - 1)
	i := uint32(n) * 0x9e3779b1 & mask
	for b.keys[i] != n {
		if b.keys[i] < 0 {
			b.keys[i], b.vals[i] = n, 0
			b.n++
			break
		}
		i = (i + 1) & mask
	}
	return int(i)
}

func (b *bigCounts) grow() {
	keys, vals := b.keys, b.vals
	size := max(64, 2*len(keys))
	b.keys, b.vals, b.n, b.slot = make([]int32, size), make([]int32, size), 0, -1
	for i := range b.keys {
		b.keys[i] = -1
	}
	mask := uint32(size - 1)
	for j, n := range keys {
		if n < 0 {
			continue
		}
		i := uint32(n) * 0x9e3779b1 & mask
		for b.keys[i] >= 0 {
			i = (i + 1) & mask
		}
		b.keys[i], b.vals[i] = n, vals[j]
		b.n++
	}
}

// large returns the number of counts kept large.
func (k *counts) large() int {
	m := 0
	for _, n := range k.big.keys {
		if n >= 0 && k.nib(n) == countBig {
			m++
		}
	}
	return m
}

func (k *counts) get(n int32) int32 {
	if v := k.nib(n); v < countBig {
		return int32(v)
	}
	return k.getBig(n)
}

func (k *counts) getBig(n int32) int32 { return *k.bigOf(n) }

func (k *counts) set(n, v int32) {
	if v >= 0 && v < countBig {
		k.setNib(n, uint8(v))
		return
	}
	*k.bigOf(n) = v
	k.setNib(n, countBig)
}

// inc adds one to n's count.
func (k *counts) inc(n int32) {
	p, sh := &k.c[n>>1], uint(n&1)<<2
	if *p>>sh&15 < countBig-1 {
		*p += 1 << sh
		return
	}
	k.incRare(n)
}

// incRare is inc of a count at 14 or more, kept out of inc, which
// inlines.
func (k *counts) incRare(n int32) {
	if k.nib(n) == countBig {
		*k.bigOf(n)++
		return
	}
	k.set(n, countBig)
}

// dec takes one from n's count and reports whether it reached zero; a
// count at zero stays there (an input counted twice: never ready twice).
func (k *counts) dec(n int32) bool {
	p, sh := &k.c[n>>1], uint(n&1)<<2
	if v := *p>>sh&15 - 1; v < countBig-1 { // it was not 0 nor 15: one compare for both
		*p -= 1 << sh
		return v == 0
	}
	return k.decRare(n)
}

//go:noinline
func (k *counts) decRare(n int32) bool { // kept out of dec, which inlines
	if k.nib(n) == 0 {
		return false
	}
	p := k.bigOf(n)
	if *p--; *p < countBig {
		k.set(n, *p)
	}
	return false // a large count stepped down stays above zero
}
