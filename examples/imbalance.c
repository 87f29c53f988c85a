/*
 * POT's load-imbalance microbenchmark (seed pot-dependent-task-time-breakdown
 * §4.2): in one parallel region each thread t in [1, n] creates one task that
 * busy-waits t·g microseconds, waits for it (taskwait) and meets the others at
 * a barrier; I iterations. Ideal values: work = I·g·n(n+1)/2 and idleness =
 * I·g·n(n-1)/2 per process.
 *
 * The program also times itself, for comparison with what a trace says
 * (scripts/collector/accuracy.sh): each thread adds up the time its tasks
 * run (from the spin's first clock read to a read after the task's own
 * bookkeeping) and the time its implicit task runs between the barrier and
 * the taskwait (clock reads at both ends, in the program's own code), and
 * the second output line gives these busy times and the region's span:
 *   imbalance-own: span_ns=S busy_ns=B0,B1,... work_ns=ΣB nonwork_ns=n·S−ΣB
 *                  region_ns=T0,T1   (CLOCK_MONOTONIC around the region)
 *                  iter_median_ns=M  (median over iterations 1… of the
 *                  busy time of all threads in the iteration: robust to a
 *                  thread descheduled now and then)
 *
 * With IMBALANCE_STAMPS=FILE set, it also writes, per thread and iteration,
 * its clock reads at the four ends of what it measures, one line each:
 *   thread iteration a b spin_thread spin_start spin_end
 * (a: after the barrier, b: before the taskwait; the spin's stamps of the
 * task it created, taken by the thread that ran it), for
 * scripts/collector/accuracy -stamps, which sets them against the trace's
 * events (CLOCK_MONOTONIC ns both).
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

#define MAXT 256

/* per-thread busy time, one cache line each */
static struct {
	double ns;
	char pad[56];
} busy[MAXT];

static double *iter_busy; /* [thread * iters + iteration] */
static int iters_;
/* IMBALANCE_STAMPS: [(thread * iters + iteration) * 5 + k], k = a, b,
 * spin thread, spin start, spin end; NULL when not asked for */
static double *stamps;

static void stamp(int me, int it, int k, double v)
{
	if (stamps && me < MAXT)
		stamps[((size_t)me * (size_t)iters_ + (size_t)it) * 5 + (size_t)k] = v;
}

/* The busy time of thread me in iteration it: its slot, found before the
 * clock read that ends a stretch, so that what follows the read is one
 * addition and two stores. */
static double *busy_slot(int me, int it)
{
	return me < MAXT ? &iter_busy[(size_t)me * (size_t)iters_ + (size_t)it] : NULL;
}

static void add_busy(int me, double *slot, double ns)
{
	if (slot) {
		busy[me].ns += ns;
		*slot += ns;
	}
}

static void spin(double ns, int it, int creator)
{
	double start = now_ns(), end = start + ns, t;
	while ((t = now_ns()) < end)
		;
	int me = omp_get_thread_num();
	stamp(creator, it, 2, me);
	stamp(creator, it, 3, start);
	stamp(creator, it, 4, t);
	/* The task's own bookkeeping is its work too: its busy time ends
	 * with a clock read after it, not with the spin's last read. */
	double *slot = busy_slot(me, it);
	add_busy(me, slot, now_ns() - start);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
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
	iters_ = iters;
	iter_busy = calloc((size_t)MAXT * (size_t)iters, sizeof *iter_busy);
	if (!iter_busy)
		return 1;
	const char *stamps_path = getenv("IMBALANCE_STAMPS");
	if (stamps_path && !(stamps = calloc((size_t)MAXT * (size_t)iters * 5, sizeof *stamps)))
		return 1;
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
		double a = now_ns();
		for (int it = 0; it < iters; it++) {
			stamp(t - 1, it, 0, a);
#pragma omp task firstprivate(t, it)
			spin(t * g * 1e3, it, t - 1);
			double *slot = busy_slot(t - 1, it);
			double b = now_ns();
			add_busy(t - 1, slot, b - a);
			stamp(t - 1, it, 1, b);
#pragma omp taskwait
#pragma omp barrier
			a = now_ns();
		}
	}
	double span = now_ns() - t0;
	printf("imbalance: threads=%d g=%.3fus iterations=%d tasks=%d elapsed=%.6fs\n", n, g, iters, n * iters, span * 1e-9);
	double sum = 0;
	printf("imbalance-own: span_ns=%.0f busy_ns=", span);
	for (int i = 0; i < n && i < MAXT; i++) {
		printf("%s%.0f", i ? "," : "", busy[i].ns);
		sum += busy[i].ns;
	}
	/* per iteration (the first one, with the region's start-up, left out) */
	double *per = calloc((size_t)iters, sizeof *per);
	int m = 0;
	for (int it = 1; per && it < iters; it++) {
		for (int i = 0; i < n && i < MAXT; i++)
			per[m] += iter_busy[(size_t)i * (size_t)iters + (size_t)it];
		m++;
	}
	if (per && m > 0)
		qsort(per, (size_t)m, sizeof *per, cmp_double);
	printf(" work_ns=%.0f nonwork_ns=%.0f region_ns=%.0f,%.0f iter_median_ns=%.0f\n", sum, n * span - sum, t0, t0 + span,
	       per && m > 0 ? per[m / 2] : 0.0);
	free(per);
	if (stamps) {
		FILE *f = fopen(stamps_path, "w");
		if (!f) {
			perror(stamps_path);
			return 1;
		}
		for (int i = 0; i < n && i < MAXT; i++)
			for (int it = 0; it < iters; it++) {
				const double *v = &stamps[((size_t)i * (size_t)iters + (size_t)it) * 5];
				fprintf(f, "%d %d %.0f %.0f %.0f %.0f %.0f\n", i, it, v[0], v[1], v[2], v[3], v[4]);
			}
		if (fclose(f) != 0) {
			perror(stamps_path);
			return 1;
		}
		free(stamps);
	}
	free(iter_busy);
	return 0;
}
