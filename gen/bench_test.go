package gen

import "testing"

// BenchmarkGenerate measures trace writing speed of gen (all cores).
func BenchmarkGenerate(b *testing.B) {
	for _, wl := range []string{"stencil", "imbalance"} {
		b.Run(wl, func(b *testing.B) {
			var events int64
			for i := 0; i < b.N; i++ {
				res, err := Generate(b.TempDir(), Config{Workload: wl, Ranks: 4, Threads: 8, Events: 4_000_000})
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
		})
	}
}
