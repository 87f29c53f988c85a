package ompt

import (
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// BenchmarkResolveStencil resolves a stencil's dependences (each task
// writes its own block and reads three of the previous sweep's), with
// keep, as the task graph needs: one lookup of a new address and three of
// recent ones per task.
func BenchmarkResolveStencil(b *testing.B) {
	benchmarkResolve(b, func(k int) uint64 { return 0x7f0000000000 + uint64(k)*64 })
}

// BenchmarkResolveTiles is the same on 32 KiB tiles allocated one by one
// (an address a page or more from every other).
func BenchmarkResolveTiles(b *testing.B) {
	benchmarkResolve(b, func(k int) uint64 { return 0x7f0000000000 + uint64(k)*(32<<10+64) })
}

func benchmarkResolve(b *testing.B, addr func(int) uint64) {
	const blocks, tasks = 1024, 100_000
	deps := make([][]trace.Dep, tasks)
	for k := range deps {
		deps[k] = []trace.Dep{{Addr: addr(k), Type: trace.DepInout}}
		if k >= blocks {
			for _, d := range []int{-1, 0, 1} {
				p := k - blocks + d
				if p >= 0 {
					deps[k] = append(deps[k], trace.Dep{Addr: addr(p), Type: trace.DepIn})
				}
			}
		}
	}
	done := func(int32) bool { return false }
	d := newDepTracker()
	d.keep = true
	var out []int32
	b.ResetTimer()
	for range b.N {
		d.reserve(4 * tasks)
		for k := range deps {
			out = d.resolve(-1, int32(k), deps[k], out[:0], done, 0)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/task")
}
