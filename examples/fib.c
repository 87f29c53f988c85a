/*
 * Recursive Fibonacci with one task per call and taskwait (BOTS fib without
 * cutoff): fib(n) creates exactly 2·(F(n+1) − 1) explicit tasks.
 *
 *   usage: fib [n=20]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
	if (n < 2)
		return n;
	long x, y;
#pragma omp task shared(x) firstprivate(n)
	x = fib(n - 1);
#pragma omp task shared(y) firstprivate(n)
	y = fib(n - 2);
#pragma omp taskwait
	return x + y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	if (n < 0 || n > 40) {
		fprintf(stderr, "usage: %s [0 <= n <= 40]\n", argv[0]);
		return 2;
	}
	long r = 0;
	double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
	r = fib(n);
	double el = omp_get_wtime() - t0;
	/* tasks = 2·(F(n+1) − 1) */
	long a = 0, b = 1;
	for (int i = 0; i < n + 1; i++) {
		long c = a + b;
		a = b;
		b = c;
	}
	printf("fib(%d) = %ld tasks=%ld elapsed=%.6fs\n", n, r, n >= 1 ? 2 * (a - 1) : 0, el);
	return 0;
}
