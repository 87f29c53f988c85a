// pthread_mpi.c with C++'s std::thread (its threads are started and joined
// by libstdc++ or libc++, which call pthread_create and pthread_join): 2
// ranks, MPI_THREAD_MULTIPLE; the main thread computes, starts 2 threads,
// computes, joins them, then takes part in a barrier. Thread K computes,
// exchanges ITERS times with the peer rank's thread K (MPI_Sendrecv, tag K)
// computing (K + 1) × C ms before each, and computes again before it ends.
//
// usage: thread_mpi [ITERS [C_MS]]   (default 3 4)
//
// Prints the program's own CLOCK_MONOTONIC stamps after MPI_Finalize, as
// pthread_mpi.c does (thread, call, join, barrier and window lines).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace {

int64_t now()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void spin_us(long us)
{
	int64_t end = now() + int64_t(us) * 1000;
	while (now() < end) {
	}
}

struct Thr {
	int id = 0;
	int64_t start = 0, end = 0;
	std::vector<std::pair<int64_t, int64_t>> calls;
};

int rank = 0, iters = 3;
long c_us = 4000;

void run(Thr &t)
{
	t.start = now();
	spin_us(c_us);
	double x = rank, y = 0;
	for (int i = 0; i < iters; i++) {
		spin_us((t.id + 1) * c_us);
		int64_t a = now();
		MPI_Sendrecv(&x, 1, MPI_DOUBLE, rank ^ 1, t.id, &y, 1, MPI_DOUBLE, rank ^ 1, t.id, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		t.calls.emplace_back(a, now());
	}
	spin_us(c_us);
	t.end = now();
}

} // namespace

int main(int argc, char **argv)
{
	int prov;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
	int64_t init_exit = now();
	int np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc > 1)
		iters = std::atoi(argv[1]);
	if (argc > 2)
		c_us = long(std::atof(argv[2]) * 1000);
	if (np != 2 || prov < MPI_THREAD_MULTIPLE || iters < 1) {
		std::fprintf(stderr, "thread_mpi: 2 ranks, MPI_THREAD_MULTIPLE, 1 iteration or more\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	spin_us(2 * c_us);
	Thr thr[2];
	thr[0].id = 0;
	thr[1].id = 1;
	std::thread th[2] = { std::thread(run, std::ref(thr[0])), std::thread(run, std::ref(thr[1])) };
	spin_us(c_us);
	int64_t join[2][2];
	for (int k = 0; k < 2; k++) {
		join[k][0] = now();
		th[k].join();
		join[k][1] = now();
	}
	int64_t barrier_enter = now();
	MPI_Barrier(MPI_COMM_WORLD);
	int64_t barrier_exit = now(), finalize_enter = now();
	MPI_Finalize();
	for (int k = 0; k < 2; k++) {
		std::printf("thread rank=%d id=%d start=%lld end=%lld\n", rank, k, (long long)thr[k].start, (long long)thr[k].end);
		for (auto &c : thr[k].calls)
			std::printf("call rank=%d id=%d enter=%lld exit=%lld\n", rank, k, (long long)c.first, (long long)c.second);
		std::printf("join rank=%d id=%d begin=%lld end=%lld\n", rank, k, (long long)join[k][0], (long long)join[k][1]);
	}
	std::printf("barrier rank=%d enter=%lld exit=%lld\n", rank, (long long)barrier_enter, (long long)barrier_exit);
	std::printf("window rank=%d init_exit=%lld finalize_enter=%lld\n", rank, (long long)init_exit, (long long)finalize_enter);
	return 0;
}
