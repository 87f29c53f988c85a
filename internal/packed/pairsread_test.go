package packed

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPairReaders: the buffered forward reader and the backward one give
// the pairs Each gives (backward, in reverse), whatever the buffer's size,
// on lists of the three layouts (made compact after some or all of their
// pairs, Pairs.Compact) with differences of every varint length, over
// block boundaries.
func TestPairReaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		var p Pairs
		if trial%3 == 1 {
			p = NewPairsByA()
		}
		compactAt := -1
		if trial%3 == 2 {
			compactAt = 0
			if trial%2 == 1 {
				compactAt = rng.IntN(3000)
			}
		}
		n := rng.IntN(3000)
		if trial%50 == 0 {
			n = 0
		}
		var a, b, run int32
		var appended [][2]int32
		for i := range n {
			if i == compactAt {
				p.Compact()
			}
			switch rng.IntN(9) {
			case 0: // anywhere
				a, b = rng.Int32()-math.MaxInt32/2, rng.Int32()-math.MaxInt32/2
				run = b
			case 1: // the extremes
				a, b = int32(rng.IntN(2))*math.MaxInt32, math.MinInt32+int32(rng.IntN(3))
				run = b
			case 2: // into a join made far before, between a run's pairs (byB's second register)
				a, b = run-int32(rng.IntN(40)), int32(rng.IntN(3))
			case 3, 4: // a task's neighbours: the compact list's byte a pair
				for range 1 + rng.IntN(30) {
					run += int32(rng.IntN(4)) - 2
					a, b = a+int32(rng.IntN(19))-9, run
					p.Append(a, b)
					appended = append(appended, [2]int32{a, b})
				}
			default: // near the run's last pair: one-byte differences
				run += int32(rng.IntN(5)) - 1
				a, b = run-int32(rng.IntN(40)), run
			}
			p.Append(a, b)
			appended = append(appended, [2]int32{a, b})
		}
		if compactAt >= 0 && rng.IntN(2) == 0 {
			p.Compact()
		}
		if p.Len() != len(appended) {
			t.Fatalf("trial %d: Len %d, %d appended", trial, p.Len(), len(appended))
		}
		var want [][2]int32
		p.Each(func(a, b int32) { want = append(want, [2]int32{a, b}) })
		if !slices.Equal(want, appended) {
			t.Fatalf("trial %d: Each gave %d pairs, differing from the %d appended", trial, len(want), len(appended))
		}
		size := 1 + rng.IntN(300)
		as, bs := make([]int32, size), make([]int32, size+rng.IntN(3))
		var got [][2]int32
		r := p.Reader()
		for k := r.Read(as, bs); k > 0; k = r.Read(as, bs) {
			for i := range k {
				got = append(got, [2]int32{as[i], bs[i]})
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (buffer %d): Reader gave %d pairs, differing from Each's %d", trial, size, len(got), len(want))
		}
		got = got[:0]
		rb := p.Backward()
		for k := rb.Read(as, bs); k > 0; k = rb.Read(as, bs) {
			for i := range k {
				got = append(got, [2]int32{as[i], bs[i]})
			}
		}
		slices.Reverse(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (buffer %d): Backward gave %d pairs, differing from Each's %d", trial, size, len(got), len(want))
		}
		if k := rb.Read(as, bs); k != 0 {
			t.Fatalf("trial %d: Backward read %d pairs past the first", trial, k)
		}
	}
}

// BenchmarkPairReader is BenchmarkPairsEach's list through the buffered
// reader.
func BenchmarkPairReader(b *testing.B) {
	var p Pairs
	for s := int32(0); s < 1<<20; s++ {
		for k := int32(1); k <= 3; k++ {
			p.Append(s-k*5, s)
		}
	}
	b.SetBytes(int64(p.Len()))
	var as, bs [256]int32
	var sum int64
	for range b.N {
		r := p.Reader()
		for k := r.Read(as[:], bs[:]); k > 0; k = r.Read(as[:], bs[:]) {
			for _, a := range as[:k] {
				sum += int64(a)
			}
		}
	}
	if sum == 1 {
		b.Log(sum)
	}
}

// TestValues: the batch reader gives the values Reader.Next gives, plain
// and as differences, of every varint length, over block boundaries,
// with skips, and zeros past the end.
func TestValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := range 100 {
		var c Ints
		if trial%2 == 1 {
			c = NewDeltas()
		}
		n := rng.IntN(5000)
		for range n {
			switch rng.IntN(4) {
			case 0:
				c.Append(rng.Int64() - math.MaxInt64/2)
			case 1:
				c.Append(int64(rng.IntN(100)) - 50)
			default:
				c.Append(int64(rng.IntN(1 << 20)))
			}
		}
		r, v := c.Reader(), c.Values()
		for i := 0; i < n+3; {
			if k := rng.IntN(8); rng.IntN(4) == 0 {
				r.Skip(k)
				v.Skip(k)
				i += k
				continue
			}
			if got, want := v.Next(), r.Next(); got != want {
				t.Fatalf("trial %d value %d: %d, want %d", trial, i, got, want)
			}
			i++
		}
	}
}

// BenchmarkValues is BenchmarkIntsReader's column through the batch
// reader.
func BenchmarkValues(b *testing.B) {
	var c Ints
	for i := int64(0); i < 1<<20; i++ {
		c.Append(50_000 + i%1000)
	}
	b.SetBytes(int64(c.Len()))
	var sum int64
	for range b.N {
		v := c.Values()
		for range c.Len() {
			sum += v.Next()
		}
	}
	if sum == 1 {
		b.Log(sum)
	}
}

// varintBefore reads back, from their ends, the varints Append writes one
// after another, whatever their lengths (1 to 10 bytes).
func TestVarintBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	vals := []int64{0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32}
	for range 2000 {
		vals = append(vals, rng.Int64()>>rng.IntN(64))
	}
	checkVarintsBefore(t, vals)
}

// FuzzVarintBefore: varints written one after another read back from
// their ends, for arbitrary values (the fuzzer's bytes, 8 at a time).
func FuzzVarintBefore(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var vals []int64
		for ; len(b) >= 8; b = b[8:] {
			vals = append(vals, int64(binary.LittleEndian.Uint64(b)))
		}
		checkVarintsBefore(t, vals)
	})
}

// checkVarintsBefore writes vals as varints one after another and reads
// each back from its end, the last first.
func checkVarintsBefore(t *testing.T, vals []int64) {
	t.Helper()
	var d []byte
	var ends []int
	for _, v := range vals {
		d = binary.AppendVarint(d, v)
		ends = append(ends, len(d))
	}
	for i := len(vals) - 1; i >= 0; i-- {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		if x, at := varintBefore(d, ends[i]); x != vals[i] || at != start {
			t.Fatalf("value %d: %d at %d, want %d at %d", i, x, at, vals[i], start)
		}
	}
}

// TestCompactPairsBytes: a compact list stores a task's dependences on
// its neighbours, one task after another (the gen stencil's: task t on
// t-16, t-15 and t-14), a byte a pair, half of what the list took.
func TestCompactPairsBytes(t *testing.T) {
	var p Pairs
	const tasks = 100000
	for b := int32(16); b < tasks; b++ {
		for a := b - 16; a <= b-14; a++ {
			p.Append(a, b)
		}
	}
	n, before := p.Len(), p.Bytes()
	p.Compact()
	if p.Len() != n {
		t.Fatalf("Len %d after Compact, %d before", p.Len(), n)
	}
	if got := p.Bytes(); got > n*105/100 || before < 2*n {
		t.Errorf("%d pairs: %d bytes compact, %d before; want about 1 and 2 a pair", n, got, before)
	}
}
