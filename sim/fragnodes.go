package sim

import (
	"encoding/binary"
	"slices"
)

// fragNodes holds the fragment nodes while the graph grows. A node changes
// while its fragment is open (its weight when it closes, its start for a
// barrier's join as members arrive, its thread when a re-queued task
// resumes elsewhere), which for nearly every node is while a few thousand
// nodes more are made: the latest nodes (up to fragWindow) are plain
// records in a ring, and each block of fragBlock nodes the ring moves past
// is encoded at once into its final form, the attributes (Attrs) and the
// weights, a few bytes a node (16 while the whole graph was kept as
// records until the simulation's end, and copied then). A node changed
// after its block was encoded (a join that completions keep moving, a
// fragment open for long) is kept aside as a record from then on (late),
// and its block encoded again at the end.
type fragNodes struct {
	n   int32      // nodes made
	enc int32      // nodes encoded: [0, enc) are in attrs and weights, [enc, n) in win
	win []openNode // node i at win[i&(len(win)-1)]: a power of two, fragBlock or more

	attrs   Attrs
	weights blockStream // per block, each weight a uvarint of its uint64 bits
	work    int64       // Σ weights of task, region and serial nodes encoded
	// wide: a block was encoded with a weight outside [0, 2³²) (a
	// patched block's earlier values included: it only ever errs wide).
	wide bool

	late     map[int32]*openNode // encoded nodes changed since, as they are now
	lateAt   int32               // the late node looked up last, and its record
	lateNode *openNode

	buf  []byte // a block's encoding
	wbuf []byte // a weights' block read back from the spill file
	abuf []byte // an attributes' block read back from the spill file
}

// openNode is a node's record while it may change.
type openNode struct {
	start, weight int64
	wait          int64 // Attr.Wait
	thread, loc   int32 // thread −1 for a join
	kind          FragKind
}

func (n *openNode) attr() Attr {
	return Attr{Kind: n.kind, Thread: n.thread, Loc: n.loc, Start: n.start, Wait: n.wait}
}

// counts reports whether n's weight counts as work (T1).
func (n *openNode) counts() bool {
	return n.kind == FragTask || n.kind == FragImplicit || n.kind == FragSerial
}

const (
	fragBlock = 64
	// fragWindow is how many of the latest nodes stay records: 160 KiB.
	// Nearly every node is final before 4096 more are made (on the
	// 10 M-event gen traces and a recorded fib, a few nodes a process
	// change later: barriers' joins).
	fragWindow = 4096
)

func (c *fragNodes) len() int { return int(c.n) }

// reset empties c for a new graph, keeping its ring and table.
func (c *fragNodes) reset() {
	clear(c.late)
	*c = fragNodes{win: c.win, late: c.late, lateAt: -1, buf: c.buf[:0], wbuf: c.wbuf, abuf: c.abuf}
}

// streamTo makes the encoded blocks go to f as they fill chunks (nil:
// they stay in memory until Frags.Spill, or the critical path).
func (c *fragNodes) streamTo(f SpillFile) {
	c.attrs.s.streamTo(f)
	c.weights.streamTo(f)
}

// add appends a node of kind k on thread th (−1 for a join) at loc,
// starting at start and weighing nothing, and returns it.
func (c *fragNodes) add(k FragKind, th int, loc int32, start int64) int32 {
	i := c.n
	if int(i-c.enc) == len(c.win) {
		c.makeRoom()
	}
	c.win[int(i)&(len(c.win)-1)] = openNode{start: start, thread: int32(th), loc: loc, kind: k}
	c.n++
	return i
}

// makeRoom makes room in the full ring for one more node: a larger ring
// up to fragWindow (a small process's graph stays small), then by
// encoding the oldest block.
//
//go:noinline
func (c *fragNodes) makeRoom() {
	if len(c.win) < fragWindow {
		w := make([]openNode, max(2*len(c.win), fragBlock))
		for i := c.enc; i < c.n; i++ {
			w[int(i)&(len(w)-1)] = c.win[int(i)&(len(c.win)-1)]
		}
		c.win = w
		return
	}
	c.encode(fragBlock)
}

// encode encodes the ring's oldest block, of m nodes (fragBlock but for a
// graph's last block).
func (c *fragNodes) encode(m int) {
	b := int(c.enc / fragBlock)
	at := int(c.enc) & (len(c.win) - 1) // a block is whole in the ring: both are multiples of fragBlock
	c.put(b, c.win[at:at+m])
	c.attrs.n += m
	c.enc += int32(m)
}

// put writes block b's nodes into attrs and weights, and adds their work.
func (c *fragNodes) put(b int, nodes []openNode) {
	c.buf = appendAttrs(c.buf[:0], nodes)
	c.attrs.setBlock(b, c.buf)
	d := c.buf[:0]
	for k := range nodes {
		nd := &nodes[k]
		d = binary.AppendUvarint(d, uint64(nd.weight))
		c.wide = c.wide || uint64(nd.weight) >= 1<<32
		if nd.counts() {
			c.work += nd.weight
		}
	}
	c.buf = d
	c.weights.set(b, d)
}

// get returns node i's record, to read or change: a record of the ring
// (valid until the next add) or, for an encoded node, the one kept aside
// for it from now on.
func (c *fragNodes) get(i int32) *openNode {
	if i >= c.enc {
		return &c.win[int(i)&(len(c.win)-1)]
	}
	if i == c.lateAt && c.lateNode != nil {
		return c.lateNode
	}
	return c.getLate(i)
}

//go:noinline
func (c *fragNodes) getLate(i int32) *openNode {
	nd, ok := c.late[i]
	if !ok {
		v := c.decode(i)
		nd = &v
		if c.late == nil {
			c.late = map[int32]*openNode{}
		}
		c.late[i] = nd
	}
	c.lateAt, c.lateNode = i, nd
	return nd
}

// peek returns node i as it is now, without keeping an encoded node aside.
func (c *fragNodes) peek(i int32) openNode {
	if i >= c.enc {
		return c.win[int(i)&(len(c.win)-1)]
	}
	if nd, ok := c.late[i]; ok {
		return *nd
	}
	return c.decode(i)
}

// decode returns encoded node i as it was encoded.
func (c *fragNodes) decode(i int32) openNode {
	var nodes [fragBlock]openNode
	k := int(i) % fragBlock
	c.decodeBlock(int(i)/fragBlock, nodes[:k+1])
	return nodes[k]
}

// decodeBlock decodes the first len(dst) nodes of block b into dst.
func (c *fragNodes) decodeBlock(b int, dst []openNode) {
	r := attrReader{a: &c.attrs, buf: c.abuf}
	r.seekBlock(b)
	c.abuf = r.buf
	d, pos := c.weights.read(b, &c.wbuf), 0
	for k := range dst {
		a := r.next()
		w, m := binary.Uvarint(d[pos:])
		pos += m
		dst[k] = openNode{start: a.Start, weight: int64(w), wait: a.Wait, thread: a.Thread, loc: a.Loc, kind: a.Kind}
	}
}

// finish encodes the nodes still in the ring and again the blocks of the
// nodes kept aside, and returns the graph's attributes, weights and work,
// and whether every weight is known to lie in [0, 2³²).
func (c *fragNodes) finish() (Attrs, blockStream, int64, bool) {
	for c.enc < c.n {
		c.encode(min(fragBlock, int(c.n-c.enc)))
	}
	if len(c.late) > 0 {
		c.patch()
	}
	c.attrs.s.trim()
	c.weights.trim()
	a, w, work, narrow := c.attrs, c.weights, c.work, !c.wide
	c.attrs, c.weights, c.work, c.wide = Attrs{}, blockStream{}, 0, false
	return a, w, work, narrow
}

// patch encodes again the blocks of the nodes kept aside, with their
// records' values, and corrects the work for them.
func (c *fragNodes) patch() {
	late := make([]int32, 0, len(c.late))
	for i := range c.late {
		late = append(late, i)
	}
	slices.Sort(late)
	var nodes [fragBlock]openNode
	for k := 0; k < len(late); {
		b := int(late[k]) / fragBlock
		lo := int32(b * fragBlock)
		m := min(fragBlock, int(c.n-lo))
		c.decodeBlock(b, nodes[:m])
		for j := range m { // put adds the block's work again
			if nodes[j].counts() {
				c.work -= nodes[j].weight
			}
		}
		for ; k < len(late) && int(late[k])/fragBlock == b; k++ {
			nodes[late[k]-lo] = *c.late[late[k]]
		}
		c.put(b, nodes[:m])
	}
	clear(c.late)
	c.lateAt, c.lateNode = -1, nil
}
