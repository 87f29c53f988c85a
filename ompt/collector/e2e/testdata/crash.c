/* Creates tasks, then dies: "abort" (SIGABRT), "segv" (SIGSEGV), "fpe"
 * (SIGFPE), "term" (SIGTERM to itself) or "exit" (exit without returning
 * from main while tasks have run). The trace must survive as far as the
 * collector can. "fpe-first" dies of SIGFPE before the OpenMP runtime (and
 * so the collector) starts: nothing can be recorded.
 * "handled": the program catches SIGTERM itself, carries on with 100 more
 * tasks and ends normally: the trace must be complete. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
static volatile sig_atomic_t caught;

static void on_term(int sig)
{
	(void)sig;
	caught = 1;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "abort";
	if (!strcmp(how, "handled")) /* before the OpenMP runtime (and the collector) start */
		signal(SIGTERM, on_term);
	if (!strcmp(how, "fpe-first"))
		raise(SIGFPE);
#pragma omp parallel
#pragma omp single
	for (int i = 0; i < 100; i++) {
#pragma omp task firstprivate(i)
		sink += i;
	}
	fflush(stdout);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv")) {
		volatile int *p = NULL;
		return *p;
	}
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "fpe"))
		raise(SIGFPE);
	if (!strcmp(how, "exit"))
		exit(3);
	if (!strcmp(how, "handled")) {
		raise(SIGTERM);
#pragma omp parallel
#pragma omp single
		for (int i = 0; i < 100; i++) {
#pragma omp task firstprivate(i)
			sink += i;
		}
		return caught ? 0 : 1;
	}
	return 0;
}
