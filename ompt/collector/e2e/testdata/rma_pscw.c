/*
 * General active target synchronisation that waits: ranks 0 and 1 are
 * targets, exposing a window (MPI_Win_create on MPI_COMM_WORLD) to the
 * origins 2 and 3 with MPI_Win_post; each origin opens an access epoch to
 * both targets with MPI_Win_start, puts a value into each and closes it
 * with MPI_Win_complete; the targets close theirs with MPI_Win_wait, or,
 * in every fourth iteration, by polling MPI_Win_test. Target 1 computes
 * POST_US microseconds before each post, so the origins wait for it in
 * MPI_Win_start (Scalasca's Late Post: Open MPI and MPICH return from
 * MPI_Win_start once every target posted); origin 3 computes COMPLETE_US
 * before each complete, so the targets wait for it in MPI_Win_wait
 * (Early Wait): target 0, which posted on time, for about POST_US +
 * COMPLETE_US, target 1 for about COMPLETE_US.
 *
 * usage: rma_pscw ITERS POST_US COMPLETE_US; rank 0 prints
 *   iterations=I epochs=E tests=T sum=S
 * (E: access epochs closed by the origins, T: MPI_Win_test calls).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The computation sleeps: four ranks on a loaded machine of two cores
 * keep the lateness the program asks for. */
static void compute_us(long us)
{
	struct timespec d = { us / 1000000, us % 1000000 * 1000 };
	while (nanosleep(&d, &d) != 0)
		;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 8;
	long post_us = argc > 2 ? atol(argv[2]) : 0;
	long complete_us = argc > 3 ? atol(argv[3]) : 0;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "rma_pscw: needs 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	double buf[2] = { 0, 0 };
	MPI_Win win;
	MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Group world, targets, origins;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	int t[2] = { 0, 1 }, o[2] = { 2, 3 };
	MPI_Group_incl(world, 2, t, &targets);
	MPI_Group_incl(world, 2, o, &origins);
	int target = rank < 2;

	long epochs = 0, tests = 0;
	double sum = 0, value = rank;
	for (int it = 0; it < iters; it++) {
		if (target) {
			if (rank == 1)
				compute_us(post_us);
			MPI_Win_post(origins, 0, win);
			if (it % 4 == 3) {
				int flag = 0;
				while (!flag) {
					MPI_Win_test(win, &flag);
					tests++;
					if (!flag)
						compute_us(200);
				}
			} else {
				MPI_Win_wait(win);
			}
			sum += buf[0] + buf[1];
		} else {
			MPI_Win_start(targets, 0, win);
			value += 1;
			for (int k = 0; k < 2; k++)
				MPI_Put(&value, 1, MPI_DOUBLE, t[k], rank - 2, 1, MPI_DOUBLE, win);
			if (rank == 3)
				compute_us(complete_us);
			MPI_Win_complete(win);
			epochs++;
		}
	}
	MPI_Group_free(&targets);
	MPI_Group_free(&origins);
	MPI_Group_free(&world);
	MPI_Win_free(&win);

	double total = 0;
	long all[2] = { 0, 0 }, mine[2] = { epochs, tests };
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d epochs=%ld tests=%ld sum=%.0f\n", iters, all[0], all[1], total);
	MPI_Finalize();
	return 0;
}
