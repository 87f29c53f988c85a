// C++ task program in the style of Task Bench's OpenMP implementation: a
// class inserts one task per (step, point) with depend clauses on the points
// it reads and writes, here a 1-D stencil over `width` points for `steps`
// steps: width·steps tasks; each task of step s > 0 depends on its own
// point and its neighbours at step s − 1. Built with clang++ -O3, its task
// construct is inside a member function that the optimiser transforms.
//
//   usage: tasks_cpp [width=8] [steps=16]
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench {

struct Payload {
	long spin;
};

class OpenMPApp {
public:
	OpenMPApp(int width, int steps) : width_(width), steps_(steps), cells_(width, 0.0) {}

	// Not inlined, as in Task Bench, where the benchmark driver calls it
	// through the application's interface.
	__attribute__((noinline)) void insert_task(int step, int point, const Payload &p)
	{
		double *c = cells_.data();
		int l = point > 0 ? point - 1 : point, r = point + 1 < width_ ? point + 1 : point;
		if (step == 0) {
#pragma omp task depend(inout : c[point]) firstprivate(point, p)
			c[point] = kernel(point, p);
		} else {
#pragma omp task depend(in : c[l], c[r]) depend(inout : c[point]) firstprivate(point, l, r, p)
			c[point] = 0.5 * c[point] + 0.25 * (c[l] + c[r]) + kernel(point, p);
		}
	}

	void run(const Payload &p)
	{
#pragma omp parallel
#pragma omp single
		for (int s = 0; s < steps_; s++)
			for (int i = 0; i < width_; i++)
				insert_task(s, i, p);
	}

	double checksum() const
	{
		double s = 0;
		for (double v : cells_)
			s += v;
		return s;
	}

private:
	static double kernel(int point, const Payload &p)
	{
		double x = point;
		for (long k = 0; k < p.spin; k++)
			x = x * 0.999999 + 1e-9;
		return x * 1e-3;
	}

	int width_, steps_;
	std::vector<double> cells_;
};

} // namespace bench

int main(int argc, char **argv)
{
	int width = argc > 1 ? std::atoi(argv[1]) : 8;
	int steps = argc > 2 ? std::atoi(argv[2]) : 16;
	if (width < 1 || steps < 1 || width > 100000 || steps > 100000) {
		std::fprintf(stderr, "usage: %s [width >= 1] [steps >= 1]\n", argv[0]);
		return 2;
	}
	bench::OpenMPApp app(width, steps);
	app.run(bench::Payload{20000});
	std::printf("tasks_cpp: width=%d steps=%d tasks=%d checksum=%g\n", width, steps, width * steps, app.checksum());
	return 0;
}
