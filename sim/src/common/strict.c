/*
 * Strict mode of the software device (DOCA_SIM_STRICT): a small DOCA sanitizer.
 *
 * The device sees every DOCA call, so it can tell a program that it relies on something DOCA leaves undefined (a
 * data section outside its buffer, freeing a task DOCA still owns, ...) or that only works by luck on hardware. Each
 * kind of report (rule + function + object kind) is printed once, when first seen, and counted afterwards; the
 * counts, plus objects leaked and tasks never freed, are summarised when the process exits.
 *
 *   DOCA_SIM_STRICT=1      report and continue (the device keeps its safe behaviour)
 *   DOCA_SIM_STRICT=abort  print the first report and abort(), so a debugger or core dump shows the caller
 *
 * In strict mode destroyed handles are poisoned and kept in a bounded quarantine instead of being freed, so a later
 * use of the handle is reported (use-after-destroy) instead of reading freed memory.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct rule_text {
	const char *id;
	const char *doca; /* what DOCA says (our wording) */
};

static const struct rule_text rules[SIM_RULE_COUNT_] = {
	[SIM_RULE_DATA_OUTSIDE_BUFFER] = {"data-outside-buffer",
					  "[data, data + data_len] must lie inside [head, head + len]: undefined "
					  "behaviour on DOCA, which returns DOCA_SUCCESS without checking"},
	[SIM_RULE_FREE_INFLIGHT_TASK] = {"free-inflight-task",
					 "a submitted task is owned by DOCA until its completion callback ran; the free "
					 "was carried out after that callback"},
	[SIM_RULE_SUBMIT_NOT_RUNNING] = {"submit-not-running", "tasks may be submitted only to a RUNNING context"},
	[SIM_RULE_DESTROY_WITH_CHILDREN] = {"destroy-with-children",
					    "destroy children first: bufs before their mmap and inventory, contexts "
					    "before their pe"},
	[SIM_RULE_USE_AFTER_DESTROY] = {"use-after-destroy",
					"the handle was destroyed; on DOCA this reads freed memory"},
	[SIM_RULE_PROGRESS_REENTERED] = {"progress-reentered",
					 "doca_pe_progress must not be called from one of its own callbacks"},
	[SIM_RULE_EXPORT_NOT_STARTED] = {"export-not-started", "only a started mmap can be exported"},
	[SIM_RULE_INVALID_TASK] = {"invalid-task",
				   "the task failed validation at completion (doca_task_submit does not validate; "
				   "doca_task_try_submit does)"},
	[SIM_RULE_TASK_NOT_FREED] = {"task-not-freed", "every task must be freed with doca_task_free after its "
						       "completion callback"},
	[SIM_RULE_LEAK] = {"leak", "object never destroyed before exit"},
	[SIM_RULE_RELEASE_HELD_BUF] = {"release-held-buf",
				       "a task owns its bufs until its completion callback ran; the buf went back to its "
				       "inventory only after that callback (on DOCA the inventory may hand it out "
				       "while the task still reads or writes it)"},
};

#define MAX_KINDS 128

struct report_kind {
	enum sim_rule rule;
	/* copies: the caller's strings may live in libdoca_dma / libdoca_comch, unmapped before our exit summary runs */
	char func[64];
	char object[48];
	const void *first_handle;
	uint64_t count;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct report_kind kinds[MAX_KINDS];
static size_t num_kinds;
static uint64_t dropped; /* reports of kinds beyond MAX_KINDS */
static _Atomic long completed_tasks;

int sim_strict_mode(void)
{
	static int mode = -1;

	if (mode < 0) {
		const char *env = getenv("DOCA_SIM_STRICT");

		if (env == NULL || *env == '\0' || strcmp(env, "0") == 0)
			mode = 0;
		else if (strcmp(env, "abort") == 0)
			mode = 2;
		else
			mode = 1;
	}
	return mode;
}

static void print_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void print_line(const char *fmt, ...)
{
	char line[1024], safe[4 * sizeof(line) + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sim_escape_line(line, safe, sizeof(safe));
	fprintf(stderr, "[doca-sim %d] strict: %s\n", (int)getpid(), safe);
}

/* Count one occurrence (n of them); true when this is the first of its kind */
static bool count(enum sim_rule rule, const char *func, const char *object, const void *handle, uint64_t n)
{
	bool first = false;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < num_kinds; i++)
		if (kinds[i].rule == rule && strcmp(kinds[i].func, func) == 0 && strcmp(kinds[i].object, object) == 0)
			break;
	if (i == num_kinds) {
		if (num_kinds == MAX_KINDS) {
			dropped += n;
			pthread_mutex_unlock(&lock);
			return false;
		}
		kinds[num_kinds] = (struct report_kind){.rule = rule, .first_handle = handle};
		snprintf(kinds[num_kinds].func, sizeof(kinds[num_kinds].func), "%s", func);
		snprintf(kinds[num_kinds].object, sizeof(kinds[num_kinds].object), "%s", object);
		num_kinds++;
		first = true;
	}
	kinds[i].count += n;
	pthread_mutex_unlock(&lock);
	return first;
}

void sim_strict_report(enum sim_rule rule, const char *func, const char *object, const void *handle, const char *fmt,
		       ...)
{
	char detail[512];
	va_list ap;

	if (sim_strict_mode() == 0)
		return;
	if (!count(rule, func, object, handle, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	print_line("%s: %s(%s %p): %s (DOCA: %s)%s", rules[rule].id, func, object, handle, detail, rules[rule].doca,
		   sim_strict_mode() == 2 ? "" : "; further reports of this kind are counted");
	if (sim_strict_mode() == 2) {
		print_line("aborting (DOCA_SIM_STRICT=abort)");
		abort();
	}
}

bool sim_handle_dead(const uint32_t *magic, const char *func, const char *object, const void *handle)
{
	/* Outside strict mode a destroyed handle's memory is freed: nothing can be read safely */
	if (sim_strict_mode() == 0 || *magic != SIM_MAGIC_DEAD)
		return false;
	sim_strict_report(SIM_RULE_USE_AFTER_DESTROY, func, object, handle, "handle used after it was destroyed");
	return true;
}

/* Destroyed handles kept poisoned; the oldest is freed when the quarantine is full */
#define QUARANTINE_LEN 4096
static void *quarantine[QUARANTINE_LEN];
static size_t quarantine_next;

void sim_release(void *object, uint32_t *magic)
{
	void *evicted;

	if (object == NULL)
		return;
	if (sim_strict_mode() == 0) {
		free(object);
		return;
	}
	*magic = SIM_MAGIC_DEAD;
	pthread_mutex_lock(&lock);
	evicted = quarantine[quarantine_next];
	quarantine[quarantine_next] = object;
	quarantine_next = (quarantine_next + 1) % QUARANTINE_LEN;
	pthread_mutex_unlock(&lock);
	free(evicted);
}

void sim_completed_tasks_add(int delta)
{
	atomic_fetch_add_explicit(&completed_tasks, delta, memory_order_relaxed);
}

bool sim_shuffle_seed(uint64_t *seed)
{
	static int parsed = -1;
	static uint64_t value;

	if (parsed < 0) {
		const char *env = getenv("DOCA_SIM_SHUFFLE");
		char *end = NULL;

		parsed = 0;
		if (env != NULL && *env != '\0') {
			value = strtoull(env, &end, 0);
			if (end != NULL && *end == '\0')
				parsed = 1;
			else
				sim_log(SIM_LOG_ALWAYS, "DOCA_SIM_SHUFFLE=%s is not a number: order randomisation off", env);
		}
	}
	if (seed != NULL)
		*seed = value;
	return parsed == 1;
}

/* At exit (or when libdoca_common is unloaded): leaks, tasks never freed, then the summary of every kind */
__attribute__((destructor)) static void strict_summary(void)
{
	long unfreed = atomic_load(&completed_tasks);
	uint64_t total = 0;

	if (sim_strict_mode() == 0)
		return;
	if (sim_strict_mode() == 2 && num_kinds > 0)
		return; /* already aborted */
	if (unfreed > 0)
		count(SIM_RULE_TASK_NOT_FREED, "doca_task_free", "task", NULL, (uint64_t)unfreed);
	for (int kind = 0; kind < SIM_KIND_COUNT_; kind++) {
		uint64_t n = sim_live_count((enum sim_kind)kind);

		if (n > 0)
			count(SIM_RULE_LEAK, "exit", sim_live_kind_object((enum sim_kind)kind), NULL, n);
	}
	if (num_kinds == 0)
		return;
	for (size_t i = 0; i < num_kinds; i++)
		total += kinds[i].count;
	print_line("summary: %llu reports of %zu kind%s", (unsigned long long)(total + dropped), num_kinds,
		   num_kinds == 1 ? "" : "s");
	for (size_t i = 0; i < num_kinds; i++)
		print_line("  %llu x %s: %s(%s): %s", (unsigned long long)kinds[i].count, rules[kinds[i].rule].id,
			   kinds[i].func, kinds[i].object, rules[kinds[i].rule].doca);
	if (dropped > 0)
		print_line("  %llu more reports of other kinds not listed", (unsigned long long)dropped);
}
