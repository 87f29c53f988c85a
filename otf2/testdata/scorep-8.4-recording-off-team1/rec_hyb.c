/* A hybrid loop with Score-P's recording switched off for some iterations
 * (scorep --user). Each iteration: a parallel region of 2 threads whose
 * single thread creates 4 tasks (rank 0 2 ms each, rank 1 1 ms), thread 0
 * 3 ms and thread 1 1 ms of work before an explicit barrier; then serial
 * work (rank 1 5 ms, rank 0 1 ms), MPI_Allreduce, and a message from rank 1
 * (after 3 ms more) to rank 0.
 *
 * usage: rec_hyb ITERS OFF_FROM OFF_TO MODE [SCALE]   (SCALE multiplies the times)
 *   serial:   SCOREP_RECORDING_OFF() before iteration OFF_FROM, ON before OFF_TO,
 *             in the serial part
 *   parallel: the same calls by thread 0 inside the parallel region (Score-P
 *             refuses them: "Switching recording on or off in a parallel
 *             region is not allowed")
 *   par1:     OFF inside a parallel region of one thread (Score-P accepts
 *             it: a team of one is not "in parallel"), ON before OFF_TO in
 *             the serial part: the region's end falls into the gap
 *   par1on:   OFF in the serial part, ON inside a parallel region of one
 *             thread: the region's start falls into the gap
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <scorep/SCOREP_User.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double scale = 1;
static double spin(double ms)
{
	ms *= scale;
	double x = 0, end = now_ms() + ms;
	while (now_ms() < end)
		x += 1e-9;
	return x;
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 6;
	int from = argc > 2 ? atoi(argv[2]) : 2;
	int to = argc > 3 ? atoi(argv[3]) : 4;
	const char *mode = argc > 4 ? argv[4] : "serial";
	scale = argc > 5 ? atof(argv[5]) : 1;
	double acc = 0, buf;
	for (int i = 0; i < iters; i++) {
		if (!strcmp(mode, "par1") && i == from) {
#pragma omp parallel num_threads(1)
			{
				acc += spin(1);
				SCOREP_RECORDING_OFF();
				acc += spin(1);
			}
		}
		if (!strcmp(mode, "par1") && i == to)
			SCOREP_RECORDING_ON();
		if (!strcmp(mode, "par1on") && i == from)
			SCOREP_RECORDING_OFF();
		if (!strcmp(mode, "par1on") && i == to) {
#pragma omp parallel num_threads(1)
			{
				acc += spin(1);
				SCOREP_RECORDING_ON();
				acc += spin(1);
			}
		}
		if (!strcmp(mode, "serial")) {
			if (i == from) SCOREP_RECORDING_OFF();
			if (i == to) SCOREP_RECORDING_ON();
		}
#pragma omp parallel num_threads(2) reduction(+ : acc)
		{
			if (!strcmp(mode, "parallel") && omp_get_thread_num() == 0) {
				if (i == from) SCOREP_RECORDING_OFF();
				if (i == to) SCOREP_RECORDING_ON();
			}
#pragma omp single
			for (int k = 0; k < 4; k++) {
#pragma omp task shared(acc)
				{
					double x = spin(rank == 0 ? 2 : 1);
#pragma omp atomic
					acc += x;
				}
			}
			/* imbalanced work before the barrier */
			acc += spin(omp_get_thread_num() == 0 ? 3 : 1);
#pragma omp barrier
		}
		acc += spin(rank == 1 ? 5 : 1);
		MPI_Allreduce(&acc, &buf, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (rank == 0)
			MPI_Recv(&buf, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else {
			spin(3);
			MPI_Send(&acc, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("done %g\n", buf > 0 ? 1.0 : 0.0);
	MPI_Finalize();
	return 0;
}
