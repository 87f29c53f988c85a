/*
 * Tasks with dependences made by every thread of a team, each on its own
 * data: even threads make tasks on blocks of their own, each block named
 * once; odd threads make a chain of tasks on one block, each task
 * depending on the one before (depend(inout) on the same address).
 *
 *   usage: deps_threads [tasks per thread = 400]
 *
 * Prints tasks=N edges=E: the chains' links, E = (odd threads) * (N/T - 1).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static void work(double *p)
{
	for (int i = 0; i < 30000; i++)
		*p += 1e-9 * i;
}

int main(int argc, char **argv)
{
	int per = argc > 1 ? atoi(argv[1]) : 400;
	if (per < 1 || per > 100000) {
		fprintf(stderr, "usage: %s [1 <= tasks per thread <= 100000]\n", argv[0]);
		return 2;
	}
	int nt = 0;
	double *own = NULL, *chain = NULL;
#pragma omp parallel
	{
#pragma omp single
		{
			nt = omp_get_num_threads();
			own = calloc((size_t)nt * per, sizeof *own);
			chain = calloc((size_t)nt * 8, sizeof *chain);
		}
		int me = omp_get_thread_num();
		if (me % 2 == 0) {
			for (int i = 0; i < per; i++) {
				double *b = &own[(size_t)me * per + i];
#pragma omp task depend(inout : b[0]) firstprivate(b)
				work(b);
			}
		} else {
			double *c = &chain[me * 8];
			for (int i = 0; i < per; i++) {
#pragma omp task depend(inout : c[0]) firstprivate(c)
				work(c);
			}
		}
	}
	printf("tasks=%d edges=%d\n", nt * per, (nt / 2) * (per - 1));
	free(own);
	free(chain);
	return 0;
}
