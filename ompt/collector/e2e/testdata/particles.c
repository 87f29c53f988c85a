/*
 * A particle code's bookkeeping between its computation phases, the
 * collectives a PIC or SPH code calls to renumber and migrate particles:
 * each rank computes for a time that depends on its rank, the order of
 * the ranks flipping every iteration, then
 *   - MPI_Reduce_local: its two species' counts summed into one;
 *   - MPI_Exscan of its particle count: the offset of its particles in
 *     the global numbering, MPI_Scan of it: the end of its range;
 *   - MPI_Allreduce of the particles that left the domain, a buffer of
 *     `left` doubles, none (count 0) every other iteration, and
 *     MPI_Bcast of rank 0's migration list, empty (count 0) then too:
 *     MPI returns from a collective of count 0 at once, so these
 *     synchronize nobody then;
 *   - MPI_Allreduce of the total count (count 1), which waits for the
 *     last rank.
 * Rank 1 posts a receive for a stop message that rank 0 never sends and
 * cancels it at the end, as codes with an optional early exit do.
 *
 * usage: particles ITERS LATE_US; rank 0 prints
 *   iterations=I total=T cancelled=C
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#define TAG_STOP 99

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 200;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int stop = 0;
	MPI_Request stop_req = MPI_REQUEST_NULL;
	if (rank == 1)
		MPI_Irecv(&stop, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD, &stop_req);
	double out[8] = { 0 }, in[8], list[4] = { 0 };
	long species[2] = { 600 + rank, 400 }, count = 0, offset = 0, end = 0, total = 0;
	for (int it = 0; it < iters; it++) {
		/* even iterations: rank 0 computes longest; odd: the last rank */
		int slot = it % 2 == 0 ? size - 1 - rank : rank;
		spin_us(100 + slot * late);
		count = species[1];
		MPI_Reduce_local(&species[0], &count, 1, MPI_LONG, MPI_SUM);
		MPI_Exscan(&count, &offset, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		MPI_Scan(&count, &end, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		int left = it % 2 == 0 ? 8 : 0;
		for (int k = 0; k < left; k++)
			out[k] = rank + k;
		MPI_Allreduce(out, in, left, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Bcast(list, it % 2 == 0 ? 4 : 0, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Allreduce(&count, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		species[0] += it % 3 == rank % 3 ? 1 : 0;
	}
	int cancelled = 0;
	if (rank == 1) {
		MPI_Status st;
		MPI_Cancel(&stop_req);
		MPI_Wait(&stop_req, &st);
		MPI_Test_cancelled(&st, &cancelled);
	}
	MPI_Bcast(&cancelled, 1, MPI_INT, 1, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d total=%ld cancelled=%d\n", iters, total, cancelled);
	MPI_Finalize();
	return 0;
}
