package graph

import (
	"encoding/binary"
	"math/bits"
)

// The one side a DAG built InsOnly or OutsOnly keeps is packed: each entry
// of node n's list is a varint, the difference e − n (zigzag) shifted left
// with a 0 below for a local node e, the slot index shifted left with a 1
// below for a remote slot. The edges of a trace's graphs join nearby nodes
// (a task and the tasks created just before it, a fragment and the next
// ones of its process), so most entries take 1 or 2 bytes instead of 4;
// the offsets (inOff or outOff) count bytes.

// entryCode is the varint value of entry e in node n's list.
func entryCode(n int32, e Entry) uint64 {
	if e < 0 {
		return uint64(uint32(^int32(e)))<<1 | 1
	}
	d := int64(e) - int64(n)
	return uint64(d<<1^d>>63) << 1
}

// entryLen is the number of bytes of entry e in node n's list.
func entryLen(n int32, e Entry) int32 {
	return int32(bits.Len64(entryCode(n, e)|1)+6) / 7
}

// putEntry writes entry e of node n's list at the start of b and returns
// its length.
func putEntry(b []byte, n int32, e Entry) int32 {
	return int32(binary.PutUvarint(b, entryCode(n, e)))
}

// longCode returns the code of the first entry of a packed list p and its
// length, when it takes more than a byte (Build wrote whole varints, so
// the length is > 0). The loops that read a list test the one-byte case
// themselves, and call it only past it, out of line: the inliner would
// not take the whole.
//
//go:noinline
func longCode(p []byte) (uint64, int) {
	// Two and three bytes by hand (a node a few hundred to tens of
	// thousands of nodes away): binary.Uvarint's loop took 70
	// instructions a call.
	switch {
	case len(p) >= 2 && p[1] < 0x80:
		return uint64(p[0]&0x7f) | uint64(p[1])<<7, 2
	case len(p) >= 3 && p[2] < 0x80:
		return uint64(p[0]&0x7f) | uint64(p[1]&0x7f)<<7 | uint64(p[2])<<14, 3
	}
	return binary.Uvarint(p)
}

// decodeEntry is the entry of node n's list whose code is v.
func decodeEntry(n int32, v uint64) Entry {
	if v&1 != 0 {
		return Entry(^int32(v >> 1))
	}
	z := v >> 1
	return Entry(int64(n) + (int64(z>>1) ^ -int64(z&1)))
}

// appendEntries decodes node n's packed list p onto buf.
func appendEntries(buf []Entry, n int32, p []byte) []Entry {
	for len(p) > 0 {
		v, k := uint64(p[0]), 1
		if v >= 0x80 {
			v, k = longCode(p)
		}
		buf, p = append(buf, decodeEntry(n, v)), p[k:]
	}
	return buf
}

// countEntries returns the number of entries in a packed list: each
// varint ends with the one byte below 0x80.
func countEntries(p []byte) int32 {
	var k int32
	for _, b := range p {
		if b < 0x80 {
			k++
		}
	}
	return k
}

// entries returns the number of entries of one side of a DAG: its list,
// or, packed, its varints (Edges only: a pass over the bytes).
func entries(list []Entry, pk []byte) int64 {
	if pk != nil {
		return int64(countEntries(pk))
	}
	return int64(len(list))
}
