/*
 * ptrace collector core: thread registry and buffers, the columnar chunk
 * encoder, frame writing (CRC-32C), the string/thread/location/comm/clock
 * tables, the end frame, the manifest, and the exit and signal paths.
 *
 * Locking: one process-wide file lock (a spin lock, so the signal handler can
 * try it) serialises encoding and writing; flushes are rare. The location
 * table has its own mutex, taken only the first time a thread meets a code
 * address. No lock is held across a call into MPI or the dynamic loader.
 */
#define _GNU_SOURCE
#include "collector.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

__thread ptr_thread *ptr_tls __attribute__((tls_model("initial-exec")));
__thread const void *ptr_fortran_ra __attribute__((tls_model("initial-exec")));
__thread void *ptr_fortran_keep __attribute__((tls_model("initial-exec")));
uint64_t ptr_clock_base;
int ptr_tsc;

/* Arguments per kind (docs/trace-format.md); task_dependences has one fixed
 * argument (task) followed by its list. */
static const uint8_t nargs[K_NUM] = {
	[K_THREAD_BEGIN] = 1, [K_THREAD_END] = 0, [K_PARALLEL_BEGIN] = 5, [K_PARALLEL_END] = 4,
	[K_IMPLICIT_BEGIN] = 5, [K_IMPLICIT_END] = 5, [K_TASK_CREATE] = 4, [K_TASK_DEPS] = 1,
	[K_TASK_DEPENDENCE] = 2, [K_TASK_SCHEDULE] = 3, [K_SYNC_BEGIN] = 4, [K_SYNC_END] = 4,
	[K_SYNC_WAIT_BEGIN] = 3, [K_SYNC_WAIT_END] = 3, [K_DETACH_FULFILL] = 1, [K_CANCEL] = 3,
	[K_MPI_ENTER] = 2, [K_MPI_EXIT] = 1, [K_MPI_SEND] = 5, [K_MPI_RECV] = 5,
	[K_MPI_RECV_POST] = 4, [K_MPI_REQUEST_DONE] = 1, [K_COLL_BEGIN] = 5, [K_COLL_END] = 3,
	[K_REMOTE_DEP_OUT] = 3, [K_REMOTE_DEP_IN] = 3, [K_REGION_ENTER] = 1, [K_REGION_EXIT] = 1,
	[K_TASK_ATTR] = 3, [K_FLUSH_BEGIN] = 0, [K_FLUSH_END] = 0, [K_WORK_BEGIN] = 3, [K_WORK_END] = 3,
	[K_MUTEX_ACQUIRE] = 3, [K_MUTEX_ACQUIRED] = 3, [K_MUTEX_RELEASED] = 3,
	[K_COLL_START] = 5, [K_COLL_COMPLETE] = 5, [K_MPI_POLLED] = 1,
	[K_RMA_LOCK] = 3, [K_RMA_UNLOCK] = 2,
	[K_MPI_CANCELLED] = 1, [K_MPI_RECV_FREED] = 4,
};

#define PTR_STR(n) #n,
static const char *const mpi_names[S_NUM] = { PTR_MPI_FUNCS(PTR_STR) };

/* ------------------------------------------------------------------------ */
/* Global state                                                             */

struct ptr_loc {
	uint64_t addr;
	const char *module; /* resolved module path (malloc'd or arena) */
	uint64_t offset;
	const char *func;
	_Atomic int state;  /* 0 new, 1 resolving, 2 resolved */
};

struct ptr_comm {
	int64_t id;
	char name[64];
	int n;
	const int *members; /* copied, or the caller's (ptr_add_comm_shared) */
};

struct ptr_clock {
	char when[16];
	int64_t local, off, err;
};

#define LOC_BLOCK 4096
#define LOC_BLOCKS 4096
#define COMM_BLOCK 256
#define COMM_BLOCKS 1024
#define MAX_CLOCKS 16
#define CHUNK_EVENTS 4096
#define ARGS_CAP ((size_t)CHUNK_EVENTS * 6)       /* values in the args stream before a flush */
#define ARGS_SLACK ((size_t)PTR_MAX_DEPS * 2 + 8) /* room for one more record */
#define SVB_CTRL(n) (((n) + 3) / 4)
#define MAX_FRAME_IOV 10 /* pieces of one frame's payload */
#define SVB_DATA(n) ((n) * 8 + 8)
#define TBUF_CAP ((size_t)1 << 20)

static struct {
	pthread_once_t once;
	_Atomic int active;
	_Atomic int finished;  /* end frame written (or given up) */
	_Atomic int closed;    /* no more writing: finished, crashed or forked */
	_Atomic int in_signal;
	int mpi_pending;       /* libptrace.so: the file waits for MPI_Init */
	_Atomic int mpi_manifest; /* rank 0 wrote the manifest at MPI_Finalize */
	size_t buf_words;
	int hw_crc;

	_Atomic(ptr_thread *) threads[PTR_MAX_THREADS];
	_Atomic int nthreads;
	_Atomic int threads_dirty;
	pthread_key_t key;
	_Atomic int nuser;      /* user threads registered (pthread_wrap.c) */
	uint64_t *spare[64];    /* buffers of ended user threads, for the next threads; under the file lock */
	_Atomic int nspare;

	_Atomic int lock; /* file lock: 0 free, else owner's thread index + 1 (or -1) */
	int fd;
	int file_failed;
	int rank_known, rank, nranks;
	char dir[4096];
	char path[4200];
	uint8_t *pending; /* frames produced before the file could be opened */
	size_t npending, cappending;
	int64_t bytes, nchunks;
	_Atomic int64_t dropped;
	int truncated;

	/* header */
	char host[256];
	char runtime[256];
	int pid;
	int64_t start_ns;
	char run_id[33]; /* 32 hex digits: the run identity (format version 2) */
	char cmd[65536];
	size_t cmdlen;

	/* tables */
	pthread_mutex_t loc_mu;
	struct ptr_loc *loc_blocks[LOC_BLOCKS];
	_Atomic uint32_t nlocs;
	uint32_t *loc_hash; /* open addressing, ids, under loc_mu */
	size_t loc_hcap;
	uint32_t locs_written;

	struct ptr_comm *comm_blocks[COMM_BLOCKS];
	_Atomic int ncomms;
	int comms_written;

	struct ptr_clock clocks[MAX_CLOCKS];
	_Atomic int nclocks;
	int clocks_written;

	struct sigaction old[65];
} g = {
	.once = PTHREAD_ONCE_INIT,
	.fd = -1,
#ifdef PTR_WITH_MPI
	.mpi_pending = 1, /* libptrace.so: rank and directory come from MPI_Init */
#endif
};

/* Encoder scratch, used under the file lock: the zig-zag coded values of a
 * chunk's time and args streams, and their stream-vbyte encodings. */
static struct {
	uint8_t kinds[CHUNK_EVENTS];
	uint64_t dt[CHUNK_EVENTS];
	uint64_t args[ARGS_CAP + ARGS_SLACK];
	uint8_t dt_ctrl[SVB_CTRL(CHUNK_EVENTS)];
	uint8_t dt_data[SVB_DATA(CHUNK_EVENTS)];
	uint8_t args_ctrl[SVB_CTRL(ARGS_CAP + ARGS_SLACK)];
	uint8_t args_data[SVB_DATA(ARGS_CAP + ARGS_SLACK)];
	size_t nd, na;
	uint32_t n;
	int64_t t0, last;
	/* Format version 3: each kind's arguments are coded against the
	 * event of that kind two back, its two register slots taking turns
	 * (task_schedule alternates between implicit and explicit tasks). */
	int64_t reg[K_NUM][2][5];
	uint8_t flip[K_NUM];
	uint64_t addr;
} E;

/* TSC stamps to CLOCK_MONOTONIC ns: points (stamp, ns) taken at activation
 * and at every drain, under the file lock; a stamp is mapped linearly
 * between the points around it, past the last one with the slope over all
 * points (the run's TSC rate). Point 0 is (0, ns at ptr_clock_base). */
#define MAX_CPTS 4096
static struct {
	uint64_t stamp;
	int64_t ns;
} cpts[MAX_CPTS];
static int ncpts;
static double tsc_ns_start; /* ns per tick, from the start-up calibration */
static int64_t event_cost_ns; /* start-up calibration of one recorded event */

static uint8_t tbuf[TBUF_CAP]; /* table frames, under the file lock */
static uint8_t hbuf[sizeof g.cmd + 4096]; /* header and strings frames */

static const int sigs[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT };

static long gettid_(void) { return (long)syscall(SYS_gettid); }

static void warn(const char *msg)
{
	/* write() only: callable from the signal path */
	char b[512];
	size_t n = 0;
	const char *pre = "ptrace collector: ";
	for (const char *p = pre; *p && n < sizeof b - 2; p++)
		b[n++] = *p;
	for (const char *p = msg; *p && n < sizeof b - 2; p++)
		b[n++] = *p;
	b[n++] = '\n';
	ssize_t r = write(2, b, n);
	(void)r;
}

/* ------------------------------------------------------------------------ */
/* CRC-32C                                                                  */

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
#if defined(__x86_64__)
	g.hw_crc = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c64 = c;
	while (n && ((uintptr_t)p & 7)) {
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
		n--;
	}
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
	}
	while (n--)
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
	return (uint32_t)c64;
}
#endif

/* crc continues a raw (not inverted) CRC register. */
static uint32_t crc_update(uint32_t c, const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (g.hw_crc)
		return crc_hw(c, p, n);
#endif
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
		    crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
	}
	while (n--)
		c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

/* ------------------------------------------------------------------------ */
/* msgpack on a fixed buffer                                                */

typedef struct {
	uint8_t *b;
	size_t n, cap;
	int over;
} mpw;

static void mp_raw(mpw *w, const void *p, size_t n)
{
	if (w->over || w->n + n > w->cap) {
		w->over = 1;
		return;
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void mp_u8(mpw *w, uint8_t c) { mp_raw(w, &c, 1); }

static void mp_be(mpw *w, uint8_t tag, uint64_t v, int bytes)
{
	uint8_t b[9];
	b[0] = tag;
	for (int i = 0; i < bytes; i++)
		b[1 + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	mp_raw(w, b, 1 + (size_t)bytes);
}

static void mp_uint(mpw *w, uint64_t v)
{
	if (v <= 0x7f)
		mp_u8(w, (uint8_t)v);
	else if (v <= 0xff)
		mp_be(w, 0xcc, v, 1);
	else if (v <= 0xffff)
		mp_be(w, 0xcd, v, 2);
	else if (v <= 0xffffffffu)
		mp_be(w, 0xce, v, 4);
	else
		mp_be(w, 0xcf, v, 8);
}

static void mp_int(mpw *w, int64_t v)
{
	if (v >= 0)
		mp_uint(w, (uint64_t)v);
	else if (v >= -32)
		mp_u8(w, (uint8_t)(int8_t)v);
	else if (v >= -128)
		mp_be(w, 0xd0, (uint64_t)v, 1);
	else if (v >= -32768)
		mp_be(w, 0xd1, (uint64_t)v, 2);
	else if (v >= -2147483648LL)
		mp_be(w, 0xd2, (uint64_t)v, 4);
	else
		mp_be(w, 0xd3, (uint64_t)v, 8);
}

static void mp_strn(mpw *w, const char *s, size_t n)
{
	if (n < 32)
		mp_u8(w, (uint8_t)(0xa0 | n));
	else if (n <= 0xff)
		mp_be(w, 0xd9, n, 1);
	else if (n <= 0xffff)
		mp_be(w, 0xda, n, 2);
	else
		mp_be(w, 0xdb, n, 4);
	mp_raw(w, s, n);
}

static void mp_str(mpw *w, const char *s) { mp_strn(w, s ? s : "", s ? strlen(s) : 0); }

static void mp_map(mpw *w, uint32_t n)
{
	if (n < 16)
		mp_u8(w, (uint8_t)(0x80 | n));
	else
		mp_be(w, 0xdf, n, 4);
}

static void mp_arr(mpw *w, uint32_t n)
{
	if (n < 16)
		mp_u8(w, (uint8_t)(0x90 | n));
	else
		mp_be(w, 0xdd, n, 4);
}

/* array32 header whose count is patched later */
static size_t mp_arr_open(mpw *w)
{
	size_t at = w->n;
	mp_be(w, 0xdd, 0, 4);
	return at;
}

static void mp_arr_patch(mpw *w, size_t at, uint32_t n)
{
	if (at + 5 <= w->n) {
		w->b[at + 1] = (uint8_t)(n >> 24);
		w->b[at + 2] = (uint8_t)(n >> 16);
		w->b[at + 3] = (uint8_t)(n >> 8);
		w->b[at + 4] = (uint8_t)n;
	}
}

static void mp_kv_int(mpw *w, const char *k, int64_t v)
{
	mp_str(w, k);
	mp_int(w, v);
}

static void mp_kv_str(mpw *w, const char *k, const char *v)
{
	mp_str(w, k);
	mp_str(w, v);
}

/* ------------------------------------------------------------------------ */
/* File lock                                                                */

static int lock_me(void)
{
	ptr_thread *t = ptr_tls;
	return t ? t->index + 1 : -1;
}

static void file_lock(void)
{
	int me = lock_me();
	for (unsigned spin = 0;; spin++) {
		int free_ = 0;
		if (atomic_compare_exchange_weak_explicit(&g.lock, &free_, me, memory_order_acquire, memory_order_relaxed))
			return;
		if (spin > 64)
			sched_yield();
	}
}

static void file_unlock(void) { atomic_store_explicit(&g.lock, 0, memory_order_release); }

/* Signal path: try for about two seconds; fails when this thread holds it. */
static int file_trylock_signal(void)
{
	int me = lock_me();
	if (atomic_load(&g.lock) == me && me != -1)
		return 0;
	for (int i = 0; i < 2000; i++) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&g.lock, &free_, me))
			return 1;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Files and frames (under the file lock)                                   */

static int write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

static int mkdir_p(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof p)
		return -1;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] == '/' || p[i] == 0) {
			char c = p[i];
			p[i] = 0;
			if (mkdir(p, 0777) < 0 && errno != EEXIST)
				return -1;
			p[i] = c;
		}
	}
	return 0;
}

static int emit_frame(int kind, struct iovec *iov, int niov, int in_signal);

static void write_header_frames(void)
{
	mpw w = { hbuf, 0, sizeof hbuf, 0 };
	mp_map(&w, ptr_tsc ? 16 : 15); /* 13 fields, then the stamping ones */
	mp_kv_str(&w, "format", "ptrace");
	mp_kv_int(&w, "version", PTR_FORMAT_VERSION);
	mp_kv_str(&w, "run_id", g.run_id);
	mp_kv_int(&w, "rank", g.rank);
	mp_kv_int(&w, "nranks", g.nranks);
	mp_kv_str(&w, "host", g.host);
	mp_kv_int(&w, "pid", g.pid);
	mp_str(&w, "command");
	uint32_t nargs_ = 0;
	for (size_t i = 0; i < g.cmdlen; i++)
		nargs_ += g.cmd[i] == 0;
	mp_arr(&w, nargs_);
	for (size_t i = 0; i < g.cmdlen;) {
		size_t l = strlen(g.cmd + i);
		mp_strn(&w, g.cmd + i, l);
		i += l + 1;
	}
	mp_kv_str(&w, "clock_unit", "ns");
	mp_kv_str(&w, "clock_source", "CLOCK_MONOTONIC");
	mp_kv_str(&w, "producer", PTR_PRODUCER);
	mp_kv_str(&w, "runtime", g.runtime);
	mp_kv_int(&w, "start_ns", g.start_ns);
	/* optional (docs/trace-format.md): how events were stamped, and what
	 * recording one costs, for the analysis' instrumentation correction */
	mp_kv_str(&w, "timestamp_counter", ptr_tsc ? "tsc" : "clock_gettime");
	if (ptr_tsc)
		mp_kv_int(&w, "tsc_hz", (int64_t)(1e9 / tsc_ns_start));
	mp_kv_int(&w, "event_cost_ns", event_cost_ns);
	struct iovec iov = { hbuf, w.n };
	emit_frame(1, &iov, 1, 0);

	w = (mpw){ hbuf, 0, sizeof hbuf, 0 };
	mp_map(&w, 2);
	mp_kv_int(&w, "base", 0);
	mp_str(&w, "values");
	mp_arr(&w, S_NUM);
	for (int i = 0; i < S_NUM; i++)
		mp_str(&w, mpi_names[i]);
	iov = (struct iovec){ hbuf, w.n };
	emit_frame(3, &iov, 1, 0);
}

/* Opens the rank file once the rank is known; writes header, strings and
 * whatever was produced before. Returns 0 when frames can be written. */
static int open_file(int in_signal)
{
	if (g.fd >= 0)
		return 0;
	if (g.file_failed || !g.rank_known)
		return -1;
	if (!g.dir[0]) {
		if (in_signal)
			return -1;
		ptr_default_dir(g.dir, sizeof g.dir);
	}
	if (mkdir_p(g.dir) < 0) {
		g.file_failed = 1;
		warn("cannot create the trace directory; events are dropped");
		return -1;
	}
	snprintf(g.path, sizeof g.path, "%s/rank-%05d.ptrace", g.dir, g.rank);
	int fd = open(g.path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
	if (fd < 0) {
		g.file_failed = 1;
		warn(errno == EEXIST ? "rank file exists already (another traced process, or a reused PTRACE_DIR): not tracing this process"
				     : "cannot create the rank file; events are dropped");
		return -1;
	}
	g.fd = fd;
	write_header_frames();
	if (g.npending) {
		struct iovec iov = { g.pending, g.npending };
		if (write_all(g.fd, &iov, 1) < 0)
			g.file_failed = 1;
		g.bytes += (int64_t)g.npending;
		if (!in_signal)
			free(g.pending);
		g.pending = NULL;
		g.npending = g.cappending = 0;
	}
	return 0;
}

/* Writes one frame: prefix (0x93, kind, 0xce crc, 0xc6 len) and payload.
 * Returns 1 when the frame was written (or kept until the file opens). */
static int emit_frame(int kind, struct iovec *iov, int niov, int in_signal)
{
	uint8_t k = (uint8_t)kind;
	uint32_t crc = crc_update(0xffffffffu, &k, 1);
	size_t len = 0;
	for (int i = 0; i < niov; i++) {
		crc = crc_update(crc, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	crc = ~crc;
	uint8_t h[12] = { 0x93, k, 0xce, (uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc,
			  0xc6, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len };
	struct iovec all[1 + MAX_FRAME_IOV];
	if (niov > MAX_FRAME_IOV)
		return 0;
	all[0] = (struct iovec){ h, 12 };
	for (int i = 0; i < niov; i++)
		all[1 + i] = iov[i];
	if (kind != 1 && g.fd < 0 && open_file(in_signal) < 0) {
		if (g.file_failed || in_signal || g.rank_known)
			return 0;
		/* rank not known yet (before MPI_Init): keep the frame in memory */
		size_t need = g.npending + 12 + len;
		if (need > g.cappending) {
			size_t c = g.cappending ? g.cappending * 2 : (1 << 20);
			while (c < need)
				c *= 2;
			uint8_t *p = realloc(g.pending, c);
			if (!p)
				return 0;
			g.pending = p;
			g.cappending = c;
		}
		for (int i = 0; i <= niov && i < 8; i++) {
			memcpy(g.pending + g.npending, all[i].iov_base, all[i].iov_len);
			g.npending += all[i].iov_len;
		}
		return 1;
	}
	if (g.fd < 0 || g.file_failed)
		return 0;
	if (write_all(g.fd, all, niov + 1) < 0) {
		g.file_failed = 1;
		g.truncated = 1;
		warn("write to the trace file failed; later events are dropped");
		return 0;
	}
	g.bytes += (int64_t)(12 + len);
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Clock: TSC stamps to ns                                                  */

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* A TSC reading and the CLOCK_MONOTONIC time at it: the mean of the two
 * clock reads around it, from the tightest of 5 tries (a thread preempted
 * between the reads would put the pair microseconds off). */
static uint64_t tsc_pair(int64_t *ns)
{
#if defined(__x86_64__)
	int64_t best = -1;
	uint64_t cb = 0;
	for (int i = 0; i < 5; i++) {
		int64_t a = (int64_t)ptr_now();
		uint64_t c = __rdtsc();
		int64_t b = (int64_t)ptr_now();
		if (best < 0 || b - a < best) {
			best = b - a;
			cb = c;
			*ns = a + (b - a) / 2;
		}
	}
	return cb;
#else
	*ns = (int64_t)ptr_now();
	return 0;
#endif
}

/* Appends a point (under the file lock, or before any thread records). */
static void clock_point(void)
{
	if (!ptr_tsc)
		return;
	int64_t ns;
	uint64_t c = tsc_pair(&ns) - ptr_clock_base;
	if (ncpts > 0 && (c <= cpts[ncpts - 1].stamp || ns < cpts[ncpts - 1].ns))
		return;
	if (ncpts == MAX_CPTS)
		ncpts--; /* keep the latest: the mapping of older stamps barely moves */
	cpts[ncpts].stamp = c;
	cpts[ncpts].ns = ns;
	ncpts++;
}

/* ns per tick over all points, or the start-up calibration's. */
static double tsc_slope(void)
{
	if (ncpts >= 2 && cpts[ncpts - 1].stamp > cpts[0].stamp && cpts[ncpts - 1].ns - cpts[0].ns > 1000000)
		return (double)(cpts[ncpts - 1].ns - cpts[0].ns) / (double)(cpts[ncpts - 1].stamp - cpts[0].stamp);
	return tsc_ns_start;
}

static int64_t stamp_ns(uint64_t s)
{
	if (!ptr_tsc)
		return (int64_t)(ptr_clock_base + s);
	if ((int64_t)s < 0) /* a CPU whose TSC lags the first one's */
		s = 0;
	int i = ncpts - 1;
	while (i > 0 && cpts[i].stamp > s)
		i--;
	double slope;
	if (i + 1 < ncpts)
		slope = (double)(cpts[i + 1].ns - cpts[i].ns) / (double)(cpts[i + 1].stamp - cpts[i].stamp);
	else
		slope = tsc_slope();
	return cpts[i].ns + (int64_t)((double)(s - cpts[i].stamp) * slope);
}

/* One task_create as the OMPT callback records it (calibration). */
static __attribute__((noinline)) void cal_event(ptr_thread *t, const void *code)
{
	uint64_t s = ptr_stamp();
	uint64_t id = ptr_new_id(t);
	ptr_ev4_at(t, s, K_TASK_CREATE, id, 1, 4, ptr_loc(t, code));
}

/* Start-up calibration (about 0.2 ms): the cost of recording one event,
 * the least of 7 batches of 400 (the OS only ever adds to a batch), on a
 * scratch thread whose records are thrown away; and, around it, the TSC
 * rate. */
static void calibrate(void)
{
	static ptr_thread cal;
	static uint64_t cbuf[4096];
	void (*volatile fn)(ptr_thread *, const void *) = cal_event;
	const void *code = (const void *)calibrate;
	cal.buf = cbuf;
	cal.cap = 4096 - 8;
	for (int i = 0; i < PTR_LOC_CACHE; i++) {
		cal.loc_cache[i].addr = code;
		cal.loc_cache[i].id = 1;
	}
	int64_t ns0, ns1;
	uint64_t c0 = tsc_pair(&ns0);
	int64_t best = -1;
	for (int b = 0; b < 7; b++) {
		cal.pos = 0;
		int64_t t0 = (int64_t)ptr_now();
		for (int i = 0; i < 400; i++)
			fn(&cal, code);
		int64_t d = ((int64_t)ptr_now() - t0) / 400;
		if (best < 0 || d < best)
			best = d;
	}
	uint64_t c1 = tsc_pair(&ns1);
	event_cost_ns = best;
	if (ptr_tsc) {
		double slope = c1 > c0 ? (double)(ns1 - ns0) / (double)(c1 - c0) : 0;
		if (slope > 0.1 && slope < 10) /* 0.1–10 GHz: believable */
			tsc_ns_start = slope;
		else
			ptr_tsc = 0;
	}
}

/* Whether the kernel keeps its own clock on the TSC: it switches to another
 * clocksource (hpet, acpi_pm) when it finds the TSCs of the CPUs out of step
 * or unstable. Unreadable (no sysfs): trust the CPU flag. */
static int kernel_trusts_tsc(void)
{
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	char b[64];
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return 1;
	b[n] = 0;
	return strncmp(b, "tsc", 3) == 0 || strncmp(b, "kvm-clock", 9) == 0 || strncmp(b, "hyperv_clocksource_tsc_page", 27) == 0;
}

/* Chooses the stamp source: the TSC where the CPU says it is invariant
 * (constant rate, running in every power state) and the kernel's clock is
 * built on it, unless PTRACE_CLOCK=monotonic. */
static void choose_clock(void)
{
	ptr_tsc = 0;
#if defined(__x86_64__)
	const char *e = getenv("PTRACE_CLOCK");
	unsigned a, b, c, d;
	if ((!e || strcmp(e, "monotonic") != 0) && __get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000007 &&
	    __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) && kernel_trusts_tsc())
		ptr_tsc = 1;
#endif
}

/* ------------------------------------------------------------------------ */
/* Chunk encoding (under the file lock)                                     */

static inline uint64_t zig(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

/* Stream-vbyte (docs/trace-format.md): a 2-bit code per value, four per
 * control byte (first value in the low bits); code 0 holds 0 in no byte,
 * 1 a value below 2^8 in one, 2 a value below 2^24 in three, 3 any value in
 * eight, little endian; the data ends with 8 zero bytes. Returns the data
 * length and sets *nctrl. */
static size_t svb_encode(const uint64_t *v, size_t n, uint8_t *ctrl, size_t *nctrl, uint8_t *data)
{
	static const unsigned len[4] = { 0, 1, 3, 8 };
	size_t d = 0;
	*nctrl = SVB_CTRL(n);
	memset(ctrl, 0, *nctrl);
	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		unsigned code = x == 0 ? 0 : x < 1u << 8 ? 1 : x < 1u << 24 ? 2 : 3;
		ctrl[i / 4] |= (uint8_t)(code << (2 * (i % 4)));
		for (unsigned b = 0; b < len[code]; b++)
			data[d++] = (uint8_t)(x >> (8 * b));
	}
	memset(data + d, 0, 8);
	return d + 8;
}

static void enc_reset(void)
{
	E.n = 0;
	E.nd = E.na = 0;
	memset(E.reg, 0, sizeof E.reg);
	memset(E.flip, 0, sizeof E.flip);
	E.addr = 0;
}

static void mp_bin_header(mpw *w, const char *key, size_t n)
{
	mp_str(w, key);
	mp_be(w, 0xc6, n, 4);
}

static void enc_flush(ptr_thread *t, int in_signal)
{
	if (E.n == 0)
		return;
	size_t ndc, nac;
	size_t ndd = svb_encode(E.dt, E.nd, E.dt_ctrl, &ndc, E.dt_data);
	size_t nad = svb_encode(E.args, E.na, E.args_ctrl, &nac, E.args_data);
	uint8_t h[160], h1[24], h2[24], h3[24], h4[24];
	mpw w = { h, 0, sizeof h, 0 };
	mp_map(&w, 10);
	mp_kv_int(&w, "thread", t->index);
	mp_kv_int(&w, "seq", t->chunk_seq);
	mp_kv_int(&w, "n", E.n);
	mp_kv_int(&w, "t0", E.t0);
	mp_kv_int(&w, "nargs", (int64_t)E.na);
	mp_bin_header(&w, "kinds", E.n);
	mpw w1 = { h1, 0, sizeof h1, 0 }, w2 = { h2, 0, sizeof h2, 0 };
	mpw w3 = { h3, 0, sizeof h3, 0 }, w4 = { h4, 0, sizeof h4, 0 };
	mp_bin_header(&w1, "dt_ctrl", ndc);
	mp_bin_header(&w2, "dt_data", ndd);
	mp_bin_header(&w3, "args_ctrl", nac);
	mp_bin_header(&w4, "args_data", nad);
	struct iovec iov[10] = {
		{ h, w.n }, { E.kinds, E.n },
		{ h1, w1.n }, { E.dt_ctrl, ndc }, { h2, w2.n }, { E.dt_data, ndd },
		{ h3, w3.n }, { E.args_ctrl, nac }, { h4, w4.n }, { E.args_data, nad },
	};
	if (emit_frame(2, iov, 10, in_signal)) {
		t->chunk_seq++;
		t->written += E.n;
		g.nchunks++;
	} else {
		atomic_fetch_add(&g.dropped, E.n);
	}
	enc_reset();
}

static size_t rec_words(const uint64_t *r)
{
	unsigned k = (unsigned)(r[0] & 0xff);
	if (k == K_TASK_DEPS)
		return 3 + 2 * (size_t)r[2];
	return 1 + (k < K_NUM ? nargs[k] : 0);
}

/* Encodes and writes records [from, to) of t's buffer. */
static void encode_range(ptr_thread *t, size_t from, size_t to, int in_signal)
{
	enc_reset();
	const uint64_t *b = t->buf;
	for (size_t p = from; p < to;) {
		const uint64_t *r = b + p;
		unsigned k = (unsigned)(r[0] & 0xff);
		size_t words = rec_words(r);
		if (E.n == CHUNK_EVENTS || E.na > ARGS_CAP)
			enc_flush(t, in_signal);
		/* Stamps never go back (ptr_mono), but a drain maps them with the
		 * clock points known then: a stamp past the last point with the
		 * run's slope, the next drain's stamps between the new points
		 * with theirs. Where the two differ by a few ns, a thread's later
		 * event would map before its earlier one. */
		int64_t time = stamp_ns(r[0] >> 8);
		if (time < t->written_ns)
			time = t->written_ns;
		t->written_ns = time;
		if (E.n == 0)
			E.t0 = E.last = time;
		E.kinds[E.n++] = (uint8_t)k;
		E.dt[E.nd++] = zig((uint64_t)(time - E.last));
		E.last = time;
		int64_t *reg = E.reg[k][E.flip[k]];
		E.flip[k] ^= 1;
		for (unsigned j = 0; j < nargs[k]; j++) {
			E.args[E.na++] = zig(r[1 + j] - (uint64_t)reg[j]);
			reg[j] = (int64_t)r[1 + j];
		}
		if (k == K_TASK_DEPS) {
			uint64_t cnt = r[2];
			E.args[E.na++] = cnt;
			for (uint64_t d = 0; d < cnt; d++) {
				uint64_t a = r[3 + 2 * d];
				E.args[E.na++] = zig(a - E.addr);
				E.addr = a;
				E.args[E.na++] = (uint8_t)r[4 + 2 * d];
			}
		}
		p += words;
	}
	enc_flush(t, in_signal);
}

static int64_t count_records(const uint64_t *b, size_t from, size_t to)
{
	int64_t n = 0;
	for (size_t p = from; p < to; p += rec_words(b + p))
		n++;
	return n;
}

/* Writes t's committed, not yet written records (any thread, under lock). */
static void drain_thread(ptr_thread *t, size_t *done, int in_signal)
{
	size_t c = atomic_load_explicit(&t->committed, memory_order_acquire);
	if (c > *done)
		encode_range(t, *done, c, in_signal);
	*done = c;
}

/* ------------------------------------------------------------------------ */
/* Thread registry and buffers                                              */

/* Registered threads; the counter may pass the limit for a moment while an
 * extra thread backs out of registering. */
static int nthreads(void)
{
	int n = atomic_load(&g.nthreads);
	return n < PTR_MAX_THREADS ? n : PTR_MAX_THREADS;
}

/* words already written of each thread's current buffer (under lock) */
static size_t *done_words(ptr_thread *t)
{
	/* stored right after the usable area and the flush slack */
	return (size_t *)(t->buf + t->cap + 4);
}

static void *map_buffer(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void key_destructor(void *p)
{
	ptr_thread *t = p;
	if (t && !t->ended && !atomic_load(&g.closed)) {
		ptr_tls = t;
		if (t->user) {
			/* a user thread cancelled (its start routine neither
			 * returned nor called pthread_exit) */
			ptr_user_end(t);
			return;
		}
		ptr_ev0(t, K_THREAD_END);
		t->ended = 1;
	}
}

/* A buffer an ended user thread left (retire), or NULL. */
static uint64_t *take_spare(void)
{
	if (atomic_load_explicit(&g.nspare, memory_order_relaxed) == 0)
		return NULL;
	uint64_t *b = NULL;
	file_lock();
	int n = atomic_load_explicit(&g.nspare, memory_order_relaxed);
	if (n > 0) {
		b = g.spare[n - 1];
		atomic_store_explicit(&g.nspare, n - 1, memory_order_relaxed);
	}
	file_unlock();
	return b;
}

/* Registers the calling thread, at index idx when one was reserved for it
 * (ptr_user_reserve), else at the next one. */
static ptr_thread *new_thread(int type, int ompt, int idx, int creator)
{
	size_t words = g.buf_words;
	if (idx < 0 && (idx = atomic_fetch_add(&g.nthreads, 1)) >= PTR_MAX_THREADS) {
		atomic_fetch_sub(&g.nthreads, 1);
		idx = -1;
		words = 512;
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1))
			warn("more than 65536 threads: events of the extra threads are dropped");
	}
	ptr_thread *t = calloc(1, sizeof *t);
	uint64_t *buf = t && words == g.buf_words ? take_spare() : NULL;
	if (t && !buf)
		buf = map_buffer((words + 8) * 8);
	if (!t || !buf) {
		/* out of memory: a shared sink whose events are dropped */
		static ptr_thread fallback;
		static uint64_t fbuf[64];
		if (t)
			free(t);
		t = &fallback;
		buf = fbuf;
		words = 64 - 8;
		idx = -1;
	}
	t->buf = buf;
	t->cap = words;
	*done_words(t) = 0; /* a spare buffer holds its last owner's */
	t->index = idx;
	t->type = type;
	t->tid = gettid_();
	t->ompt = ompt;
	t->creator = idx >= 0 ? creator : 0;
	ptr_tls = t;
	if (idx >= 0)
		atomic_store_explicit(&g.threads[idx], t, memory_order_release);
	atomic_store(&g.threads_dirty, 1);
	ptr_ev1(t, K_THREAD_BEGIN, (uint64_t)type);
	return t;
}

ptr_thread *ptr_register(int type, int ompt)
{
	ptr_thread *t = ptr_tls;
	if (t) {
		if (ompt && !t->ompt) {
			t->ompt = 1;
			/* A user thread libomp makes the initial thread of a team
			 * (it met a parallel region) stays a user thread: its
			 * code ran before, and the runtime's initial task takes
			 * its place from here (docs/trace-format.md). */
			if (!(t->user && type == 1)) {
				atomic_store_explicit(&t->type, type, memory_order_relaxed);
				atomic_store(&g.threads_dirty, 1);
			}
			pthread_setspecific(g.key, NULL);
		}
		return t;
	}
	ptr_activate();
	return new_thread(type, ompt, -1, 0);
}

ptr_thread *ptr_self_slow(void)
{
	int type = gettid_() == getpid() ? 1 : 3;
	ptr_thread *t = ptr_register(type, 0);
	if (t->index >= 0)
		pthread_setspecific(g.key, t);
	return t;
}

void ptr_note_thread_end(ptr_thread *t) { t->ended = 1; }

int ptr_recording(void) { return atomic_load(&g.active) && !atomic_load(&g.closed); }

/* User threads (pthread_wrap.c). A program that starts many threads over
 * its run (a thread per step or per request) would hold a buffer per
 * thread it ever started (8 MiB each by default, pre-faulted): once more
 * than PTR_USER_KEEP user threads were registered, an ending user thread
 * writes its events out and hands its buffer to the next thread that
 * registers, keeping a small one for whatever it still records (an MPI
 * call from a thread-local destructor). Below that nothing is written at a
 * thread's end, so that the writing does not lengthen the joins of a
 * program with a few threads. */
#define PTR_USER_KEEP 16
#define RETIRED_WORDS 504

static void retire(ptr_thread *t)
{
	uint64_t *small = calloc(RETIRED_WORDS + 8, sizeof *small);
	if (!small)
		return;
	file_lock();
	if (atomic_load(&g.closed)) {
		file_unlock();
		free(small);
		return;
	}
	clock_point();
	drain_thread(t, done_words(t), 0);
	uint64_t *old = t->buf;
	size_t oldcap = t->cap;
	t->buf = small;
	t->cap = RETIRED_WORDS;
	t->pos = 0;
	atomic_store_explicit(&t->committed, 0, memory_order_release);
	int n = atomic_load_explicit(&g.nspare, memory_order_relaxed);
	int keep = oldcap == g.buf_words && n < (int)(sizeof g.spare / sizeof g.spare[0]);
	if (keep) {
		g.spare[n] = old;
		atomic_store_explicit(&g.nspare, n + 1, memory_order_relaxed);
	}
	file_unlock();
	if (!keep)
		munmap(old, (oldcap + 8) * 8);
}

int ptr_user_reserve(void)
{
	int idx = atomic_fetch_add(&g.nthreads, 1);
	if (idx >= PTR_MAX_THREADS) {
		atomic_fetch_sub(&g.nthreads, 1);
		return -1;
	}
	return idx;
}

void ptr_user_unreserve(int idx)
{
	/* the last index given back; an earlier one stays a hole, a thread
	 * of type unknown without events in the table (thread_entry) */
	int next = idx + 1;
	if (idx >= 0)
		atomic_compare_exchange_strong(&g.nthreads, &next, idx);
}

ptr_thread *ptr_user_begin(int idx, int creator)
{
	if (ptr_tls || !ptr_recording())
		return NULL;
	ptr_thread *t = new_thread(PTR_THREAD_USER, 0, idx, creator);
	if (t->index < 0)
		return NULL;
	t->user = 1;
	atomic_fetch_add(&g.nuser, 1);
	/* the key's destructor ends a thread that is cancelled */
	pthread_setspecific(g.key, t);
	return t;
}

void ptr_user_end(ptr_thread *t)
{
	uint64_t s = ptr_stamp();
	/* a thread OpenMP took over (it ran a parallel region) ends with the
	 * runtime's thread_end */
	if (!t || t != ptr_tls || !t->user || t->ompt || t->ended)
		return;
	ptr_ev0_at(t, s, K_THREAD_END);
	t->ended = 1;
	if (atomic_load(&g.nuser) > PTR_USER_KEEP)
		retire(t);
}

/* Buffer full: write it out between flush_begin and flush_end events. */
uint64_t ptr_overflow(ptr_thread *t, size_t need)
{
	/* flush_begin always fits: the slack after cap is reserved for it */
	uint64_t *w = t->buf + t->pos;
	w[0] = ptr_mono(t, ptr_stamp()) << 8 | K_FLUSH_BEGIN;
	ptr_commit(t, 1);
	file_lock();
	size_t *done = done_words(t);
	if (t->index >= 0 && !atomic_load(&g.closed)) {
		clock_point();
		drain_thread(t, done, 0);
	} else {
		atomic_fetch_add(&g.dropped, count_records(t->buf, *done, t->pos));
		if (!atomic_load(&g.closed))
			g.truncated = 1;
	}
	t->pos = 0;
	*done = 0;
	atomic_store_explicit(&t->committed, 0, memory_order_release);
	file_unlock();
	if (need + 1 > t->cap) /* cannot happen: callers bound their records */
		abort();
	w = t->buf;
	uint64_t end = ptr_mono(t, ptr_stamp());
	w[0] = end << 8 | K_FLUSH_END;
	ptr_commit(t, 1);
	return end;
}

/* ------------------------------------------------------------------------ */
/* Locations                                                                */

static struct ptr_loc *loc_at(uint32_t id) { return &g.loc_blocks[id / LOC_BLOCK][id % LOC_BLOCK]; }

static size_t loc_slot(uint64_t addr, size_t cap) { return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1); }

uint32_t ptr_loc_slow(ptr_thread *t, const void *addr)
{
	(void)t;
	uint64_t a = (uint64_t)(uintptr_t)addr;
	pthread_mutex_lock(&g.loc_mu);
	uint32_t n = atomic_load_explicit(&g.nlocs, memory_order_relaxed);
	if ((n + 1) * 2 > g.loc_hcap) {
		size_t cap = g.loc_hcap ? g.loc_hcap * 2 : 1024;
		uint32_t *h = calloc(cap, sizeof *h);
		if (!h) {
			pthread_mutex_unlock(&g.loc_mu);
			return 0;
		}
		for (uint32_t id = 1; id < n; id++) {
			size_t s = loc_slot(loc_at(id)->addr, cap);
			while (h[s])
				s = (s + 1) & (cap - 1);
			h[s] = id;
		}
		free(g.loc_hash);
		g.loc_hash = h;
		g.loc_hcap = cap;
	}
	size_t s = loc_slot(a, g.loc_hcap);
	while (g.loc_hash[s]) {
		if (loc_at(g.loc_hash[s])->addr == a) {
			uint32_t id = g.loc_hash[s];
			pthread_mutex_unlock(&g.loc_mu);
			return id;
		}
		s = (s + 1) & (g.loc_hcap - 1);
	}
	if (n >= (uint32_t)LOC_BLOCK * LOC_BLOCKS) {
		pthread_mutex_unlock(&g.loc_mu);
		return 0;
	}
	if (!g.loc_blocks[n / LOC_BLOCK]) {
		g.loc_blocks[n / LOC_BLOCK] = calloc(LOC_BLOCK, sizeof(struct ptr_loc));
		if (!g.loc_blocks[n / LOC_BLOCK]) {
			pthread_mutex_unlock(&g.loc_mu);
			return 0;
		}
	}
	loc_at(n)->addr = a;
	g.loc_hash[s] = n;
	atomic_store_explicit(&g.nlocs, n + 1, memory_order_release);
	pthread_mutex_unlock(&g.loc_mu);
	return n;
}

static uint64_t main_base;

static void resolve_dladdr(struct ptr_loc *l)
{
	int z = 0;
	if (!atomic_compare_exchange_strong(&l->state, &z, 1))
		return;
	Dl_info info;
	if (l->addr && dladdr((void *)(uintptr_t)l->addr, &info) && info.dli_fbase) {
		const char *mod = info.dli_fname;
		char exe[4096];
		if ((uint64_t)(uintptr_t)info.dli_fbase == main_base || !mod || mod[0] != '/') {
			ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
			if (n > 0 && (uint64_t)(uintptr_t)info.dli_fbase == main_base) {
				exe[n] = 0;
				mod = exe;
			} else if (mod && realpath(mod, exe)) {
				mod = exe;
			}
		}
		l->module = mod ? strdup(mod) : NULL;
		l->offset = l->addr - (uint64_t)(uintptr_t)info.dli_fbase;
		l->func = info.dli_sname ? strdup(info.dli_sname) : NULL;
	}
	atomic_store_explicit(&l->state, 2, memory_order_release);
}

/* Resolves new locations with dladdr; holds none of our locks (dladdr takes
 * the loader's lock). */
static void resolve_new_locations(void)
{
	uint32_t n = atomic_load_explicit(&g.nlocs, memory_order_acquire);
	for (uint32_t id = 1; id < n; id++)
		if (atomic_load_explicit(&loc_at(id)->state, memory_order_acquire) == 0)
			resolve_dladdr(loc_at(id));
}

/* Signal path: resolve what dladdr did not, from /proc/self/maps, with
 * async-signal-safe calls only. Module paths go to a static arena. */
static char maps_arena[1 << 16];

static void resolve_maps(uint32_t from, uint32_t to)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[8192], line[4352];
	size_t ll = 0, arena = 0;
	char cur[4096] = "";
	uint64_t base = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof line - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			/* start-end perms offset dev inode path */
			char *p = line;
			uint64_t start = strtoull(p, &p, 16), end = strtoull(p + 1, &p, 16);
			while (*p == ' ')
				p++;
			while (*p && *p != ' ')
				p++;
			uint64_t off = strtoull(p, &p, 16);
			for (int f = 0; f < 2; f++) {
				while (*p == ' ')
					p++;
				while (*p && *p != ' ')
					p++;
			}
			while (*p == ' ')
				p++;
			if (*p != '/')
				continue;
			if (strcmp(p, cur) != 0) {
				size_t pl = strlen(p);
				if (pl >= sizeof cur)
					continue;
				memcpy(cur, p, pl + 1);
				base = start - off;
			}
			const char *stored = NULL;
			for (uint32_t id = from; id < to; id++) {
				struct ptr_loc *l = loc_at(id);
				if (l->addr < start || l->addr >= end)
					continue;
				if (!stored) {
					size_t pl = strlen(cur) + 1;
					if (arena + pl > sizeof maps_arena)
						break;
					memcpy(maps_arena + arena, cur, pl);
					stored = maps_arena + arena;
					arena += pl;
				}
				int z = 0;
				if (!atomic_compare_exchange_strong(&l->state, &z, 1))
					continue; /* resolved, or being resolved by dladdr */
				l->module = stored;
				l->offset = l->addr - base;
				atomic_store_explicit(&l->state, 2, memory_order_release);
			}
		}
	}
	close(fd);
}

/* ------------------------------------------------------------------------ */
/* Table frames (under the file lock)                                       */

typedef void (*entry_fn)(mpw *w, uint32_t i);

/* Writes entries [from, to) as frames of kind with one array under key,
 * splitting across frames so each fits tbuf. */
static void write_table(int kind, const char *key, uint32_t from, uint32_t to, entry_fn fn, int in_signal)
{
	uint32_t i = from;
	while (i < to) {
		mpw w = { tbuf, 0, TBUF_CAP, 0 };
		mp_map(&w, 1);
		mp_str(&w, key);
		size_t at = mp_arr_open(&w);
		uint32_t cnt = 0;
		for (; i < to; i++) {
			size_t save = w.n;
			fn(&w, i);
			if (w.over) {
				w.over = 0;
				w.n = save;
				if (cnt == 0)
					i++; /* an entry larger than the buffer is left out */
				break;
			}
			cnt++;
		}
		mp_arr_patch(&w, at, cnt);
		struct iovec iov = { tbuf, w.n };
		if (cnt)
			emit_frame(kind, &iov, 1, in_signal);
	}
}

static void thread_entry(mpw *w, uint32_t i)
{
	ptr_thread *t = atomic_load_explicit(&g.threads[i], memory_order_acquire);
	char name[32], digits[12];
	/* no thread yet: an index reserved for a thread that has not started
	 * (or never did, ptr_user_reserve), or one registering right now */
	int type = t ? atomic_load_explicit(&t->type, memory_order_relaxed) : 4;
	const char *base = type == 1   ? "initial "
			   : type == 2 ? "worker "
			   : type == 4 ? "unknown "
			   : type == PTR_THREAD_USER ? "user "
						     : "other ";
	size_t n = strlen(base), d = 0;
	memcpy(name, base, n);
	uint32_t v = i;
	do
		digits[d++] = (char)('0' + v % 10);
	while ((v /= 10) && d < sizeof digits);
	while (d)
		name[n++] = digits[--d];
	name[n] = 0;
	int creator = t ? t->creator : 0;
	mp_map(w, creator > 0 ? 5 : 4);
	mp_kv_int(w, "index", i);
	mp_kv_int(w, "tid", t ? t->tid : 0);
	mp_kv_int(w, "type", type);
	mp_kv_str(w, "name", name);
	if (creator > 0) /* the thread that started it, index + 1 */
		mp_kv_int(w, "creator", creator);
}

static void loc_entry(mpw *w, uint32_t i)
{
	struct ptr_loc *l = loc_at(i);
	/* module, offset and func belong to whoever resolves until state 2 */
	int ok = atomic_load_explicit(&l->state, memory_order_acquire) == 2;
	const char *func = ok ? l->func : NULL;
	mp_map(w, func ? 5 : 4);
	mp_kv_int(w, "id", i);
	mp_str(w, "addr");
	mp_uint(w, l->addr);
	mp_kv_str(w, "module", ok && l->module ? l->module : "");
	mp_str(w, "offset");
	mp_uint(w, ok ? l->offset : 0);
	if (func)
		mp_kv_str(w, "func", func);
}

static struct ptr_comm *comm_at(int i) { return &g.comm_blocks[i / COMM_BLOCK][i % COMM_BLOCK]; }

/* Counts the strided runs (first, count, stride) that spell members in
 * order, greedily; writes them as a flat array when w is set. */
static uint32_t comm_runs(const int *m, int n, mpw *w)
{
	uint32_t nr = 0;
	for (int i = 0; i < n;) {
		int stride = i + 1 < n ? m[i + 1] - m[i] : 1, j = i + 1;
		while (j < n && m[j] - m[j - 1] == stride)
			j++;
		if (stride == 0) /* a repeated member: never folded */
			j = i + 1, stride = 1;
		if (w) {
			mp_int(w, m[i]);
			mp_int(w, j - i);
			mp_int(w, stride);
		}
		nr++;
		i = j;
	}
	return nr;
}

/* Format version 2: MPI_COMM_WORLD (id 0) has no member list (it is world
 * ranks 0 .. nranks-1), others the shorter of their strided runs and their
 * member list, so a file's size does not grow with the world size. */
static void comm_entry(mpw *w, uint32_t i)
{
	struct ptr_comm *c = comm_at((int)i);
	int world = c->id == 0;
	mp_map(w, world ? 3 : 4);
	mp_kv_int(w, "index", i);
	mp_kv_int(w, "id", c->id);
	mp_kv_str(w, "name", c->name);
	if (world)
		return;
	uint32_t nr = comm_runs(c->members, c->n, NULL);
	if (3 * (uint64_t)nr < (uint64_t)c->n) {
		mp_str(w, "runs");
		mp_arr(w, 3 * nr);
		comm_runs(c->members, c->n, w);
		return;
	}
	mp_str(w, "members");
	mp_arr(w, (uint32_t)c->n);
	for (int k = 0; k < c->n; k++)
		mp_int(w, c->members[k]);
}

static void clock_entry(mpw *w, uint32_t i)
{
	struct ptr_clock *c = &g.clocks[i];
	mp_map(w, 4);
	mp_kv_str(w, "when", c->when);
	mp_kv_int(w, "local_ns", c->local);
	mp_kv_int(w, "offset_ns", c->off);
	mp_kv_int(w, "error_ns", c->err);
}

/* Writes what the tables learnt since the last call. Locations are written
 * once resolved (by dladdr, or from /proc/self/maps when final). */
static void write_tables(int final, int in_signal)
{
	int nt = nthreads();
	if (atomic_exchange(&g.threads_dirty, 0) && nt > 0)
		write_table(4, "threads", 0, (uint32_t)nt, thread_entry, in_signal);
	uint32_t nl = atomic_load_explicit(&g.nlocs, memory_order_acquire);
	uint32_t upto = g.locs_written;
	while (upto < nl && atomic_load_explicit(&loc_at(upto)->state, memory_order_acquire) == 2)
		upto++;
	if (final && upto < nl) {
		resolve_maps(upto, nl);
		/* another thread may still be in dladdr for an entry: give it a
		 * moment (not in the signal path), else the entry goes unresolved */
		for (uint32_t id = upto; id < nl && !in_signal; id++)
			for (int spin = 0; spin < 1000 && atomic_load(&loc_at(id)->state) == 1; spin++)
				sched_yield();
		upto = nl;
	}
	if (upto > g.locs_written) {
		write_table(5, "locations", g.locs_written, upto, loc_entry, in_signal);
		g.locs_written = upto;
	}
	int nc = atomic_load_explicit(&g.ncomms, memory_order_acquire);
	if (nc > g.comms_written) {
		write_table(6, "comms", (uint32_t)g.comms_written, (uint32_t)nc, comm_entry, in_signal);
		g.comms_written = nc;
	}
	int nk = atomic_load_explicit(&g.nclocks, memory_order_acquire);
	if (nk > g.clocks_written) {
		write_table(7, "offsets", (uint32_t)g.clocks_written, (uint32_t)nk, clock_entry, in_signal);
		g.clocks_written = nk;
	}
}

static void write_end(void)
{
	int nt = nthreads();
	mpw w = { tbuf, 0, TBUF_CAP, 0 };
	double slope = ptr_tsc ? tsc_slope() : 0;
	mp_map(&w, slope > 0 ? 5 : 4);
	mp_str(&w, "events");
	mp_arr(&w, (uint32_t)nt);
	for (int i = 0; i < nt; i++) {
		ptr_thread *t = atomic_load(&g.threads[i]);
		mp_int(&w, t ? t->written : 0);
	}
	mp_kv_int(&w, "chunks", g.nchunks);
	mp_kv_int(&w, "dropped", atomic_load(&g.dropped));
	mp_str(&w, "truncated");
	mp_u8(&w, g.truncated ? 0xc3 : 0xc2);
	if (slope > 0) /* the TSC rate over the whole run (start-to-end calibration) */
		mp_kv_int(&w, "tsc_hz", (int64_t)(1e9 / slope));
	struct iovec iov = { tbuf, w.n };
	emit_frame(8, &iov, 1, 0);
}

/* Writes every thread's committed events (under lock). */
static void drain_all(int in_signal)
{
	clock_point();
	int nt = nthreads();
	for (int i = 0; i < nt; i++) {
		ptr_thread *t = atomic_load_explicit(&g.threads[i], memory_order_acquire);
		if (t)
			drain_thread(t, done_words(t), in_signal);
	}
}

/* ------------------------------------------------------------------------ */
/* Manifest                                                                 */

static void json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void ptr_write_manifest(int nranks, const int64_t *events, const int64_t *bytes)
{
	char tmp[4300], path[4300];
	mkdir_p(g.dir);
	snprintf(path, sizeof path, "%s/manifest.json", g.dir);
	snprintf(tmp, sizeof tmp, "%s/.manifest.json.%d", g.dir, getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "{\n  \"format\": \"ptrace\",\n  \"version\": %d,\n  \"ranks\": %d,\n  \"run_id\": \"%s\",\n  \"producer\": \"%s\",\n  \"command\": [",
		PTR_FORMAT_VERSION, nranks, g.run_id, PTR_PRODUCER);
	int first = 1;
	for (size_t i = 0; i < g.cmdlen;) {
		size_t l = strlen(g.cmd + i);
		fputs(first ? "" : ", ", f);
		json_str(f, g.cmd + i, l);
		first = 0;
		i += l + 1;
	}
	fprintf(f, "],\n  \"files\": [\n");
	for (int r = 0; r < nranks; r++)
		fprintf(f, "    {\"rank\": %d, \"file\": \"rank-%05d.ptrace\", \"events\": %lld, \"bytes\": %lld}%s\n", r, r,
			(long long)events[r], (long long)bytes[r], r + 1 < nranks ? "," : "");
	fprintf(f, "  ]\n}\n");
	if (fclose(f) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

void ptr_mpi_manifest_done(void) { atomic_store(&g.mpi_manifest, 1); }

/* ------------------------------------------------------------------------ */
/* Finish, flush, signals                                                   */

static void env_rank(void);

void ptr_finish(const char *why)
{
	(void)why;
	if (!atomic_load(&g.active) || atomic_load(&g.closed))
		return;
	ptr_thread *me = ptr_tls;
	/* a thread the OpenMP runtime did not announce ends with the trace */
	if (me && !me->ompt && !me->ended && me->index >= 0) {
		ptr_ev0(me, K_THREAD_END);
		me->ended = 1;
	}
	resolve_new_locations();
	file_lock();
	if (atomic_exchange(&g.closed, 1)) {
		file_unlock();
		return;
	}
	if (!g.rank_known) { /* libptrace.so without MPI_Init */
		env_rank();
		g.rank_known = 1;
	}
	drain_all(0);
	write_tables(1, 0);
	write_end();
	atomic_store(&g.finished, 1);
	int64_t events = 0;
	int nt = nthreads();
	for (int i = 0; i < nt; i++) {
		ptr_thread *t = atomic_load(&g.threads[i]);
		if (t)
			events += t->written;
	}
	int64_t bytes = g.bytes;
	int ok = g.fd >= 0 && !g.file_failed;
	if (g.fd >= 0) {
		close(g.fd);
		g.fd = -1;
	}
	file_unlock();
	if (ok && g.nranks == 1 && g.rank == 0 && !atomic_load(&g.mpi_manifest))
		ptr_write_manifest(1, &events, &bytes);
}

int ptr_finished(void) { return atomic_load(&g.finished); }
int ptr_active(void) { return atomic_load(&g.active); }

void ptr_flush_all(void)
{
	if (!atomic_load(&g.active))
		return;
	resolve_new_locations();
	file_lock();
	if (!atomic_load(&g.closed)) {
		drain_all(0);
		write_tables(0, 0);
	}
	file_unlock();
}

int64_t ptr_file_bytes(void)
{
	file_lock();
	int64_t n = g.bytes;
	file_unlock();
	return n;
}

/* Writes out everything recorded so far, without an end frame: if the
 * program dies now, readers see an incomplete trace with all events up to the
 * signal; if a handler of the program's lets it go on, recording goes on and
 * the end frame comes at exit as usual. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	if (!atomic_exchange(&g.in_signal, 1)) {
		if (atomic_load(&g.active) && !atomic_load(&g.closed) && file_trylock_signal()) {
			if (!atomic_load(&g.closed)) {
				drain_all(1);
				write_tables(1, 1);
				if (g.fd >= 0)
					fsync(g.fd);
				struct sigaction *o = &g.old[sig];
				int app = (o->sa_flags & SA_SIGINFO) ? o->sa_sigaction != NULL
								       : o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN;
				if (g.fd < 0)
					/* no file: the rank was not known yet (before
					 * MPI_Init), or the file could not be made */
					warn("signal: no rank file was open, nothing of this process is written");
				else
					warn(app ? "signal: events so far written, the program's handler runs next"
						 : "signal: events so far written; the trace ends here, without its end frame");
			}
			file_unlock();
		}
		atomic_store(&g.in_signal, 0);
	}
	/* hand the signal to whoever had it before us */
	struct sigaction *old = &g.old[sig];
	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
		old->sa_sigaction(sig, si, uc);
		return;
	}
	if (old->sa_handler != SIG_IGN && old->sa_handler != SIG_DFL && old->sa_handler) {
		old->sa_handler(sig);
		return;
	}
	sigaction(sig, old, NULL);
	raise(sig);
}

/* (Re)installs the handlers, keeping whatever was installed before us. */
void ptr_install_signals(void)
{
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction cur;
		if (sigaction(sigs[i], NULL, &cur) < 0)
			continue;
		if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal)
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
			continue; /* respect an ignored signal */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		g.old[sigs[i]] = cur;
		sigaction(sigs[i], &sa, NULL);
	}
}

static void at_exit(void)
{
	if (!ptr_ompt_active()) {
		ptr_finish("exit");
		return;
	}
	/* With the OpenMP runtime active, ompt_finalize normally comes later
	 * (libomp shuts down after the atexit handlers, and the workers'
	 * thread_end events come with it). But when exit() is called inside a
	 * parallel region (by a worker, or by the initial thread in a nested
	 * implicit task or in a task) libomp never delivers it: the trace is
	 * finished here. The other threads are not stopped: what each has
	 * committed (release-published, read with acquire) is written, a record
	 * it is writing at this moment is not, and anything it records after
	 * the trace is closed is dropped; the file lock is held only by a
	 * thread flushing its full buffer, a wait bounded by one flush. */
	ptr_thread *t = ptr_tls;
	if (t && (atomic_load_explicit(&t->type, memory_order_relaxed) == 2 || t->idepth >= 2))
		ptr_finish("exit in a parallel region");
	/* Otherwise nothing is written here: a flush now would run on the
	 * initial thread before its thread_end and count as the program's
	 * serial work (10 ms per 100 000 events, more on a loaded machine). */
}

static void at_fork_child(void)
{
	/* the child must not write into its parent's trace */
	atomic_store(&g.closed, 1);
	g.fd = -1;
}

/* ------------------------------------------------------------------------ */
/* Activation                                                               */

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);
	return s && *s ? atoi(s) : def;
}

static void read_cmdline(void)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n, tot = 0;
	while ((n = read(fd, g.cmd + tot, sizeof g.cmd - 1 - (size_t)tot)) > 0)
		tot += n;
	close(fd);
	if (tot > 0 && g.cmd[tot - 1] != 0)
		g.cmd[tot++] = 0;
	g.cmdlen = (size_t)tot;
}

static void env_rank(void)
{
	static const char *const pairs[][2] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMIX_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
	};
	g.rank = 0;
	g.nranks = 1;
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		int r = env_int(pairs[i][0], -1), n = env_int(pairs[i][1], -1);
		if (r >= 0 && n > r) {
			g.rank = r;
			g.nranks = n;
			return;
		}
	}
}

static void activate_once(void)
{
	crc_init();
	const char *mb = getenv("PTRACE_BUFFER_MB");
	double m = mb && *mb ? strtod(mb, NULL) : 8.0;
	if (!(m >= 0.0625))
		m = 0.0625;
	if (m > 65536)
		m = 65536;
	g.buf_words = (size_t)(m * 1024 * 1024) / 8 - 8;
	choose_clock();
	if (ptr_tsc) {
		int64_t ns;
		ptr_clock_base = tsc_pair(&ns);
		cpts[0].stamp = 0;
		cpts[0].ns = ns;
		ncpts = 1;
	} else {
		ptr_clock_base = ptr_now();
	}
	calibrate();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	g.start_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	g.pid = getpid();
	if (gethostname(g.host, sizeof g.host - 1) < 0)
		strcpy(g.host, "unknown");
	read_cmdline();
	/* without MPI the process is the run; MPI_Init replaces this id with
	 * rank 0's before the rank file opens */
	uint8_t rid[16];
	ptr_random_run_id(rid);
	ptr_set_run_id(rid);
	pthread_mutex_init(&g.loc_mu, NULL);
	pthread_key_create(&g.key, key_destructor);
	/* location 0: unknown code address */
	g.loc_blocks[0] = calloc(LOC_BLOCK, sizeof(struct ptr_loc));
	atomic_store(&loc_at(0)->state, 2);
	atomic_store(&g.nlocs, 1);
	Dl_info info;
	unsigned long phdr = getauxval(AT_PHDR);
	if (phdr && dladdr((void *)phdr, &info))
		main_base = (uint64_t)(uintptr_t)info.dli_fbase;
	const char *dir = getenv("PTRACE_DIR");
	if (dir && *dir)
		snprintf(g.dir, sizeof g.dir, "%s", dir);
	if (!g.mpi_pending) {
		file_lock();
		env_rank();
		g.rank_known = 1;
		open_file(0);
		file_unlock();
	}
	ptr_install_signals();
	atexit(at_exit);
	pthread_atfork(NULL, NULL, at_fork_child);
	atomic_store(&g.active, 1);
}

void ptr_activate(void) { pthread_once(&g.once, activate_once); }

void ptr_random_run_id(uint8_t id[16])
{
	size_t got = 0;
	while (got < 16) {
		ssize_t n = getrandom(id + got, 16 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < 16) {
		/* no entropy source: time, pid and an address still tell runs apart */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		uint64_t b = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&got ^ ptr_now();
		memcpy(id, &a, 8);
		memcpy(id + 8, &b, 8);
	}
}

void ptr_set_run_id(const uint8_t id[16])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		g.run_id[2 * i] = hex[id[i] >> 4];
		g.run_id[2 * i + 1] = hex[id[i] & 15];
	}
	g.run_id[32] = 0;
}

void ptr_set_runtime(const char *s) { snprintf(g.runtime, sizeof g.runtime, "%s", s ? s : ""); }

void ptr_set_rank(int rank, int nranks, const char *dir)
{
	file_lock();
	g.rank = rank;
	g.nranks = nranks;
	if (dir && *dir)
		snprintf(g.dir, sizeof g.dir, "%s", dir);
	g.rank_known = 1;
	open_file(0); /* now: a reused directory is reported at MPI_Init */
	file_unlock();
}

const char *ptr_dir(void) { return g.dir; }
int ptr_rank(void) { return g.rank; }

void ptr_default_dir(char *out, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char base[64];
	strftime(base, sizeof base, "ptrace-%Y%m%d-%H%M%S", &tm);
	for (int i = 1; i < 1000; i++) {
		if (i == 1)
			snprintf(out, n, "%s", base);
		else
			snprintf(out, n, "%s-%d", base, i);
		if (mkdir(out, 0777) == 0)
			return;
		if (errno != EEXIST)
			return;
	}
}

void ptr_add_clock(const char *when, int64_t local, int64_t off, int64_t err)
{
	int i = atomic_load(&g.nclocks);
	if (i >= MAX_CLOCKS)
		return;
	struct ptr_clock *c = &g.clocks[i];
	snprintf(c->when, sizeof c->when, "%s", when);
	c->local = local;
	c->off = off;
	c->err = err;
	atomic_store_explicit(&g.nclocks, i + 1, memory_order_release);
}

/* Called with mpi_wrap.c's comm mutex held (one writer at a time). */
static int add_comm(int64_t id, const char *name, const int *members, int n, int copy)
{
	int i = atomic_load(&g.ncomms);
	if (i >= COMM_BLOCK * COMM_BLOCKS)
		return -1;
	if (!g.comm_blocks[i / COMM_BLOCK]) {
		g.comm_blocks[i / COMM_BLOCK] = calloc(COMM_BLOCK, sizeof(struct ptr_comm));
		if (!g.comm_blocks[i / COMM_BLOCK])
			return -1;
	}
	struct ptr_comm *c = comm_at(i);
	c->id = id;
	snprintf(c->name, sizeof c->name, "%s", name);
	if (copy) {
		int *m = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
		if (!m)
			return -1;
		memcpy(m, members, sizeof(int) * (size_t)n);
		members = m;
	}
	c->members = members;
	c->n = n;
	atomic_store_explicit(&g.ncomms, i + 1, memory_order_release);
	return i;
}

int ptr_add_comm(int64_t id, const char *name, const int *members, int n)
{
	return add_comm(id, name, members, n, 1);
}

int ptr_add_comm_shared(int64_t id, const char *name, const int *members, int n)
{
	return add_comm(id, name, members, n, 0);
}
