package graph

import (
	"math/rand/v2"
	"testing"
)

// The column gives back every entry set, near or far, slot or NoEntry,
// whatever was set before; pages with many entries from beyond a byte
// turn to 16 bits, those with many from beyond 16 bits too turn wide, and
// every value is kept through both; a recycled column starts empty.
func TestArgColumn(t *testing.T) {
	const n = 5*argPage + 123
	rng := rand.New(rand.NewPCG(1, 2))
	var c *ArgColumn
	for round := range 4 {
		c = newArgColumn(n, c)
		want := make([]Entry, n)
		far16 := make([]bool, n) // set once beyond 16 bits
		// The far entries of a near page as the column keeps them: a node
		// set beyond a byte is in until set to NoEntry (set near, its
		// entry stays, unread); a page turns once more than an eighth
		// of its nodes are in.
		in := make([]bool, n)
		inPage := make([]int, 6)
		turned := make([]bool, 6)
		// A page is made at its first entry: mid at once when the page
		// before it turned (or was made so).
		made, startMid := make([]bool, 6), make([]bool, 6)
		for i := range want {
			want[i] = NoEntry
			if got := c.At(int32(i)); got != NoEntry {
				t.Fatalf("round %d: node %d starts at %d, want NoEntry", round, i, got)
			}
		}
		// Far entries, with odds round·4/64 in pages 0–1 (of any kind),
		// 32/64 in page 2 (within 16 bits), none in pages 3–4, and 32/64
		// in the last, short page (of any kind).
		for range 8 * n {
			i := int32(rng.IntN(n))
			farOdds, kinds := round*4, 4
			switch {
			case i >= 5*argPage:
				farOdds = 32
			case i >= 3*argPage:
				farOdds = 0
			case i >= 2*argPage:
				farOdds, kinds = 32, 2
			}
			var e Entry
			switch {
			case rng.IntN(64) < farOdds:
				switch rng.IntN(kinds) {
				case 0:
					e = Entry(i - 129 - rng.Int32N(32767-129)) // within 16 bits
				case 1:
					e = Entry(rng.Int32N(n)) // anywhere (all within 16 bits)
				case 2:
					e = Entry(^rng.Int32N(1 << 20)) // a remote slot
				default:
					e = Entry(i) // no node is its own input, but it is held exactly
				}
			case rng.IntN(16) == 0:
				e = NoEntry
			default:
				e = Entry(i - 1 - rng.Int32N(128)) // near
			}
			p := i / argPage
			if !made[p] {
				made[p], startMid[p] = true, p > 0 && (turned[p-1] || startMid[p-1])
			}
			c.Set(i, e)
			want[i] = e
			d := int64(i) - int64(e)
			switch {
			case e == NoEntry:
				if in[i] {
					in[i] = false
					inPage[p]--
				}
			case d == 0 || d != int64(int8(d)):
				far16[i] = far16[i] || d == 0 || d != int64(int16(d))
				if !in[i] {
					in[i] = true
					inPage[p]++
				}
			}
			if inPage[p] > min(argPage, n-int(p)*argPage)/8 {
				turned[p] = true
			}
		}
		for i, e := range want {
			if got := c.At(int32(i)); got != e {
				t.Fatalf("round %d: node %d holds %d, want %d", round, i, got, e)
			}
		}
		// A page turns mid once more than an eighth of its nodes were kept
		// far, and wide only once more than an eighth were set beyond 16
		// bits.
		state := make([]string, len(c.near))
		for p := range c.near {
			lo, hi := p*argPage, min(n, (p+1)*argPage)
			count := func(f []bool) (k int) {
				for _, x := range f[lo:hi] {
					if x {
						k++
					}
				}
				return k
			}
			f16 := count(far16)
			switch {
			case !c.made(int32(p)):
				state[p] = "none"
			case c.near[p] != nil:
				state[p] = "near"
			case c.mid[p] != nil:
				state[p] = "mid"
			default:
				state[p] = "wide"
			}
			if (state[p] == "near") == (turned[p] || startMid[p]) {
				t.Errorf("round %d: page %d of %d nodes, more than an eighth kept far %v, made mid %v: %s", round, p, hi-lo, turned[p], startMid[p], state[p])
			}
			if state[p] == "wide" && f16 <= (hi-lo)/8 {
				t.Errorf("round %d: page %d of %d nodes, %d set beyond 16 bits: wide", round, p, hi-lo, f16)
			}
		}
		if state[2] != "mid" || state[4] != "near" || state[5] != "wide" || state[3] != "near" && !startMid[3] {
			t.Errorf("round %d: pages %v, want pages 2–5 mid, near (or mid, made after page 2 turned), near, wide", round, state)
		}
		if got := c.entries(); len(got) != n || got[n-1] != want[n-1] {
			t.Fatalf("round %d: Entries gives %d values", round, len(got))
		}
	}
	// The byte's bounds: −128…127 near but 0, the rest far.
	c = newArgColumn(400, nil)
	for _, d := range []int32{127, -128, 128, -129, 0, 1, -1} {
		c.Set(200, Entry(200-d))
		if got := c.At(200); got != Entry(200-d) {
			t.Errorf("distance %d: got %d, want %d", d, got, 200-d)
		}
	}
	// 16 bits' bounds on a mid page (its first 600 nodes set 300 back),
	// the values set before it turned kept.
	c = newArgColumn(3*argPage, nil)
	const at = argPage + 3000
	for i := int32(at - 600); i < at; i++ {
		c.Set(i, Entry(i-300))
	}
	if c.mid[1] == nil {
		t.Fatal("page 1 did not turn to 16 bits")
	}
	// Pages are made at their first entry: mid at once after the page
	// before turned; a page never set reads NoEntry; a recycled column
	// makes its near pages from the last one's.
	q := newArgColumn(3*argPage, nil)
	for i := range int32(argPage) {
		q.Set(i, Entry(i-300))
	}
	if q.Set(argPage+5, Entry(argPage+4)); q.mid[0] == nil || q.mid[1] == nil || q.At(argPage+5) != Entry(argPage+4) {
		t.Fatal("page 1, made after page 0 turned, is not at 16 bits")
	}
	if q.made(2) || q.At(2*argPage+7) != NoEntry {
		t.Fatal("a page never set is made, or reads other than NoEntry")
	}
	r := newArgColumn(argPage, nil)
	r.Set(3, 2)
	r = newArgColumn(argPage, r)
	spare := len(r.spare)
	r.Set(9, 8)
	if spare != 1 || len(r.spare) != 0 || r.At(9) != 8 || r.At(3) != NoEntry {
		t.Fatal("a recycled column's page not taken, or not cleared")
	}
	// The eighth: 512 far entries keep a page of 4096 near, 513 turn it.
	b := newArgColumn(argPage, nil)
	for i := range int32(argPage / 8) {
		b.Set(i*8+5, Entry(i*8+5-1000))
	}
	if b.near[0] == nil {
		t.Fatal("512 far entries of 4096 turned the page")
	}
	if b.Set(4095, 0); b.near[0] != nil {
		t.Fatal("513 far entries of 4096 left the page near")
	}
	for i := int32(at - 600); i < at; i++ {
		if got := c.At(i); got != Entry(i-300) {
			t.Fatalf("node %d: got %d after the page turned, want %d", i, got, i-300)
		}
	}
	for _, d := range []int32{32767, -32768, 32768, -32769, 0, 1, 200, at + 5} {
		c.Set(at, Entry(at-d))
		if got := c.At(at); got != Entry(at-d) {
			t.Errorf("distance %d on a mid page: got %d, want %d", d, got, at-d)
		}
	}
}

// entries returns the column as a slice.
func (a *ArgColumn) entries() []Entry {
	out := make([]Entry, a.Len())
	for n := range out {
		out[n] = a.At(int32(n))
	}
	return out
}

// room returns the nodes the column's pages hold without new ones.
func (a *ArgColumn) room() int {
	r := 0
	for _, p := range a.near {
		r += cap(p)
	}
	for _, p := range a.spare {
		r += cap(p)
	}
	return r
}
