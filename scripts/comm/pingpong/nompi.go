//go:build !mpi

// Command pingpong needs MPI: build it with -tags mpi (see pingpong.sh).
package main

import (
	"fmt"
	"os"

	"github.com/ptrace-dev/ptrace/comm/mpi"
)

func main() {
	fmt.Fprintln(os.Stderr, "pingpong:", mpi.ErrNotBuilt)
	os.Exit(2)
}
