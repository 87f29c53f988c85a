/*
 * An ordered loop whose threads wait for their turn (the archive
 * otf2/testdata/scorep-8.4-ordered-ompt): THREADS threads share ITERS
 * iterations round-robin; each iteration works 1, 2 or 3 · WORK_US of busy
 * time, then runs its ordered block (HOLD_US), which must wait for the
 * previous iteration's. Score-P's OMPT adapter records each ordered block's
 * entry as an "!$omp ordered" region and its acquisition and release as
 * THREAD_ACQUIRE_LOCK / THREAD_RELEASE_LOCK, as for a critical section.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define ITERS 40
#define WORK_US 200
#define HOLD_US 300

static long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void busy_us(long us)
{
	long end = now_us() + us;
	while (now_us() < end)
		;
}

int main(void)
{
	int order[ITERS], n = 0;
#pragma omp parallel for ordered schedule(static, 1) num_threads(THREADS)
	for (int i = 0; i < ITERS; i++) {
		busy_us(WORK_US * (1 + i % 3));
#pragma omp ordered
		{
			busy_us(HOLD_US);
			order[n++] = i;
		}
	}
	int inorder = 1;
	for (int i = 0; i < ITERS; i++)
		inorder &= order[i] == i;
	printf("ordered %d, in order %d\n", n, inorder);
	return !inorder;
}
