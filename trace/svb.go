package trace

import (
	"encoding/binary"
	"fmt"
)

// Integer columns use a stream-vbyte layout: a control stream with a 2-bit
// length code per value (four values per byte, first value in the low bits)
// and a data stream holding each value little-endian in 0, 1, 3 or 8 bytes,
// followed by 8 zero bytes of padding. Decoding needs no branch per byte:
// one table lookup per control byte and one 8-byte load per value, several
// times faster than LEB128 varints (docs/PERFORMANCE.md). Zero gets its own
// code because most argument deltas are zero (same parent, same construct,
// same flags).

// svbPad is the zero padding after a data stream, so the decoder can load 8
// bytes at any value's position.
const svbPad = 8

var svbLen = [4]int{0, 1, 3, 8}

var svbMask = [4]uint64{0, 0xff, 0xffffff, ^uint64(0)}

func svbCode(v uint64) byte {
	switch {
	case v == 0:
		return 0
	case v < 1<<8:
		return 1
	case v < 1<<24:
		return 2
	}
	return 3
}

// svbAppend encodes vals into ctrl and data (appending).
func svbAppend(ctrl, data []byte, vals []uint64) ([]byte, []byte) {
	// Room for every value at full width plus padding, so each value is one
	// 8-byte store whose unused bytes the next value overwrites.
	pos := len(data)
	if need := pos + 8*len(vals) + svbPad; cap(data) < need {
		data = append(data[:cap(data)], make([]byte, need-cap(data))...)
	}
	data = data[:cap(data)]
	for i := 0; i < len(vals); i += 4 {
		var c byte
		for j := 0; j < 4 && i+j < len(vals); j++ {
			v := vals[i+j]
			code := svbCode(v)
			c |= code << (2 * j)
			binary.LittleEndian.PutUint64(data[pos:], v)
			pos += svbLen[code]
		}
		ctrl = append(ctrl, c)
	}
	clear(data[pos : pos+svbPad])
	return ctrl, data[:pos+svbPad]
}

// svbSize is, per control byte, the data bytes of its four values.
var svbSize = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		for j := 0; j < 4; j++ {
			t[c] += uint8(svbLen[(c>>(2*j))&3])
		}
	}
	return
}()

// svbCheck verifies that ctrl and data hold exactly n values plus padding,
// so svbDecode cannot run past them.
func svbCheck(ctrl, data []byte, n int) error {
	if len(ctrl) != (n+3)/4 {
		return fmt.Errorf("control stream has %d bytes for %d values, want %d", len(ctrl), n, (n+3)/4)
	}
	total := 0
	for i, c := range ctrl {
		if i == len(ctrl)-1 && n%4 != 0 {
			// Codes past the last value must be zero.
			if c>>(2*(n%4)) != 0 {
				return fmt.Errorf("control byte %d has codes past the last value", i)
			}
		}
		total += int(svbSize[c])
	}
	if len(data) != total+svbPad {
		return fmt.Errorf("data stream has %d bytes, its control stream describes %d plus %d of padding", len(data), total, svbPad)
	}
	return nil
}

// svbDecode decodes n values into out (len(out) >= n) and returns the data
// bytes they took. ctrl and data must have passed svbCheck, or be the
// remainders of such streams from a value index that is a multiple of 4.
func svbDecode(ctrl, data []byte, out []uint64, n int) int {
	out = out[:n]
	pos := 0
	i := 0
	for g := 0; i+4 <= n; g++ {
		c := ctrl[g]
		o := out[i : i+4 : i+4]
		o[0] = binary.LittleEndian.Uint64(data[pos:]) & svbMask[c&3]
		pos += svbLen[c&3]
		o[1] = binary.LittleEndian.Uint64(data[pos:]) & svbMask[(c>>2)&3]
		pos += svbLen[(c>>2)&3]
		o[2] = binary.LittleEndian.Uint64(data[pos:]) & svbMask[(c>>4)&3]
		pos += svbLen[(c>>4)&3]
		o[3] = binary.LittleEndian.Uint64(data[pos:]) & svbMask[c>>6]
		pos += svbLen[c>>6]
		i += 4
	}
	for ; i < n; i++ {
		code := (ctrl[i/4] >> (2 * (i % 4))) & 3
		out[i] = binary.LittleEndian.Uint64(data[pos:]) & svbMask[code]
		pos += svbLen[code]
	}
	return pos
}

// svbOffset returns the data offset of value i (for error messages).
func svbOffset(ctrl []byte, i int) int {
	pos := 0
	for j := 0; j < i; j++ {
		pos += svbLen[(ctrl[j/4]>>(2*(j%4)))&3]
	}
	return pos
}
