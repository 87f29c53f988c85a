/* spin_us: busy work for us microseconds of the monotonic clock, the
 * computation of the MPI test programs (io_rma.c, master_worker.c, nbc.c,
 * bsend.c, jacobi_persistent.c). Include after defining _POSIX_C_SOURCE. */
#ifndef PTRACE_TEST_SPIN_H
#define PTRACE_TEST_SPIN_H
#include <time.h>

static inline void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
#endif
