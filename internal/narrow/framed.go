package narrow

import (
	"math"
	"math/bits"
	"slices"
)

// framedBlock is the number of values of a Framed column that share one
// frame of reference.
const framedBlock = 64

// Framed is a read-only column of int64 values with random access,
// packed by frame of reference: each block of 64 values is kept as their
// differences from the block's smallest, in the fewest bits that hold the
// block's range (up to 64: any int64 comes back exactly). Values of
// nearby entries that are alike (the run times of tasks made one after
// another, the weights of a process's fragments) take from none to two
// bytes instead of a Column[uint32]'s four, and a header of 16 bytes a
// block. Make one with a FramedBuilder; the zero Framed is empty.
type Framed struct {
	heads []framedHead
	// words hold the blocks' bits, and two spare words at the end: a
	// value may straddle into the next word, and At reads one past it.
	words []uint64
	n     int
	wide  int           // blocks holding a value outside [0, 2³²)
	neg   bool          // a value is negative
	top   int64         // the largest value, 0 if none is larger
	park  *parkedFramed // where Park wrote heads and words, nil in memory
	filed *parkedFramed // a copy Park wrote and Unpark read back
}

// framedHead is a block's header, in one place: a lookup reads it and
// then two words.
type framedHead struct {
	base  int64  // the block's smallest value
	at    uint32 // its first word in words
	width uint8  // bits a value
}

// Len returns the number of values.
func (c *Framed) Len() int { return c.n }

// At returns value i.
func (c *Framed) At(i int) int64 {
	h := &c.heads[uint(i)/framedBlock]
	w := uint(h.width)
	pos := uint(i) % framedBlock * w
	k, s := uint(h.at)+pos/64, pos%64
	// Without branches: a shift by 64 gives 0, and so 1<<64 − 1 is every
	// bit. The sum wraps as the difference did.
	d := c.words[k]>>s | c.words[k+1]<<(64-s)
	return h.base + int64(d&(1<<w-1))
}

// valueIn returns value j of block h, whose words begin at words[at]: At
// for a chunk of a parked column (At keeps its own body, within the
// budget of a function inlined where it is called).
func (h *framedHead) valueIn(words []uint64, at, j uint) int64 {
	w := uint(h.width)
	pos := j * w
	k, s := at+pos/64, pos%64
	d := words[k]>>s | words[k+1]<<(64-s)
	return h.base + int64(d&(1<<w-1))
}

// Wide returns the number of blocks holding a value outside [0, 2³²):
// with none, every value is one a Column[uint32] holds narrow, never
// negative.
func (c *Framed) Wide() int { return c.wide }

// Summable reports whether no value is negative and every sum of values,
// as many as the column holds (a path's weights), is an int64: a sum
// then never wraps, and never falls as a value is added (the critical
// path's earliest finishes, whose weights may reach past 2³² on a run
// of minutes: BOTS health large's main fragments of 4.3 to 70 s).
func (c *Framed) Summable() bool {
	return !c.neg && (c.n == 0 || c.top <= math.MaxInt64/int64(c.n))
}

// Bytes returns the memory the column holds.
func (c *Framed) Bytes() int { return 16*len(c.heads) + 8*len(c.words) }

// FramedBuilder makes a Framed column, a value at a time. The zero
// FramedBuilder is empty and ready to use.
type FramedBuilder struct {
	c   Framed
	buf [framedBlock]int64
	k   int // values in buf
}

// Reserve makes room for the headers of n more values (their bits grow
// as the blocks are packed).
func (b *FramedBuilder) Reserve(n int) {
	b.c.heads = slices.Grow(b.c.heads, (b.k+n+framedBlock-1)/framedBlock)
}

// ReserveWords makes room for n more words of bits (FramedPlan.Words of
// the values to come), so that the column is made without copies of it
// as it grows, nor one to trim it.
func (b *FramedBuilder) ReserveWords(n int) { b.c.words = slices.Grow(b.c.words, n+2) }

// Len returns the number of values appended.
func (b *FramedBuilder) Len() int { return b.c.n }

// Append adds x at the end.
func (b *FramedBuilder) Append(x int64) {
	b.buf[b.k] = x
	b.k++
	b.c.n++
	if b.k == framedBlock {
		b.pack()
	}
}

// pack packs the values in buf as the next block.
func (b *FramedBuilder) pack() {
	vals := b.buf[:b.k]
	b.k = 0
	if len(vals) == 0 {
		return
	}
	lo, hi := vals[0], vals[0]
	for _, x := range vals[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	c := &b.c
	if lo < 0 || hi > 1<<32-1 {
		c.wide++
	}
	c.neg, c.top = c.neg || lo < 0, max(c.top, hi)
	w := uint(bits.Len64(uint64(hi - lo))) // the difference as unsigned: any two int64s
	at := len(c.words)
	c.heads = append(c.heads, framedHead{base: lo, at: uint32(at), width: uint8(w)})
	if w == 0 {
		return
	}
	// framedBlock values of w bits are w words. Without room reserved,
	// the words double (appending grows a large slice by a quarter: about
	// five times the column's bytes made in all, garbage but for the
	// last).
	if len(c.words)+int(w)+2 > cap(c.words) {
		c.words = slices.Grow(c.words, max(cap(c.words), int(w)+2))
	}
	c.words = append(c.words, make([]uint64, w)...)
	// The bits in order, a word written as it fills.
	out := c.words[at : at+int(w)]
	var acc uint64
	var nb, j uint // bits in acc, words written
	for _, x := range vals {
		d := uint64(x - lo)
		acc |= d << (nb & 63)
		if nb += w; nb >= 64 {
			out[j&63] = acc
			j++
			nb -= 64
			acc = d >> 1 >> ((w - nb - 1) & 63) // the bits that did not fit: d >> (w − nb), none for a shift of 64
		}
	}
	if nb > 0 {
		out[j&63] = acc // a last block of fewer values
	}
}

// FramedPlan counts the words of bits a Framed column of the values it
// is given takes, for FramedBuilder.ReserveWords. The zero FramedPlan is
// empty and ready to use.
type FramedPlan struct {
	lo, hi int64
	k      int // values of the block being counted
	words  int
}

// Add counts x, the next value.
func (p *FramedPlan) Add(x int64) {
	if p.k == 0 {
		p.lo, p.hi = x, x
	} else {
		p.lo, p.hi = min(p.lo, x), max(p.hi, x)
	}
	if p.k++; p.k == framedBlock {
		p.close()
	}
}

func (p *FramedPlan) close() {
	if p.k > 0 {
		p.words += bits.Len64(uint64(p.hi - p.lo))
		p.k = 0
	}
}

// Words returns the words of bits of the values added (a block's values
// of w bits are w words).
func (p *FramedPlan) Words() int {
	q := *p
	q.close()
	return q.words
}

// Finish returns the column and empties the builder. Its arrays are
// copied to their size when their spare room is more than an eighth of
// them.
func (b *FramedBuilder) Finish() Framed {
	b.pack()
	c := b.c
	b.c = Framed{}
	c.words = append(c.words, 0, 0)
	if cap(c.words)-len(c.words) > len(c.words)/8 {
		c.words = slices.Clone(c.words)
	}
	if cap(c.heads)-len(c.heads) > len(c.heads)/8 {
		c.heads = slices.Clone(c.heads)
	}
	return c
}

// FramedCursor reads a Framed column at indices that mostly move a step
// at a time, either way, along a number of runs at once (a replay's
// order of nodes: the chains of processes' threads, interleaved). It
// keeps up to cursorBlocks blocks decoded, a block in the slot of its
// number, and decodes a block when a read finds its slot empty or the
// block before or after it decoded (the reads move along): about a
// nanosecond a value where At's lookups, each a chain of dependent loads,
// took several in a replay. Any other read is At's, so that reads in no
// order decode no block each. (128 slots: on the 10 M-event halo, 32
// decoded too few of the interleaved chains' blocks, 512 no better.)
type FramedCursor struct {
	c    *Framed
	mask uint    // slots − 1
	tag  []int32 // the block in each slot, −1: none
	buf  [][framedBlock]int64
}

// cursorBlocks is the most blocks a FramedCursor keeps decoded (64 KiB);
// a column of fewer blocks gets as many slots as it has blocks, rounded up
// to a power of two.
const cursorBlocks = 128

// Cursor returns a cursor over c, which must not change while it is used.
func (c *Framed) Cursor() *FramedCursor {
	n := 1
	for n < cursorBlocks && n < len(c.heads) {
		n *= 2
	}
	r := &FramedCursor{c: c, mask: uint(n - 1), tag: make([]int32, n), buf: make([][framedBlock]int64, n)}
	for k := range r.tag {
		r.tag[k] = -1
	}
	return r
}

// At returns value i.
func (r *FramedCursor) At(i int) int64 {
	b := uint(i) / framedBlock
	s := b & r.mask
	if uint(r.tag[s]) == b {
		return r.buf[s][uint(i)%framedBlock]
	}
	return r.fill(i)
}

// holds reports whether block b is decoded.
func (r *FramedCursor) holds(b int) bool {
	return b >= 0 && int(r.tag[uint(b)&r.mask]) == b
}

// fill decodes value i's block into its slot, or, when the reads do not
// move along (the slot holds another block, and neither neighbour of i's
// is decoded), reads value i as At does; it returns the value.
func (r *FramedCursor) fill(i int) int64 {
	b := i / framedBlock
	s := uint(b) & r.mask
	if r.tag[s] >= 0 && !r.holds(b-1) && !r.holds(b+1) {
		return r.c.At(i)
	}
	c := r.c
	h := c.heads[b]
	dst := &r.buf[s]
	h.decode(c.words[h.at:], dst[:min(framedBlock, c.n-b*framedBlock)])
	r.tag[s] = int32(b)
	return dst[i%framedBlock]
}

// decode unpacks the block's len(dst) values from words, which start at
// its first word and hold two past its last (the column's spare words:
// a block of width 0 reads two).
func (h framedHead) decode(words []uint64, dst []int64) {
	w := uint(h.width)
	mask := uint64(1)<<w - 1 // 1<<64 − 1: every bit
	var pos uint
	for k := range dst {
		q, sh := pos/64, pos%64
		dst[k] = h.base + int64((words[q]>>sh|words[q+1]<<(64-sh))&mask)
		pos += w
	}
}
