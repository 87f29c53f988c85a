package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// Python programs call MPI through mpi4py: the interpreter is linked with
// no MPI (mpi4py's extension module loads libmpi when it is imported, and
// calls MPI_Init_thread then), every call site is in that module, and
// Python objects travel pickled, received with MPI_Mprobe and MPI_Mrecv.

// python returns Debian's interpreter when it imports mpi4py, or skips
// (fails under CI=true, where .ci/run installs python3-mpi4py).
func python(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import mpi4py").Run(); err != nil {
		why := "mpi4py is not installed for " + py + " (Debian package python3-mpi4py: apt-get install -y python3-mpi4py)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s", why)
		}
		t.Skip(why)
	}
	return py
}

// waits_pure.py is waits_pure.c in Python: the same designed waits, the
// same stamps printed, so its wait states and POP efficiencies must equal
// what the program's own clock saw as the C program's do
// (pureMismatches, three attempts on a loaded machine). And
// mpi4py_objects.py's pickled messages, object collectives, Cartesian and
// split communicators all match, without a warning.
func TestMPI4Py(t *testing.T) {
	h := setup(t)
	py := python(t)
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	t.Run("pure values", func(t *testing.T) {
		const iters = 4
		script := filepath.Join(h.root, testdata("waits_pure.py"))
		designed(t, func() []string {
			r, procs, pc := recordPureRun(t, h, mpirunN(2, py, script, strconv.Itoa(iters)))
			allMatched(t, r, 3*iters, 2*iters)
			for rank, p := range procs {
				if p.NumThreads() != 1 {
					t.Errorf("rank %d: %d threads, want the interpreter's only", rank, p.NumThreads())
				}
			}
			return pureMismatches(t, r, procs, pc, iters)
		})
	})
	t.Run("objects", func(t *testing.T) {
		const iters = 3
		dir, out := h.mustRecord(t, nil, mpirunN(3, py, filepath.Join(h.root, testdata("mpi4py_objects.py")), strconv.Itoa(iters))...)
		if n := strings.Count(out, " total "); n != 3 {
			t.Fatalf("%d of 3 ranks finished:\n%s", n, out)
		}
		procs := valid(t, dir)
		r := h.report(t, dir)
		noReportWarnings(t, r)
		// Every message the ranks recorded matched: count the sends.
		var sends, probes int64
		for _, p := range procs {
			sends += int64(sum(count(p, trace.MPISend, nil)))
			for sc := p.Scan(0, nil); sc.Next(); {
				if e := sc.Event(); e.Kind == trace.MPIEnter && p.String(e.Args[0]) == "MPI_Mprobe" {
					probes++
				}
			}
		}
		// per iteration and rank: send, isend, sendrecv, a probed send, the
		// Cartesian sendrecv; and mpi4py's own, which carry some object
		// collectives (comm.gather, an allreduce on the split
		// communicator) as messages on a communicator of its own.
		// comm.recv receives each pickled message with MPI_Mprobe +
		// MPI_Mrecv.
		if least := int64(5 * iters * 3); sends < least {
			t.Errorf("%d sends recorded, the program made at least %d", sends, least)
		}
		if probes < int64(2*iters*3) {
			t.Errorf("%d MPI_Mprobe calls recorded, want at least %d (comm.recv of pickled objects)", probes, 2*iters*3)
		}
		cs := r.ClockSync
		if cs == nil || cs.Messages != sends || cs.UnmatchedSends+cs.UnmatchedReceives+cs.UnmatchedCollectives != 0 {
			t.Errorf("clocksync %+v, want the %d messages matched and none unmatched", cs, sends)
		}
	})
}
