/*
 * The program's own threads (docs/collector.md, "Threads the program
 * starts"): pthread_create, pthread_exit and the joins, interposed when the
 * library is preloaded (LD_PRELOAD; a library that libomp loaded through
 * OMP_TOOL_LIBRARIES interposes nothing).
 *
 * A thread the program creates (std::thread too: libstdc++ and libc++ call
 * pthread_create for it) starts in a trampoline that registers it as a user
 * thread (type 5, thread_begin stamped as its start routine is entered),
 * runs the routine and records thread_end when it returns; pthread_exit
 * records it before exiting, and a cancelled thread gets it from the
 * registry key's destructor (core.c). Its thread index is taken as it is
 * created, and the thread table names its creator. A join by the program
 * is recorded on the joining thread as a sync region of kind 256
 * (thread_join), its task argument the joined thread's index + 1:
 * sync_begin and sync_wait_begin on entry (the wrapper's own time before
 * the real call is the program's wait), sync_wait_end and sync_end right
 * after it. The program's waits on its
 * condition variables (pthread_cond_wait, _timedwait, _clockwait: also
 * std::condition_variable's) and barriers (pthread_barrier_wait) are sync
 * regions of kinds 257 and 258 the same way, naming no thread.
 *
 * Threads and joins of runtime libraries are not the program's: what a
 * caller is, is decided by the module its return address lies in
 * (from_program). Their threads start as they do without the collector
 * (OpenMP workers are announced by OMPT; MPI's progress threads are not
 * recorded), and their joins (Open MPI's in MPI_Finalize, libomp's at exit)
 * are not recorded. Nothing is recorded before the collector is active or
 * after the trace is finished. pthread_create and the joins are rare: a
 * module lookup per call (a backtrace for calls through the C++ library),
 * nothing on the hot paths (MPI wrappers, OMPT callbacks).
 */
#define _GNU_SOURCE
#include "collector.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Modules that start or join threads of their own, by the start of their
 * file name: the OpenMP runtimes (their workers are OMPT's), MPI
 * implementations and their stacks (progress and event threads, joined in
 * MPI_Finalize), the C library (timer, aio and name-lookup helper threads of
 * older glibc versions, whose librt and libpthread called pthread_create
 * through the PLT), and libraries whose helper threads serve the program but
 * do not run its code (asynchronous Fortran I/O, BLAS thread pools, CUDA).
 * A call through libstdc++ or libc++ (std::thread) is their caller's. A
 * caller outside any module (JIT code) or in the executable is the
 * program. */
static const char *const runtime_modules[] = {
	/* OpenMP runtimes and LLVM's offloading runtime */
	"libomp.", "libomp-", "libomptarget", "libgomp", "libiomp",
	/* MPI: libmpi*, libmpich*, libmpi_cray; Open MPI's libraries and its
	 * components (mca_*.so), PMI/PMIx, PRRTE */
	"libmpi", "libopen-pal", "libopen-rte", "libompitrace", "libmca_", "mca_", "libpmi", "libprrte",
	"libprte",
	/* the transports and helpers MPI runs on */
	"libevent", "libucs", "libucp", "libuct", "libucm", "libfabric", "libpsm", "libhwloc", "libhcoll",
	"libibverbs", "librdmacm", "libmlx", "libxpmem", "libsharp", "libnccl", "libcuda", "libtbb",
	/* the C library */
	"libc.so", "libc-", "libpthread", "librt", "libanl",
	/* helper threads of other runtimes: Fortran's asynchronous I/O, BLAS
	 * pools, memory allocators' background threads, GPU runtimes, DLB */
	"libgfortran", "libopenblas", "libblis", "libmkl", "libjemalloc", "libtcmalloc", "libmimalloc",
	"libcudart", "libamdhip", "libhsa-runtime", "libze_", "libdlb",
};

/* The C++ libraries, whose std::thread constructor and join call
 * pthread_create and pthread_join for their caller. */
static const char *const forwarders[] = { "libstdc++", "libc++." };

static int listed(const char *name, const char *const *list, size_t n)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (size_t i = 0; i < n; i++)
		if (strncmp(base, list[i], strlen(list[i])) == 0)
			return 1;
	return 0;
}

struct modq {
	uintptr_t a;
	const char *name;
	uintptr_t base;
};

static int mod_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct modq *q = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && q->a >= lo && q->a - lo < ph->p_memsz) {
			q->name = info->dlpi_name ? info->dlpi_name : "";
			q->base = info->dlpi_addr;
			return 1;
		}
	}
	return 0;
}

/* The file name of the module holding code address a: "" for the
 * executable, NULL outside any module; *base its load address.
 * dl_iterate_phdr: tens of ns here (dladdr's symbol search takes
 * microseconds in libc or libstdc++). */
static const char *module_of(const void *a, uintptr_t *base)
{
	struct modq q = { (uintptr_t)a, NULL, 0 };
	if (a)
		dl_iterate_phdr(mod_cb, &q);
	if (base)
		*base = q.base;
	return q.name;
}

/* Whether the module at base defines pthread_create ahead of this
 * library: a sanitizer's runtime linked into the executable
 * (ThreadSanitizer, MemorySanitizer) or a program's own wrapper. Its
 * pthread_create calls ours (RTLD_NEXT) with a start routine of its own
 * that must run first in the new thread (TSan's sets up the thread's
 * state: a malloc before it crashes the thread), so calls from that
 * module are passed on, as before: such a program's threads are not
 * recorded. */
static int interposer(uintptr_t base)
{
	static _Atomic uintptr_t found; /* 0 not looked up, 1 none, else its base + 2 */
	uintptr_t f = atomic_load_explicit(&found, memory_order_relaxed);
	if (!f) {
		uintptr_t first_base, own_base;
		void *first = dlsym(RTLD_DEFAULT, "pthread_create");
		f = 1;
		if (first && module_of(first, &first_base) && module_of((const void *)(uintptr_t)mod_cb, &own_base) &&
		    first_base != own_base)
			f = first_base + 2;
		atomic_store_explicit(&found, f, memory_order_relaxed);
	}
	return f != 1 && f == base + 2;
}

/* glibc's first backtrace() loads libgcc_s (dlopen): done once as the
 * library is loaded, not inside a wrapper called with the program's mutex
 * held (a condition wait through libstdc++). */
__attribute__((constructor)) static void prime_backtrace(void)
{
	void *bt[2];
	backtrace(bt, 2);
}

/* Whether a call whose return address is ra comes from the program, not
 * from a runtime library; *site is its call site: ra, or for a call through
 * the C++ library the return address into the first caller outside it
 * (found by unwinding, only then). */
/* from_program's answers for the last return addresses seen on this thread
 * but those in the C++ library (their call site is their caller's): a
 * producer signalling a condition variable per item makes one call
 * millions of times, and a module lookup costs ten times the call (216 →
 * 27 ns a pthread_cond_signal, 3 ns without the collector). An address
 * whose module is unloaded and another loaded there keeps its old answer.
 * Dynamic TLS: the library may be loaded by dlopen (OMP_TOOL_LIBRARIES). */
static __thread struct prog_memo {
	const void *ra;
	int ok;
} prog_memo[16];

static int from_program(const void *ra, const void **site)
{
	*site = ra;
	struct prog_memo *pm = &prog_memo[((uintptr_t)ra >> 2) & 15];
	if (ra && pm->ra == ra)
		return pm->ok;
	uintptr_t base;
	const char *m = module_of(ra, &base);
	if (m && interposer(base)) {
		pm->ra = ra;
		pm->ok = 0;
		return 0;
	}
	int fwd = m && listed(m, forwarders, sizeof forwarders / sizeof forwarders[0]);
	if (fwd) {
		void *bt[16];
		int n = backtrace(bt, 16), i = 0;
		while (i < n && bt[i] != ra)
			i++;
		for (i++; i < n; i++) {
			const char *c = module_of(bt[i], NULL);
			if (!c || !listed(c, forwarders, sizeof forwarders / sizeof forwarders[0])) {
				*site = bt[i];
				m = c;
				break;
			}
		}
	}
	int ok = !m || !listed(m, runtime_modules, sizeof runtime_modules / sizeof runtime_modules[0]);
	if (!fwd) { /* not through the C++ library: the answer is the address's */
		pm->ra = ra;
		pm->ok = ok;
	}
	return ok;
}

/* The real function (the next definition after ours), looked up once. */
#define REAL(name, type)                                                                  \
	static _Atomic(void *) real_##name##_p;                                          \
	static type real_##name(void)                                                     \
	{                                                                                 \
		void *p = atomic_load_explicit(&real_##name##_p, memory_order_relaxed);  \
		if (!p) {                                                                 \
			p = dlsym(RTLD_NEXT, #name);                                      \
			atomic_store_explicit(&real_##name##_p, p, memory_order_relaxed); \
		}                                                                         \
		return (type)p;                                                           \
	}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef void (*exit_fn)(void *) __attribute__((noreturn));
typedef int (*join_fn)(pthread_t, void **);
typedef int (*timedjoin_fn)(pthread_t, void **, const struct timespec *);
typedef int (*clockjoin_fn)(pthread_t, void **, clockid_t, const struct timespec *);
typedef int (*condwait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*condtimed_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*condclock_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*barrier_fn)(pthread_barrier_t *);
typedef int (*condsignal_fn)(pthread_cond_t *);
REAL(pthread_create, create_fn)
REAL(pthread_exit, exit_fn)
REAL(pthread_join, join_fn)
REAL(pthread_cond_wait, condwait_fn)
REAL(pthread_cond_timedwait, condtimed_fn)
REAL(pthread_barrier_wait, barrier_fn)
REAL(pthread_cond_signal, condsignal_fn)
REAL(pthread_cond_broadcast, condsignal_fn)
#if defined(__GLIBC__)
#define PTR_TIMEDJOIN 1 /* glibc 2.3.3 */
REAL(pthread_timedjoin_np, timedjoin_fn)
#if __GLIBC__ > 2 || __GLIBC_MINOR__ >= 31
#define PTR_CLOCKJOIN 1
REAL(pthread_clockjoin_np, clockjoin_fn)
#endif
#if __GLIBC__ > 2 || __GLIBC_MINOR__ >= 30
#define PTR_CONDCLOCK 1
REAL(pthread_cond_clockwait, condclock_fn)
#endif
#endif

/* The threads the program started and has not joined, by pthread_t: their
 * thread index + 1, the task argument of a join's events. An entry is
 * added when the program's pthread_create returns and taken out when a
 * join of it returns; a detached thread's stays until a later thread gets
 * its pthread_t (glibc reuses thread descriptors). Under a mutex: creates
 * and joins are rare, and a process has few threads alive. */
static pthread_mutex_t started_mu = PTHREAD_MUTEX_INITIALIZER;
static struct started {
	pthread_t th;
	int index1;
} *started;
static size_t nstarted, capstarted;

static void started_put(pthread_t th, int index1)
{
	pthread_mutex_lock(&started_mu);
	size_t i = 0;
	while (i < nstarted && !pthread_equal(started[i].th, th))
		i++;
	if (i == nstarted && nstarted == capstarted) {
		size_t c = capstarted ? 2 * capstarted : 64;
		struct started *p = realloc(started, c * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&started_mu);
			return;
		}
		started = p;
		capstarted = c;
	}
	if (i == nstarted)
		nstarted++;
	started[i] = (struct started){ th, index1 };
	pthread_mutex_unlock(&started_mu);
}

/* The index + 1 of thread th (0: not one the program started while
 * recording), taken out of the table when take is set. */
static int started_get(pthread_t th, int take)
{
	int v = 0;
	pthread_mutex_lock(&started_mu);
	for (size_t i = 0; i < nstarted; i++)
		if (pthread_equal(started[i].th, th)) {
			v = started[i].index1;
			if (take)
				started[i] = started[--nstarted];
			break;
		}
	pthread_mutex_unlock(&started_mu);
	return v;
}

struct start {
	void *(*fn)(void *);
	void *arg;
	int index;   /* reserved for the thread (−1: none left) */
	int creator; /* index + 1 of the thread that created it (0: not recorded) */
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	/* thread_begin(5): the routine starts now */
	ptr_thread *t = ptr_user_begin(s.index, s.creator);
	void *ret = s.fn(s.arg);
	ptr_user_end(t);
	return ret;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	create_fn real = real_pthread_create();
	if (!real)
		return EAGAIN;
	const void *site;
	if (!ptr_recording() || !from_program(__builtin_return_address(0), &site))
		return real(th, attr, fn, arg);
	struct start *s = malloc(sizeof *s);
	if (!s)
		return real(th, attr, fn, arg);
	ptr_thread *me = ptr_tls;
	s->fn = fn;
	s->arg = arg;
	/* the thread's index now, so that a join right after this one
	 * names it even before the thread has started */
	s->index = ptr_user_reserve();
	s->creator = me && me->index >= 0 ? me->index + 1 : 0;
	int idx = s->index;
	int rc = real(th, attr, trampoline, s);
	if (rc != 0) {
		ptr_user_unreserve(idx);
		free(s);
	} else if (idx >= 0) {
		started_put(*th, idx + 1);
	}
	return rc;
}

void pthread_exit(void *ret)
{
	ptr_thread *t = ptr_tls;
	if (t && t->user)
		ptr_user_end(t);
	real_pthread_exit()(ret);
	__builtin_unreachable();
}

/* A join: the sync region's begin (stamped at s) and the wait's begin,
 * their task argument the joined thread's index + 1 (0: unknown);
 * join_done records their ends, also when the joining thread is cancelled
 * inside the join (a cancellation point). */
struct join {
	ptr_thread *t;
	uint32_t loc;
	uint64_t joined;
};

static int join_begin(struct join *j, uint64_t s, const void *ra, pthread_t th)
{
	const void *site;
	if (!ptr_recording() || !from_program(ra, &site))
		return 0;
	ptr_thread *t = ptr_self();
	j->t = t;
	j->loc = ptr_loc(t, site);
	j->joined = (uint64_t)started_get(th, 0);
	/* The wait begins at the call's entry too: what the wrapper does
	 * before the real join (the caller test, a backtrace through
	 * libstdc++, the table's mutex; a thread descheduled there, 29 ms
	 * once under CI's load) is time the program waits in its join, not
	 * work of the program. */
	ptr_ev4_at(t, s, K_SYNC_BEGIN, PTR_SYNC_THREAD_JOIN, 0, j->joined, j->loc);
	ptr_ev3_at(t, s, K_SYNC_WAIT_BEGIN, PTR_SYNC_THREAD_JOIN, 0, j->joined);
	return 1;
}

static void join_done(void *p)
{
	struct join *j = p;
	ptr_ev3(j->t, K_SYNC_WAIT_END, PTR_SYNC_THREAD_JOIN, 0, j->joined);
	ptr_ev4_late(j->t, K_SYNC_END, PTR_SYNC_THREAD_JOIN, 0, j->joined, j->loc);
}

/* The body of a join wrapper: call is the real join. A thread joined
 * leaves the table of started threads (whoever joins it), while recording
 * (not in a forked child, where another thread of the parent may have held
 * the table's mutex). */
#define JOIN(real, call)                                                       \
	uint64_t s = ptr_stamp();                                              \
	if (!(real))                                                           \
		return ENOSYS;                                                 \
	struct join j;                                                         \
	int rc;                                                                \
	if (!join_begin(&j, s, __builtin_return_address(0), th)) {             \
		rc = call;                                                     \
	} else {                                                               \
		pthread_cleanup_push(join_done, &j);                           \
		rc = call;                                                     \
		pthread_cleanup_pop(1);                                        \
	}                                                                      \
	if (rc == 0 && ptr_recording())                                        \
		started_get(th, 1);                                            \
	return rc

int pthread_join(pthread_t th, void **ret)
{
	join_fn real = real_pthread_join();
	JOIN(real, real(th, ret));
}

/* pthread_tryjoin_np does not wait: not wrapped. */
#ifdef PTR_TIMEDJOIN
int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
	timedjoin_fn real = real_pthread_timedjoin_np();
	JOIN(real, real(th, ret, abstime));
}
#endif

#ifdef PTR_CLOCKJOIN
int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clock, const struct timespec *abstime)
{
	clockjoin_fn real = real_pthread_clockjoin_np();
	JOIN(real, real(th, ret, clock, abstime));
}
#endif

/* A wait of the program on its condition variable or barrier: the sync
 * region of kind 257 or 258, its task argument the object's address (what
 * a signal names, so that the analysis follows the woken thread from the
 * signal), ended by twait_done, also
 * when the thread is cancelled inside the wait (both are cancellation
 * points for condition variables). Runtime libraries' waits (libomp's
 * sleeping workers, MPI's progress threads) are not recorded. The caller
 * test costs a module lookup (tens of ns; a backtrace for
 * std::condition_variable, whose wait calls ours from libstdc++), small
 * beside a wait that blocks. dlsym gives the default versions
 * (pthread_cond_wait@@GLIBC_2.3.2), those every program built since 2002
 * calls. */
struct twait {
	ptr_thread *t;
	uint32_t loc, kind;
	uint64_t obj;
};

static int twait_begin(struct twait *w, uint64_t s, const void *ra, uint32_t kind, const void *obj)
{
	const void *site;
	if (!ptr_recording() || !from_program(ra, &site))
		return 0;
	ptr_thread *t = ptr_self();
	w->t = t;
	w->kind = kind;
	w->obj = (uint64_t)(uintptr_t)obj;
	w->loc = ptr_loc(t, site);
	ptr_ev4_at(t, s, K_SYNC_BEGIN, kind, 0, w->obj, w->loc);
	ptr_ev3_at(t, s, K_SYNC_WAIT_BEGIN, kind, 0, w->obj); /* at entry, as a join's */
	return 1;
}

static void twait_done(void *p)
{
	struct twait *w = p;
	ptr_ev3(w->t, K_SYNC_WAIT_END, w->kind, 0, w->obj);
	ptr_ev4_late(w->t, K_SYNC_END, w->kind, 0, w->obj, w->loc);
}

#define TWAIT(kind, obj, real, call)                                           \
	uint64_t s = ptr_stamp();                                              \
	if (!(real))                                                           \
		return ENOSYS;                                                 \
	struct twait w;                                                        \
	int rc;                                                                \
	if (!twait_begin(&w, s, __builtin_return_address(0), kind, obj)) {     \
		rc = call;                                                     \
	} else {                                                               \
		pthread_cleanup_push(twait_done, &w);                          \
		rc = call;                                                     \
		pthread_cleanup_pop(1);                                        \
	}                                                                      \
	return rc

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	condwait_fn real = real_pthread_cond_wait();
	TWAIT(PTR_SYNC_COND_WAIT, c, real, real(c, m));
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	condtimed_fn real = real_pthread_cond_timedwait();
	TWAIT(PTR_SYNC_COND_WAIT, c, real, real(c, m, abstime));
}

#ifdef PTR_CONDCLOCK
int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	condclock_fn real = real_pthread_cond_clockwait();
	TWAIT(PTR_SYNC_COND_WAIT, c, real, real(c, m, clock, abstime));
}
#endif

int pthread_barrier_wait(pthread_barrier_t *b)
{
	barrier_fn real = real_pthread_barrier_wait();
	TWAIT(PTR_SYNC_THREAD_BARRIER, b, real, real(b));
}

/* A signal or broadcast of the program's condition variable: a sync region
 * of kind 259 of no length, naming the condition variable, recorded before
 * the real call (a waiter it wakes ends its wait after it). A cheap call,
 * often in a producer's loop: a module lookup and two events. */
static int cond_signal(const void *ra, pthread_cond_t *c)
{
	const void *site;
	if (!ptr_recording() || !from_program(ra, &site))
		return 0;
	ptr_thread *t = ptr_self();
	uint32_t loc = ptr_loc(t, site);
	uint64_t s = ptr_stamp(), obj = (uint64_t)(uintptr_t)c;
	ptr_ev4_at(t, s, K_SYNC_BEGIN, PTR_SYNC_COND_SIGNAL, 0, obj, loc);
	ptr_ev4_at(t, s, K_SYNC_END, PTR_SYNC_COND_SIGNAL, 0, obj, loc);
	return 1;
}

int pthread_cond_signal(pthread_cond_t *c)
{
	condsignal_fn real = real_pthread_cond_signal();
	if (!real)
		return ENOSYS;
	cond_signal(__builtin_return_address(0), c);
	return real(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	condsignal_fn real = real_pthread_cond_broadcast();
	if (!real)
		return ENOSYS;
	cond_signal(__builtin_return_address(0), c);
	return real(c);
}
