package narrow

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/spill"
)

// framedOf packs vals, checking the builder's count as it goes; with
// room for the words a plan counts (every other size of vals), checking
// that they were enough and not copied.
func framedOf(t *testing.T, vals []int64) Framed {
	t.Helper()
	var b FramedBuilder
	b.Reserve(len(vals) / 2)
	planned, words := len(vals)%2 == 0, 0
	if planned {
		var p FramedPlan
		for _, x := range vals {
			p.Add(x)
		}
		words = p.Words()
		b.ReserveWords(words)
	}
	room := cap(b.c.words)
	for i, x := range vals {
		if b.Len() != i {
			t.Fatalf("builder holds %d values after %d appends", b.Len(), i)
		}
		b.Append(x)
	}
	c := b.Finish()
	if b.Len() != 0 {
		t.Fatalf("builder not emptied by Finish: %d values", b.Len())
	}
	if planned && (len(c.words)-2 != words || words >= 64 && cap(c.words) != room) {
		t.Fatalf("%d values: %d words planned (room %d), made %d (room %d)", len(vals), words, room, len(c.words)-2, cap(c.words))
	}
	return c
}

// checkFramed compares every value of c with vals, and the count of
// blocks holding a value outside [0, 2³²) with one made from vals.
func checkFramed(t *testing.T, name string, c *Framed, vals []int64) {
	t.Helper()
	if c.Len() != len(vals) {
		t.Fatalf("%s: %d values, want %d", name, c.Len(), len(vals))
	}
	for i, x := range vals {
		if got := c.At(i); got != x {
			t.Fatalf("%s: value %d is %d, want %d", name, i, got, x)
		}
	}
	wide := 0
	for lo := 0; lo < len(vals); lo += framedBlock {
		for _, x := range vals[lo:min(lo+framedBlock, len(vals))] {
			if x < 0 || x > math.MaxUint32 {
				wide++
				break
			}
		}
	}
	if c.Wide() != wide {
		t.Errorf("%s: %d wide blocks, want %d", name, c.Wide(), wide)
	}
	// Summable: no value negative, and the largest times the count (the
	// most a sum of that many can be) within an int64.
	summable, top := true, int64(0)
	for _, x := range vals {
		summable, top = summable && x >= 0, max(top, x)
	}
	if hi, lo := bits.Mul64(uint64(top), uint64(len(vals))); hi != 0 || lo > math.MaxInt64 {
		summable = false
	}
	if c.Summable() != summable {
		t.Errorf("%s: Summable %v, want %v", name, c.Summable(), summable)
	}
}

// TestFramedSummable: the column's sums are int64s up to the largest
// value times the count equal to the largest int64, not one past it; a
// value past 2³² does not stop them, a negative one does, in the last
// block (cut) as in a whole one.
func TestFramedSummable(t *testing.T) {
	const n = 130 // two whole blocks and a cut one
	for _, tc := range []struct {
		name string
		top  int64
		neg  int // index of a value −1, or −1 for none
		want bool
	}{
		{"the largest at the limit", math.MaxInt64 / n, -1, true},
		{"one past it", math.MaxInt64/n + 1, -1, false},
		{"past 2³²", 1<<39 + 5, -1, true},
		{"the largest int64", math.MaxInt64, -1, false},
		{"a negative value in a whole block", 7, 3, false},
		{"a negative value in the cut block", 7, n - 1, false},
	} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(i % 5)
		}
		vals[70] = tc.top
		if tc.neg >= 0 {
			vals[tc.neg] = -1
		}
		c := framedOf(t, vals)
		checkFramed(t, tc.name, &c, vals)
		if c.Summable() != tc.want {
			t.Errorf("%s: Summable %v, want %v", tc.name, c.Summable(), tc.want)
		}
	}
	var empty Framed
	if !empty.Summable() {
		t.Error("the empty column is not summable")
	}
}

// Random values of every range of widths, from equal values (no bits) to
// any int64 (64 bits), in blocks whole and cut, come back exactly.
func TestFramedRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 4097} {
		for _, width := range []uint{0, 1, 7, 8, 9, 16, 17, 31, 32, 33, 48, 63, 64} {
			vals := make([]int64, n)
			base := rng.Int64N(1 << 40)
			for i := range vals {
				var d uint64
				if width == 64 {
					d = rng.Uint64()
				} else if width > 0 {
					d = rng.Uint64N(1 << width)
				}
				vals[i] = base + int64(d)
				if width == 64 {
					vals[i] = int64(d)
				}
			}
			c := framedOf(t, vals)
			checkFramed(t, "random", &c, vals)
		}
	}
}

// The boundaries: around 0 and 2³², the ends of int64, a block's range
// of exactly 32 and 64 bits, one outlier in a block of alike values, and
// blocks of different widths side by side, so that a value straddles two
// words.
func TestFramedEdges(t *testing.T) {
	specials := []int64{0, 1, -1, math.MaxUint32 - 1, math.MaxUint32, math.MaxUint32 + 1,
		math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	var vals []int64
	for _, x := range specials {
		for range framedBlock { // a block of x alone: no bits
			vals = append(vals, x)
		}
	}
	vals = append(vals, specials...) // every special in one block
	for len(vals)%framedBlock != 0 {
		vals = append(vals, 5)
	}
	// A block spanning exactly 32 bits, [0, 2³²−1], and one of 33.
	for i := range framedBlock {
		vals = append(vals, int64(i%2)*math.MaxUint32)
	}
	for i := range framedBlock {
		vals = append(vals, int64(i%2)*(math.MaxUint32+1))
	}
	// 64 bits: both ends of int64 in one block.
	for i := range framedBlock {
		vals = append(vals, []int64{math.MinInt64, math.MaxInt64}[i%2])
	}
	// One outlier among run times: a block of 100 000 with one of 5 s.
	for i := range framedBlock {
		v := int64(100_000)
		if i == 37 {
			v = 5_000_000_000
		}
		vals = append(vals, v)
	}
	// Widths 3, 61, 5 one after the other: values straddle words.
	for _, w := range []uint{3, 61, 5} {
		for i := range framedBlock {
			vals = append(vals, int64(uint64(i)*0x9e3779b97f4a7c15%(1<<w)))
		}
	}
	vals = append(vals, 7, math.MinInt64, 9) // a short last block
	c := framedOf(t, vals)
	checkFramed(t, "edges", &c, vals)
	// Appending past Finish starts a new column.
	var b FramedBuilder
	b.Append(1)
	_ = b.Finish()
	b.Append(2)
	c = b.Finish()
	checkFramed(t, "reused builder", &c, []int64{2})
}

// Alike values take their range's bits, not 4 bytes: a block of equal
// run times its header alone, 17-bit weights about 2.2 bytes a value.
func TestFramedBytes(t *testing.T) {
	const n = 64 * 1024
	same := make([]int64, n)
	weights := make([]int64, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range same {
		same[i] = 40_000
		weights[i] = rng.Int64N(1 << 17)
	}
	for _, tc := range []struct {
		name string
		vals []int64
		max  float64 // bytes a value
	}{{"equal", same, 0.3}, {"17 bits", weights, 2.4}} {
		c := framedOf(t, tc.vals)
		checkFramed(t, tc.name, &c, tc.vals)
		if b := float64(c.Bytes()) / n; b > tc.max {
			t.Errorf("%s: %.2f bytes a value, want at most %.2f", tc.name, b, tc.max)
		}
	}
}

// A cursor gives every value At gives, read in steps either way, in no
// order, along many runs at once (more blocks than it keeps), and across
// short last blocks.
func TestFramedCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 63, 64, 65, 1000, 4097, 40_000} {
		vals := make([]int64, n)
		for i := range vals {
			switch rng.IntN(4) {
			case 0:
				vals[i] = rng.Int64()
			case 1:
				vals[i] = -rng.Int64N(100)
			default:
				vals[i] = 40_000 + rng.Int64N(1<<17)
			}
		}
		c := framedOf(t, vals)
		r := c.Cursor()
		check := func(i int) {
			if got := r.At(i); got != vals[i] {
				t.Fatalf("%d values: cursor at %d gives %d, want %d", n, i, got, vals[i])
			}
		}
		for i := range n {
			check(i)
		}
		for i := n - 1; i >= 0; i-- {
			check(i)
		}
		for range 3 * n {
			check(rng.IntN(n))
		}
		for i := 0; i < n; i += 1 + rng.IntN(130) {
			check(i)
		}
		// 300 runs, each a step at a time, forward or back, interleaved.
		at := make([]int, 300)
		for k := range at {
			at[k] = rng.IntN(n)
		}
		for range 20 * n {
			k := rng.IntN(len(at))
			at[k] = min(max(at[k]+[]int{-1, 1}[k%2], 0), n-1)
			check(at[k])
		}
	}
}

// failingReads is a spill file whose reads fail.
type failingReads struct{ *spill.File }

func (failingReads) ReadAt([]byte, int64) (int, error) { return 0, errors.New("I/O error") }

// TestFramedPark: a column parked in the spill file, beside others, comes
// back value for value (blocks of every width, more headers and words
// than a chunk); Len answers while parked; a parked column holds no
// memory, and one under 16 KiB is not parked; a failed read back is an
// error.
func TestFramedPark(t *testing.T) {
	f := tempSpill(t)
	rng := rand.New(rand.NewPCG(32, 2))
	var cols []Framed
	var wants [][]int64
	for _, n := range []int{0, 1, 64, 1000, 300_000} {
		var b FramedBuilder
		want := make([]int64, n)
		for i := range want {
			switch i / 64 % 4 {
			case 0:
				want[i] = 7
			case 1:
				want[i] = rng.Int64N(1000)
			case 2:
				want[i] = rng.Int64() - rng.Int64()
			default:
				want[i] = -rng.Int64N(1 << 40)
			}
			b.Append(want[i])
		}
		c := b.Finish()
		held := c.Bytes()
		if err := c.Park(f); err != nil {
			t.Fatal(err)
		}
		// A column under 16 KiB stays in memory, a larger one goes.
		if want := map[bool]int{true: 0, false: held}[held >= parkMin]; c.Len() != n || c.Bytes() != want {
			t.Fatalf("parked column of %d: Len %d, %d bytes held of %d", n, c.Len(), c.Bytes(), held)
		}
		cols, wants = append(cols, c), append(wants, want)
	}
	for k := range cols {
		c := &cols[k]
		if err := c.Unpark(); err != nil {
			t.Fatal(err)
		}
		for i, w := range wants[k] {
			if got := c.At(i); got != w {
				t.Fatalf("column of %d: value %d is %d, want %d", len(wants[k]), i, got, w)
			}
		}
	}
	// Parked again in the same file, a column read back is not written
	// again: it is there already, and comes back again from there.
	c := cols[len(cols)-1]
	size := f.Size()
	if err := c.Park(f); err != nil {
		t.Fatal(err)
	}
	if f.Size() != size || c.Bytes() != 0 {
		t.Fatalf("parked again: the file grew %d → %d bytes, %d bytes held", size, f.Size(), c.Bytes())
	}
	if err := c.Unpark(); err != nil {
		t.Fatal(err)
	}
	for i, w := range wants[len(wants)-1] {
		if got := c.At(i); got != w {
			t.Fatalf("read back again: value %d is %d, want %d", i, got, w)
		}
	}
	if err := c.Park(failingReads{f}); err != nil {
		t.Fatal(err)
	}
	if err := c.Unpark(); err == nil {
		t.Fatal("a failed read back: no error")
	}
}

// TestFramedBlocks: Blocks gives every value in order, a block at a time,
// from a column in memory and from a parked one, which stays parked
// (blocks of width 0 at a chunk's end, every width, more headers than a
// chunk, a last block of fewer values); a failed read is an error.
func TestFramedBlocks(t *testing.T) {
	f := tempSpill(t)
	rng := rand.New(rand.NewPCG(7, 44))
	for _, n := range []int{0, 1, 63, 64, 65, blocksChunk*framedBlock - 1, blocksChunk * framedBlock, 3*blocksChunk*framedBlock + 17, 200_000} {
		want := make([]int64, n)
		for i := range want {
			switch b := i / framedBlock; {
			case b%blocksChunk == blocksChunk-1 || b%7 == 3:
				want[i] = int64(b) // width 0, at a chunk's last block too
			case b%5 == 1:
				want[i] = rng.Int64() - rng.Int64()
			default:
				want[i] = rng.Int64N(1 << uint(b%40))
			}
		}
		c := framedOf(t, want)
		for _, parked := range []bool{false, true} {
			if parked {
				if err := c.Park(f); err != nil {
					t.Fatal(err)
				}
				if c.Bytes() >= parkMin {
					t.Fatalf("%d values: %d bytes held parked", n, c.Bytes())
				}
			}
			next := 0
			err := c.Blocks(func(first int, vals []int64) {
				if first != next || len(vals) == 0 || len(vals) > framedBlock {
					t.Fatalf("%d values (parked %v): block of %d at %d, want at %d", n, parked, len(vals), first, next)
				}
				for k, x := range vals {
					if x != want[first+k] {
						t.Fatalf("%d values (parked %v): value %d is %d, want %d", n, parked, first+k, x, want[first+k])
					}
				}
				next += len(vals)
			})
			if err != nil || next != n {
				t.Fatalf("%d values (parked %v): %d values given, error %v", n, parked, next, err)
			}
			if parked && (c.park == nil) != (c.Bytes() > 0) {
				t.Fatalf("%d values: Blocks brought a parked column back (%d bytes held)", n, c.Bytes())
			}
		}
		if c.park == nil {
			continue // under 16 KiB: never parked
		}
		if err := c.Unpark(); err != nil {
			t.Fatal(err)
		}
		checkFramed(t, "read back after Blocks", &c, want)
		if err := c.Park(failingReads{f}); err != nil {
			t.Fatal(err)
		}
		if err := c.Blocks(func(int, []int64) {}); err == nil {
			t.Fatalf("%d values: a failed read gave no error", n)
		}
	}
}

// TestFramedGather: Gather finds values at ascending indices (repeats,
// runs within a block, gaps of whole chunks, the last value) in a column
// in memory and a parked one, which stays parked; indices out of order
// or range, and a failed read, are errors.
func TestFramedGather(t *testing.T) {
	f := tempSpill(t)
	rng := rand.New(rand.NewPCG(5, 9))
	n := 5*blocksChunk*framedBlock + 100
	want := make([]int64, n)
	for i := range want {
		if b := i / framedBlock; b%3 == 0 {
			want[i] = int64(b) // width 0
		} else {
			want[i] = rng.Int64N(1<<uint(b%50)) - int64(b%2)*rng.Int64N(1000)
		}
	}
	c := framedOf(t, want)
	var sets [][]int
	sets = append(sets, nil, []int{0}, []int{n - 1}, []int{3, 3, 3}, []int{0, blocksChunk*framedBlock - 1, blocksChunk * framedBlock, n - 1})
	for range 20 {
		var idx []int
		for i := rng.IntN(50); i < n; i += 1 + rng.IntN([]int{3, 300, 40000}[rng.IntN(3)]) {
			idx = append(idx, i)
			if rng.IntN(10) == 0 {
				idx = append(idx, i)
			}
		}
		sets = append(sets, idx)
	}
	for _, parked := range []bool{false, true} {
		if parked {
			if err := c.Park(f); err != nil || c.Bytes() != 0 {
				t.Fatalf("parked: %d bytes held, error %v", c.Bytes(), err)
			}
		}
		for _, idx := range sets {
			out := make([]int64, len(idx))
			if err := c.Gather(idx, out); err != nil {
				t.Fatalf("parked %v: %v", parked, err)
			}
			for k, i := range idx {
				if out[k] != want[i] {
					t.Fatalf("parked %v: value %d is %d, want %d", parked, i, out[k], want[i])
				}
			}
		}
		if parked && c.Bytes() != 0 {
			t.Fatalf("Gather brought the parked column back (%d bytes held)", c.Bytes())
		}
		out := make([]int64, 2)
		for _, bad := range [][]int{{5, 4}, {-1}, {n}} {
			if err := c.Gather(bad, out); err == nil {
				t.Fatalf("parked %v: indices %v gathered without an error", parked, bad)
			}
		}
	}
	if err := c.Unpark(); err != nil {
		t.Fatal(err)
	}
	if err := c.Park(failingReads{f}); err != nil {
		t.Fatal(err)
	}
	if err := c.Gather([]int{1}, make([]int64, 1)); err == nil {
		t.Fatal("a failed read gave no error")
	}
}

// TestFramedBlocksRefiled: a column parked, read back and parked again in
// the same file (Park takes the copy there, writing nothing), after other
// columns were written behind it, gives every value to Blocks and Gather,
// and stays parked; a column of headers alone (every block of width 0,
// two spare words) too.
func TestFramedBlocksRefiled(t *testing.T) {
	f := tempSpill(t)
	rng := rand.New(rand.NewPCG(11, 2))
	n := 2*blocksChunk*framedBlock + 1
	mixed, flat := make([]int64, n), make([]int64, 1100*framedBlock+3)
	for i := range mixed {
		switch b := i / framedBlock; b % 4 {
		case 0:
			mixed[i] = -int64(b) // width 0, negative
		case 1:
			mixed[i] = rng.Int64() - rng.Int64() // width 64
		default:
			mixed[i] = rng.Int64N(1<<uint(b%33)) - 1<<20
		}
	}
	for i := range flat {
		flat[i] = int64(i/framedBlock) - 500
	}
	for _, want := range [][]int64{mixed, flat} {
		c := framedOf(t, want)
		if err := c.Park(f); err != nil {
			t.Fatal(err)
		}
		if err := c.Unpark(); err != nil {
			t.Fatal(err)
		}
		other := framedOf(t, mixed) // written behind it
		if err := other.Park(f); err != nil {
			t.Fatal(err)
		}
		size := f.Size()
		if err := c.Park(f); err != nil || c.Bytes() != 0 || f.Size() != size {
			t.Fatalf("parked again: %d bytes held, %d written, error %v", c.Bytes(), f.Size()-size, err)
		}
		next := 0
		if err := c.Blocks(func(first int, vals []int64) {
			for k, x := range vals {
				if x != want[first+k] {
					t.Fatalf("value %d is %d, want %d", first+k, x, want[first+k])
				}
			}
			next = first + len(vals)
		}); err != nil || next != len(want) {
			t.Fatalf("%d values of %d, error %v", next, len(want), err)
		}
		var idx []int
		for i := 0; i < len(want); i += 1 + rng.IntN(5000) {
			idx = append(idx, i, i)
		}
		idx = append(idx, len(want)-1)
		out := make([]int64, len(idx))
		if err := c.Gather(idx, out); err != nil {
			t.Fatal(err)
		}
		for k, i := range idx {
			if out[k] != want[i] {
				t.Fatalf("gathered value %d is %d, want %d", i, out[k], want[i])
			}
		}
		if c.Bytes() != 0 {
			t.Fatalf("Blocks and Gather brought the column back: %d bytes", c.Bytes())
		}
	}
}

// tempSpill returns a spill file in the test's temporary directory,
// closed when the test ends.
func tempSpill(t *testing.T) *spill.File {
	t.Helper()
	f, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
