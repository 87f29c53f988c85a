/*
 * OpenMP 5.x constructs beyond plain tasks, one per mode, each printing the
 * number of explicit tasks it creates ("tasks=N"):
 *   taskloop   taskloop grainsize(1) over 32 iterations: 32 tasks
 *   reduction  taskgroup task_reduction(+) with 16 in_reduction tasks: 16
 *   nested     nested parallel regions (2 × 2 threads), 4 tasks per inner
 *              team member: 16
 *   yield      16 tied tasks that call taskyield while others run: 16
 *   mutex      16 tasks with depend(mutexinoutset) on one address, then one
 *              depend(in) reader: 17
 *   mutex5     the same with five addresses per task (LLVM libomp keeps
 *              four mutexinoutset dependences per task and makes the fifth
 *              an out: the writers run in order), the reader on the
 *              first: 17
 *   untiedyield 16 untied tasks that call taskyield: 16
 *   taskwaitdep 8 tasks of 5 ms, each waited for by a taskwait with a
 *              depend clause on its output before the next is created: 8
 *              (OpenMP 5.0; LLVM libomp reports each taskwait as a task)
 *   targetnowait 8 target nowait regions (run on the host: no device),
 *              each followed by a task that depends on its output: 16
 *              (a target task is an explicit task; LLVM libomp runs them
 *              on hidden helper threads)
 *   teams      a host teams construct of 2 teams (OpenMP 5.0), each a
 *              parallel region of one thread that spins 1 ms (team 0) or
 *              5 ms (team 1) and creates 4 tasks: 8; team 0 then waits
 *              about 4 ms at the league's barrier
 *   targetteams the same as target teams, run on the host (no device)
 *
 *   usage: omp5 MODE
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

/* Run on the host, and by target teams' host fallback. */
#pragma omp declare target
static double spin(int us)
{
	double t0 = omp_get_wtime(), x = 0;
	while ((omp_get_wtime() - t0) * 1e6 < us)
		x += 1e-9;
	return x;
}

/* A team of the teams modes: a parallel region of one thread that spins
 * 1 ms (team 0) or 5 ms (team 1) and creates 4 tasks. */
static double team_work(void)
{
	double sum = 0;
#pragma omp parallel num_threads(1) reduction(+ : sum)
	{
		sum += spin(1000 + 4000 * omp_get_team_num());
		for (int i = 0; i < 4; i++) {
#pragma omp task
			spin(50);
		}
	}
	return sum;
}
#pragma omp end declare target

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double sink = 0;
	long sum = 0;
	int tasks = -1;
	if (strcmp(mode, "taskloop") == 0) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(1)
		for (int i = 0; i < 32; i++)
			spin(50);
		tasks = 32;
	} else if (strcmp(mode, "reduction") == 0) {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(+ : sum)
		for (int i = 0; i < 16; i++) {
#pragma omp task in_reduction(+ : sum) firstprivate(i)
			{
				spin(50);
				sum += i;
			}
		}
		tasks = sum == 120 ? 16 : -2;
	} else if (strcmp(mode, "nested") == 0) {
		omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
		for (int i = 0; i < 4; i++) {
#pragma omp task
			spin(50);
		}
		tasks = 16;
	} else if (strcmp(mode, "yield") == 0 || strcmp(mode, "untiedyield") == 0) {
		int untied = strcmp(mode, "untiedyield") == 0;
#pragma omp parallel
#pragma omp single
		for (int i = 0; i < 16; i++) {
			if (untied) {
#pragma omp task untied
				{
					spin(20);
#pragma omp taskyield
					spin(20);
				}
			} else {
#pragma omp task
				{
					spin(20);
#pragma omp taskyield
					spin(20);
				}
			}
		}
		tasks = 16;
	} else if (strcmp(mode, "mutex") == 0) {
		int x = 0;
#pragma omp parallel
#pragma omp single
		{
			for (int i = 0; i < 16; i++) {
#pragma omp task depend(mutexinoutset : x) shared(x)
				{
					spin(20);
					x++;
				}
			}
#pragma omp task depend(in : x) shared(x, sink)
			sink = x;
		}
		tasks = x == 16 ? 17 : -2;
	} else if (strcmp(mode, "mutex5") == 0) {
		int x[5] = { 0 };
#pragma omp parallel
#pragma omp single
		{
			for (int i = 0; i < 16; i++) {
#pragma omp task depend(mutexinoutset : x[0], x[1], x[2], x[3], x[4]) shared(x)
				{
					spin(20);
					x[0]++;
				}
			}
#pragma omp task depend(in : x[0]) shared(x, sink)
			sink = x[0];
		}
		tasks = x[0] == 16 ? 17 : -2;
	} else if (strcmp(mode, "taskwaitdep") == 0) {
		double a[4] = { 0 };
#pragma omp parallel num_threads(4)
#pragma omp single
		for (int i = 0; i < 8; i++) {
#pragma omp task depend(out : a[i % 4]) shared(a) firstprivate(i)
			a[i % 4] += spin(5000);
#pragma omp taskwait depend(in : a[i % 4])
			sink += a[i % 4];
		}
		tasks = 8;
	} else if (strcmp(mode, "targetnowait") == 0) {
		double a[8] = { 0 };
#pragma omp parallel num_threads(4)
#pragma omp single
		for (int i = 0; i < 8; i++) {
#pragma omp target nowait map(tofrom : a[i : 1]) depend(out : a[i])
			a[i] += 1;
#pragma omp task depend(in : a[i]) shared(a, sink) firstprivate(i)
			{
				double v = a[i] + spin(50);
#pragma omp atomic
				sink += v;
			}
		}
		tasks = 16;
	} else if (strcmp(mode, "teams") == 0) {
#pragma omp teams num_teams(2) thread_limit(1) reduction(+ : sink)
		sink += team_work();
		tasks = 8;
	} else if (strcmp(mode, "targetteams") == 0) {
#pragma omp target teams num_teams(2) thread_limit(1) reduction(+ : sink)
		sink += team_work();
		tasks = 8;
	} else {
		fprintf(stderr, "usage: %s taskloop|reduction|nested|yield|untiedyield|mutex|mutex5|taskwaitdep|targetnowait|teams|targetteams\n", argv[0]);
		return 2;
	}
	printf("omp5 %s: tasks=%d %g\n", mode, tasks, sink);
	return tasks < 0;
}
