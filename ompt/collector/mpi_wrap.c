/*
 * PMPI wrappers of the C bindings (mpi_fortran.c routes the Fortran
 * bindings through them).
 *
 * Every wrapped call is bracketed by mpi_enter/mpi_exit on the calling
 * thread's buffer; mpi_enter carries the call site, message and collective
 * events sit inside the bracket. Peers are world ranks. Communicators get a
 * table index (local) and an id agreed by their members: the new
 * communicator's rank 0 broadcasts (world rank + 1) << 32 | its local
 * creation counter (an intercommunicator's high group's rank 0, through the
 * low group: register_new; MPI_Comm_idup's is computed by every member:
 * idup_id). Requests map to (id, kind, comm, peer, tag) in a
 * mutex-protected table so that receives completed by Wait/Test are
 * recorded with their actual source and tag. No lock of ours is held
 * across a PMPI call.
 */
#define _GNU_SOURCE
#include "collector.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* mpi_enter(func, call site): the return address into the caller, which
 * must be taken in the wrapper itself (always_inline helpers only). */
#define ENTER(fn)                                                                   \
	ptr_thread *t = ptr_self();                                                 \
	ptr_ev2(t, K_MPI_ENTER, S_##fn, ptr_loc(t, ptr_call_site(__builtin_return_address(0))))
#define EXIT(fn) ptr_ev1(t, K_MPI_EXIT, S_##fn)

enum { C_BARRIER = 1, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV,
       C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL, C_ALLTOALLV, C_REDUCE_SCATTER, C_SCAN, C_EXSCAN,
       C_REDUCE_SCATTER_BLOCK, C_ALLTOALLW, C_WIN_FENCE, C_WIN_CREATE, C_WIN_FREE };

static int world_rank = -1, world_size = 1;
static MPI_Group world_group = MPI_GROUP_NULL;
static MPI_Comm priv = MPI_COMM_NULL; /* ptrace's own duplicate of MPI_COMM_WORLD */

/* ---- communicators ------------------------------------------------------ */

struct comm_ent {
	MPI_Comm h;
	int index;
	int size, inter;
	int *members; /* world ranks of the local group */
	int rsize;
	int *remote;  /* world ranks of the remote group (intercommunicators) */
	int alive;
	int64_t id;     /* agreed by every member (both groups of an intercommunicator) */
	uint32_t idups; /* MPI_Comm_idup calls on it so far (every member calls them in one order) */
	uint32_t wins;  /* windows made on it so far (as idups: window creation is collective on it) */
	uint32_t pcolls; /* persistent collectives initialised on it so far (ordered as collectives) */
};

static pthread_mutex_t comm_mu = PTHREAD_MUTEX_INITIALIZER;
static struct comm_ent *comms;
static int ncomms, capcomms;
static _Atomic uint32_t comm_counter; /* this rank's communicator creations */

struct comm_view {
	int index, size, inter, rsize;
	const int *members, *remote;
};

static int *translate(MPI_Group grp, int *n)
{
	PMPI_Group_size(grp, n);
	int *in = malloc(sizeof(int) * (size_t)(*n > 0 ? *n : 1));
	int *out = malloc(sizeof(int) * (size_t)(*n > 0 ? *n : 1));
	if (!in || !out) {
		free(in);
		free(out);
		*n = 0;
		return NULL;
	}
	for (int i = 0; i < *n; i++)
		in[i] = i;
	PMPI_Group_translate_ranks(grp, *n, in, world_group, out);
	free(in);
	for (int i = 0; i < *n; i++)
		if (out[i] == MPI_UNDEFINED)
			out[i] = -1;
	return out;
}

/* Adds a communicator (after any PMPI calls: takes the lock itself). The
 * table of the file lists the members: an intercommunicator's both groups,
 * the one whose rank 0 has the lower world rank first, so that the members
 * of both groups write the same list (a collective on it involves both). */
static struct comm_view add_comm(MPI_Comm h, int64_t id, const char *name, int inter, int *members, int n, int *remote,
				 int rn)
{
	struct comm_view v = { -1, n, inter, rn, members, remote };
	int *both = NULL, nboth = n;
	if (inter && members && remote && n > 0 && rn > 0) {
		both = malloc(sizeof(int) * (size_t)(n + rn));
		if (both) {
			int low_first = members[0] < remote[0];
			memcpy(both, low_first ? members : remote, sizeof(int) * (size_t)(low_first ? n : rn));
			memcpy(both + (low_first ? n : rn), low_first ? remote : members,
			       sizeof(int) * (size_t)(low_first ? rn : n));
			nboth = n + rn;
		}
	}
	pthread_mutex_lock(&comm_mu);
	if (ncomms == capcomms) {
		int c = capcomms ? capcomms * 2 : 16;
		struct comm_ent *p = realloc(comms, sizeof *p * (size_t)c);
		if (!p) {
			pthread_mutex_unlock(&comm_mu);
			free(both);
			return v;
		}
		comms = p;
		capcomms = c;
	}
	const int *listed = both ? both : members;
	int idx = ptr_add_comm(id, name, listed ? listed : (int[]){ 0 }, listed ? nboth : 0);
	if (idx >= 0) {
		comms[ncomms++] = (struct comm_ent){ h, idx, n, inter, members, rn, remote, 1, id, 0, 0, 0 };
		v.index = idx;
	}
	pthread_mutex_unlock(&comm_mu);
	free(both);
	return v;
}

static int members_of(MPI_Comm c, int **members, int *n, int **remote, int *rn)
{
	int inter = 0;
	MPI_Group grp;
	PMPI_Comm_test_inter(c, &inter);
	PMPI_Comm_group(c, &grp);
	*members = translate(grp, n);
	PMPI_Group_free(&grp);
	*remote = NULL;
	*rn = 0;
	if (inter) {
		PMPI_Comm_remote_group(c, &grp);
		*remote = translate(grp, rn);
		PMPI_Group_free(&grp);
	}
	return inter;
}

static int my_rank(MPI_Comm comm);

/* The live table entry of handle c, the latest made (NULL: none); the
 * caller holds comm_mu. */
static struct comm_ent *live_ent(MPI_Comm c)
{
	for (int i = ncomms - 1; i >= 0; i--)
		if (comms[i].alive && comms[i].h == c)
			return &comms[i];
	return NULL;
}

static struct comm_view lookup(MPI_Comm c)
{
	if (c == MPI_COMM_WORLD)
		return (struct comm_view){ 0, world_size, 0, 0, NULL, NULL };
	pthread_mutex_lock(&comm_mu);
	struct comm_ent *e = live_ent(c);
	if (e) {
		struct comm_view v = { e->index, e->size, e->inter, e->rsize, e->members, e->remote };
		pthread_mutex_unlock(&comm_mu);
		return v;
	}
	pthread_mutex_unlock(&comm_mu);
	if (c == MPI_COMM_NULL || world_rank < 0)
		return (struct comm_view){ 0, world_size, 0, 0, NULL, NULL };
	/* made by a constructor we do not wrap (MPI_Comm_spawn, MPI_Comm_connect,
	 * MPI_Comm_get_parent, ...): registered locally, with an id only this
	 * rank uses */
	int *m, n, *r, rn;
	int inter = members_of(c, &m, &n, &r, &rn);
	int64_t id = (int64_t)(world_rank + 1) << 32 | (int64_t)(0x80000000u | atomic_fetch_add(&comm_counter, 1));
	return add_comm(c, id, "unknown", inter, m, n, r, rn);
}

/* World rank of the rank 0 of a group (-1: none). */
static int leader_of(MPI_Group grp)
{
	int zero = 0, w = MPI_UNDEFINED, n = 0;
	PMPI_Group_size(grp, &n);
	if (n < 1)
		return -1;
	PMPI_Group_translate_ranks(grp, 1, &zero, world_group, &w);
	return w == MPI_UNDEFINED ? -1 : w;
}

/* Whether this process is in the group of intercommunicator c whose rank 0
 * has the lower world rank (its "low" group): both groups find the same
 * answer without communicating. */
static int in_low_group(MPI_Comm c)
{
	MPI_Group lg, rg;
	PMPI_Comm_group(c, &lg);
	PMPI_Comm_remote_group(c, &rg);
	int low = leader_of(lg) < leader_of(rg);
	PMPI_Group_free(&lg);
	PMPI_Group_free(&rg);
	return low;
}

/* Registers nc under an id its members agree on already. */
static void register_agreed(MPI_Comm nc, int64_t id, const char *fn, uint32_t ctr)
{
	int *m, n, *r, rn;
	int inter = members_of(nc, &m, &n, &r, &rn);
	char name[64];
	snprintf(name, sizeof name, "%s#%u", fn, ctr);
	add_comm(nc, id, name, inter, m, n, r, rn);
}

/* Registers a communicator a wrapped constructor returned. Collective over
 * nc: one member chooses the id, (its world rank + 1) << 32 | its creation
 * counter, and the others receive it. On an intracommunicator that is its
 * rank 0 (one broadcast). On an intercommunicator, whose broadcasts go from
 * one group to the other, it is the rank 0 of the high group: it broadcasts
 * to the low group, whose rank 0 broadcasts it on to the high group. */
static void register_new(MPI_Comm nc, const char *fn)
{
	if (nc == MPI_COMM_NULL)
		return;
	uint32_t ctr = atomic_fetch_add(&comm_counter, 1) + 1;
	int64_t id = (int64_t)(world_rank + 1) << 32 | ctr;
	int inter = 0;
	PMPI_Comm_test_inter(nc, &inter);
	if (!inter) {
		PMPI_Bcast(&id, 1, MPI_INT64_T, 0, nc);
	} else {
		int lead = my_rank(nc) == 0;
		int self = lead ? MPI_ROOT : MPI_PROC_NULL;
		if (in_low_group(nc)) {
			PMPI_Bcast(&id, 1, MPI_INT64_T, 0, nc);    /* from the high group's rank 0 */
			PMPI_Bcast(&id, 1, MPI_INT64_T, self, nc); /* to the high group */
		} else {
			PMPI_Bcast(&id, 1, MPI_INT64_T, self, nc); /* to the low group */
			PMPI_Bcast(&id, 1, MPI_INT64_T, 0, nc);    /* back from its rank 0 */
		}
	}
	register_agreed(nc, id, fn, ctr);
}

/* splitmix64's finalizer: a bijection of 64-bit values. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9u;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* The id of the k-th MPI_Comm_idup of the communicator whose id is parent:
 * every member computes it alone (they call MPI_Comm_idup on a communicator
 * in one order), so the nonblocking duplication needs no extra collective
 * at its completion, where one could deadlock (a rank completing it in
 * MPI_Test while another still computes). Bit 62 set keeps it apart from
 * broadcast ids, which stay below 2^56 (world size <= 2^24). */
static int64_t idup_id(int64_t parent, uint32_t k)
{
	return (int64_t)(1ull << 62 | (mix64(mix64((uint64_t)parent) + k) >> 2));
}

/* The id of c and its next idup number (under the lock): 0 when c is unknown. */
static int next_idup(MPI_Comm c, int64_t *id, uint32_t *k)
{
	pthread_mutex_lock(&comm_mu);
	struct comm_ent *e = live_ent(c);
	if (e) {
		*id = e->id;
		*k = ++e->idups;
	}
	pthread_mutex_unlock(&comm_mu);
	return e != NULL;
}

static void forget_comm(MPI_Comm c)
{
	pthread_mutex_lock(&comm_mu);
	struct comm_ent *e = live_ent(c);
	if (e)
		e->alive = 0;
	pthread_mutex_unlock(&comm_mu);
}

/* World rank of rank r of the communicator (remote group for intercomms). */
static int64_t world_of(const struct comm_view *v, int r)
{
	if (r < 0)
		return -1; /* MPI_ANY_SOURCE, MPI_PROC_NULL, MPI_ROOT */
	if (v->inter)
		return v->remote && r < v->rsize ? v->remote[r] : -1;
	if (!v->members)
		return r; /* MPI_COMM_WORLD */
	return r < v->size ? v->members[r] : -1;
}

/* ---- requests ----------------------------------------------------------- */

enum { REQ_SEND, REQ_RECV, REQ_IDUP, REQ_COLL, REQ_NBR };

struct nbr_req; /* a nonblocking neighbourhood collective's messages (nbr_start) */
static void nbr_done(ptr_thread *t, struct nbr_req *q);

struct req {
	MPI_Request h;
	uint64_t id; /* REQ_IDUP: the new communicator's agreed id */
	int kind, tag; /* REQ_COLL: tag is the collective's op */
	int64_t peer; /* REQ_IDUP: its idup number on the parent; REQ_COLL: the root's world rank */
	struct comm_view v; /* member tables are never freed */
	MPI_Comm nc;        /* REQ_IDUP: the new communicator */
	/* A persistent request (MPI_Send_init, MPI_Recv_init) stays in the
	 * table until MPI_Request_free; each MPI_Start makes it active under
	 * a new id, as an MPI_Isend or MPI_Irecv would, and its completion
	 * makes it inactive again. bytes: what one start sends. */
	int persistent, active;
	int64_t bytes;
	int64_t sent; /* a persistent collective: what one start sends (bytes: what it receives) */
	/* owner: the thread that made it; claimed: a thread's completion
	 * call holds it (req_claim) */
	ptr_thread *owner;
	int claimed;
	/* a Test-family call tested it and did not complete it (since its
	 * start): its mpi_polled is written (req_polled) */
	int polled;
	struct nbr_req *nb; /* REQ_NBR: owned by the entry, freed by nbr_done */
	/* memory MPI may read until the request completes (a Fortran
	 * binding's converted datatype arrays: ptr_fortran_keep), owned by
	 * the entry and freed at the completion */
	void *keep;
	struct req *next;
};

#define REQ_BUCKETS 4096
#define SMALL_POLLED 64
static pthread_mutex_t req_mu = PTHREAD_MUTEX_INITIALIZER;
static struct req *req_tab[REQ_BUCKETS];
static struct req *req_free;

static unsigned req_hash(MPI_Request h)
{
	uintptr_t v = (uintptr_t)h;
	return (unsigned)((v >> 4) ^ (v >> 16)) & (REQ_BUCKETS - 1);
}

/* 0: no memory for the entry (the request is not followed). */
static int req_insert(struct req in)
{
	in.owner = ptr_self();
	in.claimed = 0;
	pthread_mutex_lock(&req_mu);
	struct req *r = req_free;
	if (r)
		req_free = r->next;
	else
		r = malloc(sizeof *r);
	if (r) {
		*r = in;
		unsigned b = req_hash(in.h);
		r->next = req_tab[b];
		req_tab[b] = r;
	}
	pthread_mutex_unlock(&req_mu);
	return r != NULL;
}

/* The memory a Fortran binding handed this call (ptr_fortran_keep), taken
 * by the wrapper of a nonblocking collective at its start. */
static void *keep_take(void)
{
	void *k = ptr_fortran_keep;
	ptr_fortran_keep = NULL;
	return k;
}

/* The call that was handed keep returned: on success with a request the
 * entry e (kind, handle, what it records) is inserted owning keep, which
 * its completion frees; else keep is freed now, MPI holding no request
 * that reads it. Without memory for the entry keep stays allocated: MPI
 * may read it until a completion ptrace will not see. */
static void req_insert_keep(struct req e, int rc, const MPI_Request *request, void *keep)
{
	if (rc != MPI_SUCCESS || *request == MPI_REQUEST_NULL) {
		free(keep);
		return;
	}
	e.h = *request;
	e.keep = keep;
	req_insert(e);
}

static void req_put(MPI_Request h, uint64_t id, int kind, const struct comm_view *v, int64_t peer, int tag, MPI_Comm nc)
{
	req_insert((struct req){ .h = h, .id = id, .kind = kind, .tag = tag, .peer = peer, .v = *v, .nc = nc });
}

static void req_put_persistent(MPI_Request h, int kind, const struct comm_view *v, int64_t peer, int tag, int64_t bytes)
{
	req_insert((struct req){ .h = h, .kind = kind, .tag = tag, .peer = peer, .v = *v, .nc = MPI_COMM_NULL,
				 .persistent = 1, .bytes = bytes });
}

/* Claims the entry of h for the calling thread's completion call: the
 * newest unclaimed one (req_insert puts it first in its bucket) this thread
 * made, else the newest unclaimed one; NULL when ptrace does not know the
 * request. The entry stays in the table, claimed, until req_take takes it
 * out by its address after the call, or req_unclaim releases it (the call
 * did not complete the request). Two reasons not to look the handle up
 * after the call:
 *  - once MPI completes a request inside MPI_Wait or MPI_Waitall it frees
 *    it, and under MPI_THREAD_MULTIPLE another thread's next MPI_Irecv or
 *    MPI_Isend gets the same handle and inserts its entry before this
 *    thread looks (IMB-MT's BiBandMT: one thread's completions recorded as
 *    another's receives, on its communicator, and the graph a cycle);
 *  - Open MPI returns one static request (ompi_request_empty) for every
 *    MPI_Isend it completes at once (a small message sent inline): many
 *    entries, of every thread, share that handle, and each completion must
 *    take one of its own thread's, a different one for each element of a
 *    Waitall's array. */
static struct req *claim_locked(MPI_Request h, ptr_thread *self)
{
	struct req *any = NULL;
	if (h == MPI_REQUEST_NULL)
		return NULL;
	for (struct req *p = req_tab[req_hash(h)]; p; p = p->next)
		if (p->h == h && !p->claimed) {
			if (p->owner == self) {
				p->claimed = 1;
				return p;
			}
			if (!any)
				any = p;
		}
	if (any)
		any->claimed = 1;
	return any;
}

static struct req *req_claim(MPI_Request h)
{
	ptr_thread *self = ptr_self();
	pthread_mutex_lock(&req_mu);
	struct req *e = claim_locked(h, self);
	pthread_mutex_unlock(&req_mu);
	return e;
}

/* req_claim of n handles under one lock. */
static void req_claim_all(int n, const MPI_Request *hs, struct req **es)
{
	ptr_thread *self = ptr_self();
	pthread_mutex_lock(&req_mu);
	for (int i = 0; i < n; i++)
		es[i] = claim_locked(hs[i], self);
	pthread_mutex_unlock(&req_mu);
}

/* Releases claimed entries the call did not complete (NULL: none). */
static void req_unclaim(int n, struct req *const *es)
{
	pthread_mutex_lock(&req_mu);
	for (int i = 0; i < n; i++)
		if (es[i])
			es[i]->claimed = 0;
	pthread_mutex_unlock(&req_mu);
}

/* A Test-family call (MPI_Test, _Testany, _Testsome, _Testall) of thread
 * t tested the claimed entries es (NULL: none) and did not complete them:
 * the first such call of a request writes its mpi_polled, inside the call
 * (docs/trace-format.md), so that the analysis knows from which call on
 * the thread polled it (its enter); later ones write nothing. Only the
 * requests whose completion the analysis reads as a wait: a message's
 * send or receive and a nonblocking collective's, active. */
static void req_polled(ptr_thread *t, int n, struct req *const *es)
{
	uint64_t ids[SMALL_POLLED];
	int k = 0;
	while (n > 0) {
		pthread_mutex_lock(&req_mu);
		for (; n > 0 && k < SMALL_POLLED; n--, es++) {
			struct req *e = *es;
			if (!e || e->polled || e->id == 0 || (e->persistent && !e->active) ||
			    (e->kind != REQ_SEND && e->kind != REQ_RECV && e->kind != REQ_COLL))
				continue;
			e->polled = 1;
			ids[k++] = e->id;
		}
		pthread_mutex_unlock(&req_mu);
		for (int j = 0; j < k; j++)
			ptr_ev1(t, K_MPI_POLLED, ids[j]);
		k = 0;
	}
}

/* Takes claimed entry e (NULL: none) out of the table; with drop whatever
 * it is, without only when it is not persistent: a persistent request's
 * completion leaves it for its next start, inactive, and the completion of
 * an inactive one (MPI returns at once) is no completion (0). */
static int req_take(struct req *e, struct req *out, int drop)
{
	if (!e)
		return 0;
	pthread_mutex_lock(&req_mu);
	for (struct req **p = &req_tab[req_hash(e->h)]; *p; p = &(*p)->next)
		if (*p == e) {
			int found = 1;
			if (e->persistent && !drop) {
				found = e->active;
				e->active = 0;
				e->claimed = 0;
				*out = *e;
			} else {
				*out = *e;
				*p = e->next;
				e->next = req_free;
				req_free = e;
			}
			pthread_mutex_unlock(&req_mu);
			return found;
		}
	pthread_mutex_unlock(&req_mu);
	return 0;
}

/* MPI_Start of h: a persistent request ptrace knows becomes active under
 * a new id, recorded as the MPI_Isend, the MPI_Irecv post or the
 * nonblocking collective's start it stands for, before the transfer
 * starts. */
static void req_start(ptr_thread *t, MPI_Request h)
{
	struct req r;
	int found = 0;
	pthread_mutex_lock(&req_mu);
	for (struct req *p = req_tab[req_hash(h)]; p; p = p->next)
		if (p->h == h && p->persistent) {
			p->id = ptr_new_id(t);
			p->active = 1;
			p->polled = 0;
			r = *p;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&req_mu);
	if (!found)
		return;
	if (r.kind == REQ_COLL)
		ptr_ev5(t, K_COLL_START, (uint64_t)r.tag, (uint64_t)r.v.index, (uint64_t)r.peer,
			(uint64_t)(r.sent > 0 ? r.sent : 0), r.id);
	else if (r.kind == REQ_SEND)
		ptr_ev5(t, K_MPI_SEND, (uint64_t)r.peer, (uint64_t)(int64_t)r.tag, (uint64_t)r.v.index, (uint64_t)r.bytes,
			r.id);
	else
		ptr_ev4(t, K_MPI_RECV_POST, (uint64_t)r.peer, (uint64_t)(int64_t)(r.tag < 0 ? -1 : r.tag),
			(uint64_t)r.v.index, r.id);
}

static int64_t status_bytes(const MPI_Status *st)
{
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return n;
}

static void record_recv(ptr_thread *t, const struct comm_view *v, const MPI_Status *st, uint64_t req)
{
	ptr_ev5(t, K_MPI_RECV, (uint64_t)world_of(v, st->MPI_SOURCE), (uint64_t)(int64_t)st->MPI_TAG, (uint64_t)v->index,
		(uint64_t)status_bytes(st), req);
}

/* A request completed (its entry as req_claim found it before the call). */
static void completed(ptr_thread *t, struct req *e, const MPI_Status *st)
{
	struct req r;
	if (!req_take(e, &r, 0))
		return;
	if (!r.persistent)
		free(r.keep); /* complete: MPI reads it no more */
	if (r.kind == REQ_NBR) {
		nbr_done(t, r.nb);
		return;
	}
	if (r.kind == REQ_IDUP) {
		/* usable from now on: registered under the id every member computed */
		register_agreed(r.nc, (int64_t)r.id, "MPI_Comm_idup", (uint32_t)r.peer);
		return;
	}
	if (r.kind == REQ_COLL) {
		/* a nonblocking collective's completion (bytes: what it receives) */
		ptr_ev5(t, K_COLL_COMPLETE, (uint64_t)r.tag, (uint64_t)r.v.index, (uint64_t)r.peer,
			(uint64_t)(r.bytes > 0 ? r.bytes : 0), r.id);
		return;
	}
	int cancelled = 0;
	PMPI_Test_cancelled(st, &cancelled);
	if (r.kind == REQ_SEND && cancelled)
		/* the message never left (MPICH cancels a send not yet
		 * matched): withdraws its mpi_send, which no receive matches */
		ptr_ev1(t, K_MPI_CANCELLED, r.id);
	if (r.kind == REQ_SEND || cancelled) {
		/* A cancelled receive received nothing: its status's source and
		 * tag are undefined (MPICH leaves the posted ones or garbage,
		 * which read as a receive no send matched; Open MPI
		 * MPI_ANY_SOURCE), so it completes as a request only. */
		ptr_ev1(t, K_MPI_REQUEST_DONE, r.id);
		return;
	}
	/* the actual source and tag, in the communicator it was posted on */
	record_recv(t, &r.v, st, r.id);
}

static int64_t tsize(MPI_Datatype dt)
{
	int s = 0;
	if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &s) != MPI_SUCCESS)
		return 0;
	return s;
}

/* ---- clock offsets, init, finalize -------------------------------------- */

#define CLOCK_ROUNDS 10
#define CLOCK_TAG 0x7074

/* Ping-pong with rank 0 on ptrace's private communicator; the best of
 * CLOCK_ROUNDS round trips gives the offset and its error (half the RTT). */
static void measure_clock(const char *when)
{
	if (priv == MPI_COMM_NULL)
		return;
	if (world_rank == 0) {
		for (int r = 1; r < world_size; r++)
			for (int k = 0; k <= CLOCK_ROUNDS; k++) {
				int64_t v;
				PMPI_Recv(&v, 1, MPI_INT64_T, r, CLOCK_TAG, priv, MPI_STATUS_IGNORE);
				v = (int64_t)ptr_now();
				PMPI_Send(&v, 1, MPI_INT64_T, r, CLOCK_TAG, priv);
			}
		ptr_add_clock(when, (int64_t)ptr_now(), 0, 0);
		return;
	}
	int64_t best = INT64_MAX, off = 0, local = 0;
	for (int k = 0; k <= CLOCK_ROUNDS; k++) {
		int64_t t1 = (int64_t)ptr_now(), t0;
		PMPI_Send(&t1, 1, MPI_INT64_T, 0, CLOCK_TAG, priv);
		PMPI_Recv(&t0, 1, MPI_INT64_T, 0, CLOCK_TAG, priv, MPI_STATUS_IGNORE);
		int64_t t2 = (int64_t)ptr_now(), rtt = t2 - t1;
		if (k > 0 && rtt < best) { /* round 0 warms up */
			best = rtt;
			local = t1 + rtt / 2;
			off = t0 - local;
		}
	}
	ptr_add_clock(when, local, off, best / 2);
}

static void after_init(void)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
	PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
	PMPI_Comm_dup(MPI_COMM_WORLD, &priv);
	/* one directory for the run: PTRACE_DIR, or rank 0's choice */
	char dir[4096] = "";
	if (ptr_dir()[0]) {
		strncpy(dir, ptr_dir(), sizeof dir - 1);
	} else {
		if (world_rank == 0) {
			char name[256], cwd[3800];
			ptr_default_dir(name, sizeof name);
			if (name[0] != '/' && getcwd(cwd, sizeof cwd))
				snprintf(dir, sizeof dir, "%s/%s", cwd, name);
			else
				snprintf(dir, sizeof dir, "%s", name);
		}
		PMPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, priv);
		/* ptrace record started by the launcher (mpirun -np N ptrace
		 * record -- ./app) leaves the directory to this agreement and
		 * learns it here, to find its rank's file */
		const char *out = getenv("PTRACE_DIR_OUT");
		FILE *f = out && out[0] ? fopen(out, "w") : NULL;
		if (f) {
			fputs(dir, f);
			fclose(f);
		}
	}
	int *world = malloc(sizeof(int) * (size_t)world_size);
	if (world)
		for (int i = 0; i < world_size; i++)
			world[i] = i;
	add_comm(MPI_COMM_WORLD, 0, "MPI_COMM_WORLD", 0, world, world ? world_size : 0, NULL, 0);
	int *self = malloc(sizeof(int));
	if (self)
		self[0] = world_rank;
	add_comm(MPI_COMM_SELF, (int64_t)(world_rank + 1) << 32, "MPI_COMM_SELF", 0, self, self ? 1 : 0, NULL, 0);
	measure_clock("init");
	/* one run identity for all ranks, in every header: rank 0 draws it */
	uint8_t rid[16] = { 0 };
	if (world_rank == 0)
		ptr_random_run_id(rid);
	PMPI_Bcast(rid, 16, MPI_BYTE, 0, priv);
	ptr_set_run_id(rid);
	ptr_set_rank(world_rank, world_size, dir);
	ptr_install_signals();
}

int MPI_Init(int *argc, char ***argv)
{
	ptr_activate();
	ENTER(MPI_Init);
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		after_init();
	EXIT(MPI_Init);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	ptr_activate();
	ENTER(MPI_Init_thread);
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		after_init();
	EXIT(MPI_Init_thread);
	return rc;
}

int MPI_Finalize(void)
{
	ENTER(MPI_Finalize);
	measure_clock("finalize");
	/* The rank files are completed at exit (ompt_finalize or atexit), after
	 * the events that follow MPI_Finalize (implicit task and thread ends), so
	 * the final event counts are not known yet: the manifest lists them as 0
	 * ("unknown", docs/trace-format.md) and the bytes written so far (after
	 * writing out every buffer). */
	if (priv != MPI_COMM_NULL) {
		ptr_flush_all(); /* so that the bytes are nearly final */
		int64_t mine[2] = { 0, ptr_file_bytes() }, *all = NULL;
		if (world_rank == 0)
			all = calloc((size_t)world_size * 2, sizeof(int64_t));
		PMPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, priv);
		if (world_rank == 0 && all) {
			int64_t *ev = calloc((size_t)world_size, sizeof(int64_t)), *by = calloc((size_t)world_size, sizeof(int64_t));
			if (ev && by) {
				for (int r = 0; r < world_size; r++)
					ev[r] = all[2 * r], by[r] = all[2 * r + 1];
				ptr_write_manifest(world_size, ev, by);
				ptr_mpi_manifest_done();
			}
			free(ev);
			free(by);
		}
		free(all);
		PMPI_Comm_free(&priv);
	}
	if (world_group != MPI_GROUP_NULL)
		PMPI_Group_free(&world_group);
	int rc = PMPI_Finalize();
	EXIT(MPI_Finalize);
	return rc;
}

/* The aborting rank may end without running exit handlers: write what was
 * recorded first (the other ranks get SIGTERM from mpirun: see on_signal). */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
	ENTER(MPI_Abort);
	ptr_flush_all();
	int rc = PMPI_Abort(comm, errorcode);
	EXIT(MPI_Abort);
	return rc;
}

/* ---- point to point ----------------------------------------------------- */

#define SEND_BODY(fn, call)                                                                              \
	ENTER(fn);                                                                                       \
	struct comm_view v = lookup(comm);                                                               \
	ptr_ev5(t, K_MPI_SEND, (uint64_t)world_of(&v, dest), (uint64_t)(int64_t)tag, (uint64_t)v.index,  \
		(uint64_t)(count * tsize(datatype)), 0);                                                 \
	int rc = call;                                                                                   \
	EXIT(fn);                                                                                        \
	return rc

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND_BODY(MPI_Send, PMPI_Send(buf, count, datatype, dest, tag, comm));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND_BODY(MPI_Ssend, PMPI_Ssend(buf, count, datatype, dest, tag, comm));
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND_BODY(MPI_Bsend, PMPI_Bsend(buf, count, datatype, dest, tag, comm));
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	SEND_BODY(MPI_Rsend, PMPI_Rsend(buf, count, datatype, dest, tag, comm));
}

#define ISEND_BODY(fn, call)                                                                                 \
	ENTER(fn);                                                                                           \
	struct comm_view v = lookup(comm);                                                                   \
	uint64_t id = ptr_new_id(t);                                                                         \
	int64_t peer = world_of(&v, dest);                                                                   \
	ptr_ev5(t, K_MPI_SEND, (uint64_t)peer, (uint64_t)(int64_t)tag, (uint64_t)v.index,                    \
		(uint64_t)(count * tsize(datatype)), id);                                                    \
	int rc = call;                                                                                       \
	if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)                                               \
		req_put(*request, id, REQ_SEND, &v, peer, tag, MPI_COMM_NULL);                               \
	EXIT(fn);                                                                                            \
	return rc

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	ISEND_BODY(MPI_Isend, PMPI_Isend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	ISEND_BODY(MPI_Issend, PMPI_Issend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	ISEND_BODY(MPI_Ibsend, PMPI_Ibsend(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	ISEND_BODY(MPI_Irsend, PMPI_Irsend(buf, count, datatype, dest, tag, comm, request));
}

/* Persistent requests: recorded at each MPI_Start (req_start). */
#define SEND_INIT_BODY(fn, call)                                                                         \
	ENTER(fn);                                                                                       \
	struct comm_view v = lookup(comm);                                                               \
	int rc = call;                                                                                   \
	if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)                                           \
		req_put_persistent(*request, REQ_SEND, &v, world_of(&v, dest), tag, count * tsize(datatype)); \
	EXIT(fn);                                                                                        \
	return rc

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		  MPI_Request *request)
{
	SEND_INIT_BODY(MPI_Send_init, PMPI_Send_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		   MPI_Request *request)
{
	SEND_INIT_BODY(MPI_Ssend_init, PMPI_Ssend_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		   MPI_Request *request)
{
	SEND_INIT_BODY(MPI_Bsend_init, PMPI_Bsend_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		   MPI_Request *request)
{
	SEND_INIT_BODY(MPI_Rsend_init, PMPI_Rsend_init(buf, count, datatype, dest, tag, comm, request));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
		  MPI_Request *request)
{
	ENTER(MPI_Recv_init);
	struct comm_view v = lookup(comm);
	int rc = PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
	if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)
		req_put_persistent(*request, REQ_RECV, &v, world_of(&v, source), tag, 0);
	EXIT(MPI_Recv_init);
	return rc;
}

int MPI_Start(MPI_Request *request)
{
	ENTER(MPI_Start);
	req_start(t, *request);
	int rc = PMPI_Start(request);
	EXIT(MPI_Start);
	return rc;
}

int MPI_Startall(int count, MPI_Request requests[])
{
	ENTER(MPI_Startall);
	for (int i = 0; i < count; i++)
		req_start(t, requests[i]);
	int rc = PMPI_Startall(count, requests);
	EXIT(MPI_Startall);
	return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	ENTER(MPI_Recv);
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		struct comm_view v = lookup(comm);
		record_recv(t, &v, st, 0);
	}
	EXIT(MPI_Recv);
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
	ENTER(MPI_Irecv);
	struct comm_view v = lookup(comm);
	uint64_t id = ptr_new_id(t);
	int64_t peer = world_of(&v, source);
	ptr_ev4(t, K_MPI_RECV_POST, (uint64_t)peer, (uint64_t)(int64_t)(tag < 0 ? -1 : tag), (uint64_t)v.index, id);
	int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
	if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)
		req_put(*request, id, REQ_RECV, &v, peer, tag, MPI_COMM_NULL);
	EXIT(MPI_Irecv);
	return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	ENTER(MPI_Sendrecv);
	struct comm_view v = lookup(comm);
	ptr_ev5(t, K_MPI_SEND, (uint64_t)world_of(&v, dest), (uint64_t)(int64_t)sendtag, (uint64_t)v.index,
		(uint64_t)(sendcount * tsize(sendtype)), 0);
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
			       comm, st);
	if (rc == MPI_SUCCESS)
		record_recv(t, &v, st, 0);
	EXIT(MPI_Sendrecv);
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
			 MPI_Comm comm, MPI_Status *status)
{
	ENTER(MPI_Sendrecv_replace);
	struct comm_view v = lookup(comm);
	ptr_ev5(t, K_MPI_SEND, (uint64_t)world_of(&v, dest), (uint64_t)(int64_t)sendtag, (uint64_t)v.index,
		(uint64_t)(count * tsize(datatype)), 0);
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, st);
	if (rc == MPI_SUCCESS)
		record_recv(t, &v, st, 0);
	EXIT(MPI_Sendrecv_replace);
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	ENTER(MPI_Probe);
	int rc = PMPI_Probe(source, tag, comm, status);
	EXIT(MPI_Probe);
	return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	ENTER(MPI_Iprobe);
	int rc = PMPI_Iprobe(source, tag, comm, flag, status);
	EXIT(MPI_Iprobe);
	return rc;
}

/* Matched probes (MPI_Mprobe, MPI_Improbe): the message handle a probe
 * returns names no communicator, so the probe keeps it beside the handle
 * for the MPI_Mrecv or MPI_Imrecv that receives it, on any thread. MPI
 * requires every probed message to be received, so the table holds the
 * messages probed and not yet received: a few, grown as needed (an entry
 * that cannot be stored leaves that message's receive unrecorded, an
 * unmatched send in the analysis). */
struct msg_ent {
	MPI_Message h;
	struct comm_view v;
};
static struct msg_ent *msg_tab;
static int msg_n, msg_cap;
static pthread_mutex_t msg_mu = PTHREAD_MUTEX_INITIALIZER;

static void msg_put(MPI_Message h, MPI_Comm comm)
{
	if (h == MPI_MESSAGE_NULL || h == MPI_MESSAGE_NO_PROC)
		return;
	struct comm_view v = lookup(comm);
	pthread_mutex_lock(&msg_mu);
	if (msg_n == msg_cap) {
		int cap = msg_cap ? 2 * msg_cap : 16;
		struct msg_ent *t = realloc(msg_tab, (size_t)cap * sizeof *t);
		if (t) {
			msg_tab = t;
			msg_cap = cap;
		}
	}
	if (msg_n < msg_cap)
		msg_tab[msg_n++] = (struct msg_ent){ h, v };
	pthread_mutex_unlock(&msg_mu);
}

/* Takes h's entry out of the table: 0 when it is not there. */
static int msg_take(MPI_Message h, struct comm_view *out)
{
	int found = 0;
	pthread_mutex_lock(&msg_mu);
	for (int i = msg_n - 1; i >= 0; i--)
		if (msg_tab[i].h == h) {
			*out = msg_tab[i].v;
			msg_tab[i] = msg_tab[--msg_n];
			found = 1;
			break;
		}
	pthread_mutex_unlock(&msg_mu);
	return found;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	ENTER(MPI_Mprobe);
	int rc = PMPI_Mprobe(source, tag, comm, message, status);
	if (rc == MPI_SUCCESS)
		msg_put(*message, comm);
	EXIT(MPI_Mprobe);
	return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
	ENTER(MPI_Improbe);
	int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
	if (rc == MPI_SUCCESS && *flag)
		msg_put(*message, comm);
	EXIT(MPI_Improbe);
	return rc;
}

/* The receive of a probed message: recorded as MPI_Recv's is, from the
 * status (its source, tag and size), in the probe's communicator. */
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
	ENTER(MPI_Mrecv);
	MPI_Message h = *message;
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Mrecv(buf, count, datatype, message, st);
	struct comm_view v;
	if (rc == MPI_SUCCESS && msg_take(h, &v))
		record_recv(t, &v, st, 0);
	EXIT(MPI_Mrecv);
	return rc;
}

/* A nonblocking one: posted from any source with any tag (the message's
 * own are known only from the completion's status), completed as an
 * MPI_Irecv's request. */
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
	ENTER(MPI_Imrecv);
	MPI_Message h = *message;
	int rc = PMPI_Imrecv(buf, count, datatype, message, request);
	struct comm_view v;
	if (rc == MPI_SUCCESS && msg_take(h, &v) && *request != MPI_REQUEST_NULL) {
		uint64_t id = ptr_new_id(t);
		ptr_ev4(t, K_MPI_RECV_POST, (uint64_t)(int64_t)-1, (uint64_t)(int64_t)-1, (uint64_t)v.index, id);
		req_put(*request, id, REQ_RECV, &v, -1, -1, MPI_COMM_NULL);
	}
	EXIT(MPI_Imrecv);
	return rc;
}

/* Whether claimed entry e (NULL: none) is a receive started by MPI_Irecv
 * (not persistent) and not yet completed. */
static int recv_in_flight(const struct req *e)
{
	if (!e)
		return 0;
	pthread_mutex_lock(&req_mu);
	int r = e->kind == REQ_RECV && !e->persistent && e->id != 0;
	pthread_mutex_unlock(&req_mu);
	return r;
}

int MPI_Request_free(MPI_Request *request)
{
	ENTER(MPI_Request_free);
	struct req *e = req_claim(*request);
	/* An active receive may have ended already, unobserved: received its
	 * message, or cancelled (MPI_Cancel, then MPI_Request_free without a
	 * wait: a timeout's pattern, legal, MPI 4.0 §3.8.4). A test, which
	 * does not block, tells: when it completes the request (and frees it
	 * as MPI_Request_free would), that completion is recorded, and only a
	 * receive still in flight is one freed while active (else a cancelled
	 * one took its channel's next message, every later one off). */
	if (recv_in_flight(e)) {
		MPI_Status st;
		int flag = 0;
		if (PMPI_Test(request, &flag, &st) == MPI_SUCCESS && flag) {
			completed(t, e, &st);
			EXIT(MPI_Request_free);
			return MPI_SUCCESS;
		}
	}
	int rc = PMPI_Request_free(request);
	struct req r;
	if (rc == MPI_SUCCESS) {
		int found = req_take(e, &r, 1);
		if (found && r.kind == REQ_NBR) /* completes unobserved */
			free(r.nb);
		/* a polled request completes unobserved too: its mpi_polled
		 * again, outside a Test-family call, ends the polling (no
		 * completion will) */
		int active = found && r.id != 0 && (!r.persistent || r.active);
		if (active && r.polled)
			ptr_ev1(t, K_MPI_POLLED, r.id);
		/* a receive freed while active still receives its message,
		 * when and from whom no call will say: its post's envelope,
		 * to take that message out of its channel's pairing */
		if (active && r.kind == REQ_RECV)
			ptr_ev4(t, K_MPI_RECV_FREED, (uint64_t)r.peer, (uint64_t)(int64_t)(r.tag < 0 ? -1 : r.tag),
				(uint64_t)r.v.index, r.id);
		/* r.keep stays allocated: freeing a nonblocking collective's
		 * request is erroneous (MPI 4.0 §6.12), and the operation,
		 * still going on, may read it */
	} else
		req_unclaim(1, &e);
	EXIT(MPI_Request_free);
	return rc;
}

/* ---- completion --------------------------------------------------------- */

#define SMALL 64

/* Request and status arrays of a multi-completion call: the caller's
 * statuses, or ours when they are ignored (we need source and tag). */
struct multi {
	struct req *hs[SMALL], **h; /* the requests' entries (req_claim) */
	int n;                      /* how many: 0 when multi_begin failed */
	MPI_Status ss[SMALL], *s;
	int own_s;
};

static int multi_begin(struct multi *m, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
	m->n = 0;
	m->h = n <= SMALL ? m->hs : malloc(sizeof(struct req *) * (size_t)n);
	m->own_s = statuses == MPI_STATUSES_IGNORE;
	m->s = !m->own_s ? statuses : n <= SMALL ? m->ss : malloc(sizeof(MPI_Status) * (size_t)n);
	if (!m->h || !m->s) {
		if (m->h && m->h != m->hs)
			free(m->h);
		m->h = NULL; /* nothing claimed */
		return 0;
	}
	if (n > 0)
		req_claim_all(n, reqs, m->h);
	m->n = n;
	return 1;
}

/* Element i of a multi-completion call completed: its entry taken. */
static void multi_done(ptr_thread *t, struct multi *m, int i, const MPI_Status *st)
{
	completed(t, m->h[i], st);
	m->h[i] = NULL;
}

/* A Test-family call that returned rc: the elements it did not complete
 * were polled (req_polled). */
static void multi_polled(ptr_thread *t, struct multi *m, int rc)
{
	if (rc == MPI_SUCCESS && m->h && m->n > 0)
		req_polled(t, m->n, m->h);
}

/* Releases the entries of the elements that did not complete. */
static void multi_end(struct multi *m)
{
	if (m->h && m->n > 0)
		req_unclaim(m->n, m->h);
	if (m->h && m->h != m->hs)
		free(m->h);
	if (m->own_s && m->s && m->s != m->ss)
		free(m->s);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	ENTER(MPI_Wait);
	struct req *h = req_claim(*request);
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Wait(request, st);
	if (rc == MPI_SUCCESS)
		completed(t, h, st);
	else
		req_unclaim(1, &h);
	EXIT(MPI_Wait);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	ENTER(MPI_Test);
	struct req *h = req_claim(*request);
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Test(request, flag, st);
	if (rc == MPI_SUCCESS && *flag)
		completed(t, h, st);
	else {
		if (rc == MPI_SUCCESS)
			req_polled(t, 1, &h);
		req_unclaim(1, &h);
	}
	EXIT(MPI_Test);
	return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	ENTER(MPI_Waitall);
	struct multi m;
	int rc;
	if (!multi_begin(&m, count, requests, statuses)) {
		multi_end(&m);
		rc = PMPI_Waitall(count, requests, statuses);
	} else {
		rc = PMPI_Waitall(count, requests, m.s);
		if (rc == MPI_SUCCESS)
			for (int i = 0; i < count; i++)
				multi_done(t, &m, i, &m.s[i]);
		multi_end(&m);
	}
	EXIT(MPI_Waitall);
	return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	ENTER(MPI_Testall);
	struct multi m;
	int rc;
	if (!multi_begin(&m, count, requests, statuses)) {
		multi_end(&m);
		rc = PMPI_Testall(count, requests, flag, statuses);
	} else {
		rc = PMPI_Testall(count, requests, flag, m.s);
		if (rc == MPI_SUCCESS && *flag)
			for (int i = 0; i < count; i++)
				multi_done(t, &m, i, &m.s[i]);
		multi_polled(t, &m, rc);
		multi_end(&m);
	}
	EXIT(MPI_Testall);
	return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	ENTER(MPI_Waitany);
	struct multi m;
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc;
	if (!multi_begin(&m, count, requests, &own)) {
		rc = PMPI_Waitany(count, requests, index, st);
	} else {
		rc = PMPI_Waitany(count, requests, index, st);
		if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
			multi_done(t, &m, *index, st);
	}
	multi_end(&m);
	EXIT(MPI_Waitany);
	return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	ENTER(MPI_Testany);
	struct multi m;
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
	int rc;
	if (!multi_begin(&m, count, requests, &own)) {
		rc = PMPI_Testany(count, requests, index, flag, st);
	} else {
		rc = PMPI_Testany(count, requests, index, flag, st);
		if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
			multi_done(t, &m, *index, st);
	}
	multi_polled(t, &m, rc);
	multi_end(&m);
	EXIT(MPI_Testany);
	return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
	ENTER(MPI_Waitsome);
	struct multi m;
	int rc;
	if (!multi_begin(&m, incount, requests, statuses)) {
		multi_end(&m);
		rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
	} else {
		rc = PMPI_Waitsome(incount, requests, outcount, indices, m.s);
		if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
			for (int i = 0; i < *outcount; i++)
				if (indices[i] >= 0 && indices[i] < incount && m.h[indices[i]])
					multi_done(t, &m, indices[i], &m.s[i]);
		multi_end(&m);
	}
	EXIT(MPI_Waitsome);
	return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
	ENTER(MPI_Testsome);
	struct multi m;
	int rc;
	if (!multi_begin(&m, incount, requests, statuses)) {
		multi_end(&m);
		rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
	} else {
		rc = PMPI_Testsome(incount, requests, outcount, indices, m.s);
		if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
			for (int i = 0; i < *outcount; i++)
				if (indices[i] >= 0 && indices[i] < incount && m.h[indices[i]])
					multi_done(t, &m, indices[i], &m.s[i]);
		multi_polled(t, &m, rc);
		multi_end(&m);
	}
	EXIT(MPI_Testsome);
	return rc;
}

/* ---- collectives -------------------------------------------------------- */

struct coll {
	int op, index;
	int64_t root;
};

/* World rank of a collective's root as the caller names it: on an
 * intercommunicator the root passes MPI_ROOT, the other group the root's
 * rank there, and the root's group's other members MPI_PROC_NULL (they take
 * no part: -1). */
static int64_t root_world(const struct comm_view *v, int root)
{
	if (v->inter)
		return root == MPI_ROOT ? world_rank : world_of(v, root);
	return root < 0 ? -1 : world_of(v, root);
}

static struct coll coll_begin(ptr_thread *t, int op, const struct comm_view *v, int root, int64_t sent, int64_t recvd)
{
	struct coll c = { op, v->index, root_world(v, root) };
	ptr_ev5(t, K_COLL_BEGIN, (uint64_t)op, (uint64_t)c.index, (uint64_t)c.root, (uint64_t)(sent > 0 ? sent : 0),
		(uint64_t)(recvd > 0 ? recvd : 0));
	return c;
}

static void coll_end(ptr_thread *t, const struct coll *c)
{
	ptr_ev3(t, K_COLL_END, (uint64_t)c->op, (uint64_t)c->index, (uint64_t)c->root);
}

static int my_rank(MPI_Comm comm)
{
	int r = 0;
	PMPI_Comm_rank(comm, &r);
	return r;
}

static int64_t sum(const int *a, int n)
{
	int64_t s = 0;
	for (int i = 0; a && i < n; i++)
		s += a[i];
	return s;
}

#define COLL(fn, op, root, sent, recvd, call)                                   \
	ENTER(fn);                                                              \
	struct comm_view v = lookup(comm);                                      \
	struct coll c = coll_begin(t, op, &v, root, sent, recvd);               \
	int rc = call;                                                          \
	coll_end(t, &c);                                                        \
	EXIT(fn);                                                               \
	return rc

int MPI_Barrier(MPI_Comm comm) { COLL(MPI_Barrier, C_BARRIER, -1, 0, 0, PMPI_Barrier(comm)); }

/* A rooted collective's caller: the root, a process the root sends to or
 * receives from, or (intercommunicators: MPI_PROC_NULL) neither. */
enum { R_ROOT, R_LEAF, R_NONE };

static int role(const struct comm_view *v, int me, int root)
{
	if (v->inter)
		return root == MPI_ROOT ? R_ROOT : root == MPI_PROC_NULL ? R_NONE : R_LEAF;
	return me == root ? R_ROOT : R_LEAF;
}

/* The processes a root sends to or receives from: the other group of an
 * intercommunicator. */
static int leaves(const struct comm_view *v) { return v->inter ? v->rsize : v->size; }

/* Per-peer datatypes: the bytes are each count times its own type's size. */
static int64_t sum_typed(const int *counts, const MPI_Datatype *types, int n)
{
	int64_t s = 0;
	for (int i = 0; counts && types && i < n; i++)
		s += counts[i] * tsize(types[i]);
	return s;
}

/* What a collective call sends and receives, in bytes, from its arguments:
 * one function per family, for its blocking, nonblocking and persistent
 * calls alike. */
struct xfer {
	int64_t s, r;
};

static struct xfer x_bcast(int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int ro = role(&w, my_rank(comm), root);
	int64_t b = count * tsize(datatype);
	return (struct xfer){ ro == R_ROOT ? b : 0, ro == R_LEAF ? b : 0 };
}

static struct xfer x_reduce(int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int ro = role(&w, my_rank(comm), root);
	int64_t b = count * tsize(datatype);
	return (struct xfer){ ro == R_LEAF || (ro == R_ROOT && !w.inter) ? b : 0, ro == R_ROOT ? b : 0 };
}

static struct xfer x_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
			    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int ro = role(&w, my_rank(comm), root);
	int64_t r = ro == R_ROOT ? (int64_t)recvcount * tsize(recvtype) * leaves(&w) : 0;
	int64_t s = ro == R_NONE || (ro == R_ROOT && w.inter) ? 0
		    : sendbuf == MPI_IN_PLACE ? r / (w.size ? w.size : 1) : sendcount * tsize(sendtype);
	return (struct xfer){ s, r };
}

static struct xfer x_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int recvcounts[],
			     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int ro = role(&w, my_rank(comm), root);
	int64_t r = ro == R_ROOT ? sum(recvcounts, leaves(&w)) * tsize(recvtype) : 0;
	int64_t s = ro == R_NONE || (ro == R_ROOT && w.inter) || sendbuf == MPI_IN_PLACE ? 0 : sendcount * tsize(sendtype);
	return (struct xfer){ s, r };
}

static struct xfer x_scatter(int sendcount, MPI_Datatype sendtype, const void *recvbuf, int recvcount,
			     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int ro = role(&w, my_rank(comm), root);
	int64_t s = ro == R_ROOT ? (int64_t)sendcount * tsize(sendtype) * leaves(&w) : 0;
	int64_t r = ro == R_NONE || (ro == R_ROOT && w.inter) || recvbuf == MPI_IN_PLACE ? 0 : recvcount * tsize(recvtype);
	return (struct xfer){ s, r };
}

static struct xfer x_scatterv(const int sendcounts[], MPI_Datatype sendtype, const void *recvbuf, int recvcount,
			      MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int ro = role(&w, my_rank(comm), root);
	int64_t s = ro == R_ROOT ? sum(sendcounts, leaves(&w)) * tsize(sendtype) : 0;
	int64_t r = ro == R_NONE || (ro == R_ROOT && w.inter) || recvbuf == MPI_IN_PLACE ? 0 : recvcount * tsize(recvtype);
	return (struct xfer){ s, r };
}

static struct xfer x_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
			       MPI_Datatype recvtype, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int64_t r = (int64_t)recvcount * tsize(recvtype) * w.size;
	int64_t s = sendbuf == MPI_IN_PLACE ? r / (w.size ? w.size : 1) : sendcount * tsize(sendtype);
	return (struct xfer){ s, r };
}

static struct xfer x_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int recvcounts[],
				MPI_Datatype recvtype, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int64_t r = sum(recvcounts, w.size) * tsize(recvtype);
	int64_t s = sendbuf == MPI_IN_PLACE ? 0 : sendcount * tsize(sendtype);
	return (struct xfer){ s, r };
}

static struct xfer x_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
			      MPI_Datatype recvtype, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int64_t r = (int64_t)recvcount * tsize(recvtype) * w.size;
	int64_t s = sendbuf == MPI_IN_PLACE ? r : (int64_t)sendcount * tsize(sendtype) * w.size;
	return (struct xfer){ s, r };
}

static struct xfer x_alltoallv(const void *sendbuf, const int sendcounts[], MPI_Datatype sendtype,
			       const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int64_t r = sum(recvcounts, w.size) * tsize(recvtype);
	int64_t s = sendbuf == MPI_IN_PLACE ? r : sum(sendcounts, w.size) * tsize(sendtype);
	return (struct xfer){ s, r };
}

static struct xfer x_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Datatype sendtypes[],
			       const int recvcounts[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int n = w.inter ? w.rsize : w.size;
	int64_t r = sum_typed(recvcounts, recvtypes, n);
	int64_t s = sendbuf == MPI_IN_PLACE ? r : sum_typed(sendcounts, sendtypes, n);
	return (struct xfer){ s, r };
}

static struct xfer x_reduce_scatter(const int recvcounts[], MPI_Datatype datatype, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int64_t sz = tsize(datatype);
	int me = my_rank(comm);
	return (struct xfer){ sum(recvcounts, w.size) * sz, recvcounts && me < w.size ? recvcounts[me] * sz : 0 };
}

static struct xfer x_reduce_scatter_block(int recvcount, MPI_Datatype datatype, MPI_Comm comm)
{
	struct comm_view w = lookup(comm);
	int64_t r = recvcount * tsize(datatype);
	return (struct xfer){ r * w.size, r };
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	struct xfer x = x_bcast(count, datatype, root, comm);
	COLL(MPI_Bcast, C_BCAST, root, x.s, x.r, PMPI_Bcast(buffer, count, datatype, root, comm));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
	struct xfer x = x_reduce(count, datatype, root, comm);
	COLL(MPI_Reduce, C_REDUCE, root, x.s, x.r, PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	int64_t b = count * tsize(datatype);
	COLL(MPI_Allreduce, C_ALLREDUCE, -1, b, b, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
	       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct xfer x = x_gather(sendbuf, sendcount, sendtype, recvcount, recvtype, root, comm);
	COLL(MPI_Gather, C_GATHER, root, x.s, x.r,
	     PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct xfer x = x_gatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm);
	COLL(MPI_Gatherv, C_GATHERV, root, x.s, x.r,
	     PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct xfer x = x_scatter(sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	COLL(MPI_Scatter, C_SCATTER, root, x.s, x.r,
	     PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct xfer x = x_scatterv(sendcounts, sendtype, recvbuf, recvcount, recvtype, root, comm);
	COLL(MPI_Scatterv, C_SCATTERV, root, x.s, x.r,
	     PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, MPI_Comm comm)
{
	struct xfer x = x_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
	COLL(MPI_Allgather, C_ALLGATHER, -1, x.s, x.r,
	     PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		   const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	struct xfer x = x_allgatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm);
	COLL(MPI_Allgatherv, C_ALLGATHERV, -1, x.s, x.r,
	     PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, MPI_Comm comm)
{
	struct xfer x = x_alltoall(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
	COLL(MPI_Alltoall, C_ALLTOALL, -1, x.s, x.r,
	     PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	struct xfer x = x_alltoallv(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm);
	COLL(MPI_Alltoallv, C_ALLTOALLV, -1, x.s, x.r,
	     PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm));
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
		  void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct xfer x = x_alltoallw(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm);
	COLL(MPI_Alltoallw, C_ALLTOALLV, -1, x.s, x.r,
	     PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
		       MPI_Comm comm)
{
	struct xfer x = x_reduce_scatter(recvcounts, datatype, comm);
	COLL(MPI_Reduce_scatter, C_REDUCE_SCATTER, -1, x.s, x.r,
	     PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
			     MPI_Comm comm)
{
	struct xfer x = x_reduce_scatter_block(recvcount, datatype, comm);
	COLL(MPI_Reduce_scatter_block, C_REDUCE_SCATTER_BLOCK, -1, x.s, x.r,
	     PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	int64_t b = count * tsize(datatype);
	COLL(MPI_Scan, C_SCAN, -1, b, b, PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	int64_t b = count * tsize(datatype);
	COLL(MPI_Exscan, C_EXSCAN, -1, b, b, PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
}

/* ---- nonblocking collectives ---------------------------------------------- */

/* coll_start inside the call, before the collective starts (sent: the bytes
 * it sends), under a fresh request id; the request is remembered with what
 * it receives, for the coll_complete that the Wait or Test call completing
 * it records (completed). MPI numbers every collective on a communicator,
 * blocking or not, alike on all members: the reader counts the starts with
 * the coll_begins. */
#define ICOLL(fn, op, root, sent, recvd, call)                                                          \
	ENTER(fn);                                                                                      \
	void *keep_ = keep_take();                                                                      \
	struct comm_view v = lookup(comm);                                                              \
	int64_t snt_ = (sent), rcv_ = (recvd), rw_ = root_world(&v, root);                              \
	uint64_t id = ptr_new_id(t);                                                                    \
	ptr_ev5(t, K_COLL_START, (uint64_t)(op), (uint64_t)v.index, (uint64_t)rw_, (uint64_t)(snt_ > 0 ? snt_ : 0), \
		id);                                                                                    \
	int rc = call;                                                                                  \
	req_insert_keep((struct req){ .id = id, .kind = REQ_COLL, .tag = (op), .peer = rw_, .v = v,     \
				      .nc = MPI_COMM_NULL, .bytes = rcv_ },                             \
			rc, request, keep_);                                                            \
	EXIT(fn);                                                                                       \
	return rc

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	ICOLL(MPI_Ibarrier, C_BARRIER, -1, 0, 0, PMPI_Ibarrier(comm, request));
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_bcast(count, datatype, root, comm);
	ICOLL(MPI_Ibcast, C_BCAST, root, x.s, x.r, PMPI_Ibcast(buffer, count, datatype, root, comm, request));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
		MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_reduce(count, datatype, root, comm);
	ICOLL(MPI_Ireduce, C_REDUCE, root, x.s, x.r,
	      PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		   MPI_Request *request)
{
	int64_t b = count * tsize(datatype);
	ICOLL(MPI_Iallreduce, C_ALLREDUCE, -1, b, b,
	      PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_gather(sendbuf, sendcount, sendtype, recvcount, recvtype, root, comm);
	ICOLL(MPI_Igather, C_GATHER, root, x.s, x.r,
	      PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_gatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm);
	ICOLL(MPI_Igatherv, C_GATHERV, root, x.s, x.r,
	      PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_scatter(sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	ICOLL(MPI_Iscatter, C_SCATTER, root, x.s, x.r,
	      PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_scatterv(sendcounts, sendtype, recvbuf, recvcount, recvtype, root, comm);
	ICOLL(MPI_Iscatterv, C_SCATTERV, root, x.s, x.r,
	      PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
	ICOLL(MPI_Iallgather, C_ALLGATHER, -1, x.s, x.r,
	      PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_allgatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm);
	ICOLL(MPI_Iallgatherv, C_ALLGATHERV, -1, x.s, x.r,
	      PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_alltoall(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
	ICOLL(MPI_Ialltoall, C_ALLTOALL, -1, x.s, x.r,
	      PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		   MPI_Request *request)
{
	struct xfer x = x_alltoallv(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm);
	ICOLL(MPI_Ialltoallv, C_ALLTOALLV, -1, x.s, x.r,
	      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request));
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
		   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
		   MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_alltoallw(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm);
	ICOLL(MPI_Ialltoallw, C_ALLTOALLV, -1, x.s, x.r,
	      PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
			MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_reduce_scatter(recvcounts, datatype, comm);
	ICOLL(MPI_Ireduce_scatter, C_REDUCE_SCATTER, -1, x.s, x.r,
	      PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
			      MPI_Comm comm, MPI_Request *request)
{
	struct xfer x = x_reduce_scatter_block(recvcount, datatype, comm);
	ICOLL(MPI_Ireduce_scatter_block, C_REDUCE_SCATTER_BLOCK, -1, x.s, x.r,
	      PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	      MPI_Request *request)
{
	int64_t b = count * tsize(datatype);
	ICOLL(MPI_Iscan, C_SCAN, -1, b, b, PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		MPI_Request *request)
{
	int64_t b = count * tsize(datatype);
	ICOLL(MPI_Iexscan, C_EXSCAN, -1, b, b, PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

/* ---- entries of a communicator's own ------------------------------------ */

/* The id of the k-th window made on the communicator whose id is parent:
 * bit 61 set (and 62 clear) keeps it apart from broadcast ids (below
 * 2^56) and idup ids (bit 62 set). */
static int64_t win_id(int64_t parent, uint32_t k)
{
	return (int64_t)(1ull << 61 | (mix64(mix64((uint64_t)parent ^ 0x5bd1e9955bd1e995u) + k) >> 3));
}

/* The id of the k-th persistent collective initialised on the communicator
 * whose id is parent: bit 59 set, clear above, keeps it apart from the
 * other collector ids (below 2^57, bit 61 windows, bit 62 idups). */
static int64_t pcoll_id(int64_t parent, uint32_t k)
{
	return (int64_t)(1ull << 59 | (mix64(mix64((uint64_t)parent ^ 0x9e3779b97f4a7c15u) + k) >> 5));
}

enum { OWN_WIN, OWN_PCOLL };

/* A new entry in the file's table for what MPI orders on a communicator
 * apart from its other collectives — a window (its creation, fences and
 * free), a persistent collective (its starts) — with the communicator's
 * members and, as its name, fn#k for the communicator's k-th of its kind:
 * every member counts them alike, their creation or initialisation being
 * collective on it, so each computes the id alone. Made before the call,
 * so that the call's records name it (index -1: the communicator unknown,
 * an intercommunicator, or the table full; then MPI time only). */
static struct comm_view own_entry(MPI_Comm comm, const char *fn, int kind)
{
	struct comm_view v = { -1, 0, 0, 0, NULL, NULL };
	if (comm == MPI_COMM_NULL || world_rank < 0)
		return v;
	lookup(comm); /* registers a communicator made by a constructor we do not wrap */
	pthread_mutex_lock(&comm_mu);
	struct comm_ent *e = live_ent(comm);
	if (e && e->members && e->size > 0 && !e->inter) {
		uint32_t k = kind == OWN_WIN ? ++e->wins : ++e->pcolls;
		char name[64];
		snprintf(name, sizeof name, "%s#%u", fn, k);
		int64_t id = kind == OWN_WIN ? win_id(e->id, k) : pcoll_id(e->id, k);
		int idx = ptr_add_comm_shared(id, name, e->members, e->size);
		if (idx >= 0)
			v = (struct comm_view){ idx, e->size, 0, 0, e->members, NULL };
	}
	pthread_mutex_unlock(&comm_mu);
	return v;
}

/* ---- persistent collectives (MPI 4.0) ------------------------------------ */

#if MPI_VERSION >= 4
/* A persistent collective (MPI_Allreduce_init, …) is a request started any
 * number of times: each MPI_Start records a coll_start under a fresh
 * request id (req_start), and the Wait or Test call completing it a
 * coll_complete, as for the nonblocking collective it stands for. MPI
 * orders the initialisations as collectives on the communicator, but not
 * the starts of different persistent collectives (but under the info key
 * mpi_assert_strict_persistent_collective_ordering), which each member may
 * issue in its own order: so each persistent collective gets a
 * communicator entry of its own, as a window does, with an id every member
 * computes alone (pcoll_id), and its starts are numbered on it apart from
 * any other collective. One on an intercommunicator, or on a communicator
 * ptrace does not know, is MPI time only. The neighbourhood ones
 * (MPI_Neighbor_*_init) are MPI time only too. */

/* The initialisation: MPI time; the request is remembered, persistent, on
 * the collective's own entry. */
#define PCOLL(fn, op, root, out, in, call)                                                               \
	ENTER(fn);                                                                                       \
	struct comm_view v = own_entry(comm, #fn, OWN_PCOLL);                                                     \
	int64_t snt_ = (out), rcv_ = (in), rw_ = v.index >= 0 ? root_world(&v, root) : -1;               \
	int rc = call;                                                                                   \
	if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL && v.index >= 0)                           \
		req_insert((struct req){ .h = *request, .kind = REQ_COLL, .tag = (op), .peer = rw_, .v = v, \
					 .nc = MPI_COMM_NULL, .persistent = 1, .bytes = rcv_, .sent = snt_ });   \
	EXIT(fn);                                                                                        \
	return rc

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PCOLL(MPI_Barrier_init, C_BARRIER, -1, 0, 0, PMPI_Barrier_init(comm, info, request));
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
		   MPI_Request *request)
{
	struct xfer x = x_bcast(count, datatype, root, comm);
	PCOLL(MPI_Bcast_init, C_BCAST, root, x.s, x.r, PMPI_Bcast_init(buffer, count, datatype, root, comm, info, request));
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
		    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_reduce(count, datatype, root, comm);
	PCOLL(MPI_Reduce_init, C_REDUCE, root, x.s, x.r,
	      PMPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request));
}

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	int64_t b = count * tsize(datatype);
	PCOLL(MPI_Allreduce_init, C_ALLREDUCE, -1, b, b,
	      PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_gather(sendbuf, sendcount, sendtype, recvcount, recvtype, root, comm);
	PCOLL(MPI_Gather_init, C_GATHER, root, x.s, x.r,
	      PMPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request));
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
		     MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_gatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm);
	PCOLL(MPI_Gatherv_init, C_GATHERV, root, x.s, x.r,
	      PMPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info,
				request));
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_scatter(sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	PCOLL(MPI_Scatter_init, C_SCATTER, root, x.s, x.r,
	      PMPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request));
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
		      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
		      MPI_Request *request)
{
	struct xfer x = x_scatterv(sendcounts, sendtype, recvbuf, recvcount, recvtype, root, comm);
	PCOLL(MPI_Scatterv_init, C_SCATTERV, root, x.s, x.r,
	      PMPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
				 request));
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
	PCOLL(MPI_Allgather_init, C_ALLGATHER, -1, x.s, x.r,
	      PMPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request));
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			MPI_Request *request)
{
	struct xfer x = x_allgatherv(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm);
	PCOLL(MPI_Allgatherv_init, C_ALLGATHERV, -1, x.s, x.r,
	      PMPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
				   request));
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_alltoall(sendbuf, sendcount, sendtype, recvcount, recvtype, comm);
	PCOLL(MPI_Alltoall_init, C_ALLTOALL, -1, x.s, x.r,
	      PMPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request));
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		       MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_alltoallv(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm);
	PCOLL(MPI_Alltoallv_init, C_ALLTOALLV, -1, x.s, x.r,
	      PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
				  info, request));
}

int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
		       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
		       const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_alltoallw(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, comm);
	PCOLL(MPI_Alltoallw_init, C_ALLTOALLV, -1, x.s, x.r,
	      PMPI_Alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
				  comm, info, request));
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
			    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_reduce_scatter(recvcounts, datatype, comm);
	PCOLL(MPI_Reduce_scatter_init, C_REDUCE_SCATTER, -1, x.s, x.r,
	      PMPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request));
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
				  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	struct xfer x = x_reduce_scatter_block(recvcount, datatype, comm);
	PCOLL(MPI_Reduce_scatter_block_init, C_REDUCE_SCATTER_BLOCK, -1, x.s, x.r,
	      PMPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request));
}

int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		  MPI_Info info, MPI_Request *request)
{
	int64_t b = count * tsize(datatype);
	PCOLL(MPI_Scan_init, C_SCAN, -1, b, b, PMPI_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}

int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		    MPI_Info info, MPI_Request *request)
{
	int64_t b = count * tsize(datatype);
	PCOLL(MPI_Exscan_init, C_EXSCAN, -1, b, b,
	      PMPI_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, info, request));
}
#endif

/* ---- neighbourhood collectives ------------------------------------------ */

/* A neighbourhood collective (MPI-3 §7.6) is one message to each
 * out-neighbour of the caller's process topology and one from each
 * in-neighbour, in the order MPI defines: per dimension d of a Cartesian
 * topology the source then the destination of MPI_Cart_shift(comm, d, 1)
 * (MPI_PROC_NULL past the edge of a non-periodic dimension: no message; a
 * periodic dimension of size 1 or 2 names one process twice), a graph's
 * MPI_Graph_neighbors, a distributed graph's MPI_Dist_graph_neighbors
 * sources (in) and destinations (out). So it is recorded as such
 * messages: the blocking calls record an mpi_send to each out-neighbour
 * right after mpi_enter and an mpi_recv from each in-neighbour right
 * before mpi_exit; the nonblocking ones record the sends and the
 * receives' posts, each with a request id of its own, at the start, and
 * the sends' completions and the receives in the Wait or Test call that
 * completes the request, as MPI_Isend and MPI_Irecv are recorded. Their
 * tag is one no program can use (MPI tags are >= 0, MPI_ANY_TAG is -1):
 * NBR_TAG for the blocking calls, INBR_TAG − k for the k-th nonblocking
 * one on the communicator (nbr_call_tag; below −2^32, clear of the other
 * reserved tags: −4 and −5 are the window epochs'), so that a blocking call issued
 * while a nonblocking one is pending on the same communicator does not
 * take its messages, nor one nonblocking call completed before an earlier
 * one the earlier's (channels match in order).
 * Every member of a communicator calls its collectives in one order, so
 * the k-th message of a channel is the k-th on both sides. */
#define NBR_TAG (-2)
#define INBR_TAG (-(INT64_C(1) << 32))

/* A communicator's neighbours as world ranks (-1: MPI_PROC_NULL), asked
 * of MPI at its first neighbourhood collective and kept until
 * MPI_Comm_free: the lists never change, so callers read them without
 * the lock (a communicator may not be freed while a call on it runs). */
struct nbr_ent {
	MPI_Comm h;
	int index; /* the communicator's table index */
	int nin, nout;
	int *in, *out; /* one allocation: in, then out */
	uint32_t starts; /* nonblocking calls so far (nbr_call_tag) */
};

static pthread_mutex_t nbr_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nbr_ent *nbr_tab;
static int nbr_n, nbr_cap;

static void nbr_warn(const char *what)
{
	static _Atomic int warned;
	if (!atomic_exchange(&warned, 1))
		fprintf(stderr, "ptrace collector: %s: neighbourhood collectives recorded as MPI time only\n", what);
}

/* The neighbour lists of comm (rank numbers of comm) from MPI; 0 when it
 * has no process topology (MPI then fails the call) or MPI fails. */
static int nbr_query(MPI_Comm comm, struct nbr_ent *e)
{
	int topo = MPI_UNDEFINED, nin = 0, nout = 0, weighted = 0, me = 0;
	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
		return 0;
	if (topo == MPI_CART) {
		if (PMPI_Cartdim_get(comm, &nin) != MPI_SUCCESS || nin < 0 || nin > (1 << 20))
			return 0;
		nin *= 2;
		nout = nin;
	} else if (topo == MPI_GRAPH) {
		PMPI_Comm_rank(comm, &me);
		if (PMPI_Graph_neighbors_count(comm, me, &nin) != MPI_SUCCESS || nin < 0)
			return 0;
		nout = nin;
	} else if (topo == MPI_DIST_GRAPH) {
		if (PMPI_Dist_graph_neighbors_count(comm, &nin, &nout, &weighted) != MPI_SUCCESS || nin < 0 || nout < 0)
			return 0;
	} else {
		return 0;
	}
	int *buf = malloc(sizeof(int) * ((size_t)nin + (size_t)nout + 1));
	if (!buf) {
		nbr_warn("out of memory");
		return 0;
	}
	e->nin = nin;
	e->nout = nout;
	e->in = buf;
	e->out = buf + nin;
	int ok = MPI_SUCCESS;
	if (topo == MPI_CART) {
		for (int d = 0; d < nin / 2 && ok == MPI_SUCCESS; d++)
			ok = PMPI_Cart_shift(comm, d, 1, &e->in[2 * d], &e->in[2 * d + 1]);
		memcpy(e->out, e->in, sizeof(int) * (size_t)nin);
	} else if (topo == MPI_GRAPH) {
		ok = PMPI_Graph_neighbors(comm, me, nin, e->in);
		memcpy(e->out, e->in, sizeof(int) * (size_t)nin);
	} else {
		int *w = weighted ? malloc(sizeof(int) * ((size_t)nin + (size_t)nout + 1)) : NULL;
		if (weighted && !w) {
			free(buf);
			nbr_warn("out of memory");
			return 0;
		}
		ok = PMPI_Dist_graph_neighbors(comm, nin, e->in, weighted ? w : MPI_UNWEIGHTED, nout, e->out,
					       weighted ? w + nin : MPI_UNWEIGHTED);
		free(w);
	}
	if (ok != MPI_SUCCESS) {
		free(buf);
		return 0;
	}
	return 1;
}

/* The neighbours of comm as world ranks, from the cache or asked of MPI
 * (outside the lock: two threads may both ask, the first to add wins). */
static int nbr_get(MPI_Comm comm, struct nbr_ent *out)
{
	pthread_mutex_lock(&nbr_mu);
	for (int i = 0; i < nbr_n; i++)
		if (nbr_tab[i].h == comm) {
			*out = nbr_tab[i];
			pthread_mutex_unlock(&nbr_mu);
			return 1;
		}
	pthread_mutex_unlock(&nbr_mu);
	struct nbr_ent e = { comm, 0, 0, 0, NULL, NULL, 0 };
	if (!nbr_query(comm, &e))
		return 0;
	struct comm_view v = lookup(comm);
	e.index = v.index;
	for (int i = 0; i < e.nin + e.nout; i++) /* in and out are one array */
		e.in[i] = e.in[i] == MPI_PROC_NULL ? -1 : (int)world_of(&v, e.in[i]);
	pthread_mutex_lock(&nbr_mu);
	for (int i = 0; i < nbr_n; i++)
		if (nbr_tab[i].h == comm) {
			*out = nbr_tab[i];
			pthread_mutex_unlock(&nbr_mu);
			free(e.in);
			return 1;
		}
	if (nbr_n == nbr_cap) {
		int c = nbr_cap ? 2 * nbr_cap : 8;
		struct nbr_ent *p = realloc(nbr_tab, sizeof *p * (size_t)c);
		if (!p) {
			pthread_mutex_unlock(&nbr_mu);
			free(e.in);
			nbr_warn("out of memory");
			return 0;
		}
		nbr_tab = p;
		nbr_cap = c;
	}
	nbr_tab[nbr_n++] = e;
	pthread_mutex_unlock(&nbr_mu);
	*out = e;
	return 1;
}

/* The tag of the messages of the next nonblocking neighbourhood
 * collective on comm: INBR_TAG − k for its k-th (modulo 2^30). Every
 * member starts them in one order, but may complete them in another (a
 * wait for the second request first): MPI matches each call's messages
 * with the same call's, so each call's are a channel of their own, or the
 * matching by channel order would pair one call's receives with another
 * call's sends. */
static int64_t nbr_call_tag(MPI_Comm comm)
{
	uint32_t k = 0;
	pthread_mutex_lock(&nbr_mu);
	for (int i = 0; i < nbr_n; i++)
		if (nbr_tab[i].h == comm) {
			k = nbr_tab[i].starts++ & ((1u << 30) - 1);
			break;
		}
	pthread_mutex_unlock(&nbr_mu);
	return INBR_TAG - (int64_t)k;
}

/* MPI_Comm_free, MPI_Comm_disconnect: the handle may name another
 * communicator next. */
static void nbr_forget(MPI_Comm comm)
{
	int *lists = NULL;
	pthread_mutex_lock(&nbr_mu);
	for (int i = 0; i < nbr_n; i++)
		if (nbr_tab[i].h == comm) {
			lists = nbr_tab[i].in;
			nbr_tab[i] = nbr_tab[--nbr_n];
			break;
		}
	pthread_mutex_unlock(&nbr_mu);
	free(lists);
}

/* The bytes of the blocks of one side of a call: each (count × the
 * type's size, counts NULL), counts[i] × size (the v variants) or
 * counts[i] × the size of types[i] (the w variants). */
struct nbr_blocks {
	int64_t each, size;
	const int *counts;
	const MPI_Datatype *types;
};

static int64_t nbr_bytes(const struct nbr_blocks *b, int i)
{
	int64_t n = !b->counts ? b->each : b->types ? (int64_t)b->counts[i] * tsize(b->types[i]) : b->counts[i] * b->size;
	return n > 0 ? n : 0;
}

static void nbr_sends(ptr_thread *t, const struct nbr_ent *e, const struct nbr_blocks *b)
{
	for (int i = 0; i < e->nout; i++)
		if (e->out[i] >= 0)
			ptr_ev5(t, K_MPI_SEND, (uint64_t)(int64_t)e->out[i], (uint64_t)(int64_t)NBR_TAG, (uint64_t)e->index,
				(uint64_t)nbr_bytes(b, i), 0);
}

static void nbr_recvs(ptr_thread *t, const struct nbr_ent *e, const struct nbr_blocks *b)
{
	for (int i = 0; i < e->nin; i++)
		if (e->in[i] >= 0)
			ptr_ev5(t, K_MPI_RECV, (uint64_t)(int64_t)e->in[i], (uint64_t)(int64_t)NBR_TAG, (uint64_t)e->index,
				(uint64_t)nbr_bytes(b, i), 0);
}

#define NBR_BODY(fn, sb, rb, call)              \
	ENTER(fn);                              \
	struct nbr_ent e;                       \
	int known = nbr_get(comm, &e);          \
	if (known)                              \
		nbr_sends(t, &e, &(sb));        \
	int rc = call;                          \
	if (known && rc == MPI_SUCCESS)         \
		nbr_recvs(t, &e, &(rb));        \
	EXIT(fn);                               \
	return rc

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, MPI_Comm comm)
{
	struct nbr_blocks s = { sendcount * tsize(sendtype), 0, NULL, NULL };
	struct nbr_blocks r = { recvcount * tsize(recvtype), 0, NULL, NULL };
	NBR_BODY(MPI_Neighbor_allgather, s, r,
		 PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	struct nbr_blocks s = { sendcount * tsize(sendtype), 0, NULL, NULL };
	struct nbr_blocks r = { 0, tsize(recvtype), recvcounts, NULL };
	NBR_BODY(MPI_Neighbor_allgatherv, s, r,
		 PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, MPI_Comm comm)
{
	struct nbr_blocks s = { sendcount * tsize(sendtype), 0, NULL, NULL };
	struct nbr_blocks r = { recvcount * tsize(recvtype), 0, NULL, NULL };
	NBR_BODY(MPI_Neighbor_alltoall, s, r,
		 PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
			   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
			   MPI_Comm comm)
{
	struct nbr_blocks s = { 0, tsize(sendtype), sendcounts, NULL };
	struct nbr_blocks r = { 0, tsize(recvtype), recvcounts, NULL };
	NBR_BODY(MPI_Neighbor_alltoallv, s, r,
		 PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
					 comm));
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
			   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct nbr_blocks s = { 0, 0, sendcounts, sendtypes };
	struct nbr_blocks r = { 0, 0, recvcounts, recvtypes };
	NBR_BODY(MPI_Neighbor_alltoallw, s, r,
		 PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
					 recvtypes, comm));
}

/* A nonblocking one's messages, for its completion: the sends' request
 * ids, then the receives' (peer, bytes, id). */
struct nbr_msg {
	int64_t peer, bytes;
	uint64_t id;
};

struct nbr_req {
	int index, nsend, nrecv;
	int64_t tag; /* nbr_call_tag */
	struct nbr_msg m[]; /* nsend sends, then nrecv receives */
};

/* Records the start of a nonblocking neighbourhood collective (its sends
 * and its receives' posts) and returns what its completion records; NULL
 * (nothing recorded) without neighbours or memory. */
static struct nbr_req *nbr_start(ptr_thread *t, MPI_Comm comm, const struct nbr_blocks *sb,
				 const struct nbr_blocks *rb)
{
	struct nbr_ent e;
	if (!nbr_get(comm, &e))
		return NULL;
	struct nbr_req *q = malloc(sizeof *q + sizeof(struct nbr_msg) * ((size_t)e.nout + (size_t)e.nin));
	if (!q) {
		nbr_warn("out of memory");
		return NULL;
	}
	q->index = e.index;
	q->tag = nbr_call_tag(comm);
	q->nsend = q->nrecv = 0;
	for (int i = 0; i < e.nout; i++)
		if (e.out[i] >= 0) {
			struct nbr_msg *m = &q->m[q->nsend++];
			*m = (struct nbr_msg){ e.out[i], nbr_bytes(sb, i), ptr_new_id(t) };
			ptr_ev5(t, K_MPI_SEND, (uint64_t)m->peer, (uint64_t)q->tag, (uint64_t)e.index, (uint64_t)m->bytes,
				m->id);
		}
	for (int i = 0; i < e.nin; i++)
		if (e.in[i] >= 0) {
			struct nbr_msg *m = &q->m[q->nsend + q->nrecv++];
			*m = (struct nbr_msg){ e.in[i], nbr_bytes(rb, i), ptr_new_id(t) };
			ptr_ev4(t, K_MPI_RECV_POST, (uint64_t)m->peer, (uint64_t)q->tag, (uint64_t)e.index, m->id);
		}
	return q;
}

/* The call returned: its request, when it made one, carries q to the
 * completion; else q is dropped (the sends recorded stay unmatched, as an
 * MPI_Isend's when the call fails). The request carries keep (a Fortran
 * binding's arrays) too, with or without q; a request that carries
 * neither is not remembered. */
static void nbr_started(struct nbr_req *q, int rc, MPI_Request *request, void *keep)
{
	if (!q && !keep)
		return;
	if (rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL) {
		if (!req_insert((struct req){ .h = *request, .kind = REQ_NBR, .nc = MPI_COMM_NULL, .nb = q, .keep = keep }))
			free(q); /* keep: as req_insert_keep */
	} else {
		free(q);
		free(keep);
	}
}

/* The request completed (in Wait or Test): its sends are done and its
 * receives received. */
static void nbr_done(ptr_thread *t, struct nbr_req *q)
{
	if (!q)
		return;
	for (int i = 0; i < q->nsend; i++)
		ptr_ev1(t, K_MPI_REQUEST_DONE, q->m[i].id);
	for (int i = q->nsend; i < q->nsend + q->nrecv; i++)
		ptr_ev5(t, K_MPI_RECV, (uint64_t)q->m[i].peer, (uint64_t)q->tag, (uint64_t)q->index,
			(uint64_t)q->m[i].bytes, q->m[i].id);
	free(q);
}

#define INBR_BODY(fn, sb, rb, call)                                 \
	ENTER(fn);                                                  \
	void *keep_ = keep_take();                                  \
	struct nbr_req *q = nbr_start(t, comm, &(sb), &(rb));       \
	int rc = call;                                              \
	nbr_started(q, rc, request, keep_);                         \
	EXIT(fn);                                                   \
	return rc

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct nbr_blocks s = { sendcount * tsize(sendtype), 0, NULL, NULL };
	struct nbr_blocks r = { recvcount * tsize(recvtype), 0, NULL, NULL };
	INBR_BODY(MPI_Ineighbor_allgather, s, r,
		  PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request));
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request)
{
	struct nbr_blocks s = { sendcount * tsize(sendtype), 0, NULL, NULL };
	struct nbr_blocks r = { 0, tsize(recvtype), recvcounts, NULL };
	INBR_BODY(MPI_Ineighbor_allgatherv, s, r,
		  PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
					    request));
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct nbr_blocks s = { sendcount * tsize(sendtype), 0, NULL, NULL };
	struct nbr_blocks r = { recvcount * tsize(recvtype), 0, NULL, NULL };
	INBR_BODY(MPI_Ineighbor_alltoall, s, r,
		  PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request));
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
			    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
			    MPI_Comm comm, MPI_Request *request)
{
	struct nbr_blocks s = { 0, tsize(sendtype), sendcounts, NULL };
	struct nbr_blocks r = { 0, tsize(recvtype), recvcounts, NULL };
	INBR_BODY(MPI_Ineighbor_alltoallv, s, r,
		  PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
					   comm, request));
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
			    MPI_Request *request)
{
	struct nbr_blocks s = { 0, 0, sendcounts, sendtypes };
	struct nbr_blocks r = { 0, 0, recvcounts, recvtypes };
	INBR_BODY(MPI_Ineighbor_alltoallw, s, r,
		  PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
					   recvtypes, comm, request));
}

/* ---- calls recorded as MPI time only -------------------------------------- */

/* Buffered sends' buffers, MPI-IO and one-sided communication but for
 * its collective synchronisation: their time is MPI time, as Score-P
 * books it, but what they synchronise is not recorded. */
#define BRACKET(fn, params, args)     \
	int fn params                 \
	{                             \
		ENTER(fn);            \
		int rc = P##fn args;  \
		EXIT(fn);             \
		return rc;            \
	}

/* The buffer of buffered sends: MPI_Buffer_detach returns once the
 * buffered messages have left, time in MPI as Score-P books it. */
BRACKET(MPI_Buffer_attach, (void *buffer, int size), (buffer, size))
BRACKET(MPI_Buffer_detach, (void *buffer, int *size), (buffer, size))

/* MPI-IO: a program's checkpoints and output, time it spends in MPI (a
 * collective write waits for every member), as Score-P books it. What the
 * calls synchronise is not recorded; a nonblocking one's completion in
 * MPI_Wait or MPI_Test records nothing. */
BRACKET(MPI_File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),
	(comm, filename, amode, info, fh))
BRACKET(MPI_File_close, (MPI_File *fh),
	(fh))
BRACKET(MPI_File_delete, (const char *filename, MPI_Info info),
	(filename, info))
BRACKET(MPI_File_set_size, (MPI_File fh, MPI_Offset size),
	(fh, size))
BRACKET(MPI_File_preallocate, (MPI_File fh, MPI_Offset size),
	(fh, size))
BRACKET(MPI_File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info),
	(fh, disp, etype, filetype, datarep, info))
BRACKET(MPI_File_seek, (MPI_File fh, MPI_Offset offset, int whence),
	(fh, offset, whence))
BRACKET(MPI_File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence),
	(fh, offset, whence))
BRACKET(MPI_File_sync, (MPI_File fh),
	(fh))
BRACKET(MPI_File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, offset, buf, count, datatype, status))
BRACKET(MPI_File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, offset, buf, count, datatype, status))
BRACKET(MPI_File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, buf, count, datatype, status))
BRACKET(MPI_File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, offset, buf, count, datatype, status))
BRACKET(MPI_File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
	(fh, offset, buf, count, datatype, status))
BRACKET(MPI_File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, buf, count, datatype, request))
BRACKET(MPI_File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, buf, count, datatype, request))
BRACKET(MPI_File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, offset, buf, count, datatype, request))
BRACKET(MPI_File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, buf, count, datatype, request))
BRACKET(MPI_File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, buf, count, datatype, request))
BRACKET(MPI_File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, offset, buf, count, datatype, request))
BRACKET(MPI_File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, buf, count, datatype, request))
BRACKET(MPI_File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, buf, count, datatype, request))
BRACKET(MPI_File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, offset, buf, count, datatype, request))
BRACKET(MPI_File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
	(fh, offset, buf, count, datatype, request))
/* Split collectives: the begin starts the collective access, the end
 * completes it (and waits for it). */
BRACKET(MPI_File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype),
	(fh, buf, count, datatype))
BRACKET(MPI_File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status),
	(fh, buf, status))
BRACKET(MPI_File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype),
	(fh, buf, count, datatype))
BRACKET(MPI_File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status),
	(fh, buf, status))
BRACKET(MPI_File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype),
	(fh, offset, buf, count, datatype))
BRACKET(MPI_File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status),
	(fh, buf, status))
BRACKET(MPI_File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype),
	(fh, offset, buf, count, datatype))
BRACKET(MPI_File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status),
	(fh, buf, status))
BRACKET(MPI_File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype),
	(fh, buf, count, datatype))
BRACKET(MPI_File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status),
	(fh, buf, status))
BRACKET(MPI_File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype),
	(fh, buf, count, datatype))
BRACKET(MPI_File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status),
	(fh, buf, status))

/* ---- windows ------------------------------------------------------------- */

/* One-sided synchronisation that is collective over a window's group (the
 * communicator it was made on) is recorded as a collective: the window's
 * creation (MPI_Win_create, _allocate, _allocate_shared, _create_dynamic),
 * MPI_Win_fence and MPI_Win_free, all-to-all as a barrier. MPI orders the
 * collective calls on one window alike on every member, but not against
 * those on another window or on the communicator itself (two windows on
 * one communicator may be fenced in either order on different ranks): so
 * each window gets a communicator entry of its own in the file's table,
 * with the communicator's members and an id every member computes alone
 * (win_id), and its collectives are numbered on it apart from any other.
 * The creation is recorded on the window's entry too, as its first
 * collective, then MPI_Win_fence's, then MPI_Win_free's. */
struct win_ent {
	MPI_Win h;
	struct comm_view v;
	int alive;
	/* General active target synchronisation (below): the world ranks
	 * of the group of the open exposure epoch (MPI_Win_post's: the
	 * origins) and access epoch (MPI_Win_start's: the targets), owned
	 * here, NULL when none is open. */
	int *expo, nexpo;
	int *acc, nacc;
};

static struct win_ent *wins; /* under comm_mu */
static int nwins, capwins;

/* Remembers window h (after its creation call returned it) as v's. */
static void win_put(MPI_Win h, const struct comm_view *v)
{
	if (v->index < 0 || h == MPI_WIN_NULL)
		return;
	pthread_mutex_lock(&comm_mu);
	if (nwins == capwins) {
		int c = capwins ? capwins * 2 : 8;
		struct win_ent *p = realloc(wins, sizeof *p * (size_t)c);
		if (!p) {
			pthread_mutex_unlock(&comm_mu);
			return;
		}
		wins = p;
		capwins = c;
	}
	wins[nwins++] = (struct win_ent){ h, *v, 1, NULL, 0, NULL, 0 };
	pthread_mutex_unlock(&comm_mu);
}

/* Window h's entry; the caller holds comm_mu. */
static struct win_ent *win_ent_of(MPI_Win h)
{
	for (int i = nwins - 1; i >= 0; i--)
		if (wins[i].alive && wins[i].h == h)
			return &wins[i];
	return NULL;
}

/* Window h's view (index -1: unknown); forget drops its entry
 * (MPI_Win_free: the handle may be reused). */
static struct comm_view win_lookup(MPI_Win h, int forget)
{
	struct comm_view v = { -1, 0, 0, 0, NULL, NULL };
	pthread_mutex_lock(&comm_mu);
	struct win_ent *e = win_ent_of(h);
	if (e) {
		v = e->v;
		if (forget) {
			free(e->expo);
			free(e->acc);
			*e = wins[--nwins];
		}
	}
	pthread_mutex_unlock(&comm_mu);
	return v;
}

/* A window-collective call: coll_begin/coll_end around it on the window's
 * entry, none when it is unknown. */
#define WINCOLL(fn, op, v, call)                                                   \
	ENTER(fn);                                                                 \
	struct coll c = { 0 };                                                     \
	if ((v).index >= 0)                                                        \
		c = coll_begin(t, op, &(v), -1, 0, 0);                             \
	int rc = call;                                                             \
	if ((v).index >= 0)                                                        \
		coll_end(t, &c);

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	struct comm_view v = own_entry(comm, "MPI_Win_create", OWN_WIN);
	WINCOLL(MPI_Win_create, C_WIN_CREATE, v, PMPI_Win_create(base, size, disp_unit, info, comm, win));
	if (rc == MPI_SUCCESS)
		win_put(*win, &v);
	EXIT(MPI_Win_create);
	return rc;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	struct comm_view v = own_entry(comm, "MPI_Win_allocate", OWN_WIN);
	WINCOLL(MPI_Win_allocate, C_WIN_CREATE, v, PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
	if (rc == MPI_SUCCESS)
		win_put(*win, &v);
	EXIT(MPI_Win_allocate);
	return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	struct comm_view v = own_entry(comm, "MPI_Win_allocate_shared", OWN_WIN);
	WINCOLL(MPI_Win_allocate_shared, C_WIN_CREATE, v,
		PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
	if (rc == MPI_SUCCESS)
		win_put(*win, &v);
	EXIT(MPI_Win_allocate_shared);
	return rc;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	struct comm_view v = own_entry(comm, "MPI_Win_create_dynamic", OWN_WIN);
	WINCOLL(MPI_Win_create_dynamic, C_WIN_CREATE, v, PMPI_Win_create_dynamic(info, comm, win));
	if (rc == MPI_SUCCESS)
		win_put(*win, &v);
	EXIT(MPI_Win_create_dynamic);
	return rc;
}

int MPI_Win_free(MPI_Win *win)
{
	struct comm_view v = win_lookup(*win, 1);
	WINCOLL(MPI_Win_free, C_WIN_FREE, v, PMPI_Win_free(win));
	EXIT(MPI_Win_free);
	return rc;
}

int MPI_Win_fence(int assert, MPI_Win win)
{
	struct comm_view v = win_lookup(win, 0);
	WINCOLL(MPI_Win_fence, C_WIN_FENCE, v, PMPI_Win_fence(assert, win));
	EXIT(MPI_Win_fence);
	return rc;
}

/* ---- passive target synchronisation --------------------------------------
 *
 * A lock epoch (MPI-3.1 §11.5.3) is recorded as its two ends, on the
 * window's own communicator entry: rma_lock(target, window, type) right
 * before the mpi_exit of a successful MPI_Win_lock (the epoch was
 * requested at that call's enter), rma_unlock(target, window) right
 * before the mpi_exit of a successful MPI_Win_unlock (the lock is
 * released inside it). The target is a world rank, -1 for
 * MPI_Win_lock_all/_unlock_all (a shared lock on every member). Which
 * origin gets a contended lock next is decided at run time, at the
 * target: the analysis orders one target's epochs (docs/trace-format.md,
 * report-schema.md). The type is RMA_EXCLUSIVE or RMA_SHARED (MPI's
 * constants differ between implementations), RMA_NOCHECK when the
 * program asserted MPI_MODE_NOCHECK (no lock is taken). An unknown window
 * keeps the calls MPI time only. */
enum { RMA_EXCLUSIVE = 1, RMA_SHARED, RMA_NOCHECK };

/* The window entry of win and the world rank of its member rank (-1:
 * every member); idx -1 when the window is unknown or rank is not one. */
static int rma_target(MPI_Win win, int rank, int64_t *peer)
{
	struct comm_view v = win_lookup(win, 0);
	*peer = -1;
	if (v.index < 0)
		return -1;
	if (rank >= 0) {
		*peer = world_of(&v, rank);
		if (*peer < 0)
			return -1;
	}
	return v.index;
}

static void rma_lock_ev(ptr_thread *t, int lock_type, int rank, int assert, MPI_Win win)
{
	int64_t peer;
	int idx = rma_target(win, rank, &peer);
	if (idx < 0)
		return;
	int64_t ty = lock_type == MPI_LOCK_EXCLUSIVE ? RMA_EXCLUSIVE : RMA_SHARED;
	if (assert & MPI_MODE_NOCHECK)
		ty = RMA_NOCHECK;
	ptr_ev3(t, K_RMA_LOCK, (uint64_t)peer, (uint64_t)idx, (uint64_t)ty);
}

static void rma_unlock_ev(ptr_thread *t, int rank, MPI_Win win)
{
	int64_t peer;
	int idx = rma_target(win, rank, &peer);
	if (idx >= 0)
		ptr_ev2(t, K_RMA_UNLOCK, (uint64_t)peer, (uint64_t)idx);
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
	ENTER(MPI_Win_lock);
	int rc = PMPI_Win_lock(lock_type, rank, assert, win);
	if (rc == MPI_SUCCESS)
		rma_lock_ev(t, lock_type, rank, assert, win);
	EXIT(MPI_Win_lock);
	return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
	ENTER(MPI_Win_unlock);
	int rc = PMPI_Win_unlock(rank, win);
	if (rc == MPI_SUCCESS)
		rma_unlock_ev(t, rank, win);
	EXIT(MPI_Win_unlock);
	return rc;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
	ENTER(MPI_Win_lock_all);
	int rc = PMPI_Win_lock_all(assert, win);
	if (rc == MPI_SUCCESS)
		rma_lock_ev(t, MPI_LOCK_SHARED, -1, assert, win);
	EXIT(MPI_Win_lock_all);
	return rc;
}

int MPI_Win_unlock_all(MPI_Win win)
{
	ENTER(MPI_Win_unlock_all);
	int rc = PMPI_Win_unlock_all(win);
	if (rc == MPI_SUCCESS)
		rma_unlock_ev(t, -1, win);
	EXIT(MPI_Win_unlock_all);
	return rc;
}

/* Flushes and the transfers are MPI time; a lazily acquired lock's wait
 * may sit in them (the analysis counts it there). General active target
 * synchronisation is below. */
BRACKET(MPI_Win_flush, (int rank, MPI_Win win),
	(rank, win))
BRACKET(MPI_Win_flush_all, (MPI_Win win),
	(win))
BRACKET(MPI_Win_flush_local, (int rank, MPI_Win win),
	(rank, win))
BRACKET(MPI_Win_flush_local_all, (MPI_Win win),
	(win))
/* A local reduction: MPI time (Score-P books it with the collectives; IMB-MPI1's
 * Reduce_local measures it), no communication. */
BRACKET(MPI_Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op),
	(inbuf, inoutbuf, count, datatype, op))
BRACKET(MPI_Win_sync, (MPI_Win win),
	(win))

/* ---- general active target synchronisation -------------------------------
 *
 * MPI_Win_post, _start, _complete and _wait (MPI-3.1 §11.5.2) synchronise
 * a target with the origins of its exposure epoch and each origin with
 * the targets of its access epoch, pairwise: they are recorded as the
 * messages they amount to, on the window's own communicator entry, under
 * reserved tags (docs/trace-format.md). A target's MPI_Win_post sends
 * WINPOST_TAG to each origin of its group, right after mpi_enter (the
 * exposure epoch begins there: Scalasca's post time is its enter); an
 * origin's MPI_Win_start receives one from each target of its group,
 * right before mpi_exit: Open MPI (osc rdma, ucx) and MPICH return from
 * MPI_Win_start only once every target posted (MPI allows a start that
 * returns earlier; with MPI_MODE_NOCHECK, which post and start must both
 * give, none of it is recorded: the program says the post came first by
 * other means). An origin's MPI_Win_complete sends WINCOMPLETE_TAG to each
 * target of its start group right after mpi_enter; the target's
 * MPI_Win_wait, or the MPI_Win_test that returns true, receives one from
 * each origin of its post group right before mpi_exit (MPI requires that
 * it return only after every origin completed). The groups are kept as
 * world ranks (MPI_Group_translate_ranks against MPI_COMM_WORLD's group)
 * on the window's entry, from the post or start to the wait or complete.
 * An unknown window (made before the collector, or its table full) keeps
 * these calls MPI time only. */
#define WINPOST_TAG (-4)
#define WINCOMPLETE_TAG (-5)

/* Keeps group's world ranks as window h's exposure (expo) or access
 * group; returns the window's entry index (-1: unknown). *ranks and *n
 * get a copy the caller frees (NULL: none). */
static int win_group_set(MPI_Win h, MPI_Group group, int expo, int **ranks, int *n)
{
	*ranks = NULL;
	*n = 0;
	if (world_rank < 0 || group == MPI_GROUP_NULL)
		return -1;
	pthread_mutex_lock(&comm_mu);
	struct win_ent *e = win_ent_of(h);
	int idx = e ? e->v.index : -1;
	pthread_mutex_unlock(&comm_mu);
	if (idx < 0)
		return -1;
	int gn = 0;
	int *g = translate(group, &gn); /* PMPI calls: outside the lock */
	if (!g)
		return -1;
	int *copy = malloc(sizeof(int) * (size_t)(gn > 0 ? gn : 1));
	if (!copy) {
		free(g);
		return -1;
	}
	memcpy(copy, g, sizeof(int) * (size_t)gn);
	pthread_mutex_lock(&comm_mu);
	e = win_ent_of(h);
	if (!e) {
		pthread_mutex_unlock(&comm_mu);
		free(g);
		free(copy);
		return -1;
	}
	int **slot = expo ? &e->expo : &e->acc;
	int *cnt = expo ? &e->nexpo : &e->nacc;
	free(*slot);
	*slot = g;
	*cnt = gn;
	pthread_mutex_unlock(&comm_mu);
	*ranks = copy;
	*n = gn;
	return idx;
}

/* Takes window h's exposure (expo) or access group: the caller frees
 * *ranks. Returns the window's entry index (-1: unknown or none open). */
static int win_group_take(MPI_Win h, int expo, int **ranks, int *n)
{
	*ranks = NULL;
	*n = 0;
	pthread_mutex_lock(&comm_mu);
	struct win_ent *e = win_ent_of(h);
	int idx = -1;
	if (e && (expo ? e->expo : e->acc)) {
		idx = e->v.index;
		*ranks = expo ? e->expo : e->acc;
		*n = expo ? e->nexpo : e->nacc;
		if (expo) {
			e->expo = NULL;
			e->nexpo = 0;
		} else {
			e->acc = NULL;
			e->nacc = 0;
		}
	}
	pthread_mutex_unlock(&comm_mu);
	return idx;
}

static void win_msgs(ptr_thread *t, unsigned kind, int idx, const int *ranks, int n, int tag)
{
	for (int i = 0; i < n; i++)
		if (ranks[i] >= 0)
			ptr_ev5(t, kind, (uint64_t)(int64_t)ranks[i], (uint64_t)(int64_t)tag, (uint64_t)idx, 0, 0);
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	ENTER(MPI_Win_post);
	int *r, n;
	int idx = win_group_set(win, group, 1, &r, &n);
	if (idx >= 0 && !(assert & MPI_MODE_NOCHECK))
		win_msgs(t, K_MPI_SEND, idx, r, n, WINPOST_TAG);
	free(r);
	int rc = PMPI_Win_post(group, assert, win);
	if (rc != MPI_SUCCESS && idx >= 0) {
		win_group_take(win, 1, &r, &n);
		free(r);
	}
	EXIT(MPI_Win_post);
	return rc;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	ENTER(MPI_Win_start);
	int *r, n;
	int idx = win_group_set(win, group, 0, &r, &n);
	int rc = PMPI_Win_start(group, assert, win);
	if (rc == MPI_SUCCESS && idx >= 0 && !(assert & MPI_MODE_NOCHECK))
		win_msgs(t, K_MPI_RECV, idx, r, n, WINPOST_TAG);
	else if (rc != MPI_SUCCESS && idx >= 0) {
		free(r);
		win_group_take(win, 0, &r, &n);
	}
	free(r);
	EXIT(MPI_Win_start);
	return rc;
}

int MPI_Win_complete(MPI_Win win)
{
	ENTER(MPI_Win_complete);
	int *r, n;
	int idx = win_group_take(win, 0, &r, &n);
	if (idx >= 0)
		win_msgs(t, K_MPI_SEND, idx, r, n, WINCOMPLETE_TAG);
	free(r);
	int rc = PMPI_Win_complete(win);
	EXIT(MPI_Win_complete);
	return rc;
}

/* The end of window win's exposure epoch: its origins' completions
 * received. */
static void win_expo_end(ptr_thread *t, MPI_Win win)
{
	int *r, n;
	int idx = win_group_take(win, 1, &r, &n);
	if (idx >= 0)
		win_msgs(t, K_MPI_RECV, idx, r, n, WINCOMPLETE_TAG);
	free(r);
}

int MPI_Win_wait(MPI_Win win)
{
	ENTER(MPI_Win_wait);
	int rc = PMPI_Win_wait(win);
	if (rc == MPI_SUCCESS)
		win_expo_end(t, win);
	EXIT(MPI_Win_wait);
	return rc;
}

/* The MPI_Win_test that returns true ends the exposure epoch as
 * MPI_Win_wait does; one returning false receives nothing. */
int MPI_Win_test(MPI_Win win, int *flag)
{
	ENTER(MPI_Win_test);
	int rc = PMPI_Win_test(win, flag);
	if (rc == MPI_SUCCESS && *flag)
		win_expo_end(t, win);
	EXIT(MPI_Win_test);
	return rc;
}
BRACKET(MPI_Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
	(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
BRACKET(MPI_Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
	(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
BRACKET(MPI_Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
	(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win))
BRACKET(MPI_Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
	(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win))
BRACKET(MPI_Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win),
	(origin_addr, result_addr, datatype, target_rank, target_disp, op, win))
BRACKET(MPI_Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win),
	(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win))
BRACKET(MPI_Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request),
	(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request))
BRACKET(MPI_Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request),
	(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request))
BRACKET(MPI_Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request),
	(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request))
BRACKET(MPI_Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request),
	(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request))

/* ---- communicator constructors ------------------------------------------ */

/* A constructor's body: the call, then the communicator it returns in *out
 * registered under the id every member computes alike (register_new). */
#define NEWCOMM(fn, out, call)              \
	ENTER(fn);                          \
	int rc = call;                      \
	if (rc == MPI_SUCCESS)              \
		register_new(*(out), #fn);  \
	EXIT(fn);                           \
	return rc

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Comm_split, newcomm, PMPI_Comm_split(comm, color, key, newcomm));
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Comm_split_type, newcomm, PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Comm_dup, newcomm, PMPI_Comm_dup(comm, newcomm));
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Comm_create, newcomm, PMPI_Comm_create(comm, group, newcomm));
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Comm_create_group, newcomm, PMPI_Comm_create_group(comm, group, tag, newcomm));
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Comm_dup_with_info, newcomm, PMPI_Comm_dup_with_info(comm, info, newcomm));
}

/* The new communicator may be used only once the request completes: it is
 * registered then (completed), under an id every member computes alone.
 * Its handle is the one the call returns (Open MPI and MPICH set it at
 * once; the Fortran bindings convert it at once too). */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	ENTER(MPI_Comm_idup);
	int64_t parent = 0;
	uint32_t k = 0;
	int known = next_idup(comm, &parent, &k);
	int rc = PMPI_Comm_idup(comm, newcomm, request);
	if (rc == MPI_SUCCESS && known && *request != MPI_REQUEST_NULL) {
		struct comm_view none = { 0 };
		req_put(*request, (uint64_t)idup_id(parent, k), REQ_IDUP, &none, k, 0, *newcomm);
	}
	EXIT(MPI_Comm_idup);
	return rc;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
		    MPI_Comm *comm_cart)
{
	NEWCOMM(MPI_Cart_create, comm_cart, PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart));
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *new_comm)
{
	NEWCOMM(MPI_Cart_sub, new_comm, PMPI_Cart_sub(comm, remain_dims, new_comm));
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
		     MPI_Comm *comm_graph)
{
	NEWCOMM(MPI_Graph_create, comm_graph, PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph));
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[], const int targets[],
			  const int weights[], MPI_Info info, int reorder, MPI_Comm *newcomm)
{
	NEWCOMM(MPI_Dist_graph_create, newcomm,
		PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm));
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
				   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
				   int reorder, MPI_Comm *comm_dist_graph)
{
	NEWCOMM(MPI_Dist_graph_create_adjacent, comm_dist_graph,
		PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
						destweights, info, reorder, comm_dist_graph));
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
			 MPI_Comm *newintercomm)
{
	NEWCOMM(MPI_Intercomm_create, newintercomm,
		PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm));
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	NEWCOMM(MPI_Intercomm_merge, newintracomm, PMPI_Intercomm_merge(intercomm, high, newintracomm));
}

int MPI_Comm_free(MPI_Comm *comm)
{
	ENTER(MPI_Comm_free);
	forget_comm(*comm);
	nbr_forget(*comm);
	int rc = PMPI_Comm_free(comm);
	EXIT(MPI_Comm_free);
	return rc;
}

/* MPI_Comm_disconnect frees the communicator as MPI_Comm_free does (after
 * its pending communication completes): the handle may name the next
 * communicator made (Open MPI and MPICH give it again), whose table entry
 * and neighbour lists must not be the disconnected one's. */
int MPI_Comm_disconnect(MPI_Comm *comm)
{
	ENTER(MPI_Comm_disconnect);
	forget_comm(*comm);
	nbr_forget(*comm);
	int rc = PMPI_Comm_disconnect(comm);
	EXIT(MPI_Comm_disconnect);
	return rc;
}
