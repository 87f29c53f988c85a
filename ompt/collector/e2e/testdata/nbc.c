/*
 * Nonblocking and neighbourhood collectives, the way solvers overlap a
 * reduction with computation and exchange halos on a process topology:
 * per iteration an MPI_Iallreduce started before the computation and
 * waited for after it, an MPI_Neighbor_alltoall on a periodic 2-D
 * MPI_Cart_create grid, and an MPI_Ibarrier tested to completion; grid
 * rank 0 computes LATE_US microseconds more before each exchange, so its
 * neighbours wait inside MPI_Neighbor_alltoall.
 *
 * usage: nbc ITERS LATE_US; rank 0 prints
 *   iterations=I sum=S
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
	int dims[2] = { 0, 0 }, periods[2] = { 1, 1 };
	MPI_Dims_create(size, 2, dims);
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Comm_rank(cart, &rank);
	double halo_out[4], halo_in[4], local, global = 0, sum = 0;
	for (int it = 0; it < iters; it++) {
		local = rank + it;
		MPI_Request red;
		MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, cart, &red);
		spin_us(200 + (rank == 0 ? late : 0));
		MPI_Wait(&red, MPI_STATUS_IGNORE);
		for (int k = 0; k < 4; k++)
			halo_out[k] = global + k;
		MPI_Neighbor_alltoall(halo_out, 1, MPI_DOUBLE, halo_in, 1, MPI_DOUBLE, cart);
		sum += halo_in[0];
		MPI_Request bar;
		int done = 0;
		MPI_Ibarrier(cart, &bar);
		while (!done)
			MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
	}
	double total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
	if (rank == 0)
		printf("iterations=%d sum=%g\n", iters, total);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}
