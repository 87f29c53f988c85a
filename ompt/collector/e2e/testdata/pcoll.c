/*
 * MPI 4.0 persistent collectives. Initialised once, started every
 * iteration:
 *  - red, an MPI_Allreduce_init on MPI_COMM_WORLD: rank 0 computes LATE_US
 *    microseconds more (late_allreduce) before its MPI_Start, after a
 *    barrier and a handshake (so that every other rank starts at about the
 *    same time); then every rank overlaps OVERLAP_US of work with it and
 *    waits in MPI_Wait: the others wait there for rank 0's start, about
 *    LATE_US - OVERLAP_US each (wait at N×N);
 *  - a2a and bc, an MPI_Alltoall_init and an MPI_Bcast_init (root 0) on a
 *    duplicate of MPI_COMM_WORLD, started in opposite orders by even and
 *    odd ranks and completed by one MPI_Waitall: MPI 4.0 lets the members
 *    start different persistent collectives in different orders, so
 *    matching their starts in one order per communicator would pair one
 *    rank's broadcast with another's all-to-all.
 * The handshake: the late rank receives an empty message from every other
 * rank, which each sends once out of the barrier, before it computes (see
 * nbc_late.c). Needs 2 ranks or more.
 *
 * usage: pcoll ITERS LATE_US; rank 0 prints
 *   iterations=I messages=M collectives=C errors=E
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#define OVERLAP_US 100

static void __attribute__((noinline)) late_allreduce(long us) { spin_us(us); }

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 2000;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size < 2)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	double local = 0, global = 0, root = 0;
	int *out = malloc(sizeof(int) * (size_t)size), *in = malloc(sizeof(int) * (size_t)size);
	MPI_Request red, a2a, bc;
	MPI_Allreduce_init(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &red);
	MPI_Alltoall_init(out, 1, MPI_INT, in, 1, MPI_INT, dup, MPI_INFO_NULL, &a2a);
	MPI_Bcast_init(&root, 1, MPI_DOUBLE, 0, dup, MPI_INFO_NULL, &bc);
	int collectives = 0, messages = 0, errors = 0;
	for (int it = 0; it < iters; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank != 0) {
			MPI_Send(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
			messages++;
		} else {
			for (int r = 0; r < size - 1; r++)
				MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			late_allreduce(late);
		}
		local = rank + it;
		MPI_Start(&red);
		spin_us(OVERLAP_US);
		MPI_Wait(&red, MPI_STATUS_IGNORE);
		if (global != (double)size * (size - 1) / 2 + (double)size * it)
			errors++;

		for (int r = 0; r < size; r++)
			out[r] = rank * 1000 + r + it;
		if (rank == 0)
			root = it;
		MPI_Request both[2] = { a2a, bc };
		if (rank % 2 == 0) {
			MPI_Start(&both[0]);
			MPI_Start(&both[1]);
		} else {
			MPI_Start(&both[1]);
			MPI_Start(&both[0]);
		}
		MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
		for (int r = 0; r < size; r++)
			errors += in[r] != r * 1000 + rank + it;
		errors += root != it;
		collectives += 4; /* the barrier, the three starts */
	}
	MPI_Request_free(&red);
	MPI_Request_free(&a2a);
	MPI_Request_free(&bc);
	MPI_Comm_free(&dup);
	int tot[2] = { messages, errors }, sum[2];
	MPI_Reduce(tot, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d messages=%d collectives=%d errors=%d\n", iters, sum[0], collectives + 1, sum[1]);
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
