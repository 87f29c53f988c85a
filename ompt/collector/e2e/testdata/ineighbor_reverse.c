/*
 * Two nonblocking neighbourhood collectives on one communicator completed
 * in reverse order. A periodic 1-D MPI_Cart_create ring of 4 ranks, ITERS
 * times: MPI_Ineighbor_alltoall (request a), then rank LATE computes
 * LATE_US microseconds (the others none), MPI_Ineighbor_alltoall (request
 * b); each rank waits for b first, then for a. MPI matches each call's
 * messages with the same call's on the other ranks: LATE's neighbours wait
 * for its second call in their MPI_Wait of b (Late Sender), and their
 * MPI_Wait of a waits for nobody. Each call carries the call's number, so
 * the program checks MPI's pairing: errors counts values from another call.
 *
 * usage: ineighbor_reverse ITERS LATE_US; rank 0 prints
 *   messages=M collectives=C iterations=I errors=E
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 2000;
	int np, me;
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	const int late_rank = 1;
	int dims[1] = { np }, per[1] = { 1 };
	MPI_Comm ring;
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring);
	long messages = 0, errors = 0;
	for (int i = 0; i < iters; i++) {
		int out_a[2], in_a[2] = { -1, -1 }, out_b[2], in_b[2] = { -1, -1 };
		MPI_Request a, b;
		out_a[0] = out_a[1] = 2 * i;
		out_b[0] = out_b[1] = 2 * i + 1;
		MPI_Ineighbor_alltoall(out_a, 1, MPI_INT, in_a, 1, MPI_INT, ring, &a);
		if (me == late_rank)
			spin_us(late);
		MPI_Ineighbor_alltoall(out_b, 1, MPI_INT, in_b, 1, MPI_INT, ring, &b);
		MPI_Wait(&b, MPI_STATUS_IGNORE);
		MPI_Wait(&a, MPI_STATUS_IGNORE);
		errors += (in_a[0] != 2 * i) + (in_a[1] != 2 * i) + (in_b[0] != 2 * i + 1) + (in_b[1] != 2 * i + 1);
		messages += 2 * 2;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	long sum[2] = { messages, errors }, total[2];
	MPI_Reduce(sum, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("messages=%ld collectives=%d iterations=%d errors=%ld\n", total[0], iters + 1, iters, total[1]);
	MPI_Comm_free(&ring);
	MPI_Finalize();
	return 0;
}
