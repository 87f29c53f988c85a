package trace

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"
)

// BenchmarkDecodeColumns measures the column decoder alone on chunks of a
// realistic mix (every kind in turn, random arguments).
func BenchmarkDecodeColumns(b *testing.B) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{NRanks: 1})
	evs, deps := randomEvents(newRand(9), 200_000)
	// Realistic magnitudes: small time deltas and mostly repeating args.
	for i := range evs {
		evs[i].Time = int64(i) * 300
		for j := range evs[i].Args {
			evs[i].Args[j] = evs[i].Args[j] % 1000
		}
	}
	writeEvents(b, w, 0, evs, deps)
	w.Close()
	r, _ := NewReader(bytes.NewReader(buf.Bytes()), "b")
	var cols []chunkColumns
	for {
		kind, payload, err := r.readFrame()
		if err == io.EOF {
			break
		}
		if kind != FrameChunk {
			continue
		}
		p := append([]byte(nil), payload...)
		if err := r.decodeChunk(p, &Chunk{}); err != nil {
			b.Fatal(err)
		}
		cols = append(cols, r.cols)
	}
	var c Chunk
	var sc scratch
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		for k := range cols {
			if err := decodeColumns(&cols[k], &c, &sc); err != nil {
				b.Fatal(err)
			}
			n += len(c.Events)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

// decodeChunk checks and decodes one chunk frame's payload, as NextChunk
// does after reading it.
func (r *Reader) decodeChunk(payload []byte, c *Chunk) error {
	if err := r.checkChunk(payload, &r.cols); err != nil {
		return err
	}
	return decodeChunkColumns(r.name, r.lastOff, &r.cols, c, &r.scratch)
}

// TestSvbDecode checks the stream-vbyte decoder (and svbTimes, the values
// as time deltas) against the values encoded, for every count up to a few
// groups past the fast loops' window and for long streams of mostly empty
// and one-byte values (whose last groups the fast loops leave to the
// copied tail) or of empty values only (svbTimes's runs), from every group
// start a window decoder resumes at; and svbCheck's data length against
// the values'.
func TestSvbDecode(t *testing.T) {
	r := newRand(7)
	for _, n := range []int{0, 1, 3, 4, 5, 8, 15, 16, 17, 31, 63, 64, 65, 100, 257, 1000, 4096} {
		for _, mix := range [][4]int{{1, 1, 1, 1}, {6, 3, 0, 0}, {0, 0, 0, 1}, {2, 1, 1, 1}, {1, 0, 0, 0}, {60, 1, 0, 0}} {
			vals := make([]uint64, n)
			for i := range vals {
				switch x := r.Intn(mix[0] + mix[1] + mix[2] + mix[3]); {
				case x < mix[0]:
				case x < mix[0]+mix[1]:
					vals[i] = 1 + uint64(r.Intn(255))
				case x < mix[0]+mix[1]+mix[2]:
					vals[i] = 256 + uint64(r.Intn(1<<24-256))
				default:
					vals[i] = 1<<24 + r.Uint64()>>1
				}
			}
			ctrl, data := svbAppend(nil, nil, vals)
			if err := svbCheck(ctrl, data, n, true); err != nil {
				t.Fatalf("n=%d mix=%v: %v", n, mix, err)
			}
			for from := 0; from <= n; from += 4 {
				if from > 16 && from < n-16 {
					from = (n - 16) &^ 3 // the start and the end are where the paths change
				}
				pos := svbOffset(ctrl, from)
				out := make([]uint64, n-from)
				got := svbDecode(ctrl[from/4:], data[pos:], out, n-from)
				if want := len(data) - svbPad - pos; got != want {
					t.Fatalf("n=%d mix=%v from %d: took %d data bytes, want %d", n, mix, from, got, want)
				}
				for i, v := range out {
					if v != vals[from+i] {
						t.Fatalf("n=%d mix=%v from %d: value %d is %d, want %d", n, mix, from, from+i, v, vals[from+i])
					}
				}
				// Zig-zag decoded (svbDecodeZZ, the chunk decoder's), and
				// the groups by this machine's loop and by the one without
				// vector instructions.
				zout := make([]uint64, n-from)
				got = svbDecodeZZ(ctrl[from/4:], data[pos:], zout, n-from)
				if want := len(data) - svbPad - pos; got != want {
					t.Fatalf("n=%d mix=%v from %d: zig-zag decode took %d data bytes, want %d", n, mix, from, got, want)
				}
				for i, v := range zout {
					if int64(v) != zz(vals[from+i]) || unzz(v) != vals[from+i] {
						t.Fatalf("n=%d mix=%v from %d: zig-zag value %d is %d, want %d", n, mix, from, from+i, int64(v), zz(vals[from+i]))
					}
				}
				gout := make([]uint64, n-from)
				if p, i := svbGroupsZZGo(ctrl[from/4:], data[pos:], gout); p != 0 || i != 0 {
					p1, i1 := svbGroupsZZ(ctrl[from/4:], data[pos:], zout)
					if p != p1 || i != i1 || !slices.Equal(gout[:i], zout[:i]) {
						t.Fatalf("n=%d mix=%v from %d: the group loops differ: %d values, %d bytes against %d, %d", n, mix, from, i, p, i1, p1)
					}
				}
				// The same values as time deltas from 1000.
				evs := make([]Event, n-from)
				got, last := svbTimes(ctrl[from/4:], data[pos:], evs, n-from, 1000)
				if want := len(data) - svbPad - pos; got != want {
					t.Fatalf("n=%d mix=%v from %d: times took %d data bytes, want %d", n, mix, from, got, want)
				}
				tm := int64(1000)
				for i := range evs {
					tm += zz(vals[from+i])
					if evs[i].Time != tm {
						t.Fatalf("n=%d mix=%v from %d: time %d is %d, want %d", n, mix, from, from+i, evs[i].Time, tm)
					}
				}
				if last != tm {
					t.Fatalf("n=%d mix=%v from %d: last time %d, want %d", n, mix, from, last, tm)
				}
			}
		}
	}
}

// TestDecodeStreamLengths: a chunk whose dt or args data stream is longer
// or shorter than its control bytes describe is rejected, naming the
// column and both lengths, although decodeColumns first decodes without
// summing them; and the chunk as written decodes.
func TestDecodeStreamLengths(t *testing.T) {
	_, cols := windowChunk(t, 47, 3000)
	var c Chunk
	var sc scratch
	if err := decodeColumns(&cols, &c, &sc); err != nil || len(c.Events) != 3000 {
		t.Fatalf("valid chunk: %d events, %v", len(c.Events), err)
	}
	for _, col := range []string{"dt", "args"} {
		for _, delta := range []int{-svbPad - 1, -svbPad, -1, 1, 7, 64, 200} {
			m := cols
			data := &m.dtData
			if col == "args" {
				data = &m.argsData
			}
			described := len(*data) - svbPad
			if delta < 0 {
				*data = (*data)[:len(*data)+delta]
			} else {
				*data = append(append([]byte(nil), *data...), make([]byte, delta)...)
			}
			err := decodeColumns(&m, &c, &sc)
			want := fmt.Sprintf("event 0: %s column value 0: data stream has %d bytes, its control stream describes %d plus %d of padding", col, len(*data), described, svbPad)
			if err == nil || err.Error() != want {
				t.Errorf("%s data %+d bytes: %v, want %s", col, delta, err, want)
			}
		}
	}
}

// FuzzSvbGroupsZZ compares this machine's group loop of svbDecodeZZ (the
// vector one on amd64 with AVX2) with the Go one on arbitrary control and
// data bytes and output lengths: the same values, data bytes and groups
// (both bound their reads by the window whatever the control bytes say).
func FuzzSvbGroupsZZ(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0xff, 0x55, 0xaa, 0xe4}, bytes.Repeat([]byte{0x81, 7, 0, 0xfe}, 40), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 40), bytes.Repeat([]byte{0xff}, 300), uint8(3))
	f.Fuzz(func(t *testing.T, ctrl, data []byte, short uint8) {
		n := max(4*len(ctrl)-int(short), 0)
		a, b := make([]uint64, n), make([]uint64, n)
		pa, ia := svbGroupsZZ(ctrl, data, a)
		pb, ib := svbGroupsZZGo(ctrl, data, b)
		if pa != pb || ia != ib || !slices.Equal(a, b) {
			t.Fatalf("%d values, %d data bytes against the Go loop's %d, %d", ia, pa, ib, pb)
		}
	})
}
