/*
 * BOTS-like sort with untied tasks (BOTS sort marks its tasks untied): a
 * four-way merge sort; each call on at least `cutoff` elements sorts its four
 * quarters in four untied tasks, waits, merges the two pairs in two untied
 * tasks, waits, and merges the halves itself. It prints the number of tasks
 * it creates (count below) and checks the result.
 *
 *   usage: untied_sort [n=200000] [cutoff=2048]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long cutoff = 2048;

static void merge(const int *a, long na, const int *b, long nb, int *out)
{
	long i = 0, j = 0, k = 0;
	while (i < na && j < nb)
		out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
	while (i < na)
		out[k++] = a[i++];
	while (j < nb)
		out[k++] = b[j++];
}

static int cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

static void sort(int *a, int *tmp, long n)
{
	if (n < cutoff) {
		qsort(a, (size_t)n, sizeof *a, cmp);
		return;
	}
	long q = n / 4, n4 = n - 3 * q;
	int *a1 = a, *a2 = a + q, *a3 = a + 2 * q, *a4 = a + 3 * q;
	int *t1 = tmp, *t2 = tmp + 2 * q;
#pragma omp task untied
	sort(a1, t1, q);
#pragma omp task untied
	sort(a2, t1 + q, q);
#pragma omp task untied
	sort(a3, t2, q);
#pragma omp task untied
	sort(a4, t2 + q, n4);
#pragma omp taskwait
#pragma omp task untied
	merge(a1, q, a2, q, t1);
#pragma omp task untied
	merge(a3, q, a4, n4, t2);
#pragma omp taskwait
	merge(t1, 2 * q, t2, q + n4, a);
}

/* tasks sort(n) creates, by the same recursion */
static long count(long n)
{
	if (n < cutoff)
		return 0;
	long q = n / 4;
	return 6 + 3 * count(q) + count(n - 3 * q);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	cutoff = argc > 2 ? atol(argv[2]) : 2048;
	if (n < 1 || n > 100000000 || cutoff < 4) {
		fprintf(stderr, "usage: %s [n >= 1] [cutoff >= 4]\n", argv[0]);
		return 2;
	}
	int *a = malloc(sizeof(int) * (size_t)n), *tmp = malloc(sizeof(int) * (size_t)n);
	if (!a || !tmp)
		return 1;
	unsigned s = 12345;
	for (long i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		a[i] = (int)(s >> 8);
	}
#pragma omp parallel
#pragma omp single
	sort(a, tmp, n);
	for (long i = 1; i < n; i++)
		if (a[i - 1] > a[i]) {
			fprintf(stderr, "not sorted at %ld\n", i);
			return 1;
		}
	printf("untied_sort: n=%ld cutoff=%ld tasks=%ld ok\n", n, cutoff, count(n));
	free(a);
	free(tmp);
	return 0;
}
