//go:build mpi

package mpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/commtest"
)

// The tests below named TestWorker* run only inside mpirun: TestMPI and
// TestMPIFault re-execute this test binary under mpirun with workerEnv naming
// the worker test, and judge it by exit status and output.
const (
	workerEnv = "PTRACE_COMM_MPI_WORKER"
	pidDirEnv = "PTRACE_COMM_MPI_PIDDIR"
)

type mpiRun struct {
	stdout, stderr string
	err            error // from mpirun: non-nil when some rank failed
	elapsed        time.Duration
}

// runUnderMPI runs the worker test on np ranks.
func runUnderMPI(t *testing.T, np int, worker string, env ...string) mpiRun {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skipf("mpirun is not installed: %v", err)
	}
	if UnderLauncher() {
		t.Skip("already running under an MPI launcher: cannot start mpirun here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun,
		"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np),
		os.Args[0], "-test.run", "^"+worker+"$", "-test.count", "1", "-test.timeout", "90s")
	cmd.Env = append(append(os.Environ(), workerEnv+"="+worker), env...)
	// On timeout, kill mpirun and the ranks it started (its process group).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	r := mpiRun{stdout: stdout.String(), stderr: stderr.String(), err: err, elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %s timed out after %v\nstdout:\n%s\nstderr:\n%s", np, worker, r.elapsed, r.stdout, r.stderr)
	}
	return r
}

func isWorker(t *testing.T) {
	t.Helper()
	if os.Getenv(workerEnv) != t.Name() {
		t.Skip("runs only under mpirun, started by TestMPI or TestMPIFault")
	}
}

func passLine(rank, size int) string {
	return fmt.Sprintf("commtest-mpi: rank %d of %d passed", rank, size)
}

// TestMPI runs the conformance suite on 1, 2 and 4 MPI processes.
func TestMPI(t *testing.T) {
	for _, np := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			r := runUnderMPI(t, np, "TestWorkerConformance")
			if r.err != nil {
				t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
			}
			// A worker that skipped or never ran would also exit 0.
			for rank := range np {
				if !strings.Contains(r.stdout, passLine(rank, np)) {
					t.Errorf("no %q in the output:\n%s\nstderr:\n%s", passLine(rank, np), r.stdout, r.stderr)
				}
			}
		})
	}
}

func TestWorkerConformance(t *testing.T) {
	isWorker(t)
	c, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(); err == nil {
		c.Abort(errors.New("a second Start succeeded"))
	}
	if WorldRank() != c.Rank() || WorldSize() != c.Size() {
		c.Abort(fmt.Errorf("WorldRank/WorldSize = %d/%d, communicator says %d/%d", WorldRank(), WorldSize(), c.Rank(), c.Size()))
	}
	// One process is one rank: a failing case aborts the job with its
	// message, as the other ranks may be blocked waiting for this one.
	world := func(fn func(comm.Comm) error) error {
		if err := fn(c); err != nil {
			c.Abort(err)
		}
		return nil
	}
	commtest.Run(t, world)
	commtest.RunCases(t, world, commtest.LargeCases())

	// Again with calls cut to 1000 bytes, so the rounds that keep large
	// transfers under MPI's 2 GiB int limit run, with uneven pieces.
	c.(*Communicator).maxChunk = 1000
	t.Run("SmallChunks", func(t *testing.T) {
		var cases []commtest.Case
		for _, tc := range commtest.Cases() {
			if slices.Contains([]string{"Alltoallv", "AlltoallvEmpty", "AlltoallvLarge", "Gatherv", "Bcast", "P2PAcrossCollectives"}, tc.Name) {
				cases = append(cases, tc)
			}
		}
		if len(cases) != 6 {
			t.Fatalf("found %d of the 6 cases to rerun", len(cases))
		}
		commtest.RunCases(t, world, cases)
	})

	// mpirun started every rank on this machine: the node's sum is the
	// world's (a rank's own value, summed, is no count: 0+1+…+size-1).
	for _, v := range []struct{ mine, want int64 }{{1, int64(c.Size())}, {int64(c.Rank()), int64(c.Size() * (c.Size() - 1) / 2)}} {
		if got, err := c.(comm.Node).NodeSum(v.mine); err != nil || got != v.want {
			c.Abort(fmt.Errorf("NodeSum: %d (%v), want %d", got, err, v.want))
		}
	}

	rank, size := c.Rank(), c.Size()
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(); err == nil {
		t.Fatal("Start after Stop succeeded")
	}
	if !t.Failed() {
		fmt.Println(passLine(rank, size))
	}
}

// TestMPIFault checks that one rank's Abort ends the whole job quickly, with
// the failing rank's message on stderr.
func TestMPIFault(t *testing.T) {
	const np = 4
	dir := t.TempDir()
	r := runUnderMPI(t, np, "TestWorkerFault", pidDirEnv+"="+dir)
	if r.err == nil {
		t.Fatalf("mpirun exited 0 after a rank aborted\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	// A job left hanging would run into runUnderMPI's 100 s timeout; this
	// bound catches an abort that propagates only through launcher
	// time-outs. It includes the launcher's start and end, which took a
	// constant 10.7 s for a failing job in a fresh Debian root (0.9 s here).
	if r.elapsed > 30*time.Second {
		t.Errorf("the job took %v to end after the abort, want < 30s", r.elapsed)
	}
	if want := "ptrace: rank 1: injected fault on rank 1"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	// Every rank started, and none is left running.
	for rank := range np {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(rank)))
		if err != nil {
			t.Errorf("rank %d did not start: %v\nstderr:\n%s", rank, err, r.stderr)
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil {
			t.Fatal(err)
		}
		// mpirun may return while the launcher's kill of the other ranks
		// is still under way (seen in a fresh root: a rank in state R
		// right after the return): what must not happen is a rank left
		// running, so each gets a few seconds to go.
		state := procState(pid)
		for deadline := time.Now().Add(10 * time.Second); state != "" && time.Now().Before(deadline); state = procState(pid) {
			time.Sleep(50 * time.Millisecond)
		}
		if state != "" {
			t.Errorf("rank %d (pid %d) is still running 10 s after mpirun returned (state %s)", rank, pid, state)
		}
	}
	if strings.Contains(r.stdout, "survived") {
		t.Errorf("a rank went on after the abort:\n%s", r.stdout)
	}
}

// procState returns the state letter of a live process, or "" for one that
// has ended. A zombie has ended: where the orphaned ranks' new parent does not
// reap them (init in some containers), they stay zombies.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return ""
	}
	if st := string(b[i+2]); st != "Z" && st != "X" {
		return st
	}
	return ""
}

func TestWorkerFault(t *testing.T) {
	isWorker(t)
	c, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(os.Getenv(pidDirEnv), strconv.Itoa(c.Rank()))
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		c.Abort(err)
	}
	if err := c.Barrier(); err != nil { // all ranks are up
		c.Abort(err)
	}
	switch c.Rank() {
	case 1:
		c.Abort(errors.New("injected fault on rank 1"))
	case 0:
		_, err = c.Recv(1, 7) // never sent
	case 2:
		err = c.Barrier() // rank 1 never joins
	default:
		_, err = c.Alltoallv(make([][]byte, c.Size()))
	}
	fmt.Printf("rank %d survived the abort: %v\n", c.Rank(), err)
}
