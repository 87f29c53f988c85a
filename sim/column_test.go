package sim

import (
	"math/rand/v2"
	"testing"
)

// Random writes to a col32 read back as a plain slice written alike,
// whether the pages stay empty, hold one value or turn dense, and after a
// reset that reuses the arrays.
func TestCol32AsSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c col32
	for round, n := range []int{5, colPageLen, 3*colPageLen + 17, 10 * colPageLen} {
		def := int32(round - 1)
		c.reset(n, def)
		ref := make([]int32, n)
		for i := range ref {
			ref[i] = def
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
			if op%2 == 0 {
				c.set(i, v)
				ref[i] = v
			}
			if got := c.get(i); got != ref[i] {
				t.Fatalf("n %d op %d: get(%d) = %d, want %d", n, op, i, got, ref[i])
			}
		}
		for pi, p := range c.pages {
			nd := int32(0)
			for k := pi * colPageLen; k < min(n, (pi+1)*colPageLen); k++ {
				if ref[k] != def {
					nd++
				}
			}
			if p.n != nd || nd == 0 && (p.dense != nil || p.set != nil) {
				t.Fatalf("n %d: page %d counts %d entries set (arrays %v %v), want %d", n, pi, p.n, p.dense != nil, p.set != nil, nd)
			}
		}
		var blk []int32
		for b := range (n + 63) / 64 {
			blk = c.block(b, n, blk[:0])
			for k, v := range blk {
				if v != ref[b*64+k] {
					t.Fatalf("n %d: block %d entry %d = %d, want %d", n, b, k, v, ref[b*64+k])
				}
			}
		}
	}
}

// A column written at few entries, or with one value in each page,
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
	for _, p := range c.pages {
		if p.dense != nil {
			dense++
		}
	}
	if want := (n + 4999) / 5000; dense > want {
		t.Errorf("%d dense pages, want at most %d", dense, want)
	}
}

// Random puts, gets and deletes on a taskMap give what a Go map gives,
// including deletions in the middle of probe runs and growth.
func TestTaskMapAsMap(t *testing.T) {
	for _, keys := range []int32{4, 64, 5000} {
		r := rand.New(rand.NewPCG(uint64(keys), 9))
		var m taskMap
		ref := map[int32]int32{}
		for op := range 50000 {
			k := r.Int32N(keys)
			if r.IntN(3) == 0 {
				k *= 1 << 12 // keys that share a home bucket's neighbourhood
			}
			switch r.IntN(3) {
			case 0:
				m.put(k, -1, -1)
				delete(ref, k)
			default:
				v := r.Int32N(10)
				m.put(k, v, -1)
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
				m.clear()
				clear(ref)
			}
		}
	}
}

// A page whose entries are all set back to def is emptied: the column of
// tasks' predecessors shrinks as they complete.
func TestCol32Empties(t *testing.T) {
	var c col32
	n := 8 * colPageLen
	c.reset(n, 0)
	for i := range int32(n) {
		c.set(i, 1+i%3) // dense pages
	}
	for i := range int32(n) {
		c.set(i, 0)
	}
	for k, p := range c.pages {
		if p.dense != nil || p.set != nil || p.n != 0 {
			t.Fatalf("page %d kept its array after every entry went back to 0", k)
		}
	}
	if len(c.freeDense) > keepFree {
		t.Errorf("%d arrays kept, want at most %d", len(c.freeDense), keepFree)
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
		if op%3 == 0 {
			v = ref[i] + 1
		}
		c.set(i, v)
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
