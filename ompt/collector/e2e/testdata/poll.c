/*
 * A receiver that polls. Per iteration rank 0 computes LATE_US
 * microseconds (late_send) and sends rank 1 a message; rank 1 posts an
 * MPI_Irecv, then tests it until it completes, and computes LATE_US/4
 * (after_recv) once it has. In the first half of the iterations its loop
 * only tests; in the second it computes GAP_US (between_polls) between
 * two tests. Rank 1 waits for rank 0 in its MPI_Test calls (a Late Sender
 * spread over the polling calls), and the critical path runs through
 * rank 0's late_send, crossing to rank 1 at each message.
 *
 * usage: poll ITERS LATE_US; rank 0 prints
 *   iterations=I messages=M collectives=C
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

#define GAP_US 20

static void __attribute__((noinline)) late_send(long us) { spin_us(us); }
static void __attribute__((noinline)) after_recv(long us) { spin_us(us); }
static void __attribute__((noinline)) between_polls(long us) { spin_us(us); }

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	long late = argc > 2 ? atol(argv[2]) : 2000;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size < 2)
		MPI_Abort(MPI_COMM_WORLD, 2);
	int messages = 0, v = 0;
	for (int it = 0; it < iters; it++) {
		if (rank == 0) {
			late_send(late);
			MPI_Send(&it, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
			messages++;
		} else if (rank == 1) {
			MPI_Request r;
			int done = 0;
			MPI_Irecv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &r);
			for (;;) {
				MPI_Test(&r, &done, MPI_STATUS_IGNORE);
				if (done)
					break;
				if (it >= iters / 2)
					between_polls(GAP_US);
			}
			after_recv(late / 4);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d messages=%d collectives=%d\n", iters, messages, 1);
	MPI_Finalize();
	return 0;
}
