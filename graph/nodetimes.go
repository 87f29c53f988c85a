package graph

// nodeTimes holds the matching's recorded times, appended in node order,
// in a narrow vstore: a process's nodes follow its merged walk, so 64
// nodes in a row mostly lie within 2.1 s of the first, and a time is 4.1
// bytes instead of 8 (22 MB less on the 10 M-event spread at the match's
// peak). Blocks that span more (a process's last nodes and the next one's
// first, the collective nodes' zeros after the event nodes) keep their
// values whole, and a store with too many of them turns wide (vstore).
type nodeTimes struct {
	v vstore
	n int32
}

// reserve makes room for k more times, copying those held once at most
// per doubling.
func (t *nodeTimes) reserve(k int) {
	need := int(t.n) + k
	if need <= t.v.len() {
		return
	}
	size := max(need, 2*t.v.len())
	var v vstore
	if t.v.wide != nil {
		v = newWideStore(size)
	} else {
		v = newNarrow32Store(size)
	}
	for i := range t.n {
		v.set(i, t.v.get(i))
	}
	t.v = v
}

// add appends x.
func (t *nodeTimes) add(x int64) {
	if int(t.n) == t.v.len() {
		t.reserve(max(64, int(t.n)))
	}
	t.v.set(t.n, x)
	t.n++
}

// at returns time n.
func (t *nodeTimes) at(n int32) int64 {
	if uint32(n) >= uint32(t.n) {
		panic("graph: node time out of range")
	}
	return t.v.get(n)
}
