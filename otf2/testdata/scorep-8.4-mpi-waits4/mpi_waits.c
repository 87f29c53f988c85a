/*
 * Pure MPI program with designed wait states (Scalasca's patterns), for
 * comparing ptrace's wait states with Scalasca's scout on one Score-P archive.
 * "Work" is a nanosleep of a designed length, so the durations hold on an
 * oversubscribed machine. Ranks pair up (0,1), (2,3): the even rank is the
 * sender. Every phase ends with a balanced MPI_Barrier.
 *
 *   1 late sender         : sender works A, MPI_Send 8 B; receiver MPI_Recv at once      -> LS  = A on the receiver
 *   2 late receiver Ssend : sender MPI_Ssend 8 B at once; receiver works B, MPI_Recv    -> LR  = B on the sender
 *   3 late receiver large : sender MPI_Send 4 MiB (rendezvous); receiver works B, Recv  -> LR  = B on the sender
 *   4 Isend+Waitall LR    : sender 2x MPI_Isend 4 MiB, MPI_Waitall; receiver works B, 2x MPI_Recv
 *   5 early Irecv (HPCG)  : receiver MPI_Irecv, works C, MPI_Wait; sender works A, MPI_Send 4 MiB
 *                           (Irecv posted before the send: no late receiver; LS = A - C on the receiver's Wait)
 *   6 imbalanced Allreduce: rank r works r*D, MPI_Allreduce  -> NxN wait on r = (P-1-r)*D
 *   7 imbalanced Barrier  : rank r works (P-1-r)*D, MPI_Barrier -> barrier wait on r = r*D
 *
 *   usage: mpirun -np 4 mpi_waits [iterations=3]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MS 1000000L
#define A (20 * MS)
#define B (15 * MS)
#define C (5 * MS)
#define D (4 * MS)
#define BIG (4 << 20)

static __attribute__((noinline)) void work(long ns)
{
	struct timespec t = {ns / 1000000000L, ns % 1000000000L};
	while (nanosleep(&t, &t) != 0)
		;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 3;
	if (size % 2 != 0 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_waits: needs an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char *buf = malloc(2 * (size_t)BIG);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, rank, 2 * (size_t)BIG);
	int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
	double x = rank, y;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int it = 0; it < iters; it++) {
		/* 1 late sender */
		if (sender) {
			work(A);
			MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		} else {
			MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			work(A);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* 2 late receiver, synchronous send */
		if (sender) {
			MPI_Ssend(buf, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
			work(B);
		} else {
			work(B);
			MPI_Recv(buf, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* 3 late receiver, large standard send */
		if (sender) {
			MPI_Send(buf, BIG, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
			work(B);
		} else {
			work(B);
			MPI_Recv(buf, BIG, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* 4 Isend + Waitall, late receiver */
		if (sender) {
			MPI_Request r[2];
			MPI_Isend(buf, BIG, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &r[0]);
			MPI_Isend(buf + BIG, BIG, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r[1]);
			MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
			work(B);
		} else {
			work(B);
			MPI_Recv(buf, BIG, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Recv(buf + BIG, BIG, MPI_BYTE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* 5 receive posted early (HPCG): Irecv, work, Wait against a later blocking send */
		if (sender) {
			work(A);
			MPI_Send(buf, BIG, MPI_BYTE, peer, 6, MPI_COMM_WORLD);
		} else {
			MPI_Request r;
			MPI_Irecv(buf, BIG, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r);
			work(C);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
			work(A - C);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* 6 imbalanced Allreduce */
		work(rank * D);
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		work((size - 1 - rank) * D);
		/* 7 imbalanced Barrier */
		work((size - 1 - rank) * D);
		MPI_Barrier(MPI_COMM_WORLD);
		work(rank * D);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("mpi_waits: %d iterations on %d ranks, sum %g\n", iters, size, y);
	free(buf);
	MPI_Finalize();
	return 0;
}
