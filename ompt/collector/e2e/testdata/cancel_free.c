/*
 * Requests that end without their operation (2 ranks). Rank 0 starts an
 * MPI_Isend of tag 7 that rank 1 does not receive yet, cancels it and
 * waits for it: an MPI that cancels it (MPI_Test_cancelled true) sends
 * nothing; Open MPI 4.1 and MPICH 4.0 (ch4:ucx) do not cancel it, and
 * rank 1 receives that message later. Then rank 0 sends tag 7 again. Rank 1 posts an
 * MPI_Irecv of tag 8 and frees it while active (MPI_Request_free): the
 * message rank 0 sends it arrives in its buffer at a time no call says;
 * rank 1 then receives a second tag-8 message with MPI_Recv. Each
 * channel's messages pair in order only with the cancelled send taken out
 * and the freed receive taking the first tag-8 message.
 *
 * prints (rank 0) cancelled=0|1 messages=M collectives=C
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, cancelled = 0, messages = 0, collectives = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2)
		MPI_Abort(MPI_COMM_WORLD, 2);
	static int a = 1, b = 2, c = 3, d = 4, got[4];
	MPI_Request q;
	MPI_Status st;
	if (rank == 0) {
		MPI_Isend(&a, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q);
		MPI_Cancel(&q);
		MPI_Wait(&q, &st);
		MPI_Test_cancelled(&st, &cancelled);
	} else {
		MPI_Irecv(&got[0], 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &q);
		MPI_Request_free(&q);
	}
	MPI_Bcast(&cancelled, 1, MPI_INT, 0, MPI_COMM_WORLD);
	collectives++;
	if (rank == 0) {
		MPI_Send(&c, 1, MPI_INT, 1, 8, MPI_COMM_WORLD); /* the freed receive's */
		MPI_Send(&d, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
		MPI_Send(&b, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&got[1], 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (!cancelled) /* the first tag-7 message went */
			MPI_Recv(&got[2], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&got[3], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (got[1] != 4 || got[3] != 2 || (!cancelled && got[2] != 1))
			MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	collectives++;
	if (rank == 1 && got[0] != 3)
		MPI_Abort(MPI_COMM_WORLD, 4);
	/* matched by the analysis: both tag-8 messages (the freed receive's
	 * one too), tag 7 once or twice */
	messages = 2 + (cancelled ? 1 : 2);
	if (rank == 0)
		printf("cancelled=%d messages=%d collectives=%d\n", cancelled, messages, collectives);
	MPI_Finalize();
	return 0;
}
