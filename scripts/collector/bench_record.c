/*
 * The collector alone, per event (docs/ACCURACY.md):
 *  (1) the stamp source alone (rdtsc, or clock_gettime where the TSC is not
 *      used) and clock_gettime(CLOCK_MONOTONIC) for comparison;
 *  (2) every OMPT callback on the task path, called as libomp calls it (an
 *      indirect call with the runtime's arguments): ns per call, and where
 *      its stamp falls between the call and the return (entry→stamp and
 *      stamp→return, from stamps read just around the call; the read itself
 *      adds to both sides);
 *  (3) encoding raw records into the columnar chunk format and writing them
 *      (what a flush does), per event, with the fib event mix.
 *
 *   scripts/collector/bench_record.sh  (builds and runs this)
 */
#define _GNU_SOURCE
#include "../../ompt/collector/core.c"
#include "../../ompt/collector/ompt_tool.c"

static double secs(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* one callback of the task path, with the arguments libomp passes */
typedef void (*call_fn)(long i);
static ompt_data_t d_enc, d_new, d_par, d_task, d_prior, d_next;
static ompt_dependence_t deps[4];
static const void *code;

static void c_create(long i) { (void)i; ((void (*volatile)(ompt_data_t *, const ompt_frame_t *, ompt_data_t *, int, int, const void *))on_task_create)(&d_enc, NULL, &d_new, ompt_task_explicit, 0, code); }
static void c_deps(long i) { (void)i; ((void (*volatile)(ompt_data_t *, const ompt_dependence_t *, int))on_dependences)(&d_new, deps, 4); }
static void c_sched_begin(long i) { (void)i; ((void (*volatile)(ompt_data_t *, ompt_task_status_t, ompt_data_t *))on_task_schedule)(&d_prior, ompt_task_switch, &d_next); }
static void c_sched_end(long i) { (void)i; ((void (*volatile)(ompt_data_t *, ompt_task_status_t, ompt_data_t *))on_task_schedule)(&d_next, ompt_task_complete, &d_prior); }
static void c_implicit(long i) { ((void (*volatile)(ompt_scope_endpoint_t, ompt_data_t *, ompt_data_t *, unsigned, unsigned, int))on_implicit_task)(i & 1 ? ompt_scope_end : ompt_scope_begin, &d_par, &d_task, 2, 0, ompt_task_implicit); }
static void c_sync(long i) { ((void (*volatile)(ompt_sync_region_t, ompt_scope_endpoint_t, ompt_data_t *, ompt_data_t *, const void *))on_sync_region)(ompt_sync_region_taskwait, i & 1 ? ompt_scope_end : ompt_scope_begin, &d_par, &d_task, code); }
static void c_wait(long i) { ((void (*volatile)(ompt_sync_region_t, ompt_scope_endpoint_t, ompt_data_t *, ompt_data_t *, const void *))on_sync_region_wait)(ompt_sync_region_taskwait, i & 1 ? ompt_scope_end : ompt_scope_begin, &d_par, &d_task, code); }

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	return n ? v[n / 2] : 0;
}

/* Calls f n times, 5 times over; prints the best ns per call, and the
 * median entry→stamp / stamp→return of the calls of each parity (begin:
 * even, end: odd) when split is set. Medians, because on a shared machine
 * a preempted call adds microseconds to a mean. */
static void measure(const char *name, call_fn f, long n, int split, const char *const what[2])
{
	static uint64_t before[2][200000], after[2][200000];
	ptr_thread *t = ptr_self();
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		t->pos = 0;
		double t0 = secs();
		for (long i = 0; i < n; i++)
			f(i);
		double ns = (secs() - t0) / (double)n * 1e9;
		best = ns < best ? ns : best;
	}
	t->pos = 0;
	long cnt[2] = { 0, 0 };
	for (long i = 0; i < n && i < 200000; i++) {
		uint64_t a = ptr_stamp();
		size_t at = t->pos;
		f(i);
		uint64_t b = ptr_stamp();
		if (t->pos <= at)
			continue; /* a flush came in between */
		uint64_t s = t->buf[at] >> 8;
		int p = split ? (int)(i & 1) : 0;
		before[p][cnt[p]] = s - a;
		after[p][cnt[p]] = b - s;
		cnt[p]++;
	}
	double k = ptr_tsc ? tsc_ns_start : 1;
	for (int p = 0; p <= split; p++)
		printf("%-24s %6.1f ns/call  entry→stamp %5.1f ns  stamp→return %5.1f ns  (%s)\n", p ? "" : name, best,
		       k * (double)median_u64(before[p], cnt[p]), k * (double)median_u64(after[p], cnt[p]), what[p]);
}

/* best of 5 loops of n reads, ns per read */
static double clock_cost(uint64_t (*read)(void), long n)
{
	volatile uint64_t sink = 0;
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = secs();
		for (long i = 0; i < n; i++)
			sink += read();
		double ns = (secs() - t0) / (double)n * 1e9;
		best = ns < best ? ns : best;
	}
	(void)sink;
	return best;
}

static void empty(long i) { (void)i; }

static uint64_t read_stamp(void) { return ptr_stamp(); }
static uint64_t read_now(void) { return ptr_now(); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	ptr_activate();
	ptr_thread *t = ptr_self();
	if ((size_t)n * 3 * 5 > t->cap) {
		fprintf(stderr, "buffer too small: set PTRACE_BUFFER_MB >= %ld\n", (long)((size_t)n * 15 * 8 >> 20) + 1);
		return 1;
	}
	code = (const void *)main;
	for (int i = 0; i < 4; i++)
		deps[i] = (ompt_dependence_t){ .variable.ptr = &deps[i], .dependence_type = ompt_dependence_type_inout };
	d_par.value = 1, d_task.value = 2, d_prior.value = 3, d_next.value = 4, d_enc.value = 5;
	printf("stamp source: %s; start-up calibration: %lld ns per event (header event_cost_ns)\n",
	       ptr_tsc ? "rdtsc" : "clock_gettime(CLOCK_MONOTONIC)", (long long)event_cost_ns);
	/* 1: clocks */
	printf("stamp (ptr_stamp)        %6.1f ns\n", clock_cost(read_stamp, n / 10));
	printf("clock_gettime            %6.1f ns\n", clock_cost(read_now, n / 10));
	/* 2: callbacks (records thrown away between runs); first the two
	 * measuring stamps around an empty indirect call, the floor of
	 * entry→stamp + stamp→return */
	{
		static uint64_t d[200000];
		void (*volatile e)(long) = empty;
		long k = n / 10 < 200000 ? n / 10 : 200000;
		for (long i = 0; i < k; i++) {
			uint64_t a = ptr_stamp();
			e(i);
			d[i] = ptr_stamp() - a;
		}
		printf("stamps around an empty call %5.1f ns (median; both columns below include half of it or more)\n",
		       (ptr_tsc ? tsc_ns_start : 1) * (double)median_u64(d, k));
	}
	/* 2: callbacks (records thrown away between runs) */
	long m = n / 10 < 200000 ? n / 10 : 200000;
	static const char *const none[2] = { "inside the work it interrupts", "" };
	static const char *const sched[2] = { "switch: the next task starts after the stamp", "complete: the task ended before the stamp" };
	static const char *const scope[2] = { "begin", "end" };
	t->pos = 0;
	measure("task_create", c_create, m, 0, none);
	t->pos = 0;
	measure("dependences (4)", c_deps, m, 0, none);
	t->pos = 0;
	measure("task_schedule switch", c_sched_begin, m, 0, sched);
	t->pos = 0;
	measure("task_schedule complete", c_sched_end, m, 0, sched + 1);
	t->pos = 0;
	measure("implicit_task", c_implicit, m, 1, scope);
	t->pos = 0;
	measure("sync_region", c_sync, m, 1, scope);
	t->pos = 0;
	measure("sync_region_wait", c_wait, m, 1, scope);
	/* 3: encoding and writing, as a flush does, the fib mix */
	t->pos = 0;
	atomic_store(&t->committed, 0);
	*done_words(t) = 0;
	uint64_t parent = ptr_new_id(t);
	for (long i = 0; i < n; i++) {
		uint64_t id = ptr_new_id(t);
		ptr_ev4(t, K_TASK_CREATE, id, parent, 4, ptr_loc(t, code));
		ptr_ev3(t, K_TASK_SCHEDULE, parent, 7, id);
		ptr_ev3(t, K_TASK_SCHEDULE, id, 1, parent);
	}
	file_lock();
	int64_t bytes0 = g.bytes;
	double t0 = secs();
	drain_thread(t, done_words(t), 0);
	double enc_ns = (secs() - t0) / (3.0 * (double)n) * 1e9;
	int64_t bytes = g.bytes - bytes0;
	file_unlock();
	printf("encode+write (per event) %6.1f ns  %.2f bytes on disk\n", enc_ns, (double)bytes / (3.0 * (double)n));
	return 0;
}
