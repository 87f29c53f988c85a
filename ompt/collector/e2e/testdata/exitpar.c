/*
 * exit() inside a parallel region (issue 16, item 7): libomp then delivers no
 * ompt_finalize, and the collector must still write every event recorded
 * before the exit, and the end frame.
 *
 *   exitpar worker   thread 1 calls exit(5) in the region
 *   exitpar master   thread 0 calls exit(5) in the region
 *   exitpar task     a task calls exit(5) (whichever thread runs it)
 *   exitpar serial   a task of the initial thread, outside any region
 *
 * Before the exit, 100 tasks are created and completed (101 with the
 * exiting task); the other thread waits at a barrier it never leaves.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int sink;

static void work(void)
{
#pragma omp for
	for (int i = 0; i < 100; i++) {
#pragma omp task firstprivate(i)
		sink += i;
	}
#pragma omp taskwait
#pragma omp barrier
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "worker";
	if (strcmp(how, "serial") == 0) {
		for (int i = 0; i < 100; i++) {
#pragma omp task firstprivate(i)
			sink += i;
		}
#pragma omp taskwait
#pragma omp task
		exit(5);
	}
	int who = strcmp(how, "master") == 0 ? 0 : 1;
#pragma omp parallel num_threads(2)
	{
		work();
		if (strcmp(how, "task") == 0) {
#pragma omp single
			{
#pragma omp task
				exit(5);
			}
		} else if (omp_get_thread_num() == who) {
			exit(5);
		}
#pragma omp barrier
	}
	printf("exitpar: not reached\n");
	return 0;
}
