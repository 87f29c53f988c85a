package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A minimal msgpack scanner and emitter for chunk frames, the one hot path of
// the format: it reads map/str/int/bin without reflection or per-value
// allocation and returns sub-slices of the frame buffer. Header and table
// frames go through github.com/vmihailenco/msgpack instead.

var errShort = errors.New("msgpack value runs past the end of the frame")

type mpReader struct {
	b []byte
	p int
}

func (r *mpReader) need(n int) error {
	if n < 0 || r.p+n > len(r.b) || r.p+n < r.p {
		return errShort
	}
	return nil
}

func (r *mpReader) byte1() (byte, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	c := r.b[r.p]
	r.p++
	return c, nil
}

func (r *mpReader) uintN(n int) (uint64, error) {
	if err := r.need(n); err != nil {
		return 0, err
	}
	var v uint64
	switch n {
	case 1:
		v = uint64(r.b[r.p])
	case 2:
		v = uint64(binary.BigEndian.Uint16(r.b[r.p:]))
	case 4:
		v = uint64(binary.BigEndian.Uint32(r.b[r.p:]))
	case 8:
		v = binary.BigEndian.Uint64(r.b[r.p:])
	}
	r.p += n
	return v, nil
}

func (r *mpReader) mapLen() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch {
	case c&0xf0 == 0x80:
		return int(c & 0x0f), nil
	case c == 0xde:
		v, err := r.uintN(2)
		return int(v), err
	case c == 0xdf:
		v, err := r.uintN(4)
		return int(v), err
	}
	return 0, fmt.Errorf("expected a msgpack map, found type byte 0x%02x", c)
}

// strBytes reads a str (or bin, which some encoders use for keys).
func (r *mpReader) strBytes() ([]byte, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, err = r.uintN(1)
	case c == 0xda || c == 0xc5:
		n, err = r.uintN(2)
	case c == 0xdb || c == 0xc6:
		n, err = r.uintN(4)
	default:
		return nil, fmt.Errorf("expected a msgpack string, found type byte 0x%02x", c)
	}
	if err != nil {
		return nil, err
	}
	if err := r.need(int(n)); err != nil {
		return nil, err
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s, nil
}

func (r *mpReader) bin() ([]byte, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch c {
	case 0xc4:
		n, err = r.uintN(1)
	case 0xc5:
		n, err = r.uintN(2)
	case 0xc6:
		n, err = r.uintN(4)
	default:
		return nil, fmt.Errorf("expected msgpack bin, found type byte 0x%02x", c)
	}
	if err != nil {
		return nil, err
	}
	if err := r.need(int(n)); err != nil {
		return nil, err
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s, nil
}

func (r *mpReader) int() (int64, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	}
	switch c {
	case 0xcc, 0xcd, 0xce, 0xcf:
		v, err := r.uintN(1 << (c - 0xcc))
		if err == nil && v > math.MaxInt64 {
			return 0, fmt.Errorf("integer %d overflows int64", v)
		}
		return int64(v), err
	case 0xd0:
		v, err := r.uintN(1)
		return int64(int8(v)), err
	case 0xd1:
		v, err := r.uintN(2)
		return int64(int16(v)), err
	case 0xd2:
		v, err := r.uintN(4)
		return int64(int32(v)), err
	case 0xd3:
		v, err := r.uintN(8)
		return int64(v), err
	}
	return 0, fmt.Errorf("expected a msgpack integer, found type byte 0x%02x", c)
}

// skip passes over one value of any type; depth bounds nesting so corrupt
// input cannot recurse without end.
func (r *mpReader) skip(depth int) error {
	if depth > 32 {
		return errors.New("msgpack nesting deeper than 32")
	}
	c, err := r.byte1()
	if err != nil {
		return err
	}
	var n, elems uint64
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return nil
	case c&0xf0 == 0x80:
		elems = 2 * uint64(c&0x0f)
	case c&0xf0 == 0x90:
		elems = uint64(c & 0x0f)
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	default:
		switch c {
		case 0xc4, 0xd9:
			n, err = r.uintN(1)
		case 0xc5, 0xda:
			n, err = r.uintN(2)
		case 0xc6, 0xdb:
			n, err = r.uintN(4)
		case 0xcc, 0xd0:
			n = 1
		case 0xcd, 0xd1:
			n = 2
		case 0xce, 0xd2, 0xca:
			n = 4
		case 0xcf, 0xd3, 0xcb:
			n = 8
		case 0xd4:
			n = 2
		case 0xd5:
			n = 3
		case 0xd6:
			n = 5
		case 0xd7:
			n = 9
		case 0xd8:
			n = 17
		case 0xc7, 0xc8, 0xc9:
			n, err = r.uintN(1 << (c - 0xc7))
			n++ // the ext type byte
		case 0xdc:
			elems, err = r.uintN(2)
		case 0xdd:
			elems, err = r.uintN(4)
		case 0xde:
			elems, err = r.uintN(2)
			elems *= 2
		case 0xdf:
			elems, err = r.uintN(4)
			elems *= 2
		default:
			return fmt.Errorf("invalid msgpack type byte 0x%02x", c)
		}
	}
	if err != nil {
		return err
	}
	if n > 0 {
		if err := r.need(int(n)); err != nil {
			return err
		}
		r.p += int(n)
	}
	if elems > uint64(len(r.b)-r.p) { // each element takes at least one byte
		return errShort
	}
	for i := uint64(0); i < elems; i++ {
		if err := r.skip(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

func mpAppendMapLen(b []byte, n int) []byte {
	if n < 16 {
		return append(b, 0x80|byte(n))
	}
	return append(b, 0xde, byte(n>>8), byte(n))
}

func mpAppendStr(b []byte, s string) []byte {
	if len(s) < 32 {
		b = append(b, 0xa0|byte(len(s)))
	} else {
		b = append(b, 0xd9, byte(len(s)))
	}
	return append(b, s...)
}

func mpAppendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 0x7f:
		return append(b, byte(v))
	case v >= -32 && v < 0:
		return append(b, byte(v))
	case v >= 0 && v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
}

func mpAppendBin(b []byte, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(len(data)))
	return append(b, data...)
}
