/*
 * Thread-safety stress of the collector core without an OpenMP runtime, for
 * ThreadSanitizer: pthreads record events on lazily registered threads with
 * tiny buffers (frequent flushes under the file lock), meet the same code
 * addresses for the first time concurrently (location table), while the main
 * thread drains every buffer (as MPI_Finalize does) and a late thread keeps
 * recording while the trace is finished. Then user threads (as the
 * pthread_create wrapper starts them: ptr_user_begin, ptr_user_end), four
 * at a time, more than the collector keeps buffers for: each ending one
 * writes its events and hands its buffer to a later one, while the main
 * thread drains.
 *
 *   usage: stress THREADS EVENTS [USERS]   (PTRACE_DIR and PTRACE_BUFFER_MB set)
 */
#define _GNU_SOURCE
#include "collector.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int nevents;
static _Atomic int running, finished;

static void *worker(void *arg)
{
	(void)arg;
	ptr_thread *t = ptr_self();
	uint64_t parent = ptr_new_id(t);
	ptr_ev5(t, K_IMPLICIT_BEGIN, 0, parent, 1, 0, 1);
	for (int i = 0; i < nevents; i++) {
		/* 256 shared code addresses, real ones (dladdr resolves them) */
		const void *code = (const char *)(uintptr_t)worker + (unsigned)(i * 7919) % 256;
		uint64_t id = ptr_new_id(t);
		ptr_ev4(t, K_TASK_CREATE, id, parent, 4, ptr_loc(t, code));
		if (i % 5 == 0) {
			uint64_t *w = ptr_rec(t, K_TASK_DEPS, 3 + 2 * 2);
			w[1] = id, w[2] = 2, w[3] = 0x1000 + (uint64_t)i * 8, w[4] = 1, w[5] = 0x2000, w[6] = 3;
			ptr_commit(t, 3 + 2 * 2);
		}
		ptr_ev3(t, K_TASK_SCHEDULE, parent, 7, id);
		ptr_ev3(t, K_TASK_SCHEDULE, id, 1, parent);
	}
	ptr_ev5(t, K_IMPLICIT_END, 0, parent, 1, 0, 1);
	atomic_fetch_add(&finished, 1);
	return NULL;
}

#define USER_EVENTS 3000 /* region enter and exit pairs */

static void *user(void *arg)
{
	(void)arg;
	ptr_thread *t = ptr_user_begin(-1, 0);
	if (!t)
		return NULL;
	for (int i = 0; i < USER_EVENTS; i++) {
		ptr_ev1(t, K_REGION_ENTER, 0);
		ptr_ev1(t, K_REGION_EXIT, 0);
	}
	ptr_user_end(t);
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static void *late(void *arg)
{
	(void)arg;
	ptr_thread *t = ptr_self();
	atomic_store(&running, 1);
	for (long i = 0; atomic_load(&running) == 1; i++)
		ptr_ev1(t, K_REGION_ENTER, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	nevents = argc > 2 ? atoi(argv[2]) : 20000;
	int nusers = argc > 3 ? atoi(argv[3]) : 0;
	ptr_activate();
	pthread_t th[64], lt;
	if (nthreads > 64)
		nthreads = 64;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	while (atomic_load(&finished) < nthreads)
		ptr_flush_all();
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nusers; i += 4) {
		int n = nusers - i < 4 ? nusers - i : 4;
		atomic_store(&finished, 0);
		for (int k = 0; k < n; k++)
			pthread_create(&th[k], NULL, user, NULL);
		while (atomic_load(&finished) < n)
			ptr_flush_all();
		for (int k = 0; k < n; k++)
			pthread_join(th[k], NULL);
	}
	pthread_create(&lt, NULL, late, NULL);
	while (!atomic_load(&running))
		;
	ptr_finish("stress"); /* the late thread is recording meanwhile */
	atomic_store(&running, 2);
	pthread_join(lt, NULL);
	printf("stress: threads=%d events=%d users=%d\n", nthreads, nevents, nusers);
	return 0;
}
