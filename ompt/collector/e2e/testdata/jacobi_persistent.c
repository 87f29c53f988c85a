/*
 * 2-D Jacobi iteration written the way many production stencil codes
 * exchange halos: persistent requests made once (MPI_Send_init /
 * MPI_Recv_init to the four neighbours of an MPI_Cart_create grid, columns
 * as an MPI_Type_vector), then per iteration MPI_Startall + MPI_Waitall,
 * an MPI_Sendrecv_replace shift of a counter around the ring of all ranks,
 * and an MPI_Allreduce of the residual.
 *
 * usage: jacobi_persistent N ITERS LATE_US
 *
 * Grid rank 0 computes LATE_US microseconds more before every exchange, so
 * its neighbours wait for its messages (Late Sender) and the critical path
 * runs through it. Each rank prints its place and its neighbours in the
 * grid (world ranks, -1 for none); rank 0 prints the number of messages
 * and collective operations of the run:
 *   cart rank=W cart_rank=C coords=I,J
 *   neighbours rank=W north=A south=B west=C east=D
 *   messages=M collectives=K residual=R ring=X
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

/* The world rank of cart rank r (-1 for MPI_PROC_NULL). */
static int world_of(MPI_Comm cart, int r)
{
	if (r == MPI_PROC_NULL)
		return -1;
	MPI_Group g, w;
	MPI_Comm_group(cart, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &w);
	int out;
	MPI_Group_translate_ranks(g, 1, &r, w, &out);
	MPI_Group_free(&g);
	MPI_Group_free(&w);
	return out;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 256, iters = argc > 2 ? atoi(argv[2]) : 100;
	long late = argc > 3 ? atol(argv[3]) : 0;
	int size, world;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &world);
	int dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2], rank;
	MPI_Dims_create(size, 2, dims);
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
	MPI_Comm_rank(cart, &rank);
	MPI_Cart_coords(cart, rank, 2, coords);
	int north, south, west, east;
	MPI_Cart_shift(cart, 0, 1, &north, &south);
	MPI_Cart_shift(cart, 1, 1, &west, &east);
	printf("cart rank=%d cart_rank=%d coords=%d,%d\n", world, rank, coords[0], coords[1]);
	printf("neighbours rank=%d north=%d south=%d west=%d east=%d\n", world, world_of(cart, north),
	       world_of(cart, south), world_of(cart, west), world_of(cart, east));
	fflush(stdout);

	int nx = n / dims[0], ny = n / dims[1];
	double *u = calloc((size_t)(nx + 2) * (ny + 2), sizeof *u), *v = calloc((size_t)(nx + 2) * (ny + 2), sizeof *v);
	if (!u || !v)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Datatype column;
	MPI_Type_vector(nx, 1, ny + 2, MPI_DOUBLE, &column);
	MPI_Type_commit(&column);

	/* Two sets of requests, one per buffer the iteration reads from (u and
	 * v swap roles): persistent requests are bound to their buffers. */
	MPI_Request req[2][8];
	double *bufs[2] = { u, v };
	for (int b = 0; b < 2; b++) {
		double *w = bufs[b];
#define W(i, j) w[(size_t)(i) * (ny + 2) + (j)]
		MPI_Send_init(&W(1, 1), ny, MPI_DOUBLE, north, 0, cart, &req[b][0]);
		MPI_Recv_init(&W(nx + 1, 1), ny, MPI_DOUBLE, south, 0, cart, &req[b][1]);
		MPI_Send_init(&W(nx, 1), ny, MPI_DOUBLE, south, 1, cart, &req[b][2]);
		MPI_Recv_init(&W(0, 1), ny, MPI_DOUBLE, north, 1, cart, &req[b][3]);
		MPI_Send_init(&W(1, 1), 1, column, west, 2, cart, &req[b][4]);
		MPI_Recv_init(&W(1, ny + 1), 1, column, east, 2, cart, &req[b][5]);
		MPI_Send_init(&W(1, ny), 1, column, east, 3, cart, &req[b][6]);
		MPI_Recv_init(&W(1, 0), 1, column, west, 3, cart, &req[b][7]);
#undef W
	}

	long messages = 0, collectives = 0;
	int sends = (north != MPI_PROC_NULL) + (south != MPI_PROC_NULL) + (west != MPI_PROC_NULL) + (east != MPI_PROC_NULL);
	int next = (world + 1) % size, prev = (world + size - 1) % size, ring = world;
	double residual = 0;
	for (int it = 0; it < iters; it++) {
		int b = it % 2;
		double *cur = bufs[b], *nxt = bufs[1 - b];
		if (rank == 0)
			spin_us(late);
		MPI_Startall(8, req[b]);
		MPI_Waitall(8, req[b], MPI_STATUSES_IGNORE);
		messages += sends;
		MPI_Sendrecv_replace(&ring, 1, MPI_INT, next, 4, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		messages++;
		double local = 0;
		for (int i = 1; i <= nx; i++)
			for (int j = 1; j <= ny; j++) {
				double x = 0.25 * (cur[(size_t)(i - 1) * (ny + 2) + j] + cur[(size_t)(i + 1) * (ny + 2) + j] +
						   cur[(size_t)i * (ny + 2) + j - 1] + cur[(size_t)i * (ny + 2) + j + 1]);
				double d = x - cur[(size_t)i * (ny + 2) + j];
				nxt[(size_t)i * (ny + 2) + j] = x;
				local += d * d;
			}
		MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
		collectives += rank == 0;
	}
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 8; k++)
			MPI_Request_free(&req[b][k]);
	long mine[2] = { messages, collectives }, all[2] = { 0, 0 };
	MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, cart);
	if (rank == 0)
		printf("messages=%ld collectives=%ld residual=%g ring=%d\n", all[0], all[1] + 1, residual, ring);
	MPI_Type_free(&column);
	MPI_Comm_free(&cart);
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
