/*
 * One-sided synchronisation that waits: four ranks put into their right
 * neighbour's window on MPI_COMM_WORLD (made with MPI_Win_allocate), and
 * the even ranks into their partner's window on a communicator split off
 * for them (MPI_Win_create), each epoch closed by MPI_Win_fence. (The odd
 * ranks make no communicator of their own: Open MPI 4.1.4's osc/sm names
 * a window's backing file by its communicator's context id, which two
 * halves split at once share, and one half's MPI_Win_create failed now
 * and then with "invalid window".) Rank
 * LATE (1) computes LATE_US microseconds more before each fence of the
 * world window, so the other three wait for it there (Scalasca's Wait at
 * Fence); it also enters MPI_Win_allocate CREATE_US late and the world
 * window's MPI_Win_free FREE_US late (Wait at Create, Wait at Free).
 * Every rank computes 2 ms an iteration besides.
 *
 * usage: rma_fence ITERS LATE_US CREATE_US FREE_US; rank 0 prints
 *   iterations=I fences=F sum=S
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The computation sleeps: four ranks on a loaded machine of two cores
 * keep the lateness the program asks for, where spinning ranks took turns
 * and moved the waits by tens of milliseconds. */
static void compute_us(long us)
{
	struct timespec d = { us / 1000000, us % 1000000 * 1000 };
	while (nanosleep(&d, &d) != 0)
		;
}

#define LATE 1

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 10;
	long late = argc > 2 ? atol(argv[2]) : 0;
	long create = argc > 3 ? atol(argv[3]) : 0;
	long fr = argc > 4 ? atol(argv[4]) : 0;
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int right = (rank + 1) % size;

	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, &half);
	int hrank = 0, hsize = 1;
	if (half != MPI_COMM_NULL) {
		MPI_Comm_rank(half, &hrank);
		MPI_Comm_size(half, &hsize);
	}
	int partner = (hrank + 1) % hsize;

	if (rank == LATE)
		compute_us(create);
	double *ring;
	MPI_Win world_win;
	MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &ring, &world_win);
	*ring = 0;
	double pair = 0;
	MPI_Win half_win = MPI_WIN_NULL;
	if (half != MPI_COMM_NULL)
		MPI_Win_create(&pair, sizeof(double), sizeof(double), MPI_INFO_NULL, half, &half_win);

	long fences = 0;
	double sum = 0, value = rank;
	MPI_Win_fence(0, world_win);
	fences++;
	if (half_win != MPI_WIN_NULL) {
		MPI_Win_fence(0, half_win);
		fences++;
	}
	for (int it = 0; it < iters; it++) {
		compute_us(2000 + (rank == LATE ? late : 0));
		value += 1;
		MPI_Put(&value, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, world_win);
		MPI_Win_fence(0, world_win);
		sum += *ring;
		fences++;
		if (half_win != MPI_WIN_NULL) {
			MPI_Put(&value, 1, MPI_DOUBLE, partner, 0, 1, MPI_DOUBLE, half_win);
			MPI_Win_fence(0, half_win);
			sum += pair;
			fences++;
		}
	}

	if (half_win != MPI_WIN_NULL)
		MPI_Win_free(&half_win);
	if (rank == LATE)
		compute_us(fr);
	MPI_Win_free(&world_win);
	if (half != MPI_COMM_NULL)
		MPI_Comm_free(&half);

	double total = 0;
	long all = 0;
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&fences, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations=%d fences=%ld sum=%.0f\n", iters, all, total);
	MPI_Finalize();
	return 0;
}
