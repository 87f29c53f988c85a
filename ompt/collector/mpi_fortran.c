/*
 * Fortran MPI entry points (issue #13). A Fortran program calls the Fortran
 * bindings (use mpi, mpif.h: mpi_send_; use mpi_f08: mpi_send_f08_), which in
 * Open MPI call PMPI_* directly: the C wrappers of mpi_wrap.c never see those
 * calls. Each function here converts the Fortran handles and sentinels to C
 * and calls the C function MPI_x, which resolves to mpi_wrap.c's wrapper (it
 * records the call) and from there to PMPI_x; results go back the Fortran
 * way (handles, 1-based indices, status arrays, ierror).
 *
 * Names: gfortran appends one underscore (mpi_send_); other compilers use
 * none, two, or upper case, so every function is exported under the four
 * names Open MPI's libmpi_mpifh exports (mpi_send, mpi_send_, mpi_send__,
 * MPI_SEND) and under the mpi_f08 name of libmpi_usempif08 (mpi_send_f08_),
 * whose arguments have the same layout (TYPE(MPI_Comm) etc. are bind(C)
 * structs of one integer, TYPE(MPI_Status) the integer status array) except
 * that ierror is optional (NULL when absent).
 */
#define _GNU_SOURCE
#include "collector.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint arrays are passed to C as int arrays");

/* MPI-3 names the Fortran status size; Open MPI 4.1's mpi.h does not, and
 * its Fortran status is the C struct's integers (MPI_STATUS_SIZE = 6). */
#ifndef MPI_F_STATUS_SIZE
#define MPI_F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

/* Fortran's MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE are the addresses
 * of common blocks (Open MPI's names; MPICH's: mpich_sentinels); they are
 * looked up once, lazily (the first call is MPI_Init, on one thread). */
static struct {
	int done;
	void *bottom[4], *in_place[4], *status_ignore[4], *statuses_ignore[4], *unweighted[4], *weights_empty[4];
} sentinels;

static void lookup4(void **out, const char *base)
{
	char name[64];
	size_t n = strlen(base);
	const char *suffix[] = { "", "_", "__" };
	for (int i = 0; i < 3; i++) {
		memcpy(name, base, n);
		strcpy(name + n, suffix[i]);
		out[i] = dlsym(RTLD_DEFAULT, name);
	}
	for (size_t i = 0; i <= n; i++)
		name[i] = (char)(base[i] >= 'a' && base[i] <= 'z' ? base[i] - 'a' + 'A' : base[i]);
	out[3] = dlsym(RTLD_DEFAULT, name);
}

/* Adds the address the pointer variable var holds (none: nothing) to set. */
static void add_held(void **set, const char *var)
{
	void *const *p = dlsym(RTLD_DEFAULT, var);
	if (!p || !*p)
		return;
	for (int i = 0; i < 4; i++)
		if (!set[i] || set[i] == *p) {
			set[i] = *p;
			return;
		}
}

/* MPICH's sentinels are members of common blocks of other names
 * (/MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, …): its
 * libmpichfort keeps their addresses in MPIR_F_MPI_BOTTOM,
 * MPIR_F_MPI_IN_PLACE, MPIR_F_MPI_UNWEIGHTED, MPIR_F_MPI_WEIGHTS_EMPTY
 * and libmpich in MPI_F_STATUS(ES)_IGNORE, which its Fortran library's
 * mpirinitf fills: its mpi_init binding calls it, and every other binding
 * while MPIR_F_NeedInit is set. ptrace's mpi_init_ replaces MPICH's, so
 * they are filled here as MPICH's bindings fill them. Without them a
 * use mpi program's MPI_IN_PLACE reached MPI as a buffer (wrong results:
 * MPI_Allreduce's sum 0) and MPI_BOTTOM as an address. */
static void mpich_sentinels(void)
{
	int *need = dlsym(RTLD_DEFAULT, "MPIR_F_NeedInit");
	void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "mpirinitf_");
	if (!need || !init)
		return; /* not MPICH's Fortran library */
	if (*need) {
		init();
		*need = 0;
	}
	add_held(sentinels.bottom, "MPIR_F_MPI_BOTTOM");
	add_held(sentinels.in_place, "MPIR_F_MPI_IN_PLACE");
	add_held(sentinels.status_ignore, "MPI_F_STATUS_IGNORE");
	add_held(sentinels.statuses_ignore, "MPI_F_STATUSES_IGNORE");
	add_held(sentinels.unweighted, "MPIR_F_MPI_UNWEIGHTED");
	add_held(sentinels.weights_empty, "MPIR_F_MPI_WEIGHTS_EMPTY");
}

static void load_sentinels(void)
{
	if (__atomic_load_n(&sentinels.done, __ATOMIC_ACQUIRE))
		return;
	lookup4(sentinels.bottom, "mpi_fortran_bottom");
	lookup4(sentinels.in_place, "mpi_fortran_in_place");
	lookup4(sentinels.status_ignore, "mpi_fortran_status_ignore");
	lookup4(sentinels.statuses_ignore, "mpi_fortran_statuses_ignore");
	lookup4(sentinels.unweighted, "mpi_fortran_unweighted");
	lookup4(sentinels.weights_empty, "mpi_fortran_weights_empty");
	mpich_sentinels();
	__atomic_store_n(&sentinels.done, 1, __ATOMIC_RELEASE);
}

static int is(void *const *set, const void *p)
{
	for (int i = 0; i < 4; i++)
		if (set[i] && set[i] == p)
			return 1;
	return 0;
}

static void *cbuf(void *p)
{
	load_sentinels();
	if (is(sentinels.bottom, p))
		return MPI_BOTTOM;
	if (is(sentinels.in_place, p))
		return MPI_IN_PLACE;
	return p;
}

static int status_ignored(MPI_Fint *f)
{
	load_sentinels();
	return f == NULL || is(sentinels.status_ignore, f);
}

static int statuses_ignored(MPI_Fint *f)
{
	load_sentinels();
	return f == NULL || is(sentinels.statuses_ignore, f);
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

/* The call site of an MPI call made from Fortran is the Fortran caller's:
 * each binding passes its own return address to the C wrapper it calls
 * (collector.h, ptr_call_site). */
#define FCALLER() (ptr_fortran_ra = __builtin_return_address(0))

/* A binding that fails before calling the C function: the C wrapper will
 * not take the call site, so it is cleared. */
static void no_mem(MPI_Fint *ierr)
{
	ptr_fortran_ra = NULL;
	set_ierr(ierr, MPI_ERR_NO_MEM);
}

static void put_status(int rc, MPI_Status *c, MPI_Fint *f)
{
	if (rc == MPI_SUCCESS && !status_ignored(f))
		MPI_Status_c2f(c, f);
}

/* The four F77 names and the mpi_f08 name of lo##_ */
#define ALIASES(lo, UP)                                                   \
	extern __typeof__(lo##_) lo __attribute__((alias(#lo "_")));      \
	extern __typeof__(lo##_) lo##__ __attribute__((alias(#lo "_")));  \
	extern __typeof__(lo##_) UP __attribute__((alias(#lo "_")));      \
	extern __typeof__(lo##_) lo##_f08_ __attribute__((alias(#lo "_")))

/* ---- init, finalize, abort ----------------------------------------------- */

void mpi_init_(MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Init(NULL, NULL));
	load_sentinels();
}
ALIASES(mpi_init, MPI_INIT);

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	FCALLER();
	int prov = 0;
	int rc = MPI_Init_thread(NULL, NULL, (int)*required, &prov);
	*provided = prov;
	set_ierr(ierr, rc);
	load_sentinels();
}
ALIASES(mpi_init_thread, MPI_INIT_THREAD);

void mpi_finalize_(MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Finalize());
}
ALIASES(mpi_finalize, MPI_FINALIZE);

void mpi_abort_(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Abort(MPI_Comm_f2c(*comm), (int)*errorcode));
}
ALIASES(mpi_abort, MPI_ABORT);

/* ---- point to point ----------------------------------------------------- */

#define FSEND(lo, UP, C)                                                                                      \
	void lo##_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, \
		   MPI_Fint *ierr)                                                                            \
	{                                                                                                     \
		FCALLER();                                                                                    \
		set_ierr(ierr, C(cbuf(buf), *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm)));  \
	}                                                                                                     \
	ALIASES(lo, UP)

FSEND(mpi_send, MPI_SEND, MPI_Send);
FSEND(mpi_ssend, MPI_SSEND, MPI_Ssend);
FSEND(mpi_bsend, MPI_BSEND, MPI_Bsend);
FSEND(mpi_rsend, MPI_RSEND, MPI_Rsend);

#define FISEND(lo, UP, C)                                                                                     \
	void lo##_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, \
		   MPI_Fint *request, MPI_Fint *ierr)                                                         \
	{                                                                                                     \
		FCALLER();                                                                                    \
		MPI_Request r = MPI_REQUEST_NULL;                                                             \
		int rc = C(cbuf(buf), *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm), &r);     \
		if (rc == MPI_SUCCESS)                                                                        \
			*request = MPI_Request_c2f(r);                                                        \
		set_ierr(ierr, rc);                                                                           \
	}                                                                                                     \
	ALIASES(lo, UP)

FISEND(mpi_isend, MPI_ISEND, MPI_Isend);
FISEND(mpi_issend, MPI_ISSEND, MPI_Issend);
FISEND(mpi_irecv, MPI_IRECV, MPI_Irecv);
FISEND(mpi_ibsend, MPI_IBSEND, MPI_Ibsend);
FISEND(mpi_irsend, MPI_IRSEND, MPI_Irsend);
/* Persistent requests: the same arguments as the nonblocking calls. */
FISEND(mpi_send_init, MPI_SEND_INIT, MPI_Send_init);
FISEND(mpi_ssend_init, MPI_SSEND_INIT, MPI_Ssend_init);
FISEND(mpi_bsend_init, MPI_BSEND_INIT, MPI_Bsend_init);
FISEND(mpi_rsend_init, MPI_RSEND_INIT, MPI_Rsend_init);
FISEND(mpi_recv_init, MPI_RECV_INIT, MPI_Recv_init);

/* Calls on one request handle, which they may change (MPI_Start,
 * MPI_Request_free). */
#define FREQUEST(lo, UP, C)                                      \
	void lo##_(MPI_Fint *request, MPI_Fint *ierr)            \
	{                                                        \
		FCALLER();                                       \
		MPI_Request r = MPI_Request_f2c(*request);       \
		int rc = C(&r);                                  \
		if (rc == MPI_SUCCESS)                           \
			*request = MPI_Request_c2f(r);           \
		set_ierr(ierr, rc);                              \
	}                                                        \
	ALIASES(lo, UP)

FREQUEST(mpi_start, MPI_START, MPI_Start);

void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
	       MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	int rc = MPI_Recv(cbuf(buf), *count, MPI_Type_f2c(*type), *source, *tag, MPI_Comm_f2c(*comm),
			  status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_recv, MPI_RECV);

/* Matched probes: the message handle converted both ways. */
void mpi_mprobe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	MPI_Message m = MPI_MESSAGE_NULL;
	int rc = MPI_Mprobe(*source, *tag, MPI_Comm_f2c(*comm), &m, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (rc == MPI_SUCCESS)
		*message = MPI_Message_c2f(m);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_mprobe, MPI_MPROBE);

void mpi_improbe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *message, MPI_Fint *status,
		  MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	MPI_Message m = MPI_MESSAGE_NULL;
	int f = 0;
	int rc = MPI_Improbe(*source, *tag, MPI_Comm_f2c(*comm), &f, &m, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	*flag = f != 0;
	if (rc == MPI_SUCCESS && f) {
		*message = MPI_Message_c2f(m);
		put_status(rc, &st, status);
	}
	set_ierr(ierr, rc);
}
ALIASES(mpi_improbe, MPI_IMPROBE);

void mpi_mrecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	MPI_Message m = MPI_Message_f2c(*message);
	int rc = MPI_Mrecv(cbuf(buf), *count, MPI_Type_f2c(*type), &m, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (rc == MPI_SUCCESS)
		*message = MPI_Message_c2f(m);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_mrecv, MPI_MRECV);

void mpi_imrecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *message, MPI_Fint *request, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Message m = MPI_Message_f2c(*message);
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Imrecv(cbuf(buf), *count, MPI_Type_f2c(*type), &m, &r);
	if (rc == MPI_SUCCESS) {
		*message = MPI_Message_c2f(m);
		*request = MPI_Request_c2f(r);
	}
	set_ierr(ierr, rc);
}
ALIASES(mpi_imrecv, MPI_IMRECV);

void mpi_sendrecv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest, MPI_Fint *stag, void *rbuf,
		   MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm,
		   MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	int rc = MPI_Sendrecv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), *dest, *stag, cbuf(rbuf), *rcount,
			      MPI_Type_f2c(*rtype), *source, *rtag, MPI_Comm_f2c(*comm),
			      status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_sendrecv, MPI_SENDRECV);

void mpi_sendrecv_replace_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *stag,
			   MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	int rc = MPI_Sendrecv_replace(cbuf(buf), *count, MPI_Type_f2c(*type), *dest, *stag, *source, *rtag,
				      MPI_Comm_f2c(*comm), status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE);

void mpi_probe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	int rc = MPI_Probe(*source, *tag, MPI_Comm_f2c(*comm), status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_probe, MPI_PROBE);

void mpi_iprobe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Status st;
	int f = 0;
	int rc = MPI_Iprobe(*source, *tag, MPI_Comm_f2c(*comm), &f, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	*flag = f != 0; /* gfortran's .true. */
	if (f)
		put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_iprobe, MPI_IPROBE);

FREQUEST(mpi_request_free, MPI_REQUEST_FREE, MPI_Request_free);

/* ---- completion ---------------------------------------------------------- */

void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Request r = MPI_Request_f2c(*request);
	MPI_Status st;
	int rc = MPI_Wait(&r, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (rc == MPI_SUCCESS)
		*request = MPI_Request_c2f(r);
	put_status(rc, &st, status);
	set_ierr(ierr, rc);
}
ALIASES(mpi_wait, MPI_WAIT);

void mpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Request r = MPI_Request_f2c(*request);
	MPI_Status st;
	int f = 0;
	int rc = MPI_Test(&r, &f, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (rc == MPI_SUCCESS) {
		*request = MPI_Request_c2f(r);
		*flag = f != 0;
		if (f)
			put_status(rc, &st, status);
	}
	set_ierr(ierr, rc);
}
ALIASES(mpi_test, MPI_TEST);

/* Request and status arrays: converted into C arrays (on the stack when
 * small), and back after the call. */
#define SMALL 16

struct arrays {
	MPI_Request rq[SMALL];
	MPI_Status st[SMALL];
	MPI_Request *r;
	MPI_Status *s; /* NULL: MPI_STATUSES_IGNORE */
	int n;
};

static int arrays_in(struct arrays *a, int n, const MPI_Fint *freq, MPI_Fint *fstat)
{
	a->n = n < 0 ? 0 : n;
	a->r = a->n <= SMALL ? a->rq : malloc(sizeof(MPI_Request) * (size_t)a->n);
	a->s = NULL;
	if (!statuses_ignored(fstat))
		a->s = a->n <= SMALL ? a->st : malloc(sizeof(MPI_Status) * (size_t)a->n);
	if (!a->r || (!statuses_ignored(fstat) && !a->s))
		return 0;
	for (int i = 0; i < a->n; i++)
		a->r[i] = MPI_Request_f2c(freq[i]);
	return 1;
}

static void arrays_out(struct arrays *a, int rc, MPI_Fint *freq)
{
	if (rc == MPI_SUCCESS)
		for (int i = 0; i < a->n; i++)
			freq[i] = MPI_Request_c2f(a->r[i]);
}

static void arrays_free(struct arrays *a)
{
	if (a->r && a->r != a->rq)
		free(a->r);
	if (a->s && a->s != a->st)
		free(a->s);
}

/* The Fortran status of C status s[i]: MPI_F_STATUS_SIZE integers each. */
static void put_statuses(int rc, struct arrays *a, MPI_Fint *fstat, int i)
{
	if (a->s)
		put_status(rc, &a->s[i], fstat + (size_t)i * MPI_F_STATUS_SIZE);
}

void mpi_startall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
	FCALLER();
	struct arrays a;
	if (!arrays_in(&a, *count, requests, NULL)) {
		arrays_free(&a);
		no_mem(ierr);
		return;
	}
	int rc = MPI_Startall(a.n, a.r);
	arrays_out(&a, rc, requests);
	arrays_free(&a);
	set_ierr(ierr, rc);
}
ALIASES(mpi_startall, MPI_STARTALL);

void mpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
	FCALLER();
	struct arrays a;
	if (!arrays_in(&a, *count, requests, statuses)) {
		arrays_free(&a);
		no_mem(ierr);
		return;
	}
	int rc = MPI_Waitall(a.n, a.r, a.s ? a.s : MPI_STATUSES_IGNORE);
	arrays_out(&a, rc, requests);
	for (int i = 0; i < a.n; i++)
		put_statuses(rc, &a, statuses, i);
	arrays_free(&a);
	set_ierr(ierr, rc);
}
ALIASES(mpi_waitall, MPI_WAITALL);

void mpi_testall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierr)
{
	FCALLER();
	struct arrays a;
	if (!arrays_in(&a, *count, requests, statuses)) {
		arrays_free(&a);
		no_mem(ierr);
		return;
	}
	int f = 0;
	int rc = MPI_Testall(a.n, a.r, &f, a.s ? a.s : MPI_STATUSES_IGNORE);
	arrays_out(&a, rc, requests);
	*flag = f != 0;
	if (f)
		for (int i = 0; i < a.n; i++)
			put_statuses(rc, &a, statuses, i);
	arrays_free(&a);
	set_ierr(ierr, rc);
}
ALIASES(mpi_testall, MPI_TESTALL);

static void put_index(int rc, int idx, MPI_Fint *index)
{
	if (rc == MPI_SUCCESS)
		*index = idx == MPI_UNDEFINED ? MPI_UNDEFINED : idx + 1;
}

void mpi_waitany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr)
{
	FCALLER();
	struct arrays a;
	if (!arrays_in(&a, *count, requests, NULL)) {
		arrays_free(&a);
		no_mem(ierr);
		return;
	}
	MPI_Status st;
	int idx = MPI_UNDEFINED;
	int rc = MPI_Waitany(a.n, a.r, &idx, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	arrays_out(&a, rc, requests);
	put_index(rc, idx, index);
	put_status(rc, &st, status);
	arrays_free(&a);
	set_ierr(ierr, rc);
}
ALIASES(mpi_waitany, MPI_WAITANY);

void mpi_testany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
		  MPI_Fint *ierr)
{
	FCALLER();
	struct arrays a;
	if (!arrays_in(&a, *count, requests, NULL)) {
		arrays_free(&a);
		no_mem(ierr);
		return;
	}
	MPI_Status st;
	int idx = MPI_UNDEFINED, f = 0;
	int rc = MPI_Testany(a.n, a.r, &idx, &f, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	arrays_out(&a, rc, requests);
	put_index(rc, idx, index);
	*flag = f != 0;
	if (f)
		put_status(rc, &st, status);
	arrays_free(&a);
	set_ierr(ierr, rc);
}
ALIASES(mpi_testany, MPI_TESTANY);

#define FSOME(lo, UP, C)                                                                                  \
	void lo##_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,          \
		   MPI_Fint *statuses, MPI_Fint *ierr)                                                    \
	{                                                                                                 \
		FCALLER();                                                                                \
		struct arrays a;                                                                          \
		if (!arrays_in(&a, *incount, requests, statuses)) {                                       \
			arrays_free(&a);                                                                  \
			no_mem(ierr);                                                                     \
			return;                                                                           \
		}                                                                                         \
		int out = 0;                                                                              \
		int rc = C(a.n, a.r, &out, indices, a.s ? a.s : MPI_STATUSES_IGNORE);                     \
		arrays_out(&a, rc, requests);                                                             \
		if (rc == MPI_SUCCESS) {                                                                  \
			*outcount = out;                                                                  \
			for (int i = 0; out != MPI_UNDEFINED && i < out; i++) {                           \
				put_statuses(rc, &a, statuses, i);                                        \
				indices[i]++;                                                             \
			}                                                                                 \
		}                                                                                         \
		arrays_free(&a);                                                                          \
		set_ierr(ierr, rc);                                                                       \
	}                                                                                                 \
	ALIASES(lo, UP)

FSOME(mpi_waitsome, MPI_WAITSOME, MPI_Waitsome);
FSOME(mpi_testsome, MPI_TESTSOME, MPI_Testsome);

/* ---- collectives ---------------------------------------------------------- */

void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Barrier(MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_barrier, MPI_BARRIER);

void mpi_bcast_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Bcast(cbuf(buf), *count, MPI_Type_f2c(*type), *root, MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_bcast, MPI_BCAST);

void mpi_reduce_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *root,
		 MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Reduce(cbuf(sbuf), cbuf(rbuf), *count, MPI_Type_f2c(*type), MPI_Op_f2c(*op), *root,
				  MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_reduce, MPI_REDUCE);

#define FREDUCE(lo, UP, C)                                                                                  \
	void lo##_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,   \
		   MPI_Fint *ierr)                                                                          \
	{                                                                                                   \
		FCALLER();                                                                                  \
		set_ierr(ierr, C(cbuf(sbuf), cbuf(rbuf), *count, MPI_Type_f2c(*type), MPI_Op_f2c(*op),      \
				 MPI_Comm_f2c(*comm)));                                                     \
	}                                                                                                   \
	ALIASES(lo, UP)

FREDUCE(mpi_allreduce, MPI_ALLREDUCE, MPI_Allreduce);
FREDUCE(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block);
FREDUCE(mpi_scan, MPI_SCAN, MPI_Scan);
FREDUCE(mpi_exscan, MPI_EXSCAN, MPI_Exscan);

void mpi_reduce_scatter_(void *sbuf, void *rbuf, MPI_Fint *rcounts, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,
			 MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Reduce_scatter(cbuf(sbuf), cbuf(rbuf), rcounts, MPI_Type_f2c(*type), MPI_Op_f2c(*op),
					  MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_reduce_scatter, MPI_REDUCE_SCATTER);

#define FROOTED(lo, UP, C)                                                                                   \
	void lo##_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, \
		   MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)                                           \
	{                                                                                                    \
		FCALLER();                                                                                   \
		set_ierr(ierr, C(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), *rcount,            \
				 MPI_Type_f2c(*rtype), *root, MPI_Comm_f2c(*comm)));                         \
	}                                                                                                    \
	ALIASES(lo, UP)

FROOTED(mpi_gather, MPI_GATHER, MPI_Gather);
FROOTED(mpi_scatter, MPI_SCATTER, MPI_Scatter);

#define FALL(lo, UP, C)                                                                                      \
	void lo##_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, \
		   MPI_Fint *comm, MPI_Fint *ierr)                                                           \
	{                                                                                                    \
		FCALLER();                                                                                   \
		set_ierr(ierr, C(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), *rcount,            \
				 MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm)));                                \
	}                                                                                                    \
	ALIASES(lo, UP)

FALL(mpi_allgather, MPI_ALLGATHER, MPI_Allgather);
FALL(mpi_alltoall, MPI_ALLTOALL, MPI_Alltoall);

void mpi_gatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
		  MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Gatherv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, displs,
				   MPI_Type_f2c(*rtype), *root, MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_gatherv, MPI_GATHERV);

void mpi_scatterv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
		   MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Scatterv(cbuf(sbuf), scounts, displs, MPI_Type_f2c(*stype), cbuf(rbuf), *rcount,
				    MPI_Type_f2c(*rtype), *root, MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_scatterv, MPI_SCATTERV);

void mpi_allgatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
		     MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Allgatherv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, displs,
				      MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_allgatherv, MPI_ALLGATHERV);

void mpi_alltoallv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts,
		    MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Alltoallv(cbuf(sbuf), scounts, sdispls, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, rdispls,
				     MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_alltoallv, MPI_ALLTOALLV);

/* ---- nonblocking collectives ------------------------------------------------- */

/* The C call (mpi_wrap.c records its coll_start and the request, whose
 * completion in MPI_Wait or MPI_Test records the coll_complete) with the
 * Fortran request given back. MPI_Ialltoallw is with the other typed
 * collectives below. */
#define FICOLL(call)                              \
	FCALLER();                                \
	MPI_Request r = MPI_REQUEST_NULL;         \
	int rc = call;                            \
	if (rc == MPI_SUCCESS)                    \
		*request = MPI_Request_c2f(r);    \
	set_ierr(ierr, rc)

void mpi_ibarrier_(MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Ibarrier(MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ibarrier, MPI_IBARRIER);

void mpi_ibcast_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request,
		 MPI_Fint *ierr)
{
	FICOLL(MPI_Ibcast(cbuf(buf), *count, MPI_Type_f2c(*type), *root, MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ibcast, MPI_IBCAST);

void mpi_ireduce_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *root,
		  MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Ireduce(cbuf(sbuf), cbuf(rbuf), *count, MPI_Type_f2c(*type), MPI_Op_f2c(*op), *root,
			   MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ireduce, MPI_IREDUCE);

#define FIREDUCE(lo, UP, C)                                                                                 \
	void lo##_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,   \
		   MPI_Fint *request, MPI_Fint *ierr)                                                       \
	{                                                                                                   \
		FICOLL(C(cbuf(sbuf), cbuf(rbuf), *count, MPI_Type_f2c(*type), MPI_Op_f2c(*op),              \
			 MPI_Comm_f2c(*comm), &r));                                                         \
	}                                                                                                   \
	ALIASES(lo, UP)

FIREDUCE(mpi_iallreduce, MPI_IALLREDUCE, MPI_Iallreduce);
FIREDUCE(mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, MPI_Ireduce_scatter_block);
FIREDUCE(mpi_iscan, MPI_ISCAN, MPI_Iscan);
FIREDUCE(mpi_iexscan, MPI_IEXSCAN, MPI_Iexscan);

void mpi_ireduce_scatter_(void *sbuf, void *rbuf, MPI_Fint *rcounts, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,
			  MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Ireduce_scatter(cbuf(sbuf), cbuf(rbuf), rcounts, MPI_Type_f2c(*type), MPI_Op_f2c(*op),
				   MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ireduce_scatter, MPI_IREDUCE_SCATTER);

#define FIROOTED(lo, UP, C)                                                                                  \
	void lo##_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, \
		   MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)                         \
	{                                                                                                    \
		FICOLL(C(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), *rcount, MPI_Type_f2c(*rtype), \
			 *root, MPI_Comm_f2c(*comm), &r));                                                   \
	}                                                                                                    \
	ALIASES(lo, UP)

FIROOTED(mpi_igather, MPI_IGATHER, MPI_Igather);
FIROOTED(mpi_iscatter, MPI_ISCATTER, MPI_Iscatter);

#define FIALL(lo, UP, C)                                                                                     \
	void lo##_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, \
		   MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)                                         \
	{                                                                                                    \
		FICOLL(C(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), *rcount, MPI_Type_f2c(*rtype), \
			 MPI_Comm_f2c(*comm), &r));                                                          \
	}                                                                                                    \
	ALIASES(lo, UP)

FIALL(mpi_iallgather, MPI_IALLGATHER, MPI_Iallgather);
FIALL(mpi_ialltoall, MPI_IALLTOALL, MPI_Ialltoall);

void mpi_igatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
		   MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Igatherv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, displs,
			    MPI_Type_f2c(*rtype), *root, MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_igatherv, MPI_IGATHERV);

void mpi_iscatterv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
		    MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Iscatterv(cbuf(sbuf), scounts, displs, MPI_Type_f2c(*stype), cbuf(rbuf), *rcount,
			     MPI_Type_f2c(*rtype), *root, MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_iscatterv, MPI_ISCATTERV);

void mpi_iallgatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
		      MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Iallgatherv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, displs,
			       MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_iallgatherv, MPI_IALLGATHERV);

void mpi_ialltoallv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, void *rbuf,
		     MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request,
		     MPI_Fint *ierr)
{
	FICOLL(MPI_Ialltoallv(cbuf(sbuf), scounts, sdispls, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, rdispls,
			      MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ialltoallv, MPI_IALLTOALLV);

/* ---- communicators ----------------------------------------------------------- */

static void put_comm(int rc, MPI_Comm c, MPI_Fint *f)
{
	if (rc == MPI_SUCCESS)
		*f = MPI_Comm_c2f(c);
}

void mpi_comm_split_(MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_split(MPI_Comm_f2c(*comm), *color, *key, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_split, MPI_COMM_SPLIT);

void mpi_comm_split_type_(MPI_Fint *comm, MPI_Fint *type, MPI_Fint *key, MPI_Fint *info, MPI_Fint *newcomm,
			  MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_split_type(MPI_Comm_f2c(*comm), *type, *key, MPI_Info_f2c(*info), &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE);

void mpi_comm_dup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_dup(MPI_Comm_f2c(*comm), &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_dup, MPI_COMM_DUP);

void mpi_comm_create_(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_create(MPI_Comm_f2c(*comm), MPI_Group_f2c(*group), &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_create, MPI_COMM_CREATE);

void mpi_comm_free_(MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int rc = MPI_Comm_free(&c);
	put_comm(rc, c, comm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_free, MPI_COMM_FREE);

void mpi_comm_disconnect_(MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int rc = MPI_Comm_disconnect(&c);
	put_comm(rc, c, comm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_disconnect, MPI_COMM_DISCONNECT);

void mpi_comm_create_group_(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_create_group(MPI_Comm_f2c(*comm), MPI_Group_f2c(*group), *tag, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_create_group, MPI_COMM_CREATE_GROUP);

void mpi_comm_dup_with_info_(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_dup_with_info(MPI_Comm_f2c(*comm), MPI_Info_f2c(*info), &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO);

/* The handle is converted at once, as Open MPI's own binding does: it is
 * valid from the call on, usable once the request completes. */
void mpi_comm_idup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Comm_idup(MPI_Comm_f2c(*comm), &nc, &r);
	if (rc == MPI_SUCCESS) {
		*newcomm = MPI_Comm_c2f(nc);
		*request = MPI_Request_c2f(r);
	}
	set_ierr(ierr, rc);
}
ALIASES(mpi_comm_idup, MPI_COMM_IDUP);

/* Fortran LOGICALs (any nonzero value is .true.: gfortran's is 1, others'
 * -1) as C ints, on the stack when few. */
#define FEW 16

struct logicals {
	int few[FEW], *v;
};

static int logicals_in(struct logicals *l, const MPI_Fint *f, int n)
{
	n = n < 0 ? 0 : n;
	l->v = n <= FEW ? l->few : malloc(sizeof(int) * (size_t)n);
	if (!l->v)
		return 0;
	for (int i = 0; i < n; i++)
		l->v[i] = f[i] != 0;
	return 1;
}

static void logicals_free(struct logicals *l)
{
	if (l->v != l->few)
		free(l->v);
}

void mpi_cart_create_(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods, MPI_Fint *reorder,
		      MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	struct logicals p;
	if (!logicals_in(&p, periods, *ndims)) {
		no_mem(ierr);
		return;
	}
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Cart_create(MPI_Comm_f2c(*comm), *ndims, dims, p.v, *reorder != 0, &nc);
	logicals_free(&p);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_cart_create, MPI_CART_CREATE);

void mpi_cart_sub_(MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int ndims = 0;
	PMPI_Cartdim_get(c, &ndims);
	struct logicals r;
	if (!logicals_in(&r, remain_dims, ndims)) {
		no_mem(ierr);
		return;
	}
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Cart_sub(c, r.v, &nc);
	logicals_free(&r);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_cart_sub, MPI_CART_SUB);

void mpi_graph_create_(MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges, MPI_Fint *reorder,
		       MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Graph_create(MPI_Comm_f2c(*comm), *nnodes, index, edges, *reorder != 0, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_graph_create, MPI_GRAPH_CREATE);

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are common blocks in Fortran too. */
static const int *cweights(MPI_Fint *w)
{
	load_sentinels();
	if (is(sentinels.unweighted, w))
		return MPI_UNWEIGHTED;
	if (is(sentinels.weights_empty, w))
		return MPI_WEIGHTS_EMPTY;
	return w;
}

void mpi_dist_graph_create_(MPI_Fint *comm, MPI_Fint *n, MPI_Fint *sources, MPI_Fint *degrees, MPI_Fint *dests,
			    MPI_Fint *weights, MPI_Fint *info, MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Dist_graph_create(MPI_Comm_f2c(*comm), *n, sources, degrees, dests, cweights(weights),
				       MPI_Info_f2c(*info), *reorder != 0, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE);

void mpi_dist_graph_create_adjacent_(MPI_Fint *comm, MPI_Fint *indegree, MPI_Fint *sources, MPI_Fint *sweights,
				     MPI_Fint *outdegree, MPI_Fint *dests, MPI_Fint *dweights, MPI_Fint *info,
				     MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Dist_graph_create_adjacent(MPI_Comm_f2c(*comm), *indegree, sources, cweights(sweights), *outdegree,
						dests, cweights(dweights), MPI_Info_f2c(*info), *reorder != 0, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT);

void mpi_intercomm_create_(MPI_Fint *local_comm, MPI_Fint *local_leader, MPI_Fint *peer_comm, MPI_Fint *remote_leader,
			   MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Intercomm_create(MPI_Comm_f2c(*local_comm), *local_leader, MPI_Comm_f2c(*peer_comm), *remote_leader,
				      *tag, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_intercomm_create, MPI_INTERCOMM_CREATE);

void mpi_intercomm_merge_(MPI_Fint *intercomm, MPI_Fint *high, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Intercomm_merge(MPI_Comm_f2c(*intercomm), *high != 0, &nc);
	put_comm(rc, nc, newcomm);
	set_ierr(ierr, rc);
}
ALIASES(mpi_intercomm_merge, MPI_INTERCOMM_MERGE);

/* ---- neighbourhood collectives ------------------------------------------------ */

/* Converted and passed to the C wrappers, which record their messages
 * (mpi_wrap.c); the typed ones (MPI_Neighbor_alltoallw,
 * MPI_Ineighbor_alltoallw) are with the other typed collectives below. */
FALL(mpi_neighbor_allgather, MPI_NEIGHBOR_ALLGATHER, MPI_Neighbor_allgather);
FALL(mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL, MPI_Neighbor_alltoall);

FIALL(mpi_ineighbor_allgather, MPI_INEIGHBOR_ALLGATHER, MPI_Ineighbor_allgather);
FIALL(mpi_ineighbor_alltoall, MPI_INEIGHBOR_ALLTOALL, MPI_Ineighbor_alltoall);

void mpi_neighbor_allgatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts,
			      MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Neighbor_allgatherv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, displs,
					       MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_neighbor_allgatherv, MPI_NEIGHBOR_ALLGATHERV);

void mpi_ineighbor_allgatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts,
			       MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
{
	FICOLL(MPI_Ineighbor_allgatherv(cbuf(sbuf), *scount, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts, displs,
					MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ineighbor_allgatherv, MPI_INEIGHBOR_ALLGATHERV);

void mpi_neighbor_alltoallv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, void *rbuf,
			     MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Neighbor_alltoallv(cbuf(sbuf), scounts, sdispls, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts,
					      rdispls, MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm)));
}
ALIASES(mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV);

void mpi_ineighbor_alltoallv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, void *rbuf,
			      MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *request,
			      MPI_Fint *ierr)
{
	FICOLL(MPI_Ineighbor_alltoallv(cbuf(sbuf), scounts, sdispls, MPI_Type_f2c(*stype), cbuf(rbuf), rcounts,
				       rdispls, MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm), &r));
}
ALIASES(mpi_ineighbor_alltoallv, MPI_INEIGHBOR_ALLTOALLV);

/* ---- typed collectives ------------------------------------------------------ */

/* MPI_Alltoallw, MPI_Ialltoallw, MPI_Neighbor_alltoallw and
 * MPI_Ineighbor_alltoallw take an array of datatypes per direction, one
 * per peer: converted into C arrays, one allocation per call (the send
 * types first, none when the send buffer is MPI_IN_PLACE, then the
 * receive types), sized as MPI reads them: the communicator's size (an
 * intercommunicator's remote size), or the topology's out- and in-degree.
 * A blocking call frees it when it returns. A nonblocking one hands it to
 * the C wrapper it calls (ptr_fortran_keep), whose request entry owns it
 * until MPI completes the request (MPI may read the arrays until then):
 * the Wait or Test that completes it frees it (mpi_wrap.c). */
struct types {
	MPI_Datatype *s, *r; /* s NULL: not converted (MPI_IN_PLACE) */
	void *mem;
};

static int types_in(struct types *ty, const MPI_Fint *fs, int ns, const MPI_Fint *fr, int nr)
{
	ns = fs && ns > 0 ? ns : 0;
	nr = nr > 0 ? nr : 0;
	MPI_Datatype *m = malloc(sizeof(MPI_Datatype) * ((size_t)ns + (size_t)nr + 1)); /* + 1: never malloc(0) */
	if (!m)
		return 0;
	for (int i = 0; i < ns; i++)
		m[i] = MPI_Type_f2c(fs[i]);
	for (int i = 0; i < nr; i++)
		m[ns + i] = MPI_Type_f2c(fr[i]);
	ty->mem = m;
	ty->s = fs ? m : NULL;
	ty->r = m + ns;
	return 1;
}

/* The peers of an all-to-all on c (0 when MPI cannot tell: the call then
 * fails on c as it would without us). */
static int peers(MPI_Comm c)
{
	int inter = 0, n = 0;
	if (PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS)
		return 0;
	if ((inter ? PMPI_Comm_remote_size(c, &n) : PMPI_Comm_size(c, &n)) != MPI_SUCCESS)
		return 0;
	return n;
}

/* The in- and out-degree of c's topology, as MPI-3 §7.6 counts the
 * neighbours (a Cartesian dimension names two, MPI_PROC_NULL included;
 * 0 without a topology: the call then fails as it would without us). */
static void degrees(MPI_Comm c, int *in, int *out)
{
	int topo = MPI_UNDEFINED, n = 0, me = 0, weighted = 0;
	*in = *out = 0;
	if (PMPI_Topo_test(c, &topo) != MPI_SUCCESS)
		return;
	if (topo == MPI_CART && PMPI_Cartdim_get(c, &n) == MPI_SUCCESS)
		*in = *out = 2 * n;
	else if (topo == MPI_GRAPH && PMPI_Comm_rank(c, &me) == MPI_SUCCESS &&
		 PMPI_Graph_neighbors_count(c, me, &n) == MPI_SUCCESS)
		*in = *out = n;
	else if (topo == MPI_DIST_GRAPH && PMPI_Dist_graph_neighbors_count(c, in, out, &weighted) != MPI_SUCCESS)
		*in = *out = 0;
}

/* After a nonblocking call that was handed mem: the C wrapper took it
 * (ptr_fortran_keep cleared) and frees it at the completion, or did at a
 * failure. Else no wrapper of ours ran (another tool's in front): mem is
 * freed when the call failed, and stays allocated when it started, since
 * MPI may read it until a completion ptrace will not see. */
static void keep_back(void *mem, int rc)
{
	if (ptr_fortran_keep != mem)
		return;
	ptr_fortran_keep = NULL;
	if (rc != MPI_SUCCESS)
		free(mem);
}

void mpi_alltoallw_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stypes, void *rbuf,
		    MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	void *sb = cbuf(sbuf);
	int n = peers(c);
	struct types ty;
	if (!types_in(&ty, sb == MPI_IN_PLACE ? NULL : stypes, n, rtypes, n)) {
		no_mem(ierr);
		return;
	}
	set_ierr(ierr, MPI_Alltoallw(sb, scounts, sdispls, ty.s, cbuf(rbuf), rcounts, rdispls, ty.r, c));
	free(ty.mem);
}
ALIASES(mpi_alltoallw, MPI_ALLTOALLW);

void mpi_ialltoallw_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stypes, void *rbuf,
		     MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm, MPI_Fint *request,
		     MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	void *sb = cbuf(sbuf);
	int n = peers(c);
	struct types ty;
	if (!types_in(&ty, sb == MPI_IN_PLACE ? NULL : stypes, n, rtypes, n)) {
		no_mem(ierr);
		return;
	}
	MPI_Request r = MPI_REQUEST_NULL;
	ptr_fortran_keep = ty.mem;
	int rc = MPI_Ialltoallw(sb, scounts, sdispls, ty.s, cbuf(rbuf), rcounts, rdispls, ty.r, c, &r);
	keep_back(ty.mem, rc);
	if (rc == MPI_SUCCESS)
		*request = MPI_Request_c2f(r);
	set_ierr(ierr, rc);
}
ALIASES(mpi_ialltoallw, MPI_IALLTOALLW);

/* The displacements are INTEGER(KIND=MPI_ADDRESS_KIND) arrays: MPI_Aint. */
void mpi_neighbor_alltoallw_(void *sbuf, MPI_Fint *scounts, MPI_Aint *sdispls, MPI_Fint *stypes, void *rbuf,
			     MPI_Fint *rcounts, MPI_Aint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int in, out;
	degrees(c, &in, &out);
	struct types ty;
	if (!types_in(&ty, stypes, out, rtypes, in)) {
		no_mem(ierr);
		return;
	}
	set_ierr(ierr, MPI_Neighbor_alltoallw(cbuf(sbuf), scounts, sdispls, ty.s, cbuf(rbuf), rcounts, rdispls, ty.r, c));
	free(ty.mem);
}
ALIASES(mpi_neighbor_alltoallw, MPI_NEIGHBOR_ALLTOALLW);

void mpi_ineighbor_alltoallw_(void *sbuf, MPI_Fint *scounts, MPI_Aint *sdispls, MPI_Fint *stypes, void *rbuf,
			      MPI_Fint *rcounts, MPI_Aint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm, MPI_Fint *request,
			      MPI_Fint *ierr)
{
	FCALLER();
	MPI_Comm c = MPI_Comm_f2c(*comm);
	int in, out;
	degrees(c, &in, &out);
	struct types ty;
	if (!types_in(&ty, stypes, out, rtypes, in)) {
		no_mem(ierr);
		return;
	}
	MPI_Request r = MPI_REQUEST_NULL;
	ptr_fortran_keep = ty.mem;
	int rc = MPI_Ineighbor_alltoallw(cbuf(sbuf), scounts, sdispls, ty.s, cbuf(rbuf), rcounts, rdispls, ty.r, c, &r);
	keep_back(ty.mem, rc);
	if (rc == MPI_SUCCESS)
		*request = MPI_Request_c2f(r);
	set_ierr(ierr, rc);
}
ALIASES(mpi_ineighbor_alltoallw, MPI_INEIGHBOR_ALLTOALLW);

/* ---- windows ------------------------------------------------------------------ */

/* A window's creation, MPI_Win_fence and MPI_Win_free, converted and
 * passed to the C wrappers, which record them as collectives of the
 * window (mpi_wrap.c). The window's other calls stay time only (below):
 * the Fortran handle given back is MPI's own (MPI_Win_c2f), which the
 * library's Fortran entries take as they take one it made itself.
 * Sizes are INTEGER(KIND=MPI_ADDRESS_KIND): MPI_Aint. The baseptr of
 * MPI_Win_allocate(_shared) is, by reference, an INTEGER(KIND=
 * MPI_ADDRESS_KIND) (mpif.h, use mpi) or a TYPE(C_PTR) (use mpi's
 * MPI_Win_allocate_cptr, use mpi_f08): either way the address of a
 * pointer-sized slot, which the C call fills with the memory's address, as
 * C's void *baseptr is. */
_Static_assert(sizeof(MPI_Aint) == sizeof(void *), "an INTEGER(KIND=MPI_ADDRESS_KIND) holds a C pointer");

static void put_win(int rc, MPI_Win w, MPI_Fint *f)
{
	if (rc == MPI_SUCCESS)
		*f = MPI_Win_c2f(w);
}

/* use mpi's TYPE(C_PTR) forms (MPI-3.1 §11.2.2, §11.2.3: MPI_WIN_ALLOCATE_CPTR, …), as
 * Open MPI's libmpi_mpifh exports them: the same arguments. */
#define CPTR_ALIASES(lo, UP)                                                    \
	extern __typeof__(lo##_) lo##_cptr __attribute__((alias(#lo "_")));    \
	extern __typeof__(lo##_) lo##_cptr_ __attribute__((alias(#lo "_")));   \
	extern __typeof__(lo##_) lo##_cptr__ __attribute__((alias(#lo "_")));  \
	extern __typeof__(lo##_) UP##_CPTR __attribute__((alias(#lo "_")))

void mpi_win_create_(void *base, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
		     MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_create(cbuf(base), *size, *disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), &w);
	put_win(rc, w, win);
	set_ierr(ierr, rc);
}
ALIASES(mpi_win_create, MPI_WIN_CREATE);

void mpi_win_allocate_(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm, void *baseptr,
		       MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_allocate(*size, *disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), baseptr, &w);
	put_win(rc, w, win);
	set_ierr(ierr, rc);
}
ALIASES(mpi_win_allocate, MPI_WIN_ALLOCATE);
CPTR_ALIASES(mpi_win_allocate, MPI_WIN_ALLOCATE);

void mpi_win_allocate_shared_(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm, void *baseptr,
			      MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_allocate_shared(*size, *disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), baseptr, &w);
	put_win(rc, w, win);
	set_ierr(ierr, rc);
}
ALIASES(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED);
CPTR_ALIASES(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED);

void mpi_win_create_dynamic_(MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_create_dynamic(MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), &w);
	put_win(rc, w, win);
	set_ierr(ierr, rc);
}
ALIASES(mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC);

void mpi_win_fence_(MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_fence(*assert, MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_fence, MPI_WIN_FENCE);

/* General active target synchronisation: recorded by the C wrappers
 * (messages under reserved tags, mpi_wrap.c). */
void mpi_win_post_(MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_post(MPI_Group_f2c(*group), *assert, MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_post, MPI_WIN_POST);

void mpi_win_start_(MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_start(MPI_Group_f2c(*group), *assert, MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_start, MPI_WIN_START);

void mpi_win_complete_(MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_complete(MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_complete, MPI_WIN_COMPLETE);

void mpi_win_wait_(MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_wait(MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_wait, MPI_WIN_WAIT);

/* flag: a Fortran LOGICAL, gfortran's .true. (1), as mpi_test_'s. */
void mpi_win_test_(MPI_Fint *win, MPI_Fint *flag, MPI_Fint *ierr)
{
	FCALLER();
	int f = 0;
	int rc = MPI_Win_test(MPI_Win_f2c(*win), &f);
	if (rc == MPI_SUCCESS)
		*flag = f != 0;
	set_ierr(ierr, rc);
}
ALIASES(mpi_win_test, MPI_WIN_TEST);

/* Passive target synchronisation: recorded by the C wrappers (the lock
 * epochs' ends, mpi_wrap.c). */
void mpi_win_lock_(MPI_Fint *lock_type, MPI_Fint *rank, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_lock(*lock_type, *rank, *assert, MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_lock, MPI_WIN_LOCK);

void mpi_win_unlock_(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_unlock(*rank, MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_unlock, MPI_WIN_UNLOCK);

void mpi_win_lock_all_(MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_lock_all(*assert, MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_lock_all, MPI_WIN_LOCK_ALL);

void mpi_win_unlock_all_(MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	set_ierr(ierr, MPI_Win_unlock_all(MPI_Win_f2c(*win)));
}
ALIASES(mpi_win_unlock_all, MPI_WIN_UNLOCK_ALL);

/* The window is INOUT: MPI_WIN_NULL's Fortran handle after. */
void mpi_win_free_(MPI_Fint *win, MPI_Fint *ierr)
{
	FCALLER();
	MPI_Win w = MPI_Win_f2c(*win);
	int rc = MPI_Win_free(&w);
	put_win(rc, w, win);
	set_ierr(ierr, rc);
}
ALIASES(mpi_win_free, MPI_WIN_FREE);

/* ---- calls recorded as MPI time only ------------------------------------- */

/* Buffered sends' buffers, MPI-IO and one-sided communication but for a
 * window's creation, fence and free: their time is MPI time, what they
 * synchronise is not recorded (as the C wrappers of mpi_wrap.c). A binding
 * here brackets the library's own Fortran profiling entry (pmpi_x_ for use mpi
 * and mpif.h, pmpi_x_f08_ for mpi_f08) with mpi_enter and mpi_exit and
 * hands it the arguments untouched: no handle, buffer, string or status
 * is converted, so nothing is lost (the character arguments' hidden
 * lengths are the last ones, counted in n). The entry is looked up once. */
typedef void (*fentry)(void);

/* MPICH 4's libmpichfort names the profiling entries of its mpi_f08
 * bindings pmpir_x_f08_ (no pmpi_x_f08_): the same arguments, the same
 * body as its mpi_x_f08_. */
static fentry fpmpir(const char *name)
{
	char alt[128];
	if (strncmp(name, "pmpi_", 5) != 0 || strlen(name) + 2 > sizeof alt)
		return NULL;
	snprintf(alt, sizeof alt, "pmpir_%s", name + 5);
	return (fentry)dlsym(RTLD_DEFAULT, alt);
}

static fentry fpmpi(fentry *slot, const char *name)
{
	fentry f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (f)
		return f;
	f = (fentry)dlsym(RTLD_DEFAULT, name);
	if (!f)
		f = fpmpir(name);
	if (!f) {
		fprintf(stderr, "ptrace: the MPI library has no %s, which this Fortran call needs\n", name);
		abort();
	}
	__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}

#define FP1 void *a1
#define FP2 FP1, void *a2
#define FP3 FP2, void *a3
#define FP4 FP3, void *a4
#define FP5 FP4, void *a5
#define FP6 FP5, void *a6
#define FP7 FP6, void *a7
#define FP8 FP7, void *a8
#define FP9 FP8, void *a9
#define FP10 FP9, void *a10
#define FP11 FP10, void *a11
#define FP12 FP11, void *a12
#define FP13 FP12, void *a13
#define FP14 FP13, void *a14
#define FA1 a1
#define FA2 FA1, a2
#define FA3 FA2, a3
#define FA4 FA3, a4
#define FA5 FA4, a5
#define FA6 FA5, a6
#define FA7 FA6, a7
#define FA8 FA7, a8
#define FA9 FA8, a9
#define FA10 FA9, a10
#define FA11 FA10, a11
#define FA12 FA11, a12
#define FA13 FA12, a13
#define FA14 FA13, a14

/* One entry point, name, forwarding its n arguments to the entry pname. */
#define FTIMED(name, pname, C, n)                                                            \
	void name(FP##n)                                                                     \
	{                                                                                    \
		static fentry entry;                                                         \
		void (*f)(FP##n) = (void (*)(FP##n))fpmpi(&entry, pname);                    \
		ptr_thread *t = ptr_self();                                                  \
		ptr_ev2(t, K_MPI_ENTER, S_##C, ptr_loc(t, __builtin_return_address(0)));     \
		f(FA##n);                                                                    \
		ptr_ev1(t, K_MPI_EXIT, S_##C);                                               \
	}

/* The four F77 names share one body (pmpi_x_); mpi_f08's its own. */
#define FTIME(lo, UP, C, n)                                              \
	FTIMED(lo##_, "p" #lo "_", C, n)                                 \
	FTIMED(lo##_f08_, "p" #lo "_f08_", C, n)                         \
	extern __typeof__(lo##_) lo __attribute__((alias(#lo "_")));     \
	extern __typeof__(lo##_) lo##__ __attribute__((alias(#lo "_"))); \
	extern __typeof__(lo##_) UP __attribute__((alias(#lo "_")))


FTIME(mpi_buffer_attach, MPI_BUFFER_ATTACH, MPI_Buffer_attach, 3);
FTIME(mpi_buffer_detach, MPI_BUFFER_DETACH, MPI_Buffer_detach, 3);

FTIME(mpi_file_open, MPI_FILE_OPEN, MPI_File_open, 7);
FTIME(mpi_file_close, MPI_FILE_CLOSE, MPI_File_close, 2);
FTIME(mpi_file_delete, MPI_FILE_DELETE, MPI_File_delete, 4);
FTIME(mpi_file_set_size, MPI_FILE_SET_SIZE, MPI_File_set_size, 3);
FTIME(mpi_file_preallocate, MPI_FILE_PREALLOCATE, MPI_File_preallocate, 3);
FTIME(mpi_file_set_view, MPI_FILE_SET_VIEW, MPI_File_set_view, 8);
FTIME(mpi_file_seek, MPI_FILE_SEEK, MPI_File_seek, 4);
FTIME(mpi_file_seek_shared, MPI_FILE_SEEK_SHARED, MPI_File_seek_shared, 4);
FTIME(mpi_file_sync, MPI_FILE_SYNC, MPI_File_sync, 2);
FTIME(mpi_file_read, MPI_FILE_READ, MPI_File_read, 6);
FTIME(mpi_file_read_all, MPI_FILE_READ_ALL, MPI_File_read_all, 6);
FTIME(mpi_file_read_shared, MPI_FILE_READ_SHARED, MPI_File_read_shared, 6);
FTIME(mpi_file_read_ordered, MPI_FILE_READ_ORDERED, MPI_File_read_ordered, 6);
FTIME(mpi_file_write, MPI_FILE_WRITE, MPI_File_write, 6);
FTIME(mpi_file_write_all, MPI_FILE_WRITE_ALL, MPI_File_write_all, 6);
FTIME(mpi_file_write_shared, MPI_FILE_WRITE_SHARED, MPI_File_write_shared, 6);
FTIME(mpi_file_write_ordered, MPI_FILE_WRITE_ORDERED, MPI_File_write_ordered, 6);
FTIME(mpi_file_read_at, MPI_FILE_READ_AT, MPI_File_read_at, 7);
FTIME(mpi_file_read_at_all, MPI_FILE_READ_AT_ALL, MPI_File_read_at_all, 7);
FTIME(mpi_file_write_at, MPI_FILE_WRITE_AT, MPI_File_write_at, 7);
FTIME(mpi_file_write_at_all, MPI_FILE_WRITE_AT_ALL, MPI_File_write_at_all, 7);
FTIME(mpi_file_iread, MPI_FILE_IREAD, MPI_File_iread, 6);
FTIME(mpi_file_iread_all, MPI_FILE_IREAD_ALL, MPI_File_iread_all, 6);
FTIME(mpi_file_iwrite, MPI_FILE_IWRITE, MPI_File_iwrite, 6);
FTIME(mpi_file_iwrite_all, MPI_FILE_IWRITE_ALL, MPI_File_iwrite_all, 6);
FTIME(mpi_file_iread_at, MPI_FILE_IREAD_AT, MPI_File_iread_at, 7);
FTIME(mpi_file_iwrite_at, MPI_FILE_IWRITE_AT, MPI_File_iwrite_at, 7);
FTIME(mpi_file_iread_shared, MPI_FILE_IREAD_SHARED, MPI_File_iread_shared, 6);
FTIME(mpi_file_iwrite_shared, MPI_FILE_IWRITE_SHARED, MPI_File_iwrite_shared, 6);
FTIME(mpi_file_iread_at_all, MPI_FILE_IREAD_AT_ALL, MPI_File_iread_at_all, 7);
FTIME(mpi_file_iwrite_at_all, MPI_FILE_IWRITE_AT_ALL, MPI_File_iwrite_at_all, 7);
FTIME(mpi_file_read_all_begin, MPI_FILE_READ_ALL_BEGIN, MPI_File_read_all_begin, 5);
FTIME(mpi_file_read_all_end, MPI_FILE_READ_ALL_END, MPI_File_read_all_end, 4);
FTIME(mpi_file_write_all_begin, MPI_FILE_WRITE_ALL_BEGIN, MPI_File_write_all_begin, 5);
FTIME(mpi_file_write_all_end, MPI_FILE_WRITE_ALL_END, MPI_File_write_all_end, 4);
FTIME(mpi_file_read_at_all_begin, MPI_FILE_READ_AT_ALL_BEGIN, MPI_File_read_at_all_begin, 6);
FTIME(mpi_file_read_at_all_end, MPI_FILE_READ_AT_ALL_END, MPI_File_read_at_all_end, 4);
FTIME(mpi_file_write_at_all_begin, MPI_FILE_WRITE_AT_ALL_BEGIN, MPI_File_write_at_all_begin, 6);
FTIME(mpi_file_write_at_all_end, MPI_FILE_WRITE_AT_ALL_END, MPI_File_write_at_all_end, 4);
FTIME(mpi_file_read_ordered_begin, MPI_FILE_READ_ORDERED_BEGIN, MPI_File_read_ordered_begin, 5);
FTIME(mpi_file_read_ordered_end, MPI_FILE_READ_ORDERED_END, MPI_File_read_ordered_end, 4);
FTIME(mpi_file_write_ordered_begin, MPI_FILE_WRITE_ORDERED_BEGIN, MPI_File_write_ordered_begin, 5);
FTIME(mpi_file_write_ordered_end, MPI_FILE_WRITE_ORDERED_END, MPI_File_write_ordered_end, 4);

FTIME(mpi_win_flush, MPI_WIN_FLUSH, MPI_Win_flush, 3);
FTIME(mpi_win_flush_all, MPI_WIN_FLUSH_ALL, MPI_Win_flush_all, 2);
FTIME(mpi_win_flush_local, MPI_WIN_FLUSH_LOCAL, MPI_Win_flush_local, 3);
FTIME(mpi_win_flush_local_all, MPI_WIN_FLUSH_LOCAL_ALL, MPI_Win_flush_local_all, 2);
FTIME(mpi_reduce_local, MPI_REDUCE_LOCAL, MPI_Reduce_local, 6);
FTIME(mpi_win_sync, MPI_WIN_SYNC, MPI_Win_sync, 2);
FTIME(mpi_put, MPI_PUT, MPI_Put, 9);
FTIME(mpi_get, MPI_GET, MPI_Get, 9);
FTIME(mpi_accumulate, MPI_ACCUMULATE, MPI_Accumulate, 10);
FTIME(mpi_get_accumulate, MPI_GET_ACCUMULATE, MPI_Get_accumulate, 13);
FTIME(mpi_fetch_and_op, MPI_FETCH_AND_OP, MPI_Fetch_and_op, 8);
FTIME(mpi_compare_and_swap, MPI_COMPARE_AND_SWAP, MPI_Compare_and_swap, 8);
FTIME(mpi_rput, MPI_RPUT, MPI_Rput, 10);
FTIME(mpi_rget, MPI_RGET, MPI_Rget, 10);
FTIME(mpi_raccumulate, MPI_RACCUMULATE, MPI_Raccumulate, 11);
FTIME(mpi_rget_accumulate, MPI_RGET_ACCUMULATE, MPI_Rget_accumulate, 14);
