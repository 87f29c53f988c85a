/*
 * A pool of the program's own threads fed through a std::condition_variable
 * (2 ranks, only the main thread calls MPI): one worker waits with
 * wait(lock, predicate), the other with wait_for in a loop. Both waits are
 * libstdc++ templates inlined into the program: the line table puts the
 * calls the collector sees (pthread_cond_wait through libstdc++, and
 * pthread_cond_clockwait itself) in <condition_variable> and
 * <bits/std_mutex.h>; the trace must name the program's lines.
 *
 * usage: cv_mpi [ITEMS [P_MS]]   (default 6 3)
 */
#include <mpi.h>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <queue>
#include <thread>

namespace {

void spin_ms(int ms)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
	while (std::chrono::steady_clock::now() < end) {
	}
}

std::mutex mu;
std::condition_variable cv;
std::queue<int> q;
bool closed = false;

void waiter()
{
	for (;;) {
		std::unique_lock<std::mutex> l(mu);
		cv.wait(l, [] { return !q.empty() || closed; }); /* WAIT_PRED */
		if (q.empty())
			return;
		q.pop();
		l.unlock();
		spin_ms(1);
	}
}

void timed_waiter()
{
	for (;;) {
		std::unique_lock<std::mutex> l(mu);
		while (q.empty() && !closed)
			cv.wait_for(l, std::chrono::milliseconds(50)); /* WAIT_FOR */
		if (q.empty())
			return;
		q.pop();
		l.unlock();
		spin_ms(1);
	}
}

} // namespace

int main(int argc, char **argv)
{
	int prov;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
	int items = argc > 1 ? std::atoi(argv[1]) : 6, p_ms = argc > 2 ? std::atoi(argv[2]) : 3;
	std::thread a(waiter), b(timed_waiter);
	for (int i = 0; i < items; i++) {
		spin_ms(p_ms);
		{
			std::lock_guard<std::mutex> g(mu);
			q.push(i);
		}
		cv.notify_one();
	}
	{
		std::lock_guard<std::mutex> g(mu);
		closed = true;
	}
	cv.notify_all();
	a.join();
	b.join();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
