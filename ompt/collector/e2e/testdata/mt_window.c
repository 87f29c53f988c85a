/*
 * Threads that each stream windows of messages to their peer, as
 * multithreaded communication layers and IMB-MT's BiBandMT do:
 * MPI_THREAD_MULTIPLE, each OpenMP thread on its own duplicate of
 * MPI_COMM_WORLD, ranks paired (0-1, 2-3, …); per iteration a thread posts
 * a window of MPI_Irecv from its peer, sends a window with MPI_Isend, waits
 * for all of them in one MPI_Waitall, and the odd rank acknowledges the
 * window with a message on the same channel. While one thread's
 * MPI_Waitall returns, MPI gives the requests it completed to the other
 * threads' next MPI_Isend and MPI_Irecv.
 *
 * usage: mt_window ITERS WINDOW THREADS (an even number of ranks); rank 0
 * prints
 *   threads=T messages=M
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "mt_window: MPI_THREAD_MULTIPLE not provided\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	int window = argc > 2 ? atoi(argv[2]) : 16;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int nthreads = argc > 3 ? atoi(argv[3]) : omp_get_max_threads();
	MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (size_t)nthreads);
	for (int t = 0; t < nthreads; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	int peer = rank ^ 1;
#pragma omp parallel num_threads(nthreads)
	{
		MPI_Comm comm = comms[omp_get_thread_num()];
		MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)window);
		double *in = malloc(sizeof(double) * (size_t)window), out = rank;
		char ack = 0;
		for (int it = 0; it < iters; it++) {
			for (int w = 0; w < window; w++)
				MPI_Irecv(&in[w], 1, MPI_DOUBLE, peer, 0, comm, &reqs[w]);
			for (int w = 0; w < window; w++)
				MPI_Isend(&out, 1, MPI_DOUBLE, peer, 0, comm, &reqs[window + w]);
			MPI_Waitall(2 * window, reqs, MPI_STATUSES_IGNORE);
			if (rank % 2 == 0)
				MPI_Recv(&ack, 1, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
			else
				MPI_Send(&ack, 1, MPI_CHAR, peer, 0, comm);
		}
		free(in);
		free(reqs);
	}
	for (int t = 0; t < nthreads; t++)
		MPI_Comm_free(&comms[t]);
	free(comms);
	if (rank == 0)
		printf("threads=%d messages=%ld\n", nthreads, (long)(size / 2) * nthreads * iters * (2L * window + 1));
	MPI_Finalize();
	return 0;
}
