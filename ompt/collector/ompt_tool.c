/*
 * The OMPT tool: ompt_start_tool and one callback per recorded event. Every
 * callback records on the calling thread's buffer and does nothing else (POT
 * §3.1). Ids go into the OMPT data->value of tasks and parallel regions.
 */
#define _GNU_SOURCE
#include "collector.h"

#include <link.h>
#include <omp-tools.h>
#include <stdio.h>

static _Atomic int ompt_on; /* initialized and not yet finalized */

int ptr_ompt_active(void) { return atomic_load(&ompt_on); }

static inline uint64_t val(const ompt_data_t *d) { return d ? d->value : 0; }

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
	ptr_thread *t = ptr_register((int)type, 1);
	thread_data->value = (uint64_t)t->index;
}

static void on_thread_end(ompt_data_t *thread_data)
{
	uint64_t s = ptr_stamp();
	(void)thread_data;
	ptr_thread *t = ptr_self();
	ptr_ev0_at(t, s, K_THREAD_END);
	ptr_note_thread_end(t);
}

static void on_parallel_begin(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *par,
			      unsigned int requested, int flags, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	(void)frame;
	ptr_thread *t = ptr_self();
	uint64_t id = ptr_new_id(t);
	par->value = id;
	ptr_ev5_at(t, s, K_PARALLEL_BEGIN, id, val(enc), requested, (uint32_t)flags, ptr_loc(t, codeptr));
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *enc, int flags, const void *codeptr)
{
	ptr_thread *t = ptr_self();
	ptr_ev4_late(t, K_PARALLEL_END, val(par), val(enc), (uint32_t)flags, ptr_loc(t, codeptr));
}

/* The current implicit task's parallel region: libomp passes no parallel
 * data at the end of an implicit barrier or implicit task. */
static inline uint64_t cur_par(ptr_thread *t)
{
	int d = t->idepth;
	return d > 0 && d <= PTR_ISTACK ? t->istack[d - 1].par : 0;
}

static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
			     unsigned int team, unsigned int index, int flags)
{
	uint64_t s = ptr_stamp(); /* used by the end */
	ptr_thread *t = ptr_self();
	if (ep == ompt_scope_begin) {
		uint64_t pid = (flags & ompt_task_initial) ? 0 : val(par);
		uint64_t id = ptr_new_id(t);
		task->value = id;
		if (t->idepth < PTR_ISTACK)
			t->istack[t->idepth] = (struct ptr_istack){ id, pid, team, index };
		t->idepth++;
		ptr_ev5_late(t, K_IMPLICIT_BEGIN, pid, id, team, index, (uint32_t)flags);
		return;
	}
	uint64_t id = val(task), pid = (flags & ompt_task_initial) ? 0 : val(par);
	/* the end repeats the begin's team size and thread number (libomp passes 0) */
	for (int d = t->idepth < PTR_ISTACK ? t->idepth : PTR_ISTACK; d > 0; d--) {
		struct ptr_istack *s = &t->istack[d - 1];
		if (s->task == id) {
			pid = s->par;
			team = s->team;
			index = s->num;
			t->idepth = d - 1;
			break;
		}
	}
	ptr_ev5_at(t, s, K_IMPLICIT_END, pid, id, team, index, (uint32_t)flags);
}

static void on_task_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *newt, int flags,
			   int has_deps, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	(void)frame, (void)has_deps;
	ptr_thread *t = ptr_self();
	uint64_t id = ptr_new_id(t);
	newt->value = id;
	ptr_ev4_at(t, s, K_TASK_CREATE, id, val(enc), (uint32_t)flags, ptr_loc(t, codeptr));
}

/* ompt_dependence_t's types, by number: omp-tools.h before LLVM 17's has no
 * all-memory ones */
enum { DEP_IN = 1, DEP_INOUTSET = 7, DEP_OUT_ALL_MEMORY = 34, DEP_INOUT_ALL_MEMORY = 35 };

static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	size_t n = ndeps > 0 ? (size_t)ndeps : 0, max = (t->cap - 4) / 2;
	if (max > PTR_MAX_DEPS)
		max = PTR_MAX_DEPS;
	if (n > max) {
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1))
			fprintf(stderr, "ptrace collector: a dependence list of %d entries was cut to %zu\n", ndeps, max);
		n = max;
	}
	uint64_t *w = ptr_res(t, 3 + 2 * n, &s);
	w[1] = val(task);
	w[2] = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = deps[i].variable.value, ty = (uint64_t)deps[i].dependence_type;
		/* omp_all_memory: libomp takes an entry at address -1, or at 0
		 * with the compiler's all-memory flag, for it. LLVM 17's and
		 * later report it as out_all_memory; earlier ones report the
		 * entry as it is, the flag's with no type (whatever the memory
		 * held): recorded as out_all_memory too (docs/trace-format.md).
		 * An entry at 0 of another type is one libomp ignores. */
		if (a == UINT64_MAX || (a == 0 && (ty < DEP_IN || ty > DEP_INOUTSET) && ty != DEP_INOUT_ALL_MEMORY))
			ty = DEP_OUT_ALL_MEMORY;
		w[3 + 2 * i] = a;
		w[4 + 2 * i] = ty;
	}
	ptr_put(t, w, s, K_TASK_DEPS, 3 + 2 * n);
}

static void on_task_dependence(ompt_data_t *src, ompt_data_t *sink)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	ptr_ev2_at(t, s, K_TASK_DEPENDENCE, val(src), val(sink));
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	switch (status) {
	case ompt_task_early_fulfill:
	case ompt_task_late_fulfill:
		/* libomp reports omp_fulfill_event as a schedule with an (early
		 * or late) fulfill status and no next task: detach_fulfill */
		ptr_ev1_at(t, s, K_DETACH_FULFILL, val(prior));
		return;
	case ompt_task_complete:
	case ompt_task_cancel:
	case ompt_task_detach:
		/* the prior task's work ends here */
		ptr_ev3_at(t, s, K_TASK_SCHEDULE, val(prior), (uint64_t)status, val(next));
		return;
	default:
		/* the next task's work begins after this */
		ptr_ev3_late(t, K_TASK_SCHEDULE, val(prior), (uint64_t)status, val(next));
	}
}

/* The executable segment of the OpenMP runtime that loaded the tool (the
 * one holding its lookup function), found at initialize. A program built
 * with GCC runs on libomp's GOMP_* entry points, and the barrier that ends
 * a GOMP_parallel region with a reduction (and the workers' barrier of it)
 * is reported with a return address inside libomp (GOMP_parallel, or no
 * symbol at all), which names no construct of the program: such a barrier
 * is recorded without a location, as libomp reports the workers' implicit
 * barriers, so that reports give it its region's (as for a clang build). */
static uintptr_t rt_text_lo, rt_text_hi;

static int find_runtime_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t a = *(const uintptr_t *)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (a >= lo && a < hi) {
			rt_text_lo = lo;
			rt_text_hi = hi;
			return 1;
		}
	}
	return 0;
}

/* codeptr of a sync region, or NULL for a barrier of the implicit family
 * whose return address is the runtime's own code. */
static inline const void *sync_codeptr(ompt_sync_region_t kind, const void *codeptr)
{
	uintptr_t a = (uintptr_t)codeptr;
	if (a >= rt_text_lo && a < rt_text_hi &&
	    (kind == ompt_sync_region_barrier_implicit || kind == ompt_sync_region_barrier_implementation ||
	     kind == ompt_sync_region_barrier_implicit_workshare || kind == ompt_sync_region_barrier_implicit_parallel ||
	     kind == ompt_sync_region_barrier_teams))
		return NULL;
	return codeptr;
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *par,
			   ompt_data_t *task, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	uint64_t pid = val(par);
	if (!pid)
		pid = cur_par(t);
	codeptr = sync_codeptr(kind, codeptr);
	/* entering a sync region ends the work before it, leaving one begins
	 * the work after it */
	if (ep == ompt_scope_begin)
		ptr_ev4_at(t, s, K_SYNC_BEGIN, (uint64_t)kind, pid, val(task), ptr_loc(t, codeptr));
	else
		ptr_ev4_late(t, K_SYNC_END, (uint64_t)kind, pid, val(task), ptr_loc(t, codeptr));
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *par,
				ompt_data_t *task, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	(void)codeptr;
	ptr_thread *t = ptr_self();
	uint64_t pid = val(par);
	if (!pid)
		pid = cur_par(t);
	if (ep == ompt_scope_begin)
		ptr_ev3_at(t, s, K_SYNC_WAIT_BEGIN, (uint64_t)kind, pid, val(task));
	else
		ptr_ev3_late(t, K_SYNC_WAIT_END, (uint64_t)kind, pid, val(task));
}

static void on_cancel(ompt_data_t *task, int flags, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	ptr_ev3_at(t, s, K_CANCEL, val(task), (uint32_t)flags, ptr_loc(t, codeptr));
}

static void on_work(ompt_work_t ws, ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
		    uint64_t count, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	(void)par, (void)task;
	ptr_thread *t = ptr_self();
	ptr_ev3_at(t, s, ep == ompt_scope_begin ? K_WORK_BEGIN : K_WORK_END, (uint64_t)ws, count, ptr_loc(t, codeptr));
}

/* Locks, critical, ordered and atomic (where libomp implements one with a
 * lock): the wait for a mutex is from the end of mutex_acquire (stamped
 * after the record, so its cost is not counted as waiting) to the start of
 * mutex_acquired. */
static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
			     const void *codeptr)
{
	(void)hint, (void)impl;
	ptr_thread *t = ptr_self();
	ptr_ev3_late(t, K_MUTEX_ACQUIRE, (uint64_t)kind, (uint64_t)wait_id, ptr_loc(t, codeptr));
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	ptr_ev3_at(t, s, K_MUTEX_ACQUIRED, (uint64_t)kind, (uint64_t)wait_id, ptr_loc(t, codeptr));
}

static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
	uint64_t s = ptr_stamp();
	ptr_thread *t = ptr_self();
	ptr_ev3_at(t, s, K_MUTEX_RELEASED, (uint64_t)kind, (uint64_t)wait_id, ptr_loc(t, codeptr));
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data)
{
	(void)device, (void)tool_data;
	ptr_activate();
	uintptr_t rt = (uintptr_t)lookup;
	dl_iterate_phdr(find_runtime_text, &rt);
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (!set)
		return 0;
	static const struct {
		ompt_callbacks_t cb;
		ompt_callback_t fn;
		const char *name;
	} cbs[] = {
		{ ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin, "thread_begin" },
		{ ompt_callback_thread_end, (ompt_callback_t)on_thread_end, "thread_end" },
		{ ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin, "parallel_begin" },
		{ ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end, "parallel_end" },
		{ ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task, "implicit_task" },
		{ ompt_callback_task_create, (ompt_callback_t)on_task_create, "task_create" },
		{ ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule, "task_schedule" },
		{ ompt_callback_dependences, (ompt_callback_t)on_dependences, "dependences" },
		{ ompt_callback_task_dependence, (ompt_callback_t)on_task_dependence, "task_dependence" },
		{ ompt_callback_sync_region, (ompt_callback_t)on_sync_region, "sync_region" },
		{ ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_region_wait, "sync_region_wait" },
		{ ompt_callback_cancel, (ompt_callback_t)on_cancel, "cancel" },
		{ ompt_callback_work, (ompt_callback_t)on_work, "work" },
		{ ompt_callback_mutex_acquire, (ompt_callback_t)on_mutex_acquire, "mutex_acquire" },
		{ ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired, "mutex_acquired" },
		{ ompt_callback_mutex_released, (ompt_callback_t)on_mutex_released, "mutex_released" },
	};
	for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
		int r = set(cbs[i].cb, cbs[i].fn);
		if (r == ompt_set_never || r == ompt_set_error)
			fprintf(stderr, "ptrace collector: the OpenMP runtime will not deliver %s events\n", cbs[i].name);
	}
	atomic_store(&ompt_on, 1);
	return 1;
}

static void finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
	ptr_finish("ompt_finalize");
	atomic_store(&ompt_on, 0);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	(void)omp_version;
	static ompt_start_tool_result_t result = { initialize, finalize, { 0 } };
	ptr_set_runtime(runtime_version);
	return &result;
}
