package packed

import (
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// memSpill is a Spiller in memory that can be told to fail its writes
// from the failAt-th on (0: never) and its reads (failReads), and whose
// reads at the end return io.EOF with every byte read, as a ReaderAt
// may.
type memSpill struct {
	data      []byte
	writes    int
	failAt    int
	failReads bool
}

func (m *memSpill) Append(p []byte) (int64, error) {
	m.writes++
	if m.failAt > 0 && m.writes >= m.failAt {
		return 0, errors.New("disk full")
	}
	off := int64(len(m.data))
	m.data = append(m.data, p...)
	return off, nil
}

func (m *memSpill) ReadAt(p []byte, off int64) (int, error) {
	if m.failReads {
		return 0, errors.New("I/O error")
	}
	if off < 0 || off > int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if off+int64(n) == int64(len(m.data)) {
		return n, io.EOF
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readAll reads p through its Reader, in batches of 7 pairs (a batch
// across block ends).
func readAll(p *Pairs) ([][2]int32, error) {
	r := p.Reader()
	var as, bs [7]int32
	var got [][2]int32
	for k := r.Read(as[:], bs[:]); k > 0; k = r.Read(as[:], bs[:]) {
		for i := range k {
			got = append(got, [2]int32{as[i], bs[i]})
		}
	}
	return got, r.Err()
}

// TestStreamTo: lists streamed to a file read back as the same lists
// kept in memory, the two layouts, while being written and once parked;
// only the block being written and the small first blocks stay in
// memory; a failed write leaves the rest in memory, readable; a failed
// read ends the list with an error; Each reads a streamed list too.
func TestStreamTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 1))
	for trial := range 24 {
		byA := trial%2 == 1
		failAt := []int{0, 0, 3, 6}[trial/2%4]
		plain, streamed := Pairs{}, Pairs{}
		if byA {
			plain, streamed = NewPairsByA(), NewPairsByA()
		}
		f := &memSpill{failAt: failAt}
		streamed.StreamTo(f)
		n := []int{0, 9, 5000, 200000}[trial%4]
		a, b := int32(0), int32(0)
		var want [][2]int32
		for range n {
			b += int32(rng.IntN(5)) - 1
			a = b - int32(rng.IntN(1<<uint(rng.IntN(20))))
			plain.Append(a, b)
			streamed.Append(a, b)
			want = append(want, [2]int32{a, b})
		}
		got, err := readAll(&streamed)
		if err != nil || !slices.Equal(got, want) || streamed.Len() != n {
			t.Fatalf("trial %d: %d pairs read of %d (err %v)", trial, len(got), n, err)
		}
		if failAt == 0 && streamed.Bytes() > 2*maxBlock {
			t.Fatalf("trial %d: %d bytes in memory while streaming (plain %d)", trial, streamed.Bytes(), plain.Bytes())
		}
		if failAt == 3 && n == 200000 && (f.writes < 3 || streamed.Bytes() < plain.Bytes()/2) {
			t.Fatalf("trial %d: %d writes, %d bytes in memory after a failed write (plain %d)", trial, f.writes, streamed.Bytes(), plain.Bytes())
		}
		var each [][2]int32
		streamed.Each(func(a, b int32) { each = append(each, [2]int32{a, b}) })
		if !slices.Equal(each, want) {
			t.Fatalf("trial %d: Each gave %d pairs of %d", trial, len(each), n)
		}
		err = streamed.Park(f)
		if failAt == 0 && (err != nil || streamed.Bytes() != 0) {
			t.Fatalf("trial %d: parked a streamed list: %v, %d bytes left", trial, err, streamed.Bytes())
		}
		if err := streamed.Unpark(); err != nil {
			t.Fatal(err)
		}
		if got, err := readAll(&streamed); err != nil || !slices.Equal(got, want) {
			t.Fatalf("trial %d: after Park, %d pairs read of %d (err %v)", trial, len(got), n, err)
		}
		if n == 200000 && failAt == 0 {
			f.failReads = true
			got, err := readAll(&streamed)
			if err == nil || len(got) >= n {
				t.Fatalf("trial %d: failing reads gave %d pairs of %d, err %v", trial, len(got), n, err)
			}
		}
	}
}
