/* Detached tasks: one fulfilled by the encountering thread after the body
 * has run on the other thread (late fulfill, as a rule), one fulfilled from
 * inside its own body (early fulfill). */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
	omp_event_handle_t late = 0, early = 0; /* set by the detach clauses */
	int done = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
	{
#pragma omp task detach(late) shared(done)
		{
#pragma omp atomic write
			done = 1;
		}
		for (int d = 0; !d;) {
#pragma omp atomic read
			d = done;
		}
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL); /* let the runtime finish the body first */
		omp_fulfill_event(late);
#pragma omp task detach(early)
		omp_fulfill_event(early);
#pragma omp taskwait
	}
	printf("detach: ok\n");
	return 0;
}
