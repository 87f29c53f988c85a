package trace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/trace"
)

// stencilFile generates a one-rank stencil trace of about n events and
// returns its bytes.
func stencilFile(tb testing.TB, n int64) []byte {
	dir := tb.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 1, Threads: 8, Width: 64, Jitter: 0.1, Events: n}); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, trace.FileName(0)))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkDecode measures streaming decode from memory: frame checks,
// checksums and column decoding into reused chunk buffers.
func BenchmarkDecode(b *testing.B) {
	data := stencilFile(b, 2_000_000)
	var events int64
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := trace.NewReader(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		for c, err := range r.Chunks() {
			if err != nil {
				b.Fatal(err)
			}
			events += int64(len(c.Events))
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

// TestStencilBytesPerEvent holds the on-disk size goal: at most 16 bytes per
// event on the stencil workload.
func TestStencilBytesPerEvent(t *testing.T) {
	dir := t.TempDir()
	res, err := gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 4, Threads: 8, Jitter: 0.1, Events: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	bpe := float64(res.Bytes) / float64(res.Events)
	t.Logf("stencil: %d events, %d bytes, %.2f bytes/event", res.Events, res.Bytes, bpe)
	if bpe > 16 {
		t.Errorf("%.2f bytes/event, the goal is at most 16", bpe)
	}
}

// BenchmarkWrite measures the writer alone (encoding, framing, CRC, file
// buffer), replaying a decoded stencil trace's events into a new file.
func BenchmarkWrite(b *testing.B) {
	data := stencilFile(b, 2_000_000)
	p, err := trace.LoadProcess(writeTemp(b, data), trace.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	events := make([][]trace.Event, p.NumThreads())
	deps := make([][]trace.Dep, p.NumThreads())
	for th := range events {
		events[th], deps[th] = p.Decode(th, nil)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := trace.NewWriter(io.Discard, p.Header)
		if err != nil {
			b.Fatal(err)
		}
		for th, evs := range events {
			for j := range evs {
				e := &evs[j]
				if e.Kind == trace.TaskDeps {
					w.EmitDeps(th, e.Time, e.Args[0], e.Deps(deps[th]))
				} else {
					w.Emit(th, e)
				}
			}
			n += int64(len(evs))
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

func writeTemp(tb testing.TB, data []byte) string {
	path := filepath.Join(tb.TempDir(), "p.ptrace")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkScan measures the passes' read path: forward scans of every
// thread of a loaded process, decoding its stored chunks into the scans'
// buffers, with a lookahead after each task creation as the simulator does.
func BenchmarkScan(b *testing.B) {
	data := stencilFile(b, 2_000_000)
	p, err := trace.LoadProcess(writeTemp(b, data), trace.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var pool trace.Scans
	var events, sum int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for th := 0; th < p.NumThreads(); th++ {
			s := pool.Get(p, th, nil)
			for s.Next() {
				e := s.Event()
				sum += e.Time + e.Args[0]
				if e.Kind == trace.TaskCreate {
					if d, _, ok := s.Ahead(1); ok {
						sum += d.Args[0]
					}
				}
				events++
			}
			if err := s.Err(); err != nil {
				b.Fatal(err)
			}
			pool.Put(s)
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	if sum == 0 {
		b.Fatal("no events")
	}
}

// BenchmarkLoad measures a process's load (LoadProcess streaming: frames,
// checksums, column decoding, time order, census and communication log)
// on the loading goroutine and with 2 and 4 decoding workers.
func BenchmarkLoad(b *testing.B) {
	path := writeTemp(b, stencilFile(b, 2_000_000))
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var bufs trace.LoadBuffers
			var events int64
			for b.Loop() {
				p, err := trace.LoadProcess(path, trace.LoadOptions{Stream: true, Buffers: &bufs, Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				events += p.NumEvents()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
		})
	}
}
