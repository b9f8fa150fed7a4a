/*
 * Progress engine: connected contexts, the completion queue, and the notification handle (an epoll fd holding an
 * eventfd that turns readable when work is queued, plus any fds contexts watch, e.g. comch sockets).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"
#include "accessors.h"

doca_error_t doca_pe_create(struct doca_pe **pe)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct doca_pe *p;

	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	p->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ev.data.fd = p->event_fd;
	if (p->epoll_fd < 0 || p->event_fd < 0 || epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->event_fd, &ev) != 0) {
		if (p->epoll_fd >= 0)
			close(p->epoll_fd);
		if (p->event_fd >= 0)
			close(p->event_fd);
		free(p);
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "%s: epoll/eventfd: %s", __func__, strerror(errno));
	}
	p->magic = SIM_MAGIC_LIVE;
	{
		static _Atomic uint64_t created;
		uint64_t seed;

		/* Each pe of the process gets its own reproducible sequence */
		p->shuffle = sim_shuffle_seed(&seed);
		p->rng = (seed ^ 0x9E3779B97F4A7C15ull) + 0x632BE59BD9B4E019ull * ++created;
		if (p->rng == 0)
			p->rng = 1;
	}
	*pe = p;
	sim_live_inc(SIM_KIND_PE);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	SIM_RETURN_IF_NULL_OR_DEAD(pe, magic, "pe");
	if (pe->num_ctxs > 0) {
		sim_strict_report(SIM_RULE_DESTROY_WITH_CHILDREN, __func__, "pe", pe,
				  "%zu contexts still connected: returned DOCA_ERROR_IN_USE", pe->num_ctxs);
		return sim_fail(DOCA_ERROR_IN_USE, "%s: %zu contexts still connected", __func__, pe->num_ctxs);
	}
	close(pe->event_fd);
	close(pe->epoll_fd);
	sim_release(pe, &pe->magic);
	sim_live_dec(SIM_KIND_PE);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (pe == NULL || ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(pe, magic, "pe", DOCA_ERROR_INVALID_VALUE);
	SIM_RETURN_IF_DEAD(ctx, magic, "ctx", DOCA_ERROR_INVALID_VALUE);
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: ctx is not idle", __func__);
	/* The connection lasts until the context is destroyed */
	if (ctx->pe != NULL)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: ctx is already connected to a pe", __func__);
	ctx->pe = pe;
	ctx->pe_next = pe->ctxs;
	pe->ctxs = ctx;
	pe->num_ctxs++;
	return DOCA_SUCCESS;
}

/* The task whose completion callback runs on this thread, whether that callback freed it, and whether it destroyed
 * the task's context (its tasks go with it) */
static _Thread_local const struct doca_task *in_callback;
static _Thread_local const struct doca_ctx *in_callback_ctx;
static _Thread_local bool freed_in_callback, ctx_gone_in_callback;

void sim_pe_note_task_freed(const struct doca_task *task)
{
	if (task == in_callback)
		freed_in_callback = true;
}

/*
 * Tasks the device freed after their callback because the program had freed them in flight. A program that frees
 * such a task again afterwards (it may not know its first free counted) would free memory twice: their addresses
 * are kept (the last DEFERRED_KEEP, process-wide) so doca_task_free can refuse them without touching the memory; an
 * address handed out again for a new task leaves the list (sim_pe_forget_deferred_free).
 */
#define DEFERRED_KEEP 4096
static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *deferred_freed[DEFERRED_KEEP];
static size_t deferred_next;
static _Atomic size_t deferred_count; /* read without the lock on every task allocation and free */

static void remember_deferred_free(const struct doca_task *task)
{
	pthread_mutex_lock(&deferred_lock);
	if (deferred_freed[deferred_next] == NULL)
		deferred_count++; /* else the oldest is forgotten in its place */
	deferred_freed[deferred_next] = task;
	deferred_next = (deferred_next + 1) % DEFERRED_KEEP;
	pthread_mutex_unlock(&deferred_lock);
}

/* Scans only while some task was freed that way (most programs never do) */
static bool find_deferred_free(const void *task, bool forget)
{
	bool found = false;

	pthread_mutex_lock(&deferred_lock);
	for (size_t i = 0; i < DEFERRED_KEEP && deferred_count > 0; i++)
		if (deferred_freed[i] == task && task != NULL) {
			found = true;
			if (forget) {
				deferred_freed[i] = NULL;
				deferred_count--;
			}
			break;
		}
	pthread_mutex_unlock(&deferred_lock);
	return found;
}

bool sim_pe_freed_after_callback(const struct doca_task *task)
{
	return deferred_count > 0 && find_deferred_free(task, false);
}

void sim_pe_forget_deferred_free(const struct doca_task *task)
{
	if (deferred_count > 0)
		(void)find_deferred_free(task, true);
}

void sim_pe_disconnect(struct doca_ctx *ctx)
{
	struct doca_pe *pe = ctx->pe;

	if (pe == NULL)
		return;
	for (struct doca_ctx **link = &pe->ctxs; *link != NULL; link = &(*link)->pe_next) {
		if (*link == ctx) {
			*link = ctx->pe_next;
			pe->num_ctxs--;
			break;
		}
	}
	ctx->pe = NULL;
	ctx->pe_next = NULL;
	pe->ctx_epoch++;
	if (ctx == in_callback_ctx)
		ctx_gone_in_callback = true; /* destroyed from one of its own tasks' callbacks */
}

void sim_pe_signal(struct doca_pe *pe)
{
	uint64_t one = 1;

	if (!pe->armed || pe->event_fd_signalled)
		return;
	if (write(pe->event_fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
		pe->event_fd_signalled = true;
}

doca_error_t sim_pe_watch_fd(struct doca_pe *pe, int fd, struct doca_ctx *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN};

	(void)ctx;
	if (pe == NULL || fd < 0)
		return DOCA_ERROR_INVALID_VALUE;
	ev.data.fd = fd;
	if (epoll_ctl(pe->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "%s: epoll_ctl: %s", __func__, strerror(errno));
	return DOCA_SUCCESS;
}

void sim_pe_watch_fd_out(struct doca_pe *pe, int fd, bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0)};

	ev.data.fd = fd;
	if (pe != NULL && fd >= 0)
		(void)epoll_ctl(pe->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
}

void sim_pe_unwatch_fd(struct doca_pe *pe, int fd)
{
	if (pe != NULL && fd >= 0)
		epoll_ctl(pe->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

uint64_t sim_pe_random(struct doca_pe *pe)
{
	uint64_t x = pe->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	pe->rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Shuffle mode: reorder the ctx's completion queue at random (unless the kind completes in order) and return how many
 * of them this turn delivers (at least one), so completions arrive in any order DOCA allows and spread over several
 * doca_pe_progress calls. */
static size_t shuffle_completions(struct doca_pe *pe, struct doca_ctx *ctx)
{
	struct doca_task *small[64], **tasks = small;
	size_t n = ctx->num_done, i;

	if (ctx->ops->ordered_completions)
		return 1 + (size_t)(sim_pe_random(pe) % n);
	if (n > 64) {
		tasks = malloc(n * sizeof(*tasks));
		if (tasks == NULL)
			return n;
	}
	i = 0;
	for (struct doca_task *t = ctx->done_head; t != NULL; t = t->next)
		tasks[i++] = t;
	for (i = n; i > 1; i--) {
		size_t j = (size_t)(sim_pe_random(pe) % i);
		struct doca_task *swap = tasks[i - 1];

		tasks[i - 1] = tasks[j];
		tasks[j] = swap;
	}
	for (i = 0; i < n; i++)
		tasks[i]->next = i + 1 < n ? tasks[i + 1] : NULL;
	ctx->done_head = tasks[0];
	ctx->done_tail = tasks[n - 1];
	if (tasks != small)
		free(tasks);
	return 1 + (size_t)(sim_pe_random(pe) % n);
}

/* Runs a completed task's callback (cb may be NULL). A doca_task_free the program called while the task was in
 * flight was put off (task.c); it is carried out now that DOCA is done with the task, unless the callback freed or
 * resubmitted it, or destroyed its context (the task went with it). */
static void run_callback(struct doca_task *task, sim_task_cb_t cb, union doca_data ctx_user_data)
{
	bool free_after = task->bad_frees > 0, freed, ctx_gone;
	const struct doca_task *outer = in_callback;
	const struct doca_ctx *outer_ctx = in_callback_ctx;
	bool outer_freed = freed_in_callback, outer_gone = ctx_gone_in_callback;

	in_callback = task;
	in_callback_ctx = task->ctx;
	freed_in_callback = ctx_gone_in_callback = false;
	if (cb != NULL)
		cb(task, task->user_data, ctx_user_data);
	freed = freed_in_callback;
	ctx_gone = ctx_gone_in_callback;
	in_callback = outer;
	in_callback_ctx = outer_ctx;
	freed_in_callback = outer_freed;
	ctx_gone_in_callback = outer_gone;
	if (free_after && !freed && !ctx_gone && !task->submitted && task->ops != NULL) {
		remember_deferred_free(task);
		task->ops->free(task);
	}
}

/* Run the callbacks of (some of) the ctx's completed tasks; not those completed by these callbacks: they wait for
 * a later call, so a callback that resubmits cannot starve the caller. Stops if a callback destroyed a context. */
static int run_completions(struct doca_pe *pe, struct doca_ctx *ctx)
{
	size_t budget = pe->shuffle ? shuffle_completions(pe, ctx) : ctx->num_done;
	uint64_t epoch = pe->ctx_epoch;
	int ran = 0;

	while (budget-- > 0 && ctx->done_head != NULL) {
		struct doca_task *task = ctx->done_head;
		sim_task_cb_t cb = task->status == DOCA_SUCCESS ? task->success_cb : task->error_cb;

		ctx->done_head = task->next;
		if (ctx->done_head == NULL)
			ctx->done_tail = NULL;
		ctx->num_done--;
		pe->num_done--;
		task->next = NULL;
		task->submitted = false;
		task->completed = true;
		sim_task_release_bufs(task);
		sim_completed_tasks_add(1);
		ctx->inflight--;
		pe->inflight--;
		run_callback(task, cb, ctx->user_data);
		ran = 1;
		if (pe->ctx_epoch != epoch)
			break; /* ctx may be gone */
	}
	return ran;
}

/* One context's turn: its own work (queued copies, sockets, events), else its completions, else the end of its stop.
 * Whatever it does is the progress of this call: DOCA's doca_pe_progress serves one context per call, and a state
 * transition is progress on its own, so a program polling for RUNNING sees it before any event of that context. */
static int ctx_turn(struct doca_pe *pe, struct doca_ctx *ctx)
{
	uint64_t epoch = pe->ctx_epoch;
	int did = 0;

	ctx->transitioned = false;
	if (ctx->ops->progress != NULL && ctx->state != DOCA_CTX_STATE_IDLE)
		did = ctx->ops->progress(ctx);
	if (pe->ctx_epoch != epoch)
		return 1; /* a callback destroyed a context (perhaps this one) */
	if (ctx->transitioned)
		return 1;
	if (ctx->done_head != NULL)
		return run_completions(pe, ctx) | did;
	if (did)
		return 1;
	/* Contexts in STOPPING become IDLE once nothing is in flight and the kind has finished stopping */
	if (ctx->state == DOCA_CTX_STATE_STOPPING && ctx->inflight == 0 && !ctx->kind_stopping) {
		sim_ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
		return 1;
	}
	return 0;
}

uint8_t doca_pe_progress(struct doca_pe *pe)
{
	struct doca_ctx *small[32], **order = small;
	size_t n, start, i;
	int did = 0;

	if (pe == NULL)
		return 0;
	SIM_RETURN_IF_DEAD(pe, magic, "pe", 0);
	if (pe->in_progress) {
		sim_strict_report(SIM_RULE_PROGRESS_REENTERED, __func__, "pe", pe,
				  "called from a callback of the same pe: ignored, returned 0");
		return 0;
	}
	n = pe->num_ctxs;
	if (n == 0)
		return 0;
	if (n > 32) {
		order = malloc(n * sizeof(*order));
		if (order == NULL)
			return 0;
	}
	i = 0;
	for (struct doca_ctx *ctx = pe->ctxs; ctx != NULL && i < n; ctx = ctx->pe_next)
		order[i++] = ctx;
	n = i;
	pe->in_progress = true;
	/* Round robin (a random start when shuffling) so that a busy context cannot starve the others */
	start = pe->shuffle ? (size_t)(sim_pe_random(pe) % n) : pe->next_turn % n;
	for (i = 0; i < n && !did; i++) {
		size_t at = (start + i) % n;

		did = ctx_turn(pe, order[at]);
		if (did)
			pe->next_turn = at + 1;
	}
	pe->in_progress = false;
	if (order != small)
		free(order);
	return did ? 1 : 0;
}

SIM_GETTER(doca_pe_get_notification_handle, const struct doca_pe, pe, doca_notification_handle_t, handle, pe->epoll_fd)

doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pe->armed = true;
	/* Work already pending would otherwise never wake the waiter: completions not yet delivered, tasks that only a
	 * progress call carries out (DMA copies), contexts between states (unless a watched fd will say when) */
	if (pe->num_done > 0)
		sim_pe_signal(pe);
	for (struct doca_ctx *ctx = pe->ctxs; ctx != NULL; ctx = ctx->pe_next) {
		bool waiting = ctx->inflight > 0 || ctx->state == DOCA_CTX_STATE_STARTING ||
			       ctx->state == DOCA_CTX_STATE_STOPPING;
		if (waiting && (ctx->ops->waits_on_fd == NULL || !ctx->ops->waits_on_fd(ctx)))
			sim_pe_signal(pe);
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle)
{
	uint64_t count;

	if (pe == NULL || handle != pe->epoll_fd)
		return DOCA_ERROR_INVALID_VALUE;
	if (read(pe->event_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return sim_fail(DOCA_ERROR_OPERATING_SYSTEM, "%s: read eventfd: %s", __func__, strerror(errno));
	pe->event_fd_signalled = false;
	pe->armed = false;
	return DOCA_SUCCESS;
}

SIM_GETTER(doca_pe_get_num_inflight_tasks, const struct doca_pe, pe, size_t, num_inflight_tasks, pe->inflight)
