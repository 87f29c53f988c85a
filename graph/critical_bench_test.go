package graph

import (
	"math/rand"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/internal/narrow"
)

// BenchmarkLongestPaths measures the critical path's forward and backward
// replays on one rank over a DAG shaped like a fragment graph: 2 M nodes,
// each with about two inputs from recent nodes (continuation, creation,
// dependences); built whole (pull forward, Kahn backward) and OutsOnly
// (push forward, backward in the recorded order), as the driver builds it.
// The "critical" case runs what the critical path runs: the forward
// replay with keys that follow the node ids and weights from a narrow
// column, then the marks of the nodes on a longest path.
func BenchmarkLongestPaths(b *testing.B) {
	b.Run("whole", func(b *testing.B) { benchLongestPaths(b, BuildOptions{}, false) })
	b.Run("outsonly", func(b *testing.B) { benchLongestPaths(b, BuildOptions{OutsOnly: true}, false) })
	b.Run("critical", func(b *testing.B) { benchLongestPaths(b, BuildOptions{OutsOnly: true}, true) })
}

func benchLongestPaths(b *testing.B, opts BuildOptions, critical bool) {
	const n = 2_000_000
	rng := rand.New(rand.NewSource(1))
	var nodes int64
	err := inproc.Run(1, func(c comm.Comm) error {
		w := make([]int64, n)
		keys := make([]int64, n)
		var src, dst []int32
		for i := 0; i < n; i++ {
			w[i] = int64(rng.Intn(1000))
			keys[i] = int64(i)
			if i > 0 {
				src, dst = append(src, int32(i-1-rng.Intn(min(i, 8)))), append(dst, int32(i))
			}
			if i > 64 {
				src, dst = append(src, int32(i-1-rng.Intn(64))), append(dst, int32(i))
			}
		}
		var wb narrow.FramedBuilder
		for _, x := range w {
			wb.Append(x)
		}
		w32 := wb.Finish()
		// A DAG built OutsOnly gives its input counts to its forward
		// replay (ReplayOptions.ConsumeCounts): each iteration builds its
		// own, untimed.
		build := func() (*DAG, error) {
			bl := NewBuilder(0, 1)
			for range n {
				bl.AddNode(false)
			}
			for k := range src {
				bl.AddEdge(src[k], dst[k])
			}
			return bl.Build(c, opts)
		}
		b.ResetTimer()
		for it := 0; it < b.N; it++ {
			b.StopTimer()
			g, err := build()
			if err != nil {
				return err
			}
			b.StartTimer()
			if critical {
				lp, err := LongestPathsFollowing(c, g, &w32, keyOf(keys))
				if err != nil {
					return err
				}
				if _, err := OnLongestPathsColumn(c, g, &w32, lp); err != nil {
					return err
				}
			} else if _, err := LongestPaths(c, g, w, keyOf(keys), true); err != nil {
				return err
			}
			nodes += n
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(nodes)/b.Elapsed().Seconds()/1e6, "Mnodes/s")
}
