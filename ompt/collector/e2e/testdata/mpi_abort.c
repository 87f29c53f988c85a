/* Rank 1 creates tasks and calls MPI_Abort; rank 0 waits in a barrier until
 * mpirun terminates it. */
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
	if (rank == 1)
		MPI_Abort(MPI_COMM_WORLD, 5);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
