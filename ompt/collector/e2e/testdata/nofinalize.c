/* MPI + OpenMP program that returns from main without MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#pragma omp parallel
#pragma omp single
	for (int i = 0; i < 10; i++) {
#pragma omp task firstprivate(i)
		v += i;
	}
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("nofinalize: sum=%d\n", v);
	return 0; /* no MPI_Finalize */
}
