package otf2_test

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/trace"
)

// Score-P 8.4's traces of rma_lock.c and rma_lock_all.c (their SOURCE.md).
var (
	rmaLockDir    = filepath.Join("testdata", "scorep-8.4-rma-lock")
	rmaLockAllDir = filepath.Join("testdata", "scorep-8.4-rma-lock-all")
)

// TestScorepLockContention: the RmaRequestLock and RmaReleaseLock records
// of MPI_Win_lock[_all] and MPI_Win_unlock[_all] become the collector's
// rma_lock and rma_unlock right before the calls' mpi_exit (peer the
// target's world rank, −1 for lock_all; the window's own entry; the lock
// type), so Lock Contention per rank equals the definition
// (docs/report-schema.md) applied to the archive's own records by
// waits.py (python3-otf2, run when installed) to a few ns; the same JSON on 1
// and 2 analysis ranks; the causes sum to the waits. rma_lock_all.c's
// MPI_MODE_NOCHECK epochs (rank 0's, on rank 2) are shared locks here:
// Score-P does not record the assertion (SOURCE.md).
func TestScorepLockContention(t *testing.T) {
	for _, c := range []struct {
		dir         string
		epochs, all int
		want        [4]int64      // ns, waits.py
		causes      map[int]int64 // ns by the ranks waited for (nil: not rank 0)
	}{
		{rmaLockDir, 25, 0, [4]int64{0, 34_731_211, 42_833_783, 53_100_647}, nil},
		// rank 1's exclusive epochs wait for rank 3's lock_all ones and
		// (102 µs) rank 0's NOCHECK ones, rank 3's lock_all for rank 1
		{rmaLockAllDir, 41, 16, [4]int64{0, 24_273_319, 0, 24_777_242}, map[int]int64{0: 102_111, 1: 24_777_242, 3: 24_171_211}},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			anchor := filepath.Join(c.dir, "traces.otf2")
			rep, _ := analyzeOn1And2(t, anchor)
			if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
				t.Errorf("warnings %+v", w)
			}
			for _, n := range rep.Trace.Notes {
				if strings.Contains(n, "_LOCK ") {
					t.Errorf("note %q: the lock records are used", n)
				}
			}
			want := c.want
			if got := scriptWaits(t, c.dir, anchor); got != nil {
				want = *got
			}
			var sum int64
			for _, p := range rep.WaitStates.PerProcess {
				sum += p.LockContentionNS
				if d := p.LockContentionNS - want[p.Rank]; d < -8 || d > 8 {
					t.Errorf("rank %d: lock contention %d ns, the definition on the archive's records %d", p.Rank, p.LockContentionNS, want[p.Rank])
				}
			}
			causes := map[int]int64{}
			var caused int64
			for _, x := range rep.WaitStates.Causes {
				if x.Pattern == "lock_contention" {
					causes[x.Rank] += x.NS
					caused += x.NS
				}
			}
			if caused != sum || c.causes == nil && causes[0] != 0 {
				t.Errorf("causes %v (sum %d): want the waits' %d, none by rank 0 (its one epoch comes last)", causes, caused, sum)
			}
			for r, ns := range c.causes {
				if d := causes[r] - ns; d < -8 || d > 8 {
					t.Errorf("rank %d caused %d ns of lock contention, want %d", r, causes[r], ns)
				}
			}
			locks, alls := convertedLocks(t, anchor)
			if locks != c.epochs || alls != c.all {
				t.Errorf("%d epochs converted, %d of them lock_all; want %d, %d", locks, alls, c.epochs, c.all)
			}
		})
	}
}

// scriptWaits runs the archive's waits.py (rma-lock's) on anchor when
// python3-otf2 is installed, nil otherwise (CI: a failure, needOTF2).
func scriptWaits(t *testing.T, dir, anchor string) *[4]int64 {
	t.Helper()
	if exec.Command(python, "-c", "import otf2").Run() != nil {
		needOTF2(t) // fails under CI=true
		return nil
	}
	abs, _ := filepath.Abs(anchor)
	script, _ := filepath.Abs(filepath.Join(rmaLockDir, "waits.py"))
	cmd := exec.Command(python, script, abs)
	cmd.Dir = t.TempDir() // not next to the otf2/ package, which python would import
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("waits.py: %v", err)
	}
	var w [4]int64
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		var r int
		var ns int64
		if _, err := fmt.Sscanf(l, "%d lock_contention %d ns", &r, &ns); err == nil && r < 4 {
			w[r] = ns
			n++
		}
	}
	if n != 4 {
		t.Fatalf("waits.py printed %q", out)
	}
	return &w
}

// convertedLocks converts every process of an archive and checks that
// each rma_lock and rma_unlock is its call's last event, right before
// the mpi_exit of MPI_Win_lock[_all] or MPI_Win_unlock[_all], on a
// window's entry, peer −1 exactly in the _all calls, a lock type 1 or 2
// (2 for lock_all); it returns the rma_lock events, and how many of them
// are lock_all's.
func convertedLocks(t *testing.T, anchor string) (locks, alls int) {
	t.Helper()
	for rank := range 4 {
		evs, tabs := convertProcess(t, anchor, rank)
		n, unlocks := 0, 0
		for i, e := range evs {
			if e.Kind != trace.RMALock && e.Kind != trace.RMAUnlock {
				continue
			}
			if i+1 >= len(evs) || evs[i+1].Kind != trace.MPIExit {
				t.Fatalf("rank %d: %v not followed by an mpi_exit", rank, e.Event)
			}
			fn := tabs.String(evs[i+1].Args[0])
			all := strings.HasSuffix(fn, "_all")
			cm, ok := tabs.CommByIndex(e.Args[1])
			switch {
			case !ok || cm.ID&trace.CommWindow == 0:
				t.Errorf("rank %d: %v not on a window's entry", rank, e.Event)
			case all != (e.Args[0] == -1), e.Args[0] >= 4:
				t.Errorf("rank %d: %v in %s", rank, e.Event, fn)
			case e.Kind == trace.RMALock && (!strings.HasPrefix(fn, "MPI_Win_lock") || e.Args[2] != trace.LockShared && (all || e.Args[2] != trace.LockExclusive)):
				t.Errorf("rank %d: %v in %s", rank, e.Event, fn)
			case e.Kind == trace.RMAUnlock && !strings.HasPrefix(fn, "MPI_Win_unlock"):
				t.Errorf("rank %d: %v in %s", rank, e.Event, fn)
			}
			if e.Kind == trace.RMAUnlock {
				unlocks++
				continue
			}
			n++
			if all {
				alls++
			}
		}
		if unlocks != n {
			t.Errorf("rank %d: %d rma_lock, %d rma_unlock", rank, n, unlocks)
		}
		locks += n
	}
	return locks, alls
}

// TestScorepLockBadInput: damaged lock records are counted warnings of
// the conversion naming file and offset, never a conversion error or a
// panic, and the analysis then runs: a window that is none, a target
// outside the window's communicator, an unknown lock type, a request made
// a release (in MPI_Win_lock; its epoch's release then has no epoch), a
// release made a try-lock (an attempt that got no lock: not used, noted;
// its epoch is never released). A lock record in MPI_Fetch_and_op is only
// not used.
func TestScorepLockBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  string
		loc  uint64
		nth  func(e *otf2.Event, k int) bool // the record to damage
		at   int64                           // its byte to change, from the record's type byte
		b    byte
		at2  int64 // a second byte to change (0: none)
		b2   byte
		want []string
	}{
		// RmaRequestLock: type, length, window (0: 00), remote (0: 00;
		// 2: 01 02), lock id (00), lock type (00 exclusive, 01 shared)
		// (the first of a kind of warning is kept, the others counted;
		// the epoch's release then has no epoch)
		{"window", rmaLockDir, 1, isType(otf2.EvRmaRequestLock, 0), 2, 0xff, 0, 0, []string{
			"traces/1.evt: offset %d: RMA_REQUEST_LOCK on RMA window 4294967295, which is not a window",
			"(2 RMA lock records skipped in all)"}},
		{"remote", rmaLockAllDir, 1, isType(otf2.EvRmaRequestLock, 0), 4, 9, 0, 0, []string{
			"traces/1.evt: offset %d: RMA_REQUEST_LOCK names rank 9, outside RMA window 0's communicator; skipped"}},
		{"type", rmaLockDir, 2, isType(otf2.EvRmaRequestLock, 0), 5, 7, 0, 0, []string{
			"traces/2.evt: offset %d: RMA_REQUEST_LOCK of lock type 7 in MPI_Win_lock; skipped"}},
		{"request-release", rmaLockDir, 3, isType(otf2.EvRmaRequestLock, 1), 0, otf2.EvRmaReleaseLock, 0, 0, []string{
			"traces/3.evt: offset %d: RMA_RELEASE_LOCK in MPI_Win_lock; skipped (2 RMA lock records skipped in all)"}},
		{"never-released", rmaLockDir, 3, isType(otf2.EvRmaReleaseLock, 2), 0, otf2.EvRmaTryLock, 0, 0, []string{
			"traces/3.evt: offset ", "RMA_REQUEST_LOCK of RMA window 0, target 0, never released"}},
		// an RmaAtomic (type 48: window, remote, atomic type, bytes sent
		// and received, matching id) in MPI_Fetch_and_op made a request
		// (its atomic type byte a lock id 0)
		{"outside", rmaLockDir, 1, isType(48, 0), 0, otf2.EvRmaRequestLock, 4, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, c.dir)
			path := filepath.Join(dir, "traces", strconv.FormatUint(c.loc, 10)+".evt")
			anchor := filepath.Join(dir, "traces.otf2")
			off := findRecord(t, anchor, c.loc, c.nth)
			patch(t, path, off+c.at, c.b)
			if c.at2 > 0 {
				patch(t, path, off+c.at2, c.b2)
			}
			a, err := otf2.Open(anchor)
			if err != nil {
				t.Fatal(err)
			}
			st, err := a.Convert(int(c.loc), io.Discard)
			if err != nil {
				t.Fatalf("conversion: %v", err)
			}
			switch c.name {
			case "outside":
				if len(st.Warnings) != 0 || st.Ignored[otf2.EvRmaRequestLock] != 1 {
					t.Errorf("warnings %q, %d RmaRequestLock not used; want none, 1", st.Warnings, st.Ignored[otf2.EvRmaRequestLock])
				}
			case "never-released":
				if st.Ignored[otf2.EvRmaTryLock] != 1 {
					t.Errorf("%d RmaTryLock not used, want 1", st.Ignored[otf2.EvRmaTryLock])
				}
			}
			wantWarningsAt(t, st.Warnings, c.want, off)
			err = inproc.Run(1, func(cm comm.Comm) error {
				_, err := driver.Run(cm, driver.Options{Dir: anchor})
				return err
			})
			if err != nil {
				t.Errorf("analysis: %v", err)
			}
		})
	}
}
