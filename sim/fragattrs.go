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
	// Wait is, for an MPI call's node of positive weight, how long after
	// its start (the window's start if later) it waited for its partner:
	// its weight is the rest, its tail. 0 for other nodes.
	Wait int64
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
// difference's complement when negative). An MPI node that waited
// (Attr.Wait) has kind 7 (attrMPIWait), its wait a uvarint after the
// start: the other nodes, most MPI nodes among them, cost no byte more.
//
// The blocks go to a file as they are written when the simulation has
// one (FragPass.Spill, blockStream's streaming), or all at once (Spill);
// a reader then reads back the block it needs.
type Attrs struct {
	s blockStream
	n int
}

// SpillFile is what Attrs.Spill and Frags.Park write to: an append-only
// file, read at offsets (internal/spill).
type SpillFile = packed.Spiller

// spillBatch is the bytes Spill writes at a time.
const spillBatch = 64 << 10

// Spill writes the blocks still in memory to f, in block order, and
// drops them: the critical path reads the attributes of its own nodes
// only, a few percent, a block each, and 2.5–3.5 bytes a node stayed
// resident from the simulation's end to the critical path's (5 MB on the
// 10 M-event stencil: twenty-eighth round). Blocks streamed to a file
// during the simulation are there already, and the rest go to the same
// file. On an error the blocks not written stay where they were and the
// error is returned.
func (a *Attrs) Spill(f SpillFile) error { return a.s.spill(f) }

// Err returns the first error reading spilled blocks back: the attributes
// read since are zero.
func (a *Attrs) Err() error {
	if a.s.err != nil {
		return fmt.Errorf("fragment attributes: %w", a.s.err)
	}
	return nil
}

// setBlock writes d as block b's bytes (blockStream.set).
func (a *Attrs) setBlock(b int, d []byte) { a.s.set(b, d) }

const (
	attrBlock = fragBlock

	attrThreadShift = 3
	attrThreadWide  = 7 // the thread's difference follows
	attrSameLoc     = 1 << 6
	attrBackwards   = 1 << 7 // the start is before the node before's
	attrMPIWait     = 7      // the kind of an MPI node whose wait follows
)

// Len returns the number of nodes.
func (a *Attrs) Len() int { return a.n }

// appendAttrs appends the encoding of a block's nodes to d.
func appendAttrs(d []byte, nodes []openNode) []byte {
	var thread, loc int32
	var start int64
	for k := range nodes {
		nd := &nodes[k]
		h := byte(nd.kind)
		waited := nd.wait > 0 && nd.kind == FragMPI
		if waited {
			h = attrMPIWait
		}
		dt := int64(nd.thread) - int64(thread)
		if dt >= -3 && dt <= 3 {
			h |= byte(dt<<1^dt>>63) << attrThreadShift
		} else {
			h |= attrThreadWide << attrThreadShift
		}
		dl := int64(nd.loc) - int64(loc)
		if dl == 0 {
			h |= attrSameLoc
		}
		ds := uint64(nd.start - start) // wraps for extreme values, and unwraps the same
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
		if waited {
			d = binary.AppendUvarint(d, uint64(nd.wait))
		}
		thread, loc, start = nd.thread, nd.loc, nd.start
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
	r.d = r.a.s.read(b, &r.buf)
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
	v.Wait = 0
	if v.Kind == attrMPIWait {
		w, k := binary.Uvarint(d[r.pos:])
		r.pos += k
		v.Kind, v.Wait = FragMPI, int64(w)
	}
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
// bytes in one piece of one chunk, or once written out at an offset of a
// spill file, and found through its place (at). The simulation writes a
// block once it has moved past its nodes, and at its end writes again
// the few blocks whose nodes changed since (a barrier's join that
// completions kept moving, a fragment open for long): the blocks are in
// no one array, nor always in order. Chunks grow from minChunk to
// maxChunk bytes, each never copied once written (but the last,
// trimmed), so the stream grows with no garbage and at most a chunk of
// spare room.
//
// Streaming (streamTo) writes each chunk of maxChunk bytes to the file as
// it fills and fills its room again, so that a column holds its growing
// first chunks (256 B to 32 KiB) and one of maxChunk bytes whatever its
// nodes (the attributes and weights of fib(30)'s 8 M fragment nodes were
// 26 MB of its simulation's 150 MiB peak); spill writes the blocks still
// in memory. A block in the file is read back with its length (lens).
type blockStream struct {
	chunks [][]byte
	at     []uint64 // per block: its chunk << 32 | its offset there, or inFile | its offset in file
	lens   []uint16 // per block, its bytes as last written
	// file holds the blocks marked inFile; while streaming it takes each
	// full chunk, held being the blocks written into the chunk being
	// filled since it was last written out.
	file      SpillFile
	streaming bool
	held      []int32
	err       error // the first failed read of a block from the file
}

// inFile marks a block's place in at as an offset in the spill file.
const inFile = 1 << 63

const (
	minChunk = 256
	maxChunk = 64 << 10
)

// streamTo makes s write each full chunk of maxChunk bytes to f from now
// on (nil: none). A stream with blocks in a file keeps that file.
func (s *blockStream) streamTo(f SpillFile) {
	if f != nil && (s.file == nil || s.file == f) {
		s.file, s.streaming = f, true
	} else {
		s.streaming = false
	}
}

// set writes d as block b's bytes: b is the next block, or one written
// before, whose former bytes are left unused.
func (s *blockStream) set(b int, d []byte) {
	k := len(s.chunks) - 1
	if k < 0 || cap(s.chunks[k])-len(s.chunks[k]) < len(d) {
		if s.streaming && k >= 0 && cap(s.chunks[k]) >= max(maxChunk, len(d)) && s.writeOut(k) {
			s.chunks[k] = s.chunks[k][:0] // its blocks are in the file: its room is the next chunk's
		} else {
			size := minChunk
			if k >= 0 {
				size = min(2*cap(s.chunks[k]), maxChunk)
			}
			s.chunks = append(s.chunks, make([]byte, 0, max(size, len(d))))
			k++
		}
	}
	pos := uint64(k)<<32 | uint64(len(s.chunks[k]))
	s.chunks[k] = append(s.chunks[k], d...)
	if b == len(s.at) {
		s.at = append(s.at, pos)
		s.lens = append(s.lens, uint16(len(d)))
	} else {
		s.at[b] = pos
		s.lens[b] = uint16(len(d))
	}
	if s.streaming {
		s.held = append(s.held, int32(b))
	}
}

// writeOut writes chunk k to the file and moves the blocks it holds
// there. A failed write ends the streaming: the chunk and those after it
// stay in memory.
func (s *blockStream) writeOut(k int) bool {
	off, err := s.file.Append(s.chunks[k])
	if err != nil {
		s.streaming, s.held = false, nil
		return false
	}
	for _, b := range s.held {
		if p := s.at[b]; p&inFile == 0 && int(p>>32) == k {
			s.at[b] = inFile | uint64(off+int64(uint32(p)))
		}
	}
	s.held = s.held[:0]
	return true
}

// spill writes the blocks still in memory to f (the stream's file, if it
// has one) in block order and drops the chunks. On an error the blocks
// not written stay in memory and the error is returned.
func (s *blockStream) spill(f SpillFile) error {
	s.streaming, s.held = false, nil
	if len(s.chunks) == 0 {
		return nil
	}
	if s.file != nil {
		f = s.file
	}
	buf := make([]byte, 0, min(spillBatch, s.memBytes()))
	type moved struct {
		b   int32
		off uint32 // in buf
	}
	var pend []moved
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		off, err := f.Append(buf)
		if err != nil {
			return err
		}
		s.file = f
		for _, m := range pend {
			s.at[m.b] = inFile | uint64(off+int64(m.off))
		}
		buf, pend = buf[:0], pend[:0]
		return nil
	}
	for b, p := range s.at {
		if p&inFile != 0 {
			continue
		}
		d := s.chunks[p>>32][uint32(p):][:s.lens[b]]
		if len(buf)+len(d) > cap(buf) {
			if err := flush(); err != nil {
				return err
			}
		}
		pend = append(pend, moved{int32(b), uint32(len(buf))})
		buf = append(buf, d...)
	}
	if err := flush(); err != nil {
		return err
	}
	s.chunks = nil
	s.trimPlaces()
	return nil
}

// memBytes returns the bytes written into the chunks held in memory.
func (s *blockStream) memBytes() int {
	n := 0
	for _, c := range s.chunks {
		n += len(c)
	}
	return n
}

// read returns block b's bytes: for a block in memory those and what
// follows them in their chunk (a reader knows how many entries a block
// holds), for one in the file its bytes read into *buf (grown as needed).
// A failed read gives zeros, room for a block of zero entries (three
// bytes an attribute), and sets err.
func (s *blockStream) read(b int, buf *[]byte) []byte {
	p := s.at[b]
	if p&inFile == 0 {
		return s.chunks[p>>32][uint32(p):]
	}
	n := max(int(s.lens[b]), 3*fragBlock) // room for zeros
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	d := (*buf)[:n]
	if s.err == nil {
		if err := packed.ReadFull(s.file, d[:s.lens[b]], int64(p&^inFile)); err != nil {
			s.err = fmt.Errorf("block %d: %w", b, err)
		}
	}
	if s.err != nil {
		clear(d)
	}
	return d
}

// blockReader reads a stream's blocks in about the order they were
// written (the weights, node after node): a block in the file comes from
// a window of up to spillBatch bytes read at once, not a read a block.
type blockReader struct {
	s    *blockStream
	win  []byte
	off  int64  // the file offset of win[0]
	zero []byte // read's buffer, zeros after a failed read
}

func (r *blockReader) block(b int) []byte {
	s := r.s
	p := s.at[b]
	if p&inFile == 0 || s.err != nil {
		// In memory, or zeros after a failed read (read's: the two
		// passes over the weights agree).
		return s.read(b, &r.zero)
	}
	off, n := int64(p&^inFile), int64(s.lens[b])
	if off >= r.off && off+n <= r.off+int64(len(r.win)) {
		return r.win[off-r.off : off-r.off+n]
	}
	if cap(r.win) < spillBatch {
		r.win = make([]byte, spillBatch)
	}
	r.win = r.win[:cap(r.win)]
	got, err := s.file.ReadAt(r.win, off)
	if int64(got) < n {
		// What follows the block may lie past the file's end (io.EOF):
		// only a short block is an error.
		r.off, r.win = 0, r.win[:0]
		s.err = fmt.Errorf("block %d: %w", b, err)
		return s.read(b, &r.zero)
	}
	r.off, r.win = off, r.win[:got]
	return r.win[:n]
}

// trim drops the last chunk's spare room when it is worth a copy, and the
// offsets' (the stream outlives the simulation that wrote it).
func (s *blockStream) trim() {
	if k := len(s.chunks) - 1; k >= 0 {
		if d := s.chunks[k]; cap(d)-len(d) > len(d)/8 {
			s.chunks[k] = append(make([]byte, 0, len(d)), d...)
		}
	}
	s.trimPlaces()
	s.held = nil
}

// trimPlaces drops the spare room of the blocks' places and lengths.
func (s *blockStream) trimPlaces() {
	if cap(s.at)-len(s.at) > len(s.at)/8 {
		s.at = append(make([]uint64, 0, len(s.at)), s.at...)
		s.lens = append(make([]uint16, 0, len(s.lens)), s.lens...)
	}
}

func (s *blockStream) bytes() int {
	n := 8*cap(s.at) + 2*cap(s.lens) + 4*cap(s.held)
	for _, c := range s.chunks {
		n += cap(c)
	}
	return n
}
