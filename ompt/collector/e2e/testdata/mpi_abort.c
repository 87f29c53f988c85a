/* Both ranks run 100 tasks; once both are done (the first barrier: without
 * it rank 1 could abort while rank 0 still creates its tasks, and the test's
 * count of 100 per rank would race), rank 1 calls MPI_Abort and rank 0 waits
 * in the second barrier until mpirun terminates it. */
#include <mpi.h>

static volatile long sink;

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#pragma omp parallel
#pragma omp single
	for (int i = 0; i < 100; i++) {
#pragma omp task firstprivate(i)
		sink += i;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1)
		MPI_Abort(MPI_COMM_WORLD, 5);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
