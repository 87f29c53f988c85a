//go:build !mpi

package main

import (
	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
)

func backends() string { return "inproc" }

// runRanks runs fn on virtual ranks in this process.
func runRanks(ranks int, dir string, fn func(c comm.Comm) error) error {
	return inproc.Run(virtualRanks(ranks, dir), fn)
}

// ranksInProcess is the number of analysis ranks this process runs.
func ranksInProcess(ranks int, dir string) int { return virtualRanks(ranks, dir) }
