/*
 * Nonblocking collectives that wait for a late start. Per iteration, each
 * after an MPI_Barrier (so that every rank starts it at about the same
 * time but the late one):
 *  - the last rank computes LATE_US microseconds more (late_allreduce)
 *    before MPI_Iallreduce; then every rank overlaps OVERLAP_US of work
 *    with it and waits in MPI_Wait: the others wait there for its start,
 *    about LATE_US - OVERLAP_US each (wait at N×N);
 *  - rank 1 computes LATE_US/2 more (late_bcast) before an MPI_Ibcast
 *    from root 1; the others start it at once and wait in MPI_Wait
 *    (late broadcast, about LATE_US/2 each);
 *  - rank 2 computes LATE_US/4 more (late_barrier) before an
 *    MPI_Ibarrier; rank 0 completes it by an MPI_Test loop, the others in
 *    MPI_Wait (wait at the barrier, about LATE_US/4 each; rank 0's
 *    completing MPI_Test begins after rank 2's start, its earlier ones
 *    are no wait).
 * Rank 0 is never the late one: Open MPI's MPI_Barrier releases the
 * others only when rank 0 next enters MPI (without a progress thread), so
 * a rank 0 computing after it would keep them in the barrier.
 * The blocking barriers and the nonblocking collectives share the
 * communicator's numbering. Needs 3 ranks or more.
 *
 * usage: nbc_late ITERS LATE_US; rank 0 prints
 *   iterations=I collectives=C sum=S
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#define OVERLAP_US 100

static void __attribute__((noinline)) late_allreduce(long us) { spin_us(us); }
static void __attribute__((noinline)) late_bcast(long us) { spin_us(us); }
static void __attribute__((noinline)) late_barrier(long us) { spin_us(us); }

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 2000;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size < 3)
		MPI_Abort(MPI_COMM_WORLD, 2);
	double local, global = 0, sum = 0, b = 0;
	int collectives = 0;
	for (int it = 0; it < iters; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == size - 1)
			late_allreduce(late);
		local = rank + it;
		MPI_Request red;
		MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &red);
		spin_us(OVERLAP_US);
		MPI_Wait(&red, MPI_STATUS_IGNORE);
		sum += global;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {
			late_bcast(late / 2);
			b = it;
		}
		MPI_Request bc;
		MPI_Ibcast(&b, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD, &bc);
		MPI_Wait(&bc, MPI_STATUS_IGNORE);
		sum += b;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 2)
			late_barrier(late / 4);
		MPI_Request bar;
		MPI_Ibarrier(MPI_COMM_WORLD, &bar);
		if (rank == 0) {
			int done = 0;
			while (!done)
				MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
		} else {
			MPI_Wait(&bar, MPI_STATUS_IGNORE);
		}
		collectives += 6;
	}
	if (rank == 0)
		printf("iterations=%d collectives=%d sum=%g\n", iters, collectives, sum);
	MPI_Finalize();
	return 0;
}
