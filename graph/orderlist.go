package graph

// nodeList is the nodes of an Order in evaluation order, packed: each the
// difference from the one before, zigzag LEB128 (a chain's next node, most
// of them, is one byte where an int32 took four; 7 MB less on the 10
// M-event halo, at the forward replay's peak). It is read backward only
// (ReplayInReverse): a varint's last byte is the only one without the
// continuation bit, so the bytes before the end tell where it begins.
type nodeList struct {
	b    []byte
	n    int
	last int32
}

func newNodeList(capNodes int) nodeList {
	return nodeList{b: make([]byte, 0, capNodes+capNodes/8)}
}

func (l *nodeList) add(v int32) {
	d := int64(v) - int64(l.last)
	u := uint64(d<<1) ^ uint64(d>>63)
	for u >= 0x80 {
		l.b = append(l.b, byte(u)|0x80)
		u >>= 7
	}
	l.b = append(l.b, byte(u))
	l.last, l.n = v, l.n+1
}

func (l *nodeList) len() int { return l.n }

// backward reads a nodeList from its last node to its first.
type backward struct {
	b   []byte
	cur int32 // the node the next call returns
}

func (l *nodeList) backward() backward { return backward{b: l.b, cur: l.last} }

// next returns the current node and steps to the one before it; it must be
// called at most len() times.
func (r *backward) next() int32 {
	v := r.cur
	end := len(r.b)
	start := end - 1
	for start > 0 && r.b[start-1]&0x80 != 0 {
		start--
	}
	var u uint64
	for i := end - 1; i >= start; i-- {
		u = u<<7 | uint64(r.b[i]&0x7f)
	}
	d := int64(u>>1) ^ -int64(u&1)
	r.cur = int32(int64(v) - d)
	r.b = r.b[:start]
	return v
}
