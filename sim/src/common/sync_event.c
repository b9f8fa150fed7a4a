/*
 * Software DOCA device, libdoca_common: DOCA Sync Event on the CPU, and its export to a remote peer.
 *
 * The event is a 64-bit word of this process (its own, or one given with doca_sync_event_set_addr), read and written
 * with atomic operations. Exported for the network, it is an RDMA key (mmap_rdma.c) over exactly those 8 bytes: the
 * peer's doca_rdma_task_remote_net_sync_event_* tasks travel as frames to our RDMA I/O thread, which sets, reads or
 * adds to the word after the same key, range and permission checks as any RDMA access. doca_sync_event_stop and
 * _destroy unregister the key first, so once they return no remote operation touches the word (the barrier the
 * RDMA mmaps have). The blob crossing to the peer holds no pointer of ours that is trusted back: only the key is.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_sync_event.h>

#include "internal.h"

#define SYNC_EVENT_BLOB_MAGIC 0x54565345u /* "ESVT" */
#define SYNC_EVENT_BLOB_VERSION 1
#define SYNC_EVENT_REMOTE_ACCESS \
	(DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC)

/* What doca_sync_event_export_to_remote_net hands out */
struct sync_event_blob {
	uint32_t magic;
	uint16_t version;
	uint16_t length;
	uint64_t key;
	uint64_t addr;
};

struct doca_sync_event {
	uint32_t magic;
	bool started;
	bool publisher_remote_net;
	bool has_location; /* a publisher or subscriber was declared (DOCA requires one before start) */
	uint64_t *word;    /* &own_word, or the address given with doca_sync_event_set_addr */
	uint64_t own_word;
	uint64_t key;      /* nonzero while exported for the network */
	struct sync_event_blob blob;
};

doca_error_t doca_sync_event_create(struct doca_sync_event **event)
{
	struct doca_sync_event *se;
	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_NEW_HANDLE_OR_RETURN(se);
	se->word = &se->own_word;
	*event = se;
	return DOCA_SUCCESS;
}

static void unexport_event(struct doca_sync_event *se)
{
	if (se->key == 0)
		return;
	sim_rdma_unregister_key(se); /* the barrier: no remote access is under way once this returns */
	se->key = 0;
}

doca_error_t doca_sync_event_destroy(struct doca_sync_event *event)
{
	SIM_RETURN_IF_NULL_OR_DEAD(event, magic, "sync_event");
	unexport_event(event);
	sim_release(event, &event->magic);
	return DOCA_SUCCESS;
}

static doca_error_t configurable(struct doca_sync_event *se, const char *func)
{
	SIM_RETURN_IF_NULL_OR_DEAD(se, magic, "sync_event");
	if (se->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: sync event already started", func);
	return DOCA_SUCCESS;
}

/* The CPU of dev publishes or subscribes: either way the event now has a location */
static doca_error_t add_cpu_location(struct doca_sync_event *event, const struct doca_dev *dev, const char *func)
{
	doca_error_t err = dev == NULL ? DOCA_ERROR_INVALID_VALUE : configurable(event, func);
	if (err == DOCA_SUCCESS)
		event->has_location = true;
	return err;
}

doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	return add_cpu_location(event, dev, __func__);
}

doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event)
{
	doca_error_t err = configurable(event, __func__);
	if (err == DOCA_SUCCESS)
		event->has_location = event->publisher_remote_net = true;
	return err;
}

doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	return add_cpu_location(event, dev, __func__);
}

doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr)
{
	doca_error_t err = addr == NULL ? DOCA_ERROR_INVALID_VALUE : configurable(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	if ((uintptr_t)addr % sizeof(uint64_t) != 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: address not 8-byte aligned", __func__);
	event->word = addr;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_start(struct doca_sync_event *event)
{
	doca_error_t err = configurable(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	if (!event->has_location)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: no publisher or subscriber location declared", __func__);
	event->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_stop(struct doca_sync_event *event)
{
	SIM_RETURN_IF_NULL_OR_DEAD(event, magic, "sync_event");
	if (!event->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: sync event not started", __func__);
	unexport_event(event);
	event->started = false;
	return DOCA_SUCCESS;
}

/* ---------------------------------------------------------------- export for the network */
doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz)
{
	if (event == NULL || data == NULL || sz == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(event, magic, "sync_event", DOCA_ERROR_INVALID_VALUE);
	if (!event->publisher_remote_net)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: the publisher is not declared remote net "
							   "(doca_sync_event_add_publisher_location_remote_net)", __func__);
	if (!event->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: sync event not started", __func__);
	if (event->key == 0) {
		doca_error_t err = sim_rdma_register_key(event, (uintptr_t)event->word, sizeof(uint64_t),
							 SYNC_EVENT_REMOTE_ACCESS, &event->key);
		if (err != DOCA_SUCCESS)
			return err;
		event->blob = (struct sync_event_blob){ SYNC_EVENT_BLOB_MAGIC, SYNC_EVENT_BLOB_VERSION,
							sizeof(struct sync_event_blob), event->key,
							(uint64_t)(uintptr_t)event->word };
	}
	*data = (const uint8_t *)&event->blob; /* valid while the event lives, like DOCA's */
	*sz = sizeof(event->blob);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_remote_net_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
							   struct doca_sync_event_remote_net **event)
{
	struct sync_event_blob blob;
	struct doca_sync_event_remote_net *remote;

	if (dev == NULL || data == NULL || event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (sz != sizeof(blob))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: export of %zu bytes, expected %zu", __func__, sz,
				sizeof(blob));
	memcpy(&blob, data, sizeof(blob));
	if (blob.magic != SYNC_EVENT_BLOB_MAGIC || blob.version != SYNC_EVENT_BLOB_VERSION ||
	    blob.length != sizeof(blob) || blob.key == 0 || blob.addr % sizeof(uint64_t) != 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: not a sync event export of this device", __func__);
	SIM_NEW_HANDLE_OR_RETURN(remote);
	remote->dev = dev;
	remote->key = blob.key;
	remote->addr = blob.addr;
	sim_dev_ref(dev);
	*event = remote;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_remote_net_destroy(struct doca_sync_event_remote_net *event)
{
	SIM_RETURN_IF_NULL_OR_DEAD(event, magic, "sync_event_remote_net");
	sim_dev_unref(event->dev);
	sim_release(event, &event->magic);
	return DOCA_SUCCESS;
}

/* ---------------------------------------------------------------- synchronous operations */
static doca_error_t usable(struct doca_sync_event *se, const char *func)
{
	SIM_RETURN_IF_NULL_OR_DEAD(se, magic, "sync_event");
	if (!se->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: sync event not started", func);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value)
{
	doca_error_t err = value == NULL ? DOCA_ERROR_INVALID_VALUE : usable(event, __func__);
	if (err == DOCA_SUCCESS)
		*value = __atomic_load_n(event->word, __ATOMIC_ACQUIRE);
	return err;
}

doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched)
{
	doca_error_t err = fetched == NULL ? DOCA_ERROR_INVALID_VALUE : usable(event, __func__);
	if (err == DOCA_SUCCESS)
		*fetched = __atomic_fetch_add(event->word, value, __ATOMIC_ACQ_REL);
	return err;
}

doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value)
{
	doca_error_t err = usable(event, __func__);
	if (err == DOCA_SUCCESS)
		__atomic_store_n(event->word, value, __ATOMIC_RELEASE);
	return err;
}

enum wait_kind { WAIT_GT, WAIT_EQ, WAIT_NEQ };

/*
 * DOCA's waits poll. Ours poll too, but after a short spin they sleep between polls (50 µs), so a sample that waits
 * for a peer on another machine does not hold a core for seconds; the _yield forms call sched_yield as documented.
 */
static doca_error_t wait_for(struct doca_sync_event *se, enum wait_kind kind, uint64_t value, uint64_t mask,
			     bool yield, const char *func)
{
	const struct timespec pause = { 0, 50 * 1000 };
	doca_error_t err = usable(se, func);
	if (err != DOCA_SUCCESS)
		return err;
	for (unsigned polls = 0;; polls++) {
		uint64_t now = __atomic_load_n(se->word, __ATOMIC_ACQUIRE) & mask;
		if ((kind == WAIT_GT && now > value) || (kind == WAIT_EQ && now == value) ||
		    (kind == WAIT_NEQ && now != value))
			return DOCA_SUCCESS;
		if (yield)
			sched_yield();
		else if (polls >= 1000)
			nanosleep(&pause, NULL);
	}
}

#define WAIT_API(name, KIND) \
	doca_error_t doca_sync_event_wait_##name(struct doca_sync_event *event, uint64_t value, uint64_t mask) \
	{ \
		return wait_for(event, KIND, value, mask, false, __func__); \
	} \
	doca_error_t doca_sync_event_wait_##name##_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask) \
	{ \
		return wait_for(event, KIND, value, mask, true, __func__); \
	}
WAIT_API(gt, WAIT_GT)
WAIT_API(eq, WAIT_EQ)
WAIT_API(neq, WAIT_NEQ)
