/*
 * Small helpers of the Comch library over the core's object model: device limits and socket watching.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <time.h>

#include "comch_internal.h"

/* A cap left at 0 by the device configuration falls back to the Comch default */
static uint32_t or_default(uint32_t v, uint32_t dflt)
{
	return v != 0 ? v : dflt;
}

doca_error_t comch_fastpath_conf_check(const struct doca_ctx *ctx, bool callbacks_given, uint32_t num_tasks)
{
	if (ctx == NULL || !callbacks_given || num_tasks == 0 || num_tasks > COMCH_MAX_FASTPATH_TASKS)
		return DOCA_ERROR_INVALID_VALUE;
	return sim_ctx_is_idle(ctx) ? DOCA_SUCCESS : DOCA_ERROR_BAD_STATE;
}

uint32_t comch_cap_max_msg_size(const struct doca_devinfo *devinfo)
{
	return or_default(devinfo->caps.comch_max_msg_size, 4080u);
}

uint32_t comch_cap_max_name_len(const struct doca_devinfo *devinfo)
{
	uint32_t v = or_default(devinfo->caps.comch_max_name_len, COMCH_MAX_NAME_LEN);

	/* Our objects keep the name inline */
	return v > COMCH_MAX_NAME_LEN ? COMCH_MAX_NAME_LEN : v;
}

uint32_t comch_cap_max_clients(const struct doca_devinfo *devinfo)
{
	return or_default(devinfo->caps.comch_max_clients, COMCH_MAX_CLIENTS);
}

uint32_t comch_cap_max_recv_queue(const struct doca_devinfo *devinfo)
{
	return or_default(devinfo->caps.comch_max_recv_queue_size, COMCH_MAX_RECV_QUEUE);
}

uint32_t comch_cap_max_send_tasks(const struct doca_devinfo *devinfo)
{
	return or_default(devinfo->caps.comch_max_send_tasks, COMCH_MAX_SEND_TASKS);
}

uint32_t comch_cap_max_buf_size(const struct doca_devinfo *devinfo)
{
	return or_default(devinfo->caps.comch_max_buf_size, COMCH_MAX_FASTPATH_BUF);
}

void comch_watch(struct doca_ctx *ctx, int fd)
{
	if (ctx->pe != NULL && fd >= 0)
		(void)sim_pe_watch_fd(ctx->pe, fd, ctx);
}

void comch_unwatch(struct doca_ctx *ctx, int fd)
{
	if (ctx->pe != NULL && fd >= 0)
		sim_pe_unwatch_fd(ctx->pe, fd);
}

int64_t comch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int64_t comch_handshake_deadline_ns(void)
{
	static int64_t deadline = -1;

	if (deadline < 0) {
		const char *ms = getenv("DOCA_SIM_HANDSHAKE_MS");
		long v = ms != NULL && *ms != '\0' ? strtol(ms, NULL, 10) : 0;

		deadline = (v > 0 ? (int64_t)v : 10000) * 1000000ll;
	}
	return deadline;
}
