/*
 * Buffered sends in a ring, a buffer attached per iteration: each rank
 * attaches a buffer with MPI_Buffer_attach, MPI_Bsends a value to its right
 * neighbour, MPI_Recvs its left neighbour's, and detaches the buffer with
 * MPI_Buffer_detach, which returns once the buffered message has left.
 * Rank 0 computes LATE_US microseconds more before its send, so rank 1
 * waits in MPI_Recv.
 *
 * usage: bsend ITERS LATE_US; rank 0 prints
 *   iterations=I messages=M sum=S
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	long late = argc > 2 ? atol(argv[2]) : 0;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int bufsize = 0;
	MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &bufsize);
	bufsize += MPI_BSEND_OVERHEAD;
	char *buf = malloc(bufsize);
	double sum = 0;
	long messages = 0;
	for (int it = 0; it < iters; it++) {
		MPI_Buffer_attach(buf, bufsize);
		spin_us(100 + (rank == 0 ? late : 0));
		double out = rank + it, in;
		MPI_Bsend(&out, 1, MPI_DOUBLE, (rank + 1) % size, it, MPI_COMM_WORLD);
		MPI_Recv(&in, 1, MPI_DOUBLE, (rank + size - 1) % size, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		sum += in;
		messages++;
		void *b;
		int n;
		MPI_Buffer_detach(&b, &n);
	}
	double total = 0;
	long all = 0;
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&messages, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d messages=%ld sum=%g\n", iters, all, total);
	free(buf);
	MPI_Finalize();
	return 0;
}
