package waitstate_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// lockCall is an MPI_Win_lock (typ: trace.LockExclusive, LockShared or
// LockNoCheck; target −1: MPI_Win_lock_all) or MPI_Win_unlock over [enter,
// exit], its rma_lock or rma_unlock at the exit, on MPI_COMM_WORLD's
// window.
func lockCall(unlock bool, target, typ, enter, exit int64) mpiCall {
	switch {
	case unlock && target < 0:
		return mpiCall{"MPI_Win_unlock_all", enter, exit, []mpiEvent{{trace.RMAUnlock, exit, []int64{-1, 0}}}}
	case unlock:
		return mpiCall{"MPI_Win_unlock", enter, exit, []mpiEvent{{trace.RMAUnlock, exit, []int64{target, 0}}}}
	case target < 0:
		return mpiCall{"MPI_Win_lock_all", enter, exit, []mpiEvent{{trace.RMALock, exit, []int64{-1, 0, typ}}}}
	}
	return mpiCall{"MPI_Win_lock", enter, exit, []mpiEvent{{trace.RMALock, exit, []int64{target, 0, typ}}}}
}

// epoch is a lock epoch: its lock call over [l0, l1], its unlock's over
// [u0, u1].
func epoch(target, typ, l0, l1, u0, u1 int64) []mpiCall {
	return []mpiCall{lockCall(false, target, typ, l0, l1), lockCall(true, target, typ, u0, u1)}
}

// Lock Contention with MPI_Win_lock_all and MPI_MODE_NOCHECK on
// hand-made traces (times in ns; waits by docs/report-schema.md's
// definition):
//
//   - 20–101: rank 3 holds lock_all (a shared lock on every target);
//     rank 1's exclusive lock on rank 2, requested at 30, waits until
//     rank 3's unlock_all enter at 100: 70, caused by rank 3;
//   - 200–301: rank 1 holds rank 2's exclusive lock; rank 3's lock_all,
//     requested at 220, waits until 300: 80, caused by rank 1; rank 2's
//     lock_all, requested at 250 and released at 310, after rank 1's
//     epoch, waits for it too: 1 in its lock_all call (250–251), none in
//     its unlock_all (begun at 310, after the release);
//   - 400–481: rank 0's exclusive NOCHECK epoch on rank 1 (no lock) and
//     rank 3's lock_all call over 410–490: no wait (counted as a lock, it
//     would wait 70);
//   - 600–701: rank 1 holds rank 1's exclusive lock; rank 2's exclusive
//     NOCHECK lock call over 610–705: no wait (counted, 90).
//
// The same report at 1, 2 and 3 analysis ranks.
func TestLockAllAndNoCheck(t *testing.T) {
	ex, sh, nc := int64(trace.LockExclusive), int64(trace.LockShared), int64(trace.LockNoCheck)
	cat := func(l ...[]mpiCall) []mpiCall {
		var out []mpiCall
		for _, x := range l {
			out = append(out, x...)
		}
		return out
	}
	calls := [][]mpiCall{
		// rank 0
		epoch(1, nc, 400, 401, 480, 481),
		// rank 1
		cat(epoch(2, ex, 30, 105, 150, 151), epoch(2, ex, 200, 201, 300, 301), epoch(1, ex, 600, 601, 700, 701)),
		// rank 2: a lock_all beside rank 3's in 230–310, a NOCHECK epoch
		cat(epoch(-1, sh, 250, 251, 310, 311), epoch(1, nc, 610, 705, 720, 721)),
		// rank 3
		cat(epoch(-1, sh, 20, 21, 100, 101), epoch(-1, sh, 220, 305, 320, 321), epoch(-1, sh, 410, 490, 495, 496)),
	}
	dir := t.TempDir()
	writeProgram(t, dir, calls, 800)
	want := [4]int64{0, 70, 1, 80}
	cause := map[int]int64{3: 70, 1: 81}
	var first []byte
	for k := 1; k <= 3; k++ {
		rep, js := analyze(t, dir, k)
		if w := rep.Trace.Warnings; w != nil {
			t.Errorf("k=%d: warnings %+v, want none (a NOCHECK epoch pairs with its unlock)", k, w)
		}
		if first == nil {
			first = js
		} else if !bytes.Equal(js, first) {
			t.Errorf("k=%d: the report differs from 1 rank's", k)
		}
		ws := rep.WaitStates
		for _, p := range ws.PerProcess {
			if p.LockContentionNS != want[p.Rank] {
				t.Errorf("k=%d: rank %d: lock contention %d ns, want %d", k, p.Rank, p.LockContentionNS, want[p.Rank])
			}
		}
		got := map[int]int64{}
		for _, c := range ws.Causes {
			if c.Pattern == "lock_contention" {
				got[c.Rank] += c.NS
			}
		}
		if len(got) != len(cause) || got[3] != cause[3] || got[1] != cause[1] {
			t.Errorf("k=%d: lock contention caused %v, want %v", k, got, cause)
		}
	}
}

// A lock epoch that waited for its holder depends on the holder's
// release: the critical path comes from the holder's computation up to
// its MPI_Win_unlock (rank 0: 21–500) into the waiting MPI_Win_lock (rank
// 1: 30–505, released at 500), not through the waiter's wait (rank 0
// ends at 610, rank 1 at 1010). Without the edge the path stayed on rank
// 1 (its lock call MPI time). The same with
// the lock acquired lazily in MPI_Win_unlock (rank 1's unlock over
// 30–505), and none when the release came in between, in an RMA call,
// which has no event of its own.
func TestLockContentionCriticalPath(t *testing.T) {
	ex := int64(trace.LockExclusive)
	for _, tc := range []struct {
		name   string
		waiter []mpiCall
		edge   bool
	}{
		{"in MPI_Win_lock", epoch(0, ex, 30, 505, 510, 511), true},
		{"in MPI_Win_unlock", epoch(0, ex, 30, 31, 32, 505), true},
		{"in MPI_Put", append(append([]mpiCall{lockCall(false, 0, ex, 30, 31)}, mpiCall{"MPI_Put", 32, 505, nil}),
			lockCall(true, 0, ex, 506, 507)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeProgramEnds(t, dir, [][]mpiCall{epoch(0, ex, 20, 21, 500, 501), tc.waiter}, []int64{600, 1000})
			for k := 1; k <= 2; k++ {
				rep, _ := analyze(t, dir, k)
				if got := rep.WaitStates.PerProcess[1].LockContentionNS; got < 469 {
					t.Fatalf("k=%d: rank 1 waits %d ns for the lock, want 469 or more", k, got)
				}
				cp := rep.CriticalPath
				var on0 int64
				for _, s := range cp.ByProcess {
					if s.Name == "rank 0" {
						on0 = s.NS
					}
				}
				if got := on0 >= 479 && cp.RankCrossings > 0; got != tc.edge {
					t.Errorf("k=%d: rank 0 has %d ns of the critical path, %d rank crossings; want the path through its hold: %v", k, on0, cp.RankCrossings, tc.edge)
				}
			}
		})
	}
}

// An rma_lock whose target is no process of the trace (a damaged file:
// the collector writes a member's world rank) takes no part, on any
// number of analysis ranks: the epoch went to the target's owner, which
// no rank is, and the analysis panicked.
func TestLockTargetOutsideTrace(t *testing.T) {
	ex := int64(trace.LockExclusive)
	dir := t.TempDir()
	writeProgram(t, dir, [][]mpiCall{epoch(5, ex, 20, 21, 500, 501), epoch(1, ex, 30, 505, 510, 511)}, 600)
	for k := 1; k <= 2; k++ {
		rep, _ := analyze(t, dir, k)
		for _, p := range rep.WaitStates.PerProcess {
			if p.LockContentionNS != 0 {
				t.Errorf("k=%d: rank %d waits %d ns for a lock, want 0", k, p.Rank, p.LockContentionNS)
			}
		}
		wantLockWarning(t, rep, "rma_lock left out: process 0 (rank-00000.ptrace) thread 0 event", "target 5 of window entry")
	}
}

// wantLockWarning: the report counts one warning, the lock record left
// out, and names it with the parts given.
func wantLockWarning(t *testing.T, rep *report.Report, parts ...string) {
	t.Helper()
	w := rep.Trace.Warnings
	if w == nil || w.Count != 1 || len(w.First) != 1 {
		t.Fatalf("warnings %+v, want the lock record left out", w)
	}
	for _, p := range parts {
		if !strings.Contains(w.First[0], p) {
			t.Errorf("warning %q does not say %q", w.First[0], p)
		}
	}
}

// An rma_lock of an unknown lock type takes no part: 257 (a damaged
// file) read as its low byte was an exclusive lock, which rank 1's
// exclusive epoch then waited for.
func TestLockUnknownType(t *testing.T) {
	ex := int64(trace.LockExclusive)
	dir := t.TempDir()
	writeProgram(t, dir, [][]mpiCall{epoch(1, 256+ex, 20, 21, 500, 501), epoch(1, ex, 30, 505, 510, 511)}, 600)
	rep, _ := analyze(t, dir, 1)
	for _, p := range rep.WaitStates.PerProcess {
		if p.LockContentionNS != 0 {
			t.Errorf("rank %d waits %d ns for a lock, want 0", p.Rank, p.LockContentionNS)
		}
	}
	wantLockWarning(t, rep, "rma_lock left out: process 0 (rank-00000.ptrace)", "lock type 257")
}
