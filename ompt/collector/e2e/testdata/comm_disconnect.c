/*
 * MPI_Comm_disconnect frees a communicator as MPI_Comm_free does (after its
 * pending communication), and MPI may give its handle to the next
 * communicator made (Open MPI and MPICH both do). 4 ranks, ITERS:
 *   - torus: a periodic 2×2 MPI_Cart_create grid (each dimension of size
 *     2 names the one neighbour twice: 4 messages a call), ITERS
 *     MPI_Neighbor_alltoall, then MPI_Comm_disconnect;
 *   - ring: a periodic 1-D MPI_Cart_create of all ranks made next
 *     (2 messages a call), ITERS MPI_Neighbor_alltoall on it;
 *   - dup: an MPI_Comm_dup of MPI_COMM_WORLD, a ring of MPI_Sendrecv on
 *     it, MPI_Comm_disconnect; then halves: MPI_Comm_split of the world
 *     into the even and the odd ranks, ranks in reverse order, a ring of
 *     MPI_Sendrecv on it.
 * Rank 0 prints
 *   reused=R messages=M collectives=C iterations=I
 * R: 1 when each new communicator got the disconnected one's handle on
 * every rank; M: the messages exchanged, counted from the topologies and
 * rings; C: the collectives (the MPI_Allgather on dup and on each half
 * that prints the members, the two final MPI_Reduce); and each rank prints "comm LABEL rank=R members=..." for dup and
 * halves (their members in communicator-rank order).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int me;

/* Prints the members of c in communicator-rank order. */
static void members(MPI_Comm c, const char *label)
{
	int n;
	MPI_Comm_size(c, &n);
	int *all = malloc(sizeof(int) * (size_t)n);
	if (!all)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, c);
	char list[256];
	size_t at = 0;
	for (int i = 0; i < n && at < sizeof list; i++)
		at += (size_t)snprintf(list + at, sizeof list - at, i ? ",%d" : "%d", all[i]);
	printf("comm %s rank=%d members=%s\n", label, me, list);
	fflush(stdout);
	free(all);
}

/* A ring of MPI_Sendrecv on c, each member sending its world rank to the
 * next: 1 when the one it received is the previous member's. */
static int ring(MPI_Comm c)
{
	int r, n;
	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &n);
	int prev_world, out = me, in = -1;
	MPI_Group g, w;
	MPI_Comm_group(c, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &w);
	int prev = (r + n - 1) % n;
	MPI_Group_translate_ranks(g, 1, &prev, w, &prev_world);
	MPI_Group_free(&g);
	MPI_Group_free(&w);
	MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 7, &in, 1, MPI_INT, prev, 7, c, MPI_STATUS_IGNORE);
	return in == prev_world;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? atoi(argv[1]) : 10, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 4) {
		if (me == 0)
			fprintf(stderr, "comm_disconnect: run on 4 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int dims2[2] = { 2, 2 }, per2[2] = { 1, 1 }, dims1[1] = { 4 }, per1[1] = { 1 };
	int out[4], in[4], errors = 0, reused = 1;
	long messages = 0;
	MPI_Comm torus, ring1, dup, halves;

	MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &torus);
	MPI_Comm old = torus;
	for (int i = 0; i < iters; i++) {
		for (int k = 0; k < 4; k++)
			out[k] = me;
		MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, torus);
		messages += 4;
	}
	MPI_Comm_disconnect(&torus);
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &ring1);
	reused &= ring1 == old;
	for (int i = 0; i < iters; i++) {
		out[0] = out[1] = me;
		MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring1);
		errors += in[0] != (me + 3) % 4 || in[1] != (me + 1) % 4;
		messages += 2;
	}

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	old = dup;
	members(dup, "MPI_Comm_dup");
	errors += !ring(dup);
	messages++;
	MPI_Comm_disconnect(&dup);
	MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &halves);
	reused &= halves == old;
	members(halves, "MPI_Comm_split");
	errors += !ring(halves);
	messages++;

	long sum[3] = { messages, errors, reused }, total[3];
	MPI_Reduce(sum, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&sum[2], &total[2], 1, MPI_LONG, MPI_LAND, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("reused=%ld messages=%ld collectives=%d iterations=%d errors=%ld\n", total[2], total[0], 1 + 2 + 2,
		       iters, total[1]);
	MPI_Comm_free(&ring1);
	MPI_Comm_free(&halves);
	MPI_Finalize();
	return 0;
}
