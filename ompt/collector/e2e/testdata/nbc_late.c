/*
 * Nonblocking collectives that wait for a late start. Per iteration, each
 * after an MPI_Barrier and a handshake (so that every rank starts it at
 * about the same time but the late one):
 *  - rank 0 computes LATE_US microseconds more (late_allreduce) before
 *    MPI_Iallreduce; then every rank overlaps OVERLAP_US of work with it
 *    and waits in MPI_Wait: the others wait there for rank 0's start,
 *    about LATE_US - OVERLAP_US each (wait at N×N);
 *  - rank 1 computes LATE_US/2 more (late_bcast) before an MPI_Ibcast
 *    from root 1; the others start it at once and wait in MPI_Wait
 *    (late broadcast, about LATE_US/2 each);
 *  - rank 2 computes LATE_US/4 more (late_barrier) before an
 *    MPI_Ibarrier; the last rank completes it by an MPI_Test loop, the
 *    others in MPI_Wait (wait at the barrier, about LATE_US/4 each; the
 *    testing rank's completing MPI_Test begins after rank 2's start, its
 *    earlier ones are no wait).
 * The handshake: the late rank receives an empty message from every other
 * rank, which each sends once out of the barrier, before it computes.
 * Open MPI (without a progress thread) may return from MPI_Barrier on the
 * last rank to enter it before that rank has released the others, which
 * it does at its next MPI call: a late rank computing right after the
 * barrier would keep the others in it, and their waits would be in the
 * barrier instead.
 * The blocking barriers and the nonblocking collectives share the
 * communicator's numbering. Needs 3 ranks or more.
 *
 * usage: nbc_late ITERS LATE_US; rank 0 prints
 *   iterations=I messages=M collectives=C sum=S
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

/* The barrier and the handshake before a phase whose late rank is late;
 * returns the messages sent. */
static int together(int late, int rank, int size)
{
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank != late) {
		MPI_Send(NULL, 0, MPI_BYTE, late, 7, MPI_COMM_WORLD);
		return 1;
	}
	for (int r = 0; r < size - 1; r++)
		MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return 0;
}

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
	int collectives = 0, messages = 0;
	for (int it = 0; it < iters; it++) {
		messages += together(0, rank, size);
		if (rank == 0)
			late_allreduce(late);
		local = rank + it;
		MPI_Request red;
		MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &red);
		spin_us(OVERLAP_US);
		MPI_Wait(&red, MPI_STATUS_IGNORE);
		sum += global;

		messages += together(1, rank, size);
		if (rank == 1) {
			late_bcast(late / 2);
			b = it;
		}
		MPI_Request bc;
		MPI_Ibcast(&b, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD, &bc);
		MPI_Wait(&bc, MPI_STATUS_IGNORE);
		sum += b;

		messages += together(2, rank, size);
		if (rank == 2)
			late_barrier(late / 4);
		MPI_Request bar;
		MPI_Ibarrier(MPI_COMM_WORLD, &bar);
		if (rank == size - 1) {
			int done = 0;
			while (!done)
				MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
		} else {
			MPI_Wait(&bar, MPI_STATUS_IGNORE);
		}
		collectives += 6;
	}
	int tot = 0;
	MPI_Reduce(&messages, &tot, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d messages=%d collectives=%d sum=%g\n", iters, tot, collectives + 1, sum);
	MPI_Finalize();
	return 0;
}
