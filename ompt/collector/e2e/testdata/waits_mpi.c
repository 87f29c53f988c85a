/* Two MPI ranks with two deliberate wait states, for the wait-state
 * analysis (waits_test.go):
 *  - a late sender: rank 1 runs slow_compute (SLOW_MS) before MPI_Send,
 *    rank 0 only FAST_MS before its MPI_Recv, which waits the difference;
 *  - an imbalanced allreduce: rank 0 runs imbalanced_compute (SLOW_MS),
 *    rank 1 FAST_MS, so rank 1 waits in MPI_Allreduce (wait at N×N).
 * Compute is a busy loop on the wall clock, so its duration holds on a
 * loaded machine. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERS 8
#define SLOW_MS 20
#define FAST_MS 2

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Busy for ms of wall time on the calling thread. Spinning on one thread
 * per rank (not in a parallel region, whose threads would oversubscribe a
 * small machine and start late) keeps the imbalance what the constants
 * say. */
static double spin(double ms)
{
	double x = 0, end = now_ms() + ms;
	while (now_ms() < end)
		x += 1e-9;
	return x;
}

/* Each compute phase is a parallel region of one thread, so the trace
 * names the code (the region's location, in the function) that delayed the
 * other rank. */
__attribute__((noinline)) static double slow_compute(void)
{
	double x = 0;
#pragma omp parallel num_threads(1) reduction(+ : x)
	x += spin(SLOW_MS);
	return x;
}

__attribute__((noinline)) static double imbalanced_compute(void)
{
	double x = 0;
#pragma omp parallel num_threads(1) reduction(+ : x)
	x += spin(SLOW_MS);
	return x;
}

__attribute__((noinline)) static double fast_compute(void)
{
	double x = 0;
#pragma omp parallel num_threads(1) reduction(+ : x)
	x += spin(FAST_MS);
	return x;
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double acc = 0, buf = 0;
#pragma omp parallel reduction(+ : acc)
	acc += 1;
	for (int i = 0; i < ITERS; i++) {
		if (rank == 1) {
			acc += slow_compute();
			MPI_Send(&acc, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
		} else {
			acc += fast_compute();
			MPI_Recv(&buf, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		acc += rank == 0 ? imbalanced_compute() : fast_compute();
		MPI_Allreduce(&acc, &buf, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("done %g\n", buf > 0 ? 1.0 : 0.0);
	MPI_Finalize();
	return 0;
}
