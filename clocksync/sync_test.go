package clocksync

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/commtest"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/trace"
)

// accuracyNS bounds |corrected − true| for traces without violations once
// interpolated: gen's clocks are exactly linear, so interpolation between
// the two measurements recovers true time up to the rounding of the drift
// (gen's and ours, half a ns each), and the CLC changes nothing.
const accuracyNS = 2

// skewCases are the generated traces of the acceptance tests: halo (MPI
// point-to-point and collectives) and stencil (remote task dependences),
// 4 to 1024 processes, small event counts for the big ones.
func skewCases() []gen.Config {
	var cs []gen.Config
	for _, r := range []int{4, 16, 64, 256, 1024} {
		threads, iters, steps := 3, 6, 8
		if r >= 256 {
			threads, iters, steps = 1, 2, 3
		}
		cs = append(cs,
			gen.Config{Workload: "halo", Ranks: r, Threads: threads, Iterations: iters, Jitter: 0.2, RankImbalance: 0.3},
			gen.Config{Workload: "stencil", Ranks: r, Threads: threads, Width: 2 * r, Steps: steps, Jitter: 0.2},
		)
	}
	cs = append(cs, gen.Config{Workload: "halo", Ranks: 8, Threads: 2, Iterations: 5, Exchange: "allreduce"})
	return cs
}

func TestSkewRecoversTrueTime(t *testing.T) {
	if testing.Short() {
		t.Skip("generates traces of up to 1024 processes")
	}
	for _, cfg := range skewCases() {
		cfg.Seed, cfg.LatencyNS = 7, 2_000
		name := fmt.Sprintf("%s/%s/%d", cfg.Workload, cfg.Exchange, cfg.Ranks)
		t.Run(name, func(t *testing.T) {
			truth := genProcs(t, cfg)
			skewed := cfg
			skewed.SkewNS, skewed.DriftPPM = 1_000_000, 50
			procs := genProcs(t, skewed)
			o := Options{Gamma: DefaultGamma, DeltaNS: DefaultDeltaNS, MinLatencyNS: 1}

			// The unskewed trace has no violations: the ground truth is
			// causal, so the bound below applies.
			base := mustSync(t, truth, 2, o)
			for _, s := range base.stats {
				if s.ViolationsBefore != 0 || s.MaxCorrectionNS != 0 {
					t.Fatalf("unskewed process %d: %+v", s.Rank, s)
				}
			}
			sameTimes(t, "unskewed trace changed", base.rows, allRows(truth))

			r := mustSync(t, procs, 4, o)
			var before, interp, after int64
			for _, s := range r.stats {
				before += s.ViolationsBefore
				interp += s.ViolationsInterpolated
				after += s.ViolationsAfter
				if s.OffsetSource != SourceInitFinalize {
					t.Fatalf("process %d: offset source %q", s.Rank, s.OffsetSource)
				}
				// The injected clock, from the two traces: thread 0's first
				// event is at true time 0 (where the init offset is
				// measured) and its last at the end (finalize).
				raw, tru := rows(procs[s.Rank], nil)[0], rows(truth[s.Rank], nil)[0]
				off := raw[0].Time - tru[0].Time
				end := tru[len(tru)-1].Time
				ppm := float64(raw[len(raw)-1].Time-end-off) / float64(end) * 1e6
				if s.OffsetInitNS != -off || math.Abs(s.DriftPPM-ppm) > 1e-6 {
					t.Fatalf("process %d: offset %d ns, drift %g ppm; injected %d ns, %g ppm", s.Rank, s.OffsetInitNS, s.DriftPPM, -off, ppm)
				}
			}
			if before == 0 {
				t.Fatal("a 1 ms skew over 2 µs latencies left no violation: the test exercises nothing")
			}
			if interp != 0 || after != 0 {
				t.Fatalf("violations: %d recorded, %d interpolated, %d after", before, interp, after)
			}
			if r.match.Messages+r.match.RemoteDeps+r.match.Collectives == 0 {
				t.Fatal("no messages matched")
			}
			var worst int64
			tru := allRows(truth)
			for i, p := range r.rows {
				for th, ev := range p {
					for j := range ev {
						d := ev[j].Time - tru[i][th][j].Time
						worst = max(worst, d, -d)
						if d > accuracyNS || d < -accuracyNS {
							t.Fatalf("process %d thread %d event %d (%s): corrected %d, true %d", i, th, j, ev[j].Kind, ev[j].Time, tru[i][th][j].Time)
						}
					}
				}
			}
			monotone(t, r.rows)
			t.Logf("%d violations before, worst |corrected − true| = %d ns", before, worst)
		})
	}
}

// stripOffsets removes the offset measurements of every process but rank 0,
// so the CLC alone must repair the skew.
func stripOffsets(procs []*trace.Process) {
	for _, p := range procs[1:] {
		p.ClockOffsets = nil
	}
}

func TestAlignmentAndCLCRepairViolations(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 6, Threads: 3, Iterations: 10, Jitter: 0.3},
		{Workload: "halo", Ranks: 5, Threads: 2, Iterations: 6, Exchange: "allreduce"},
		{Workload: "stencil", Ranks: 6, Threads: 2, Width: 24, Steps: 10},
		{Workload: "spread", Ranks: 5, Threads: 2, Width: 20, Steps: 8},
	} {
		// Aligned starts leave the drift (500 ppm over milliseconds), far
		// more than the 100 ns latency.
		cfg.Seed, cfg.LatencyNS, cfg.SkewNS, cfg.DriftPPM = 3, 100, 300_000, 500
		procs := genProcs(t, cfg)
		stripOffsets(procs)
		var first *syncRun
		for k := 1; k <= 4; k++ {
			r := mustSync(t, procs, k, DefaultOptions())
			var before, after, maxCorr int64
			for _, s := range r.stats {
				before += s.ViolationsInterpolated
				after += s.ViolationsAfter
				maxCorr = max(maxCorr, s.MaxCorrectionNS)
				if s.Rank > 0 && s.OffsetSource != SourceFirstEvent {
					t.Fatalf("%s: process %d offset source %q", cfg.Workload, s.Rank, s.OffsetSource)
				}
			}
			if before == 0 || after != 0 || maxCorr == 0 {
				t.Fatalf("%s k=%d: %d violations before, %d after, max correction %d", cfg.Workload, k, before, after, maxCorr)
			}
			monotone(t, r.rows)
			if first == nil {
				first = r
				continue
			}
			sameTimes(t, fmt.Sprintf("%s: 1 vs %d ranks", cfg.Workload, k), first.rows, r.rows)
			for i := range r.stats {
				if r.stats[i] != first.stats[i] {
					t.Fatalf("%s: process %d stats differ between 1 and %d ranks: %+v vs %+v", cfg.Workload, i, k, first.stats[i], r.stats[i])
				}
			}
		}
	}
}

// TestManyRanks runs 4096 virtual analysis ranks, one per process, and
// compares with 3 ranks: same corrected times.
func TestManyRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("4096 goroutine ranks")
	}
	const R = 4096
	procs := genProcs(t, gen.Config{Workload: "halo", Ranks: R, Threads: 1, Iterations: 1, Seed: 5, LatencyNS: 1_000, SkewNS: 200_000, DriftPPM: 20})
	// Half the processes lose their measurements: the CLC has work.
	for i := 1; i < R; i += 2 {
		procs[i].ClockOffsets = nil
	}
	small := mustSync(t, procs, 3, DefaultOptions())
	big := mustSync(t, procs, R, DefaultOptions())
	sameTimes(t, "3 vs 4096 ranks", small.rows, big.rows)
	var before, after int64
	for i := range big.stats {
		if big.stats[i] != small.stats[i] {
			t.Fatalf("process %d: stats differ: %+v vs %+v", i, small.stats[i], big.stats[i])
		}
		before += big.stats[i].ViolationsBefore
		after += big.stats[i].ViolationsAfter
	}
	if before == 0 || after != 0 {
		t.Fatalf("%d violations before, %d after", before, after)
	}
}

// cyclicTrace: process 0 receives from 1 and then sends to 1; process 1
// receives from 0 and then sends to 0. Each receive waits for a send that
// comes after the other receive: a corrupt happened-before relation.
func cyclicTrace() []*trace.Process {
	world := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1}}}
	mk := func(rank int, peer int64) *trace.Process {
		return mkProc(trace.Header{Rank: rank, NRanks: 2}, trace.Tables{Comms: world}, [][]trace.Event{{
			{Time: 10, Kind: trace.RegionEnter},
			{Time: 20, Kind: trace.MPIRecv, Args: [trace.MaxArgs]int64{peer, 3, 0, 8, 0}},
			{Time: 30, Kind: trace.MPISend, Args: [trace.MaxArgs]int64{peer, 3, 0, 8, 0}},
			{Time: 40, Kind: trace.RegionExit},
		}})
	}
	return []*trace.Process{mk(0, 1), mk(1, 0)}
}

func TestCyclicTraceIsAnError(t *testing.T) {
	for k := 1; k <= 2; k++ {
		done := make(chan error, 1)
		go func() {
			_, err := runSync(t, cyclicTrace(), k, DefaultOptions(), false)
			done <- err
		}()
		select {
		case err := <-done:
			var ce *graph.CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("k=%d: got %v, want a cycle error", k, err)
			}
			if !strings.Contains(err.Error(), "process 0 (memory) thread 0 event 1 (mpi_recv) waits for") {
				t.Fatalf("k=%d: the error names no waiting event: %v", k, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("k=%d: synchronizing a cyclic trace hangs", k)
		}
	}
}

// TestCensus: --no-clocksync changes nothing and counts the violations.
func TestCensus(t *testing.T) {
	procs := genProcs(t, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 4, Seed: 2, LatencyNS: 500, SkewNS: 100_000})
	r, err := runSync(t, procs, 2, DefaultOptions(), true)
	if err != nil {
		t.Fatal(err)
	}
	sameTimes(t, "census changed times", r.rows, allRows(procs))
	var v int64
	for _, s := range r.stats {
		if s.ViolationsBefore != s.ViolationsAfter || s.MaxCorrectionNS != 0 {
			t.Fatalf("process %d: %+v", s.Rank, s)
		}
		v += s.ViolationsAfter
	}
	if v == 0 || r.local[0].Method != MethodNone {
		t.Fatalf("census: %d violations, method %q", v, r.local[0].Method)
	}
	sum := Summarize(MethodNone, DefaultOptions(), r.stats)
	if sum.Method != "none" || sum.ViolationsAfter != v {
		t.Fatalf("summary %+v", sum)
	}
}

// TestEqualTimestampsAcrossThreads: process 0's thread 1 sends to process 1
// in the same nanosecond as its thread 0 receives process 1's answer to that
// very message (a coarse clock). Taken by thread index, the receive would
// come first in the merged order and close a false cycle; sends go first.
func TestEqualTimestampsAcrossThreads(t *testing.T) {
	world := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1}}}
	msg := func(t int64, k trace.Kind, peer int64) trace.Event {
		return trace.Event{Time: t, Kind: k, Args: [trace.MaxArgs]int64{peer, 4, 0, 8, 0}}
	}
	procs := []*trace.Process{
		mkProc(trace.Header{Rank: 0, NRanks: 2}, trace.Tables{Comms: world},
			[][]trace.Event{{msg(100, trace.MPIRecv, 1)}, {msg(100, trace.MPISend, 1)}}),
		mkProc(trace.Header{Rank: 1, NRanks: 2}, trace.Tables{Comms: world},
			[][]trace.Event{{msg(50, trace.MPIRecv, 0), msg(60, trace.MPISend, 0)}}),
	}
	for k := 1; k <= 2; k++ {
		r := mustSync(t, procs, k, Options{Gamma: DefaultGamma, DeltaNS: 1, MinLatencyNS: 1})
		monotone(t, r.rows)
		if s, v := r.rows[0][1][0].Time, r.rows[1][0][0].Time; v < s+1 {
			t.Fatalf("k=%d: process 1 receives at %d what was sent at %d", k, v, s)
		}
		if s, v := r.rows[1][0][1].Time, r.rows[0][0][0].Time; v < s+1 {
			t.Fatalf("k=%d: process 0 receives at %d what was sent at %d", k, v, s)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Gamma: 0}, {Gamma: 1.5}, {Gamma: 0.9, DeltaNS: -1}, {Gamma: 0.9, MinLatencyNS: -2}} {
		if _, err := runSync(t, cyclicTrace(), 1, o, false); err == nil || !strings.Contains(err.Error(), "clocksync:") {
			t.Fatalf("%+v: %v", o, err)
		}
	}
}

// TestSelfMessageEqualTimes: a process sends itself a message from thread 1
// and receives it on thread 0 in the same nanosecond. A message within one
// process constrains no clock: matched and exchanged, no correction.
func TestSelfMessageEqualTimes(t *testing.T) {
	world := []trace.Communicator{{Index: 0, ID: 0, Members: []int{0, 1}}}
	p0 := mkProc(trace.Header{Rank: 0, NRanks: 2}, trace.Tables{Comms: world},
		[][]trace.Event{
			{{Time: 100, Kind: trace.MPIRecv, Args: [trace.MaxArgs]int64{0, 1, 0, 8, 0}}, {Time: 200, Kind: trace.MPISend, Args: [trace.MaxArgs]int64{1, 2, 0, 8, 0}}},
			{{Time: 100, Kind: trace.MPISend, Args: [trace.MaxArgs]int64{0, 1, 0, 8, 0}}},
		})
	p1 := mkProc(trace.Header{Rank: 1, NRanks: 2}, trace.Tables{Comms: world},
		[][]trace.Event{{{Time: 150, Kind: trace.MPIRecv, Args: [trace.MaxArgs]int64{0, 2, 0, 8, 0}}}})
	procs := []*trace.Process{p0, p1}
	for k := 1; k <= 2; k++ {
		r := mustSync(t, procs, k, DefaultOptions())
		if r.match.Messages != 2 {
			t.Fatalf("k=%d: %+v", k, r.match)
		}
		// Process 1 received at 150 what process 0 sent at 200: the CLC
		// moves the receive, nothing else.
		if got := r.rows[1][0][0].Time; got != 200 {
			t.Fatalf("k=%d: receive at %d, want 200", k, got)
		}
		sameTimes(t, "process 0", r.rows[:1], allRows(procs[:1]))
		for _, s := range r.stats {
			if s.ViolationsAfter != 0 {
				t.Fatalf("k=%d: %+v", k, s)
			}
		}
	}
}

// SyncBounded calls its check at the same points on every rank, whatever
// their processes (3 ranks of 1–2 processes), and a check's error stops
// the phase there on every rank: under a memory limit it is the heap
// guard's, collective, so no rank may go on to a collective the others
// left.
func TestSyncChecksStopEveryRank(t *testing.T) {
	cfg := gen.Config{Workload: "halo", Ranks: 5, Threads: 2, Iterations: 4, Seed: 3, LatencyNS: 100, SkewNS: 300_000, DriftPPM: 500}
	procs := genProcs(t, cfg)
	stripOffsets(procs)
	plan, err := partition.Assign([]int64{1, 1, 1, 1, 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Stop at no check first (0), which counts them, then at each.
	points := 0
	for stopAt := 0; stopAt == 0 || stopAt <= points; stopAt++ {
		stops := commtest.NewStops(3, stopAt)
		err := inproc.Run(3, func(c comm.Comm) error {
			lo, hi := plan.Range(c.Rank())
			m, err := graph.Match(c, plan, procs[lo:hi], graph.MatchOptions{})
			if err != nil {
				return err
			}
			_, stops.Errs[c.Rank()] = SyncBounded(c, m, DefaultOptions(), graph.Bounded{Check: stops.Check(c.Rank())})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if stopAt == 0 {
			// A batch in each of the count's two rounds, the count made,
			// the merged times, the forward replay.
			if points = stops.Calls[0]; points < 5 {
				t.Fatalf("%d checks, want 5 at least", points)
			}
		}
		stops.Verify(t, "clock sync", points)
	}
}
