/*
 * Threads the program starts itself, computing and calling MPI (2 ranks,
 * MPI_THREAD_MULTIPLE), as a communication thread or osu_latency_mt's
 * threads do: the main thread computes, starts 2 pthreads, computes, joins
 * them, then takes part in a barrier. Thread K computes before its first
 * MPI call, exchanges ITERS times with the peer rank's thread K
 * (MPI_Sendrecv, tag K) computing (K + 1) × C ms before each, and computes
 * again before it ends: thread 0 returns from its start routine, thread 1
 * calls pthread_exit.
 *
 * usage: pthread_mpi [ITERS [C_MS]]   (default 3 4)
 *
 * The program records its own CLOCK_MONOTONIC stamps (the collector's
 * clock) and prints them after MPI_Finalize:
 *   thread rank=R id=K start=NS end=NS     first and last thing of the thread
 *   call rank=R id=K enter=NS exit=NS      around each MPI_Sendrecv
 *   join rank=R id=K begin=NS end=NS       around pthread_join
 *   barrier rank=R enter=NS exit=NS        around the main thread's MPI_Barrier
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

#define MAXITERS 64
static int rank, iters = 3;
static long c_us = 4000;

struct thr {
	long id;
	int64_t start, end;
	int64_t call[MAXITERS][2];
};

static void *run(void *p)
{
	struct thr *t = p;
	t->start = now();
	spin_us(c_us);
	double x = (double)rank, y = 0;
	for (int i = 0; i < iters; i++) {
		spin_us((t->id + 1) * c_us);
		t->call[i][0] = now();
		MPI_Sendrecv(&x, 1, MPI_DOUBLE, rank ^ 1, (int)t->id, &y, 1, MPI_DOUBLE, rank ^ 1, (int)t->id,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		t->call[i][1] = now();
	}
	spin_us(c_us);
	t->end = now();
	if (t->id == 1)
		pthread_exit(NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int prov;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
	int64_t init_exit = now();
	int np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc > 1)
		iters = atoi(argv[1]);
	if (argc > 2)
		c_us = (long)(atof(argv[2]) * 1000);
	if (np != 2 || prov < MPI_THREAD_MULTIPLE || iters < 1 || iters > MAXITERS) {
		fprintf(stderr, "pthread_mpi: 2 ranks, MPI_THREAD_MULTIPLE, 1..%d iterations\n", MAXITERS);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	spin_us(2 * c_us);
	struct thr thr[2] = { { .id = 0 }, { .id = 1 } };
	pthread_t th[2];
	for (int k = 0; k < 2; k++)
		if (pthread_create(&th[k], NULL, run, &thr[k]) != 0) {
			fprintf(stderr, "pthread_mpi: pthread_create failed\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	spin_us(c_us);
	int64_t join[2][2];
	for (int k = 0; k < 2; k++) {
		join[k][0] = now();
		pthread_join(th[k], NULL);
		join[k][1] = now();
	}
	int64_t barrier_enter = now();
	MPI_Barrier(MPI_COMM_WORLD);
	int64_t barrier_exit = now(), finalize_enter = now();
	MPI_Finalize();
	for (int k = 0; k < 2; k++) {
		printf("thread rank=%d id=%d start=%lld end=%lld\n", rank, k, (long long)thr[k].start, (long long)thr[k].end);
		for (int i = 0; i < iters; i++)
			printf("call rank=%d id=%d enter=%lld exit=%lld\n", rank, k, (long long)thr[k].call[i][0],
			       (long long)thr[k].call[i][1]);
		printf("join rank=%d id=%d begin=%lld end=%lld\n", rank, k, (long long)join[k][0], (long long)join[k][1]);
	}
	printf("barrier rank=%d enter=%lld exit=%lld\n", rank, (long long)barrier_enter, (long long)barrier_exit);
	printf("window rank=%d init_exit=%lld finalize_enter=%lld\n", rank, (long long)init_exit, (long long)finalize_enter);
	return 0;
}
