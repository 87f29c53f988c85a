//go:build !mpi

package main

import (
	"fmt"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/comm/mpi"
)

func backends() string { return "inproc" }

// runRanks runs fn on virtual ranks in this process. Started by mpirun or
// srun as one of several processes, it refuses: each copy would analyse
// the whole trace and write the same outputs.
func runRanks(ranks int, dir string, fn func(c comm.Comm) error) error {
	if n := mpi.LauncherProcs(); n > 1 {
		return fmt.Errorf("started by an MPI launcher as one of %d processes, but this ptrace is built without MPI, "+
			"so every process would analyse the whole trace: run ptrace-mpi under the launcher (make ptrace-mpi), "+
			"or run ptrace without it (--ranks K uses K cores of this machine)", n)
	}
	return inproc.Run(virtualRanks(ranks, dir), fn)
}

// ranksInProcess is the number of analysis ranks this process runs.
func ranksInProcess(ranks int, dir string) int { return virtualRanks(ranks, dir) }
