/* MPI + a pool of POSIX threads, 2 ranks, MPI on the main thread only
 * (MPI_THREAD_FUNNELED): main starts NW workers, then BATCHES times
 * produces (computes, rank 1 longer), puts NW items in a queue, wakes the
 * workers (pthread_cond_broadcast) and waits on a condition variable until
 * they processed all of them, then joins the other rank in MPI_Allreduce.
 * The workers wait for items in pthread_cond_wait (the last one in
 * pthread_cond_timedwait) for most of the run; each takes one item of a
 * batch, processes it (computes) and adds its result to a total under a
 * second mutex held a while (sleeping), which the workers, woken together,
 * contend for. Prints the total and the items processed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define NW 3
#define BATCHES 6

static inline void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static pthread_mutex_t qm = PTHREAD_MUTEX_INITIALIZER; /* the queue */
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* items queued, or shutdown */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* all queued items processed */
static int items, processed, target, batch, shutdown_;
static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER; /* the total */
static long total;
static int rank;
static const struct timespec hold = {0, 300000};

static void *worker(void *arg)
{
	int id = (int)(long)arg, mine = 0; /* the last batch this worker took an item of */
	pthread_mutex_lock(&qm);
	for (;;) {
		while ((items == 0 || mine == batch) && !shutdown_) {
			if (id == NW - 1) {
				struct timespec t;
				clock_gettime(CLOCK_REALTIME, &t);
				t.tv_sec += 30;
				if (pthread_cond_timedwait(&work, &qm, &t) == ETIMEDOUT)
					fprintf(stderr, "worker %d: timed out\n", id);
			} else
				pthread_cond_wait(&work, &qm);
		}
		if (items == 0)
			break;
		items--;
		mine = batch;
		pthread_mutex_unlock(&qm);
		spin_us(100 + 50 * id); /* process the item */
		pthread_mutex_lock(&sm);
		total++;
		nanosleep(&hold, NULL); /* held a while: the others wait */
		pthread_mutex_unlock(&sm);
		pthread_mutex_lock(&qm);
		if (++processed == target)
			pthread_cond_signal(&done);
	}
	pthread_mutex_unlock(&qm);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || provided < MPI_THREAD_FUNNELED) {
		if (rank == 0)
			printf("pthreads_pool: needs 2 ranks and MPI_THREAD_FUNNELED (provided %d)\n", provided);
		MPI_Finalize();
		return 0;
	}
	pthread_t th[NW];
	for (long k = 0; k < NW; k++)
		pthread_create(&th[k], NULL, worker, (void *)k);
	long sum = 0;
	for (int b = 0; b < BATCHES; b++) {
		spin_us(2000 + 1000 * rank); /* produce */
		pthread_mutex_lock(&qm);
		items += NW;
		target += NW;
		batch++;
		pthread_cond_broadcast(&work);
		while (processed < target)
			pthread_cond_wait(&done, &qm);
		pthread_mutex_unlock(&qm);
		long mine = total, all = 0;
		MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		sum = all;
	}
	pthread_mutex_lock(&qm);
	shutdown_ = 1;
	pthread_cond_broadcast(&work);
	pthread_mutex_unlock(&qm);
	for (int k = 0; k < NW; k++)
		pthread_join(th[k], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("pthreads_pool: total %ld over the ranks, %d items processed\n", sum, processed);
	MPI_Finalize();
	return processed != NW * BATCHES || sum != 2L * BATCHES * NW;
}
