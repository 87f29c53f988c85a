/* A small task program for ThreadSanitizer runs of the collector: dependent
 * tasks, taskwait, taskgroup, and atomics for the only shared data (libomp's
 * own synchronisation is invisible to TSan, so user data races would drown
 * the collector's). */
#include <stdio.h>

static int counter;

int main(void)
{
	int a = 0, b = 0;
	(void)a, (void)b;
#pragma omp parallel num_threads(2)
#pragma omp single
	for (int i = 0; i < 200; i++) {
#pragma omp task depend(out : a)
		{
#pragma omp atomic
			counter++;
		}
#pragma omp task depend(in : a) depend(inout : b)
		{
#pragma omp atomic
			counter++;
		}
		if (i % 10 == 0) {
#pragma omp taskgroup
			{
#pragma omp task
				{
#pragma omp atomic
					counter++;
				}
			}
#pragma omp taskwait
		}
	}
	int c;
#pragma omp atomic read
	c = counter;
	printf("tasks: counter=%d\n", c);
	return c == 420 ? 0 : 1;
}
