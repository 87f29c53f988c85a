package trace

import (
	"encoding/binary"
	"fmt"
	"unsafe"
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

// svbCheck verifies that ctrl holds the codes of exactly n values and, if
// lengths, that data holds their bytes plus padding, so that svbDecode
// cannot run past them. Without lengths svbDecode and svbTimes are still
// safe, but they may read the padding or report that the data ended
// first (−1).
func svbCheck(ctrl, data []byte, n int, lengths bool) error {
	if len(ctrl) != (n+3)/4 {
		return fmt.Errorf("control stream has %d bytes for %d values, want %d", len(ctrl), n, (n+3)/4)
	}
	if n%4 != 0 && ctrl[len(ctrl)-1]>>(2*(n%4)) != 0 {
		// Codes past the last value must be zero.
		return fmt.Errorf("control byte %d has codes past the last value", len(ctrl)-1)
	}
	if !lengths {
		return nil
	}
	if total := svbDataLen(ctrl); len(data) != total+svbPad {
		return fmt.Errorf("data stream has %d bytes, its control stream describes %d plus %d of padding", len(data), total, svbPad)
	}
	return nil
}

// svbDataLen returns the data bytes the values of ctrl take, eight control
// bytes a step (one bounds check for eight table lookups).
func svbDataLen(ctrl []byte) int {
	total := 0
	for len(ctrl) >= 8 {
		c := (*[8]byte)(ctrl)
		total += int(svbSize[c[0]]) + int(svbSize[c[1]]) + int(svbSize[c[2]]) + int(svbSize[c[3]]) +
			int(svbSize[c[4]]) + int(svbSize[c[5]]) + int(svbSize[c[6]]) + int(svbSize[c[7]])
		ctrl = ctrl[8:]
	}
	for _, c := range ctrl {
		total += int(svbSize[c])
	}
	return total
}

// svbTab[c] is what svbGroupsDecode and svbTimeGroups need of control
// byte c in one place: the masks that keep, of each of its four 8-byte
// loads, the bytes of its value; the data offsets of its values 1 to 3
// from the group's first byte (value 0 is at 0); and the group's data
// bytes. With the offsets known up front, the four loads of a group do
// not wait for each other, and the position moves once a group. Each
// offset is a word the load's address takes as it is: packed in a uint32
// they took a shift and a mask each, and as bytes an address of their own
// (the compiler folds a byte load's constant offset only into an address
// with an index of scale 1). 64 bytes an entry, 16 KiB in all, of which a
// trace's streams use a few entries.
var svbTab = func() (t [256]svbEntry) {
	for c := range t {
		pos := 0
		for j := range 4 {
			if j > 0 {
				t[c].off[j-1] = uintptr(pos)
			}
			code := (c >> (2 * j)) & 3
			t[c].mask[j] = svbMask[code]
			pos += svbLen[code]
		}
		t[c].off[3] = uintptr(pos)
	}
	return
}()

// svbEntry is an entry of svbTab.
type svbEntry struct {
	mask [4]uint64
	off  [4]uintptr // values 1, 2, 3; then the group's size
}

// svbWindow is the data svbGroupsDecode reads a group from: its values
// start at most 24 bytes in and take 8 bytes each, and the group moves the
// position by at most 32.
const svbWindow = 64

// svbDecode decodes n values into out (len(out) >= n) and returns the data
// bytes they took. ctrl and data must have passed svbCheck, or be the
// remainders of such streams from a value index that is a multiple of 4;
// if svbCheck did not check the data's length, it may return more bytes
// than data has (the values read the padding or the copied tail's zeros)
// or −1 (data ends before the values do).
func svbDecode(ctrl, data []byte, out []uint64, n int) int {
	return svbDecodeAs(ctrl, data, out, n, false)
}

// svbDecodeAs is svbDecode, each value v stored as zz(v) with zigzag
// (svbDecodeZZ).
func svbDecodeAs(ctrl, data []byte, out []uint64, n int, zigzag bool) int {
	out = out[:n]
	pos, i := svbGroups(ctrl, data, out, zigzag)
	base := 0
	if i+4 <= n {
		// The groups left start within svbWindow of the data's end (where
		// mostly zero and one-byte values put hundreds of them): decode
		// them from a copy with room after it.
		var tail [2 * svbWindow]byte
		base = pos
		copy(tail[:], data[pos:])
		data = tail[:]
		var j int
		pos, j = svbGroups(ctrl[i/4:], data, out[i:], zigzag)
		i += j
	}
	for ; i < n; i++ {
		if len(data)-pos < 8 {
			return -1 // data not checked (svbCheck) and short
		}
		code := (ctrl[i/4] >> (2 * (i % 4))) & 3
		v := binary.LittleEndian.Uint64(data[pos:]) & svbMask[code]
		if zigzag {
			v = uint64(zz(v))
		}
		out[i] = v
		pos += svbLen[code]
	}
	return base + pos
}

// svbGroups is svbGroupsZZ with zigzag, svbGroupsDecode otherwise.
func svbGroups(ctrl, data []byte, out []uint64, zigzag bool) (pos, i int) {
	if zigzag {
		return svbGroupsZZ(ctrl, data, out)
	}
	return svbGroupsDecode(ctrl, data, out, &svbTab)
}

// svbGroupsDecode decodes whole groups of four values into out while they
// start at least svbWindow bytes before the end of data, and returns the
// data bytes and the values they took.
//
// It reads and writes through unsafe pointers: the loop's guard bounds
// every access (the comment in it says how), and the compiler, short of
// machine registers with slices (a pointer, length and capacity each, and
// the masking of resliced pointers), spilled and reloaded six values a
// group and checked the bounds twice: 57 instructions a group against 29
// here (docs/PERFORMANCE.md, twenty-second and twenty-third rounds).
// tab is svbTab, passed so that its address stays in a machine register.
// TestSvbDecode covers it across the window's edge; the fuzz targets run
// it on arbitrary streams that passed svbCheck.
func svbGroupsDecode(ctrl, data []byte, out []uint64, tab *[256]svbEntry) (pos, i int) {
	ng := min(len(out)/4, len(ctrl))
	if ng == 0 || len(data) < svbWindow {
		return 0, 0
	}
	lim := uintptr(len(data) - svbWindow)
	cp, dp, op := unsafe.Pointer(&ctrl[0]), unsafe.Pointer(&data[0]), unsafe.Pointer(&out[0])
	p := uintptr(0)
	g := uintptr(0)
	// Safe: g < ng ≤ len(ctrl) and 4g+3 < 4ng ≤ len(out); a group reads
	// data[p+off : p+off+8] with off ≤ 24 and p ≤ lim = len(data)−64.
	// Four groups a turn while four are left and the last starts within
	// lim (a group moves p by at most 32): one test of the bounds for
	// them all.
	for ; g+3 < uintptr(ng) && p+96 <= lim; g += 4 {
		o := unsafe.Add(op, 32*g)
		p += svbGroup(o, unsafe.Add(dp, p), &tab[*(*byte)(unsafe.Add(cp, g+0))])
		p += svbGroup(unsafe.Add(o, 32), unsafe.Add(dp, p), &tab[*(*byte)(unsafe.Add(cp, g+1))])
		p += svbGroup(unsafe.Add(o, 64), unsafe.Add(dp, p), &tab[*(*byte)(unsafe.Add(cp, g+2))])
		p += svbGroup(unsafe.Add(o, 96), unsafe.Add(dp, p), &tab[*(*byte)(unsafe.Add(cp, g+3))])
	}
	for ; g < uintptr(ng) && p <= lim; g++ {
		p += svbGroup(unsafe.Add(op, 32*g), unsafe.Add(dp, p), &tab[*(*byte)(unsafe.Add(cp, g))])
	}
	return int(p), 4 * int(g)
}

// svbGroup decodes the group of four values at q into o by its control
// byte's table entry t and returns the bytes it took; its callers bound
// q and o (svbDecode's loops).
func svbGroup(o, q unsafe.Pointer, t *svbEntry) uintptr {
	v := (*[4]uint64)(o)
	v[0] = *(*uint64)(q) & t.mask[0]
	v[1] = *(*uint64)(unsafe.Add(q, t.off[0])) & t.mask[1]
	v[2] = *(*uint64)(unsafe.Add(q, t.off[1])) & t.mask[2]
	v[3] = *(*uint64)(unsafe.Add(q, t.off[2])) & t.mask[3]
	return t.off[3]
}

// svbTimes decodes n time deltas (n ≤ len(out)) as svbDecode does and
// sets the times of out[:n]: each the time before it (t for the first)
// plus its zig-zag delta. It returns the data bytes the deltas took and
// the last time. ctrl and data as for svbDecode.
func svbTimes(ctrl, data []byte, out []Event, n int, t int64) (int, int64) {
	out = out[:n]
	pos, i, t := svbTimeGroups(ctrl, data, out, t, &svbTab)
	base := 0
	if i+4 <= n {
		// As in svbDecode: the groups left start within svbWindow of the
		// data's end, decoded from a copy with room after it.
		var tail [2 * svbWindow]byte
		base = pos
		copy(tail[:], data[pos:])
		data = tail[:]
		var j int
		pos, j, t = svbTimeGroups(ctrl[i/4:], data, out[i:], t, &svbTab)
		i += j
	}
	for ; i < n; i++ {
		if len(data)-pos < 8 {
			return -1, t // data not checked (svbCheck) and short
		}
		code := (ctrl[i/4] >> (2 * (i % 4))) & 3
		t += zz(binary.LittleEndian.Uint64(data[pos:]) & svbMask[code])
		out[i].Time = t
		pos += svbLen[code]
	}
	return base + pos, t
}

// svbTimeGroups is svbGroupsDecode for svbTimes: it sets the times of
// whole groups of four events of out while their deltas start at least
// svbWindow bytes before the end of data, and returns the data bytes and
// the events they took and the last time. A group whose four deltas are
// zero (control byte 0: three in four of a generated stencil's) only
// stores its times.
//
// Safe, as svbGroupsDecode: g < ng ≤ len(ctrl) and 4g+3 < 4ng ≤
// len(out); a group reads data[p+off : p+off+8] with off ≤ 24 and p ≤
// lim = len(data)−64.
func svbTimeGroups(ctrl, data []byte, out []Event, t int64, tab *[256]svbEntry) (pos, i int, last int64) {
	ng := min(len(out)/4, len(ctrl))
	if ng == 0 || len(data) < svbWindow {
		return 0, 0, t
	}
	lim := uintptr(len(data) - svbWindow)
	cp, dp, op := unsafe.Pointer(&ctrl[0]), unsafe.Pointer(&data[0]), unsafe.Pointer(&out[0])
	p := uintptr(0)
	g := uintptr(0)
	for ; g < uintptr(ng) && p <= lim; g++ {
		c := *(*byte)(unsafe.Add(cp, g))
		if c == 0 {
			// Zero deltas come in runs (whole chunks of a generated
			// stencil's threads): four groups at a time while they last.
			// Safe: g+3 < ng, so the 16 events are in out.
			if g+3 < uintptr(ng) && *(*uint32)(unsafe.Add(cp, g)) == 0 {
				o := (*[16]Event)(unsafe.Add(op, 4*unsafe.Sizeof(Event{})*g))
				o[0].Time, o[1].Time, o[2].Time, o[3].Time = t, t, t, t
				o[4].Time, o[5].Time, o[6].Time, o[7].Time = t, t, t, t
				o[8].Time, o[9].Time, o[10].Time, o[11].Time = t, t, t, t
				o[12].Time, o[13].Time, o[14].Time, o[15].Time = t, t, t, t
				g += 3
				continue
			}
			o := (*[4]Event)(unsafe.Add(op, 4*unsafe.Sizeof(Event{})*g))
			o[0].Time, o[1].Time, o[2].Time, o[3].Time = t, t, t, t
			continue
		}
		o := (*[4]Event)(unsafe.Add(op, 4*unsafe.Sizeof(Event{})*g))
		e := &tab[c]
		q := unsafe.Add(dp, p)
		t += zz(*(*uint64)(q) & e.mask[0])
		o[0].Time = t
		t += zz(*(*uint64)(unsafe.Add(q, e.off[0])) & e.mask[1])
		o[1].Time = t
		t += zz(*(*uint64)(unsafe.Add(q, e.off[1])) & e.mask[2])
		o[2].Time = t
		t += zz(*(*uint64)(unsafe.Add(q, e.off[2])) & e.mask[3])
		o[3].Time = t
		p += e.off[3]
	}
	return int(p), 4 * int(g), t
}

// svbOffset returns the data offset of value i (for error messages).
func svbOffset(ctrl []byte, i int) int {
	pos := 0
	for j := 0; j < i; j++ {
		pos += svbLen[(ctrl[j/4]>>(2*(j%4)))&3]
	}
	return pos
}
