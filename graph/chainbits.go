package graph

// chainBits holds, per node, whether it is chained to the node before it:
// a bit a node, where a bool took a byte (2 MB less on the 10 M-event
// halo, for the whole of the critical path). Past the end, no node is.
type chainBits struct {
	w []uint64
	n int32
}

func (c *chainBits) len() int32 { return c.n }

// has reports whether node i is chained to node i−1 (false out of range).
func (c *chainBits) has(i int32) bool {
	// Bits past n are never set: the word's bound is the only check (a
	// negative i is a huge word index).
	w := uint(uint32(i)) >> 6
	return w < uint(len(c.w)) && c.w[w]&(1<<(i&63)) != 0
}

func (c *chainBits) add(chained bool) {
	if c.n&63 == 0 {
		c.w = append(c.w, 0)
	}
	if chained {
		c.w[c.n>>6] |= 1 << (c.n & 63)
	}
	c.n++
}

// grow makes room for n more nodes.
func (c *chainBits) grow(n int) {
	words := (int(c.n) + n + 63) / 64
	if words > cap(c.w) {
		w := make([]uint64, len(c.w), words)
		copy(w, c.w)
		c.w = w
	}
}

// bitAt reports whether bit i of the set b is set; setBit sets it. The
// index is unsigned: an int32's /64 and %64 are several instructions each.
func bitAt(b []uint64, i int32) bool { return b[uint32(i)>>6]&(1<<(uint32(i)&63)) != 0 }

func setBit(b []uint64, i int32) { b[uint32(i)>>6] |= 1 << (uint32(i) & 63) }
