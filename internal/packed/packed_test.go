package packed

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	extremes := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 62}
	for _, c := range []Ints{{}, NewDeltas()} {
		var want []int64
		v := int64(1e9)
		for i := 0; i < 10000; i++ {
			v += rng.Int64N(10000) - 2000
			x := v
			if i%97 == 5 {
				x = extremes[rng.IntN(len(extremes))]
			}
			want = append(want, x)
			c.Append(x)
		}
		c.Trim()
		if c.Len() != len(want) {
			t.Fatalf("delta %v: Len %d, want %d", c.delta, c.Len(), len(want))
		}
		r := c.Reader()
		for i, w := range want {
			if g := r.Next(); g != w {
				t.Fatalf("delta %v: value %d = %d, want %d", c.delta, i, g, w)
			}
		}
		if g := r.Next(); g != 0 {
			t.Errorf("delta %v: past the end got %d, want 0", c.delta, g)
		}
		r = c.Reader()
		r.Skip(777)
		if g := r.Next(); g != want[777] {
			t.Errorf("delta %v: after Skip(777) got %d, want %d", c.delta, g, want[777])
		}
	}
}

// Start times a few microseconds apart cost about three bytes, not eight.
func TestDeltasAreSmall(t *testing.T) {
	c := NewDeltas()
	for i := int64(0); i < 4096; i++ {
		c.Append(1_700_000_000_000_000_000 + i*50_000)
	}
	c.Trim()
	if b := float64(c.Bytes()) / 4096; b > 3.1 {
		t.Errorf("%.2f bytes a value, want about 3", b)
	}
}

func TestPairsRoundTrip(t *testing.T) {
	for _, p := range []Pairs{{}, NewPairsByA()} {
		pairsRoundTrip(t, p)
	}
	// Pairs whose a's follow one another, b's repeating (completions into
	// a join), cost about two bytes when a is stored by a.
	byA, byB := NewPairsByA(), Pairs{}
	for n := int32(1); n <= 4096; n++ {
		b := 1_000_000 + n/64
		byA.Append(n, b)
		byB.Append(n, b)
	}
	byA.Trim()
	byB.Trim()
	if a, b := float64(byA.Bytes())/4096, float64(byB.Bytes())/4096; a > 2.1 || b < 3 {
		t.Errorf("%.2f bytes a pair by a, %.2f by b; want about 2 and over 3", a, b)
	}
	// Completions into a barrier made first (node 4) between the
	// fragments the tasks make, as on Task Bench's stencil_1d: b follows
	// two runs, each in a register of its own, and a pair costs 2 bytes.
	join := NewPairsByA()
	var want [][2]int32
	for n := int32(200_000); n < 204_096; n += 2 {
		want = append(want, [2]int32{n - 1, n + 1}, [2]int32{n, 4})
		join.Append(n-1, n+1)
		join.Append(n, 4)
	}
	join.Trim()
	if c := float64(join.Bytes()) / float64(join.Len()); c > 2.1 {
		t.Errorf("%.2f bytes a pair into a join between two runs; want 2", c)
	}
	var got [][2]int32
	join.Each(func(a, b int32) { got = append(got, [2]int32{a, b}) })
	if !slices.Equal(got, want) {
		t.Errorf("pairs into a join between two runs: got %d pairs, differing from the %d appended", len(got), len(want))
	}
}

func pairsRoundTrip(t *testing.T, p Pairs) {
	rng := rand.New(rand.NewPCG(5, 6))
	var want [][2]int32
	b := int32(0)
	for i := 0; i < 20000; i++ {
		b += int32(rng.IntN(5)) - 1
		a := b - int32(rng.IntN(100))
		switch i % 101 {
		case 7:
			a, b = math.MinInt32, math.MaxInt32
		case 8:
			a, b = math.MaxInt32, math.MinInt32
		case 9:
			a = b + 5 // a after b
		}
		want = append(want, [2]int32{a, b})
		p.Append(a, b)
	}
	p.Trim()
	if p.Len() != len(want) {
		t.Fatalf("Len %d, want %d", p.Len(), len(want))
	}
	k := 0
	p.Each(func(a, b int32) {
		if [2]int32{a, b} != want[k] {
			t.Fatalf("pair %d = (%d, %d), want %v", k, a, b, want[k])
		}
		k++
	})
	if k != len(want) {
		t.Fatalf("Each gave %d pairs, want %d", k, len(want))
	}
	// Edges between nearby nodes cost a few bytes.
	var near Pairs
	for n := int32(1); n <= 4096; n++ {
		near.Append(n-3, n)
	}
	near.Trim()
	if b := float64(near.Bytes()) / 4096; b > 2.1 {
		t.Errorf("%.2f bytes a pair, want about 2", b)
	}
}

// BenchmarkPairsEach decodes dependence-like edges: successors in runs of
// three, predecessors a few tasks back.
func BenchmarkPairsEach(b *testing.B) {
	var p Pairs
	for s := int32(0); s < 1<<20; s++ {
		for k := int32(1); k <= 3; k++ {
			p.Append(s-k*5, s)
		}
	}
	b.SetBytes(int64(p.Len()))
	b.ResetTimer()
	var sum int64
	for range b.N {
		p.Each(func(a, b int32) { sum += int64(a) })
	}
	if sum == 1 {
		b.Log(sum)
	}
}

// BenchmarkIntsReader reads run times of about 50 µs (three bytes each).
func BenchmarkIntsReader(b *testing.B) {
	var c Ints
	for i := int64(0); i < 1<<20; i++ {
		c.Append(50_000 + i%1000)
	}
	b.SetBytes(int64(c.Len()))
	b.ResetTimer()
	var sum int64
	for range b.N {
		r := c.Reader()
		for range c.Len() {
			sum += r.Next()
		}
	}
	if sum == 1 {
		b.Log(sum)
	}
}

// A column grows a block at a time: what was written stays where it is
// (no copy, no garbage), and the spare room is at most one block.
func TestBlocksAreNeverCopied(t *testing.T) {
	var c Ints
	c.Grow(100, 1)
	c.Append(1)
	first := &c.s.block(0)[0]
	var p Pairs
	p.Append(1, 2)
	firstPair := &p.s.block(0)[0]
	for i := int64(0); i < 1_000_000; i++ {
		c.Append(i % 300) // one or two bytes
		p.Append(int32(i), int32(i+1))
	}
	if &c.s.block(0)[0] != first || &p.s.block(0)[0] != firstPair {
		t.Fatal("the first block moved as the stream grew")
	}
	if len(c.s.full) < 2 || len(p.s.full) < 2 {
		t.Fatalf("%d and %d filled blocks, want several", len(c.s.full), len(p.s.full))
	}
	for _, s := range []*stream{&c.s, &p.s} {
		used := len(s.cur)
		for _, b := range s.full {
			used += len(b)
			if cap(b) > maxBlock {
				t.Errorf("a block of %d bytes, want at most %d", cap(b), maxBlock)
			}
		}
		if spare := s.bytes() - used; spare > maxBlock {
			t.Errorf("%d spare bytes, want at most one block (%d)", spare, maxBlock)
		}
	}
	// The announced size is the first block's.
	var small Ints
	small.Grow(10, 2)
	small.Append(5)
	if got := cap(small.s.cur); got != minBlock {
		t.Errorf("first block of a 20-byte announcement: %d bytes, want %d", got, minBlock)
	}
}

// Int32s gives back every value, whatever the blocks' ranges: constant
// blocks, the full int32 range, a short last block, values close together.
func TestInt32s(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := [][]int32{nil, {7}, {-1, math.MaxInt32, math.MinInt32, 0}}
	for _, n := range []int{63, 64, 65, 1000, 4097} {
		for _, spread := range []int32{0, 1, 300, 1 << 20, math.MaxInt32} {
			v := make([]int32, n)
			for i := range v {
				v[i] = int32(int64(i) + rng.Int64N(int64(spread)+1) - int64(spread)/2)
				if rng.IntN(50) == 0 {
					v[i] = -1
				}
			}
			cases = append(cases, v)
		}
	}
	for _, v := range cases {
		c := PackInt32s(v)
		if c.Len() != len(v) {
			t.Fatalf("Len %d, want %d", c.Len(), len(v))
		}
		for i, want := range v {
			if got := c.At(i); got != want {
				t.Fatalf("%d values: At(%d) = %d, want %d", len(v), i, got, want)
			}
		}
		if got := c.AppendTo([]int32{42}); len(got) != len(v)+1 || got[0] != 42 || !slices.Equal(got[1:], v) {
			t.Fatalf("%d values: AppendTo gives %d values, not them after the ones before", len(v), len(got)-1)
		}
	}
	// Close values cost about their differences' bits.
	v := make([]int32, 1<<16)
	for i := range v {
		v[i] = 1_000_000 + int32(i) + rng.Int32N(16)
	}
	if c := PackInt32s(v); c.Bytes() > len(v)*5/4 {
		t.Errorf("%d close values take %d bytes, want at most 1.25 a value (7 bits and the block header)", len(v), c.Bytes())
	}
}

// JoinInt32s gives back every value of its parts in order, whatever
// their blocks' widths (constant, narrow, the full range), a short last
// part or none, empty parts among them.
func TestJoinInt32s(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, last := range []int{0, 1, 63, 64, 4000} {
		var want []int32
		var parts []Int32s
		for k := range 7 {
			n := 64 * rng.IntN(70)
			if k == 6 {
				n = last
			}
			v := make([]int32, n)
			for i := range v {
				switch k % 3 {
				case 0:
					v[i] = -1
				case 1:
					v[i] = int32(len(want)+i) + rng.Int32N(100)
				default:
					v[i] = rng.Int32() - rng.Int32()
				}
			}
			want = append(want, v...)
			parts = append(parts, PackInt32s(v))
		}
		c := JoinInt32s(parts)
		if c.Len() != len(want) {
			t.Fatalf("Len %d, want %d", c.Len(), len(want))
		}
		for i, w := range want {
			if got := c.At(i); got != w {
				t.Fatalf("last part of %d: At(%d) = %d, want %d", last, i, got, w)
			}
		}
	}
	if c := JoinInt32s(nil); c.Len() != 0 {
		t.Errorf("joining no parts: Len %d", c.Len())
	}
}

// BenchmarkInt32sAt looks up values at random, as the task graph looks up
// dependences' predecessors, against a plain slice.
func BenchmarkInt32sAt(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	v := make([]int32, 1<<21)
	for i := range v {
		v[i] = int32(i) + rng.Int32N(200)
	}
	idx := make([]int, 1<<16)
	for i := range idx {
		idx[i] = rng.IntN(len(v))
	}
	c := PackInt32s(v)
	b.Run("packed", func(b *testing.B) {
		var sum int32
		for i := range b.N {
			sum += c.At(idx[i&(len(idx)-1)])
		}
		_ = sum
	})
	b.Run("slice", func(b *testing.B) {
		var sum int32
		for i := range b.N {
			sum += v[idx[i&(len(idx)-1)]]
		}
		_ = sum
	})
}

// RunAt walks a run of pairs sharing their second value from the mark
// AppendMarked gave its first pair, and stops where the second value
// changes or the list ends, across blocks and with values near and far.
func TestPairsRunAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p Pairs
	type run struct {
		b     int32
		as    []int32
		first Mark
	}
	var runs []run
	b := int32(10)
	for range 20_000 {
		b += int32(rng.IntN(3)) // the same b twice in a row: two runs, read as one
		if rng.IntN(50) == 0 {
			b += 1 << 20
		}
		r := run{b: b}
		for k := range 1 + rng.IntN(5) {
			a := b - 1 - int32(rng.IntN(100))
			if rng.IntN(30) == 0 {
				a = b - int32(rng.IntN(1<<30))
			}
			m, ok := p.AppendMarked(a, b)
			if !ok {
				t.Fatal("no mark")
			}
			if k == 0 {
				r.first = m
			}
			r.as = append(r.as, a)
		}
		if n := len(runs); n > 0 && runs[n-1].b == b {
			runs[n-1].as = append(runs[n-1].as, r.as...)
			continue
		}
		runs = append(runs, r)
	}
	if len(p.s.full) < 2 {
		t.Fatalf("%d blocks: the runs should cross some", len(p.s.full)+1)
	}
	for i, r := range runs {
		var got []int32
		for m, more := r.first, true; more; {
			var a int32
			a, m, more = p.RunAt(m, r.b)
			got = append(got, a)
		}
		if !slices.Equal(got, r.as) {
			t.Fatalf("run %d of %d: %v, want %v", i, r.b, got, r.as)
		}
	}
}
