/*
 * Pure MPI, an even number of ranks (pairs r, r^1), with designed waits as
 * in waits_pure.c, and Score-P's recording switched off and on with its
 * user API (SCOREP_RECORDING_OFF/ON; `scorep --user`), as users do to skip
 * an initialisation or record only some iterations. Without Score-P's user
 * API the switches are no-ops and the program runs as traced throughout.
 *
 * Each iteration (even rank e, odd rank o = e+1):
 *
 *   late sender     o computes D ms, then MPI_Send (8 B) to e, which is in
 *                   MPI_Recv from the start: e waits D;
 *   late receiver   e MPI_Ssend (8 B) to o, which computes D ms first:
 *                   e waits D;
 *   wait at N×N     the even ranks compute D + B ms, the odd ones B ms, then
 *                   MPI_Allreduce: the odd ranks wait D;
 *   wait at barrier the odd ranks compute D + B ms, the even ones B ms,
 *                   then MPI_Barrier: the even ranks wait D.
 *
 * usage: recording_off MODE [ITERS [D_MS [B_MS]]]   (default 4 20 10)
 *
 * MODE says where recording is off:
 *   none     never (the reference run);
 *   both     every rank, iterations 1 and 2 (from the start of iteration 1
 *            to the end of iteration 2): both sides of every message and
 *            collective in them unrecorded;
 *   skew     rank r off in iteration (r mod 2) + 1 only: rank 0 in
 *            iteration 1, rank 1 in iteration 2 (with 4 ranks, 2 as 0 and
 *            3 as 1), so in each of those iterations one side of every
 *            message and collective was recorded and the other was not;
 *   init     every rank, from MPI_Init's return to the loop: an
 *            "initialisation" (an unbalanced compute of 2·D ms on rank 0,
 *            D on the others, an MPI_Bcast and a message exchange) left out;
 *   region   every rank, iterations 1 and 2, switched off and on inside a
 *            user region "iterations" that is open across the gap;
 *   leave    every rank: off inside a user region "phase" around iteration
 *            1, whose end falls in the gap, on after it (the region's Leave
 *            is not recorded).
 *
 * The program records its own timestamps (CLOCK_MONOTONIC) of every
 * recording switch, compute and MPI call and prints them after
 * MPI_Finalize:
 *   window rank=R init_exit=NS finalize_enter=NS
 *   off rank=R at=NS | on rank=R at=NS
 *   call rank=R fn=MPI_Recv enter=NS exit=NS
 *   compute rank=R begin=NS end=NS
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SCOREP_USER_ENABLE
#include <scorep/SCOREP_User.h>
#else
#define SCOREP_RECORDING_OFF() ((void)0)
#define SCOREP_RECORDING_ON() ((void)0)
#define SCOREP_USER_REGION_BY_NAME_BEGIN(name, type) ((void)0)
#define SCOREP_USER_REGION_BY_NAME_END(name) ((void)0)
#endif

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define MAXREC 512
static struct rec {
	const char *what;
	int64_t a, b;
} recs[MAXREC];
static int nrecs;

static void note(const char *what, int64_t a, int64_t b)
{
	if (nrecs < MAXREC)
		recs[nrecs++] = (struct rec){ what, a, b };
}

static void compute(double ms)
{
	int64_t t0 = now(), end = t0 + (int64_t)(ms * 1e6);
	while (now() < end)
		;
	note("compute", t0, now());
}

#define TIMED(fn, args)                                                         \
	do {                                                                    \
		int64_t t0_ = now();                                            \
		fn args;                                                        \
		note(#fn, t0_, now());                                          \
	} while (0)

static void off(void)
{
	note("off", now(), 0);
	SCOREP_RECORDING_OFF();
}

static void on(void)
{
	SCOREP_RECORDING_ON();
	note("on", now(), 0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	int iters = argc > 2 ? atoi(argv[2]) : 4;
	double d = argc > 3 ? atof(argv[3]) : 20, b = argc > 4 ? atof(argv[4]) : 10;
	MPI_Init(&argc, &argv);
	int64_t init_exit = now();
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np % 2 != 0) {
		fprintf(stderr, "recording_off: run on an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int even = me % 2 == 0, partner = me ^ 1;
	double x = 1, y = 0;
	if (!strcmp(mode, "init")) {
		off();
		compute(me == 0 ? 2 * d : d);
		TIMED(MPI_Bcast, (&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		if (even)
			TIMED(MPI_Send, (&x, 1, MPI_DOUBLE, partner, 9, MPI_COMM_WORLD));
		else
			TIMED(MPI_Recv, (&y, 1, MPI_DOUBLE, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		on();
	}
	for (int it = 0; it < iters; it++) {
		int skew = !strcmp(mode, "skew") && it == me % 2 + 1;
		if ((!strcmp(mode, "both") && it == 1) || skew)
			off();
		if (!strcmp(mode, "region") && it == 1) {
			SCOREP_USER_REGION_BY_NAME_BEGIN("iterations", SCOREP_USER_REGION_TYPE_COMMON);
			off();
		}
		if (!strcmp(mode, "leave") && it == 1)
			SCOREP_USER_REGION_BY_NAME_BEGIN("phase", SCOREP_USER_REGION_TYPE_COMMON);
		/* late sender */
		if (!even) {
			compute(d);
			TIMED(MPI_Send, (&x, 1, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD));
		} else {
			TIMED(MPI_Recv, (&y, 1, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		}
		/* late receiver: a synchronous send */
		if (even) {
			TIMED(MPI_Ssend, (&x, 1, MPI_DOUBLE, partner, 3, MPI_COMM_WORLD));
		} else {
			compute(d);
			TIMED(MPI_Recv, (&y, 1, MPI_DOUBLE, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		}
		/* wait at N×N: the even ranks compute longer */
		compute(even ? d + b : b);
		TIMED(MPI_Allreduce, (&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		if (!strcmp(mode, "leave") && it == 1) {
			off();
			SCOREP_USER_REGION_BY_NAME_END("phase");
		}
		/* wait at barrier: the odd ranks compute longer */
		compute(!even ? d + b : b);
		TIMED(MPI_Barrier, (MPI_COMM_WORLD));
		if (!strcmp(mode, "leave") && it == 1)
			on();
		if ((!strcmp(mode, "both") && it == 2) || skew)
			on();
		if (!strcmp(mode, "region") && it == 2) {
			on();
			SCOREP_USER_REGION_BY_NAME_END("iterations");
		}
	}
	int64_t finalize_enter = now();
	MPI_Finalize();
	printf("window rank=%d init_exit=%lld finalize_enter=%lld\n", me, (long long)init_exit, (long long)finalize_enter);
	for (int k = 0; k < nrecs; k++) {
		if (!strcmp(recs[k].what, "off") || !strcmp(recs[k].what, "on"))
			printf("%s rank=%d at=%lld\n", recs[k].what, me, (long long)recs[k].a);
		else if (!strcmp(recs[k].what, "compute"))
			printf("compute rank=%d begin=%lld end=%lld\n", me, (long long)recs[k].a, (long long)recs[k].b);
		else
			printf("call rank=%d fn=%s enter=%lld exit=%lld\n", me, recs[k].what, (long long)recs[k].a,
			       (long long)recs[k].b);
	}
	return 0;
}
