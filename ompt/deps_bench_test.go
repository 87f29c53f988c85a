package ompt

import (
	"math/rand/v2"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// BenchmarkResolveStencil resolves a stencil's dependences (each task
// writes its own block and reads three of the previous sweep's), with
// keep, as the task graph needs: one lookup of a new address and three of
// recent ones per task.
func BenchmarkResolveStencil(b *testing.B) {
	benchmarkResolve(b, 1024, 100_000, func(k int) uint64 { return 0x7f0000000000 + uint64(k)*64 })
}

// BenchmarkResolveTiles is the same on 32 KiB tiles allocated one by one
// (an address a page or more from every other).
func BenchmarkResolveTiles(b *testing.B) {
	benchmarkResolve(b, 1024, 100_000, func(k int) uint64 { return 0x7f0000000000 + uint64(k)*(32<<10+64) })
}

// BenchmarkResolveLean is the lean stencil's creation sequence (gen
// stencil --lean at 10 M events: 16 blocks a sweep, 2.5 M tasks, all
// created before any runs, every state alive at the end): a table of
// 84 MB, far beyond the caches, grown from the size Model.Prepare
// reserves.
func BenchmarkResolveLean(b *testing.B) {
	benchmarkResolve(b, 16, 2_500_000, func(k int) uint64 { return 0x7f0000000000 + uint64(k)*64 })
}

// BenchmarkResolveRandom is a creation sequence with no locality: each
// task writes a block of its own at a random address (8-byte aligned, in
// 1 GiB) and reads three blocks written by random earlier tasks.
func BenchmarkResolveRandom(b *testing.B) {
	const tasks = 1_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, tasks)
	for k := range addrs {
		addrs[k] = 0x7f0000000000 + rng.Uint64N(1<<27)*8
	}
	deps := make([][]trace.Dep, tasks)
	for k := range deps {
		deps[k] = []trace.Dep{{Addr: addrs[k], Type: trace.DepInout}}
		for range min(k, 3) {
			deps[k] = append(deps[k], trace.Dep{Addr: addrs[rng.IntN(k)], Type: trace.DepIn})
		}
	}
	runResolve(b, deps)
}

func benchmarkResolve(b *testing.B, blocks, tasks int, addr func(int) uint64) {
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
	runResolve(b, deps)
}

// runResolve resolves deps, task k's list k, with keep (as the driver's
// model does), in a tracker reserved as Model.Prepare reserves it.
func runResolve(b *testing.B, deps [][]trace.Dep) {
	entries := 0
	for _, d := range deps {
		entries += len(d)
	}
	done := func(int32) bool { return false }
	d := newDepTracker()
	d.keep = true
	var out []int32
	b.ResetTimer()
	for range b.N {
		d.reserve(int64(entries), -1)
		for k := range deps {
			out = d.resolve(-1, int32(k), deps[k], -1, out[:0], done, 0)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(deps)), "ns/task")
}

// BenchmarkResolveDense is the stencil on the elements of an array of
// 4-byte values (a block a task, 1 024 in a page): the densest addresses
// a program names in practice.
func BenchmarkResolveDense(b *testing.B) {
	benchmarkResolve(b, 1024, 1_000_000, func(k int) uint64 { return 0x7f0000000000 + uint64(k)*4 })
}
