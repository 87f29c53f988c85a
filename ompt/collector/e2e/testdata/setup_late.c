/* A hybrid code's usual shape (miniAMR, Quicksilver, SNAP): MPI_Init, a
 * serial set-up whose length differs by rank, and only then the first
 * OpenMP construct, where libomp starts and reports its initial task; then
 * time steps of a parallel loop, more serial work and an MPI_Allreduce.
 * Rank r sets up for 40 (r + 1) ms and computes 2 (r + 1) ms a step
 * outside the loop. Prints steps=. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include "spin.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	spin_us(40000L * (rank + 1)); /* set-up before any OpenMP construct */
	double sum = 0, total = 0;
	const int steps = 20;
	for (int s = 0; s < steps; s++) {
#pragma omp parallel for reduction(+ : sum)
		for (int i = 0; i < 100000; i++)
			sum += 1e-9 * i;
		spin_us(2000L * (rank + 1));
		MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("steps=%d total=%g\n", steps, total);
	MPI_Finalize();
	return 0;
}
