package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/ptrace-dev/ptrace/internal/narrow"
	"github.com/ptrace-dev/ptrace/internal/packed"
	"github.com/ptrace-dev/ptrace/trace"
)

// The columns of RemoteEdges that are not plain narrow ones. A process's
// rows are in its merged event order, so the rows of a block of
// edgeBlock lie close together in time and in their threads' events, and
// their predecessors mostly do too: a value is kept as a difference from
// a base per block, in the narrowest integer most differences fit, the
// few that do not kept aside exactly (internal/narrow).
const edgeBlock = 64

// predEventCol holds the predecessors' event indices. A block's base is
// the first value set in it (the rows are made before their
// predecessors arrive, in no order), and a value is an int16 from it:
// the senders of a process's nearby receives are at nearby points of
// their own runs (every row on the gen traces but spread's, 73 %). A
// column where more than 1/32 do not fit moves to 4 bytes a value
// (narrow.Step).
type predEventCol struct {
	base  []int64
	fresh []uint64 // a bit a block: no value set in it yet
	off   narrow.Step[int16, int32, int32]
}

// Reserve makes room for n more values.
func (c *predEventCol) Reserve(n int) {
	c.off.Reserve(n)
	if need := (c.off.Len()+n+edgeBlock-1)/edgeBlock - len(c.base); need > 0 {
		c.base = slices.Grow(c.base, need)
		c.fresh = slices.Grow(c.fresh, need/64+1)
	}
}

// appendUnset adds a row whose value is not set yet (it reads as any).
func (c *predEventCol) appendUnset() {
	k := c.off.Len()
	if k%edgeBlock == 0 {
		b := len(c.base)
		c.base = append(c.base, 0)
		if b%64 == 0 {
			c.fresh = append(c.fresh, 0)
		}
		c.fresh[b/64] |= 1 << (b % 64)
	}
	c.off.Append(0)
}

// Append adds x at the end.
func (c *predEventCol) Append(x int64) {
	k := c.off.Len()
	if k%edgeBlock == 0 {
		b := len(c.base)
		c.base = append(c.base, x)
		if b%64 == 0 {
			c.fresh = append(c.fresh, 0)
		}
	} else if b := k / edgeBlock; c.fresh[b/64]&(1<<(b%64)) != 0 {
		// After rows not set yet in the block (they read as any).
		c.fresh[b/64] &^= 1 << (b % 64)
		c.base[b] = x
	}
	// Wrapping arithmetic: base + (x − base) is x for any two int64s.
	c.off.Append(x - c.base[k/edgeBlock])
}

// Set replaces value k by x; the first value set in a block is its base.
func (c *predEventCol) Set(k int, x int64) {
	b := k / edgeBlock
	if c.fresh[b/64]&(1<<(b%64)) != 0 {
		c.fresh[b/64] &^= 1 << (b % 64)
		c.base[b] = x
	}
	c.off.Set(k, x-c.base[b])
}

// At returns value k.
func (c *predEventCol) At(k int) int64 { return c.base[uint(k)/edgeBlock] + c.off.At(k) }

// predTimeCol holds the predecessors' times as an int32 from a base per
// block of edgeBlock rows: the time of the block's first receive-like
// event, which the exchange has when it makes the rows (a predecessor's
// time is before its receive's, and within 2.1 s of it but for a message
// received long after it was sent, kept aside exactly). 4.1 bytes a row
// where int64s took 8. While parked (ParkPredTimes), base and off are in
// a spill file and only what was kept aside stays.
type predTimeCol struct {
	base []int64
	off  []int32
	wide map[int]int64 // the values whose offset is timeEscape
	park *parkedTimes
}

// timeEscape marks an offset kept aside.
const timeEscape = math.MinInt32

// parkedTimes is where a parked column's arrays are: nb bases, then n
// offsets, little-endian, from at in f.
type parkedTimes struct {
	f     packed.Spiller
	at    int64
	nb, n int
}

// Reserve makes room for n more values.
func (c *predTimeCol) Reserve(n int) {
	c.off = slices.Grow(c.off, n)
	if need := (len(c.off)+n+edgeBlock-1)/edgeBlock - len(c.base); need > 0 {
		c.base = slices.Grow(c.base, need)
	}
}

// Len returns the number of values.
func (c *predTimeCol) Len() int { return len(c.off) }

// Append adds x at the end; the first value of a block is its base (the
// exchange appends each row's own time, then sets its predecessor's).
func (c *predTimeCol) Append(x int64) {
	k := len(c.off)
	if k%edgeBlock == 0 {
		c.base = append(c.base, x)
	}
	c.off = append(c.off, 0)
	c.Set(k, x)
}

// appendPending adds a value not set yet, in a block that has its base
// (it reads as the base).
func (c *predTimeCol) appendPending() { c.off = append(c.off, 0) }

// Set replaces value k by x.
func (c *predTimeCol) Set(k int, x int64) {
	// Wrapping arithmetic: base + (x − base) is x for any two int64s.
	d := x - c.base[k/edgeBlock]
	if c.off[k] == timeEscape {
		delete(c.wide, k)
	}
	if d == int64(int32(d)) && d != timeEscape {
		c.off[k] = int32(d)
		return
	}
	if c.wide == nil {
		c.wide = map[int]int64{}
	}
	c.wide[k], c.off[k] = x, timeEscape
}

// At returns value k.
func (c *predTimeCol) At(k int) int64 {
	if d := c.off[k]; d != timeEscape {
		return c.base[uint(k)/edgeBlock] + int64(d)
	}
	return c.wide[k]
}

// parkTo writes the bases and offsets to f and lets them go; on an error
// they stay.
func (c *predTimeCol) parkTo(f packed.Spiller) error {
	if c.park != nil || len(c.off) == 0 {
		return nil
	}
	le := binary.LittleEndian
	buf := make([]byte, 0, 8*len(c.base)+4*len(c.off))
	for _, b := range c.base {
		buf = le.AppendUint64(buf, uint64(b))
	}
	for _, d := range c.off {
		buf = le.AppendUint32(buf, uint32(d))
	}
	at, err := f.Append(buf)
	if err != nil {
		return err
	}
	c.park = &parkedTimes{f: f, at: at, nb: len(c.base), n: len(c.off)}
	c.base, c.off = nil, nil
	return nil
}

// unpark reads the bases and offsets back.
func (c *predTimeCol) unpark() error {
	p := c.park
	if p == nil {
		return nil
	}
	buf := make([]byte, 8*p.nb+4*p.n)
	if _, err := p.f.ReadAt(buf, p.at); err != nil {
		return fmt.Errorf("graph: reading back %d predecessors' times at byte %d of the spill file: %w", p.n, p.at, err)
	}
	le := binary.LittleEndian
	c.base, c.off = make([]int64, p.nb), make([]int32, p.n)
	for j := range c.base {
		c.base[j] = int64(le.Uint64(buf[8*j:]))
	}
	buf = buf[8*p.nb:]
	for j := range c.off {
		c.off[j] = int32(le.Uint32(buf[4*j:]))
	}
	c.park = nil
	return nil
}

// kindCol holds the kinds of a row's event and of its predecessor, as a
// byte a row naming one of the few pairs a process's rows have (a
// receive's and its send's, a collective's end and begin, a remote
// dependence's two ends, a Late Receiver's): 1 byte where two took 2. A
// pair past the 255th distinct one is kept aside exactly.
type kindCol struct {
	code  []uint8
	pairs [][2]trace.Kind
	wide  map[int][2]trace.Kind
	// per pair, the pair its row became when setPred last gave it a
	// predecessor's kind (the exchange gives each row its own once or a
	// few times): a lookup, not a search of the pairs.
	then []kindThen
}

type kindThen struct {
	pred trace.Kind
	code uint8
	ok   bool
}

const kindEscape = 255

// Reserve makes room for n more rows.
func (c *kindCol) Reserve(n int) { c.code = slices.Grow(c.code, n) }

// Append adds a row of kinds (k, pred).
func (c *kindCol) Append(k, pred trace.Kind) {
	if n := len(c.code); n > 0 {
		if x := c.code[n-1]; x != kindEscape && c.pairs[x] == [2]trace.Kind{k, pred} {
			c.code = append(c.code, x) // the row before's pair: no search
			return
		}
	}
	c.code = append(c.code, 0)
	c.Set(len(c.code)-1, k, pred)
}

// Set replaces row j's kinds by (k, pred).
func (c *kindCol) Set(j int, k, pred trace.Kind) {
	p := [2]trace.Kind{k, pred}
	x := slices.Index(c.pairs, p)
	if x < 0 && len(c.pairs) < kindEscape {
		x = len(c.pairs)
		c.pairs = append(c.pairs, p)
	}
	if c.code[j] == kindEscape {
		delete(c.wide, j)
	}
	if x < 0 {
		if c.wide == nil {
			c.wide = map[int][2]trace.Kind{}
		}
		c.wide[j], x = p, kindEscape
	}
	c.code[j] = uint8(x)
}

// setPred replaces row j's predecessor's kind by pred.
func (c *kindCol) setPred(j int, pred trace.Kind) {
	x := c.code[j]
	if int(x) < len(c.then) {
		if t := c.then[x]; t.ok && t.pred == pred {
			c.code[j] = t.code
			return
		}
	}
	k, _ := c.At(j)
	c.Set(j, k, pred)
	if y := c.code[j]; x != kindEscape && y != kindEscape {
		for len(c.then) <= int(x) {
			c.then = append(c.then, kindThen{})
		}
		c.then[x] = kindThen{pred: pred, code: y, ok: true}
	}
}

// At returns row j's kinds.
func (c *kindCol) At(j int) (k, pred trace.Kind) {
	if x := c.code[j]; x != kindEscape {
		p := &c.pairs[x]
		return p[0], p[1]
	}
	p := c.wide[j]
	return p[0], p[1]
}
