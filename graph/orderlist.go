package graph

import "github.com/ptrace-dev/ptrace/internal/packed"

// nodeList is the nodes of an Order in evaluation order, packed: each the
// difference from the one before, zigzag LEB128 (a chain's next node, most
// of them, is one byte where an int32 took four; 7 MB less on the 10
// M-event halo, at the forward replay's peak). It grows in blocks that are
// never copied (packed.Blocks: a doubling slice left its old array as
// garbage at the replay's peak), and no varint straddles two. It is read
// backward only (ReplayInReverse): a varint's last byte is the only one
// without the continuation bit, so the bytes before the end tell where it
// begins.
type nodeList struct {
	blocks packed.Blocks
	n      int   // nodes encoded
	last   int32 // the last node encoded
	// The latest nodes, not encoded yet: encoded a batch at a time, so
	// that add inlines into the replay's loop (a call a node was most of
	// the order's cost).
	buf [nodeBatch]int32
	nb  int
}

// nodeBatch is how many nodes a list encodes, and a reader decodes, at a
// time.
const nodeBatch = 256

func (l *nodeList) add(v int32) {
	if l.nb == len(l.buf) {
		l.flush()
	}
	l.buf[l.nb] = v
	l.nb++
}

// flush encodes the nodes added since the last.
func (l *nodeList) flush() {
	for _, v := range l.buf[:l.nb] {
		d := int64(v) - int64(l.last)
		u := uint64(d<<1) ^ uint64(d>>63)
		if u >= 0x80 || !l.blocks.Put1(byte(u)) {
			b := l.blocks.Room(10)
			for u >= 0x80 {
				b = append(b, byte(u)|0x80)
				u >>= 7
			}
			l.blocks.Wrote(append(b, byte(u)))
		}
		l.last = v
	}
	l.n += l.nb
	l.nb = 0
}

func (l *nodeList) len() int { return l.n + l.nb }

// backward reads a nodeList from its last node to its first, without
// changing it (an order can be replayed in reverse more than once), a
// batch of nodes decoded at a time. The blocks come one at a time
// (packed.Blocks.Block): those the list streamed to the spill file are
// read back as the reader reaches them, one block in memory, not the
// whole order (2.7 MB of the 10 M-event halo's backward replay at two
// ranks). A failed read ends the list early (err): the nodes left read
// as the last one decoded.
type backward struct {
	src  *packed.Blocks
	blk  []byte // block bi
	rbuf []byte // where a block of the file is read
	bi   int    // the block being read
	end  int    // the bytes of blk not read yet
	cur  int32  // the node the next decode returns
	left int    // nodes not decoded yet
	buf  [nodeBatch]int32
	j, m int // buf[j:m] decoded, not returned yet, latest first
	err  error
}

func (l *nodeList) backward() *backward {
	l.flush()
	r := &backward{src: &l.blocks, bi: l.blocks.NumBlocks() - 1, cur: l.last, left: l.n}
	r.load()
	return r
}

// load reads block bi into blk.
func (r *backward) load() {
	b, err := r.src.Block(r.bi, &r.rbuf)
	if err != nil {
		r.err, r.bi, b = err, 0, nil
	}
	r.blk, r.end = b, len(b)
}

// next returns the node before the one it returned last (the list's last
// at first); it must be called at most len() times.
func (r *backward) next() int32 {
	if r.j == r.m {
		r.fill()
	}
	r.j++
	return r.buf[r.j-1]
}

// fill decodes the next batch.
func (r *backward) fill() {
	r.j, r.m = 0, min(r.left, nodeBatch)
	r.left -= r.m
	for i := range r.buf[:r.m] {
		v := r.cur
		r.buf[i] = v
		// Most differences are one byte: the byte before is a varint's last.
		if e := r.end; e > 1 {
			b := r.blk
			if x := b[e-1]; b[e-2] < 0x80 {
				r.cur = int32(int64(v) - (int64(x>>1) ^ -int64(x&1)))
				r.end = e - 1
				continue
			}
		}
		r.stepLong(v)
	}
}

// stepLong steps from node v to the one before it, whose difference is
// more than a byte or which starts a block.
func (r *backward) stepLong(v int32) {
	for r.end == 0 && r.bi > 0 {
		r.bi--
		r.load()
	}
	if r.end == 0 {
		return // the first node: nothing before it
	}
	b := r.blk
	start := r.end - 1
	for start > 0 && b[start-1]&0x80 != 0 {
		start--
	}
	var u uint64
	for i := r.end - 1; i >= start; i-- {
		u = u<<7 | uint64(b[i]&0x7f)
	}
	d := int64(u>>1) ^ -int64(u&1)
	r.cur = int32(int64(v) - d)
	r.end = start
}
