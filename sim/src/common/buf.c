/*
 * doca_buf: data placement, reference counting and buffer lists.
 */
#include <stddef.h>

#include "internal.h"
#include "accessors.h"

/* Return one element to its inventory (refcount reached 0) */
static void release_one(struct doca_buf *buf)
{
	struct doca_buf_inventory *inv = buf->inv;

	buf->mmap->live_bufs--;
	buf->mmap = NULL;
	buf->refcount = 0;
	buf->list_len = 0;
	buf->last = NULL;
	buf->held = 0;
	buf->release_deferred = false;
	buf->release_reported = false;
	buf->next = inv->free_list;
	inv->free_list = buf;
	inv->num_free++;
	sim_live_dec(SIM_KIND_BUF);
}

/* A buf that is a non-head element of a list has refcount 1 and is reachable only through its head; list_len == 0
 * marks it. */
static bool is_list_member(const struct doca_buf *buf)
{
	return buf->list_len == 0;
}

doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (is_list_member(buf))
		return DOCA_ERROR_NOT_PERMITTED;
	if (buf->refcount == UINT16_MAX)
		return DOCA_ERROR_TOO_BIG;
	if (refcount != NULL)
		*refcount = buf->refcount;
	buf->refcount++;
	return DOCA_SUCCESS;
}

/* The whole list goes back with its head */
static void release_list(struct doca_buf *buf)
{
	while (buf != NULL) {
		struct doca_buf *next = buf->next;

		release_one(buf);
		buf = next;
	}
}

void sim_buf_hold(struct doca_buf *buf)
{
	buf->held++;
}

void sim_buf_unhold(struct doca_buf *buf)
{
	if (--buf->held == 0 && buf->release_deferred) {
		buf->release_deferred = false;
		release_list(buf);
	}
}

void sim_task_release_bufs(struct doca_task *task)
{
	for (uint8_t i = 0; i < task->num_held; i++) {
		struct doca_buf *buf = task->held[i];
		/* Reported when the last task using it is done, and only if one of those tasks was not itself freed in
		 * flight: a program that released the buf and then freed each task using it (NVIDIA's secure_channel
		 * tearing down its posted receives) made one mistake per task, already counted as free-inflight-task */
		if (buf->release_deferred && task->bad_frees == 0)
			buf->release_reported = true;
		if (buf->held == 1 && buf->release_deferred && buf->release_reported)
			sim_strict_report(SIM_RULE_RELEASE_HELD_BUF, "doca_buf_dec_refcount", "buf", buf,
					  "released while a %s task in flight used it: it went back to its inventory only "
					  "after the tasks using it completed",
					  task->ops->kind);
		sim_buf_unhold(buf);
	}
	task->num_held = 0;
}

doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->refcount == 0)
		return DOCA_ERROR_BAD_STATE;
	if (is_list_member(buf))
		return DOCA_ERROR_NOT_PERMITTED;
	if (refcount != NULL)
		*refcount = buf->refcount;
	if (--buf->refcount == 0) {
		if (buf->held > 0) {
			/* back to its inventory after the tasks using it complete; strict mode reports it then */
			buf->release_deferred = true;
			return DOCA_SUCCESS;
		}
		release_list(buf);
	}
	return DOCA_SUCCESS;
}

SIM_GETTER(doca_buf_get_refcount, const struct doca_buf, buf, uint16_t, refcount, buf->refcount)

SIM_GETTER(doca_buf_get_len, const struct doca_buf, buf, size_t, len, buf->len)

SIM_GETTER(doca_buf_get_head, const struct doca_buf, buf, void *, head, buf->head)

SIM_GETTER(doca_buf_get_data_len, const struct doca_buf, buf, size_t, data_len, buf->data_len)

SIM_GETTER(doca_buf_get_data, const struct doca_buf, buf, void *, data, buf->data)

bool sim_buf_data_fits(const struct doca_buf *buf, const void *data, size_t data_len)
{
	uintptr_t head = (uintptr_t)buf->head, d = (uintptr_t)data;

	return d >= head && d - head <= buf->len && data_len <= buf->len - (d - head);
}

/* DOCA returns DOCA_SUCCESS always and leaves a data section outside the buffer undefined: so do we (the values are
 * stored; every task that would touch them refuses them at completion), and strict mode reports it */
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_buf_data_fits(buf, data, data_len))
		sim_strict_report(SIM_RULE_DATA_OUTSIDE_BUFFER, __func__, "buf", buf,
				  "data %p+%zu outside the buffer %p+%zu", data, data_len, buf->head, buf->len);
	buf->data = data;
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len)
{
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!sim_buf_data_fits(buf, buf->data, data_len))
		sim_strict_report(SIM_RULE_DATA_OUTSIDE_BUFFER, __func__, "buf", buf,
				  "data %p+%zu outside the buffer %p+%zu", buf->data, data_len, buf->head, buf->len);
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_reset_data_len(struct doca_buf *buf)
{
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	buf->data_len = 0;
	return DOCA_SUCCESS;
}

SIM_GETTER(doca_buf_get_next_in_list, struct doca_buf, buf, struct doca_buf *, next_buf, buf->next)

doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	if (buf == NULL || last_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	while (buf->next != NULL)
		buf = buf->next;
	*last_buf = buf;
	return DOCA_SUCCESS;
}

SIM_GETTER(doca_buf_is_last_in_list, const struct doca_buf, buf, uint8_t, is_last, buf->next == NULL)

SIM_GETTER(doca_buf_is_first_in_list, const struct doca_buf, buf, uint8_t, is_first, !is_list_member(buf))

SIM_GETTER(doca_buf_is_in_list, const struct doca_buf, buf, uint8_t, is_in_list,
	is_list_member(buf) || buf->next != NULL)

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	if (buf == NULL || num_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (is_list_member(buf))
		return DOCA_ERROR_NOT_PERMITTED;
	*num_elements = buf->list_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (list1 == NULL || list2 == NULL || list1 == list2 || is_list_member(list1) || is_list_member(list2))
		return DOCA_ERROR_INVALID_VALUE;
	if (list2->refcount != 1)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: list2 refcount is %u, must be 1", __func__,
				list2->refcount);
	list1->last->next = list2;
	list1->last = list2->last;
	list1->list_len += list2->list_len;
	list2->list_len = 0;
	list2->last = NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	struct doca_buf *prev = NULL;
	uint32_t before = 0;

	if (list1 == NULL || list2 == NULL || list1 == list2 || is_list_member(list1))
		return DOCA_ERROR_INVALID_VALUE;
	for (struct doca_buf *b = list1; b != NULL; b = b->next) {
		if (b == list2)
			break;
		prev = b;
		before++;
	}
	if (prev == NULL || prev->next != list2)
		return DOCA_ERROR_INVALID_VALUE;
	prev->next = NULL;
	list2->last = list1->last;
	list2->list_len = list1->list_len - before;
	list2->refcount = 1;
	list1->last = prev;
	list1->list_len = before;
	return DOCA_SUCCESS;
}
