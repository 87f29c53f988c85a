/*
 * What the collector's pthread wrappers cost a program that starts and joins
 * threads (docs/collector.md, "Overhead"): N threads one after the other,
 * each started and joined at once. Per thread: the pthread_create call in
 * the creator, the start latency (the call to the start routine's first
 * instruction) and the time from the routine's last instruction to the
 * return of pthread_join; min and median, for the first 16 threads (each
 * gets a new, pre-faulted buffer) and the rest (each reuses the buffer an
 * ended thread handed on). bench_pthread.sh runs it without and with the
 * collector.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long started, ended;

static void *routine(void *a)
{
	started = now();
	ended = now();
	return a;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, long long *v, int k)
{
	qsort(v, (size_t)k, sizeof *v, cmp);
	printf("  %-26s min %8.2f  median %8.2f us\n", what, v[0] / 1e3, v[k / 2] / 1e3);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400;
	if (n < 32)
		n = 32;
#pragma omp parallel
	{
		/* libomp starts, and the collector with it */
		volatile int x = omp_get_thread_num();
		(void)x;
	}
	long long *c = malloc(sizeof *c * (size_t)n), *s = malloc(sizeof *s * (size_t)n), *j = malloc(sizeof *j * (size_t)n);
	if (!c || !s || !j)
		return 1;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		long long a = now();
		if (pthread_create(&t, NULL, routine, NULL) != 0)
			return 1;
		long long b = now();
		pthread_join(t, NULL);
		long long d = now();
		c[i] = b - a;
		s[i] = started - a;
		j[i] = d - ended;
	}
	const int first = 16;
	printf("threads 1..%d:\n", first);
	report("pthread_create call", c, first);
	report("start latency", s, first);
	report("routine end to join return", j, first);
	printf("threads %d..%d:\n", first + 1, n);
	report("pthread_create call", c + first, n - first);
	report("start latency", s + first, n - first);
	report("routine end to join return", j + first, n - first);
	return 0;
}
