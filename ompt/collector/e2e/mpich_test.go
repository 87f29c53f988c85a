package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// MPICH is the other family of MPI implementations (Intel MPI, MVAPICH and
// Cray MPICH derive from it): integer handles where Open MPI has pointers,
// its own Fortran library, and its own launcher, Hydra. Debian installs it
// beside Open MPI under the alternatives' ".mpich" names, Open MPI staying
// the default.

// setupMPICH returns the harness with the collector built against MPICH,
// or skips (fails under CI) when MPICH is not installed.
func setupMPICH(t *testing.T) *harness {
	t.Helper()
	h := setup(t)
	for _, tool := range []string{"mpicc.mpich", "mpifort.mpich", "mpiexec.mpich"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and %s is not installed (apt-get install -y mpich libmpich-dev gfortran)", tool)
			}
			t.Skipf("%s is not installed (apt-get install -y mpich libmpich-dev gfortran)", tool)
		}
	}
	m := *h
	m.libs = filepath.Join(t.TempDir(), "collector")
	c := exec.Command("make", "-s", "-C", h.root, "collector", "MPICC=mpicc.mpich", "COLLECTOR_DIR="+m.libs)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("the collector against MPICH: %v\n%s", err, out)
	}
	return &m
}

func mpiexecMPICH(n int, args ...string) []string {
	return append([]string{"mpiexec.mpich", "-n", strconv.Itoa(n)}, args...)
}

// The collector and ptrace-mpi built against MPICH, its programs started
// by mpiexec.mpich, which record must take for a launcher by its name
// (no --mpi: it used to record the OpenMP events alone, each rank a run of
// its own). The pure MPI program's values equal what its own clock saw,
// as under Open MPI (TestPureMPIValues); the Cartesian Jacobi's messages
// and reductions all match in C and in Fortran with use mpi and use
// mpi_f08, its grid's communicator as MPI tells it; the threads a program
// starts (pthreads, std::thread) are recorded as under Open MPI
// (TestUserThreadsMPI), none of MPICH's own; io_rma_f.F90 with use
// mpi_f08 runs and matches; Fortran's MPI_IN_PLACE, MPI_BOTTOM and
// MPI_STATUS_IGNORE reach MPI as C's (TestFortranSentinels); a
// disconnected communicator's handle reused is the new communicator's
// (TestCommDisconnect); the waits of general active target
// synchronisation are Scalasca's (TestRMAEpochWaits); and ptrace-mpi under
// mpiexec.mpich gives the report the in-process analysis gives.
func TestMPICH(t *testing.T) {
	h := setupMPICH(t)
	t.Run("pure values", func(t *testing.T) {
		const iters = 4
		bin := h.buildWith(t, mpich(), testdata("waits_pure.c"))
		designed(t, func() []string {
			r, procs, pc := recordPureRun(t, h, mpiexecMPICH(2, bin, strconv.Itoa(iters)))
			if n := len(procs); n != 2 {
				t.Fatalf("%d processes, want 2", n)
			}
			return pureMismatches(t, r, procs, pc, iters)
		})
	})
	cart := func(t *testing.T, src string) (string, string) {
		t.Helper()
		return h.mustRecord(t, nil, mpiexecMPICH(4, h.buildWith(t, mpich(), testdata(src)), "128", "100")...)
	}
	// The C run's trace outlives its subtest: ptrace-mpi analyses it.
	cartTrace, cartOut := cart(t, "jacobi_cart.c")
	t.Run("jacobi_cart.c", func(t *testing.T) { h.checkCartRun(t, cartTrace, cartOut, 800) })
	for _, src := range []string{"jacobi_cart_f.f90", "jacobi_cart_f08.f90"} {
		t.Run(src, func(t *testing.T) {
			dir, out := cart(t, src)
			h.checkCartRun(t, dir, out, 800)
		})
	}
	// MPICH's libmpichfort names its mpi_f08 bindings of the window's
	// fence and free as Open MPI's (mpi_win_fence_f08_), which ptrace's
	// converted bindings take over, and the profiling entries of those
	// that stay time only pmpir_x_f08_ (MPI_File_open, …): ptrace stopped
	// such a program ("the MPI library has no pmpi_file_open_f08_")
	// before it looked for those too. io_rma_f.F90 with use mpi_f08: its
	// messages and collectives, the window's included, all matched.
	// General active target synchronisation (rma_pscw.c, and
	// rma_pscw_f.F90 with use mpi_f08): MPICH too returns from
	// MPI_Win_start once every target posted, so the recorded messages
	// and the waits are as under Open MPI (TestRMAEpochWaits), checked
	// the same way.
	t.Run("rma_pscw.c", func(t *testing.T) {
		bin := h.buildWith(t, mpich(), testdata("rma_pscw.c"))
		designed(t, func() []string {
			const iters, post, complete = 8, 20000, 30000
			dir, out := h.mustRecord(t, nil, mpiexecMPICH(4, bin, strconv.Itoa(iters), strconv.Itoa(post), strconv.Itoa(complete))...)
			return pscwRun(t, h, dir, out, iters, post, complete)
		})
	})
	// Lock Contention (rma_lock.c): MPICH (ch4) waits for a contended
	// exclusive lock in MPI_Win_lock, as Open MPI does; checked as in
	// TestLockContention.
	t.Run("rma_lock.c", func(t *testing.T) {
		bin := h.buildWith(t, mpich(), testdata("rma_lock.c"))
		designed(t, func() []string {
			const iters, out, hold = 8, 1000, 4000
			dir, o := h.mustRecord(t, nil, mpiexecMPICH(4, bin, strconv.Itoa(iters), strconv.Itoa(out), strconv.Itoa(hold))...)
			return lockRun(t, h, dir, o, iters, hold)
		})
	})
	// lock_all and MPI_MODE_NOCHECK (rma_lock_all.c), as in
	// TestLockAllContention.
	t.Run("rma_lock_all.c", func(t *testing.T) {
		bin := h.buildWith(t, mpich(), testdata("rma_lock_all.c"))
		designed(t, func() []string {
			const iters, out, hold = 8, 1000, 4000
			dir, o := h.mustRecord(t, nil, mpiexecMPICH(4, bin, strconv.Itoa(iters), strconv.Itoa(out), strconv.Itoa(hold))...)
			return lockAllRun(t, h, dir, o, iters, out, hold)
		})
	})
	t.Run("rma_pscw_f.F90 mpi_f08", func(t *testing.T) {
		bin := h.buildWith(t, mpich(), testdata("rma_pscw_f.F90"), "-DUSE_F08")
		designed(t, func() []string {
			const iters, post, complete = 8, 20000, 30000
			dir, out := h.mustRecord(t, nil, mpiexecMPICH(4, bin, strconv.Itoa(iters), strconv.Itoa(post), strconv.Itoa(complete))...)
			return pscwRun(t, h, dir, out, iters, post, complete)
		})
	})
	t.Run("io_rma_f.F90 mpi_f08", func(t *testing.T) {
		const ranks, iters = 4, 20
		bin := h.buildWith(t, mpich(), testdata("io_rma_f.F90"), "-DUSE_F08")
		dir, out := h.mustRecord(t, nil, mpiexecMPICH(ranks, bin, strconv.Itoa(iters), "0", filepath.Join(t.TempDir(), "ck"))...)
		valid(t, dir)
		r := h.report(t, dir)
		noReportWarnings(t, r)
		if it := printed(t, out, "iterations="); it != iters {
			t.Fatalf("the program ran %d iterations, want %d", it, iters)
		}
		// and the window's creation, iters + 1 fences and free
		allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives=")+1+iters+1+1)
		calls, _ := byFunc(r)
		for fn, n := range map[string]int64{"MPI_File_open": ranks, "MPI_File_close": ranks, "MPI_Win_fence": ranks * (iters + 1)} {
			if calls[fn] != n {
				t.Errorf("%s: %d calls, want %d", fn, calls[fn], n)
			}
		}
	})
	// MPICH's Fortran sentinels are not Open MPI's common blocks: the
	// bindings passed a use mpi program's MPI_IN_PLACE on as a buffer
	// (MPI_Allreduce summed nothing) and its MPI_BOTTOM as an address
	// (MPI_Bcast crashed) before they took MPICH's (mpich_sentinels).
	t.Run("sentinels_f.F90", func(t *testing.T) {
		bin := h.buildWith(t, mpich(), testdata("sentinels_f.F90"))
		checkSentinels(t, h, mpiexecMPICH(3, bin))
	})
	// MPICH gives a disconnected communicator's handle to the next one
	// made too (TestCommDisconnect).
	t.Run("comm_disconnect.c", func(t *testing.T) {
		const iters = 10
		bin := h.buildWith(t, mpich(), testdata("comm_disconnect.c"))
		dir, out := h.mustRecord(t, nil, mpiexecMPICH(4, bin, strconv.Itoa(iters))...)
		checkDisconnect(t, h, dir, out, iters)
	})
	// MPI 4.0's persistent collectives (Open MPI 4.1 has none): each
	// MPI_Start a nonblocking collective's start. Before the collector
	// wrapped their initialisations, the late start of pcoll.c's
	// persistent MPI_Allreduce was transfer/other in MPI_Wait. Its wait at
	// N×N is the definitions applied by hand to the recorded calls, and at
	// least half the program's lateness; the persistent all-to-all and
	// broadcast that even and odd ranks start in opposite orders (as MPI
	// allows) match, each on its own entry, without a warning.
	t.Run("pcoll.c", func(t *testing.T) {
		const ranks, iters, lateUS, overlapUS = 4, 20, 2000, 100
		bin := h.buildWith(t, mpich(), testdata("pcoll.c"))
		dir, out := h.mustRecord(t, nil, mpiexecMPICH(ranks, bin, strconv.Itoa(iters), strconv.Itoa(lateUS))...)
		if e := printed(t, out, "errors="); e != 0 {
			t.Errorf("%d values not where the collectives put them", e)
		}
		procs := valid(t, dir)
		r := h.report(t, dir)
		noReportWarnings(t, r)
		allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives="))
		rec := recordedNBC(t, procs)
		reds := map[int][]nbcCall{}
		for rank, calls := range rec {
			if len(calls) != 3*iters {
				t.Fatalf("rank %d: %d persistent collective starts, want %d", rank, len(calls), 3*iters)
			}
			for _, c := range calls {
				if trace.CollOp(c.op) == trace.CollAllreduce {
					reds[rank] = append(reds[rank], c)
				}
			}
		}
		hand, _, _, _ := handNBCOf(t, reds, ranks, iters)
		var wait *report.WaitSite
		for i := range r.WaitStates.CallSites {
			if s := &r.WaitStates.CallSites[i]; s.Func == "MPI_Wait" {
				wait = s
			}
		}
		planned := int64((ranks - 1) * iters * (lateUS - overlapUS) * 1000)
		if wait == nil {
			t.Fatalf("no MPI_Wait call site: %+v", r.WaitStates.CallSites)
		}
		t.Logf("MPI_Wait of the persistent MPI_Allreduce: wait at N×N %d ns (by hand %d, planned %d)", wait.WaitNxNNS, hand[trace.CollAllreduce], planned)
		if wait.WaitNxNNS < planned/2 || abs(wait.WaitNxNNS-hand[trace.CollAllreduce]) > 1_000_000 {
			t.Errorf("MPI_Wait: %+v, want a wait at N×N of %d ns by hand, over %d", wait, hand[trace.CollAllreduce], planned/2)
		}
	})
	t.Run("particles.c", func(t *testing.T) {
		bin := h.buildWith(t, mpich(), testdata("particles.c"))
		dir, out := h.mustRecord(t, nil, mpiexecMPICH(4, bin, strconv.Itoa(particlesIters), strconv.Itoa(particlesLateUS))...)
		checkParticles(t, h, dir, out)
	})
	for _, s := range userThreadSources {
		t.Run(s.src, func(t *testing.T) {
			const iters = 3
			bin := h.buildWith(t, mpich(), testdata(s.src))
			recordUserThreads(t, h, mpiexecMPICH(2, bin, strconv.Itoa(iters)), filepath.Join(h.root, testdata(s.src)), s.joinCall, iters)
		})
	}
	t.Run("ptrace-mpi", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "ptrace-mpi")
		c := exec.Command(goTool(), "build", "-tags", "mpi", "-o", bin, "./cmd/ptrace")
		c.Dir = h.root
		c.Env = append(os.Environ(), "CC=mpicc.mpich")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("ptrace-mpi against MPICH: %v\n%s", err, out)
		}
		in := filepath.Join(t.TempDir(), "in.json")
		if out, err := exec.Command(h.ptrace, "analyze", "-q", "--ranks", "1", "--json", in, cartTrace).CombinedOutput(); err != nil {
			t.Fatalf("analyze: %v\n%s", err, out)
		}
		for _, np := range []int{2, 3} {
			js := filepath.Join(t.TempDir(), "mpi.json")
			if out, err := exec.Command("mpiexec.mpich", "-n", strconv.Itoa(np), bin, "analyze", "-q", "--json", js, cartTrace).CombinedOutput(); err != nil {
				t.Fatalf("mpiexec.mpich -n %d ptrace-mpi analyze: %v\n%s", np, err, out)
			}
			a, _ := os.ReadFile(in)
			b, err := os.ReadFile(js)
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("mpiexec.mpich -n %d ptrace-mpi: the report differs from the in-process one (%v)", np, err)
			}
		}
	})
}
