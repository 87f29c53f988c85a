package otf2

import (
	"errors"
	"fmt"
	"io"

	"github.com/ptrace-dev/ptrace/trace"
)

// Event record types (OTF2's internal numbering, stable across versions).
const (
	EvBufferFlush         = 10
	EvMeasurementOnOff    = 11
	EvEnter               = 12
	EvLeave               = 13
	EvMpiSend             = 14
	EvMpiIsend            = 15
	EvMpiIsendComplete    = 16
	EvMpiIrecvRequest     = 17
	EvMpiRecv             = 18
	EvMpiIrecv            = 19
	EvMpiRequestTest      = 20
	EvMpiRequestCancelled = 21
	EvMpiCollectiveBegin  = 22
	EvMpiCollectiveEnd    = 23
	EvRmaCollectiveBegin  = 37
	EvRmaCollectiveEnd    = 38
	EvRmaGroupSync        = 39
	EvRmaRequestLock      = 40
	EvRmaAcquireLock      = 41
	EvRmaTryLock          = 42
	EvRmaReleaseLock      = 43
	EvOmpFork             = 24
	EvOmpJoin             = 25
	EvOmpAcquireLock      = 26
	EvOmpReleaseLock      = 27
	EvOmpTaskCreate       = 28
	EvOmpTaskSwitch       = 29
	EvOmpTaskComplete     = 30
	EvThreadFork          = 53
	EvThreadJoin          = 54
	EvThreadTeamBegin     = 55
	EvThreadTeamEnd       = 56
	EvThreadAcquireLock   = 57
	EvThreadReleaseLock   = 58
	EvThreadTaskCreate    = 59
	EvThreadTaskSwitch    = 60
	EvThreadTaskComplete  = 61
	EvThreadCreate        = 62
	EvThreadBegin         = 63
	EvThreadWait          = 64
	EvThreadEnd           = 65
	EvCallingContextEnter = 66
	EvCallingContextLeave = 67
	EvProgramBegin        = 83
	EvProgramEnd          = 84
	EvNbCollRequest       = 85
	EvNbCollComplete      = 86
	EvCommCreate          = 87
	EvCommDestroy         = 88

	// evLastKnown is the highest event record type of OTF2 3.0; later ones
	// (a newer OTF2) are skipped by their record length and counted as
	// unknown.
	evLastKnown = 88
)

// Event is one decoded event record. A holds the record's attributes in the
// order of the OTF2 documentation for the types the converter uses (see
// eventFields); other known types are skipped by length and carry no
// arguments. Identifiers are as stored in the file (local ids; the archive's
// mapping tables translate them).
type Event struct {
	Type   uint8
	Time   uint64 // timer ticks, as stored
	A      [6]uint64
	Offset int64 // file offset of the record's type byte
}

// field encodings of event attributes
const (
	fU8  = 'b' // uint8
	fU32 = 'u' // compressed uint32 (also int32)
	fU64 = 'U' // compressed uint64 (also int64)
	fF64 = 'F' // 8 bytes, uncompressed
	fS32 = 'x' // compressed uint32, read and not kept (no slot in A)
)

// eventFields lists the attributes decoded for each record type; singleton
// records (one compressed attribute, no length byte, frozen since OTF2 1.1)
// are marked in singleton.
var eventFields = [256]string{
	EvBufferFlush:         "F",
	EvMeasurementOnOff:    "b",
	EvEnter:               "u",
	EvLeave:               "u",
	EvMpiSend:             "uuuU",
	EvMpiIsend:            "uuuUU",
	EvMpiIsendComplete:    "U",
	EvMpiIrecvRequest:     "U",
	EvMpiRecv:             "uuuU",
	EvMpiIrecv:            "uuuUU",
	EvMpiRequestTest:      "U",
	EvMpiRequestCancelled: "U",
	EvMpiCollectiveEnd:    "buuUU",
	// collectiveOp, syncLevel (skipped), window, root, bytes sent and
	// received: A as EvMpiCollectiveEnd's with the window for the
	// communicator
	EvRmaCollectiveEnd: "bxuuUU",
	// syncLevel, window, group (pscw.go)
	EvRmaGroupSync: "uuu",
	// window, remote, lock id, lock type (rmalock.go); the release has
	// no type
	EvRmaRequestLock:      "uuUb",
	EvRmaAcquireLock:      "uuUb",
	EvRmaTryLock:          "uuUb",
	EvRmaReleaseLock:      "uuU",
	EvOmpFork:             "u",
	EvOmpAcquireLock:      "uu",
	EvOmpReleaseLock:      "uu",
	EvOmpTaskCreate:       "U",
	EvOmpTaskSwitch:       "U",
	EvOmpTaskComplete:     "U",
	EvThreadFork:          "bu",
	EvThreadJoin:          "b",
	EvThreadTeamBegin:     "u",
	EvThreadTeamEnd:       "u",
	EvThreadAcquireLock:   "buu",
	EvThreadReleaseLock:   "buu",
	EvThreadTaskCreate:    "uuu",
	EvThreadTaskSwitch:    "uuu",
	EvThreadTaskComplete:  "uuu",
	EvThreadCreate:        "uU",
	EvThreadBegin:         "uU",
	EvThreadWait:          "uU",
	EvThreadEnd:           "uU",
	EvCallingContextEnter: "uu",
	EvCallingContextLeave: "u",
	EvNbCollRequest:       "U",
	EvNbCollComplete:      "buuUUU",
	EvCommCreate:          "u",
	EvCommDestroy:         "u",
}

var singleton = [256]bool{
	EvEnter: true, EvLeave: true, EvMpiIsendComplete: true, EvMpiIrecvRequest: true,
	EvMpiRequestTest: true, EvMpiRequestCancelled: true, EvOmpFork: true,
	EvOmpTaskCreate: true, EvOmpTaskSwitch: true, EvOmpTaskComplete: true,
}

// EventName returns the OTF2 name of an event record type.
func EventName(t uint8) string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return fmt.Sprintf("UNKNOWN(%d)", t)
}

// eventNames are otf2-print's spellings, so counts can be compared.
var eventNames = [...]string{
	10: "BUFFER_FLUSH", 11: "MEASUREMENT_ON_OFF", 12: "ENTER", 13: "LEAVE",
	14: "MPI_SEND", 15: "MPI_ISEND", 16: "MPI_ISEND_COMPLETE", 17: "MPI_IRECV_REQUEST",
	18: "MPI_RECV", 19: "MPI_IRECV", 20: "MPI_REQUEST_TEST", 21: "MPI_REQUEST_CANCELLED",
	22: "MPI_COLLECTIVE_BEGIN", 23: "MPI_COLLECTIVE_END", 24: "OMP_FORK", 25: "OMP_JOIN",
	26: "OMP_ACQUIRE_LOCK", 27: "OMP_RELEASE_LOCK", 28: "OMP_TASK_CREATE",
	29: "OMP_TASK_SWITCH", 30: "OMP_TASK_COMPLETE", 31: "METRIC", 32: "PARAMETER_STRING",
	33: "PARAMETER_INT", 34: "PARAMETER_UNSIGNED_INT", 35: "RMA_WIN_CREATE",
	36: "RMA_WIN_DESTROY", 37: "RMA_COLLECTIVE_BEGIN", 38: "RMA_COLLECTIVE_END",
	39: "RMA_GROUP_SYNC", 40: "RMA_REQUEST_LOCK", 41: "RMA_ACQUIRE_LOCK", 42: "RMA_TRY_LOCK",
	43: "RMA_RELEASE_LOCK", 44: "RMA_SYNC", 45: "RMA_WAIT_CHANGE", 46: "RMA_PUT",
	47: "RMA_GET", 48: "RMA_ATOMIC", 49: "RMA_OP_COMPLETE_BLOCKING",
	50: "RMA_OP_COMPLETE_NON_BLOCKING", 51: "RMA_OP_TEST", 52: "RMA_OP_COMPLETE_REMOTE",
	53: "THREAD_FORK", 54: "THREAD_JOIN", 55: "THREAD_TEAM_BEGIN", 56: "THREAD_TEAM_END",
	57: "THREAD_ACQUIRE_LOCK", 58: "THREAD_RELEASE_LOCK", 59: "THREAD_TASK_CREATE",
	60: "THREAD_TASK_SWITCH", 61: "THREAD_TASK_COMPLETE", 62: "THREAD_CREATE",
	63: "THREAD_BEGIN", 64: "THREAD_WAIT", 65: "THREAD_END", 66: "CALLING_CONTEXT_ENTER",
	67: "CALLING_CONTEXT_LEAVE", 68: "CALLING_CONTEXT_SAMPLE", 69: "IO_CREATE_HANDLE",
	70: "IO_DESTROY_HANDLE", 71: "IO_DUPLICATE_HANDLE", 72: "IO_SEEK",
	73: "IO_CHANGE_STATUS_FLAGS", 74: "IO_DELETE_FILE", 75: "IO_OPERATION_BEGIN",
	76: "IO_OPERATION_TEST", 77: "IO_OPERATION_ISSUED", 78: "IO_OPERATION_COMPLETE",
	79: "IO_OPERATION_CANCELLED", 80: "IO_ACQUIRE_LOCK", 81: "IO_RELEASE_LOCK",
	82: "IO_TRY_LOCK", 83: "PROGRAM_BEGIN", 84: "PROGRAM_END",
	85: "NON_BLOCKING_COLLECTIVE_REQUEST", 86: "NON_BLOCKING_COLLECTIVE_COMPLETE",
	87: "COMM_CREATE", 88: "COMM_DESTROY",
}

// EventReader decodes the event file of one location, one chunk in memory at
// a time.
type EventReader struct {
	r         io.Reader
	closer    io.Closer
	name      string
	chunkSize int
	buf       []byte
	d         dec
	chunkOff  int64 // file offset of the chunk in buf
	time      uint64
	inChunk   bool
	done      bool

	// Events counts the event records returned.
	Events int64
	// AttrLists counts attribute lists skipped.
	AttrLists int64
	// Unknown counts records of types this reader does not know, skipped
	// by their record length; UnknownFirst describes the first.
	Unknown      int64
	UnknownFirst string
}

// OpenEvents opens a location's event file written with chunkSize-byte
// chunks (the anchor file's event chunk size).
func OpenEvents(path string, chunkSize uint64) (*EventReader, error) {
	f, err := trace.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("event file: %w", err)
	}
	r, err := NewEventReader(f, path, chunkSize)
	if err != nil {
		f.Close()
		return nil, err
	}
	// A file smaller than a chunk needs no chunk-sized buffer.
	if st, err := f.Stat(); err == nil && st.Size() < int64(chunkSize) {
		r.buf = make([]byte, st.Size())
	} else {
		r.buf = make([]byte, chunkSize)
	}
	r.closer = f
	return r, nil
}

// Reset makes r decode src from its start, reusing r's buffer.
func (r *EventReader) Reset(src io.Reader, name string) {
	buf := r.buf[:cap(r.buf)]
	if len(buf) < r.chunkSize {
		buf = make([]byte, r.chunkSize)
	}
	*r = EventReader{r: src, name: name, chunkSize: r.chunkSize, buf: buf}
}

// NewEventReader decodes event records from r; name is used in errors.
func NewEventReader(r io.Reader, name string, chunkSize uint64) (*EventReader, error) {
	if chunkSize < minChunk || chunkSize > maxChunk {
		return nil, fmt.Errorf("%s: invalid event chunk size %d", name, chunkSize)
	}
	// The buffer is allocated at the first chunk (OpenEvents sizes it to a
	// file smaller than a chunk).
	return &EventReader{r: r, name: name, chunkSize: int(chunkSize)}, nil
}

// Close closes the file when the reader opened it.
func (r *EventReader) Close() error {
	if r.closer != nil {
		err := r.closer.Close()
		r.closer = nil
		return err
	}
	return nil
}

// nextChunk loads the next chunk; it returns false at the end of the file.
func (r *EventReader) nextChunk() (bool, error) {
	if r.d.b != nil {
		r.chunkOff += int64(r.chunkSize)
	}
	if len(r.buf) == 0 {
		r.buf = make([]byte, r.chunkSize)
	}
	n, err := io.ReadFull(r.r, r.buf[:min(len(r.buf), r.chunkSize)])
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return false, nil
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return false, fmt.Errorf("%s: offset %d: %w", r.name, r.chunkOff, err)
	}
	r.d = dec{b: r.buf[:n], file: r.name, base: r.chunkOff, big: r.d.big}
	if err := r.d.chunkHeader(true); err != nil {
		return false, err
	}
	r.inChunk = true
	return true, nil
}

// Next decodes the next event into e. It returns false at the end of the
// file. A file that ends without OTF2's end-of-file marker is reported as
// truncated.
func (r *EventReader) Next(e *Event) (bool, error) {
	for !r.done {
		if !r.inChunk {
			ok, err := r.nextChunk()
			if err != nil {
				return false, err
			}
			if !ok {
				r.done = true
				return false, &FormatError{File: r.name, Offset: r.chunkOff, Msg: "truncated event file: no end-of-file record"}
			}
		}
		d := &r.d
		if d.pos >= len(d.b) {
			return false, d.errf(d.pos, "truncated event file: chunk ends without an end-of-chunk record")
		}
		at := d.pos
		t := d.b[d.pos]
		d.pos++
		switch t {
		case recEndOfChunk, recEndOfBuffer:
			r.inChunk = false
			continue
		case recEndOfFile:
			r.done = true
			return false, nil
		case recTimestamp:
			v, err := d.u64full()
			if err != nil {
				return false, err
			}
			r.time = v
			continue
		case recAttrList:
			end, err := d.recordLen()
			if err != nil {
				return false, err
			}
			d.pos = end
			r.AttrLists++
			continue
		case recChunkHeader:
			return false, d.errf(at, "chunk header inside a chunk")
		}
		e.Type = t
		e.Time = r.time
		e.Offset = d.base + int64(at)
		e.A = [6]uint64{}
		if singleton[t] {
			width := 8
			if eventFields[t] == "u" {
				width = 4
			}
			v, err := d.compressed(width)
			if err != nil {
				return false, err
			}
			e.A[0] = v
			r.Events++
			return true, nil
		}
		end, err := d.recordLen()
		if err != nil {
			return false, err
		}
		if t < EvBufferFlush || t > evLastKnown {
			if r.Unknown == 0 {
				r.UnknownFirst = fmt.Sprintf("%s: offset %d: unknown event record type %d skipped", r.name, e.Offset, t)
			}
			r.Unknown++
			d.pos = end
			continue
		}
		if f := eventFields[t]; f != "" {
			if err := decodeFields(d, f, end, e.A[:]); err != nil {
				return false, err
			}
		}
		d.pos = end
		r.Events++
		return true, nil
	}
	return false, nil
}

// decodeFields decodes the attributes listed in spec inside a record ending
// at end; attributes past the end (an older writer) stay zero, later
// additions are skipped by the caller.
func decodeFields(d *dec, spec string, end int, out []uint64) error {
	full := d.b
	d.b = full[:end]
	err := decodeSpec(d, spec, end, out)
	d.b = full
	return err
}

func decodeSpec(d *dec, spec string, end int, out []uint64) error {
	j := 0 // in out
	for i := 0; i < len(spec) && d.pos < end; i++ {
		var v uint64
		var err error
		switch spec[i] {
		case fS32:
			if _, err = d.u32(); err != nil {
				var fe *FormatError
				if errors.As(err, &fe) {
					fe.Msg = "record: " + fe.Msg
				}
				return err
			}
			continue
		case fU8:
			var b uint8
			b, err = d.u8()
			v = uint64(b)
		case fU32:
			v, err = d.u32()
		case fU64:
			v, err = d.u64()
		case fF64:
			v, err = d.u64full()
		}
		if err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.Msg = "record: " + fe.Msg
			}
			return err
		}
		out[j] = v
		j++
	}
	return nil
}
