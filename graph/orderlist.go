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
	n      int
	last   int32
}

func (l *nodeList) add(v int32) {
	b := l.blocks.Room(10)
	d := int64(v) - int64(l.last)
	u := uint64(d<<1) ^ uint64(d>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	l.blocks.Wrote(append(b, byte(u)))
	l.last, l.n = v, l.n+1
}

func (l *nodeList) len() int { return l.n }

// backward reads a nodeList from its last node to its first, without
// changing it (an order can be replayed in reverse more than once).
type backward struct {
	blocks [][]byte
	bi     int   // the block being read
	end    int   // the bytes of blocks[bi] not read yet
	cur    int32 // the node the next call returns
}

func (l *nodeList) backward() backward {
	blocks := l.blocks.List()
	return backward{blocks: blocks, bi: len(blocks) - 1, end: len(blocks[len(blocks)-1]), cur: l.last}
}

// next returns the current node and steps to the one before it; it must be
// called at most len() times.
func (r *backward) next() int32 {
	v := r.cur
	// Most differences are one byte: the byte before is a varint's last.
	if e := r.end; e > 1 {
		b := r.blocks[r.bi]
		if x := b[e-1]; b[e-2] < 0x80 {
			r.cur = int32(int64(v) - (int64(x>>1) ^ -int64(x&1)))
			r.end = e - 1
			return v
		}
	}
	return r.nextLong(v)
}

func (r *backward) nextLong(v int32) int32 {
	for r.end == 0 && r.bi > 0 {
		r.bi--
		r.end = len(r.blocks[r.bi])
	}
	if r.end == 0 {
		return v // the first node: nothing before it
	}
	b := r.blocks[r.bi]
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
	return v
}
