/*
 * doca_buf_inventory: a fixed array of doca_buf descriptors handed out from a free list.
 */
#include <stdlib.h>

#include "internal.h"
#include "accessors.h"

doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory)
{
	struct doca_buf_inventory *inv;

	if (inventory == NULL || num_elements == 0 || num_elements > UINT32_MAX)
		return DOCA_ERROR_INVALID_VALUE;
	inv = calloc(1, sizeof(*inv));
	if (inv == NULL)
		return DOCA_ERROR_NO_MEMORY;
	inv->bufs = calloc(num_elements, sizeof(*inv->bufs));
	if (inv->bufs == NULL) {
		free(inv);
		return DOCA_ERROR_NO_MEMORY;
	}
	inv->magic = SIM_MAGIC_LIVE;
	inv->num_elements = num_elements;
	inv->num_free = num_elements;
	for (size_t i = num_elements; i-- > 0;) {
		inv->bufs[i].inv = inv;
		inv->bufs[i].next = inv->free_list;
		inv->free_list = &inv->bufs[i];
	}
	*inventory = inv;
	sim_live_inc(SIM_KIND_BUF_INVENTORY);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory)
{
	SIM_RETURN_IF_NULL_OR_DEAD(inventory, magic, "buf_inventory");
	if (inventory->num_free != inventory->num_elements) {
		sim_strict_report(SIM_RULE_DESTROY_WITH_CHILDREN, __func__, "buf_inventory", inventory,
				  "%zu bufs not returned: returned DOCA_ERROR_IN_USE",
				  inventory->num_elements - inventory->num_free);
		return sim_fail(DOCA_ERROR_IN_USE, "%s: %zu bufs not returned", __func__,
				inventory->num_elements - inventory->num_free);
	}
	free(inventory->bufs);
	sim_release(inventory, &inventory->magic);
	sim_live_dec(SIM_KIND_BUF_INVENTORY);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory)
{
	SIM_RETURN_IF_NULL_OR_DEAD(inventory, magic, "buf_inventory");
	inventory->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory)
{
	SIM_RETURN_IF_NULL_OR_DEAD(inventory, magic, "buf_inventory");
	inventory->started = false;
	return DOCA_SUCCESS;
}

/* Where a buffer points: [addr, addr+len) and its data [data, data+data_len) (a taken one, a repointed one) */
static void point(struct doca_buf *buf, void *addr, size_t len, void *data, size_t data_len)
{
	buf->head = addr;
	buf->len = len;
	buf->data = data;
	buf->data_len = data_len;
}

static doca_error_t take(struct doca_buf_inventory *inv, struct doca_mmap *mmap, void *addr, size_t len, void *data,
			 size_t data_len, struct doca_buf **out)
{
	struct doca_buf *buf;

	buf = inv->free_list;
	inv->free_list = buf->next;
	inv->num_free--;
	buf->mmap = mmap;
	point(buf, addr, len, data, data_len);
	buf->claimed = 0;
	buf->refcount = 1;
	buf->next = NULL;
	buf->last = buf;
	buf->list_len = 1;
	mmap->live_bufs++;
	sim_live_inc(SIM_KIND_BUF);
	*out = buf;
	return DOCA_SUCCESS;
}

/*
 * Where a buffer may point: [addr, addr+len) inside the mmap range (INVALID_VALUE otherwise, as DOCA documents), and
 * [data, data+data_len) inside [addr, addr+len) (undefined behaviour on DOCA: stored, and reported in strict mode).
 * func names the API call in both messages; buf is the handle reported (NULL before one is taken).
 */
static doca_error_t check_buf_range(const char *func, const struct doca_mmap *mmap, const struct doca_buf *buf,
				    void *addr, size_t len, void *data, size_t data_len)
{
	uintptr_t base = (uintptr_t)mmap->base, a = (uintptr_t)addr, d = (uintptr_t)data;

	if (a < base || len > mmap->len || a - base > mmap->len - len)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: buffer %p+%zu outside the mmap range %p+%zu", func, addr,
				len, mmap->base, mmap->len);
	if (d < a || d - a > len || data_len > len - (d - a))
		sim_strict_report(SIM_RULE_DATA_OUTSIDE_BUFFER, func, "buf", buf, "data %p+%zu outside the buffer %p+%zu",
				  data, data_len, addr, len);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
						void *addr, size_t len, void *data, size_t data_len,
						struct doca_buf **buf)
{
	doca_error_t err;

	if (inventory == NULL || mmap == NULL || buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(inventory, magic, "buf_inventory", DOCA_ERROR_INVALID_VALUE);
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (!inventory->started || !mmap->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: inventory or mmap not started", __func__);
	err = check_buf_range(__func__, mmap, NULL, addr, len, data, data_len);
	if (err != DOCA_SUCCESS)
		return err;
	if (inventory->free_list == NULL)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "%s: inventory empty", __func__);
	return take(inventory, mmap, addr, len, data, data_len, buf);
}

/*
 * The head of the list a buf is in: itself unless it is a member (list_len 0). A member's head is looked up among the
 * taken bufs of the member's inventory (lists are made of one inventory's bufs in the programs that repoint members);
 * a member whose head is elsewhere answers itself, whose held count is 0.
 */
static const struct doca_buf *list_head_of(const struct doca_buf *buf)
{
	const struct doca_buf_inventory *inv = buf->inv;

	if (buf->list_len != 0 || inv == NULL)
		return buf;
	for (size_t i = 0; i < inv->num_elements; i++) {
		const struct doca_buf *head = &inv->bufs[i];

		if (head->refcount == 0 || head->list_len < 2)
			continue;
		for (const struct doca_buf *b = head->next; b != NULL; b = b->next)
			if (b == buf)
				return head;
	}
	return buf;
}

doca_error_t doca_buf_inventory_buf_reuse_by_args(struct doca_buf *buf, void *addr, size_t len, void *data,
						  size_t data_len)
{
	const struct doca_mmap *mmap;
	doca_error_t err;

	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/* a free buf (back in its inventory) is not the caller's to repoint */
	if (buf->refcount == 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: buf is free in its inventory", __func__);
	/* An element of a list (its head or a member) is repointed alone and the list stays as it is: DOCA's header
	 * leaves lists unsaid, and NVIDIA's comch_to_rdma_gga_offload repoints both elements of the chained source of
	 * its erasure-coding recover task before each submit. A submitted task still using the old range is refused
	 * (the device would move bytes of the new one): tasks hold list heads, so a member asks its list's head. */
	if (list_head_of(buf)->held > 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: a submitted task still uses the buf", __func__);
	mmap = buf->mmap;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	err = check_buf_range(__func__, mmap, buf, addr, len, data, data_len);
	if (err != DOCA_SUCCESS)
		return err;
	point(buf, addr, len, data, data_len);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf)
{
	if (inventory == NULL || src_buf == NULL || dst_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(inventory, magic, "buf_inventory", DOCA_ERROR_INVALID_VALUE);
	if (src_buf->list_len == 0)
		return DOCA_ERROR_NOT_PERMITTED;
	if (!inventory->started || !src_buf->mmap->started)
		return DOCA_ERROR_BAD_STATE;
	if (src_buf->next != NULL)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s: duplicating lists is not supported", __func__);
	if (inventory->free_list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	return take(inventory, src_buf->mmap, src_buf->head, src_buf->len, src_buf->data, src_buf->data_len, dst_buf);
}

doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data)
{
	SIM_RETURN_IF_NULL_OR_DEAD(inventory, magic, "buf_inventory");
	/* DOCA documents BAD_STATE unless the inventory is started */
	if (!inventory->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: inventory not started", __func__);
	inventory->user_data = user_data;
	return DOCA_SUCCESS;
}

SIM_LIVE_GETTER(doca_buf_inventory_get_num_elements, const struct doca_buf_inventory, inventory, "buf_inventory",
	uint32_t, num_of_elements, (uint32_t)inventory->num_elements)

SIM_LIVE_GETTER(doca_buf_inventory_get_num_free_elements, const struct doca_buf_inventory, inventory, "buf_inventory",
	uint32_t, num_of_free_elements, (uint32_t)inventory->num_free)

SIM_LIVE_GETTER(doca_buf_inventory_get_user_data, const struct doca_buf_inventory, inventory, "buf_inventory",
	union doca_data, user_data, inventory->user_data)
