/*
 * Polled requests that end without a completion (2 ranks). Rank 0 starts
 * an MPI_Issend of tag 5, tests it once (rank 1 has not posted its
 * receive: not complete) and frees it (MPI_Request_free): the request
 * completes unobserved. Rank 1 posts an MPI_Irecv of tag 6 that no one
 * sends, tests it once, cancels it and waits for it; then it receives
 * the tag-5 message with MPI_Recv. A barrier ends.
 *
 * prints (rank 0) messages=1 collectives=1
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int rank, size, flag, x = 1, y = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Request q;
	if (rank == 0) {
		MPI_Issend(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &q);
		MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
		if (!flag)
			MPI_Request_free(&q);
		pause_us(20000);
	} else {
		MPI_Irecv(&y, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &q);
		MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
		MPI_Cancel(&q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		pause_us(10000);
		MPI_Recv(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (y != 1)
			MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("messages=1 collectives=1\n");
	MPI_Finalize();
	return 0;
}
