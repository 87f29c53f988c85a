/*
 * A receive given up on (2 ranks): rank 1 posts an MPI_Irecv of tag 9,
 * tests it once, then, as on a timeout, cancels it and frees it
 * (MPI_Cancel, MPI_Request_free: legal, MPI 4.0 §3.8.4) without waiting.
 * Rank 0 sends tag 9 only after a barrier, and rank 1 receives that
 * message with MPI_Recv: the cancelled receive took nothing (both MPIs
 * cancel an unmatched receive at once), so the one message pairs with
 * the MPI_Recv.
 *
 * prints (rank 0) messages=1 collectives=2
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, flag, x = 1, y = 0, z = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Request q;
	if (rank == 1) {
		MPI_Irecv(&y, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &q);
		MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
		if (flag)
			MPI_Abort(MPI_COMM_WORLD, 3);
		MPI_Cancel(&q);
		MPI_Request_free(&q);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
	else
		MPI_Recv(&z, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (rank == 1 && (z != 1 || y != 0))
		MPI_Abort(MPI_COMM_WORLD, 4);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("messages=1 collectives=2\n");
	MPI_Finalize();
	return 0;
}
