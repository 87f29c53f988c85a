package sim

import "math"

// fragNodes holds the fragment nodes while the graph grows, 16 bytes a
// node where plain int64 times took 24: a node's start is an int32 offset
// from the start of the first node of its block of fragBlock (nodes are
// made as the simulation's clock advances, so a block spans little time),
// its weight a uint32 (4.29 s). A value out of range is kept aside exactly,
// so a reader always gets back what was stored.
type fragNodes struct {
	pages paged[fragNode]
	base  []int64         // per block: the first node's start
	wide  map[int64]int64 // node<<1 (start) or node<<1|1 (weight) → value out of range
}

const (
	fragBlock    = 64
	startEscape  = math.MinInt32
	weightEscape = math.MaxUint32
)

func (c *fragNodes) len() int              { return c.pages.len() }
func (c *fragNodes) at(i int32) *fragNode  { return c.pages.at(i) }
func (c *fragNodes) recycle() [][]fragNode { return c.pages.recycle() }

func (c *fragNodes) setWide(k, v int64) {
	if c.wide == nil {
		c.wide = map[int64]int64{}
	}
	c.wide[k] = v
}

// add appends node n starting at start, weighing nothing, and returns it.
func (c *fragNodes) add(n fragNode, start int64) int32 {
	i := int32(c.pages.len())
	if i%fragBlock == 0 {
		c.base = append(c.base, start)
	}
	c.pages.add(n)
	c.setStart(i, start)
	return i
}

func (c *fragNodes) start(i int32) int64 {
	if o := c.at(i).start; o != startEscape {
		return c.base[i/fragBlock] + int64(o)
	}
	return c.wide[int64(i)<<1]
}

func (c *fragNodes) setStart(i int32, v int64) {
	n, k := c.at(i), int64(i)<<1
	if n.start == startEscape {
		delete(c.wide, k)
	}
	if o := v - c.base[i/fragBlock]; o > startEscape && o <= math.MaxInt32 {
		n.start = int32(o)
		return
	}
	n.start = startEscape
	c.setWide(k, v)
}

func (c *fragNodes) weight(i int32) int64 {
	if w := c.at(i).wt; w != weightEscape {
		return int64(w)
	}
	return c.wide[int64(i)<<1|1]
}

func (c *fragNodes) setWeight(i int32, v int64) {
	n, k := c.at(i), int64(i)<<1|1
	if n.wt == weightEscape {
		delete(c.wide, k)
	}
	if v >= 0 && v < weightEscape {
		n.wt = uint32(v)
		return
	}
	n.wt = weightEscape
	c.setWide(k, v)
}

// attr returns node i's attributes.
func (c *fragNodes) attr(i int32) Attr {
	n := c.at(i)
	return Attr{Kind: n.kind(), Thread: n.thread(), Loc: n.loc, Start: c.start(i)}
}
