package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/ptrace-dev/ptrace/internal/packed"
)

// Attr is what the report says of a fragment node: its kind, the thread it
// ran on (−1 for a barrier's join), its construct and when it began.
type Attr struct {
	Kind   FragKind
	Thread int32
	Loc    int32 // construct (location id); for MPI nodes the call site (an index of Frags.MPISites)
	Start  int64
}

// Attrs holds the attributes of a process's fragment nodes compactly. Only
// the critical path's own nodes (a few percent) are ever looked at, so
// they need not be four columns of 17 bytes a node that stay live from the
// simulation to the end of the critical path: each block of attrBlock
// nodes is a stream of the differences of thread, location and start from
// the node before (nodes are made in simulation order, so starts differ by
// little, and a node mostly runs on a thread near the one before's, at its
// construct), about 2.5–3.5 bytes a node. The simulation writes each
// block as it moves past its nodes (fragNodes), so the blocks are found
// through their offsets (blockStream).
//
// A node is a byte holding its kind (bits 0–2), its thread's difference
// from the node before's when it is within ±3 (bits 3–5, zigzag; 7: a
// varint of it follows), whether its location is the node before's (bit
// 6; else a varint of the difference follows) and the sign of its start's
// difference (bit 7), then that difference's magnitude as a uvarint (the
// difference's complement when negative).
//
// Spill moves the blocks to a file, whence a reader reads back the block
// it needs.
type Attrs struct {
	s blockStream
	n int
	// lens is each block's bytes, as last written (Spill writes them).
	lens []uint16
	// file holds the blocks once spilled, s.at then their offsets from
	// base and size their bytes; err is the first read's error (Err).
	file SpillFile
	base int64
	size int64
	err  error
}

// SpillFile is what Attrs.Spill and Frags.Park write to: an append-only
// file, read at offsets (internal/spill).
type SpillFile = packed.Spiller

// spillBatch is the bytes Spill writes at a time.
const spillBatch = 64 << 10

// Spill writes the blocks to f, in block order, and drops them: the
// critical path reads the attributes of its own nodes only, a few
// percent, a block each, and 2.5–3.5 bytes a node stayed resident from
// the simulation's end to the critical path's (5 MB on the 10 M-event
// stencil: twenty-eighth round). On an error the blocks stay where they
// were and the error is returned.
func (a *Attrs) Spill(f SpillFile) error {
	if a.file != nil || len(a.s.at) == 0 {
		return nil
	}
	at := make([]uint64, len(a.s.at))
	buf := make([]byte, 0, spillBatch)
	w := packed.NewAppender(f)
	pos := int64(0)
	for b := range a.s.at {
		d := a.s.block(b)
		if b < len(a.lens) {
			d = d[:a.lens[b]]
		} else {
			d = d[:attrsLen(d, min(attrBlock, a.n-b*attrBlock))]
		}
		if len(buf)+len(d) > cap(buf) {
			if err := w.Append(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		at[b] = uint64(pos)
		buf = append(buf, d...)
		pos += int64(len(d))
	}
	if err := w.Append(buf); err != nil {
		return err
	}
	a.s, a.lens = blockStream{at: at}, nil
	a.file, a.base, a.size = f, w.Start(), pos
	return nil
}

// Err returns the first error reading spilled blocks back: the attributes
// read since are zero.
func (a *Attrs) Err() error { return a.err }

// setBlock writes d as block b's bytes (blockStream.set) and notes its
// length.
func (a *Attrs) setBlock(b int, d []byte) {
	a.s.set(b, d)
	if b == len(a.lens) {
		a.lens = append(a.lens, uint16(len(d)))
	} else {
		a.lens[b] = uint16(len(d))
	}
}

// attrsLen returns the bytes of the first n nodes encoded in d.
func attrsLen(d []byte, n int) int {
	r := attrReader{d: d}
	for range n {
		r.next()
	}
	return r.pos
}

const (
	attrBlock = fragBlock

	attrThreadShift = 3
	attrThreadWide  = 7 // the thread's difference follows
	attrSameLoc     = 1 << 6
	attrBackwards   = 1 << 7 // the start is before the node before's
)

// Len returns the number of nodes.
func (a *Attrs) Len() int { return a.n }

// appendAttrs appends the encoding of a block's nodes to d.
func appendAttrs(d []byte, nodes []openNode) []byte {
	var prev Attr
	for k := range nodes {
		v := nodes[k].attr()
		h := byte(v.Kind)
		dt := int64(v.Thread) - int64(prev.Thread)
		if dt >= -3 && dt <= 3 {
			h |= byte(dt<<1^dt>>63) << attrThreadShift
		} else {
			h |= attrThreadWide << attrThreadShift
		}
		dl := int64(v.Loc) - int64(prev.Loc)
		if dl == 0 {
			h |= attrSameLoc
		}
		ds := uint64(v.Start - prev.Start) // wraps for extreme values, and unwraps the same
		if int64(ds) < 0 {
			h, ds = h|attrBackwards, ^ds
		}
		d = append(d, h)
		if h>>attrThreadShift&7 == attrThreadWide {
			d = binary.AppendVarint(d, dt)
		}
		if dl != 0 {
			d = binary.AppendVarint(d, dl)
		}
		d = binary.AppendUvarint(d, ds)
		prev = v
	}
	return d
}

// attrReader decodes an Attrs forward from a block's beginning.
type attrReader struct {
	a    *Attrs
	d    []byte // the block being read, to its chunk's end
	pos  int
	prev Attr
	buf  []byte // a spilled block, read back
}

func (r *attrReader) seekBlock(b int) {
	r.pos, r.prev = 0, Attr{}
	a := r.a
	if a.file == nil {
		r.d = a.s.block(b)
		return
	}
	end := a.size
	if b+1 < len(a.s.at) {
		end = int64(a.s.at[b+1])
	}
	start := int64(a.s.at[b])
	// Room for a block's nodes decoded as zeros, should the read fail: a
	// node of zeros is three bytes.
	n := max(int(end-start), 3*attrBlock)
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	r.d = r.buf[:n]
	if a.err == nil {
		if _, err := a.file.ReadAt(r.d[:end-start], a.base+start); err != nil {
			a.err = fmt.Errorf("fragment attributes: block %d: %w", b, err)
		}
	}
	if a.err != nil {
		clear(r.d)
	}
}

func (r *attrReader) next() Attr {
	d, v := r.d, r.prev
	h := d[r.pos]
	r.pos++
	v.Kind = FragKind(h & 7)
	if z := int64(h >> attrThreadShift & 7); z != attrThreadWide {
		v.Thread += int32(z>>1 ^ -(z & 1))
	} else {
		dt, k := binary.Varint(d[r.pos:])
		r.pos += k
		v.Thread = int32(int64(v.Thread) + dt)
	}
	if h&attrSameLoc == 0 {
		dl, k := binary.Varint(d[r.pos:])
		r.pos += k
		v.Loc = int32(int64(v.Loc) + dl)
	}
	ds, k := binary.Uvarint(d[r.pos:])
	r.pos += k
	if h&attrBackwards != 0 {
		ds = ^ds
	}
	v.Start += int64(ds)
	r.prev = v
	return v
}

// At returns node n's attributes, decoding at most a block.
func (a *Attrs) At(n int32) Attr {
	r := attrReader{a: a}
	b := int(n) / attrBlock
	r.seekBlock(b)
	var v Attr
	for i := b * attrBlock; i <= int(n); i++ {
		v = r.next()
	}
	return v
}

// AttrCursor reads attributes of nodes in increasing order, as a critical
// path visits a process's nodes: a node after the last one read in the
// same block continues its decoding instead of starting the block again.
// The zero AttrCursor is not usable; get one from Attrs.Cursor.
type AttrCursor struct {
	r    attrReader
	last int32 // the node read last, −1 none
	v    Attr  // its attributes
}

// Cursor returns a cursor over a's nodes.
func (a *Attrs) Cursor() AttrCursor { return AttrCursor{r: attrReader{a: a}, last: -1} }

// At returns node n's attributes.
func (c *AttrCursor) At(n int32) Attr {
	if n == c.last {
		return c.v
	}
	b := int(n) / attrBlock
	i := int(c.last) + 1
	if c.last < 0 || n < c.last || b != int(c.last)/attrBlock {
		c.r.seekBlock(b)
		i = b * attrBlock
	}
	for ; i <= int(n); i++ {
		c.v = c.r.next()
	}
	c.last = n
	return c.v
}

// Bytes returns the memory the attributes hold (a spilled one's offsets).
func (a *Attrs) Bytes() int { return a.s.bytes() }

// blockStream holds the encoded blocks of a column of nodes, each block's
// bytes in one piece of one chunk and found through its offset. The
// simulation writes a block once it has moved past its nodes, and at its
// end writes again the few blocks whose nodes changed since (a barrier's
// join that completions kept moving, a fragment open for long): the
// blocks are in no one array, nor always in order. Chunks grow from
// minChunk to maxChunk bytes, each never copied once written (but the
// last, trimmed), so the stream grows with no garbage and at most a chunk
// of spare room.
type blockStream struct {
	chunks [][]byte
	at     []uint64 // per block: its chunk << 32 | its offset there
}

const (
	minChunk = 256
	maxChunk = 64 << 10
)

// set writes d as block b's bytes: b is the next block, or one written
// before, whose former bytes are left unused.
func (s *blockStream) set(b int, d []byte) {
	k := len(s.chunks) - 1
	if k < 0 || cap(s.chunks[k])-len(s.chunks[k]) < len(d) {
		size := minChunk
		if k >= 0 {
			size = min(2*cap(s.chunks[k]), maxChunk)
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(size, len(d))))
		k++
	}
	pos := uint64(k)<<32 | uint64(len(s.chunks[k]))
	s.chunks[k] = append(s.chunks[k], d...)
	if b == len(s.at) {
		s.at = append(s.at, pos)
	} else {
		s.at[b] = pos
	}
}

// block returns block b's bytes and what follows them in their chunk: a
// reader knows how many entries a block holds.
func (s *blockStream) block(b int) []byte {
	p := s.at[b]
	return s.chunks[p>>32][uint32(p):]
}

// trim drops the last chunk's spare room when it is worth a copy, and the
// offsets' (the stream outlives the simulation that wrote it).
func (s *blockStream) trim() {
	if k := len(s.chunks) - 1; k >= 0 {
		if d := s.chunks[k]; cap(d)-len(d) > len(d)/8 {
			s.chunks[k] = append(make([]byte, 0, len(d)), d...)
		}
	}
	if cap(s.at)-len(s.at) > len(s.at)/8 {
		s.at = append(make([]uint64, 0, len(s.at)), s.at...)
	}
}

func (s *blockStream) bytes() int {
	n := 8 * cap(s.at)
	for _, c := range s.chunks {
		n += cap(c)
	}
	return n
}
