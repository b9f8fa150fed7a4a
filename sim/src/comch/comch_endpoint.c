/*
 * What Comch servers and clients share: configuration before start, the send-task configuration and the event
 * registrations (all only allowed while the context is idle, as in DOCA).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "comch_internal.h"
#include "accessors.h"

doca_error_t comch_ep_init(struct comch_endpoint *ep, struct doca_dev *dev, bool is_server)
{
	ep->is_server = is_server;
	ep->dev = dev;
	ep->max_msg_size = comch_cap_max_msg_size(dev->info);
	ep->recv_queue_size = COMCH_DEFAULT_RECV_QUEUE;
	/* Sized to the device maximum so any peer configuration within the cap can be received */
	ep->recv_buf_size = ep->max_msg_size;
	ep->recv_buf = malloc(ep->recv_buf_size > 0 ? ep->recv_buf_size : 1);
	return ep->recv_buf == NULL ? DOCA_ERROR_NO_MEMORY : DOCA_SUCCESS;
}

void comch_ep_fini(struct comch_endpoint *ep)
{
	comch_send_pool_destroy(ep);
	free(ep->recv_buf);
	ep->recv_buf = NULL;
}

bool comch_ep_is_idle(const struct comch_endpoint *ep)
{
	return sim_ctx_is_idle(&ep->ctx);
}

/* Whether a configuration call may go on: INVALID_VALUE for a value out of range (valid false), BAD_STATE once the
 * context left IDLE; checked in that order, as DOCA does */
static doca_error_t configurable(const struct comch_endpoint *ep, bool valid)
{
	if (!valid)
		return DOCA_ERROR_INVALID_VALUE;
	return comch_ep_is_idle(ep) ? DOCA_SUCCESS : DOCA_ERROR_BAD_STATE;
}

doca_error_t comch_ep_set_max_msg_size(struct comch_endpoint *ep, uint32_t size)
{
	doca_error_t err = configurable(ep, size != 0 && size <= ep->recv_buf_size);

	if (err == DOCA_SUCCESS)
		ep->max_msg_size = size;
	return err;
}

doca_error_t comch_ep_set_recv_queue_size(struct comch_endpoint *ep, uint32_t size)
{
	doca_error_t err = configurable(ep, size != 0 && size <= comch_cap_max_recv_queue(ep->dev->info));

	if (err == DOCA_SUCCESS)
		ep->recv_queue_size = size;
	return err;
}

static doca_error_t set_send_conf(struct comch_endpoint *ep, doca_comch_task_send_completion_cb_t done,
				  doca_comch_task_send_completion_cb_t err, uint32_t num)
{
	doca_error_t rc = configurable(ep, done != NULL && err != NULL && num != 0 &&
						   num <= comch_cap_max_send_tasks(ep->dev->info));

	if (rc == DOCA_SUCCESS) {
		ep->send_done_cb = done;
		ep->send_err_cb = err;
		ep->num_send_tasks = num;
	}
	return rc;
}

static doca_error_t set_recv_cb(struct comch_endpoint *ep, doca_comch_event_msg_recv_cb_t cb)
{
	doca_error_t err = configurable(ep, cb != NULL);

	if (err == DOCA_SUCCESS)
		ep->msg_recv_cb = cb;
	return err;
}

static doca_error_t set_consumer_cbs(struct comch_endpoint *ep, doca_comch_event_consumer_cb_t new_cb,
				     doca_comch_event_consumer_cb_t expired_cb)
{
	doca_error_t err = configurable(ep, new_cb != NULL && expired_cb != NULL);

	if (err == DOCA_SUCCESS) {
		ep->consumer_new_cb = new_cb;
		ep->consumer_expired_cb = expired_cb;
	}
	return err;
}

/* ---- public API: the same functions under the server's and the client's names (the handle's ep is its endpoint) */

/* A size both roles set before start through the endpoint's checked setter comch_ep_set_<field> and read back from
 * ep.<field> (max_msg_size, recv_queue_size) */
#define COMCH_EP_SIZE_API(role, field) \
	SIM_EXPORT doca_error_t doca_comch_##role##_set_##field(struct doca_comch_##role *comch_##role, uint32_t size) \
	{ \
		return comch_##role == NULL ? DOCA_ERROR_INVALID_VALUE : comch_ep_set_##field(&comch_##role->ep, size); \
	} \
	SIM_EXPORT SIM_GETTER(doca_comch_##role##_get_##field, const struct doca_comch_##role, comch_##role, uint32_t, \
			      size, comch_##role->ep.field)

#define COMCH_EP_API(role) \
	COMCH_EP_SIZE_API(role, max_msg_size) \
	COMCH_EP_SIZE_API(role, recv_queue_size) \
	SIM_EXPORT SIM_GETTER(doca_comch_##role##_get_device, const struct doca_comch_##role, comch_##role, \
			      struct doca_dev *, dev, comch_##role->ep.dev) \
	SIM_EXPORT doca_error_t doca_comch_##role##_task_send_set_conf( \
		struct doca_comch_##role *comch_##role, doca_comch_task_send_completion_cb_t task_completion_cb, \
		doca_comch_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks) \
	{ \
		if (comch_##role == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		return set_send_conf(&comch_##role->ep, task_completion_cb, task_error_cb, num_send_tasks); \
	} \
	SIM_EXPORT doca_error_t doca_comch_##role##_task_send_alloc_init( \
		struct doca_comch_##role *comch_##role, struct doca_comch_connection *peer, const void *msg, uint32_t len, \
		struct doca_comch_task_send **task) \
	{ \
		if (comch_##role == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		return comch_send_alloc_init(&comch_##role->ep, peer, msg, len, task); \
	} \
	SIM_EXPORT doca_error_t doca_comch_##role##_event_msg_recv_register(struct doca_comch_##role *comch_##role, \
									    doca_comch_event_msg_recv_cb_t recv_event_cb) \
	{ \
		return comch_##role == NULL ? DOCA_ERROR_INVALID_VALUE : set_recv_cb(&comch_##role->ep, recv_event_cb); \
	} \
	SIM_EXPORT doca_error_t doca_comch_##role##_event_consumer_register( \
		struct doca_comch_##role *comch_##role, doca_comch_event_consumer_cb_t new_consumer_event_cb, \
		doca_comch_event_consumer_cb_t expired_consumer_event_cb) \
	{ \
		if (comch_##role == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		return set_consumer_cbs(&comch_##role->ep, new_consumer_event_cb, expired_consumer_event_cb); \
	}

COMCH_EP_API(server)
COMCH_EP_API(client)
