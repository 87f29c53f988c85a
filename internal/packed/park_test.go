package packed

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/internal/spill"
)

// TestPark: lists and columns parked in one file, several of them, read
// back as they were (empty ones, one block, many blocks, the three pair
// layouts); a list parked twice is parked once; a read back from a closed
// file is an error.
func TestPark(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	f, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type pl struct {
		p    Pairs
		want [][2]int32
	}
	type col struct {
		c    Int32s
		want []int32
	}
	var pls []*pl
	var cols []*col
	for trial := range 12 {
		x := &pl{}
		switch trial % 3 {
		case 1:
			x.p = NewPairsByA()
		}
		n := []int{0, 5, 40000}[rng.IntN(3)]
		a, b := int32(0), int32(0)
		for range n {
			b += int32(rng.IntN(3))
			a = b - int32(rng.IntN(300))
			x.p.Append(a, b)
			x.want = append(x.want, [2]int32{a, b})
		}
		if trial%3 == 2 {
			x.p.Compact()
		}
		if err := x.p.Park(f); err != nil {
			t.Fatal(err)
		}
		if err := x.p.Park(f); err != nil { // parked already: nothing
			t.Fatal(err)
		}
		pls = append(pls, x)
		c := &col{}
		for range rng.IntN(3) * 3000 {
			c.want = append(c.want, rng.Int32N(1<<20)-1<<19)
		}
		c.c = PackInt32s(c.want)
		if err := c.c.Park(f); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	for k, x := range slices.Backward(pls) {
		if err := x.p.Unpark(); err != nil {
			t.Fatal(err)
		}
		var got [][2]int32
		x.p.Each(func(a, b int32) { got = append(got, [2]int32{a, b}) })
		if !slices.Equal(got, x.want) || x.p.Len() != len(x.want) {
			t.Fatalf("list %d: %d pairs back of %d, differing", k, len(got), len(x.want))
		}
	}
	for k, c := range cols {
		if err := c.c.Unpark(); err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			if got := c.c.At(i); got != w {
				t.Fatalf("column %d: value %d is %d back, %d before", k, i, got, w)
			}
		}
	}
	var p Pairs
	for i := range 1000 {
		p.Append(int32(i), int32(i+1))
	}
	if err := p.Park(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := p.Unpark(); err == nil {
		t.Error("a list read back from a closed file: no error")
	}
}
