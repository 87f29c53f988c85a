/* Plain MPI_Send/MPI_Recv ping-pong between ranks 0 and 1: the baseline that
 * pingpong.sh compares ptrace's Go binding (scripts/comm/pingpong) with.
 *
 * Usage: mpirun -np 2 pingpong-c [size...]
 * Prints "size one_way_latency_us" per size on rank 0: the median over 5
 * repetitions of the round-trip time divided by two. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPS = 5 };

/* Must match iterations() in pingpong/main.go. */
static int iterations(long size) {
	if (size <= 1024) return 20000;
	if (size <= 65536) return 5000;
	return 500;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void rounds(char *buf, long size, int n, int rank) {
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, nprocs;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (nprocs != 2) {
		if (rank == 0) fprintf(stderr, "pingpong-c: needs exactly 2 ranks, got %d\n", nprocs);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long defaults[] = {8, 1024, 65536, 1048576};
	int nsizes = argc > 1 ? argc - 1 : 4;
	for (int s = 0; s < nsizes; s++) {
		long size = argc > 1 ? atol(argv[s + 1]) : defaults[s];
		char *buf = malloc(size > 0 ? size : 1);
		memset(buf, 1, size);
		int n = iterations(size);
		rounds(buf, size, n / 10, rank); /* warm up */
		double t[REPS];
		for (int r = 0; r < REPS; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			rounds(buf, size, n, rank);
			t[r] = (MPI_Wtime() - t0) / n / 2 * 1e6;
		}
		qsort(t, REPS, sizeof t[0], cmp);
		if (rank == 0) printf("%ld %.3f\n", size, t[REPS / 2]);
		free(buf);
	}
	MPI_Finalize();
	return 0;
}
