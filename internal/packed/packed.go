// Package packed holds int64 columns that are written once and read in
// order as varint streams: a column of small values, or of values close to
// the one before, costs one to three bytes a value instead of eight. The
// analysis keeps such columns from the simulation to a later phase that
// walks them in order (task run times, starts, threads and constructs).
//
// A stream is kept in blocks that are never copied once written: it grows
// a block at a time instead of doubling, so filling a column leaves no
// garbage behind and never holds an old and a new copy at once (what made
// the simulation's heap peak 25 % above its live data).
package packed

import (
	"encoding/binary"
	"math/bits"
)

// Ints is an append-only column of int64 values. The zero value is an
// empty column of plain values; NewDeltas makes one that stores each value
// as its difference from the one before (for nondecreasing-ish series such
// as start times).
type Ints struct {
	s     stream
	n     int
	last  int64
	delta bool
}

// NewDeltas returns an empty column that stores differences.
func NewDeltas() Ints { return Ints{delta: true} }

// Grow makes room for about n more values of about b bytes each.
func (c *Ints) Grow(n, b int) { c.s.grow(n * b) }

// Append adds v at the end. Differences wrap around for extreme values,
// and wrap back the same when read.
func (c *Ints) Append(v int64) {
	x := v
	if c.delta {
		x = v - c.last
		c.last = v
	}
	c.s.put(x)
	c.n++
}

// Len returns the number of values.
func (c *Ints) Len() int { return c.n }

// Bytes returns the memory the column holds.
func (c *Ints) Bytes() int { return c.s.bytes() }

// Trim drops the spare capacity when it is worth a copy.
func (c *Ints) Trim() { c.s.trim() }

// Reader returns a reader at the column's first value.
func (c *Ints) Reader() Reader {
	r := Reader{s: &c.s, delta: c.delta, block: -1}
	r.advance()
	return r
}

// Reader reads a column's values in order.
type Reader struct {
	s     *stream
	data  []byte // the block being read
	block int
	pos   int
	last  int64
	delta bool
	left  int // values left in the block
}

// advance moves to the next block that holds values, if any.
func (r *Reader) advance() {
	for r.left == 0 && r.block < len(r.s.full) {
		r.block++
		r.data, r.left, r.pos = r.s.block(r.block), r.s.count(r.block), 0
	}
}

// Next returns the next value; past the end it returns 0.
func (r *Reader) Next() int64 {
	if r.left == 0 {
		if r.advance(); r.left == 0 {
			return 0
		}
	}
	var x int64
	if c := r.data[r.pos]; c < 0x80 { // varint by hand, as in Pairs.Each
		x, r.pos = int64(c>>1)^-int64(c&1), r.pos+1
	} else {
		x, r.pos = varintAt(r.data, r.pos)
	}
	r.left--
	if r.delta {
		x += r.last
		r.last = x
	}
	return x
}

// Read decodes the next values into dst, as many as it holds or are
// left, and returns how many: 0 at the end.
func (r *Reader) Read(dst []int64) int {
	k := 0
	for k < len(dst) {
		if r.left == 0 {
			if r.advance(); r.left == 0 {
				break
			}
		}
		d, pos := r.data, r.pos
		m := min(len(dst)-k, r.left)
		out := dst[k : k+m]
		for j := range out {
			// Up to three bytes inline (small values, and times of
			// microseconds to milliseconds, as differences or run
			// times).
			if uint(pos)+2 < uint(len(d)) {
				if c := d[pos]; c < 0x80 {
					out[j], pos = int64(c>>1)^-int64(c&1), pos+1
					continue
				} else if e := d[pos+1]; e < 0x80 {
					u := uint64(c&0x7f) | uint64(e)<<7
					out[j], pos = int64(u>>1)^-int64(u&1), pos+2
					continue
				} else if f := d[pos+2]; f < 0x80 {
					u := uint64(c&0x7f) | uint64(e&0x7f)<<7 | uint64(f)<<14
					out[j], pos = int64(u>>1)^-int64(u&1), pos+3
					continue
				}
			}
			out[j], pos = varintAt(d, pos)
		}
		if r.delta {
			last := r.last
			for j, x := range out {
				last += x
				out[j] = last
			}
			r.last = last
		}
		r.pos, r.left, k = pos, r.left-m, k+m
	}
	return k
}

// Values reads a column's values in order as Reader does, a batch
// decoded at a time (Reader.Read), so that Next inlines into a loop that
// reads several columns a row.
type Values struct {
	r    Reader
	buf  [256]int64
	i, n int
}

// Values returns a batch reader at the column's first value.
func (c *Ints) Values() *Values { return &Values{r: c.Reader()} }

// Next returns the next value; past the end it returns 0.
func (v *Values) Next() int64 {
	if v.i == v.n {
		v.fill()
	}
	v.i++
	return v.buf[v.i-1]
}

func (v *Values) fill() {
	v.i, v.n = 0, v.r.Read(v.buf[:])
	if v.n == 0 {
		v.buf[0], v.n = 0, 1 // past the end
	}
}

// Skip moves past n values.
func (v *Values) Skip(n int) {
	if n > 0 { // inlined: mostly none
		v.skip(n)
	}
}

func (v *Values) skip(n int) {
	for n > 0 {
		if v.i == v.n {
			v.fill()
		}
		k := min(n, v.n-v.i)
		v.i, n = v.i+k, n-k
	}
}

// Skip moves past n values.
func (r *Reader) Skip(n int) {
	for ; n > 0; n-- {
		r.Next()
	}
}

// Pairs is an append-only list of int32 pairs (a, b), such as graph edges,
// read in order: b is stored as its difference from the previous pair's b
// and a as its difference from b. Edges of a graph made in order join
// nodes made close together, so a pair costs two to four bytes, not eight.
type Pairs struct {
	s     stream
	n     int
	lastB int64
	// byA stores a pair as its differences from one of two runs of pairs
	// (NewPairsByA, regs) instead.
	byA bool
	r   regs
	// compact stores a pair as its differences from the previous pair's
	// b and a, both in one varint where b moves by -1 to 1 (Compact);
	// lastA is the previous pair's a.
	compact bool
	lastA   int64
}

// NewPairsByA returns an empty list that stores a as its difference from
// the previous pair's a: for pairs whose a's follow one another rather
// than stay near their b's, such as a fragment graph's edges (a task's
// creation from the fragment that made it, its completion into a join
// node many tasks complete into): 2.2 bytes a pair instead of 3.9 on the
// stencil's. Its pairs follow two runs at once where they interleave, as
// the completions into a region's barrier, made far before, with the
// fragments the tasks' runs make (regs: 2.0 bytes a pair instead of 3.5
// on Task Bench's stencil_1d, 2.2 instead of 3.6 on BOTS health).
func NewPairsByA() Pairs { return Pairs{byA: true} }

// regs are the two runs of a NewPairsByA list, each the b and the a of
// the last pair stored through it. A pair's b is stored as its difference
// from the closer run's b, zigzagged, doubled and the run's bit added, as
// the zigzag of the value put returns (what the readers decode); its a as
// its difference from that run's a.
type regs struct{ b, a [2]int64 }

// put returns the values that store (a, b) and moves the closer run to it.
func (r *regs) put(a, b int64) (vb, va int64) {
	d0, d1 := b-r.b[0], b-r.b[1]
	k, d := 0, d0
	if max(d1, -d1) < max(d0, -d0) {
		k, d = 1, d1
	}
	u := uint64(d<<1^d>>63)<<1 | uint64(k)
	va = a - r.a[k]
	r.b[k], r.a[k] = b, a
	return int64(u>>1) ^ -int64(u&1), va
}

// get returns the pair put stored as (vb, va), moving its run to it.
func (r *regs) get(vb, va int64) (a, b int64) {
	u := uint64(vb<<1 ^ vb>>63)
	k := u & 1
	r.b[k] += int64(u>>2) ^ -int64(u>>1&1)
	r.a[k] += va
	return r.a[k], r.b[k]
}

// unget undoes get: it returns the pair stored as (vb, va), which its run
// holds, and moves the run back to the pair before.
func (r *regs) unget(vb, va int64) (a, b int64) {
	u := uint64(vb<<1 ^ vb>>63)
	k := u & 1
	a, b = r.a[k], r.b[k]
	r.b[k] -= int64(u>>2) ^ -int64(u>>1&1)
	r.a[k] -= va
	return a, b
}

// Grow makes room for about n more pairs of about b bytes each.
func (p *Pairs) Grow(n, b int) { p.s.grow(n * b) }

// Append adds the pair (a, b) at the end.
func (p *Pairs) Append(a, b int32) {
	if p.byA {
		p.s.put2(p.r.put(int64(a), int64(b)))
	} else if p.compact {
		p.appendCompact(int64(a), int64(b))
	} else {
		p.s.put2(int64(b)-p.lastB, int64(b)-int64(a))
		p.lastB = int64(b)
	}
	p.n++
}

// Mark is where a pair is in a Pairs list, its block and its offset in
// it (block<<16 | offset: a block holds at most 64 KiB), for RunAt.
type Mark uint32

// markBlocks is the blocks a Mark can tell apart: a Mark stays below 2^31.
const markBlocks = 1 << 15

// AppendMarked appends (a, b) as Append does and returns where the pair
// is; ok is false where a Mark cannot say (a list of more than 2^15
// blocks, or one made by NewPairsByA).
func (p *Pairs) AppendMarked(a, b int32) (m Mark, ok bool) {
	x, y := int64(b)-p.lastB, int64(b)-int64(a)
	p.Append(a, b)
	if !p.Markable() {
		return 0, false
	}
	k := len(p.s.full)
	n := uvarintLen(uint64(x<<1^x>>63)) + uvarintLen(uint64(y<<1^y>>63))
	return Mark(k<<16 | (len(p.s.cur) - n)), true
}

// Markable reports whether every pair appended so far has a Mark
// (AppendMarked's ok): the list has blocks enough, and grows only.
func (p *Pairs) Markable() bool { return !p.byA && !p.compact && len(p.s.full) < markBlocks }

// uvarintLen is the bytes of u as a uvarint.
func uvarintLen(u uint64) int { return (bits.Len64(u|1) + 6) / 7 }

// RunAt reads the pair at m, one that Append made with b its second value:
// it returns the pair's first value and, when the pair after it has b
// too (it continues a run of b's pairs), that pair's mark (more true).
func (p *Pairs) RunAt(m Mark, b int32) (a int32, next Mark, more bool) {
	k, pos := int(m>>16), int(m&0xffff)
	d := p.s.block(k)
	if pos >= len(d) || p.compact {
		return 0, 0, false // not a mark of this list's
	}
	var da int64
	if c := d[pos]; c < 0x80 { // the difference from the last pair's b
		pos++
	} else {
		_, pos = varintAt(d, pos)
	}
	if pos >= len(d) {
		return 0, 0, false
	}
	if c := d[pos]; c < 0x80 {
		da, pos = int64(c>>1)^-int64(c&1), pos+1
	} else {
		da, pos = varintAt(d, pos)
	}
	a = int32(int64(b) - da)
	if pos >= len(d) {
		// A pair does not straddle blocks: the next one, if any, starts
		// the next block.
		if k++; k >= markBlocks || k > len(p.s.full) {
			return a, 0, false
		}
		d, pos = p.s.block(k), 0
		if len(d) == 0 {
			return a, 0, false
		}
	}
	if d[pos] != 0 { // b changes (a zero difference is the byte 0)
		return a, 0, false
	}
	return a, Mark(k<<16 | pos), true
}

// Compact stores the list anew as a compact one, if it is not one or a
// NewPairsByA list: each pair as its differences from the previous
// pair's b and a, both in one varint where b moved by -2 to 1, a byte
// where a moved by -8 to 7 too (a task's dependences on its neighbours,
// one task after another: a byte a pair instead of two on the gen
// stencil's, nearest's and lean stencil's, 2.7 on Task Bench's
// stencil_1d). A compact list has no Marks; it grows as any other.
// The list's blocks are dropped as they are read, in any copy of p too:
// a copy must not be read after.
func (p *Pairs) Compact() {
	if p.byA || p.compact {
		return
	}
	q := Pairs{compact: true}
	q.s.grow(p.n + p.n/16)
	r := p.Reader()
	var as, bs [256]int32
	// Each filled block goes once read (in the array p shares with any
	// copy of it, whose blocks go too): the list is never whole twice.
	read := 0
	for {
		k := r.Read(as[:], bs[:])
		if k == 0 {
			break
		}
		for i := range k {
			q.appendCompact(int64(as[i]), int64(bs[i]))
		}
		for ; read < r.blk && read < len(p.s.full); read++ {
			p.s.full[read] = nil
		}
	}
	q.n = p.n
	q.Trim()
	*p = q
}

// appendCompact appends (a, b) to a compact list. A pair whose b is the
// previous pair's b moved by -2 to 1 is one varint u, even, with u/2 =
// zigzag(a's difference)·4 + zigzag(b's): a byte where a moved by -8 to
// 7 too; any other is two, odd (2·zigzag + 1 of b's difference, then of
// a's): the first's parity tells the reader which, and so does the
// last's to one reading back. The two-varint form is stored through
// put2, which zigzags its arguments: each is the value whose zigzag is
// the varint wanted.
func (p *Pairs) appendCompact(a, b int64) {
	db, da := uint64(zigzag(b-p.lastB)), uint64(zigzag(a-p.lastA))
	p.lastB, p.lastA = b, a
	if db < 4 && da < 1<<60 {
		u := (da<<2 | db) << 1
		if s := &p.s; u < 0x80 && len(s.cur) < cap(s.cur) {
			s.cur = append(s.cur, byte(u)) // a byte, most pairs: no call
			s.curN++
			return
		}
		p.s.put(unzigzag(u))
		return
	}
	p.s.put2(unzigzag(db<<1|1), unzigzag(da<<1|1))
}

// zigzag maps a signed value to an unsigned one, small for small ones.
func zigzag(x int64) int64 { return x<<1 ^ x>>63 }

// unzigzag undoes zigzag.
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// compactOne returns the differences of b and a that the even varint u
// of a compact list stores.
func compactOne(u uint64) (db, da int64) { return unzigzag(u >> 1 & 3), unzigzag(u >> 3) }

// compactEight decodes eight one-byte pairs of a compact list (x, its
// bytes all even and below 0x80) into the differences of b and a, a
// signed byte each, pair j's in byte j: the zigzag of each byte's fields
// undone at once.
func compactEight(x uint64) (db, da uint64) {
	const ones = 0x0101010101010101
	zb, za := x>>1&(3*ones), x>>3&(15*ones)
	return zb>>1&ones ^ (zb&ones)*0xff, za>>1&(7*ones) ^ (za&ones)*0xff
}

// Len returns the number of pairs.
func (p *Pairs) Len() int { return p.n }

// Bytes returns the memory the list holds.
func (p *Pairs) Bytes() int { return p.s.bytes() }

// Trim drops the spare capacity when it is worth a copy.
func (p *Pairs) Trim() { p.s.trim() }

// Each calls fn for every pair in order. On a list streamed to a file
// (StreamTo) a failed read ends it early, unsaid: read such a list with
// its Reader, whose Err tells.
func (p *Pairs) Each(fn func(a, b int32)) {
	if p.compact || p.s.out != nil {
		// Its decoding is PairReader's (readCompact), a batch at a time,
		// as is reading blocks from a file (StreamTo).
		r := p.Reader()
		var as, bs [256]int32
		for k := r.Read(as[:], bs[:]); k > 0; k = r.Read(as[:], bs[:]) {
			for i := range k {
				fn(as[i], bs[i])
			}
		}
		return
	}
	var b, db, da int64
	var r regs
	for k := 0; k <= len(p.s.full); k++ {
		d := p.s.block(k)
		for pos := 0; pos < len(d); {
			// varint, by hand: it does not inline, and most values are a byte.
			if c := d[pos]; c < 0x80 {
				db, pos = int64(c>>1)^-int64(c&1), pos+1
			} else {
				db, pos = varintAt(d, pos)
			}
			if pos >= len(d) {
				break // a corrupt list; never made by Append
			}
			if c := d[pos]; c < 0x80 {
				da, pos = int64(c>>1)^-int64(c&1), pos+1
			} else {
				da, pos = varintAt(d, pos)
			}
			if p.byA {
				a, b := r.get(db, da)
				fn(int32(a), int32(b))
			} else {
				b += db
				fn(int32(b-da), int32(b))
			}
		}
	}
}

// Block sizes: a stream's first block is what Grow announced (or
// minBlock), each next one twice the last, up to maxBlock; a small
// process's columns stay small, a large one's waste at most one block.
const (
	minBlock = 64
	maxBlock = 64 << 10
)

// stream is a byte stream in blocks: the filled ones and the one being
// written. An entry is appended whole into one block (put, put2), so
// readers decode each block on its own.
type stream struct {
	full  [][]byte
	fullN []int // entries in each filled block
	cur   []byte
	curN  int
	next  int      // size of the next block, 0: the default
	pk    *parking // where the blocks are while parked (park)
	out   *outFile // where filled blocks go as they fill (StreamTo), nil kept
}

// grow announces about extra more bytes: the next block is made that
// large (up to maxBlock) if the current one cannot take them.
func (s *stream) grow(extra int) {
	if cap(s.cur)-len(s.cur) < extra {
		s.next = min(max(extra, minBlock), maxBlock)
	}
}

// put appends x as a varint.
func (s *stream) put(x int64) {
	if u := uint64(x<<1 ^ x>>63); u < 0x80 && len(s.cur) < cap(s.cur) {
		s.cur = append(s.cur, byte(u)) // a byte, most values: no call
		s.curN++
		return
	}
	if cap(s.cur)-len(s.cur) < binary.MaxVarintLen64 {
		var tmp [binary.MaxVarintLen64]byte
		k := binary.PutVarint(tmp[:], x)
		s.room(k)
		s.cur = append(s.cur, tmp[:k]...)
	} else {
		s.cur = binary.AppendVarint(s.cur, x)
	}
	s.curN++
}

// put2 appends x and y as varints in one block.
func (s *stream) put2(x, y int64) {
	ux, uy := uint64(x<<1^x>>63), uint64(y<<1^y>>63)
	if ux|uy < 0x80 && cap(s.cur)-len(s.cur) >= 2 {
		s.cur = append(s.cur, byte(ux), byte(uy)) // a byte each, most pairs: no call
		s.curN++
		return
	}
	if cap(s.cur)-len(s.cur) < 2*binary.MaxVarintLen64 {
		var tmp [2 * binary.MaxVarintLen64]byte
		k := binary.PutVarint(tmp[:], x)
		k += binary.PutVarint(tmp[k:], y)
		s.room(k)
		s.cur = append(s.cur, tmp[:k]...)
	} else {
		s.cur = binary.AppendVarint(binary.AppendVarint(s.cur, x), y)
	}
	s.curN++
}

// room starts a new block unless the current one has n bytes free.
func (s *stream) room(n int) {
	if cap(s.cur)-len(s.cur) >= n {
		return
	}
	size := s.next
	if size == 0 {
		size = min(max(2*cap(s.cur), minBlock), maxBlock)
	}
	s.next = 0
	if len(s.cur) > 0 {
		s.full, s.fullN = append(s.full, s.cur), append(s.fullN, s.curN)
		if s.out != nil && s.out.write(s, len(s.full)-1) && cap(s.cur) >= max(size, n) {
			// Written out: its array takes the next block.
			s.cur, s.curN = s.cur[:0], 0
			return
		}
	}
	s.curN = 0
	s.cur = make([]byte, 0, max(size, n))
}

// block returns block k: the filled ones, then the current one (nil past
// it).
func (s *stream) block(k int) []byte {
	if k < len(s.full) {
		return s.full[k]
	}
	if k == len(s.full) {
		return s.cur
	}
	return nil
}

// count returns how many entries block k holds.
func (s *stream) count(k int) int {
	if k < len(s.full) {
		return s.fullN[k]
	}
	if k == len(s.full) {
		return s.curN
	}
	return 0
}

func (s *stream) bytes() int {
	n := cap(s.cur)
	for _, b := range s.full {
		n += cap(b)
	}
	return n
}

// trim copies the current block to its length when more than an eighth
// of it is spare: the lists outlive the code that filled them.
func (s *stream) trim() {
	if d := s.cur; cap(d)-len(d) > len(d)/8 {
		s.cur = make([]byte, len(d))
		copy(s.cur, d)
	}
	s.next = 0
}

// varintAt decodes the varint at d[pos:], returning the position after it
// (len(d) when it is cut short): up to four bytes by hand (run times of
// microseconds to milliseconds, edges to nodes made a while before), longer
// ones, and those in a block's last bytes, by binary.Varint. The readers call it past their one-byte case,
// which they test themselves: it does not inline.
func varintAt(d []byte, pos int) (int64, int) {
	if pos+3 < len(d) {
		var u uint64
		switch b0, b1, b2, b3 := d[pos], d[pos+1], d[pos+2], d[pos+3]; {
		case b0 < 0x80:
			u, pos = uint64(b0), pos+1
		case b1 < 0x80:
			u, pos = uint64(b0&0x7f)|uint64(b1)<<7, pos+2
		case b2 < 0x80:
			u, pos = uint64(b0&0x7f)|uint64(b1&0x7f)<<7|uint64(b2)<<14, pos+3
		case b3 < 0x80:
			u, pos = uint64(b0&0x7f)|uint64(b1&0x7f)<<7|uint64(b2&0x7f)<<14|uint64(b3)<<21, pos+4
		default:
			return varintSlow(d, pos)
		}
		return int64(u>>1) ^ -int64(u&1), pos
	}
	return varintSlow(d, pos)
}

func varintSlow(d []byte, pos int) (int64, int) {
	x, k := binary.Varint(d[pos:])
	if k <= 0 {
		return 0, len(d)
	}
	return x, pos + k
}
