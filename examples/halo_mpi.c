/*
 * MPI + OpenMP tasks: a 1D Jacobi sweep on a periodic ring of ranks. Each rank
 * owns n cells in nb blocks; per iteration one task exchanges the two halo
 * cells with the neighbours (Irecv/Isend/Waitall on a duplicated
 * communicator), block tasks update the interior (depend on their block and
 * the halo for the edge blocks), and every 10 iterations the residual is
 * reduced over an even/odd split communicator and MPI_COMM_WORLD. MPI calls
 * come from whichever thread runs the task: MPI_THREAD_SERIALIZED (the task
 * dependences serialise them).
 *
 *   usage: mpirun -np P halo_mpi [n=65536] [iterations=40] [blocks=8]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define TAG_LEFT 11
#define TAG_RIGHT 12

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
	if (provided < MPI_THREAD_SERIALIZED) {
		fprintf(stderr, "halo_mpi: MPI_THREAD_SERIALIZED not provided\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = argc > 1 ? atoi(argv[1]) : 65536;
	int iters = argc > 2 ? atoi(argv[2]) : 40;
	int nb = argc > 3 ? atoi(argv[3]) : 8;
	if (n < nb || nb < 1 || iters < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Comm ring, parity;
	MPI_Comm_dup(MPI_COMM_WORLD, &ring);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	/* u[0] and u[n+1] are the halo cells */
	double *u = malloc(sizeof(double) * (size_t)(n + 2)), *v = malloc(sizeof(double) * (size_t)(n + 2));
	if (!u || !v)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i <= n + 1; i++)
		u[i] = v[i] = (double)((rank * n + i) % 17);
	int bsz = n / nb;
	double res = 0, halo = 0; /* halo: dependence token of the exchange */
	(void)halo;
	int messages = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
#pragma omp parallel
#pragma omp single
	for (int it = 0; it < iters; it++) {
		double *cur = u, *nxt = v;
#pragma omp task depend(out : halo) firstprivate(cur) shared(messages)
		{
			MPI_Request rq[4];
			MPI_Irecv(&cur[0], 1, MPI_DOUBLE, left, TAG_RIGHT, ring, &rq[0]);
			MPI_Irecv(&cur[n + 1], 1, MPI_DOUBLE, right, TAG_LEFT, ring, &rq[1]);
			MPI_Isend(&cur[1], 1, MPI_DOUBLE, left, TAG_LEFT, ring, &rq[2]);
			MPI_Isend(&cur[n], 1, MPI_DOUBLE, right, TAG_RIGHT, ring, &rq[3]);
			MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
			messages += 2;
		}
		for (int b = 0; b < nb; b++) {
			int lo = 1 + b * bsz, hi = b == nb - 1 ? n : lo + bsz - 1;
			if (b == 0 || b == nb - 1) {
#pragma omp task depend(in : halo) firstprivate(cur, nxt, lo, hi)
				for (int i = lo; i <= hi; i++)
					nxt[i] = 0.5 * cur[i] + 0.25 * (cur[i - 1] + cur[i + 1]);
			} else {
#pragma omp task firstprivate(cur, nxt, lo, hi)
				for (int i = lo; i <= hi; i++)
					nxt[i] = 0.5 * cur[i] + 0.25 * (cur[i - 1] + cur[i + 1]);
			}
		}
#pragma omp taskwait
		u = nxt;
		v = cur;
		if (it % 10 == 9) {
			double local = 0, part = 0;
			for (int i = 1; i <= n; i++)
				local += (u[i] - v[i]) * (u[i] - v[i]);
			MPI_Allreduce(&local, &part, 1, MPI_DOUBLE, MPI_SUM, parity);
			MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
	}
	double sum = 0, total = 0;
	for (int i = 1; i <= n; i++)
		sum += u[i];
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Bcast(&total, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	/* one blocking exchange so that receives with MPI_STATUS_IGNORE show up too */
	double token = rank, got = -1;
	MPI_Sendrecv(&token, 1, MPI_DOUBLE, right, 99, &got, 1, MPI_DOUBLE, left, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	double el = MPI_Wtime() - t0;
	if (rank == 0)
		printf("halo_mpi: ranks=%d n=%d iterations=%d messages_per_rank=%d residual=%.6e sum=%.6e elapsed=%.6fs\n", size,
		       n, iters, messages, res, total, el);
	MPI_Comm_free(&parity);
	MPI_Comm_free(&ring);
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
