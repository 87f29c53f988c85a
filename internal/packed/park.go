package packed

import (
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"
)

// Spiller is a file Park writes to: append-only, read back at offsets
// (internal/spill).
type Spiller interface {
	io.ReaderAt
	// Append writes p at the end and returns where it begins.
	Append(p []byte) (int64, error)
}

// parking is where a parked stream's blocks are: from at on in f, of
// lens bytes each (the filled blocks', then the current one's).
type parking struct {
	f    io.ReaderAt
	at   int64
	lens []int
}

// ReadFull reads len(p) bytes at off of f. Only a short read fails: an
// io.ReaderAt may return io.EOF with every byte read when the read ends
// at the file's end.
func ReadFull(f io.ReaderAt, p []byte, off int64) error {
	if m, err := f.ReadAt(p, off); m < len(p) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// Appender appends pieces to a Spiller one after another, checking that
// each begins where the one before ended: a reader finds them all from
// the first's offset (Start).
type Appender struct {
	f           Spiller
	start, next int64 // start: −1 before the first piece
}

// NewAppender returns an Appender that writes to f.
func NewAppender(f Spiller) Appender { return Appender{f: f, start: -1} }

// Append writes p after the pieces before (nothing for an empty p).
func (w *Appender) Append(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	off, err := w.f.Append(p)
	if err != nil {
		return err
	}
	if w.start < 0 {
		w.start, w.next = off, off
	}
	if off != w.next {
		return fmt.Errorf("spill file: appended at %d, not %d", off, w.next)
	}
	w.next += int64(len(p))
	return nil
}

// Start returns where the first piece begins (0 before any).
func (w *Appender) Start() int64 { return max(w.start, 0) }

// park writes the stream's blocks to f and drops them; on an error they
// stay.
func (s *stream) park(f Spiller) error {
	if s.out != nil {
		return s.spillRest()
	}
	if s.pk != nil {
		return nil
	}
	pieces := append(append(make([][]byte, 0, len(s.full)+1), s.full...), s.cur)
	lens := make([]int, len(pieces))
	for k, p := range pieces {
		lens[k] = len(p)
	}
	w := NewAppender(f)
	for _, p := range pieces {
		if err := w.Append(p); err != nil {
			return err
		}
	}
	s.pk = &parking{f: f, at: w.Start(), lens: lens}
	s.full, s.cur = nil, nil
	return nil
}

// unpark reads the blocks park wrote back, each in an array of its
// length.
func (s *stream) unpark() error {
	pk := s.pk
	if pk == nil {
		return nil
	}
	blocks := make([][]byte, len(pk.lens))
	at := pk.at
	for k, n := range pk.lens {
		blocks[k] = make([]byte, n)
		if _, err := pk.f.ReadAt(blocks[k], at); err != nil {
			return fmt.Errorf("packed: reading a parked list back: %w", err)
		}
		at += int64(n)
	}
	s.full, s.cur, s.pk = blocks[:len(blocks)-1], blocks[len(blocks)-1], nil
	return nil
}

// Park writes the list to f and drops it from memory until Unpark: for a
// list no one reads for a while, at a phase's peak. It must not be read
// or grown while parked. On an error it stays in memory.
func (p *Pairs) Park(f Spiller) error { return p.s.park(f) }

// Unpark reads back a list Park wrote (nothing for one not parked).
func (p *Pairs) Unpark() error { return p.s.unpark() }

// parkChunk is the words Int32s.Park writes at a time.
const parkChunk = 8192

// Park writes the column's words to f and drops them until Unpark (the
// blocks' headers stay): as Pairs.Park.
func (c *Int32s) Park(f Spiller) error {
	if c.pk != nil || len(c.words) == 0 {
		return nil
	}
	buf := make([]byte, 0, 8*min(len(c.words), parkChunk))
	w := NewAppender(f)
	for i := 0; i < len(c.words); i += parkChunk {
		buf = buf[:0]
		for _, word := range c.words[i:min(i+parkChunk, len(c.words))] {
			buf = binary.LittleEndian.AppendUint64(buf, word)
		}
		if err := w.Append(buf); err != nil {
			return err
		}
	}
	c.pk = &parking{f: f, at: w.Start(), lens: []int{len(c.words)}}
	c.words = nil
	return nil
}

// Unpark reads back the words Park wrote (nothing for a column not
// parked).
func (c *Int32s) Unpark() error {
	pk := c.pk
	if pk == nil {
		return nil
	}
	words := make([]uint64, pk.lens[0])
	buf := make([]byte, 8*min(len(words), parkChunk))
	at := pk.at
	for i := 0; i < len(words); i += parkChunk {
		ws := words[i:min(i+parkChunk, len(words))]
		b := buf[:8*len(ws)]
		if _, err := pk.f.ReadAt(b, at); err != nil {
			return fmt.Errorf("packed: reading a parked column back: %w", err)
		}
		for k := range ws {
			ws[k] = binary.LittleEndian.Uint64(b[8*k:])
		}
		at += int64(len(b))
	}
	c.words, c.pk = words, nil
	return nil
}

// streamMin is the least bytes of a filled block StreamTo writes out: a
// list's first blocks are small (minBlock, doubling) and stay in memory.
const streamMin = 16 << 10

// outFile is where a stream's filled blocks are written as they fill
// (StreamTo): block k of full, nil there, is lens[k] bytes at at[k] of f
// once written (at[k] −1: in memory).
type outFile struct {
	f    Spiller
	at   []int64
	lens []int32
	// stopped: a write failed, the blocks stay in memory from then on
	// (the file's are read as before).
	stopped bool
}

// write writes s's filled block k to the file and drops it from full,
// unless it is small or writes failed before; it reports whether it did.
func (o *outFile) write(s *stream, k int) bool {
	if o.stopped || len(s.full[k]) < streamMin {
		o.place(k)
		return false
	}
	if o.put(s, k) != nil {
		o.stopped = true
		return false
	}
	return true
}

// place makes room for block k's place (−1: in memory).
func (o *outFile) place(k int) {
	for len(o.at) <= k {
		o.at, o.lens = append(o.at, -1), append(o.lens, 0)
	}
}

// put appends s's block k, in memory, to the file, notes where, and
// drops it from full.
func (o *outFile) put(s *stream, k int) error {
	o.place(k)
	d := s.full[k]
	off, err := o.f.Append(d)
	if err != nil {
		return err
	}
	o.at[k], o.lens[k] = off, int32(len(d))
	s.full[k] = nil
	return nil
}

// inFile reports whether block k is in the file, not in memory.
func (s *stream) inFile(k int) bool {
	return s.out != nil && k < len(s.out.at) && s.out.at[k] >= 0
}

// readBlock reads block k, which is in the file, into *buf (grown to
// its length) and returns it.
func (s *stream) readBlock(k int, buf *[]byte) ([]byte, error) {
	o := s.out
	n := int(o.lens[k])
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	d := (*buf)[:n]
	if err := ReadFull(o.f, d, o.at[k]); err != nil {
		return nil, fmt.Errorf("packed: reading a streamed list's block %d (%d bytes at offset %d): %w", k, n, o.at[k], err)
	}
	return d, nil
}

// StreamTo makes the list write each filled block of 16 KiB or more to f
// as the next one starts, and reuse its array: only the block being
// written stays in memory (and those a failed write left). For a list
// read once in order by its Reader, long after it is made: a fragment
// graph's edges, read by its DAG's build (3 MB of BOTS health's
// simulation's peak). Its Reader reads the blocks back one at a time
// and reports a failed read (PairReader.Err); Each reads through it.
// RunAt, Backward and Compact must not be used on it. Park writes the
// blocks still in memory to f too, and the list stays there: Unpark
// does nothing for it.
func (p *Pairs) StreamTo(f Spiller) {
	if f != nil && p.s.out == nil && !p.compact {
		p.s.out = &outFile{f: f}
	}
}

// spillRest writes every block still in memory, the one being written
// included, to a streaming list's file (park's work for a list that
// streams); on an error what was not written stays.
func (s *stream) spillRest() error {
	o := s.out
	if len(s.cur) > 0 {
		s.full, s.fullN = append(s.full, s.cur), append(s.fullN, s.curN)
		s.cur, s.curN = nil, 0
	}
	for k := range s.full {
		if s.full[k] == nil { // in the file already
			continue
		}
		if err := o.put(s, k); err != nil {
			return err
		}
	}
	return nil
}

// Fixed are the element types a slice is parked as (ParkSlice): fixed
// sizes, no pointers.
type Fixed interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// ParkedBytes is a slice's bytes a Spiller holds while nothing reads it
// (ParkSlice), until ReadSlice brings it back.
type ParkedBytes struct {
	f  io.ReaderAt
	at int64
	n  int // bytes
}

// bytesOf is the memory of s, as bytes.
func bytesOf[T Fixed](s []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// ParkSlice writes s's bytes, as they are in memory (this process reads
// them back, not another), to f; the caller drops s and keeps the result.
// An empty s writes nothing. On an error s stays the caller's.
func ParkSlice[T Fixed](f Spiller, s []T) (*ParkedBytes, error) {
	b := bytesOf(s)
	if len(b) == 0 {
		return &ParkedBytes{f: f}, nil
	}
	at, err := f.Append(b)
	if err != nil {
		return nil, err
	}
	return &ParkedBytes{f: f, at: at, n: len(b)}, nil
}

// Len returns the number of bytes parked.
func (p *ParkedBytes) Len() int { return p.n }

// ParkField moves a holder's slice *s to f (ParkSlice), setting *s nil
// and keeping where in *p, the holder's note that it is parked: nothing
// when *p is set already or *s is empty; on an error *s stays.
func ParkField[T Fixed](f Spiller, s *[]T, p **ParkedBytes) error {
	if *p != nil || len(*s) == 0 {
		return nil
	}
	pk, err := ParkSlice(f, *s)
	if err != nil {
		return err
	}
	*s, *p = nil, pk
	return nil
}

// UnparkField brings back the slice ParkField moved (nothing when *p is
// nil) and clears *p.
func UnparkField[T Fixed](s *[]T, p **ParkedBytes) error {
	if *p == nil {
		return nil
	}
	v, err := ReadSlice[T](*p)
	if err != nil {
		return err
	}
	*s, *p = v, nil
	return nil
}

// ReadSlice reads a slice ParkSlice parked back into a new array of its
// length (nil for an empty one).
func ReadSlice[T Fixed](p *ParkedBytes) ([]T, error) {
	var z T
	if p.n == 0 {
		return nil, nil
	}
	s := make([]T, p.n/int(unsafe.Sizeof(z)))
	if err := ReadSliceAt(p, s, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadSliceAt reads elements [i, i+len(dst)) of a slice ParkSlice parked
// into dst: a pass over a parked array a piece at a time, without its
// whole length in memory.
func ReadSliceAt[T Fixed](p *ParkedBytes, dst []T, i int) error {
	var z T
	size := int(unsafe.Sizeof(z))
	if i < 0 || (i+len(dst))*size > p.n {
		return fmt.Errorf("reading parked elements [%d, %d) of %d", i, i+len(dst), p.n/size)
	}
	if len(dst) == 0 {
		return nil
	}
	at := p.at + int64(i*size)
	if err := ReadFull(p.f, bytesOf(dst), at); err != nil {
		return fmt.Errorf("reading back %d parked bytes at offset %d of the spill file: %w", len(dst)*size, at, err)
	}
	return nil
}
