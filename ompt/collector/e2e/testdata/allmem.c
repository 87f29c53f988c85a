/*
 * depend(out: omp_all_memory) (OpenMP 5.1) in both of the forms libomp
 * takes: clang 15 and later pass an entry at address 0 with flag 0x80, and
 * libomp takes any entry at address -1 for it too. clang 14 has no
 * omp_all_memory, so the tasks are made as the compiler makes them, with
 * __kmpc_omp_task_alloc and __kmpc_omp_task_with_deps (libomp's ABI; LLVM
 * 14's libomp resolves both forms, but reports them through OMPT as they
 * are; LLVM 17's and later as out_all_memory). Six tasks of 2 ms:
 *
 *   A out(x)   B in(y)   C omp_all_memory (address 0, flag 0x80, and in(x))
 *   D in(x)    E omp_all_memory (address -1)   F in(y)
 *
 * edges A→C, B→C, C→D, C→E, D→E, E→F: 6, one path A/B, C, D, E, F.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

typedef struct {
	size_t addr, len;
	unsigned char flags; /* 1 in, 2 out, 0x80 omp_all_memory */
} kmp_dep;
typedef struct {
	void *shareds, *entry;
	int part_id;
} kmp_task;
typedef struct {
	int reserved_1, flags, reserved_2, reserved_3;
	const char *psource;
} kmp_ident;
typedef int (*kmp_entry)(int, kmp_task *);
int __kmpc_global_thread_num(kmp_ident *);
kmp_task *__kmpc_omp_task_alloc(kmp_ident *, int, int, size_t, size_t, kmp_entry);
int __kmpc_omp_task_with_deps(kmp_ident *, int, kmp_task *, int, kmp_dep *, int, kmp_dep *);

static kmp_ident loc = { 0, 2, 0, 0, ";allmem.c;main;0;0;;" };

static int body(int gtid, kmp_task *t)
{
	(void)gtid, (void)t;
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	return 0;
}

static void task(int gtid, int n, kmp_dep *d)
{
	kmp_task *t = __kmpc_omp_task_alloc(&loc, gtid, 1 /* tied */, sizeof(kmp_task), 0, body);
	__kmpc_omp_task_with_deps(&loc, gtid, t, n, d, 0, NULL);
}

int main(void)
{
	int x = 0, y = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
	{
		int g = __kmpc_global_thread_num(&loc);
		kmp_dep a = { (size_t)&x, sizeof x, 2 }, b = { (size_t)&y, sizeof y, 1 };
		kmp_dep c[2] = { { (size_t)&x, sizeof x, 1 }, { 0, 0, 0x80 } };
		kmp_dep d = { (size_t)&x, sizeof x, 1 }, e = { (size_t)-1, 0, 2 }, f = { (size_t)&y, sizeof y, 1 };
		task(g, 1, &a);
		task(g, 1, &b);
		task(g, 2, c);
		task(g, 1, &d);
		task(g, 1, &e);
		task(g, 1, &f);
	}
	printf("allmem: tasks=6\n");
	return 0;
}
