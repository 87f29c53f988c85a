/*
 * Master and workers, the way parameter sweeps and task farms are written:
 * each worker sends a request (its previous result, tag 2; tag 1 the first
 * time) to rank 0 and waits for a job; rank 0 probes for any request
 * (MPI_Probe with MPI_ANY_SOURCE and MPI_ANY_TAG), sizes it with
 * MPI_Get_count, receives it and replies with the next job (-1: none
 * left). Job j computes 500 + 400 (j mod 7) microseconds. A final
 * MPI_Reduce sums the results.
 *
 * usage: master_worker JOBS; rank 0 prints
 *   jobs=J total=T
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int njobs = argc > 1 ? atoi(argv[1]) : 40;
	long total = 0, all = 0;
	if (rank == 0) {
		int next = 0, done = 0;
		while (done < size - 1) {
			MPI_Status st;
			int count;
			MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_LONG, &count);
			long *buf = malloc((count > 0 ? count : 1) * sizeof(long));
			MPI_Recv(buf, count, MPI_LONG, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (st.MPI_TAG == 2)
				total += buf[0];
			free(buf);
			int job = next < njobs ? next++ : -1;
			MPI_Send(&job, 1, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD);
			if (job < 0)
				done++;
		}
	} else {
		long result = 0;
		for (int first = 1;; first = 0) {
			MPI_Send(&result, 1, MPI_LONG, 0, first ? 1 : 2, MPI_COMM_WORLD);
			int job;
			MPI_Recv(&job, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (job < 0)
				break;
			spin_us(500 + (job % 7) * 400);
			result = job;
		}
	}
	MPI_Reduce(&total, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("jobs=%d total=%ld\n", njobs, all);
	MPI_Finalize();
	return 0;
}
