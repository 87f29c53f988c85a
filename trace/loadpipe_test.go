package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// multiThreadTrace is a file of n random events on each of threads
// threads, written a chunk at a time per thread in turn, so that the
// threads' chunks interleave in the file.
func multiThreadTrace(tb testing.TB, threads, n int) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{NRanks: 1})
	if err != nil {
		tb.Fatal(err)
	}
	rng := newRand(11)
	for th := range threads {
		evs, deps := randomEvents(rng, n)
		writeEvents(tb, w, th, evs, deps)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// chunkFrameAt returns the offset and payload length of the k-th chunk
// frame of file b.
func chunkFrameAt(tb testing.TB, b []byte, k int) (int, int) {
	for p := 0; p+frameHeaderLen <= len(b); {
		kind, _, n, err := parseFrameHeader(b[p:])
		if err != nil {
			tb.Fatal(err)
		}
		if kind == FrameChunk {
			if k == 0 {
				return p, int(n)
			}
			k--
		}
		p += frameHeaderLen + int(n)
	}
	tb.Fatalf("no chunk frame %d", k)
	return 0, 0
}

// TestLoadOnWorkers loads files whole and damaged in every way the load
// reports (a truncated tail, a bad checksum, a chunk whose columns fail to
// decode under a good checksum: the workers' error, a chunk out of
// sequence) on the loading goroutine and with decoding workers: the
// processes, warnings and errors must be the same.
func TestLoadOnWorkers(t *testing.T) {
	whole := multiThreadTrace(t, 3, 60000)
	if len(whole) < 2*pipeMinBytes {
		t.Fatalf("the trace has %d bytes: too small to decode on workers", len(whole))
	}
	nchunks := 0
	for p := 0; p+frameHeaderLen <= len(whole); {
		kind, _, n, _ := parseFrameHeader(whole[p:])
		if kind == FrameChunk {
			nchunks++
		}
		p += frameHeaderLen + int(n)
	}
	if nchunks < 12 {
		t.Fatalf("%d chunks: too few to keep the workers busy", nchunks)
	}
	mid, midLen := chunkFrameAt(t, whole, nchunks/2)
	late, _ := chunkFrameAt(t, whole, nchunks-3)
	damaged := map[string][]byte{"whole": whole, "cut": whole[:len(whole)*2/3]}
	crc := bytes.Clone(whole)
	crc[mid+frameHeaderLen+midLen/2] ^= 0x40
	damaged["checksum"] = crc
	// Garbage in the middle of a chunk's columns under a repaired checksum:
	// the frame reads, its decode fails on a worker.
	cols := bytes.Clone(whole)
	for i := mid + frameHeaderLen + midLen/3; i < mid+frameHeaderLen+midLen*2/3; i++ {
		cols[i] = 0xff
	}
	damaged["columns"] = fixCRCs(cols)
	// A later chunk's frame twice: a sequence error read in file order.
	_, lateLen := chunkFrameAt(t, whole, nchunks-3)
	frame := whole[late : late+frameHeaderLen+lateLen]
	damaged["repeated"] = append(append(bytes.Clone(whole[:late+len(frame)]), frame...), whole[late+len(frame):]...)
	dir := t.TempDir()
	for name, b := range damaged {
		path := filepath.Join(dir, name+".ptrace")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, salvage := range []bool{false, true} {
			for _, stream := range []bool{false, true} {
				opts := LoadOptions{Salvage: salvage, Stream: stream}
				want, werr := LoadProcess(path, opts)
				for _, workers := range []int{2, 3} {
					var bufs LoadBuffers
					for round := range 2 { // the second with the buffers the first left
						opts.Workers, opts.Buffers = workers, &bufs
						got, gerr := LoadProcess(path, opts)
						what := func() string {
							return name + map[bool]string{true: " salvaged", false: ""}[salvage] + map[bool]string{true: " streamed", false: ""}[stream]
						}
						if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
							t.Fatalf("%s, %d workers, round %d: error %v, on the loading goroutine %v", what(), workers, round, gerr, werr)
						}
						if werr != nil {
							continue
						}
						got.File, want.File = "", ""
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s, %d workers, round %d: the process differs (events %d / %d, warnings %q / %q)", what(), workers, round, got.NumEvents(), want.NumEvents(), got.Warnings, want.Warnings)
						}
						got.File, want.File = path, path
					}
				}
			}
		}
	}
	if _, err := LoadProcess(filepath.Join(dir, "columns.ptrace"), LoadOptions{}); err == nil {
		t.Fatal("the chunk with garbage columns loaded")
	}
}
