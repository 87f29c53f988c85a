/*
 * Recursive Fibonacci with untied tasks and taskwait, as BOTS writes it by
 * default: fib(n) creates exactly 2·(F(n+1) − 1) explicit tasks, each of
 * which an untied-task runtime may switch out at its scheduling points and
 * resume on another thread.
 *
 *   usage: untied_fib [n=18]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
	if (n < 2)
		return n;
	long x, y;
#pragma omp task untied shared(x) firstprivate(n)
	x = fib(n - 1);
#pragma omp task untied shared(y) firstprivate(n)
	y = fib(n - 2);
#pragma omp taskwait
	return x + y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 18;
	if (n < 0 || n > 40) {
		fprintf(stderr, "usage: %s [0 <= n <= 40]\n", argv[0]);
		return 2;
	}
	long r = 0;
#pragma omp parallel
#pragma omp single
	r = fib(n);
	long a = 0, b = 1;
	for (int i = 0; i < n + 1; i++) {
		long c = a + b;
		a = b;
		b = c;
	}
	printf("fib(%d) = %ld tasks=%ld\n", n, r, n >= 1 ? 2 * (a - 1) : 0);
	return 0;
}
