package otf2_test

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
)

// BenchmarkDecodeEvents decodes every event file of the archive named by
// PTRACE_OTF2_BENCH (default: the small committed one), from memory, so
// the figure is the decoder's and not the disk's. scripts/otf2-bench.sh
// runs it on a large archive beside otf2-print and python3-otf2.
func BenchmarkDecodeEvents(b *testing.B) {
	path := os.Getenv("PTRACE_OTF2_BENCH")
	if path == "" {
		path = smallArchive
	}
	a, err := otf2.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	var size int64
	for i := 0; i < a.NumProcesses(); i++ {
		for _, loc := range a.Locations(i) {
			r, err := a.OpenEvents(loc)
			if err != nil {
				b.Fatal(err)
			}
			r.Close()
			data, err := os.ReadFile(a.EventPath(loc))
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, data)
			size += int64(len(data))
		}
	}
	b.SetBytes(size)
	cpu0 := cpuTime()
	b.ResetTimer()
	var n int64
	r, err := otf2.NewEventReader(bytes.NewReader(nil), "bench", a.Anchor.ChunkEvents)
	if err != nil {
		b.Fatal(err)
	}
	src := bytes.NewReader(nil)
	for i := 0; i < b.N; i++ {
		n = 0
		for _, data := range files {
			src.Reset(data)
			r.Reset(src, "bench")
			var e otf2.Event
			for {
				ok, err := r.Next(&e)
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				n++
			}
		}
	}
	b.StopTimer()
	// On a shared machine the wall-clock rate understates the decoder;
	// the CPU-time rate is per core busy.
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0)/1e6, "Mevents/cpu-s")
	b.ReportMetric(float64(n), "events")
}

// cpuTime returns the process's user+system CPU seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkConvert converts every process of the archive named by
// PTRACE_OTF2_BENCH (default: the small committed one) into ptrace's
// format, files read from disk (the page cache): the decoder, the clock
// correction, the record mapping and the writer together.
func BenchmarkConvert(b *testing.B) {
	path := os.Getenv("PTRACE_OTF2_BENCH")
	if path == "" {
		path = smallArchive
	}
	a, err := otf2.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	var recs int64
	for i := 0; i < b.N; i++ {
		for k := 0; k < a.NumProcesses(); k++ {
			st, err := a.Convert(k, io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			recs += st.Records
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(recs)/b.Elapsed().Seconds()/1e6, "Mrecords/s")
	b.ReportMetric(float64(recs)/(cpuTime()-cpu0)/1e6, "Mrecords/cpu-s")
}
