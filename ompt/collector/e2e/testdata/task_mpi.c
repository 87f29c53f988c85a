/*
 * MPI called from OpenMP worker threads and from inside tasks: 2 ranks × 2
 * threads, MPI_THREAD_MULTIPLE, the two ways hybrid codes overlap
 * communication with computation. Each iteration:
 *
 *   communication thread   in a parallel region thread 1 communicates while
 *                          thread 0 computes 1 ms: rank 1's thread 1 computes
 *                          D ms, then MPI_Send; rank 0's MPI_Recv waits
 *                          about D ms (late sender);
 *   tasks                  the single thread creates, chained by dependences,
 *                          a compute task (rank 0 1 ms, rank 1 D ms), a task
 *                          that exchanges its result (rank 1 MPI_Send, rank 0
 *                          MPI_Recv: a late sender of about D - 1 ms) and a
 *                          task that consumes it (1 ms), then a taskwait.
 *
 * It prints its own stamps of every MPI call (CLOCK_MONOTONIC, the
 * collector's clock) and the thread that made it after MPI_Finalize:
 *   call rank=R fn=MPI_Recv thread=T enter=NS exit=NS
 *
 * usage: task_mpi [ITERS [D_MS]]   (default 4 20)
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
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

static double spin(double ms)
{
	int64_t end = now() + (int64_t)(ms * 1e6);
	double x = 1;
	while (now() < end)
		x = x * 1.0000001 + 1e-9;
	return x;
}

enum { MAXCALLS = 512 };
static struct {
	int thread;
	int64_t enter, exit;
} calls[MAXCALLS];
static int ncalls;
static int me;

/* exchange sends a from rank 1 to rank 0 and stamps the call. The calls of
 * a rank never overlap: each runs after the one before it completed. */
static void exchange(double *a, int tag)
{
	int64_t t0 = now();
	if (me == 1)
		MPI_Send(a, 1, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD);
	else
		MPI_Recv(a, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	calls[ncalls].thread = omp_get_thread_num();
	calls[ncalls].enter = t0;
	calls[ncalls].exit = now();
	ncalls++;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 4;
	double d = argc > 2 ? atof(argv[2]) : 20;
	int provided, np;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 2 || provided < MPI_THREAD_MULTIPLE || 2 * iters > MAXCALLS) {
		fprintf(stderr, "task_mpi: run on 2 ranks with MPI_THREAD_MULTIPLE\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double a = 0, sum = 0;
	for (int it = 0; it < iters; it++) {
#pragma omp parallel num_threads(2) shared(a, sum)
		{
			if (omp_get_thread_num() == 1) {
				if (me == 1)
					a = spin(d);
				exchange(&a, it);
			} else {
				sum += spin(1);
			}
		}
	}
#pragma omp parallel num_threads(2)
#pragma omp single
	for (int it = 0; it < iters; it++) {
#pragma omp task depend(out : a) shared(a)
		a = spin(me == 1 ? d : 1);
#pragma omp task depend(inout : a) shared(a)
		exchange(&a, iters + it);
#pragma omp task depend(in : a) shared(a, sum)
		sum += spin(1) + a * 0;
#pragma omp taskwait
	}
	MPI_Finalize();
	for (int i = 0; i < ncalls; i++)
		printf("call rank=%d fn=%s thread=%d enter=%lld exit=%lld\n", me, me == 1 ? "MPI_Send" : "MPI_Recv",
		       calls[i].thread, (long long)calls[i].enter, (long long)calls[i].exit);
	return sum < 0;
}
