/*
 * Lock contention (passive target synchronisation): rank 0 holds a counter
 * in a window (MPI_Win_allocate on MPI_COMM_WORLD); ranks 1, 2 and 3 each
 * ITERS times compute OUT_US microseconds, lock rank 0's window
 * exclusively, increment the counter with MPI_Fetch_and_op, compute
 * HOLD_US holding the lock, and unlock. With HOLD_US larger than OUT_US / 3
 * the origins queue for the lock: each waits for the others' holds (Lock
 * Contention). In every fourth iteration ranks 2 and 3 read the counter
 * under a shared lock instead (MPI_Get), which they may hold together but
 * which waits for an exclusive holder and holds the next exclusive one
 * back. Rank 0 waits in MPI_Barrier meanwhile (MPICH's target progresses
 * the lock requests there).
 *
 * usage: rma_lock ITERS OUT_US HOLD_US; rank 0 prints
 *   iterations=I sum=S
 * (S: the counter, the exclusive epochs' increments: 3 ITERS − 2 ITERS/4).
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

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 8;
	long out_us = argc > 2 ? atol(argv[2]) : 1000;
	long hold_us = argc > 3 ? atol(argv[3]) : 2000;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "rma_lock: needs 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	long *counter;
	MPI_Win win;
	MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
	*counter = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank > 0) {
		for (int i = 0; i < iters; i++) {
			compute_us(out_us);
			if (rank >= 2 && i % 4 == 3) {
				long v;
				MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
				MPI_Get(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
				MPI_Win_unlock(0, win);
				continue;
			}
			long one = 1, old;
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
			MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
			MPI_Win_flush(0, win);
			compute_us(hold_us);
			MPI_Win_unlock(0, win);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		long sum = *counter;
		MPI_Win_unlock(0, win);
		printf("iterations=%d sum=%ld\n", iters, sum);
	}
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
