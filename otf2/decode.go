// Package otf2 reads OTF2 archives (the trace format of Score-P, Scalasca,
// Vampir and TAU) without cgo and converts one location group at a time into
// ptrace's own trace format through trace.Writer. It owns the OTF2 byte-level
// decoding (anchor file, global and local definitions, per-location event
// files of the POSIX substrate) and the mapping of OTF2 records onto ptrace
// events; docs/otf2.md describes both.
package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Buffer-level record types shared by every OTF2 file (OTF2_Buffer.h).
const (
	recEndOfChunk  = 0
	recEndOfBuffer = 1
	recEndOfFile   = 2
	recChunkHeader = 3
	recTimestamp   = 5
	recAttrList    = 6
)

// Endianness markers of a chunk header.
const (
	bigEndian    = 0x23
	littleEndian = 0x42
)

// errShort is wrapped into decode errors caused by data ending too early.
var errShort = errors.New("unexpected end of data")

// FormatError is a decoding error naming the file and byte offset.
type FormatError struct {
	File   string
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Msg)
}

// dec reads OTF2's encodings from one chunk held in memory. base is the file
// offset of b[0], so errors name file offsets.
type dec struct {
	b    []byte
	pos  int
	big  bool
	file string
	base int64
}

func (d *dec) errf(at int, format string, args ...any) error {
	return &FormatError{File: d.file, Offset: d.base + int64(at), Msg: fmt.Sprintf(format, args...)}
}

func (d *dec) u8() (uint8, error) {
	if d.pos >= len(d.b) {
		return 0, d.errf(d.pos, "%v", errShort)
	}
	v := d.b[d.pos]
	d.pos++
	return v, nil
}

// compressed reads OTF2's compressed unsigned integer of at most max bytes:
// a length byte (0 for the value 0, 0xff for all ones) followed by that many
// bytes in the chunk's byte order.
func (d *dec) compressed(max int) (uint64, error) {
	if d.pos >= len(d.b) {
		return 0, d.errf(d.pos, "%v", errShort)
	}
	n := int(d.b[d.pos])
	switch {
	case n == 0:
		d.pos++
		return 0, nil
	case n == 0xff:
		d.pos++
		if max == 4 {
			return 0xffffffff, nil
		}
		return ^uint64(0), nil
	case n > max:
		return 0, d.errf(d.pos, "corrupt compressed integer: length byte %d exceeds %d", n, max)
	}
	if d.pos+9 <= len(d.b) {
		// Eight bytes after the length byte are there to read at once
		// and trim to its n (1..8): no loop over the bytes.
		w := d.b[d.pos+1 : d.pos+9]
		d.pos += 1 + n
		if d.big {
			return binary.BigEndian.Uint64(w) >> (64 - 8*n), nil
		}
		return binary.LittleEndian.Uint64(w) & (^uint64(0) >> (64 - 8*n)), nil
	}
	if d.pos+1+n > len(d.b) {
		return 0, d.errf(d.pos, "compressed integer of %d bytes: %v", n, errShort)
	}
	p := d.b[d.pos+1 : d.pos+1+n]
	d.pos += 1 + n
	var v uint64
	if d.big {
		for _, c := range p {
			v = v<<8 | uint64(c)
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(p[i])
		}
	}
	return v, nil
}

func (d *dec) u32() (uint64, error) { return d.compressed(4) }
func (d *dec) u64() (uint64, error) { return d.compressed(8) }

func (d *dec) u64full() (uint64, error) {
	if d.pos+8 > len(d.b) {
		return 0, d.errf(d.pos, "%v", errShort)
	}
	var v uint64
	if d.big {
		v = binary.BigEndian.Uint64(d.b[d.pos:])
	} else {
		v = binary.LittleEndian.Uint64(d.b[d.pos:])
	}
	d.pos += 8
	return v, nil
}

func (d *dec) u32full() (uint32, error) {
	if d.pos+4 > len(d.b) {
		return 0, d.errf(d.pos, "%v", errShort)
	}
	var v uint32
	if d.big {
		v = binary.BigEndian.Uint32(d.b[d.pos:])
	} else {
		v = binary.LittleEndian.Uint32(d.b[d.pos:])
	}
	d.pos += 4
	return v, nil
}

func (d *dec) str() (string, error) {
	for i := d.pos; i < len(d.b); i++ {
		if d.b[i] == 0 {
			s := string(d.b[d.pos:i])
			d.pos = i + 1
			return s, nil
		}
	}
	return "", d.errf(d.pos, "string without terminating NUL: %v", errShort)
}

// recordLen reads a record's length (one byte, or 0xff and eight bytes) and
// returns the end position of the record, checked against the chunk.
func (d *dec) recordLen() (int, error) {
	at := d.pos
	n, err := d.u8()
	if err != nil {
		return 0, err
	}
	l := uint64(n)
	if n == 0xff {
		if l, err = d.u64full(); err != nil {
			return 0, err
		}
	}
	if l > uint64(len(d.b)-d.pos) {
		return 0, d.errf(at, "record length %d exceeds the %d bytes left in the chunk", l, len(d.b)-d.pos)
	}
	return d.pos + int(l), nil
}

// chunkHeader reads a chunk header and sets the byte order.
func (d *dec) chunkHeader(chunked bool) error {
	t, err := d.u8()
	if err != nil {
		return err
	}
	if t != recChunkHeader {
		return d.errf(d.pos-1, "no chunk header (byte %#x)", t)
	}
	e, err := d.u8()
	if err != nil {
		return err
	}
	switch e {
	case bigEndian:
		d.big = true
	case littleEndian:
		d.big = false
	default:
		return d.errf(d.pos-1, "invalid endianness byte %#x", e)
	}
	if chunked {
		if _, err := d.u64full(); err != nil {
			return err
		}
		if _, err := d.u64full(); err != nil {
			return err
		}
	}
	return nil
}
