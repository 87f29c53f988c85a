//go:build mpi

package main

import (
	"fmt"
	"os"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/comm/mpi"
	"github.com/ptrace-dev/ptrace/driver"
)

func backends() string { return "inproc, mpi" }

// runRanks runs fn over MPI when started by a launcher (mpirun, srun), else
// on virtual ranks like the pure-Go build.
func runRanks(ranks int, dir string, fn func(c comm.Comm) error) error {
	if !mpi.UnderLauncher() {
		return inproc.Run(virtualRanks(ranks, dir), fn)
	}
	c, err := mpi.Start()
	if err != nil {
		return fmt.Errorf("MPI: %w", err)
	}
	err = fn(c)
	if err != nil {
		if !driver.IsAgreed(err) {
			c.Abort(err) // some rank may wait in a collective: end the job
		}
		// Every rank knows: rank 0 reports, and nobody exits before it
		// has (mpirun kills the job at the first non-zero exit).
		// The others say why they stop too: a rank that exits 1 in
		// silence looks like a crash of its own in a job's log.
		if c.Rank() == 0 {
			fmt.Fprintln(os.Stderr, "ptrace:", unwrapAbort(err))
		} else {
			fmt.Fprintln(os.Stderr, stopLine(c.Rank(), err))
		}
		c.Barrier()
		mpi.Stop()
		os.Exit(1)
	}
	mpi.Stop()
	if c.Rank() != 0 {
		os.Exit(0)
	}
	return nil
}

// ranksInProcess is the number of analysis ranks this process runs: one
// under a launcher, the virtual ranks otherwise.
func ranksInProcess(ranks int, dir string) int {
	if mpi.UnderLauncher() {
		return 1
	}
	return virtualRanks(ranks, dir)
}
