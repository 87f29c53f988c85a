/* MPI + POSIX threads, 2 ranks: the main thread computes, starts 2
 * pthreads and computes on; the threads wait on a condition variable until
 * main opens the gate, then each, ROUNDS times, computes (unevenly: rank 1's
 * thread 1 longer), adds to a mutex-protected counter and exchanges a
 * message with its namesake on the peer rank (MPI_THREAD_MULTIPLE, tag =
 * thread number); main joins them (waiting for the longer one) and both
 * ranks meet in a barrier. With the argument "funneled" (MPI_THREAD_FUNNELED,
 * for Score-P versions that record MPI calls of the master thread only) the
 * threads call no MPI: main exchanges their results after the joins.
 * Prints the counter and the messages' checks. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NTHREADS 2
#define ROUNDS 4

/* busy work for us microseconds of the monotonic clock */
static inline void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static int rank, peer;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int gate, counter, errors, funneled;

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	pthread_mutex_lock(&mtx);
	while (!gate)
		pthread_cond_wait(&cond, &mtx);
	pthread_mutex_unlock(&mtx);
	for (int i = 0; i < ROUNDS; i++) {
		spin_us(1000 + 500 * id + (rank == 1 && id == 1 ? 1500 : 0));
		pthread_mutex_lock(&mtx);
		counter++;
		spin_us(200); /* held a while: the other thread may wait */
		pthread_mutex_unlock(&mtx);
		if (funneled)
			continue;
		int out = rank * 100 + i, in = -1;
		MPI_Sendrecv(&out, 1, MPI_INT, peer, id, &in, 1, MPI_INT, peer, id, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (in != peer * 100 + i) {
			pthread_mutex_lock(&mtx);
			errors++;
			pthread_mutex_unlock(&mtx);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, size;
	funneled = argc > 1 && strcmp(argv[1], "funneled") == 0;
	int level = funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE;
	MPI_Init_thread(&argc, &argv, level, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || provided < level) {
		if (rank == 0)
			printf("pthreads_mpi: needs 2 ranks and thread level %d (provided %d)\n", level, provided);
		MPI_Finalize();
		return 0;
	}
	peer = 1 - rank;
	spin_us(2000);
	pthread_t th[NTHREADS];
	for (long k = 0; k < NTHREADS; k++)
		pthread_create(&th[k], NULL, worker, (void *)k);
	spin_us(1000);
	pthread_mutex_lock(&mtx);
	gate = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&mtx);
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(th[k], NULL);
	if (funneled) {
		int in = -1;
		MPI_Sendrecv(&counter, 1, MPI_INT, peer, 0, &in, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		errors += in != counter;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("pthreads_mpi: counter %d, errors %d\n", counter, errors);
	MPI_Finalize();
	return errors != 0 || counter != NTHREADS * ROUNDS;
}
