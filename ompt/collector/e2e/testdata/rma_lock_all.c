/*
 * Lock contention with MPI_Win_lock_all (a shared lock on every member of
 * the window) and MPI_MODE_NOCHECK (no lock at all). Every rank exposes a
 * counter in a window (MPI_Win_allocate on MPI_COMM_WORLD); each of ITERS
 * iterations has two phases, between barriers:
 *
 *   A. rank 3 holds MPI_Win_lock_all for HOLD_US (reading every counter
 *      at its end); rank 1, OUT_US later, locks rank 2's window
 *      exclusively and increments its counter: its exclusive lock waits
 *      for rank 3's lock_all to be released;
 *   B. rank 1 holds rank 2's exclusive lock for HOLD_US, incrementing its
 *      counter; rank 3, OUT_US later, takes MPI_Win_lock_all and reads
 *      rank 2's counter: it waits for rank 1's exclusive lock. Meanwhile
 *      rank 0 reads rank 2's counter under a shared lock with
 *      MPI_MODE_NOCHECK, OUT_US / 2 into the phase: the assertion is
 *      untrue on purpose (rank 1 holds a conflicting lock), which MPI
 *      leaves the implementation free not to check; Open MPI and MPICH
 *      take no lock for such an epoch, so it neither waits nor holds
 *      anyone back.
 *
 * usage: rma_lock_all ITERS OUT_US HOLD_US; rank 2 prints
 *   iterations=I sum=S
 * (S: its counter, the exclusive epochs' increments: 2 ITERS).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The computation sleeps: four ranks on a loaded machine of two cores
 * keep the timing the program asks for. */
static void compute_us(long us)
{
	struct timespec d = { us / 1000000, us % 1000000 * 1000 };
	while (nanosleep(&d, &d) != 0)
		;
}

static void increment(int target, MPI_Win win)
{
	long one = 1, old;
	MPI_Fetch_and_op(&one, &old, MPI_LONG, target, 0, MPI_SUM, win);
	MPI_Win_flush(target, win);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 8;
	long out_us = argc > 2 ? atol(argv[2]) : 1000;
	long hold_us = argc > 3 ? atol(argv[3]) : 4000;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "rma_lock_all: needs 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	long *counter;
	MPI_Win win;
	MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
	*counter = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < iters; i++) {
		/* A: an exclusive lock waits for a lock_all holder. */
		if (rank == 3) {
			long v[4];
			MPI_Win_lock_all(0, win);
			compute_us(hold_us);
			for (int r = 0; r < 4; r++)
				MPI_Get(&v[r], 1, MPI_LONG, r, 0, 1, MPI_LONG, win);
			MPI_Win_unlock_all(win);
		} else if (rank == 1) {
			compute_us(out_us);
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
			increment(2, win);
			MPI_Win_unlock(2, win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* B: a lock_all waits for an exclusive holder; a NOCHECK epoch
		 * beside them. */
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
			increment(2, win);
			compute_us(hold_us);
			MPI_Win_unlock(2, win);
		} else if (rank == 3) {
			long v;
			compute_us(out_us);
			MPI_Win_lock_all(0, win);
			MPI_Get(&v, 1, MPI_LONG, 2, 0, 1, MPI_LONG, win);
			MPI_Win_unlock_all(win);
		} else if (rank == 0) {
			long v;
			compute_us(out_us / 2);
			MPI_Win_lock(MPI_LOCK_SHARED, 2, MPI_MODE_NOCHECK, win);
			MPI_Get(&v, 1, MPI_LONG, 2, 0, 1, MPI_LONG, win);
			MPI_Win_unlock(2, win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 2) {
		MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
		long sum = *counter;
		MPI_Win_unlock(2, win);
		printf("iterations=%d sum=%ld\n", iters, sum);
	}
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
