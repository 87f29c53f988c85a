/*
 * Nonblocking collectives that wait for progress. Per iteration, after an
 * MPI_Barrier and a handshake (nbc_late.c's: rank 0 receives an empty
 * message from every other rank, which each sends once out of the
 * barrier), every rank starts an MPI_Iallreduce at about the same time
 * and overlaps OVERLAP_US of work with it; rank 0 then computes LATE_US
 * more (late_progress) before its MPI_Wait. Open MPI (without a progress
 * thread) advances the reduction only inside MPI calls, so the others
 * wait in MPI_Wait until rank 0 enters its own, about LATE_US each: a
 * wait for progress, no late start.
 *
 * usage: nbc_progress ITERS LATE_US; rank 0 prints
 *   iterations=I sum=S
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#define OVERLAP_US 100

static void __attribute__((noinline)) late_progress(long us) { spin_us(us); }

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 2000;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double local, global = 0, sum = 0;
	for (int it = 0; it < iters; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank != 0)
			MPI_Send(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
		else
			for (int r = 0; r < size - 1; r++)
				MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		local = rank + it;
		MPI_Request red;
		MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &red);
		spin_us(OVERLAP_US);
		if (rank == 0)
			late_progress(late);
		MPI_Wait(&red, MPI_STATUS_IGNORE);
		sum += global;
	}
	double total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d sum=%g\n", iters, total);
	MPI_Finalize();
	return 0;
}
