package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/lists"
)

// Random writes to the columns read back as a plain slice written alike,
// whether their pages stay empty, hold one value, turn dense or (col32)
// froze and were written again, and after a reset that reuses their
// arrays.
func TestColumnsAsSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c col32
	var p pcol
	var b bcol
	var tc tcol
	for round, n := range []int{5, colPageLen, 3*colPageLen + 17, 10 * colPageLen} {
		def := int32(round - 1)
		c.reset(n, def)
		p.reset(n, def)
		b.reset(n)
		tc.reset(n)
		ref := make([]int32, n)
		for i := range ref {
			ref[i] = def
		}
		bref := make([]uint8, n)
		tref := make([]int64, n)
		for i := range tref {
			tref[i] = -1
		}
		for op := range 20000 {
			i := int32(r.IntN(n))
			var v int32
			switch r.IntN(4) {
			case 0:
				v = def
			case 1, 2:
				v = int32(round) + 7 // one value in most pages
			default:
				v = r.Int32N(1000)
			}
			switch op % 4 {
			case 0, 2:
				c.set(i, v)
				p.set(i, v)
				ref[i] = v
				b.set(i, uint8(v))
				bref[i] = uint8(v)
				// Times within 2^31 of a page's first, and far from it.
				x := int64(v) << 20
				if v%5 == 0 {
					x = int64(v) << 33
				}
				tc.set(i, x)
				tref[i] = x
			case 1:
				if got := p.add(i, v); got != ref[i]+v {
					t.Fatalf("n %d op %d: pcol add(%d, %d) = %d, want %d", n, op, i, v, got, ref[i]+v)
				}
				ref[i] += v
				c.set(i, ref[i])
				b.set(i, uint8(ref[i]))
				bref[i] = uint8(ref[i])
			case 3:
				if r.IntN(8) == 0 { // the page's tasks all completed: a dense page packs
					k := i >> colPageBits
					c.freeze(k, min(colPageLen, n-int(k)*colPageLen))
				}
			}
			if got := c.get(i); got != ref[i] {
				t.Fatalf("n %d op %d: col32 get(%d) = %d, want %d", n, op, i, got, ref[i])
			}
			if got := p.get(i); got != ref[i] {
				t.Fatalf("n %d op %d: pcol get(%d) = %d, want %d", n, op, i, got, ref[i])
			}
			if got := b.get(i); got != bref[i] {
				t.Fatalf("n %d op %d: bcol get(%d) = %d, want %d", n, op, i, got, bref[i])
			}
			if got := tc.get(i); got != tref[i] {
				t.Fatalf("n %d op %d: tcol get(%d) = %d, want %d", n, op, i, got, tref[i])
			}
		}
	}
}

// A col32 written at few entries, or with one value in each page,
// allocates no dense page.
func TestCol32Sparse(t *testing.T) {
	var c col32
	n := 100 * colPageLen
	c.reset(n, -1)
	for i := 0; i < n; i += 3 {
		c.set(int32(i), 0) // a task of every three joins barrier 0
	}
	for i := 0; i < n; i += 5000 {
		c.set(int32(i), int32(i)) // a few of another value
	}
	dense := 0
	for _, d := range c.dense {
		if d != nil {
			dense++
		}
	}
	if want := (n + 4999) / 5000; dense > want {
		t.Errorf("%d dense pages, want at most %d", dense, want)
	}
}

// An hcol's lists read back as pushed, and a page whose lists are all
// empty again goes: the successor lists of tasks shrink as they complete.
func TestHcol(t *testing.T) {
	var pool lists.Pool
	var c hcol
	n := 8 * colPageLen
	c.reset(n)
	for i := range int32(n) {
		for k := range 1 + i%3 {
			c.push(&pool, i, 2*i+k*int32(i%2)) // runs and, on odd tasks, cells
		}
	}
	for i := range int32(n) {
		got := pool.AppendHead(nil, c.get(i))
		if len(got) != 1+int(i%3) || got[len(got)-1] != 2*i {
			t.Fatalf("task %d: list %v", i, got)
		}
	}
	for i := range int32(n) {
		pool.ReleaseHead(c.get(i))
		c.clear(i)
	}
	for k, d := range c.dense {
		if d != nil || c.n[k] != 0 {
			t.Fatalf("page %d kept after its lists emptied (%d counted)", k, c.n[k])
		}
	}
	if len(c.free) > keepFree {
		t.Errorf("%d pages kept, want at most %d", len(c.free), keepFree)
	}
	// Runs an entry holds (near their task, up to 127 long) and runs it
	// cannot (far before or after it, longer) read back the same.
	c.reset(1<<24 + 10)
	const far = 1 << 24
	for _, tc := range []struct {
		i, first, len int32
	}{{5, 6, 3}, {6, 7, 127}, {7, 8, 128}, {8, 9 + 1<<23 - 2, 1}, {9, 10 + 1<<23, 1}, {far, far - 1<<23, 2},
		{far + 1, far - 1<<23 - 5, 3}, {20000, 0, 1}, {20001, 1 << 30, 300}} {
		for v := tc.first; v < tc.first+tc.len; v++ {
			c.push(&pool, tc.i, v)
		}
		got := pool.AppendHead(nil, c.get(tc.i))
		if len(got) != int(tc.len) || got[0] != tc.first+tc.len-1 || got[len(got)-1] != tc.first {
			t.Errorf("task %d: run %d..%d read back as %d values, %d..%d", tc.i, tc.first, tc.first+tc.len-1, len(got), got[len(got)-1], got[0])
		}
	}
}

// An fcol reads back what was written, its pages dense, frozen (packed),
// unpacked again by a write after they froze, or never written, and take
// packs every task's entry as the graph keeps them and forgets the frozen
// pages; a reset reuses what it can and reads -1 everywhere.
func TestFcol(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var c fcol
	for _, n := range []int{1, 65, colPageLen, 5*colPageLen + 77} {
		c.reset(n)
		ref := make([]int32, n)
		for i := range ref {
			ref[i] = -1
		}
		np := (n + colPageLen - 1) / colPageLen
		for op := range 20000 {
			i := int32(r.IntN(n))
			k := i >> colPageBits
			switch r.IntN(10) {
			case 0: // every task of the page completed
				c.freeze(k, min(colPageLen, n-int(k)*colPageLen))
				if c.dense[k] != nil {
					t.Fatalf("n %d op %d: page %d dense after freeze", n, op, k)
				}
			default:
				// Fragments of nearby tasks are close; some far, some -1.
				v := int32(op) + r.Int32N(100)
				switch r.IntN(20) {
				case 0:
					v = r.Int32()
				case 1:
					v = -1
				}
				c.set(i, v)
				ref[i] = v
			}
			if j := int32(r.IntN(n)); c.get(j) != ref[j] {
				t.Fatalf("n %d op %d: get(%d) = %d, want %d", n, op, j, c.get(j), ref[j])
			}
		}
		// A page written to once, frozen, then left: it stays packed.
		c.set(0, 42)
		ref[0] = 42
		c.freeze(0, min(colPageLen, n))
		if c.dense[0] != nil || c.froze[0].Len() == 0 {
			t.Fatalf("n %d: page 0 not frozen", n)
		}
		f := c.take(n)
		if f.Len() != n {
			t.Fatalf("n %d: %d entries taken", n, f.Len())
		}
		for i := range n {
			if got := f.At(i); got != ref[i] {
				t.Fatalf("n %d: taken entry %d = %d, want %d", n, i, got, ref[i])
			}
		}
		for k := range np {
			if c.froze[k].Len() > 0 {
				t.Fatalf("n %d: frozen page %d kept after take", n, k)
			}
		}
	}
	c.reset(3 * colPageLen)
	for i := range int32(3 * colPageLen) {
		if c.get(i) != -1 {
			t.Fatalf("entry %d = %d after reset", i, c.get(i))
		}
	}
}

// An lcol's lists read back as a plain slice of lists pushed and taken
// alike, and its pages go once every list in them is taken, a few kept
// for the next pages; after a reset that reuses pages left with lists,
// every list reads empty.
func TestLcol(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var pool lists.Pool
	var c lcol
	for _, n := range []int{7, 3*colPageLen + 5, 8 * colPageLen} {
		c.reset(n)
		for i := range int32(n) {
			if c.get(i) != lists.None {
				t.Fatalf("n %d: list %d not empty after reset", n, i)
			}
		}
		ref := make([][]int32, n)
		for op := range 30000 {
			// Lists of tasks near one another, as tasks run in turn.
			i := int32(min(n-1, op*n/30000+r.IntN(50)))
			if r.IntN(3) > 0 {
				v := r.Int32N(1 << 20)
				c.push(&pool, i, v)
				ref[i] = append([]int32{v}, ref[i]...)
				continue
			}
			h := c.take(i)
			var got []int32
			for x := h; x != lists.None; x = pool.Next(x) {
				got = append(got, pool.Value(x))
			}
			pool.Release(h)
			if !slices.Equal(got, ref[i]) {
				t.Fatalf("n %d op %d: took %v from list %d, want %v", n, op, got, i, ref[i])
			}
			ref[i] = nil
			if c.get(i) != lists.None {
				t.Fatalf("n %d op %d: list %d not empty once taken", n, op, i)
			}
		}
		// The tasks of the first pages complete: their lists are taken.
		for i := range min(n, 2*colPageLen) {
			pool.Release(c.take(int32(i)))
			ref[i] = nil
		}
		for k, d := range c.dense {
			nonEmpty := int32(0)
			for i := k * colPageLen; i < min(n, (k+1)*colPageLen); i++ {
				if len(ref[i]) > 0 {
					nonEmpty++
				}
			}
			if (d != nil) != (nonEmpty > 0) || c.n[k] != nonEmpty {
				t.Fatalf("n %d: page %d present %v, counted %d, with %d lists", n, k, d != nil, c.n[k], nonEmpty)
			}
		}
		if len(c.free) > keepFree {
			t.Errorf("n %d: %d pages kept, want at most %d", n, len(c.free), keepFree)
		}
	}
}

// A tcol keeps the times of a page that lie within 2^31 ns of its first
// as offsets, whichever comes first, and turns a page whose times do not
// into one of times, keeping what it held.
func TestTcolNarrow(t *testing.T) {
	var c tcol
	n := 4 * colPageLen
	c.reset(n)
	ref := make([]int64, n)
	for i := range ref {
		ref[i] = -1
	}
	base := int64(1) << 40
	for i := range int32(n) {
		if i%3 != 0 {
			ref[i] = base + int64(i%colPageLen-colPageLen/2)*500_000 // ±1 s about the page's first
			c.set(i, ref[i])
		}
	}
	// One time of page 2 far from its first; -1 and extreme values in page 3.
	ref[2*colPageLen+7] = base + 1<<31
	c.set(2*colPageLen+7, ref[2*colPageLen+7])
	for _, i := range []int32{3*colPageLen + 1, 3*colPageLen + 2, 3*colPageLen + 4} {
		ref[i] = []int64{-1, math.MinInt64, math.MaxInt64}[i%3]
		c.set(i, ref[i])
	}
	for i := range int32(n) {
		if got := c.get(i); got != ref[i] {
			t.Fatalf("time %d = %d, want %d", i, got, ref[i])
		}
	}
	for k := range 4 {
		want := []string{"32", "32", "40", "64"}[k]
		if got := tcolForm(&c, int32(k)); got != want {
			t.Errorf("page %d: %s bits, want %s", k, got, want)
		}
	}
}

// tcolForm names the form of page k of c: offsets of 32 or 40 bits, times
// (64), or none; "two" when it has more than one.
func tcolForm(c *tcol, k int32) string {
	var forms []string
	if c.dense[k] != nil {
		forms = append(forms, "32")
	}
	if c.mid[k] != nil {
		forms = append(forms, "40")
	}
	if c.wide[k] != nil {
		forms = append(forms, "64")
	}
	switch len(forms) {
	case 0:
		return "none"
	case 1:
		return forms[0]
	}
	return "two"
}

// A tcol page whose times do not fit 32-bit offsets from its first keeps
// them as 40-bit ones while they lie in [−127·2³², 2³⁹) of it (the high
// byte's −128 marks an entry unwritten), and turns to times at the first
// that does not, from either form; every time written reads back, the
// others -1 (TaskTimes' blocks too), and the page form is the least that
// holds its times.
func TestTcolOffsets40(t *testing.T) {
	const lo40, hi40 = -127 << 32, 1<<39 - 1 // the 40-bit offsets' range
	base := int64(1) << 50
	for _, tc := range []struct {
		name string
		offs []int64 // written in order to entries 0, 1, … of page 1, after its first (offset 0)
		want string
	}{
		{"32 bits", []int64{math.MaxInt32, math.MinInt32 + 1}, "32"},
		{"32 bits' none", []int64{math.MinInt32}, "40"},
		{"one past 32 bits", []int64{5, math.MaxInt32 + 1, -7}, "40"},
		{"the 40 bits' top", []int64{hi40, -1, 1 << 32}, "40"},
		{"the 40 bits' bottom", []int64{lo40, lo40 + 1, math.MinInt32}, "40"},
		{"one past the top", []int64{hi40 + 1}, "64"},
		{"one past the bottom", []int64{lo40 - 1}, "64"},
		{"−2³⁹", []int64{-1 << 39}, "64"},
		{"40 bits, then past them", []int64{1 << 35, 3, hi40 + 1, 9}, "64"},
		{"wrapped around", []int64{math.MinInt64 - base}, "64"},
	} {
		var c tcol
		n := 3 * colPageLen
		c.reset(n)
		ref := make([]int64, n)
		for i := range ref {
			ref[i] = -1
		}
		write := func(i int32, x int64) {
			c.set(i, x)
			ref[i] = x
		}
		first := int32(colPageLen)
		write(first+100, base) // the page's first
		for j, o := range tc.offs {
			write(first+int32(j)*7, base+o)
		}
		write(first+200, base+11) // after each turn: an offset of any form
		write(2*colPageLen+3, base)
		for i := range int32(n) {
			if got := c.get(i); got != ref[i] {
				t.Fatalf("%s: time %d = %d, want %d", tc.name, i, got, ref[i])
			}
		}
		for k, want := range []string{"none", tc.want, "32"} {
			if got := tcolForm(&c, int32(k)); got != want {
				t.Errorf("%s: page %d: %s bits, want %s", tc.name, k, got, want)
			}
		}
		// TaskTimes reads the pages a block of 64 at a time.
		s := &Sim{Tasks: make(Tasks, n)}
		s.cols.started = c
		s.cols.run.reset(n)
		r := s.Times()
		for i := range int32(n) {
			if got, _ := r.At(i); got != ref[i] {
				t.Fatalf("%s: TaskTimes: time %d = %d, want %d", tc.name, i, got, ref[i])
			}
		}
	}
}

// An rcol reads back what was written, 0 elsewhere, whether its pages are
// dense or frozen (any int32, the run times past 2^31 ns as negative
// ones), and a write to a frozen page unpacks it, keeping the rest.
func TestRcolFreeze(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var c rcol
	n := 3*colPageLen + 100
	c.reset(n)
	ref := make([]int32, n)
	for i := range int32(n) {
		if i >= colPageLen && i < 2*colPageLen {
			continue // page 1 never written
		}
		switch r.IntN(4) {
		case 0:
		case 1:
			ref[i] = int32(r.Uint32())
		default:
			ref[i] = 1000 + int32(r.IntN(5000))
		}
		if ref[i] != 0 || r.IntN(2) == 0 {
			c.set(i, ref[i])
		}
	}
	check := func(what string) {
		t.Helper()
		for i := range int32(n) {
			if got := c.get(i); got != ref[i] {
				t.Fatalf("%s: run %d = %d, want %d", what, i, got, ref[i])
			}
		}
	}
	check("dense")
	for k := range int32(4) {
		c.freeze(k, min(colPageLen, n-int(k)*colPageLen))
	}
	if c.dense[0] != nil || c.dense[3] != nil || c.froze[3].Len() != 100 {
		t.Fatalf("pages 0 and 3 not frozen")
	}
	check("frozen")
	ref[3*colPageLen+7] = -5
	c.set(3*colPageLen+7, -5)
	check("written after frozen")
	c.reset(n)
	for i := range int32(n) {
		if got := c.get(i); got != 0 {
			t.Fatalf("after reset: run %d = %d, want 0", i, got)
		}
	}
}

// A zcol's counts read back as a plain slice's added to alike (negative
// ones too), and its pages go once every count in them is 0 again, a few
// kept for the next pages, which read 0 where they are reused; after a
// reset that reuses pages left with counts, every count reads 0.
func TestZcol(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var c zcol
	for _, n := range []int{7, 3*colPageLen + 5, 8 * colPageLen} {
		c.reset(n)
		ref := make([]int32, n)
		check := func(op int, i int32) {
			t.Helper()
			if got := c.get(i); got != ref[i] {
				t.Fatalf("n %d op %d: count %d = %d, want %d", n, op, i, got, ref[i])
			}
		}
		for i := range int32(n) {
			check(-1, i)
		}
		for op := range 30000 {
			// Parents near one another, as tasks are made in turn.
			i := int32(min(n-1, op*n/30000+r.IntN(50)))
			x := int32(r.IntN(5) - 2)
			if got := c.add(i, x); got != ref[i]+x {
				t.Fatalf("n %d op %d: add(%d, %d) = %d, want %d", n, op, i, x, got, ref[i]+x)
			}
			ref[i] += x
			check(op, i)
			check(op, int32(r.IntN(n)))
		}
		// The children of the first pages' tasks complete.
		for i := range min(n, 2*colPageLen) {
			c.add(int32(i), -ref[i])
			ref[i] = 0
		}
		for k, d := range c.dense {
			nonZero := int32(0)
			for i := k * colPageLen; i < min(n, (k+1)*colPageLen); i++ {
				if ref[i] != 0 {
					nonZero++
				}
			}
			if (d != nil) != (nonZero > 0) || c.n[k] != nonZero {
				t.Fatalf("n %d: page %d present %v, counted %d, with %d counts not 0", n, k, d != nil, c.n[k], nonZero)
			}
		}
		if len(c.free) > keepFree {
			t.Errorf("n %d: %d pages kept, want at most %d", n, len(c.free), keepFree)
		}
		for i := range int32(n) {
			check(-2, i)
		}
	}
}

// Random puts, gets and deletes on a taskMap give what a Go map gives,
// including deletions in the middle of probe runs and growth.
func TestTaskMapAsMap(t *testing.T) {
	for _, keys := range []int32{4, 64, 5000} {
		r := rand.New(rand.NewPCG(uint64(keys), 9))
		var m taskMap
		m.reset(int(keys) << 12)
		ref := map[int32]int32{}
		for op := range 50000 {
			k := r.Int32N(keys)
			if r.IntN(3) == 0 {
				k *= 1 << 12 // keys that share a home bucket's neighbourhood
			}
			switch r.IntN(3) {
			case 0:
				m.del(k)
				delete(ref, k)
			default:
				v := r.Int32N(10)
				m.insert(k, v)
				ref[k] = v
			}
			if op%1000 == 0 {
				for k, v := range ref {
					if got := m.get(k, -1); got != v {
						t.Fatalf("keys %d op %d: get(%d) = %d, want %d", keys, op, k, got, v)
					}
				}
			}
			want, ok := ref[k]
			if !ok {
				want = -1
			}
			if got := m.get(k, -1); got != want || m.n != len(ref) {
				t.Fatalf("keys %d op %d: get(%d) = %d (%d entries), want %d (%d)", keys, op, k, got, m.n, want, len(ref))
			}
			if op == 25000 {
				m.reset(int(keys) << 12)
				clear(ref)
			}
		}
	}
}

// Counts read back what was set, small ones in a byte, others (large,
// negative) exactly.
func TestCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var c counts
	const n = 3 * colPageLen
	c.reset(n)
	ref := make([]int32, n)
	for op := range 100000 {
		i := r.Int32N(n)
		v := r.Int32N(300) - 20
		switch op % 3 {
		case 0:
			v = ref[i] + 1
			c.set(i, v)
		case 1:
			d := r.Int32N(7) - 3
			if got := c.add(i, d); got != ref[i]+d {
				t.Fatalf("op %d: add(%d, %d) = %d, want %d", op, i, d, got, ref[i]+d)
			}
			v = ref[i] + d
		default:
			c.set(i, v)
		}
		ref[i] = v
		if got := c.get(i); got != v {
			t.Fatalf("op %d: get(%d) = %d, want %d", op, i, got, v)
		}
	}
	for i, v := range ref {
		if got := c.get(int32(i)); got != v {
			t.Fatalf("get(%d) = %d, want %d", i, got, v)
		}
	}
	big := 0
	for _, v := range ref {
		if v < 0 || v >= bigCount {
			big++
		}
	}
	if c.big.n != big {
		t.Errorf("%d counts in the table, want %d", c.big.n, big)
	}
}
