//go:build !mpi

package mpi

import "github.com/ptrace-dev/ptrace/comm"

// Start returns ErrNotBuilt: this binary has no MPI.
func Start() (comm.Comm, error) { return nil, ErrNotBuilt }

// Stop does nothing: this binary has no MPI.
func Stop() error { return nil }
