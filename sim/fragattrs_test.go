package sim

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ptrace-dev/ptrace/trace"
)

// Attributes come back exactly whatever their values: extreme starts and
// ids (a corrupt trace's), across blocks.
func TestAttrsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	extremes := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 40}
	var want []Attr
	start := int64(1_000_000)
	for n := 0; n < 5*attrBlock+7; n++ {
		a := Attr{Kind: FragKind(rng.IntN(7)), Thread: int32(rng.IntN(70)) - 1, Loc: int32(rng.IntN(40)), Start: start}
		start += rng.Int64N(5000) - 1000
		switch n % 29 {
		case 3:
			a.Start = extremes[rng.IntN(len(extremes))]
		case 11:
			a.Thread, a.Loc = math.MinInt32, math.MaxInt32
		case 17:
			a.Thread, a.Loc = math.MaxInt32, math.MinInt32
		}
		want = append(want, a)
	}
	var got Attrs
	enc := attrEncoder{a: &got}
	size := newAttrSizer()
	for _, a := range want {
		enc.add(a)
		size.add(a)
	}
	if len(got.data) != size.bytes {
		t.Errorf("the sizer counts %d bytes, the encoder wrote %d", size.bytes, len(got.data))
	}
	if got.Len() != len(want) {
		t.Fatalf("Len %d, want %d", got.Len(), len(want))
	}
	for n, a := range want {
		if g := got.At(int32(n)); g != a {
			t.Fatalf("At(%d) = %+v, want %+v", n, g, a)
		}
	}
	// Nodes made in time order with small ids cost a few bytes, not 17.
	var small Attrs
	enc = attrEncoder{a: &small}
	for n := 0; n < 4096; n++ {
		enc.add(Attr{Kind: FragTask, Thread: int32(n % 4), Loc: 7, Start: 1e9 + int64(n)*3000})
	}
	if b := float64(small.Bytes()) / 4096; b > 6 {
		t.Errorf("%.1f bytes a node, want at most 6", b)
	}
}

// A cursor gives what At gives, whatever the order of the nodes asked for:
// increasing within a block and across blocks, repeated, backwards.
func TestAttrCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a Attrs
	enc := attrEncoder{a: &a}
	start := int64(0)
	for range 6*attrBlock + 5 {
		start += rng.Int64N(1000)
		enc.add(Attr{Kind: FragKind(rng.IntN(7)), Thread: int32(rng.IntN(8)), Loc: int32(rng.IntN(40)), Start: start})
	}
	c := a.Cursor()
	n := int32(0)
	for k := range 2000 {
		switch rng.IntN(6) {
		case 0:
			n = int32(rng.IntN(a.Len())) // anywhere
		case 1:
			// the same node again
		default:
			n = min(n+int32(rng.IntN(3*attrBlock/2)), int32(a.Len()-1)) // onwards, within or past the block
		}
		if got, want := c.At(n), a.At(n); got != want {
			t.Fatalf("step %d: cursor At(%d) = %+v, want %+v", k, n, got, want)
		}
	}
}

// A node's packed head keeps every kind, the chain flag and every thread a
// process can have, and the join's −1.
func TestFragNodeHead(t *testing.T) {
	for k := FragTask; k <= FragSerial; k++ {
		for _, th := range []int{-1, 0, 1, 4095, trace.MaxThreads - 1} {
			n := newFragNode(k, th, 7)
			if n.kind() != k || n.thread() != int32(th) || n.chained() {
				t.Fatalf("kind %v thread %d: got %v %d %v", k, th, n.kind(), n.thread(), n.chained())
			}
			n.setChained()
			n.setThread(trace.MaxThreads - 1 - th - 1)
			if n.kind() != k || n.thread() != int32(trace.MaxThreads-2-th) || !n.chained() {
				t.Fatalf("kind %v thread %d after set: got %v %d %v", k, th, n.kind(), n.thread(), n.chained())
			}
		}
	}
	if unsafe.Sizeof(fragNode{}) != 16 {
		t.Errorf("fragNode is %d bytes, want 16", unsafe.Sizeof(fragNode{}))
	}
}

// Starts and weights come back as stored, in range or not: starts before
// their block's first or seconds after it, weights past 4.29 s or
// negative, and a value that goes out of range and back.
func TestFragNodesNarrowTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c fragNodes
	var start, weight []int64
	now := int64(1e12)
	pick := func() int64 {
		switch rng.IntN(8) {
		case 0:
			return now - rng.Int64N(1e10) // long before: a predecessor's time
		case 1:
			return now + rng.Int64N(1e10)
		case 2:
			return math.MinInt64 + rng.Int64N(3)
		}
		return now + rng.Int64N(1e6)
	}
	pickW := func() int64 {
		switch rng.IntN(6) {
		case 0:
			return 1<<32 + rng.Int64N(1e10)
		case 1:
			return math.MaxUint32 - 1 + rng.Int64N(3)
		case 2:
			return -rng.Int64N(5)
		}
		return rng.Int64N(1e6)
	}
	for i := range 5000 {
		now += rng.Int64N(1e6)
		s := pick()
		n := c.add(newFragNode(FragTask, 0, -1), s)
		if n != int32(i) {
			t.Fatalf("add returned %d, want %d", n, i)
		}
		start, weight = append(start, s), append(weight, 0)
		for range 2 { // rewrite a few earlier nodes
			j := int32(rng.IntN(len(start)))
			start[j], weight[j] = pick(), pickW()
			c.setStart(j, start[j])
			c.setWeight(j, weight[j])
		}
	}
	for i := range start {
		if got := c.start(int32(i)); got != start[i] {
			t.Fatalf("node %d: start %d, want %d", i, got, start[i])
		}
		if got := c.weight(int32(i)); got != weight[i] {
			t.Fatalf("node %d: weight %d, want %d", i, got, weight[i])
		}
		if got := c.attr(int32(i)).Start; got != start[i] {
			t.Fatalf("node %d: attr start %d, want %d", i, got, start[i])
		}
	}
	// Entries rewritten into range leave the side map.
	for i := range start {
		c.setStart(int32(i), c.base[i/fragBlock])
		c.setWeight(int32(i), 1)
	}
	if len(c.wide) != 0 {
		t.Fatalf("%d values kept aside after every one came back in range", len(c.wide))
	}
}

// A region record stays 144 bytes: one per parallel region a process
// opens, kept for its whole simulation.
func TestRegionSize(t *testing.T) {
	if n := unsafe.Sizeof(Region{}); n != 144 {
		t.Errorf("Region is %d bytes, want 144", n)
	}
}

// The task record stays 32 bytes: a task slot for every task a process
// creates is the simulation's largest working array.
func TestTaskRecSize(t *testing.T) {
	if n := unsafe.Sizeof(TaskRec{}); n != 32 {
		t.Errorf("TaskRec is %d bytes, want 32", n)
	}
}

// varintLen is the length AppendVarint writes, at every power of two and
// next to it, both signs.
func TestVarintLen(t *testing.T) {
	for sh := 0; sh < 64; sh++ {
		for _, d := range []int64{-1, 0, 1} {
			for _, x := range []int64{int64(1)<<sh + d, -(int64(1) << sh) + d} {
				if got, want := varintLen(x), len(binary.AppendVarint(nil, x)); got != want {
					t.Fatalf("varintLen(%d) = %d, want %d", x, got, want)
				}
			}
		}
	}
	for _, x := range []int64{math.MinInt64, math.MaxInt64, 0} {
		if got, want := varintLen(x), len(binary.AppendVarint(nil, x)); got != want {
			t.Fatalf("varintLen(%d) = %d, want %d", x, got, want)
		}
	}
}
