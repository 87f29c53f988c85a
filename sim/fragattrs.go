package sim

import (
	"encoding/binary"
	"math/bits"
)

// Attr is what the report says of a fragment node: its kind, the thread it
// ran on (−1 for a barrier's join), its construct and when it began.
type Attr struct {
	Kind   FragKind
	Thread int32
	Loc    int32 // construct (location id); for MPI nodes the call site (an index of Frags.MPISites)
	Start  int64
}

// Attrs holds the attributes of a process's fragment nodes compactly. Only
// the critical path's own nodes (a few percent) are ever looked at, so
// they need not be four columns of 17 bytes a node that stay live from the
// simulation to the end of the critical path: each block of attrBlock nodes is a varint stream of
// the kind and the differences of thread, location and start from the
// node before (nodes are made in simulation order, so starts differ by
// little), about 5–6 bytes a node.
type Attrs struct {
	data []byte
	off  []int64 // per block: where its stream begins in data
	n    int
}

const attrBlock = 64

// Len returns the number of nodes.
func (a *Attrs) Len() int { return a.n }

// attrEncoder appends nodes' attributes to an Attrs.
type attrEncoder struct {
	a    *Attrs
	prev Attr
}

func (e *attrEncoder) add(v Attr) {
	a := e.a
	if a.n%attrBlock == 0 {
		a.off = append(a.off, int64(len(a.data)))
		e.prev = Attr{}
	}
	// One store of the slice: each is a write barrier while the collector
	// runs.
	d := append(a.data, byte(v.Kind))
	d = binary.AppendVarint(d, int64(v.Thread)-int64(e.prev.Thread))
	d = binary.AppendVarint(d, int64(v.Loc)-int64(e.prev.Loc))
	a.data = binary.AppendVarint(d, v.Start-e.prev.Start) // wraps for extreme values, and unwraps the same
	e.prev = v
	a.n++
}

// attrSizer counts the bytes an attrEncoder appends for the same nodes,
// so that Attrs is allocated once at its size, from the varints' lengths
// without writing them.
type attrSizer struct {
	n     int
	prev  Attr
	bytes int
}

func newAttrSizer() *attrSizer { return &attrSizer{} }

func (z *attrSizer) add(v Attr) {
	if z.n%attrBlock == 0 {
		z.prev = Attr{}
	}
	z.bytes += 1 + varintLen(int64(v.Thread)-int64(z.prev.Thread)) + varintLen(int64(v.Loc)-int64(z.prev.Loc)) + varintLen(v.Start-z.prev.Start)
	z.prev = v
	z.n++
}

// varintLen is the length of binary.AppendVarint's encoding of x.
func varintLen(x int64) int {
	ux := uint64(x) << 1
	if x < 0 {
		ux = ^ux
	}
	return (bits.Len64(ux|1) + 6) / 7
}

// attrReader decodes an Attrs forward from a block's beginning.
type attrReader struct {
	a    *Attrs
	pos  int
	prev Attr
}

func (r *attrReader) seekBlock(b int) {
	r.pos, r.prev = int(r.a.off[b]), Attr{}
}

func (r *attrReader) next() Attr {
	d := r.a.data
	v := Attr{Kind: FragKind(d[r.pos])}
	r.pos++
	dt, k := binary.Varint(d[r.pos:])
	r.pos += k
	dl, k := binary.Varint(d[r.pos:])
	r.pos += k
	ds, k := binary.Varint(d[r.pos:])
	r.pos += k
	v.Thread = int32(int64(r.prev.Thread) + dt)
	v.Loc = int32(int64(r.prev.Loc) + dl)
	v.Start = r.prev.Start + ds
	r.prev = v
	return v
}

// At returns node n's attributes, decoding at most a block.
func (a *Attrs) At(n int32) Attr {
	r := attrReader{a: a}
	b := int(n) / attrBlock
	r.seekBlock(b)
	var v Attr
	for i := b * attrBlock; i <= int(n); i++ {
		v = r.next()
	}
	return v
}

// AttrCursor reads attributes of nodes in increasing order, as a critical
// path visits a process's nodes: a node after the last one read in the
// same block continues its decoding instead of starting the block again.
// The zero AttrCursor is not usable; get one from Attrs.Cursor.
type AttrCursor struct {
	r    attrReader
	last int32 // the node read last, −1 none
	v    Attr  // its attributes
}

// Cursor returns a cursor over a's nodes.
func (a *Attrs) Cursor() AttrCursor { return AttrCursor{r: attrReader{a: a}, last: -1} }

// At returns node n's attributes.
func (c *AttrCursor) At(n int32) Attr {
	if n == c.last {
		return c.v
	}
	b := int(n) / attrBlock
	i := int(c.last) + 1
	if c.last < 0 || n < c.last || b != int(c.last)/attrBlock {
		c.r.seekBlock(b)
		i = b * attrBlock
	}
	for ; i <= int(n); i++ {
		c.v = c.r.next()
	}
	c.last = n
	return c.v
}

// Bytes returns the memory the attributes hold.
func (a *Attrs) Bytes() int { return cap(a.data) + 8*cap(a.off) }
