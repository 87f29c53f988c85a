/*
 * POT's load-imbalance microbenchmark (seed pot-dependent-task-time-breakdown
 * §4.2): in one parallel region each thread t in [1, n] creates one task that
 * busy-waits t·g microseconds, waits for it (taskwait) and meets the others at
 * a barrier; I iterations. Ideal values: work = I·g·n(n+1)/2 and idleness =
 * I·g·n(n-1)/2 per process.
 *
 *   usage: imbalance [g_us=16] [iterations=100]
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void spin(double ns)
{
	double end = now_ns() + ns;
	while (now_ns() < end)
		;
}

int main(int argc, char **argv)
{
	double g = argc > 1 ? atof(argv[1]) : 16.0;
	int iters = argc > 2 ? atoi(argv[2]) : 100;
	if (g < 0 || iters < 1) {
		fprintf(stderr, "usage: %s [g_us >= 0] [iterations >= 1]\n", argv[0]);
		return 2;
	}
	int n = 0;
	/* Warm-up: the runtime creates its threads here (4 ms on a small VM),
	 * so the measured region starts with the whole team ready, as in POT's
	 * runs. The region stores to a volatile: LLVM deletes a parallel region
	 * without side effects, and with it the warm-up. */
	static volatile int warm;
#pragma omp parallel
	warm = omp_get_thread_num();
	(void)warm;
	double t0 = now_ns();
#pragma omp parallel
	{
#pragma omp single
		n = omp_get_num_threads();
		int t = omp_get_thread_num() + 1;
		for (int it = 0; it < iters; it++) {
#pragma omp task firstprivate(t)
			spin(t * g * 1e3);
#pragma omp taskwait
#pragma omp barrier
		}
	}
	double el = (now_ns() - t0) * 1e-9;
	printf("imbalance: threads=%d g=%.3fus iterations=%d tasks=%d elapsed=%.6fs\n", n, g, iters, n * iters, el);
	return 0;
}
