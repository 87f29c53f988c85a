/*
 * A chain of untied tasks: task i has depend(inout: x), so each runs after
 * the previous one and the dependence graph is a path of n tasks. LLVM
 * libomp first runs an untied task's stub, which re-queues it (task_schedule
 * with prior status switch): each task is switched out once before its body.
 *
 *   usage: untied_chain [n=50] [work_us=200]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double spin(long us)
{
	double t0 = omp_get_wtime(), x = 0;
	while ((omp_get_wtime() - t0) * 1e6 < (double)us)
		x += 1e-9;
	return x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	long us = argc > 2 ? atol(argv[2]) : 200;
	if (n < 1 || n > 1000000 || us < 0) {
		fprintf(stderr, "usage: %s [n >= 1] [work_us >= 0]\n", argv[0]);
		return 2;
	}
	long x = 0;
	double sink = 0;
#pragma omp parallel
#pragma omp single
	for (int i = 0; i < n; i++) {
#pragma omp task untied depend(inout : x) shared(x, sink) firstprivate(us)
		{
			sink += spin(us);
			x++;
		}
	}
	printf("chain: tasks=%d x=%ld %s\n", n, x, sink >= 0 ? "ok" : "");
	return x == n ? 0 : 1;
}
