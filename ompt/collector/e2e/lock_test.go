package e2e

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// lockEpochRec is one recorded lock epoch of rma_lock.c: its origin, the
// type, and its one-sided calls (enter, exit), MPI_Win_lock's first and
// MPI_Win_unlock's last.
type lockEpochRec struct {
	origin int
	target int64 // −1: MPI_Win_lock_all
	typ    int64
	calls  [][2]int64
}

// lockEpochs reads each process's lock epochs on its thread 0 from the
// collector's events (rma_lock, rma_unlock and the one-sided calls
// between), by the collector's own timestamps; MPI_MODE_NOCHECK epochs,
// which take no lock, are left out.
func lockEpochs(t *testing.T, procs []*trace.Process) []lockEpochRec {
	t.Helper()
	var out []lockEpochRec
	for i, p := range procs {
		var open *lockEpochRec
		var call [2]int64
		var fn string
		for sc := p.Scan(0, nil); sc.Next(); {
			e := sc.Event()
			switch e.Kind {
			case trace.MPIEnter:
				call[0], fn = e.Time, p.Tables.String(e.Args[0])
			case trace.RMALock:
				if e.Args[2] != trace.LockNoCheck {
					open = &lockEpochRec{origin: i, target: e.Args[0], typ: e.Args[2]}
				}
			case trace.RMAUnlock:
				if open != nil {
					fn = "unlock"
				}
			case trace.MPIExit:
				call[1] = e.Time
				if open == nil {
					continue
				}
				if strings.HasPrefix(fn, "MPI_Win_") || fn == "MPI_Fetch_and_op" || fn == "MPI_Get" || fn == "unlock" {
					open.calls = append(open.calls, call)
				}
				if fn == "unlock" {
					out = append(out, *open)
					open = nil
				}
			}
		}
	}
	return out
}

// lockContention applies the definition (docs/report-schema.md) to the
// epochs of one window on targets 0..procs−1 (a lock_all epoch: on every
// one): per target ordered by their unlocks' exits, each waits for the
// conflicting epochs before it (every one for an exclusive, the
// exclusive ones for a shared) until the latest enter of their unlocks
// (a lock_all epoch: the latest over the targets), inside its own
// one-sided calls; per origin.
func lockContention(eps []lockEpochRec, procs int) []int64 {
	slices.SortStableFunc(eps, func(x, y lockEpochRec) int {
		return cmp.Compare(x.calls[len(x.calls)-1][1], y.calls[len(y.calls)-1][1])
	})
	until := make([]int64, len(eps))
	for j := range until {
		until[j] = -1
	}
	for tg := range int64(procs) {
		for j, e := range eps {
			if e.target != tg && e.target != -1 {
				continue
			}
			for _, p := range eps[:j] {
				if (p.target == tg || p.target == -1) && (e.typ == trace.LockExclusive || p.typ == trace.LockExclusive) {
					until[j] = max(until[j], p.calls[len(p.calls)-1][0])
				}
			}
		}
	}
	want := make([]int64, procs)
	for j, e := range eps {
		for _, c := range e.calls {
			want[e.origin] += max(0, min(c[1], until[j])-c[0])
		}
	}
	return want
}

// Lock Contention (rma_lock.c): ranks 1–3 increment a counter on rank 0
// under an exclusive lock, holding it HOLD_US, with OUT_US of computation
// between; in every fourth iteration ranks 2 and 3 read it under a shared
// lock instead. The collector records each epoch's ends; the analysis
// orders rank 0's epochs. The ground truth is the definition applied to
// the collector's timestamps (one host, one clock); the design checks
// that the origins wait for most of the others' holds (with HOLD_US >
// OUT_US, the lock is always taken: each exclusive epoch waits about
// (2·HOLD_US − OUT_US) at least in all), and that rank 0 waits for no
// lock. Before, all of it was MPI time.
func TestLockContention(t *testing.T) {
	h := setup(t)
	bin := h.buildMPI(t, testdata("rma_lock.c"))
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	designed(t, func() []string {
		const iters, out, hold = 8, 1000, 4000
		dir, o := h.mustRecord(t, nil, mpirunN(4, bin, strconv.Itoa(iters), strconv.Itoa(out), strconv.Itoa(hold))...)
		return lockRun(t, h, dir, o, iters, hold)
	})
}

// lockRun checks one recorded run of rma_lock.c (ITERS OUT_US HOLD_US).
func lockRun(t *testing.T, h *harness, dir, out string, iters, hold int64) (bad []string) {
	t.Helper()
	procs := valid(t, dir)
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	if s := printed(t, out, "sum="); s != 3*iters-2*(iters/4) {
		t.Fatalf("counter %d, want %d", s, 3*iters-2*(iters/4))
	}
	eps := lockEpochs(t, procs)
	// and rank 0's shared read of its own counter at the end
	if len(eps) != 3*int(iters)+1 {
		t.Fatalf("%d lock epochs to rank 0, want %d", len(eps), 3*iters+1)
	}
	want := lockContention(eps, len(procs))
	for _, ranks := range []string{"1", "2", "3"} {
		r := h.reportArgs(t, dir, "--ranks", ranks)
		noReportWarnings(t, r)
		ws := r.WaitStates
		if ws == nil || len(ws.PerProcess) != 4 {
			t.Fatalf("wait states %+v, want 4 processes", ws)
		}
		var caused int64
		for _, c := range ws.Causes {
			if c.Pattern == "lock_contention" {
				caused += c.NS
				if c.Rank == 0 {
					t.Errorf("rank 0 (the target, whose one epoch comes last) causes %d ns of lock contention", c.NS)
				}
			}
		}
		var sum int64
		for rank := range 4 {
			got := ws.PerProcess[rank].LockContentionNS
			sum += got
			t.Logf("--ranks %s: rank %d: lock contention %d ns (timestamps %d)", ranks, rank, got, want[rank])
			if tol := max(300_000, want[rank]*3/200); abs(got-want[rank]) > tol {
				t.Errorf("--ranks %s: rank %d: lock contention %d ns, the collector's timestamps give %d (tolerance %d)", ranks, rank, got, want[rank], tol)
			}
		}
		if caused != sum {
			t.Errorf("--ranks %s: causes of lock contention sum to %d ns, the waits to %d", ranks, caused, sum)
		}
		if ranks == "1" {
			// The design: the lock is contended all along.
			if min := 3 * iters / 2 * hold * 1000; sum < min {
				bad = append(bad, fmt.Sprintf("lock contention %d ns in all, designed at least %d", sum, min))
			}
		}
	}
	return bad
}

// Lock Contention with MPI_Win_lock_all and MPI_MODE_NOCHECK
// (rma_lock_all.c): rank 1's exclusive lock on rank 2 waits for rank 3's
// lock_all (a shared lock on every target), rank 3's lock_all waits for
// rank 1's exclusive lock, and rank 0's NOCHECK epoch beside them takes no
// lock. The ground truth is the definition applied to the collector's
// timestamps; the design: each of the 2·ITERS contended epochs waits
// about HOLD_US − OUT_US at least. Before, lock_all epochs took no part.
func TestLockAllContention(t *testing.T) {
	h := setup(t)
	bin := h.buildMPI(t, testdata("rma_lock_all.c"))
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	designed(t, func() []string {
		const iters, out, hold = 8, 1000, 4000
		dir, o := h.mustRecord(t, nil, mpirunN(4, bin, strconv.Itoa(iters), strconv.Itoa(out), strconv.Itoa(hold))...)
		return lockAllRun(t, h, dir, o, iters, out, hold)
	})
}

// lockAllRun checks one recorded run of rma_lock_all.c (ITERS OUT_US
// HOLD_US).
func lockAllRun(t *testing.T, h *harness, dir, out string, iters, outUS, hold int64) (bad []string) {
	t.Helper()
	procs := valid(t, dir)
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	if s := printed(t, out, "sum="); s != 2*iters {
		t.Fatalf("counter %d, want %d", s, 2*iters)
	}
	eps := lockEpochs(t, procs)
	// 2·ITERS exclusive and lock_all epochs each, rank 2's shared one at
	// the end; the NOCHECK ones left out.
	if len(eps) != 4*int(iters)+1 {
		t.Fatalf("%d lock epochs, want %d", len(eps), 4*iters+1)
	}
	want := lockContention(eps, len(procs))
	for _, ranks := range []string{"1", "2", "3"} {
		r := h.reportArgs(t, dir, "--ranks", ranks)
		noReportWarnings(t, r)
		ws := r.WaitStates
		if ws == nil || len(ws.PerProcess) != 4 {
			t.Fatalf("wait states %+v, want 4 processes", ws)
		}
		var sum int64
		for rank := range 4 {
			got := ws.PerProcess[rank].LockContentionNS
			sum += got
			t.Logf("--ranks %s: rank %d: lock contention %d ns (timestamps %d)", ranks, rank, got, want[rank])
			if tol := max(300_000, want[rank]*3/200); abs(got-want[rank]) > tol {
				t.Errorf("--ranks %s: rank %d: lock contention %d ns, the collector's timestamps give %d (tolerance %d)", ranks, rank, got, want[rank], tol)
			}
		}
		if ranks == "1" {
			if min := 2 * iters * (hold - outUS) * 1000 / 2; sum < min {
				bad = append(bad, fmt.Sprintf("lock contention %d ns in all, designed at least %d", sum, min))
			}
		}
	}
	return bad
}
