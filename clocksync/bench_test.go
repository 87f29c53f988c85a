package clocksync

import (
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/trace"
)

// BenchmarkSync measures clock synchronization (offset model, violation
// census, forward and backward replay) on one rank, so on one core:
// Mevents/s is per core. Matching happens before the timer starts
// (graph's BenchmarkMatch measures it). "measured" traces keep their offset
// measurements (interpolation removes the skew, the CLC finds nothing to
// do: the common case); "unmeasured" ones lose them on every other process,
// so the CLC corrects thousands of violations (the worst case).
func BenchmarkSync(b *testing.B) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 8, Threads: 4, Events: 4_000_000, LatencyNS: 1000, SkewNS: 500_000, DriftPPM: 50},
		{Workload: "stencil", Ranks: 8, Threads: 4, Events: 4_000_000, LatencyNS: 1000, SkewNS: 500_000, DriftPPM: 50},
	} {
		var procs []*trace.Process
		for _, measured := range []bool{true, false} {
			name := cfg.Workload + "/measured"
			if !measured {
				name = cfg.Workload + "/unmeasured"
			}
			b.Run(name, func(b *testing.B) {
				if procs == nil {
					procs = genProcs(b, cfg)
				}
				work := make([]*trace.Process, len(procs))
				for i, p := range procs {
					q := *p // Sync changes no event: a shallow copy suffices
					work[i] = &q
				}
				if !measured {
					for i := 1; i < len(work); i += 2 {
						work[i].ClockOffsets = nil
					}
				}
				benchSync(b, work)
			})
		}
	}
}

func benchSync(b *testing.B, procs []*trace.Process) {
	var events int64
	for _, p := range procs {
		events += p.NumEvents()
	}
	plan, err := partition.Assign(make([]int64, len(procs)), 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		work := procs
		err := inproc.Run(1, func(c comm.Comm) error {
			m, err := graph.Match(c, plan, work, graph.MatchOptions{})
			if err != nil {
				return err
			}
			b.StartTimer()
			_, err = Sync(c, m, DefaultOptions())
			b.StopTimer()
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	b.ReportMetric(0, "ns/op")
}
