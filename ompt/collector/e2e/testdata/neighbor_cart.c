/*
 * Neighbourhood collectives on process topologies, the way stencil codes
 * exchange halos since MPI-3: per iteration
 *   - an MPI_Neighbor_alltoall on a periodic 2-D MPI_Cart_create grid
 *     (on 2×2 each dimension of size 2 names the one neighbour twice),
 *     before which grid rank LATE_A computes LATE_US microseconds more:
 *     its neighbours (not the process diagonal to it) wait for it; then
 *     an MPI_Barrier, so that the next phase starts together;
 *   - an MPI_Ineighbor_allgather on a non-periodic grid of the same shape
 *     (MPI_PROC_NULL past its edges: no message) completed by MPI_Wait,
 *     before which grid rank LATE_B computes LATE_US more: its neighbours
 *     wait for it in MPI_Wait; an MPI_Barrier;
 *   - an MPI_Neighbor_alltoallv on a distributed graph (the ring of all
 *     ranks in one direction: in-neighbour rank-1, out-neighbour rank+1)
 *     and an MPI_Neighbor_allgather on a graph (the ring both ways), an
 *     MPI_Ineighbor_alltoall on the periodic grid completed by MPI_Waitall.
 * Grid ranks are world ranks (no reordering).
 *
 * usage: neighbor_cart ITERS LATE_US; rank 0 prints
 *   messages=M collectives=C iterations=I late_a=A late_b=B
 * M: the messages the run's neighbourhood collectives exchanged (one per
 * out-neighbour that is a process), counted from the topologies.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

/* Out-neighbours of a Cartesian communicator that are processes. */
static int cart_out(MPI_Comm c)
{
	int nd, n = 0;
	MPI_Cartdim_get(c, &nd);
	for (int d = 0; d < nd; d++) {
		int s, t;
		MPI_Cart_shift(c, d, 1, &s, &t);
		n += (s != MPI_PROC_NULL) + (t != MPI_PROC_NULL);
	}
	return n;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	long late = argc > 2 ? atol(argv[2]) : 0;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const int late_a = 0, late_b = size - 1;
	int dims[2] = { 0, 0 }, periodic[2] = { 1, 1 }, open[2] = { 0, 0 };
	MPI_Dims_create(size, 2, dims);
	MPI_Comm torus, grid, dring, gring;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periodic, 0, &torus);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, 0, &grid);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
				       MPI_INFO_NULL, 0, &dring);
	int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
	if (!index || !edges)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r < size; r++) {
		index[r] = 2 * (r + 1);
		edges[2 * r] = (r + size - 1) % size;
		edges[2 * r + 1] = (r + 1) % size;
	}
	MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &gring);
	free(index);
	free(edges);

	double out[4], in[4], ring_in[2], sum = 0;
	int one = 1, zero = 0;
	long messages = 0;
	for (int it = 0; it < iters; it++) {
		for (int k = 0; k < 4; k++)
			out[k] = rank + it + k;
		spin_us(200 + (rank == late_a ? late : 0));
		MPI_Neighbor_alltoall(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, torus);
		sum += in[0] + in[3];
		messages += cart_out(torus);
		MPI_Barrier(MPI_COMM_WORLD);

		spin_us(200 + (rank == late_b ? late : 0));
		MPI_Request req;
		MPI_Ineighbor_allgather(&out[0], 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, grid, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		messages += cart_out(grid);
		MPI_Barrier(MPI_COMM_WORLD);

		MPI_Neighbor_alltoallv(out, &one, &zero, MPI_DOUBLE, ring_in, &one, &zero, MPI_DOUBLE, dring);
		MPI_Neighbor_allgather(&out[1], 1, MPI_DOUBLE, ring_in, 1, MPI_DOUBLE, gring);
		sum += ring_in[0];
		messages += 1 + 2;

		MPI_Request two[2];
		MPI_Ineighbor_alltoall(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, torus, &two[0]);
		MPI_Isend(&out[2], 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &two[1]);
		MPI_Recv(&ring_in[1], 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
		messages += cart_out(torus) + 1;
	}
	long total = 0;
	MPI_Reduce(&messages, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("messages=%ld collectives=%d iterations=%d late_a=%d late_b=%d sum=%g\n", total, 2 * iters + 1, iters,
		       late_a, late_b, sum);
	MPI_Comm_free(&torus);
	MPI_Comm_free(&grid);
	MPI_Comm_free(&dring);
	MPI_Comm_free(&gring);
	MPI_Finalize();
	return 0;
}
