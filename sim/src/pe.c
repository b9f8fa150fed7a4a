/*
 * Progress engine: connected contexts, the completion queue, and the notification handle (an epoll fd holding an
 * eventfd that turns readable when work is queued, plus any fds contexts watch, e.g. comch sockets).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

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
	*pe = p;
	sim_live_inc(SIM_KIND_PE);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (pe->num_ctxs > 0)
		return sim_fail(DOCA_ERROR_IN_USE, "%s: %zu contexts still connected", __func__, pe->num_ctxs);
	close(pe->event_fd);
	close(pe->epoll_fd);
	free(pe);
	sim_live_dec(SIM_KIND_PE);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (pe == NULL || ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
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

void sim_pe_unwatch_fd(struct doca_pe *pe, int fd)
{
	if (pe != NULL && fd >= 0)
		epoll_ctl(pe->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

/* Run the callbacks of the tasks completed so far (not those completed by these callbacks: they wait for the next
 * call, so a callback that resubmits cannot starve the caller). */
static int run_completions(struct doca_pe *pe)
{
	struct doca_task *task = pe->done_head;
	int ran = 0;

	pe->done_head = NULL;
	pe->done_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;
		struct doca_ctx *ctx = task->ctx;
		sim_task_cb_t cb = task->status == DOCA_SUCCESS ? task->success_cb : task->error_cb;

		task->next = NULL;
		task->submitted = false;
		ctx->inflight--;
		pe->inflight--;
		if (cb != NULL)
			cb(task, task->user_data, ctx->user_data);
		ran = 1;
		task = next;
	}
	return ran;
}

/* Contexts in STOPPING become IDLE once nothing is in flight and the kind has finished stopping */
static int finish_stops(struct doca_pe *pe)
{
	int changed = 0;
	struct doca_ctx *ctx = pe->ctxs;

	while (ctx != NULL) {
		struct doca_ctx *next = ctx->pe_next; /* the state callback may destroy ctx */

		if (ctx->state == DOCA_CTX_STATE_STOPPING && ctx->inflight == 0 && !ctx->kind_stopping) {
			sim_ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
			changed = 1;
		}
		ctx = next;
	}
	return changed;
}

uint8_t doca_pe_progress(struct doca_pe *pe)
{
	int did = 0;

	if (pe == NULL || pe->in_progress)
		return 0;
	pe->in_progress = true;
	for (struct doca_ctx *ctx = pe->ctxs; ctx != NULL;) {
		struct doca_ctx *next = ctx->pe_next;

		if (ctx->ops->progress != NULL && ctx->state != DOCA_CTX_STATE_IDLE)
			did |= ctx->ops->progress(ctx);
		ctx = next;
	}
	if (pe->done_head != NULL)
		did |= run_completions(pe);
	did |= finish_stops(pe);
	pe->in_progress = false;
	return did ? 1 : 0;
}

doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle)
{
	if (pe == NULL || handle == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*handle = pe->epoll_fd;
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pe->armed = true;
	/* Work already pending would otherwise never wake the waiter */
	if (pe->done_head != NULL || pe->inflight > 0)
		sim_pe_signal(pe);
	for (struct doca_ctx *ctx = pe->ctxs; ctx != NULL; ctx = ctx->pe_next)
		if (ctx->state == DOCA_CTX_STATE_STARTING || ctx->state == DOCA_CTX_STATE_STOPPING)
			sim_pe_signal(pe);
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

doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks)
{
	if (pe == NULL || num_inflight_tasks == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_inflight_tasks = pe->inflight;
	return DOCA_SUCCESS;
}
