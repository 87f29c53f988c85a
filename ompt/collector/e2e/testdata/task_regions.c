/* task_regions.c: several parallel regions of one team shape, each
 * creating tasks. Score-P's OMPT adapter numbers a thread's tasks anew in
 * each region, so OTF2 task keys (team, creator, generation) repeat from
 * one region to the next (otf2.taskKey; NPB BT-MZ's OpenMP-task port).
 * usage: task_regions [REGIONS [TASKS]] */
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void work(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += i * 0.5;
	sink = s;
}

int main(int argc, char **argv)
{
	int regions = argc > 1 ? atoi(argv[1]) : 3;
	int tasks = argc > 2 ? atoi(argv[2]) : 4;
	int done = 0;
	for (int r = 0; r < regions; r++) {
#pragma omp parallel
#pragma omp single
		for (int i = 0; i < tasks; i++) {
#pragma omp task firstprivate(i) shared(done)
			{
				work(10000 * (i + 1));
#pragma omp atomic
				done++;
			}
		}
	}
	printf("task_regions: regions=%d tasks=%d done=%d\n", regions, tasks, done);
	return 0;
}
