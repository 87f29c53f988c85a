package graph

import (
	"fmt"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/partition"
)

// BenchmarkMatch measures message matching (merged order, scan, channel
// matching, DAG build) plus the edge exchange on one rank, so one core:
// Mmsgs/s counts matched messages and remote dependences per second,
// Mevents/s the events scanned.
func BenchmarkMatch(b *testing.B) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 16, Threads: 1, Events: 4_000_000, LatencyNS: 1000},
		{Workload: "spread", Ranks: 16, Threads: 2, Radix: 5, Events: 4_000_000, LatencyNS: 1000},
	} {
		b.Run(cfg.Workload, func(b *testing.B) {
			procs := genProcs(b, cfg)
			plan, err := partition.Assign(make([]int64, len(procs)), 1)
			if err != nil {
				b.Fatal(err)
			}
			var events, msgs int64
			for _, p := range procs {
				events += p.NumEvents()
			}
			b.ResetTimer()
			for range b.N {
				err := inproc.Run(1, func(c comm.Comm) error {
					m, err := Match(c, plan, procs, MatchOptions{})
					if err != nil {
						return err
					}
					msgs = m.Stats.Messages + m.Stats.RemoteDeps
					_, err = ExchangeEdges(c, m, nil)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(msgs)*float64(b.N)/s/1e6, "Mmsgs/s")
			b.ReportMetric(float64(events)*float64(b.N)/s/1e6, "Mevents/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkMatchRanks measures Match alone on 1 and 2 analysis ranks
// (inproc: 2 ranks use 2 cores) with its allocations, which cost the phase
// more than its arithmetic: on a fresh heap every new page is a fault.
func BenchmarkMatchRanks(b *testing.B) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 16, Threads: 1, Events: 4_000_000, LatencyNS: 1000},
		{Workload: "spread", Ranks: 16, Threads: 2, Radix: 5, Events: 4_000_000, LatencyNS: 1000},
		// Many collectives of many members (issue 44).
		{Workload: "mpi", Ranks: 64, Events: 4_000_000, LatencyNS: 1000},
	} {
		procs := genProcs(b, cfg)
		w := make([]int64, len(procs))
		for i, p := range procs {
			w[i] = p.NumEvents()
		}
		for _, k := range []int{1, 2} {
			plan, err := partition.Assign(w, k)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/ranks=%d", cfg.Workload, k), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					err := inproc.Run(k, func(c comm.Comm) error {
						lo, hi := plan.Range(c.Rank())
						_, err := Match(c, plan, procs[lo:hi], MatchOptions{})
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
