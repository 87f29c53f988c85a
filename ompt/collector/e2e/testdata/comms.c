/*
 * A communicator from every MPI constructor that returns one, each used for
 * point-to-point messages and collectives, on 4 ranks (no OpenMP).
 *
 * Each rank prints, for every communicator it belongs to, the members as
 * the communicator itself tells them: an MPI_Allgather of the world ranks
 * in communicator-rank order (for an intercommunicator, the remote group's,
 * and its local group's from the communicator it was made of):
 *
 *   comm MPI_Cart_create rank=2 members=0,1,2,3
 *   inter MPI_Intercomm_create rank=2 local=0,2 remote=1,3
 *
 * At the end rank 0 prints the number of messages sent and of collective
 * operations (one per operation, however many processes take part; on
 * communicators of 2 processes or more) in the whole run:
 *
 *   messages=N collectives=M
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;
static long messages, collectives;

/* Counts a collective operation once, where count_here: the caller passes
 * "rank 0 of the communicator" (of an intercommunicator, rank 0 of the group
 * whose leader has the lower world rank). Operations on one process alone
 * are not counted. */
static void counted(MPI_Comm c, int count_here)
{
	int size = 0, inter = 0;
	MPI_Comm_test_inter(c, &inter);
	MPI_Comm_size(c, &size);
	if (inter) {
		int rs = 0;
		MPI_Comm_remote_size(c, &rs);
		size += rs;
	}
	if (count_here && size >= 2)
		collectives++;
}

static int rank_in(MPI_Comm c)
{
	int r;
	MPI_Comm_rank(c, &r);
	return r;
}

static void print_list(char *out, size_t n, const int *v, int k)
{
	size_t at = 0;
	out[0] = 0;
	for (int i = 0; i < k && at < n; i++)
		at += (size_t)snprintf(out + at, n - at, i ? ",%d" : "%d", v[i]);
}

/* Prints the members of intracommunicator c (an Allgather on it). */
static void members(MPI_Comm c, const char *label)
{
	int n;
	MPI_Comm_size(c, &n);
	int *all = malloc(sizeof(int) * (size_t)n);
	MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, c);
	counted(c, rank_in(c) == 0);
	char list[256];
	print_list(list, sizeof list, all, n);
	printf("comm %s rank=%d members=%s\n", label, me, list);
	fflush(stdout);
	free(all);
}

/* A ring of Sendrecv on intracommunicator c: each member sends to the next. */
static void ring(MPI_Comm c, int tag)
{
	int r = rank_in(c), n;
	MPI_Comm_size(c, &n);
	double out = me, in = -1;
	MPI_Sendrecv(&out, 1, MPI_DOUBLE, (r + 1) % n, tag, &in, 1, MPI_DOUBLE, (r + n - 1) % n, tag, c, MPI_STATUS_IGNORE);
	messages++;
}

static void allreduce(MPI_Comm c)
{
	double x = me, s = 0;
	MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, c);
	counted(c, rank_in(c) == 0);
}

static void barrier(MPI_Comm c)
{
	MPI_Barrier(c);
	counted(c, rank_in(c) == 0);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 4) {
		if (me == 0)
			fprintf(stderr, "comms: run on 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	/* Cartesian 2x2, periodic, reordering allowed: a halo in both
	 * dimensions, then the rows of the grid (Cart_sub) */
	int dims[2] = { 2, 2 }, periods[2] = { 1, 1 };
	MPI_Comm cart, row;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
	members(cart, "MPI_Cart_create");
	for (int d = 0; d < 2; d++) {
		int src, dst;
		MPI_Cart_shift(cart, d, 1, &src, &dst);
		double out = me, in = -1;
		MPI_Sendrecv(&out, 1, MPI_DOUBLE, dst, 10 + d, &in, 1, MPI_DOUBLE, src, 10 + d, cart, MPI_STATUS_IGNORE);
		messages++;
	}
	allreduce(cart);
	int remain[2] = { 0, 1 };
	MPI_Cart_sub(cart, remain, &row);
	members(row, "MPI_Cart_sub");
	ring(row, 20);
	allreduce(row);

	/* a ring as a graph, reordering allowed */
	int index[4], edges[8];
	for (int i = 0; i < 4; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + 3) % 4;
		edges[2 * i + 1] = (i + 1) % 4;
	}
	MPI_Comm graph;
	MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 1, &graph);
	members(graph, "MPI_Graph_create");
	int nb[2];
	MPI_Graph_neighbors(graph, rank_in(graph), 2, nb);
	{
		double out = me, in = -1;
		MPI_Sendrecv(&out, 1, MPI_DOUBLE, nb[1], 30, &in, 1, MPI_DOUBLE, nb[0], 30, graph, MPI_STATUS_IGNORE);
		messages++;
	}
	barrier(graph);

	/* distributed graphs: the ring given by each process's neighbours
	 * (adjacent), and by each process's own out-edge (general) */
	int left = (me + 3) % 4, right = (me + 1) % 4;
	MPI_Comm adj, dist;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
				       MPI_INFO_NULL, 1, &adj);
	members(adj, "MPI_Dist_graph_create_adjacent");
	int degree = 1;
	MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &degree, &right, MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &dist);
	members(dist, "MPI_Dist_graph_create");
	MPI_Comm dg[2] = { adj, dist };
	for (int k = 0; k < 2; k++) {
		int src, dst;
		MPI_Dist_graph_neighbors(dg[k], 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED);
		double out = me, in = -1;
		MPI_Sendrecv(&out, 1, MPI_DOUBLE, dst, 40 + k, &in, 1, MPI_DOUBLE, src, 40 + k, dg[k], MPI_STATUS_IGNORE);
		messages++;
		allreduce(dg[k]);
	}

	/* groups: the even ranks in reverse order (Comm_create, collective
	 * over the world), the odd ones in reverse order (Comm_create_group,
	 * called by them only) */
	MPI_Group world, evens, odds;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	int ev[2] = { 2, 0 }, od[2] = { 3, 1 };
	MPI_Group_incl(world, 2, ev, &evens);
	MPI_Group_incl(world, 2, od, &odds);
	MPI_Comm created = MPI_COMM_NULL, grouped = MPI_COMM_NULL;
	MPI_Comm_create(MPI_COMM_WORLD, evens, &created);
	if (created != MPI_COMM_NULL) {
		members(created, "MPI_Comm_create");
		double v = me;
		MPI_Bcast(&v, 1, MPI_DOUBLE, 0, created);
		counted(created, rank_in(created) == 0);
		if (rank_in(created) == 1) {
			MPI_Send(&v, 1, MPI_DOUBLE, 0, 50, created);
			messages++;
		} else {
			MPI_Recv(&v, 1, MPI_DOUBLE, 1, 50, created, MPI_STATUS_IGNORE);
		}
	}
	if (me % 2 == 1) {
		MPI_Comm_create_group(MPI_COMM_WORLD, odds, 7, &grouped);
		members(grouped, "MPI_Comm_create_group");
		ring(grouped, 60);
		allreduce(grouped);
	}

	/* split by node (one here), ranks in reverse order */
	MPI_Comm shared, halves;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -me, MPI_INFO_NULL, &shared);
	members(shared, "MPI_Comm_split_type");
	ring(shared, 70);
	allreduce(shared);
	/* halves: even and odd ranks, in reverse order */
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &halves);
	members(halves, "MPI_Comm_split");
	ring(halves, 80);

	/* duplicates: blocking, with info, and nonblocking (completed by Wait
	 * and by a Test loop) */
	MPI_Comm dup, dupinfo, idup, idup2;
	MPI_Comm_dup(cart, &dup);
	members(dup, "MPI_Comm_dup");
	allreduce(dup);
	MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dupinfo);
	members(dupinfo, "MPI_Comm_dup_with_info");
	ring(dupinfo, 90);
	barrier(dupinfo);
	MPI_Request rq;
	MPI_Comm_idup(MPI_COMM_WORLD, &idup, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	MPI_Comm_idup(halves, &idup2, &rq);
	for (int done = 0; !done;)
		MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
	members(idup, "MPI_Comm_idup");
	members(idup2, "MPI_Comm_idup");
	ring(idup, 100);
	allreduce(idup);
	ring(idup2, 101);
	allreduce(idup2);

	/* an intercommunicator between the halves (their rank 0, the leaders,
	 * are world ranks 2 and 3), point to point across, collectives over
	 * both groups; then merged with the odd half above */
	MPI_Comm inter, merged;
	MPI_Intercomm_create(halves, 0, MPI_COMM_WORLD, me % 2 == 0 ? 3 : 2, 5, &inter);
	{
		int ln, rn;
		MPI_Comm_size(inter, &ln);
		MPI_Comm_remote_size(inter, &rn);
		int *loc = malloc(sizeof(int) * (size_t)ln), *rem = malloc(sizeof(int) * (size_t)rn);
		MPI_Allgather(&me, 1, MPI_INT, loc, 1, MPI_INT, halves);
		counted(halves, rank_in(halves) == 0);
		MPI_Allgather(&me, 1, MPI_INT, rem, 1, MPI_INT, inter);
		int low = me % 2 == 0; /* the evens' leader, world rank 2, is the lower */
		counted(inter, low && rank_in(inter) == 0);
		char a[128], b[128];
		print_list(a, sizeof a, loc, ln);
		print_list(b, sizeof b, rem, rn);
		printf("inter MPI_Intercomm_create rank=%d local=%s remote=%s\n", me, a, b);
		fflush(stdout);
		free(loc);
		free(rem);
		double out = me, in = -1;
		int r = rank_in(inter);
		MPI_Sendrecv(&out, 1, MPI_DOUBLE, r, 110, &in, 1, MPI_DOUBLE, r, 110, inter, MPI_STATUS_IGNORE);
		messages++;
		MPI_Barrier(inter);
		counted(inter, low && r == 0);
		double v = me;
		MPI_Bcast(&v, 1, MPI_DOUBLE, low ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
		counted(inter, low && r == 0);
		double s = 0;
		MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, inter);
		counted(inter, low && r == 0);
		MPI_Intercomm_merge(inter, me % 2, &merged);
	}
	members(merged, "MPI_Intercomm_merge");
	ring(merged, 120);
	allreduce(merged);

	MPI_Comm all[] = { cart, row, graph, adj, dist, shared, halves, dup, dupinfo, idup, idup2, inter, merged };
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
		MPI_Comm_free(&all[k]);
	if (created != MPI_COMM_NULL)
		MPI_Comm_free(&created);
	if (grouped != MPI_COMM_NULL)
		MPI_Comm_free(&grouped);
	MPI_Group_free(&evens);
	MPI_Group_free(&odds);
	MPI_Group_free(&world);

	long mine[2] = { messages, collectives }, sum[2] = { 0, 0 };
	MPI_Reduce(mine, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("messages=%ld collectives=%ld\n", sum[0], sum[1] + 1); /* this reduction too */
	MPI_Finalize();
	return 0;
}
