package sim_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// benchEvents is the stencil size for BenchmarkSimulate (PTRACE_BENCH_EVENTS
// overrides; the figure in docs/PERFORMANCE.md uses 10 M).
func benchEvents() int64 {
	if v, err := strconv.ParseInt(os.Getenv("PTRACE_BENCH_EVENTS"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 2_000_000
}

// BenchmarkSimulate measures simulation + breakdown on a one-process
// stencil trace ("breakdown"; issue #4's figure), the same with the task
// statistics and the ready series the driver adds ("all-passes"), and the
// memory the simulator allocates per task.
func BenchmarkSimulate(b *testing.B) {
	dir := b.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 1, Threads: 8, Width: 64, Jitter: 0.1, Events: benchEvents()}); err != nil {
		b.Fatal(err)
	}
	p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(0)), trace.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	n := p.NumEvents()
	first, last := p.TimeRange(nil)
	for _, all := range []bool{false, true} {
		name := "breakdown"
		if all {
			name = "all-passes"
		}
		b.Run(name, func(b *testing.B) {
			var tasks int
			var allocPerTask float64
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				s := sim.New(p, nil, false)
				m := ompt.NewModel()
				var passes []sim.Pass
				if all {
					passes = append(passes, sim.NewTaskStats(), sim.NewReadySeries(first, (last-first)/200+1, 200))
				}
				if err := s.Run(m, passes...); err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				tasks = s.Tasks.Len()
				allocPerTask = float64(after.TotalAlloc-before.TotalAlloc) / float64(tasks)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
			b.ReportMetric(allocPerTask, "B/task")
			b.ReportMetric(float64(tasks), "tasks")
		})
	}
}
