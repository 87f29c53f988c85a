/*
 * Threads the program starts itself, in an OpenMP program (no MPI).
 *
 *   pthread_omp nest    the main thread runs a parallel region, then
 *                       starts thread N, which runs a parallel region of
 *                       its own (libomp makes it the initial thread of a
 *                       new team and starts workers for it), and thread C,
 *                       which joins thread D and is cancelled while it
 *                       waits; the main thread joins N, C (cancelled) and
 *                       D, and runs another parallel region.
 *   pthread_omp churn K the main thread runs a parallel region, then starts
 *                       K short threads, four at a time, each computing
 *                       C ms and starting and joining a thread of its own
 *                       (2K user threads in all), and prints its peak
 *                       resident memory:  vmhwm_kb=KB
 *
 * Computing is spinning on CLOCK_MONOTONIC (spin.h); C = 0.2 ms.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spin.h"

static void region(long us)
{
#pragma omp parallel num_threads(2)
	spin_us(us);
}

static void *nested(void *arg)
{
	(void)arg;
	spin_us(2000);
	region(3000);
	spin_us(2000);
	return NULL;
}

static atomic_int release;

static void *sleeper(void *arg)
{
	(void)arg;
	while (!atomic_load(&release))
		spin_us(200);
	return NULL;
}

static void *canceled(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	spin_us(1000);
	pthread_join(target, NULL); /* cancelled in here: D is released only later */
	return NULL;
}

static void *leaf(void *arg)
{
	spin_us(200);
	return arg;
}

static void *churn(void *arg)
{
	pthread_t t;
	spin_us(200);
	if (pthread_create(&t, NULL, leaf, arg) == 0)
		pthread_join(t, NULL);
	return arg;
}

static long vmhwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "nest";
	region(2000); /* libomp starts, and the OpenMP tool with it */
	if (strcmp(mode, "churn") == 0) {
		int k = argc > 2 ? atoi(argv[2]) : 64;
		for (int i = 0; i < k; i += 4) {
			pthread_t t[4];
			int n = k - i < 4 ? k - i : 4;
			for (int j = 0; j < n; j++)
				if (pthread_create(&t[j], NULL, churn, NULL) != 0)
					return 1;
			for (int j = 0; j < n; j++)
				pthread_join(t[j], NULL);
		}
		printf("threads=%d vmhwm_kb=%ld\n", 2 * k, vmhwm_kb());
		return 0;
	}
	pthread_t n, c, d;
	void *ret = NULL;
	if (pthread_create(&n, NULL, nested, NULL) != 0 || pthread_create(&d, NULL, sleeper, NULL) != 0 ||
	    pthread_create(&c, NULL, canceled, &d) != 0)
		return 1;
	pthread_join(n, NULL);
	spin_us(2000); /* C waits in its join by now */
	pthread_cancel(c);
	pthread_join(c, &ret);
	atomic_store(&release, 1);
	pthread_join(d, NULL);
	region(2000);
	printf("canceled=%d\n", ret == PTHREAD_CANCELED);
	return ret == PTHREAD_CANCELED ? 0 : 1;
}
