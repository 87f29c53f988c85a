/* MPI_THREAD_MULTIPLE: every OpenMP thread of a rank exchanges messages with
 * the same thread number on the partner rank at the same time, completing
 * them with Waitany, Testsome and Wait (statuses ignored or not), and probes
 * before a blocking receive. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define ROUNDS 50

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		printf("mt_mpi: MPI_THREAD_MULTIPLE not provided, nothing to do\n");
		MPI_Finalize();
		return 0;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		printf("mt_mpi: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int peer = 1 - rank, errors = 0;
#pragma omp parallel num_threads(2) reduction(+ : errors)
	{
		int tag = omp_get_thread_num();
		for (int i = 0; i < ROUNDS; i++) {
			int out = rank * 1000 + i, in = -1, idx, n, done[2];
			MPI_Request rq[2];
			MPI_Status st[2];
			MPI_Irecv(&in, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(&out, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rq[1]);
			switch (i % 3) {
			case 0:
				MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
				MPI_Wait(&rq[1 - idx], MPI_STATUS_IGNORE);
				break;
			case 1:
				for (int left = 2; left > 0; left -= n) {
					MPI_Testsome(2, rq, &n, done, st);
					if (n == MPI_UNDEFINED)
						n = left;
				}
				break;
			default:
				MPI_Waitall(2, rq, st);
			}
			if (in != peer * 1000 + i)
				errors++;
			/* small messages go eagerly: both sides may send first */
			MPI_Send(&out, 1, MPI_INT, peer, 100 + tag, MPI_COMM_WORLD);
			MPI_Status ps;
			MPI_Probe(MPI_ANY_SOURCE, 100 + tag, MPI_COMM_WORLD, &ps);
			MPI_Recv(&in, 1, MPI_INT, ps.MPI_SOURCE, 100 + tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (in != peer * 1000 + i)
				errors++;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mt_mpi: errors=%d\n", errors);
	MPI_Finalize();
	return errors != 0;
}
