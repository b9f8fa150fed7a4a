/*
 * Software DOCA device, libdoca_rdma: local buffer lists. DOCA lets send, send with immediate, write, write with
 * immediate and read take a linked list of local buffers (up to the context's max_send_buf_list_len), and a receive
 * a linked list as its destination (up to its dst_buf_list_len). Outgoing bytes are gathered from the data of each
 * element in list order; incoming bytes fill the free tail of each element in list order (as DMA memcpy does).
 * Both walk the list in place: no bounce buffer, no allocation on the I/O thread.
 */
#include "rdma_internal.h"

doca_error_t rdma_list_check_local(const struct doca_buf *head, uint32_t max, const char *kind, const char *what,
				   const char *limit_name)
{
	if (head->list_len == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: the %s is not the head of its list", kind, what);
	if (head->list_len > max)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: the %s is a list of %u buffers, more than %s (%u)", kind,
				what, head->list_len, limit_name, max);
	for (const struct doca_buf *b = head; b != NULL; b = b->next) {
		if (b->mmap == NULL || b->mmap->rdma_remote)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: every buffer of the %s must be local memory", kind,
					what);
		if (!sim_buf_data_fits(b, b->data, b->data_len))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: a buffer of the %s has data outside it", kind, what);
	}
	return DOCA_SUCCESS;
}

const uint8_t *rdma_list_next_data(const struct doca_buf **seg, size_t *off, size_t *left)
{
	while (*seg != NULL && *off >= (*seg)->data_len) {
		*seg = (*seg)->next;
		*off = 0;
	}
	if (*seg == NULL)
		return NULL;
	*left = (*seg)->data_len - *off;
	return (const uint8_t *)(*seg)->data + *off;
}

uint8_t *rdma_list_next_room(struct doca_buf **seg, size_t *off, size_t *left)
{
	while (*seg != NULL && *off >= sim_buf_tail_room(*seg)) {
		*seg = (*seg)->next;
		*off = 0;
	}
	if (*seg == NULL)
		return NULL;
	*left = sim_buf_tail_room(*seg) - *off;
	return (uint8_t *)(*seg)->data + (*seg)->data_len + *off;
}

void rdma_list_fill(struct doca_buf *head, uint64_t len)
{
	for (struct doca_buf *b = head; b != NULL && len > 0; b = b->next) {
		size_t room = sim_buf_tail_room(b), take = len < room ? (size_t)len : room;
		b->data_len += take;
		len -= take;
	}
}
