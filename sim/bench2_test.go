package sim_test

import (
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

type nopModel struct{}

func (nopModel) Prepare(s *sim.Sim) error                  { s.AllocTasks(1); return nil }
func (nopModel) Update(s *sim.Sim, th int, e *trace.Event) {}

func BenchmarkMergeOnly(b *testing.B) {
	dir := b.TempDir()
	gen.Generate(dir, gen.Config{Workload: "stencil", Ranks: 1, Threads: 8, Width: 64, Jitter: 0.1, Events: benchEvents()})
	p, _ := trace.LoadProcess(filepath.Join(dir, trace.FileName(0)), trace.LoadOptions{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := sim.New(p, nil, false)
		s.Run(nopModel{})
	}
	b.ReportMetric(float64(p.NumEvents())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}
