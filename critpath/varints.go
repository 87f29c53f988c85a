package critpath

import "encoding/binary"

// varints reads varints off the front of b: what the ranks send rank 0
// (path node lists, their runs) is decoded with it, each read telling
// whether the bytes held a whole varint.
type varints struct{ b []byte }

func (r *varints) uvarint() (uint64, bool) {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return x, true
}

func (r *varints) varint() (int64, bool) {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		return 0, false
	}
	r.b = r.b[n:]
	return x, true
}
