package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// FrameKind says what a frame's payload holds.
type FrameKind uint8

const (
	FrameHeader    FrameKind = 1
	FrameChunk     FrameKind = 2
	FrameStrings   FrameKind = 3
	FrameThreads   FrameKind = 4
	FrameLocations FrameKind = 5
	FrameComms     FrameKind = 6
	FrameClock     FrameKind = 7
	FrameEnd       FrameKind = 8
)

func (k FrameKind) String() string {
	switch k {
	case FrameHeader:
		return "header"
	case FrameChunk:
		return "chunk"
	case FrameStrings:
		return "strings"
	case FrameThreads:
		return "threads"
	case FrameLocations:
		return "locations"
	case FrameComms:
		return "comms"
	case FrameClock:
		return "clock"
	case FrameEnd:
		return "end"
	}
	return fmt.Sprintf("frame(%d)", uint8(k))
}

// A frame is one msgpack array [kind, crc32c(payload), payload] with fixed-size
// encodings for its first two elements and payload as bin32, so the prefix is
// always frameHeaderLen bytes: 0x93, kind (positive fixint), 0xce + CRC-32C of kind and payload (4
// bytes big endian), 0xc6 + length (4 bytes big endian). The payload is one msgpack
// map. A file is a plain sequence of such arrays, so generic msgpack tools read
// it, and readers know every frame's byte offset and can check it before
// decoding it.
const frameHeaderLen = 12

// MaxFrameLen bounds a frame's payload: a corrupt length must not make a
// reader allocate gigabytes. Writers keep chunks far below it.
const MaxFrameLen = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameCRC is the CRC-32C of the kind byte followed by the payload, so a
// corrupt kind cannot pass as another valid frame.
func frameCRC(kind FrameKind, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum([]byte{byte(kind)}, castagnoli), castagnoli, payload)
}

func appendFrameHeader(b []byte, kind FrameKind, payload []byte) []byte {
	b = append(b, 0x93, byte(kind), 0xce)
	b = binary.BigEndian.AppendUint32(b, frameCRC(kind, payload))
	b = append(b, 0xc6)
	return binary.BigEndian.AppendUint32(b, uint32(len(payload)))
}

// parseFrameHeader checks the fixed prefix and returns kind, crc and length.
func parseFrameHeader(h []byte) (FrameKind, uint32, uint32, error) {
	if h[0] != 0x93 || h[2] != 0xce || h[7] != 0xc6 {
		return 0, 0, 0, fmt.Errorf("bad frame prefix % x (not a ptrace frame)", h[:frameHeaderLen])
	}
	if h[1] > 0x7f {
		return 0, 0, 0, fmt.Errorf("bad frame kind byte 0x%02x", h[1])
	}
	return FrameKind(h[1]), binary.BigEndian.Uint32(h[3:7]), binary.BigEndian.Uint32(h[8:12]), nil
}

// ErrTruncated marks a file that ends inside a frame.
var ErrTruncated = errors.New("file ends inside a frame (truncated)")

// FormatError is a problem with a trace file, located by byte offset.
type FormatError struct {
	File   string
	Offset int64     // byte offset of the frame (or of the problem when Frame is 0)
	Frame  FrameKind // 0 when the problem is not inside a frame
	Err    error
}

func (e *FormatError) Error() string {
	if e.Frame != 0 {
		return fmt.Sprintf("%s: offset %d (%s frame): %v", e.File, e.Offset, e.Frame, e.Err)
	}
	return fmt.Sprintf("%s: offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }
