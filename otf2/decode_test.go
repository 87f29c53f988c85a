package otf2

import (
	"errors"
	"math/rand"
	"testing"
)

// compressed reads what OTF2 wrote, in either byte order, whether eight
// bytes follow the length byte or the value ends the buffer, and refuses
// a length byte over the field's width or past the buffer's end.
func TestCompressedAsBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for k := range 20000 {
		big := k%2 == 0
		max := 8
		if k%3 == 0 {
			max = 4
		}
		n := 1 + rng.Intn(max)
		var v uint64
		b := []byte{byte(n)}
		for i := range n {
			c := byte(rng.Intn(256))
			if big {
				v = v<<8 | uint64(c)
			} else {
				v |= uint64(c) << (8 * i)
			}
			b = append(b, c)
		}
		tail := rng.Intn(10) // what follows: none leaves the loop's path
		for range tail {
			b = append(b, 0xa5)
		}
		d := dec{b: b, big: big}
		got, err := d.compressed(max)
		if err != nil || got != v || d.pos != 1+n {
			t.Fatalf("% x (big %v, max %d): got %#x, pos %d, %v; want %#x, pos %d", b, big, max, got, d.pos, err, v, 1+n)
		}
		// Cut inside the value: an error, whatever follows in memory.
		short := dec{b: b[:1+rng.Intn(n)], big: big}
		if _, err := short.compressed(max); err == nil {
			t.Fatalf("% x cut to %d bytes: no error", b, len(short.b))
		}
	}
	for _, c := range []struct {
		b    []byte
		max  int
		want uint64
		err  bool
	}{
		{[]byte{0}, 8, 0, false},
		{[]byte{0xff}, 4, 0xffffffff, false},
		{[]byte{0xff}, 8, ^uint64(0), false},
		{[]byte{5, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 4, 0, true},
		{[]byte{9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 8, 0, true},
		{nil, 8, 0, true},
	} {
		d := dec{b: c.b}
		got, err := d.compressed(c.max)
		var fe *FormatError
		if c.err != (err != nil) || err != nil && !errors.As(err, &fe) || got != c.want {
			t.Errorf("% x, max %d: got %#x, %v", c.b, c.max, got, err)
		}
	}
}
