package driver

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// lateInitTrace writes two processes: rank 1's MPI_Init ends 130 ns after
// rank 0's (at 140, not 10). Rank 0 computes [10, 100], sends to rank 1
// in [100, 110] (its event at 100), computes [110, 200] and enters
// MPI_Finalize at 200; rank 1 computes [140, 150], receives in [150, 160]
// (the message there before) and computes [160, 1000] before its
// MPI_Finalize. The window is [10, 1000].
func lateInitTrace(t *testing.T) string {
	t.Helper()
	const fInit, fRecv, fSend, fFin = 0, 1, 2, 3
	call := func(enter, exit, fn int64, inner ...trace.Event) []trace.Event {
		return append(append([]trace.Event{ev(enter, trace.MPIEnter, fn, -1)}, inner...), ev(exit, trace.MPIExit, fn))
	}
	rows := [2][]trace.Event{}
	for r := range 2 {
		evs := []trace.Event{ev(0, trace.ThreadBegin, 1)}
		if r == 0 {
			evs = append(evs, call(0, 10, fInit)...)
			evs = append(evs, call(100, 110, fSend, ev(100, trace.MPISend, 1, 7, 0, 8, 0))...)
			evs = append(evs, call(200, 1010, fFin)...)
		} else {
			evs = append(evs, call(0, 140, fInit)...)
			evs = append(evs, call(150, 160, fRecv, ev(160, trace.MPIRecv, 0, 7, 0, 8, 0))...)
			evs = append(evs, call(1000, 1010, fFin)...)
		}
		rows[r] = append(evs, ev(1010, trace.ThreadEnd))
	}
	return writeRelay(t, rows[:])
}

// A process whose MPI_Init ends late starts late, which no node of the
// path holds. The path is rank 0's computation to its send (90), rank
// 1's receive (10) and computation (840): 940 of the window's 990. The
// gap from rank 0's node's end (100) to the receive (150) is start skew
// up to rank 1's first work (140), then across processes (rank 1 busy).
func TestOffPathStartSkew(t *testing.T) {
	dir := lateInitTrace(t)
	for k := 1; k <= 3; k++ {
		rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true}, k)
		if err != nil {
			t.Fatal(err)
		}
		cp := rep.CriticalPath
		want := report.OffPath{NS: 50, Share: 50.0 / 990, Between: 50, StartSkew: 40, Processes: 10}
		if cp.LengthNS != 940 || cp.RunTimeNS != 990 || cp.OffPath == nil || *cp.OffPath != want {
			t.Errorf("k=%d: path %d of %d, off_path %+v, want %+v", k, cp.LengthNS, cp.RunTimeNS, cp.OffPath, want)
		}
	}
}

// relayTrace writes three processes that pass a message along: rank 0
// computes [10, 500] and sends to rank 1 (its event at 500); rank 1,
// in MPI_Recv since 100, receives it at 530 and sends on to rank 2 in
// [530, 540] (its event at 535); rank 2, in MPI_Recv since 120, receives
// it at 565 and computes [565, 1000]. Every MPI_Init ends at 10 and rank
// 2's MPI_Finalize begins at 1000: the window is [10, 1000].
func relayTrace(t *testing.T) string {
	t.Helper()
	const fInit, fRecv, fSend, fFin = 0, 1, 2, 3
	call := func(enter, exit, fn int64, inner ...trace.Event) []trace.Event {
		return append(append([]trace.Event{ev(enter, trace.MPIEnter, fn, -1)}, inner...), ev(exit, trace.MPIExit, fn))
	}
	var rows [3][]trace.Event
	for r := range 3 {
		evs := []trace.Event{ev(0, trace.ThreadBegin, 1)}
		evs = append(evs, call(0, 10, fInit)...)
		switch r {
		case 0:
			evs = append(evs, call(500, 510, fSend, ev(500, trace.MPISend, 1, 7, 0, 8, 0))...)
			evs = append(evs, call(600, 1010, fFin)...)
		case 1:
			evs = append(evs, call(100, 530, fRecv, ev(530, trace.MPIRecv, 0, 7, 0, 8, 0))...)
			evs = append(evs, call(530, 540, fSend, ev(535, trace.MPISend, 2, 7, 0, 8, 0))...)
			evs = append(evs, call(600, 1010, fFin)...)
		case 2:
			evs = append(evs, call(120, 565, fRecv, ev(565, trace.MPIRecv, 1, 7, 0, 8, 0))...)
			evs = append(evs, call(1000, 1010, fFin)...)
		}
		rows[r] = append(evs, ev(1010, trace.ThreadEnd))
	}
	return writeRelay(t, rows[:])
}

// Two receives in a row on the path, each waiting for its sender: each
// weighs its tail after its partner's event (30 each), rank 1's
// [500, 530], rank 2's [535, 565]. The path is rank 0's computation
// (490), the two receives and rank 2's computation (435): 985 of the
// window's 990; the 5 off it lie between rank 1's send's start (530, its
// post, where the path leaves rank 1) and its event (535): across
// processes. Placed from its enter and moved after the node before as
// recorded, rank 2's receive overlapped rank 1's: −400 across processes
// and +405 around MPI calls.
func TestOffPathConsecutiveWaits(t *testing.T) {
	dir := relayTrace(t)
	for k := 1; k <= 3; k++ {
		rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true}, k)
		if err != nil {
			t.Fatal(err)
		}
		cp := rep.CriticalPath
		want := report.OffPath{NS: 5, Share: 5.0 / 990, Between: 5, Processes: 5}
		if cp.LengthNS != 985 || cp.RunTimeNS != 990 || cp.OffPath == nil || *cp.OffPath != want {
			t.Errorf("k=%d: path %d of %d, off_path %+v, want %+v", k, cp.LengthNS, cp.RunTimeNS, cp.OffPath, want)
		}
	}
}

// Over random gen traces of every MPI and task shape (imbalanced ranks
// and threads, jitter, clock skew and drift, polled waits), no part of the
// off-path account is negative, the parts add up to the window less the
// path, and they are the same on 1, 2 and 3 analysis ranks. (Placed from
// its enter and moved after the node before as recorded, an MPI call
// after another that waited overlapped it: 5 of these traces, halos of 3
// processes, had −0.23 to −0.57 ms across processes.)
func TestOffPathNeverNegative(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 1))
	workloads := []string{"halo", "halo", "halo", "mpi", "nbc", "nearest", "stencil", "spread", "pipeline", "forkjoin", "tree"}
	trials := 33
	if testing.Short() {
		trials = 11
	}
	for trial := range trials {
		cfg := gen.Config{
			Workload:      workloads[trial%len(workloads)],
			Ranks:         2 + rng.IntN(3),
			Threads:       1 + rng.IntN(3),
			Seed:          rng.Int64N(1000),
			Jitter:        0.3 * rng.Float64(),
			RankImbalance: []float64{0, 0.3, 0.5, 1}[rng.IntN(4)],
			Iterations:    3 + rng.IntN(4),
			Steps:         4 + rng.IntN(6),
			LatencyNS:     1000 + rng.Int64N(4000), // the CLI's default is 2 µs
		}
		cfg.Threads = gen.ThreadsFor(cfg.Workload, cfg.Threads)
		switch rng.IntN(4) {
		case 0:
			cfg.SkewNS, cfg.DriftPPM = 50_000, 20
		case 1:
			cfg.ThreadImbalance, cfg.ForkNS, cfg.JoinNS = 0.5, 20_000, 10_000
		case 2:
			if cfg.Workload == "halo" {
				cfg.Exchange = "allreduce"
			}
			if cfg.Workload == "mpi" {
				cfg.PollNS = 10_000
			}
		}
		dir := filepath.Join(t.TempDir(), "trace")
		if _, err := gen.Generate(dir, cfg); err != nil {
			t.Fatalf("trial %d, %+v: %v", trial, cfg, err)
		}
		var want *report.OffPath
		for k := 1; k <= 3; k++ {
			rep, _, err := analyze(t, Options{Dir: dir}, k)
			if err != nil {
				t.Fatalf("trial %d, %+v, k=%d: %v", trial, cfg, k, err)
			}
			cp := rep.CriticalPath
			op := cp.OffPath
			if op == nil {
				t.Fatalf("trial %d, %+v, k=%d: no off_path", trial, cfg, k)
			}
			parts := []int64{op.Before, op.After, op.WakeUp, op.Fork, op.Tasks, op.Threads, op.Processes, op.MPI, op.StartSkew}
			if slices.Min(parts) < 0 || op.NS != cp.RunTimeNS-cp.LengthNS ||
				op.Before+op.Between+op.After != op.NS ||
				op.WakeUp+op.Fork+op.Tasks+op.Threads+op.Processes+op.MPI+op.StartSkew != op.Between {
				t.Errorf("trial %d, %+v, k=%d: path %d of %d, off_path %+v", trial, cfg, k, cp.LengthNS, cp.RunTimeNS, *op)
			}
			if k == 1 {
				want = op
			} else if *op != *want {
				t.Errorf("trial %d, %+v: k=%d off_path %+v, k=1 %+v", trial, cfg, k, *op, *want)
			}
		}
	}
}

// writeRelay writes one single-threaded process a row of events, over
// MPI_COMM_WORLD of them all, with the four MPI call names the tests'
// rows use.
func writeRelay(t *testing.T, rows [][]trace.Event) string {
	t.Helper()
	dir := t.TempDir()
	members := make([]int, len(rows))
	for r := range members {
		members[r] = r
	}
	for r := range rows {
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: len(rows), ClockUnit: "ns"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"MPI_Init", "MPI_Recv", "MPI_Send", "MPI_Finalize"} {
			w.String(s)
		}
		w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: members})
		w.SetThread(trace.Thread{Index: 0, Type: trace.ThreadInitial})
		for i := range rows[r] {
			if err := w.Emit(0, &rows[r][i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
