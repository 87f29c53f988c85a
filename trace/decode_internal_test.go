package trace

import (
	"bytes"
	"io"
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
