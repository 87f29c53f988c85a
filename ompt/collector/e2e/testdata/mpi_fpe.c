/* A pure MPI program (no OpenMP) whose rank 1 dies of SIGFPE after a
 * barrier; mpirun then ends rank 0. Both ranks' events must be kept. */
#include <mpi.h>
#include <signal.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == 1)
		raise(SIGFPE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
