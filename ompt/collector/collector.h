/*
 * ptrace collector: internal interface shared by the OMPT tool (ompt_tool.c),
 * the PMPI wrappers (mpi_wrap.c) and the core (core.c: buffers, encoding,
 * files, tables, signals). The on-disk format is docs/trace-format.md.
 *
 * Recording principles (POT §3.1): callbacks only record; every thread appends
 * to its own preallocated buffer with no lock and no shared atomic; ids are
 * thread_index<<40 | per-thread counter. Buffers hold raw fixed-width records
 * (8 + 8·nargs bytes); the columnar chunk encoding runs only when a buffer is
 * full or at the end of the run.
 */
#ifndef PTRACE_COLLECTOR_H
#define PTRACE_COLLECTOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define PTR_PRODUCER "ptrace-collector 0.1"
#define PTR_FORMAT_VERSION 4 /* docs/trace-format.md: mpi_enter carries its call site */

/* Event kinds: docs/trace-format.md, never renumber. */
enum {
	K_THREAD_BEGIN = 1, K_THREAD_END, K_PARALLEL_BEGIN, K_PARALLEL_END,
	K_IMPLICIT_BEGIN, K_IMPLICIT_END, K_TASK_CREATE, K_TASK_DEPS,
	K_TASK_DEPENDENCE, K_TASK_SCHEDULE, K_SYNC_BEGIN, K_SYNC_END,
	K_SYNC_WAIT_BEGIN, K_SYNC_WAIT_END, K_DETACH_FULFILL, K_CANCEL,
	K_MPI_ENTER, K_MPI_EXIT, K_MPI_SEND, K_MPI_RECV, K_MPI_RECV_POST,
	K_MPI_REQUEST_DONE, K_COLL_BEGIN, K_COLL_END, K_REMOTE_DEP_OUT,
	K_REMOTE_DEP_IN, K_REGION_ENTER, K_REGION_EXIT, K_TASK_ATTR,
	K_FLUSH_BEGIN, K_FLUSH_END, K_WORK_BEGIN, K_WORK_END,
	K_MUTEX_ACQUIRE, K_MUTEX_ACQUIRED, K_MUTEX_RELEASED,
	K_COLL_START, K_COLL_COMPLETE, K_MPI_POLLED, K_RMA_LOCK, K_RMA_UNLOCK,
	K_MPI_CANCELLED, K_MPI_RECV_FREED, K_NUM
};

#define PTR_MAX_THREADS 65536
#define PTR_ID_BITS 40
#define PTR_LOC_CACHE 256   /* per-thread codeptr -> location id cache */
#define PTR_ISTACK 64       /* nesting depth of implicit tasks kept per thread */
#define PTR_MAX_DEPS 16384  /* longer dependence lists are cut (warned once) */

/* MPI function names: string ids are the positions in this list (the strings
 * table is static, written once after the header). */
#define PTR_MPI_FUNCS(X) \
	X(MPI_Init) X(MPI_Init_thread) X(MPI_Finalize) \
	X(MPI_Send) X(MPI_Ssend) X(MPI_Bsend) X(MPI_Rsend) X(MPI_Isend) X(MPI_Issend) \
	X(MPI_Recv) X(MPI_Irecv) X(MPI_Sendrecv) \
	X(MPI_Wait) X(MPI_Waitall) X(MPI_Waitany) X(MPI_Waitsome) \
	X(MPI_Test) X(MPI_Testall) X(MPI_Testany) X(MPI_Testsome) \
	X(MPI_Probe) X(MPI_Iprobe) X(MPI_Request_free) \
	X(MPI_Barrier) X(MPI_Bcast) X(MPI_Reduce) X(MPI_Allreduce) \
	X(MPI_Gather) X(MPI_Gatherv) X(MPI_Scatter) X(MPI_Scatterv) \
	X(MPI_Allgather) X(MPI_Allgatherv) X(MPI_Alltoall) X(MPI_Alltoallv) \
	X(MPI_Reduce_scatter) X(MPI_Reduce_scatter_block) X(MPI_Scan) X(MPI_Exscan) \
	X(MPI_Comm_split) X(MPI_Comm_split_type) X(MPI_Comm_dup) X(MPI_Comm_create) \
	X(MPI_Comm_free) X(MPI_Abort) \
	X(MPI_Comm_create_group) X(MPI_Comm_dup_with_info) X(MPI_Comm_idup) \
	X(MPI_Cart_create) X(MPI_Cart_sub) X(MPI_Graph_create) X(MPI_Dist_graph_create) \
	X(MPI_Dist_graph_create_adjacent) X(MPI_Intercomm_create) X(MPI_Intercomm_merge) \
	X(MPI_Send_init) X(MPI_Ssend_init) X(MPI_Bsend_init) X(MPI_Rsend_init) X(MPI_Recv_init) \
	X(MPI_Start) X(MPI_Startall) X(MPI_Sendrecv_replace) X(MPI_Ibsend) X(MPI_Irsend) \
	X(MPI_Ibarrier) X(MPI_Ibcast) X(MPI_Ireduce) X(MPI_Iallreduce) X(MPI_Igather) X(MPI_Igatherv) \
	X(MPI_Iscatter) X(MPI_Iscatterv) X(MPI_Iallgather) X(MPI_Iallgatherv) X(MPI_Ialltoall) X(MPI_Ialltoallv) \
	X(MPI_Ireduce_scatter) X(MPI_Ireduce_scatter_block) X(MPI_Iscan) X(MPI_Iexscan) \
	X(MPI_Neighbor_allgather) X(MPI_Neighbor_allgatherv) X(MPI_Neighbor_alltoall) X(MPI_Neighbor_alltoallv) \
	X(MPI_Ineighbor_allgather) X(MPI_Ineighbor_alltoall) X(MPI_Ineighbor_alltoallv) \
	X(MPI_Mprobe) X(MPI_Improbe) X(MPI_Mrecv) X(MPI_Imrecv) X(MPI_Alltoallw) X(MPI_Ineighbor_allgatherv) \
	X(MPI_Ialltoallw) X(MPI_Neighbor_alltoallw) X(MPI_Ineighbor_alltoallw) X(MPI_File_open) X(MPI_File_close) \
	X(MPI_File_delete) X(MPI_File_set_size) X(MPI_File_preallocate) X(MPI_File_set_view) X(MPI_File_seek) \
	X(MPI_File_seek_shared) X(MPI_File_sync) X(MPI_File_read) X(MPI_File_read_all) X(MPI_File_read_shared) \
	X(MPI_File_read_ordered) X(MPI_File_read_at) X(MPI_File_read_at_all) X(MPI_File_write) X(MPI_File_write_all) \
	X(MPI_File_write_shared) X(MPI_File_write_ordered) X(MPI_File_write_at) X(MPI_File_write_at_all) \
	X(MPI_File_iread) X(MPI_File_iread_all) X(MPI_File_iread_at) X(MPI_File_iwrite) X(MPI_File_iwrite_all) \
	X(MPI_File_iwrite_at) X(MPI_Win_create) X(MPI_Win_allocate) X(MPI_Win_allocate_shared) \
	X(MPI_Win_create_dynamic) X(MPI_Win_free) X(MPI_Win_fence) X(MPI_Win_lock) X(MPI_Win_unlock) \
	X(MPI_Win_lock_all) X(MPI_Win_unlock_all) X(MPI_Win_flush) X(MPI_Win_flush_all) X(MPI_Win_flush_local) \
	X(MPI_Win_flush_local_all) X(MPI_Win_sync) X(MPI_Win_post) X(MPI_Win_start) X(MPI_Win_complete) \
	X(MPI_Win_wait) X(MPI_Win_test) X(MPI_Put) X(MPI_Get) X(MPI_Accumulate) X(MPI_Get_accumulate) \
	X(MPI_Fetch_and_op) X(MPI_Compare_and_swap) X(MPI_Rput) X(MPI_Rget) \
	X(MPI_Raccumulate) X(MPI_Rget_accumulate) X(MPI_File_iread_shared) X(MPI_File_iwrite_shared) \
	X(MPI_File_iread_at_all) X(MPI_File_iwrite_at_all) X(MPI_File_read_all_begin) X(MPI_File_read_all_end) \
	X(MPI_File_write_all_begin) X(MPI_File_write_all_end) X(MPI_File_read_at_all_begin) \
	X(MPI_File_read_at_all_end) X(MPI_File_write_at_all_begin) X(MPI_File_write_at_all_end) \
	X(MPI_File_read_ordered_begin) X(MPI_File_read_ordered_end) X(MPI_File_write_ordered_begin) \
	X(MPI_File_write_ordered_end) X(MPI_Buffer_attach) X(MPI_Buffer_detach) X(MPI_Reduce_local) \
	X(MPI_Comm_disconnect) X(MPI_Barrier_init) X(MPI_Bcast_init) X(MPI_Reduce_init) X(MPI_Allreduce_init) \
	X(MPI_Gather_init) X(MPI_Gatherv_init) X(MPI_Scatter_init) X(MPI_Scatterv_init) X(MPI_Allgather_init) \
	X(MPI_Allgatherv_init) X(MPI_Alltoall_init) X(MPI_Alltoallv_init) X(MPI_Alltoallw_init) \
	X(MPI_Reduce_scatter_init) X(MPI_Reduce_scatter_block_init) X(MPI_Scan_init) X(MPI_Exscan_init)

#define PTR_ENUM_FUNC(n) S_##n,
enum { PTR_MPI_FUNCS(PTR_ENUM_FUNC) S_NUM };

struct ptr_istack {
	uint64_t task, par;
	uint32_t team, num;
};

/* Per-thread state. The owner thread alone writes buf/pos/seq; committed is
 * published with release order so the finalizer and the signal handler read a
 * consistent prefix; chunk_seq/written change only under the file lock. */
typedef struct ptr_thread {
	uint64_t *buf;
	size_t cap;               /* words usable for events (slack kept for flush_begin) */
	size_t pos;               /* owner only */
	_Atomic size_t committed; /* words of complete records */
	uint64_t seq;             /* id counter, owner only */
	int index;
	_Atomic int type;         /* ompt_thread_t: 1 initial, 2 worker, 3 other; 5 user */
	long tid;
	int ompt;                 /* announced by OMPT thread_begin */
	int ended;
	int user;                 /* started by the program's pthread_create (pthread_wrap.c) */
	int creator;              /* a user thread's creator: its index + 1 (0 unknown) */
	int64_t chunk_seq;        /* under the file lock */
	int64_t written;          /* events written, under the file lock */
	int64_t written_ns;       /* time of the last event written, under the file lock */
	uint64_t last;            /* the latest stamp recorded, owner only */
	int idepth;
	struct ptr_istack istack[PTR_ISTACK];
	struct { const void *addr; uint32_t id; } loc_cache[PTR_LOC_CACHE];
} ptr_thread;

extern __thread ptr_thread *ptr_tls __attribute__((tls_model("initial-exec")));
/* The return address of the Fortran MPI binding being called (mpi_fortran.c
 * sets it, the C wrapper it calls takes it): the call site is the Fortran
 * caller's, not our shim's. */
extern __thread const void *ptr_fortran_ra __attribute__((tls_model("initial-exec")));
/* Memory a Fortran binding hands the nonblocking C wrapper it calls
 * (mpi_fortran.c: the converted datatype arrays of MPI_Ialltoallw and
 * MPI_Ineighbor_alltoallw, which MPI may read until the request completes):
 * the wrapper takes it (sets it to NULL) and frees it when the request
 * completes (mpi_wrap.c), or at once when the call fails. */
extern __thread void *ptr_fortran_keep __attribute__((tls_model("initial-exec")));

/* The call site of an MPI call: the Fortran caller's when a Fortran binding
 * passed one, else ra (the C wrapper's return address). */
static inline const void *ptr_call_site(const void *ra)
{
	const void *f = ptr_fortran_ra;
	if (f) {
		ptr_fortran_ra = NULL;
		return f;
	}
	return ra;
}
/* Timestamps in records are stamps: TSC ticks since ptr_clock_base when
 * ptr_tsc is set (an invariant TSC, x86-64), else CLOCK_MONOTONIC ns since
 * ptr_clock_base. The encoder turns stamps into CLOCK_MONOTONIC ns
 * (core.c: stamp_ns), so the file holds ns either way. */
extern uint64_t ptr_clock_base;
extern int ptr_tsc;

/* ---- core.c ---- */
void ptr_activate(void);                 /* idempotent: globals, buffers, handlers */
ptr_thread *ptr_register(int type, int ompt); /* calling thread */
ptr_thread *ptr_self_slow(void);          /* lazily registered (type other/initial) */
uint64_t ptr_overflow(ptr_thread *t, size_t need); /* returns the flush_end stamp */
uint32_t ptr_loc_slow(ptr_thread *t, const void *addr);
void ptr_finish(const char *why);        /* write tables + end frame (idempotent) */
int ptr_finished(void);
int ptr_active(void);
void ptr_set_runtime(const char *s);
void ptr_note_thread_end(ptr_thread *t);
/* Threads the program starts (pthread_wrap.c) */
#define PTR_THREAD_USER 5                /* docs/trace-format.md: ptrace's own thread type */
#define PTR_SYNC_THREAD_JOIN 256         /* docs/trace-format.md: ptrace's own sync kinds */
#define PTR_SYNC_COND_WAIT 257
#define PTR_SYNC_THREAD_BARRIER 258
#define PTR_SYNC_COND_SIGNAL 259
int ptr_recording(void);                 /* active and not closed (finished, crashed or forked) */
int ptr_user_reserve(void);              /* a thread index for a thread about to start (−1: none) */
void ptr_user_unreserve(int idx);        /* its start failed */
/* the calling new thread as type user, at its reserved index (or the next,
 * idx −1); creator: index + 1 of the thread that started it. NULL if not
 * recording. */
ptr_thread *ptr_user_begin(int idx, int creator);
void ptr_user_end(ptr_thread *t);        /* its thread_end, once (not when OpenMP took it over) */
/* MPI hooks (mpi_wrap.c drives them) */
void ptr_set_rank(int rank, int nranks, const char *dir); /* opens the file */
void ptr_random_run_id(uint8_t id[16]);  /* 128 random bits */
void ptr_set_run_id(const uint8_t id[16]); /* before ptr_set_rank: goes into the header */
const char *ptr_dir(void);
int ptr_rank(void);
void ptr_add_clock(const char *when, int64_t local, int64_t off, int64_t err);
int ptr_add_comm(int64_t id, const char *name, const int *members, int n); /* returns index */
/* As ptr_add_comm, keeping members (not a copy): for entries that share a
 * communicator's member table, which lives as long as the process (a
 * window's, a persistent collective's: one an initialisation, so a program
 * making one every step costs the table a slot, not its members). */
int ptr_add_comm_shared(int64_t id, const char *name, const int *members, int n);
void ptr_flush_all(void);                /* write every thread's committed events */
int64_t ptr_file_bytes(void);
void ptr_write_manifest(int nranks, const int64_t *events, const int64_t *bytes);
void ptr_default_dir(char *out, size_t n); /* "ptrace-<timestamp>" made unique in cwd */
void ptr_mpi_manifest_done(void);        /* rank 0 wrote the manifest at MPI_Finalize */
void ptr_install_signals(void);          /* again after MPI_Init (Open MPI installs its own) */
/* ---- ompt_tool.c ---- */
int ptr_ompt_active(void);               /* ompt_initialize ran and ompt_finalize has not */

static inline uint64_t ptr_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The stamp of an event: one rdtsc (~25 ns here, against ~55 ns for the
 * vDSO clock_gettime) where the TSC is usable. */
static inline uint64_t ptr_stamp(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(ptr_tsc, 1))
		return __rdtsc() - ptr_clock_base;
#endif
	return ptr_now() - ptr_clock_base;
}

/* A thread's stamps never go back: a thread moved to another core may read
 * a TSC a few ticks behind the last core's (seen on VMs), so a stamp below
 * the thread's last one takes that one's value. */
static inline uint64_t ptr_mono(ptr_thread *t, uint64_t stamp)
{
	if (__builtin_expect(stamp < t->last, 0))
		stamp = t->last;
	t->last = stamp;
	return stamp;
}

static inline ptr_thread *ptr_self(void)
{
	ptr_thread *t = ptr_tls;
	return t ? t : ptr_self_slow();
}

static inline uint64_t ptr_new_id(ptr_thread *t)
{
	return (uint64_t)t->index << PTR_ID_BITS | ++t->seq;
}

/* Reserve n words; the first will hold stamp<<8|kind. A stamp taken
 * before a buffer flush (*s, when given) moves to the flush's end, so that
 * a thread's times never go back. */
static inline uint64_t *ptr_res(ptr_thread *t, size_t n, uint64_t *s)
{
	if (__builtin_expect(t->pos + n > t->cap, 0)) {
		uint64_t e = ptr_overflow(t, n);
		if (s && *s < e)
			*s = e;
	}
	return t->buf + t->pos;
}

/* Stamps the reserved record and publishes it. */
static inline void ptr_put(ptr_thread *t, uint64_t *w, uint64_t stamp, unsigned kind, size_t n)
{
	w[0] = ptr_mono(t, stamp) << 8 | kind;
	t->pos += n;
	atomic_store_explicit(&t->committed, t->pos, memory_order_release);
}

/* Reserve n words, stamped now (the record's time is its reservation). */
static inline uint64_t *ptr_rec(ptr_thread *t, unsigned kind, size_t n)
{
	uint64_t *w = ptr_res(t, n, NULL);
	w[0] = ptr_mono(t, ptr_stamp()) << 8 | kind;
	return w;
}

static inline void ptr_commit(ptr_thread *t, size_t n)
{
	t->pos += n;
	atomic_store_explicit(&t->committed, t->pos, memory_order_release);
}

/*
 * Where the stamp goes (docs/ACCURACY.md): an OMPT callback runs between two
 * stretches of the program, and its own cost lands in whichever stretch its
 * stamp leaves it in. Events that end a stretch of work (a task completes, a
 * thread enters a sync region) are stamped as the first thing on entry
 * (ptr_evN_at with a stamp the callback took first, the cost falls after
 * the work); events that begin one (a task starts, a sync region ends) are
 * stamped last, just before returning to the runtime (ptr_evN_late, the cost
 * falls before the work). Events inside a stretch (task creation) are
 * stamped on entry; their cost is the fixed per-event cost the analysis
 * subtracts (header event_cost_ns).
 */
#define PTR_EV_FNS(N, PARAMS, FILL) \
	static inline void ptr_ev##N##_at(ptr_thread *t, uint64_t s, unsigned k PARAMS) \
	{ \
		uint64_t *w = ptr_res(t, N + 1, &s); \
		FILL; \
		ptr_put(t, w, s, k, N + 1); \
	} \
	static inline void ptr_ev##N##_late(ptr_thread *t, unsigned k PARAMS) \
	{ \
		uint64_t *w = ptr_res(t, N + 1, NULL); \
		FILL; \
		ptr_put(t, w, ptr_stamp(), k, N + 1); \
	} \
	static inline void ptr_ev##N(ptr_thread *t, unsigned k PARAMS) \
	{ \
		ptr_ev##N##_at(t, ptr_stamp(), k PTR_ARGS##N); \
	}
#define PTR_ARGS0
#define PTR_ARGS1 , a
#define PTR_ARGS2 , a, b
#define PTR_ARGS3 , a, b, c
#define PTR_ARGS4 , a, b, c, d
#define PTR_ARGS5 , a, b, c, d, e
#define PTR_P1 , uint64_t a
#define PTR_P2 PTR_P1, uint64_t b
#define PTR_P3 PTR_P2, uint64_t c
#define PTR_P4 PTR_P3, uint64_t d
#define PTR_P5 PTR_P4, uint64_t e
PTR_EV_FNS(0, , (void)w)
PTR_EV_FNS(1, PTR_P1, w[1] = a)
PTR_EV_FNS(2, PTR_P2, (w[1] = a, w[2] = b))
PTR_EV_FNS(3, PTR_P3, (w[1] = a, w[2] = b, w[3] = c))
PTR_EV_FNS(4, PTR_P4, (w[1] = a, w[2] = b, w[3] = c, w[4] = d))
PTR_EV_FNS(5, PTR_P5, (w[1] = a, w[2] = b, w[3] = c, w[4] = d, w[5] = e))
#undef PTR_P1
#undef PTR_P2
#undef PTR_P3
#undef PTR_P4
#undef PTR_P5
#undef PTR_ARGS0
#undef PTR_ARGS1
#undef PTR_ARGS2
#undef PTR_ARGS3
#undef PTR_ARGS4
#undef PTR_ARGS5
#undef PTR_EV_FNS

/* Location id of a code address: a per-thread direct-mapped cache in front of
 * the process table (locked only on first sight). Id 0 is "unknown". */
static inline uint32_t ptr_loc(ptr_thread *t, const void *addr)
{
	if (!addr)
		return 0;
	unsigned h = (unsigned)(((uintptr_t)addr >> 2) ^ ((uintptr_t)addr >> 11)) & (PTR_LOC_CACHE - 1);
	if (__builtin_expect(t->loc_cache[h].addr == addr, 1))
		return t->loc_cache[h].id;
	uint32_t id = ptr_loc_slow(t, addr);
	t->loc_cache[h].addr = addr;
	t->loc_cache[h].id = id;
	return id;
}

#endif
