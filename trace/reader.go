package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/vmihailenco/msgpack/v5"
)

// Reader streams one trace file frame by frame. Table frames are absorbed
// into Tables as they pass; NextChunk hands out one decoded chunk at a time,
// so memory stays bounded by the largest chunk whatever the file size.
type Reader struct {
	name    string
	r       *bufio.Reader
	off     int64 // offset of the next frame
	hdr     Header
	tables  Tables
	buf     []byte
	cols    chunkColumns
	scratch scratch
	prefix  [frameHeaderLen]byte

	chunkSeq  map[int64]int64 // next expected chunk seq per thread
	threadPos map[int]int     // thread index -> position in tables.Threads
	seenEnd   bool
	lastOff   int64     // offset of the last frame read
	lastKind  FrameKind // its kind
	// lastPayload is the encoded payload of the chunk NextChunk returned,
	// valid until the next call (the loader keeps a copy).
	lastPayload []byte
	lastCRC     uint32 // the last frame's checksum
}

// NewReader reads and checks the header frame of r. name is used in errors.
// A regular file gets a read buffer no larger than itself.
func NewReader(r io.Reader, name string) (*Reader, error) {
	var size int64
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	return newReaderWith(r, name, readBufferFor(size), nil)
}

// readBuffer is the read buffer of a Reader: frames up to its size are
// decoded where they lie in it.
const readBuffer = 1 << 20

// readBufferFor is the read buffer for a file of size bytes (0: unknown):
// a small file gets a buffer its size, not readBuffer, which thousands of
// processes' files loaded one after another would otherwise allocate each.
func readBufferFor(size int64) int {
	if size <= 0 {
		return readBuffer
	}
	return int(min(max(size, 4<<10), readBuffer))
}

// newReaderWith reads and checks the header frame of r with a read buffer
// of buf bytes, taking the read buffer and the decoder's buffers from lb
// when it holds them (LoadBuffers; lb may be nil).
func newReaderWith(r io.Reader, name string, buf int, lb *LoadBuffers) (*Reader, error) {
	rd := &Reader{name: name}
	if lb != nil && lb.br != nil && lb.br.Size() >= buf {
		lb.br.Reset(r)
		rd.r, lb.br = lb.br, nil
	} else {
		rd.r = bufio.NewReaderSize(r, buf)
	}
	if lb != nil {
		rd.scratch, lb.scratch = lb.scratch, scratch{}
	}
	kind, payload, err := rd.readFrame()
	if err == io.EOF {
		return nil, &FormatError{File: name, Offset: 0, Err: errors.New("empty file (no header frame)")}
	}
	if err != nil {
		return nil, err
	}
	if kind != FrameHeader {
		return nil, rd.errf(kind, "first frame is %s, expected header", kind)
	}
	if err := unmarshal(payload, &rd.hdr); err != nil {
		return nil, rd.errf(kind, "decode header: %v", err)
	}
	if rd.hdr.Format != FormatName {
		return nil, rd.errf(kind, "format %q is not %q", rd.hdr.Format, FormatName)
	}
	if rd.hdr.Version < MinVersion || rd.hdr.Version > Version {
		return nil, rd.errf(kind, "unsupported format version %d (this ptrace reads versions %d to %d)", rd.hdr.Version, MinVersion, Version)
	}
	if rd.hdr.NRanks < 0 || rd.hdr.NRanks > MaxRanks {
		return nil, rd.errf(kind, "world size %d outside 0..%d", rd.hdr.NRanks, MaxRanks)
	}
	if rd.hdr.ClockUnit != "ns" {
		return nil, rd.errf(kind, "unsupported clock unit %q (expected \"ns\")", rd.hdr.ClockUnit)
	}
	return rd, nil
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.hdr }

// Tables returns the tables read so far; complete once NextChunk returned io.EOF.
func (r *Reader) Tables() *Tables { return &r.tables }

// Name returns the file name used in errors.
func (r *Reader) Name() string { return r.name }

// Offset returns the byte offset of the next frame.
func (r *Reader) Offset() int64 { return r.off }

// LastFrameOffset returns the offset of the frame most recently read, which
// is where the chunk NextChunk returned starts.
func (r *Reader) LastFrameOffset() int64 { return r.lastOff }

// Complete reports whether the end frame was read.
func (r *Reader) Complete() bool { return r.seenEnd }

func (r *Reader) errf(kind FrameKind, format string, args ...any) error {
	return r.errAt(r.lastOff, kind, format, args...)
}

// errAt is errf for the frame at off (a frame read before the last one).
func (r *Reader) errAt(off int64, kind FrameKind, format string, args ...any) error {
	return &FormatError{File: r.name, Offset: off, Frame: kind, Err: fmt.Errorf(format, args...)}
}

// readFrame reads the next frame, checks its prefix and CRC and returns its
// payload (valid until the next read from r.r). It returns io.EOF exactly at the end.
func (r *Reader) readFrame() (FrameKind, []byte, error) {
	r.lastOff = r.off
	n, err := io.ReadFull(r.r, r.prefix[:])
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			return 0, nil, &FormatError{File: r.name, Offset: r.off, Err: fmt.Errorf("%w: %d of %d frame prefix bytes", ErrTruncated, n, frameHeaderLen)}
		}
		return 0, nil, &FormatError{File: r.name, Offset: r.off, Err: err}
	}
	kind, crc, length, err := parseFrameHeader(r.prefix[:])
	if err != nil {
		return 0, nil, &FormatError{File: r.name, Offset: r.off, Err: err}
	}
	r.lastKind = kind
	if length > MaxFrameLen {
		return 0, nil, &FormatError{File: r.name, Offset: r.off, Frame: kind, Err: fmt.Errorf("frame length %d exceeds the limit %d", length, MaxFrameLen)}
	}
	var payload []byte
	if int(length) <= r.r.Size() {
		// Zero copy: the payload stays in the bufio buffer, valid until the
		// next read, and every caller is done with it by then.
		payload, err = r.r.Peek(int(length))
		n = len(payload)
		if err == nil {
			r.r.Discard(int(length))
		} else if err == bufio.ErrBufferFull {
			err = io.ErrUnexpectedEOF
		}
	} else {
		if cap(r.buf) < int(length) {
			r.buf = make([]byte, length)
		}
		payload = r.buf[:length]
		n, err = io.ReadFull(r.r, payload)
	}
	if err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return 0, nil, &FormatError{File: r.name, Offset: r.off, Frame: kind, Err: fmt.Errorf("%w: %d of %d payload bytes", ErrTruncated, n, length)}
		}
		return 0, nil, &FormatError{File: r.name, Offset: r.off, Frame: kind, Err: err}
	}
	if got := frameCRC(kind, payload); got != crc {
		return 0, nil, &FormatError{File: r.name, Offset: r.off, Frame: kind, Err: fmt.Errorf("checksum mismatch (stored %08x, computed %08x): corrupt data", crc, got)}
	}
	r.lastCRC = crc
	r.off += frameHeaderLen + int64(length)
	return kind, payload, nil
}

// NextChunk decodes the next chunk into c, absorbing any table frames before
// it. It returns io.EOF after the last frame. c's slices are reused.
func (r *Reader) NextChunk(c *Chunk) error {
	payload, err := r.nextChunkFrame(&r.cols)
	if err != nil {
		return err
	}
	if err := decodeChunkColumns(r.name, r.lastOff, &r.cols, c, &r.scratch); err != nil {
		return chunkFrameError(r.name, r.lastOff, err)
	}
	r.lastPayload = payload
	return nil
}

// Chunks iterates over the chunks NextChunk would return, each decoded
// into one chunk the iterator reuses (valid until the loop's next round),
// until the last frame. A failure to read or decode ends it with the
// error, paired with a nil chunk.
func (r *Reader) Chunks() iter.Seq2[*Chunk, error] {
	return func(yield func(*Chunk, error) bool) {
		var c Chunk
		for {
			err := r.NextChunk(&c)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&c, nil) {
				return
			}
		}
	}
}

// nextChunkFrame reads up to the next chunk frame, absorbing the table
// frames before it, and checks it (checkChunk) into cols; it returns the
// frame's payload, valid until the next read, or io.EOF after the last
// frame.
func (r *Reader) nextChunkFrame(cols *chunkColumns) ([]byte, error) {
	for {
		kind, payload, err := r.nextFrame(cols, r.seenEnd)
		if err != nil {
			return nil, err
		}
		if kind == FrameChunk {
			return payload, nil
		}
		if err := r.absorb(kind, payload); err != nil {
			return nil, r.errf(kind, "%v", err)
		}
	}
}

// nextFrame reads the next frame and checks what its place in the file
// requires: no frame after the end frame (ended), no second header, and a
// chunk's columns and sequence number (checkChunk, into cols). A table
// frame comes back unabsorbed; its payload is valid until the next read.
func (r *Reader) nextFrame(cols *chunkColumns, ended bool) (FrameKind, []byte, error) {
	kind, payload, err := r.readFrame()
	if err != nil {
		return 0, nil, err
	}
	if ended {
		return 0, nil, r.errf(kind, "%s frame after the end frame", kind)
	}
	switch kind {
	case FrameChunk:
		if err := r.checkChunk(payload, cols); err != nil {
			return 0, nil, chunkFrameError(r.name, r.lastOff, err)
		}
	case FrameHeader:
		return 0, nil, r.errf(kind, "second header frame")
	}
	return kind, payload, nil
}

// checkChunk parses a chunk frame's columns into cols and checks its
// sequence number: the part of a chunk's decoding that depends on the
// frames before it, so it runs in file order.
func (r *Reader) checkChunk(payload []byte, cols *chunkColumns) error {
	if err := parseChunk(payload, r.hdr.Version, cols); err != nil {
		return err
	}
	if r.chunkSeq == nil {
		r.chunkSeq = make(map[int64]int64)
	}
	if want := r.chunkSeq[cols.thread]; cols.seq != want {
		return fmt.Errorf("thread %d: chunk sequence number %d, expected %d (a chunk is missing or repeated)", cols.thread, cols.seq, want)
	}
	r.chunkSeq[cols.thread]++
	return nil
}

// decodeChunkColumns decodes the events of the chunk frame at frameOff of
// file name, whose columns checkChunk parsed, into c. It depends on no
// other frame, so chunks decode on any goroutine (each with its scratch).
func decodeChunkColumns(name string, frameOff int64, cols *chunkColumns, c *Chunk, sc *scratch) error {
	if err := decodeColumns(cols, c, sc); err != nil {
		return chunkError(name, frameOff, cols, err)
	}
	c.Offset = frameOff + frameHeaderLen + int64(cols.kindsPos)
	return nil
}

// chunkFrameError is err, a failure to read the chunk frame at frameOff,
// as a FormatError naming the file and the frame.
func chunkFrameError(name string, frameOff int64, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return fe
	}
	return &FormatError{File: name, Offset: frameOff, Frame: FrameChunk, Err: err}
}

// chunkError locates a decoding error of the chunk frame at frameOff: in
// the kinds or args column it names the byte of the failing event.
func chunkError(file string, frameOff int64, cols *chunkColumns, err error) error {
	var ce *columnError
	if errors.As(err, &ce) && (ce.column == "kinds" || ce.column == "args") {
		pos := cols.kindsPos + ce.pos
		if ce.column == "args" {
			pos = cols.argsPos
			if ce.pos <= int(cols.nargs) && len(cols.argsCtrl) == (int(cols.nargs)+3)/4 {
				pos += svbOffset(cols.argsCtrl, ce.pos)
			}
		}
		return &FormatError{File: file, Offset: frameOff + frameHeaderLen + int64(pos), Frame: FrameChunk,
			Err: fmt.Errorf("thread %d chunk %d (frame at offset %d): %w", cols.thread, cols.seq, frameOff, err)}
	}
	return fmt.Errorf("thread %d chunk %d: %w", cols.thread, cols.seq, err)
}

// parseChunk reads the msgpack map of a chunk frame of a file of the given
// format version into cols, whose byte columns then alias payload.
func parseChunk(payload []byte, version int, cols *chunkColumns) error {
	*cols = chunkColumns{thread: -1, seq: -1, n: -1, nargs: -1, alt: altOf(version), na: nargsOf(version), fast: fastOf(version)}
	mp := mpReader{b: payload}
	n, err := mp.mapLen()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		key, err := mp.strBytes()
		if err != nil {
			return fmt.Errorf("key %d: %w", i, err)
		}
		switch string(key) {
		case "thread":
			cols.thread, err = mp.int()
		case "seq":
			cols.seq, err = mp.int()
		case "n":
			cols.n, err = mp.int()
		case "t0":
			cols.t0, err = mp.int()
		case "nargs":
			cols.nargs, err = mp.int()
		case "kinds":
			cols.kinds, err = mp.bin()
			cols.kindsPos = mp.p - len(cols.kinds)
		case "dt_ctrl":
			cols.dtCtrl, err = mp.bin()
		case "dt_data":
			cols.dtData, err = mp.bin()
		case "args_ctrl":
			cols.argsCtrl, err = mp.bin()
		case "args_data":
			cols.argsData, err = mp.bin()
			cols.argsPos = mp.p - len(cols.argsData)
		default:
			err = mp.skip(0) // unknown keys are for later minor additions
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
	}
	switch {
	case cols.thread < 0 || cols.thread >= MaxThreads:
		return fmt.Errorf("missing or invalid thread index %d (limit %d)", cols.thread, MaxThreads)
	case cols.seq < 0:
		return errors.New("missing chunk sequence number")
	case cols.n < 0:
		return errors.New("missing event count")
	case cols.nargs < 0:
		return errors.New("missing argument count")
	}
	return nil
}

// maxTableID bounds ids in table frames (threads, locations, comms).
const maxTableID = 1 << 24

func (r *Reader) absorb(kind FrameKind, payload []byte) error {
	t := &r.tables
	switch kind {
	case FrameStrings:
		var f stringsFrame
		if err := unmarshal(payload, &f); err != nil {
			return err
		}
		if f.Base != len(t.Strings) {
			return fmt.Errorf("strings frame starts at id %d, expected %d", f.Base, len(t.Strings))
		}
		t.Strings = append(t.Strings, f.Values...)
	case FrameThreads:
		var f threadsFrame
		if err := unmarshal(payload, &f); err != nil {
			return err
		}
		for _, th := range f.Threads {
			if th.Index < 0 || th.Index >= MaxThreads {
				return fmt.Errorf("thread index %d out of range", th.Index)
			}
			// A position per index, not a search: a frame may hold 65536
			// entries, and a quadratic search over them is a hang.
			if r.threadPos == nil {
				r.threadPos = map[int]int{}
				for i, old := range t.Threads {
					r.threadPos[old.Index] = i
				}
			}
			if i, ok := r.threadPos[th.Index]; ok {
				t.Threads[i] = th
			} else {
				r.threadPos[th.Index] = len(t.Threads)
				t.Threads = append(t.Threads, th)
			}
		}
	case FrameLocations:
		var f locationsFrame
		if err := unmarshal(payload, &f); err != nil {
			return err
		}
		for _, l := range f.Locations {
			if l.ID < 0 || l.ID >= maxTableID {
				return fmt.Errorf("location id %d out of range", l.ID)
			}
			for len(t.Locations) <= l.ID {
				t.Locations = append(t.Locations, Location{ID: len(t.Locations)})
			}
			t.Locations[l.ID] = l
		}
	case FrameComms:
		var f commsFrame
		if err := unmarshal(payload, &f); err != nil {
			return err
		}
		for i := range f.Comms {
			if f.Comms[i].Index < 0 || f.Comms[i].Index >= maxTableID {
				return fmt.Errorf("communicator index %d out of range", f.Comms[i].Index)
			}
			cm, err := commFromWire(&f.Comms[i], r.hdr.NRanks)
			if err != nil {
				return err
			}
			for len(t.Comms) <= cm.Index {
				t.Comms = append(t.Comms, Communicator{Index: len(t.Comms), ID: -1})
			}
			t.Comms[cm.Index] = cm
		}
	case FrameClock:
		var f clockFrame
		if err := unmarshal(payload, &f); err != nil {
			return err
		}
		t.ClockOffsets = append(t.ClockOffsets, f.Offsets...)
	case FrameEnd:
		var e End
		if err := unmarshal(payload, &e); err != nil {
			return err
		}
		t.End = &e
		r.seenEnd = true
	default:
		// A format version fixes its frame kinds; new kinds come with a new
		// version, so an unknown one here is corruption.
		return fmt.Errorf("unknown frame kind %d", kind)
	}
	return nil
}

// unmarshal decodes a table payload. The msgpack library is not hardened
// against every corrupt input, so a panic in it becomes an error here.
func unmarshal(payload []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt msgpack: %v", p)
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(payload))
	return dec.Decode(v)
}
