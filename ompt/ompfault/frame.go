package ompfault

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/ptrace-dev/ptrace/trace"
)

// RewriteFrame replaces the payload of the first frame of kind with what f
// makes of it, and repairs the frame's length and CRC-32C (docs/trace-format.md).
func RewriteFrame(file string, kind trace.FrameKind, f func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	for off := 0; off+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off+8:]))
		end := off + 12 + n
		if end > len(b) {
			break
		}
		if trace.FrameKind(b[off+1]) == kind {
			payload, err := f(b[off+12 : end])
			if err != nil {
				return err
			}
			var out bytes.Buffer
			out.Write(b[:off])
			crc := crc32.Update(crc32.Checksum([]byte{byte(kind)}, table), table, payload)
			out.Write([]byte{0x93, byte(kind), 0xce})
			binary.Write(&out, binary.BigEndian, crc)
			out.WriteByte(0xc6)
			binary.Write(&out, binary.BigEndian, uint32(len(payload)))
			out.Write(payload)
			out.Write(b[end:])
			return os.WriteFile(file, out.Bytes(), 0o644)
		}
		off = end
	}
	return fmt.Errorf("%s: no %s frame", file, kind)
}
