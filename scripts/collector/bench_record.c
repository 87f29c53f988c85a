/*
 * Where to encode: measures, per event, (1) clock_gettime alone, (2) recording
 * a raw record into the thread's buffer (what every OMPT callback does), and
 * (3) encoding raw records into the columnar chunk format and writing them
 * (what a flush does). Encoding on the fly would add (3)'s encoding part to
 * every callback. The event mix is fib's: task_create, then the two
 * task_schedule events of the task.
 *
 *   scripts/collector/bench_record.sh  (builds and runs this)
 */
#define _GNU_SOURCE
#include "../../ompt/collector/core.c"

int ptr_ompt_active(void) { return 0; }

static double secs(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000000; /* tasks: 3 events each */
	ptr_activate();
	ptr_thread *t = ptr_self();
	if ((size_t)n * 3 * 5 > t->cap) {
		fprintf(stderr, "buffer too small: set PTRACE_BUFFER_MB >= %ld\n", (long)((size_t)n * 15 * 8 >> 20) + 1);
		return 1;
	}
	/* 1: the clock */
	volatile uint64_t sink = 0;
	double t0 = secs();
	for (long i = 0; i < 3 * n; i++)
		sink += ptr_now();
	double clock_ns = (secs() - t0) / (3.0 * (double)n) * 1e9;
	/* 2: recording */
	uint64_t parent = ptr_new_id(t);
	const void *code = (const void *)main;
	size_t before = t->pos;
	t0 = secs();
	for (long i = 0; i < n; i++) {
		uint64_t id = ptr_new_id(t);
		ptr_ev4(t, K_TASK_CREATE, id, parent, 4, ptr_loc(t, code));
		ptr_ev3(t, K_TASK_SCHEDULE, parent, 7, id);
		ptr_ev3(t, K_TASK_SCHEDULE, id, 1, parent);
	}
	double rec_ns = (secs() - t0) / (3.0 * (double)n) * 1e9;
	size_t words = t->pos - before;
	/* 3: encoding and writing, as a flush does */
	file_lock();
	int64_t bytes0 = g.bytes;
	t0 = secs();
	drain_thread(t, done_words(t), 0);
	double enc_ns = (secs() - t0) / (3.0 * (double)n) * 1e9;
	int64_t bytes = g.bytes - bytes0;
	file_unlock();
	printf("clock_gettime            %6.1f ns\n", clock_ns);
	printf("record (raw, per event)  %6.1f ns  %.1f bytes in memory\n", rec_ns, 8.0 * (double)words / (3.0 * (double)n));
	printf("encode+write (per event) %6.1f ns  %.2f bytes on disk\n", enc_ns, (double)bytes / (3.0 * (double)n));
	(void)sink;
	return 0;
}
