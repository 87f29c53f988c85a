package narrow

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

// A Step gives back every value a plain slice holds, appended or set
// in any order, across the boundaries of each type (the escapes, one
// past them, the ends of int64), and moves to a wider type only when
// more than 1/stepShare of its values do not fit: a column of small
// values stays a byte a value, one of 16-bit values moves once, one of
// large values twice.
func TestStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	edges := []int64{0, 1, -1, 126, 127, 128, -127, -128, -129, 254, 255, 256,
		32766, 32767, 32768, -32767, -32768, -32769, 65534, 65535, 65536,
		math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MaxUint32, math.MaxUint32 + 1,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	cases := []struct {
		name  string
		draw  func() int64
		width uint8 // the type the column ends in
	}{
		{"bytes", func() int64 { return rng.Int64N(200) - 100 }, 0},
		{"16 bits", func() int64 { return rng.Int64N(60000) - 30000 }, 1},
		{"32 bits", func() int64 { return rng.Int64N(1<<31) - 1<<30 }, 2},
		{"bytes, a few wide", func() int64 {
			if rng.IntN(100) == 0 {
				return edges[rng.IntN(len(edges))]
			}
			return rng.Int64N(100)
		}, 0},
	}
	for _, tc := range cases {
		for _, n := range []int{0, 1, 63, 64, 65, 3000, 20000} {
			var s Step[int8, int16, int32]
			var want []int64
			s.Reserve(n / 2)
			for range n {
				x := tc.draw()
				s.Append(x)
				want = append(want, x)
			}
			// Overwrite some, with values of the case and with edges.
			for range n / 3 {
				k := rng.IntN(n)
				x := tc.draw()
				if rng.IntN(50) == 0 {
					x = edges[rng.IntN(len(edges))]
				}
				s.Set(k, x)
				want[k] = x
			}
			if s.Len() != len(want) {
				t.Fatalf("%s, %d values: Len %d", tc.name, n, s.Len())
			}
			for k, x := range want {
				if got := s.At(k); got != x {
					t.Fatalf("%s, %d values: value %d is %d, want %d", tc.name, n, k, got, x)
				}
			}
			s.Fit()
			for k, x := range want {
				if got := s.At(k); got != x {
					t.Fatalf("%s, %d values: value %d is %d after Fit, want %d", tc.name, n, k, got, x)
				}
			}
			if n >= 3000 && s.w != tc.width {
				t.Errorf("%s, %d values: in type %d, want %d", tc.name, n, s.w, tc.width)
			}
			if n < stepMinWide && s.w != 0 {
				t.Errorf("%s, %d values: moved to type %d with fewer values than stepMinWide", tc.name, n, s.w)
			}
		}
	}
	// Every edge value exactly, alone and among many.
	var s Step[uint8, uint16, uint32]
	for _, x := range edges {
		s.Append(x)
	}
	for k, x := range edges {
		if s.At(k) != x {
			t.Fatalf("unsigned: edge %d is %d", x, s.At(k))
		}
	}
	for range 5000 {
		s.Append(math.MaxUint32 + 7)
	}
	if s.w != 2 || s.At(0) != 0 || s.At(len(edges)+10) != math.MaxUint32+7 {
		t.Errorf("unsigned, values past 32 bits: type %d, values %d, %d", s.w, s.At(0), s.At(len(edges)+10))
	}
}

// TestStepPark: a Step parked in a spill file reads back every value
// (those kept aside too, at each width) and appends after; appends and
// reserves while parked panic; a failed read is an error.
func TestStepPark(t *testing.T) {
	for _, wide := range []int64{100, 1 << 12, 1 << 20, 1 << 40} {
		var s Step[int8, int16, int32]
		var want []int64
		for k := range 5000 {
			x := int64(k%7) - 3
			if k%13 == 0 {
				x = wide - int64(k)
			}
			s.Append(x)
			want = append(want, x)
		}
		f := &memFile{}
		if err := s.Park(f); err != nil {
			t.Fatal(err)
		}
		if !s.Parked() || s.Bytes() != 0 || s.Len() != len(want) {
			t.Fatalf("parked: %v, %d bytes, length %d", s.Parked(), s.Bytes(), s.Len())
		}
		for _, op := range []func(){func() { s.Append(1) }, func() { s.Reserve(10) }} {
			func() {
				defer func() {
					if recover() == nil {
						t.Error("no panic while parked")
					}
				}()
				op()
			}()
		}
		if err := s.Unpark(); err != nil {
			t.Fatal(err)
		}
		s.Append(9)
		want = append(want, 9)
		for k, x := range want {
			if s.At(k) != x {
				t.Fatalf("wide %d: value %d reads %d, want %d", wide, k, s.At(k), x)
			}
		}
		if err := s.Park(f); err != nil {
			t.Fatal(err)
		}
		f.fail = true
		if err := s.Unpark(); err == nil {
			t.Fatal("a failed read gave no error")
		}
	}
}

// memFile is a spill file in memory whose reads fail with fail.
type memFile struct {
	b    []byte
	fail bool
}

func (m *memFile) Append(p []byte) (int64, error) {
	at := int64(len(m.b))
	m.b = append(m.b, p...)
	return at, nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if m.fail {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, m.b[off:]), nil
}

// TestColumnPark: a Column parked in a spill file reads back every value
// (those kept aside too) with its length the while; a failed read is an
// error.
func TestColumnPark(t *testing.T) {
	var c Column[int32]
	var want []int64
	for k := range 3000 {
		x := int64(k*k) - 5
		if k%17 == 0 {
			x = math.MaxInt64 - int64(k)
		}
		c.Append(x)
		want = append(want, x)
	}
	f := &memFile{}
	if err := c.Park(f); err != nil {
		t.Fatal(err)
	}
	if c.Len() != len(want) || c.Bytes() != 0 {
		t.Fatalf("parked: length %d, %d bytes", c.Len(), c.Bytes())
	}
	if err := c.Unpark(); err != nil {
		t.Fatal(err)
	}
	for k, x := range want {
		if c.At(k) != x {
			t.Fatalf("value %d reads %d, want %d", k, c.At(k), x)
		}
	}
	if err := c.Park(f); err != nil {
		t.Fatal(err)
	}
	f.fail = true
	if err := c.Unpark(); err == nil {
		t.Fatal("a failed read gave no error")
	}
}
