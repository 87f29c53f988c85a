/*
 * Blocked Cholesky factorisation (lower, right-looking) with dependent tasks:
 * potrf, trsm, syrk and gemm on nt×nt tiles of bs×bs doubles, each task with
 * depend(in/inout) on the tiles it reads and writes. It checks the result
 * (‖A·x − L·Lᵀ·x‖ / ‖A·x‖) and prints the task count:
 * nt + nt(nt−1) + nt(nt−1)(nt−2)/6.
 *
 *   usage: cholesky [nt=8] [bs=64]
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bs;

static void potrf(double *a)
{
	for (int j = 0; j < bs; j++) {
		double d = a[j * bs + j];
		for (int k = 0; k < j; k++)
			d -= a[j * bs + k] * a[j * bs + k];
		d = sqrt(d);
		a[j * bs + j] = d;
		for (int i = j + 1; i < bs; i++) {
			double s = a[i * bs + j];
			for (int k = 0; k < j; k++)
				s -= a[i * bs + k] * a[j * bs + k];
			a[i * bs + j] = s / d;
		}
		for (int i = 0; i < j; i++)
			a[i * bs + j] = 0;
	}
}

/* b = b · L⁻ᵀ, L the lower triangle of l */
static void trsm(const double *l, double *b)
{
	for (int i = 0; i < bs; i++)
		for (int j = 0; j < bs; j++) {
			double s = b[i * bs + j];
			for (int k = 0; k < j; k++)
				s -= b[i * bs + k] * l[j * bs + k];
			b[i * bs + j] = s / l[j * bs + j];
		}
}

/* c −= a · bᵀ */
static void gemm(const double *a, const double *b, double *c)
{
	for (int i = 0; i < bs; i++)
		for (int j = 0; j < bs; j++) {
			double s = 0;
			for (int k = 0; k < bs; k++)
				s += a[i * bs + k] * b[j * bs + k];
			c[i * bs + j] -= s;
		}
}

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 8;
	bs = argc > 2 ? atoi(argv[2]) : 64;
	if (nt < 1 || bs < 1 || nt > 64 || bs > 1024) {
		fprintf(stderr, "usage: %s [1 <= nt <= 64] [1 <= bs <= 1024]\n", argv[0]);
		return 2;
	}
	int n = nt * bs;
	double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
	double **tile = malloc(sizeof(double *) * (size_t)nt * (size_t)nt);
	if (!a || !tile)
		return 1;
	/* symmetric positive definite: small symmetric values plus n on the diagonal */
	srand(1);
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++) {
			double v = (double)rand() / RAND_MAX;
			a[(size_t)i * n + j] = a[(size_t)j * n + i] = v + (i == j ? n : 0);
		}
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < nt; j++) {
			double *t = malloc(sizeof(double) * (size_t)bs * (size_t)bs);
			if (!t)
				return 1;
			for (int r = 0; r < bs; r++)
				memcpy(t + (size_t)r * bs, a + (size_t)(i * bs + r) * n + j * bs, sizeof(double) * (size_t)bs);
			tile[i * nt + j] = t;
		}
	int tasks = 0;
	double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
	for (int k = 0; k < nt; k++) {
		double *akk = tile[k * nt + k];
#pragma omp task depend(inout : akk[0])
		potrf(akk);
		tasks++;
		for (int i = k + 1; i < nt; i++) {
			double *aik = tile[i * nt + k];
#pragma omp task depend(in : akk[0]) depend(inout : aik[0])
			trsm(akk, aik);
			tasks++;
		}
		for (int i = k + 1; i < nt; i++) {
			double *aik = tile[i * nt + k];
			for (int j = k + 1; j < i; j++) {
				double *ajk = tile[j * nt + k], *aij = tile[i * nt + j];
#pragma omp task depend(in : aik[0], ajk[0]) depend(inout : aij[0])
				gemm(aik, ajk, aij);
				tasks++;
			}
			double *aii = tile[i * nt + i];
#pragma omp task depend(in : aik[0]) depend(inout : aii[0])
			gemm(aik, aik, aii); /* syrk: the lower triangle is what counts */
			tasks++;
		}
	}
	double el = omp_get_wtime() - t0;
	/* residual ‖A·x − L·(Lᵀ·x)‖ / ‖A·x‖ for x = (1, …, 1): O(n²) */
	double *y = calloc((size_t)n, sizeof(double)), *z = calloc((size_t)n, sizeof(double));
	if (!y || !z)
		return 1;
#define L(i, j) tile[((i) / bs) * nt + (j) / bs][((i) % bs) * bs + (j) % bs]
	for (int j = 0; j < n; j++) /* y = Lᵀ·x */
		for (int i = j; i < n; i++)
			y[j] += L(i, j);
	for (int i = 0; i < n; i++) /* z = L·y */
		for (int j = 0; j <= i; j++)
			z[i] += L(i, j) * y[j];
#undef L
	double num = 0, den = 0;
	for (int i = 0; i < n; i++) {
		double ax = 0;
		for (int j = 0; j < n; j++)
			ax += a[(size_t)i * n + j];
		num += (ax - z[i]) * (ax - z[i]);
		den += ax * ax;
	}
	free(y);
	free(z);
	double res = sqrt(num / den);
	printf("cholesky: nt=%d bs=%d tasks=%d residual=%.3e %s elapsed=%.6fs\n", nt, bs, tasks, res,
	       res < 1e-10 ? "ok" : "WRONG", el);
	for (int i = 0; i < nt * nt; i++)
		free(tile[i]);
	free(tile);
	free(a);
	return res < 1e-10 ? 0 : 1;
}
