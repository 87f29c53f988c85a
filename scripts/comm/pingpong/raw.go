//go:build mpi

package main

/*
#cgo pkg-config: ompi-c
#cgo noescape raw_recv
#cgo nocallback raw_recv
#cgo nocallback raw_send
#include <mpi.h>

static void raw_send(void *b, int n, int dst) { MPI_Send(b, n, MPI_BYTE, dst, 0, MPI_COMM_WORLD); }
static void raw_recv(void *b, int n, int src, int *count) {
	MPI_Status st;
	MPI_Recv(b, n, MPI_BYTE, src, 0, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, count);
}
*/
import "C"

import (
	"unsafe"

	"github.com/ptrace-dev/ptrace/comm"
)

// rawRounds is rounds with MPI_Send/MPI_Recv called straight through cgo on
// one reused buffer: the floor for any Go binding, which tells the cost of
// crossing into C from the cost of the binding itself.
func rawRounds(c comm.Comm, buf []byte, n int) error {
	peer := C.int(1 - c.Rank())
	space := make([]byte, max(len(buf), 1))
	p := unsafe.Pointer(&space[0])
	size := C.int(len(buf))
	var count C.int
	for range n {
		if c.Rank() == 0 {
			C.raw_send(p, size, peer)
			C.raw_recv(p, size, peer, &count)
		} else {
			C.raw_recv(p, size, peer, &count)
			C.raw_send(p, count, peer)
		}
	}
	return nil
}
