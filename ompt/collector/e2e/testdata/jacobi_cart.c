/*
 * 2-D Jacobi iteration on a Cartesian process grid, pure MPI, the way such
 * codes are usually written: MPI_Dims_create + MPI_Cart_create (reordering
 * allowed), MPI_Cart_shift for the neighbours (MPI_PROC_NULL at the
 * non-periodic edges), an MPI_Sendrecv halo exchange per direction (rows
 * contiguous, columns as an MPI_Type_vector) and an MPI_Allreduce of the
 * residual every iteration.
 *
 * usage: jacobi_cart N ITERS   (global grid N x N)
 *
 * Each rank prints its place in the grid; rank 0 prints the number of
 * messages sent and of collective operations of the whole run:
 *   cart rank=W cart_rank=C coords=I,J
 *   messages=M collectives=K residual=R
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define U(i, j) u[(size_t)(i) * (ny + 2) + (j)]
#define V(i, j) v[(size_t)(i) * (ny + 2) + (j)]

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 256, iters = argc > 2 ? atoi(argv[2]) : 100;
	int size, world;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &world);
	int dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2], rank;
	MPI_Dims_create(size, 2, dims);
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
	MPI_Comm_rank(cart, &rank);
	MPI_Cart_coords(cart, rank, 2, coords);
	printf("cart rank=%d cart_rank=%d coords=%d,%d\n", world, rank, coords[0], coords[1]);
	fflush(stdout);
	int north, south, west, east;
	MPI_Cart_shift(cart, 0, 1, &north, &south);
	MPI_Cart_shift(cart, 1, 1, &west, &east);

	int nx = n / dims[0], ny = n / dims[1];
	double *u = calloc((size_t)(nx + 2) * (ny + 2), sizeof *u), *v = calloc((size_t)(nx + 2) * (ny + 2), sizeof *v);
	if (!u || !v)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (coords[0] == 0) /* the hot top edge of the global grid */
		for (int j = 0; j < ny + 2; j++)
			U(0, j) = V(0, j) = 1.0;
	MPI_Datatype column;
	MPI_Type_vector(nx, 1, ny + 2, MPI_DOUBLE, &column);
	MPI_Type_commit(&column);

	long messages = 0, collectives = 0;
	int sends = (north != MPI_PROC_NULL) + (south != MPI_PROC_NULL) + (west != MPI_PROC_NULL) + (east != MPI_PROC_NULL);
	double residual = 0;
	for (int it = 0; it < iters; it++) {
		MPI_Sendrecv(&U(1, 1), ny, MPI_DOUBLE, north, 0, &U(nx + 1, 1), ny, MPI_DOUBLE, south, 0, cart,
			     MPI_STATUS_IGNORE);
		MPI_Sendrecv(&U(nx, 1), ny, MPI_DOUBLE, south, 1, &U(0, 1), ny, MPI_DOUBLE, north, 1, cart,
			     MPI_STATUS_IGNORE);
		MPI_Sendrecv(&U(1, 1), 1, column, west, 2, &U(1, ny + 1), 1, column, east, 2, cart, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&U(1, ny), 1, column, east, 3, &U(1, 0), 1, column, west, 3, cart, MPI_STATUS_IGNORE);
		messages += sends;
		double local = 0;
		for (int i = 1; i <= nx; i++)
			for (int j = 1; j <= ny; j++) {
				V(i, j) = 0.25 * (U(i - 1, j) + U(i + 1, j) + U(i, j - 1) + U(i, j + 1));
				double d = V(i, j) - U(i, j);
				local += d * d;
			}
		double *w = u;
		u = v;
		v = w;
		MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
		collectives += rank == 0;
	}
	long mine[2] = { messages, collectives }, all[2] = { 0, 0 };
	MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, cart);
	if (rank == 0)
		printf("messages=%ld collectives=%ld residual=%g\n", all[0], all[1] + 1, residual);
	MPI_Type_free(&column);
	MPI_Comm_free(&cart);
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
