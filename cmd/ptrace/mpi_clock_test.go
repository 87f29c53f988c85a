//go:build mpi

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/comm/mpi"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestMPIClockSyncMatchesInproc builds ptrace-mpi, analyses skewed traces
// under mpirun with 1, 2 and 4 ranks, and requires the clocksync section of
// the JSON report to equal the one the inproc backend produces.
func TestMPIClockSyncMatchesInproc(t *testing.T) {
	bin := buildMPI(t)
	for _, cfg := range []gen.Config{
		{Workload: "halo", Ranks: 6, Threads: 2, Iterations: 12, Jitter: 0.2, LatencyNS: 2000, SkewNS: 1_000_000, DriftPPM: 500},
		{Workload: "stencil", Ranks: 5, Threads: 2, Width: 20, Steps: 10, LatencyNS: 100, SkewNS: 500_000, DriftPPM: 1000},
	} {
		t.Run(cfg.Workload, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trace")
			if _, err := gen.Generate(dir, cfg); err != nil {
				t.Fatal(err)
			}
			// Without the measurements of two processes (aligned starts
			// leave their drift), the CLC has violations to repair.
			for _, r := range []int{1, 3} {
				stripClock(t, dir, r)
			}
			var want *report.Report
			err := inproc.Run(3, func(c comm.Comm) error {
				r, err := driver.Run(c, driver.Options{Dir: dir})
				if c.Rank() == 0 {
					want = r
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if want.ClockSync.ViolationsInterpolated == 0 || want.ClockSync.ViolationsAfter != 0 {
				t.Fatalf("inproc: %+v", want.ClockSync)
			}
			wantJSON, _ := json.Marshal(want.ClockSync)
			for _, np := range []int{1, 2, 4} {
				out := filepath.Join(t.TempDir(), "report.json")
				if msg, err := runMPI(t, bin, np, "analyze", "-q", "--json", out, dir); err != nil {
					t.Fatalf("mpirun -np %d: %v\n%s", np, err, msg)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				var got report.Report
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
				gotJSON, _ := json.Marshal(got.ClockSync)
				if !bytes.Equal(gotJSON, wantJSON) {
					t.Fatalf("mpirun -np %d: clocksync section\n%s\ninproc:\n%s", np, gotJSON, wantJSON)
				}
			}
		})
	}
}

// TestMPICyclicTraceFails: under mpirun a corrupt happened-before relation
// (each process receives before sending to the other) ends every rank with
// the cycle error instead of hanging.
func TestMPICyclicTraceFails(t *testing.T) {
	bin := buildMPI(t)
	dir := t.TempDir()
	world := []trace.Communicator{{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1}}}
	for r := 0; r < 2; r++ {
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: 2, ClockUnit: "ns"})
		if err != nil {
			t.Fatal(err)
		}
		w.AddComm(world[0])
		w.SetThread(trace.Thread{Index: 0, Type: trace.ThreadInitial})
		peer := int64(1 - r)
		w.E(0, trace.ThreadBegin, 10, 1)
		w.E(0, trace.MPIRecv, 20, peer, 5, 0, 8, 0)
		w.E(0, trace.MPISend, 30, peer, 5, 0, 8, 0)
		w.E(0, trace.ThreadEnd, 40)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, np := range []int{1, 2} {
		out, err := runMPI(t, bin, np, "analyze", "-q", dir)
		if err == nil || !strings.Contains(out, "happened-before cycle") {
			t.Fatalf("mpirun -np %d: %v\n%s", np, err, out)
		}
	}
}

// buildMPI returns the ptrace-mpi binary built once for all MPI tests.
func buildMPI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds ptrace-mpi and runs mpirun")
	}
	if mpi.UnderLauncher() {
		t.Skip("already under an MPI launcher")
	}
	return ptraceMPI(t)
}

// runMPI runs bin with args on np ranks under mpirun (killed after two
// minutes) and returns its combined output.
func runMPI(t *testing.T, bin string, np int, args ...string) (string, error) {
	t.Helper()
	mpirun, _ := exec.LookPath("mpirun")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, append([]string{"--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(np), bin}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %v: timed out (hang?)\n%s", np, args, out.String())
	}
	return out.String(), err
}

// stripClock rewrites rank's process file without its clock offsets, by
// loading it and writing it again.
func stripClock(t *testing.T, dir string, rank int) {
	t.Helper()
	if err := rewriteWithoutOffsets(filepath.Join(dir, trace.FileName(rank))); err != nil {
		t.Fatal(err)
	}
}

// rewriteWithoutOffsets loads a process file and writes it back without
// clock offset measurements.
func rewriteWithoutOffsets(path string) error {
	rows, err := trace.ReadRows(path)
	if err != nil {
		return err
	}
	rows.Tables.ClockOffsets = nil
	return rows.WriteFile(path, 0)
}
