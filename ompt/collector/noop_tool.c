/*
 * A no-op OMPT tool for overhead measurements (POT Table 2 "no-op"): it
 * registers the same callbacks as the ptrace collector with empty bodies, so
 * the difference to the collector is the cost of recording alone.
 */
#include <omp-tools.h>
#include <stddef.h>

static void thread_begin(ompt_thread_t a, ompt_data_t *b) { (void)a, (void)b; }
static void thread_end(ompt_data_t *a) { (void)a; }
static void parallel_begin(ompt_data_t *a, const ompt_frame_t *b, ompt_data_t *c, unsigned int d, int e, const void *f)
{
	(void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
}
static void parallel_end(ompt_data_t *a, ompt_data_t *b, int c, const void *d) { (void)a, (void)b, (void)c, (void)d; }
static void implicit_task(ompt_scope_endpoint_t a, ompt_data_t *b, ompt_data_t *c, unsigned int d, unsigned int e, int f)
{
	(void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
}
static void task_create(ompt_data_t *a, const ompt_frame_t *b, ompt_data_t *c, int d, int e, const void *f)
{
	(void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
}
static void task_schedule(ompt_data_t *a, ompt_task_status_t b, ompt_data_t *c) { (void)a, (void)b, (void)c; }
static void dependences(ompt_data_t *a, const ompt_dependence_t *b, int c) { (void)a, (void)b, (void)c; }
static void task_dependence(ompt_data_t *a, ompt_data_t *b) { (void)a, (void)b; }
static void sync_region(ompt_sync_region_t a, ompt_scope_endpoint_t b, ompt_data_t *c, ompt_data_t *d, const void *e)
{
	(void)a, (void)b, (void)c, (void)d, (void)e;
}
static void cancel(ompt_data_t *a, int b, const void *c) { (void)a, (void)b, (void)c; }
static void work(ompt_work_t a, ompt_scope_endpoint_t b, ompt_data_t *c, ompt_data_t *d, uint64_t e, const void *f)
{
	(void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data)
{
	(void)device, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	set(ompt_callback_thread_begin, (ompt_callback_t)thread_begin);
	set(ompt_callback_thread_end, (ompt_callback_t)thread_end);
	set(ompt_callback_parallel_begin, (ompt_callback_t)parallel_begin);
	set(ompt_callback_parallel_end, (ompt_callback_t)parallel_end);
	set(ompt_callback_implicit_task, (ompt_callback_t)implicit_task);
	set(ompt_callback_task_create, (ompt_callback_t)task_create);
	set(ompt_callback_task_schedule, (ompt_callback_t)task_schedule);
	set(ompt_callback_dependences, (ompt_callback_t)dependences);
	set(ompt_callback_task_dependence, (ompt_callback_t)task_dependence);
	set(ompt_callback_sync_region, (ompt_callback_t)sync_region);
	set(ompt_callback_sync_region_wait, (ompt_callback_t)sync_region);
	set(ompt_callback_cancel, (ompt_callback_t)cancel);
	set(ompt_callback_work, (ompt_callback_t)work);
	return 1;
}

static void finalize(ompt_data_t *tool_data) { (void)tool_data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	(void)omp_version, (void)runtime_version;
	static ompt_start_tool_result_t result = { initialize, finalize, { 0 } };
	return &result;
}
