/*
 * Pure MPI (no OpenMP), 2 ranks, with designed waits: each iteration runs
 *
 *   late sender     rank 1 computes D ms, then MPI_Send (8 B) to rank 0,
 *                   which is in MPI_Recv from the start: rank 0 waits D;
 *   late receiver   rank 0 MPI_Send of 4 MiB (above every eager limit: the
 *   (rendezvous)    send cannot complete before the receive is posted) to
 *                   rank 1, which computes D ms before MPI_Recv: rank 0 waits D;
 *   late receiver   the same with an 8-byte MPI_Ssend;
 *   (synchronous)
 *   wait at N×N     rank 0 computes D + B ms, rank 1 B ms, then MPI_Allreduce:
 *                   rank 1 waits D;
 *   wait at barrier rank 0 computes B ms, rank 1 D + B ms, then MPI_Barrier:
 *                   rank 0 waits D.
 *
 * usage: waits_pure [ITERS [D_MS [B_MS]]]   (default 4 20 10)
 *
 * Computing is spinning on CLOCK_MONOTONIC. The program records its own
 * timestamps (CLOCK_MONOTONIC, the collector's clock) around every MPI call
 * and prints them after MPI_Finalize, so that printing is not part of the
 * run:
 *   window rank=R init_exit=NS finalize_enter=NS
 *   call rank=R fn=MPI_Recv enter=NS exit=NS
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void compute(double ms)
{
	int64_t end = now() + (int64_t)(ms * 1e6);
	while (now() < end)
		;
}

#define MAXCALLS 256
static struct call {
	const char *fn;
	int64_t enter, exit;
} calls[MAXCALLS];
static int ncalls;

/* Runs an MPI call between two of the program's own timestamps. */
#define TIMED(fn, args)                                                         \
	do {                                                                    \
		int64_t t0_ = now();                                            \
		fn args;                                                        \
		int64_t t1_ = now();                                            \
		if (ncalls < MAXCALLS)                                          \
			calls[ncalls++] = (struct call){ #fn, t0_, t1_ };       \
	} while (0)

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 4;
	double d = argc > 2 ? atof(argv[2]) : 20, b = argc > 3 ? atof(argv[3]) : 10;
	enum { BIG = 4 << 20 };
	char *big = calloc(BIG, 1);
	MPI_Init(&argc, &argv);
	int64_t init_exit = now();
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 2 || !big) {
		fprintf(stderr, "waits_pure: run on 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double x = 1, y = 0;
	for (int it = 0; it < iters; it++) {
		/* late sender */
		if (me == 1) {
			compute(d);
			TIMED(MPI_Send, (&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD));
		} else {
			TIMED(MPI_Recv, (&y, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		}
		/* late receiver: a rendezvous send */
		if (me == 0) {
			TIMED(MPI_Send, (big, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
		} else {
			compute(d);
			TIMED(MPI_Recv, (big, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		}
		/* late receiver: a synchronous send */
		if (me == 0) {
			TIMED(MPI_Ssend, (&x, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD));
		} else {
			compute(d);
			TIMED(MPI_Recv, (&y, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		}
		/* wait at N×N: rank 0 computes longer */
		compute(me == 0 ? d + b : b);
		TIMED(MPI_Allreduce, (&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		/* wait at barrier: rank 1 computes longer */
		compute(me == 1 ? d + b : b);
		TIMED(MPI_Barrier, (MPI_COMM_WORLD));
	}
	int64_t finalize_enter = now();
	MPI_Finalize();
	printf("window rank=%d init_exit=%lld finalize_enter=%lld\n", me, (long long)init_exit, (long long)finalize_enter);
	for (int k = 0; k < ncalls; k++)
		printf("call rank=%d fn=%s enter=%lld exit=%lld\n", me, calls[k].fn, (long long)calls[k].enter,
		       (long long)calls[k].exit);
	free(big);
	return 0;
}
