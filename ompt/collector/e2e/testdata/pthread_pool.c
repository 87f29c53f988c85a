/*
 * A pool of the program's own threads fed through a queue, as thread pools
 * are written (2 ranks, only the main thread calls MPI): the main thread
 * starts 2 workers, then produces ITEMS items, computing P ms before each;
 * a worker takes an item under the queue's mutex, waiting on its condition
 * variable while the queue is empty (most of the time: it computes C < P
 * ms an item), and computes it unlocked. When the queue is closed the
 * workers and the main thread meet in a pthread barrier; the main thread
 * joins the workers and takes part in an MPI_Allreduce.
 *
 * usage: pthread_pool [ITEMS [P_MS [C_MS]]]   (default 6 4 2)
 *
 * The program records its own CLOCK_MONOTONIC stamps (the collector's
 * clock) and prints them after MPI_Finalize:
 *   thread rank=R id=K start=NS end=NS     a worker's first and last thing
 *   cwait rank=R id=K begin=NS end=NS      around each pthread_cond_wait
 *   bwait rank=R id=K begin=NS end=NS      around pthread_barrier_wait (id 2: main)
 *   join rank=R id=K begin=NS end=NS       around pthread_join
 *   call rank=R enter=NS exit=NS           around the MPI_Allreduce
 *   window rank=R init_exit=NS finalize_enter=NS
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "spin.h"

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define MAXWAITS 256
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t done;
static int queued, closed;
static long c_us = 2000;

struct worker {
	int id, nwaits;
	int64_t start, end, bwait[2];
	int64_t cwait[MAXWAITS][2];
};

static void *work(void *p)
{
	struct worker *w = p;
	w->start = now();
	for (;;) {
		pthread_mutex_lock(&mu);
		while (queued == 0 && !closed) {
			int64_t b = now();
			pthread_cond_wait(&nonempty, &mu);
			if (w->nwaits < MAXWAITS) {
				w->cwait[w->nwaits][0] = b;
				w->cwait[w->nwaits++][1] = now();
			}
		}
		if (queued == 0) { /* closed and empty */
			pthread_mutex_unlock(&mu);
			break;
		}
		queued--;
		pthread_mutex_unlock(&mu);
		spin_us(c_us);
	}
	w->bwait[0] = now();
	pthread_barrier_wait(&done); /* the workers' */
	w->bwait[1] = now();
	w->end = now();
	return NULL;
}

int main(int argc, char **argv)
{
	int prov, rank, np;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
	int64_t init_exit = now();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int items = argc > 1 ? atoi(argv[1]) : 6;
	long p_us = argc > 2 ? (long)(atof(argv[2]) * 1000) : 4000;
	if (argc > 3)
		c_us = (long)(atof(argv[3]) * 1000);
	if (np != 2 || items < 1 || items > MAXWAITS / 2) {
		fprintf(stderr, "pthread_pool: 2 ranks, 1..%d items\n", MAXWAITS / 2);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	pthread_barrier_init(&done, NULL, 3);
	struct worker ws[2] = { { .id = 0 }, { .id = 1 } };
	pthread_t th[2];
	for (int k = 0; k < 2; k++)
		if (pthread_create(&th[k], NULL, work, &ws[k]) != 0) {
			fprintf(stderr, "pthread_pool: pthread_create failed\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	for (int i = 0; i < items; i++) {
		spin_us(p_us);
		pthread_mutex_lock(&mu);
		queued++;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	closed = 1;
	pthread_cond_broadcast(&nonempty);
	pthread_mutex_unlock(&mu);
	int64_t bwait[2], join[2][2];
	bwait[0] = now();
	pthread_barrier_wait(&done);
	bwait[1] = now();
	for (int k = 0; k < 2; k++) {
		join[k][0] = now();
		pthread_join(th[k], NULL);
		join[k][1] = now();
	}
	double x = rank, y;
	int64_t call[2];
	call[0] = now();
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	call[1] = now();
	int64_t finalize_enter = now();
	MPI_Finalize();
	pthread_barrier_destroy(&done);
	for (int k = 0; k < 2; k++) {
		printf("thread rank=%d id=%d start=%lld end=%lld\n", rank, k, (long long)ws[k].start, (long long)ws[k].end);
		for (int i = 0; i < ws[k].nwaits; i++)
			printf("cwait rank=%d id=%d begin=%lld end=%lld\n", rank, k, (long long)ws[k].cwait[i][0],
			       (long long)ws[k].cwait[i][1]);
		printf("bwait rank=%d id=%d begin=%lld end=%lld\n", rank, k, (long long)ws[k].bwait[0], (long long)ws[k].bwait[1]);
		printf("join rank=%d id=%d begin=%lld end=%lld\n", rank, k, (long long)join[k][0], (long long)join[k][1]);
	}
	printf("bwait rank=%d id=2 begin=%lld end=%lld\n", rank, (long long)bwait[0], (long long)bwait[1]);
	printf("call rank=%d enter=%lld exit=%lld\n", rank, (long long)call[0], (long long)call[1]);
	printf("window rank=%d init_exit=%lld finalize_enter=%lld\n", rank, (long long)init_exit, (long long)finalize_enter);
	return 0;
}
