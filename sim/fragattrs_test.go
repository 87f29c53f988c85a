package sim

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ptrace-dev/ptrace/internal/spill"
	"github.com/ptrace-dev/ptrace/trace"
)

// attrsOf encodes attributes as the simulation does, a block at a time.
func attrsOf(v []Attr) Attrs {
	var a Attrs
	nodes := make([]openNode, len(v))
	for k, x := range v {
		nodes[k] = openNode{start: x.Start, wait: x.Wait, thread: x.Thread, loc: x.Loc, kind: x.Kind}
	}
	for b := 0; b*attrBlock < len(v); b++ {
		blk := nodes[b*attrBlock : min(len(v), (b+1)*attrBlock)]
		a.setBlock(b, appendAttrs(nil, blk))
		a.n += len(blk)
	}
	return a
}

// Attributes come back exactly whatever their values: extreme starts and
// ids (a corrupt trace's), MPI nodes' waits (none, short, long), across
// blocks.
func TestAttrsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	extremes := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 40}
	var want []Attr
	start := int64(1_000_000)
	for n := 0; n < 5*attrBlock+7; n++ {
		a := Attr{Kind: FragKind(rng.IntN(7)), Thread: int32(rng.IntN(70)) - 1, Loc: int32(rng.IntN(40)), Start: start}
		start += rng.Int64N(5000) - 1000
		if a.Kind == FragMPI {
			a.Wait = []int64{0, 1, 127, 128, rng.Int64N(1e10), math.MaxInt64}[rng.IntN(6)]
		}
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
	got := attrsOf(want)
	if got.Len() != len(want) {
		t.Fatalf("Len %d, want %d", got.Len(), len(want))
	}
	for n, a := range want {
		if g := got.At(int32(n)); g != a {
			t.Fatalf("At(%d) = %+v, want %+v", n, g, a)
		}
	}
	// Nodes made in time order, on threads near the one before, at one
	// construct, cost a byte and their start's difference, not 17.
	var v []Attr
	for n := 0; n < 4096; n++ {
		v = append(v, Attr{Kind: FragTask, Thread: int32(n % 4), Loc: 7, Start: 1e9 + int64(n)*3000})
	}
	small := attrsOf(v)
	small.s.trim()
	if b := float64(small.Bytes()) / 4096; b > 3.5 {
		t.Errorf("%.2f bytes a node, want at most 3.5", b)
	}
}

// A cursor gives what At gives, whatever the order of the nodes asked for:
// increasing within a block and across blocks, repeated, backwards.
func TestAttrCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var v []Attr
	start := int64(0)
	for range 6*attrBlock + 5 {
		start += rng.Int64N(1000)
		v = append(v, Attr{Kind: FragKind(rng.IntN(7)), Thread: int32(rng.IntN(8)), Loc: int32(rng.IntN(40)), Start: start})
	}
	a := attrsOf(v)
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

// The nodes encoded as the graph grows read back as a plain array of them
// would, whatever is changed when: starts and weights far out of any
// narrow range (negative, past 2^32, extreme), threads and locations at
// their limits, nodes changed long after their block was encoded (once or
// many times, kept aside and their blocks encoded again at the end),
// nodes changed while still in the ring, graphs of every size around the
// ring's and the blocks' (a last block part full). Work is the sum of the
// final weights of task, region and serial nodes.
func TestFragNodesMatchPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pickStart := func(now int64) int64 {
		switch rng.IntN(10) {
		case 0:
			return now - rng.Int64N(1e10) // long before: a predecessor's time
		case 1:
			return now + rng.Int64N(1e10)
		case 2:
			return math.MinInt64 + rng.Int64N(3)
		case 3:
			return math.MaxInt64 - rng.Int64N(3)
		}
		return now + rng.Int64N(1e6)
	}
	pickWeight := func() int64 {
		switch rng.IntN(8) {
		case 0:
			return 1<<32 + rng.Int64N(1e10)
		case 1:
			return math.MaxUint32 - 1 + rng.Int64N(3)
		case 2:
			return -rng.Int64N(5)
		case 3:
			return math.MinInt64 + rng.Int64N(2)
		case 4:
			return math.MaxInt64
		}
		return rng.Int64N(1e6)
	}
	threads := []int32{-1, 0, 3, trace.MaxThreads - 1}
	locs := []int32{-1, 0, 7, math.MaxInt32, math.MinInt32}
	sp, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var c fragNodes // reused across graphs, as the Spare reuses it
	for _, md := range []struct {
		name string
		f    SpillFile
	}{
		{"in memory", nil},
		{"streamed", sp},
		// Streaming stops at each graph's fourth chunk: the rest stays
		// in memory.
		{"streamed, a write failing", nil},
	} {
		for _, n := range []int{0, 1, 63, 64, 65, fragWindow - 1, fragWindow, fragWindow + 1, 3*fragWindow + 17, 20_000, 70_000} {
			c.reset()
			file := md.f
			if md.name == "streamed, a write failing" {
				file = &flakySpill{f: sp, appends: 3}
			}
			c.streamTo(file)
			held := 0 // the most bytes of blocks in memory while writing
			var want []openNode
			var sticky []int32 // nodes changed again and again (a barrier's join)
			now := int64(1e12)
			for i := range n {
				now += rng.Int64N(1e5)
				k := FragKind(rng.IntN(7))
				th, loc, st := threads[rng.IntN(len(threads))], locs[rng.IntN(len(locs))], pickStart(now)
				if got := c.add(k, int(th), loc, st); got != int32(i) {
					t.Fatalf("add returned %d, want %d", got, i)
				}
				want = append(want, openNode{start: st, thread: th, loc: loc, kind: k})
				held = max(held, c.attrs.s.memBytes()+c.weights.memBytes())
				if rng.IntN(500) == 0 {
					sticky = append(sticky, int32(i))
				}
				var j int32
				switch r := rng.IntN(20); {
				case r < 10: // a recent node: its fragment closing
					j = int32(max(0, i-rng.IntN(200)))
				case r < 12: // anywhere: a re-queued task's, a late completion's
					j = int32(rng.IntN(i + 1))
				case r < 14 && len(sticky) > 0:
					j = sticky[rng.IntN(len(sticky))]
				default:
					continue
				}
				nd := c.get(j)
				if *nd != want[j] {
					t.Fatalf("graph of %d, node %d of %d: get %+v, want %+v", n, j, i, *nd, want[j])
				}
				switch rng.IntN(4) {
				case 0:
					nd.start = pickStart(now)
				case 1:
					nd.weight = pickWeight()
				case 2:
					nd.thread = threads[rng.IntN(len(threads))]
					if nd.kind == FragMPI { // an MPI call closing after a wait
						nd.wait = now % 1e10
					}
				default:
					nd.loc, nd.weight = locs[rng.IntN(len(locs))], nd.weight+rng.Int64N(1000)
				}
				want[j] = *nd
				if p := int32(rng.IntN(i + 1)); c.peek(p) != want[p] {
					t.Fatalf("graph of %d, node %d of %d: peek %+v, want %+v", n, p, i, c.peek(p), want[p])
				}
			}
			if c.len() != n {
				t.Fatalf("len %d, want %d", c.len(), n)
			}
			late := len(c.late)
			a, w, work, _ := c.finish()
			f := Frags{Attrs: a, weights: w, nw: n}
			if file != nil {
				// The rest to the file, as the driver does (a failing
				// file leaves them in memory).
				_ = f.Spill(file)
				a, w = f.Attrs, f.weights
			}
			if f.Len() != n {
				t.Fatalf("%s, graph of %d: %d nodes encoded", md.name, n, f.Len())
			}
			// With a write failing, a large graph's blocks are some in
			// the file and the others in memory.
			if md.name == "streamed, a write failing" && n == 70_000 {
				inF, inM := 0, 0
				for _, p := range a.s.at {
					if p&inFile != 0 {
						inF++
					} else {
						inM++
					}
				}
				if inF == 0 || inM == 0 {
					t.Errorf("graph of %d, a write failing: %d attribute blocks in the file, %d in memory", n, inF, inM)
				}
			}
			// Streamed, a column holds its small first chunks and one of
			// maxChunk bytes while written, and nothing but the blocks'
			// places once spilled.
			if md.name == "streamed" {
				if held > 2*2*maxChunk {
					t.Errorf("graph of %d: %d bytes of blocks held while streamed", n, held)
				}
				if a.s.chunks != nil || w.chunks != nil {
					t.Errorf("graph of %d: %d and %d bytes in memory once spilled", n, a.s.memBytes(), w.memBytes())
				}
			}
			var sum int64
			cur := a.Cursor()
			for i, x := range want {
				if got := a.At(int32(i)); got != x.attr() {
					t.Fatalf("graph of %d (%d nodes kept aside): node %d: %+v, want %+v", n, late, i, got, x.attr())
				}
				if got := cur.At(int32(i)); got != x.attr() {
					t.Fatalf("graph of %d: cursor at node %d: %+v, want %+v", n, i, got, x.attr())
				}
				if x.counts() {
					sum += x.weight
				}
			}
			if work != sum {
				t.Errorf("graph of %d: work %d, want %d", n, work, sum)
			}
			var ask []int32
			for range 50 {
				if n > 0 {
					ask = append(ask, int32(rng.IntN(n)))
				}
			}
			for k, x := range f.WeightsOf(ask) {
				if x != want[ask[k]].weight {
					t.Fatalf("graph of %d: WeightsOf node %d: %d, want %d", n, ask[k], x, want[ask[k]].weight)
				}
			}
			i := 0
			f.DrainWeights(func(x int64) {
				if x != want[i].weight {
					t.Fatalf("graph of %d: node %d weighs %d, want %d", n, i, x, want[i].weight)
				}
				i++
			})
			if i != n {
				t.Fatalf("graph of %d: %d weights drained", n, i)
			}
			if n > 2*fragWindow && late == 0 {
				t.Errorf("graph of %d: no node kept aside, the test changes none late", n)
			}
			if err := f.Err(); err != nil {
				t.Fatalf("%s, graph of %d: %v", md.name, n, err)
			}
		}
	}
}

// flakySpill is a spill file whose writes fail after appends of them,
// and whose reads fail when badReads is set.
type flakySpill struct {
	f        SpillFile
	appends  int
	badReads bool
}

func (s *flakySpill) Append(p []byte) (int64, error) {
	if s.appends == 0 {
		return 0, errors.New("disk full")
	}
	s.appends--
	return s.f.Append(p)
}

func (s *flakySpill) ReadAt(p []byte, off int64) (int, error) {
	if s.badReads {
		return 0, errors.New("I/O error")
	}
	return s.f.ReadAt(p, off)
}

// eofAtEnd is a spill file in memory whose reads that reach its end say
// io.EOF, even when they read every byte asked for (io.ReaderAt allows it).
type eofAtEnd struct{ b []byte }

func (m *eofAtEnd) Append(p []byte) (int64, error) {
	off := int64(len(m.b))
	m.b = append(m.b, p...)
	return off, nil
}

func (m *eofAtEnd) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if off+int64(n) == int64(len(m.b)) {
		return n, io.EOF
	}
	return n, nil
}

// The last block of a spill file reads back whole from a file that says
// io.EOF with every byte read, through At, a cursor and the weights'
// window alike: the file ends with the attributes' last block (which read
// gets), or with the weights' (the window's read past the block).
func TestSpillReadEOFAtEnd(t *testing.T) {
	for _, attrsLast := range []bool{true, false} {
		var c fragNodes
		c.reset()
		const n = 200
		for i := range n {
			c.get(c.add(FragTask, i%4, int32(i%3), int64(i)*1000)).weight = int64(i) * 7
		}
		a, w, _, _ := c.finish()
		f := &eofAtEnd{}
		spills := []func() error{func() error { return w.spill(f) }, func() error { return a.Spill(f) }}
		if !attrsLast {
			spills[0], spills[1] = spills[1], spills[0]
		}
		for _, sp := range spills {
			if err := sp(); err != nil {
				t.Fatal(err)
			}
		}
		fr := Frags{Attrs: a, weights: w, nw: n}
		want := Attr{Kind: FragTask, Thread: (n - 1) % 4, Loc: (n - 1) % 3, Start: (n - 1) * 1000}
		cur := a.Cursor()
		if got := a.At(n - 1); got != want {
			t.Errorf("attributes last %v: last node: %+v, want %+v", attrsLast, got, want)
		}
		if got := cur.At(n - 1); got != want {
			t.Errorf("attributes last %v: last node by a cursor: %+v, want %+v", attrsLast, got, want)
		}
		k := 0
		fr.DrainWeights(func(x int64) {
			if x != int64(k)*7 {
				t.Fatalf("attributes last %v: weight %d: %d, want %d", attrsLast, k, x, k*7)
			}
			k++
		})
		if err := fr.Err(); err != nil {
			t.Errorf("attributes last %v: %v", attrsLast, err)
		}
	}
}

// A streamed graph whose blocks cannot be read back gives zeros and an
// error (Frags.Err), for the attributes and the weights alike, not a
// panic.
func TestStreamedReadFails(t *testing.T) {
	sp, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	bad := &flakySpill{f: sp, appends: math.MaxInt}
	var c fragNodes
	c.reset()
	c.streamTo(bad)
	const n = 50_000
	for i := range n {
		c.get(c.add(FragTask, i%4, int32(i%3), int64(i)*1000)).weight = int64(i%1000) * 1e6
	}
	a, w, _, _ := c.finish()
	f := Frags{Attrs: a, weights: w, nw: n}
	if err := f.Spill(bad); err != nil {
		t.Fatal(err)
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	if got := f.Attrs.At(n - 1); got != (Attr{Kind: FragTask, Thread: (n - 1) % 4, Loc: (n - 1) % 3, Start: (n - 1) * 1000}) {
		t.Fatalf("node %d: %+v", n-1, got)
	}
	bad.badReads = true
	if got := f.Attrs.At(n - 2); got != (Attr{}) {
		t.Errorf("attributes read from a failing file: %+v, want zeros", got)
	}
	if got := f.WeightCursor().At(n - 2); got != 0 {
		t.Errorf("a weight read by a cursor from a failing file: %d, want 0", got)
	}
	k := 0
	f.DrainWeights(func(x int64) {
		if x != 0 {
			t.Fatalf("weight %d read from a failing file: %d, want 0", k, x)
		}
		k++
	})
	if k != n {
		t.Errorf("%d weights drained, want %d", k, n)
	}
	if f.Err() == nil {
		t.Error("reads from a failing file: no error")
	}
}

// A region record stays 144 bytes: one per parallel region a process
// opens, kept for its whole simulation.
func TestRegionSize(t *testing.T) {
	if n := unsafe.Sizeof(Region{}); n != 144 {
		t.Errorf("Region is %d bytes, want 144", n)
	}
}

// The task record stays 8 bytes: a task slot for every task a process
// creates is the simulation's largest working array.
func TestTaskRecSize(t *testing.T) {
	if n := unsafe.Sizeof(TaskRec{}); n != 6 {
		t.Errorf("TaskRec is %d bytes, want 6", n)
	}
}

// Spilled attributes read back as they were, through At and a cursor,
// for several graphs in one file, blocks written again out of order (as
// the simulation's end writes again those of nodes changed late), a last
// block part full and extreme values; a read that fails gives zeros and
// Err, not a panic.
func TestAttrsSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 44))
	f, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var graphs [][]Attr
	var spilled []*Attrs
	for g := range 4 {
		var v []Attr
		start := int64(rng.IntN(1 << 20))
		for n := range g*3*attrBlock + 1 + rng.IntN(2*attrBlock) {
			start += rng.Int64N(100000) - 20000
			a := Attr{Kind: FragKind(rng.IntN(7)), Thread: int32(rng.IntN(9)) - 1, Loc: int32(rng.IntN(5)), Start: start}
			if n%41 == 5 {
				a.Start, a.Thread = math.MinInt64, math.MaxInt32
			}
			v = append(v, a)
		}
		a := attrsOf(v)
		// Block 0 written again, after the others: its bytes now lie
		// after theirs in the chunks.
		a.setBlock(0, appendAttrs(nil, toNodes(v[:min(len(v), attrBlock)])))
		before := a.Bytes()
		if err := a.Spill(f); err != nil {
			t.Fatal(err)
		}
		if a.Bytes() >= before && len(v) > attrBlock {
			t.Errorf("graph %d: %d bytes held after the spill, %d before", g, a.Bytes(), before)
		}
		graphs, spilled = append(graphs, v), append(spilled, &a)
	}
	for g, v := range graphs {
		a := spilled[g]
		c := a.Cursor()
		for n, want := range v {
			if got := a.At(int32(n)); got != want {
				t.Fatalf("graph %d: At(%d) = %+v, want %+v", g, n, got, want)
			}
			if got := c.At(int32(n)); got != want {
				t.Fatalf("graph %d: cursor At(%d) = %+v, want %+v", g, n, got, want)
			}
		}
		if err := a.Err(); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	a := spilled[3]
	if got := a.At(int32(a.Len() - 1)); got != (Attr{}) {
		t.Errorf("read from a closed file: %+v, want zeros", got)
	}
	if a.Err() == nil {
		t.Error("read from a closed file: no error")
	}
}

func toNodes(v []Attr) []openNode {
	nodes := make([]openNode, len(v))
	for k, x := range v {
		nodes[k] = openNode{start: x.Start, wait: x.Wait, thread: x.Thread, loc: x.Loc, kind: x.Kind}
	}
	return nodes
}
