/*
 * Lock and critical-section contention for the collector's mutex events
 * (TestMutexContention): THREADS threads take one critical section and then
 * one omp_lock ITERS times each, holding it HOLD_US of busy time, so the
 * others wait. Total hold per mutex: THREADS·ITERS·HOLD_US. Then each
 * thread takes a nest lock twice (OMPT reports the first acquisition and the
 * last release only) and spins on omp_test_lock (failed tests have an
 * acquire and no acquired). Last, one omp_test_lock fails for certain:
 * thread 1 tests a lock thread 0 holds, which must leave nothing that reads
 * as a blocking acquire left incomplete. (LLVM's libomp reports a test's
 * acquire with a lock's kind; under load the spin above made up to a
 * million acquires without acquired, waitstate's
 * TestMutexFailedTestsLookLikeLocks.)
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define ITERS 10
#define HOLD_US 2000

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
	omp_lock_t lock, tlock, held;
	omp_nest_lock_t nlock;
	omp_init_lock(&lock);
	omp_init_lock(&tlock);
	omp_init_lock(&held);
	omp_init_nest_lock(&nlock);
	long crit = 0, locked = 0, nested = 0, tested = 0, failed = 0;
#pragma omp parallel num_threads(THREADS)
	{
		for (int i = 0; i < ITERS; i++) {
#pragma omp critical(contended)
			{
				busy_us(HOLD_US);
				crit++;
			}
		}
#pragma omp barrier
		for (int i = 0; i < ITERS; i++) {
			omp_set_lock(&lock); /* the lock's call site */
			busy_us(HOLD_US);
			locked++;
			omp_unset_lock(&lock);
		}
		omp_set_nest_lock(&nlock);
		omp_set_nest_lock(&nlock);
		busy_us(HOLD_US / 10);
		nested++;
		omp_unset_nest_lock(&nlock);
		omp_unset_nest_lock(&nlock);
		while (!omp_test_lock(&tlock))
			;
		busy_us(HOLD_US / 10);
		tested++;
		omp_unset_lock(&tlock);
#pragma omp barrier
		if (omp_get_thread_num() == 0)
			omp_set_lock(&held);
#pragma omp barrier
		if (omp_get_thread_num() == 1 && !omp_test_lock(&held))
			failed++;
#pragma omp barrier
		if (omp_get_thread_num() == 0)
			omp_unset_lock(&held);
	}
	omp_destroy_lock(&lock);
	omp_destroy_lock(&tlock);
	omp_destroy_lock(&held);
	omp_destroy_nest_lock(&nlock);
	printf("critical %ld, lock %ld, nest lock %ld, test lock %ld, failed test %ld\n", crit, locked, nested, tested, failed);
	return crit == THREADS * ITERS && locked == THREADS * ITERS && nested == THREADS && tested == THREADS && failed == 1 ? 0 : 1;
}
