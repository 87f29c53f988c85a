//go:build !mpi

package main

import (
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/trace"
)

func backends() string { return "inproc" }

// runRanks runs fn on virtual ranks in this process.
func runRanks(ranks int, dir string, fn func(c comm.Comm) error) error {
	return inproc.Run(virtualRanks(ranks, dir), fn)
}

// virtualRanks picks the inproc rank count: as asked, or one per core capped
// by the number of processes in the trace.
func virtualRanks(ranks int, dir string) int {
	if ranks > 0 {
		return ranks
	}
	n := 1
	if d, err := trace.OpenDir(dir); err == nil {
		n = d.NRanks()
	}
	return defaultRanks(n)
}
