/*
 * Software DOCA device, libdoca_rdma: the task kinds (send, send with immediate, receive, write, write with immediate,
 * read, atomic compare-and-swap and fetch-and-add, and get / set / add on a peer's sync event): configuration, allocation, getters, and turning a submitted task
 * into a request frame on its connection (rdma_task_issue; the I/O thread completes it when the response arrives).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rdma_internal.h"
#include "accessors.h"

static const char *const kind_names[RDMA_KIND_COUNT_] = {
	"rdma_send", "rdma_send_imm", "rdma_receive", "rdma_write", "rdma_write_imm", "rdma_read",
	"rdma_atomic_cmp_swp", "rdma_atomic_fetch_add", "rdma_remote_net_sync_event_get",
	"rdma_remote_net_sync_event_notify_set", "rdma_remote_net_sync_event_notify_add",
};

static void task_free(struct doca_task *task)
{
	sim_task_fini(task);
	free(task);
}

static size_t task_bufs(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS])
{
	const struct rdma_task *t = (const struct rdma_task *)task;
	size_t n = 0;

	if (t->src != NULL)
		out[n++] = t->src;
	if (t->dst != NULL)
		out[n++] = t->dst;
	if (t->result != NULL)
		out[n++] = t->result;
	return n;
}

static struct sim_task_ops task_ops[RDMA_KIND_COUNT_];

void rdma_task_ops_init(void)
{
	for (int k = 0; k < RDMA_KIND_COUNT_; k++)
		task_ops[k] = (struct sim_task_ops){ .kind = kind_names[k], .free = task_free, .bufs = task_bufs };
}

static doca_error_t set_conf(struct doca_rdma *rdma, enum rdma_task_kind kind, sim_task_cb_t ok, sim_task_cb_t err,
			     uint32_t num_tasks)
{
	if (rdma == NULL || ok == NULL || err == NULL || num_tasks == 0)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(rdma, magic, "rdma", DOCA_ERROR_INVALID_VALUE);
	if (!sim_ctx_is_idle(&rdma->ctx))
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s_set_conf: rdma context is not idle", kind_names[kind]);
	rdma->conf[kind] = (struct rdma_kind_conf){ ok, err, num_tasks, true };
	return DOCA_SUCCESS;
}

static doca_error_t alloc_task(struct doca_rdma *rdma, enum rdma_task_kind kind, struct doca_rdma_connection *conn,
			       union doca_data user_data, struct rdma_task **out)
{
	struct rdma_task *t;
	if (rdma == NULL || out == NULL || (kind != RDMA_RECEIVE && conn == NULL))
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(rdma, magic, "rdma", DOCA_ERROR_INVALID_VALUE);
	if (!rdma->conf[kind].set)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s_allocate_init: task kind not configured (set_conf)",
				kind_names[kind]);
	if (rdma->ctx.state != DOCA_CTX_STATE_RUNNING)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s_allocate_init: rdma context is not running", kind_names[kind]);
	SIM_RETURN_IF_DEAD(conn, magic, "rdma connection", DOCA_ERROR_INVALID_VALUE);
	if (conn != NULL && conn->rdma != rdma)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s_allocate_init: connection of another context",
				kind_names[kind]);
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sim_task_init(&t->base, &task_ops[kind], &rdma->ctx, rdma->conf[kind].success_cb, rdma->conf[kind].error_cb,
		      user_data);
	t->kind = kind;
	t->conn = conn;
	*out = t;
	return DOCA_SUCCESS;
}

#define KIND_API(name, KIND) \
	doca_error_t doca_rdma_task_##name##_set_conf(struct doca_rdma *rdma, \
						      doca_rdma_task_##name##_completion_cb_t ok, \
						      doca_rdma_task_##name##_completion_cb_t err, uint32_t num_tasks) \
	{ \
		return set_conf(rdma, KIND, sim_task_cb_cast(ok), sim_task_cb_cast(err), num_tasks); \
	} \
	SIM_VALUE_GETTER(struct doca_task *, doca_rdma_task_##name##_as_task, struct doca_rdma_task_##name, task, \
		NULL, &((struct rdma_task *)(void *)task)->base)
KIND_API(send, RDMA_SEND)
KIND_API(send_imm, RDMA_SEND_IMM)
KIND_API(receive, RDMA_RECEIVE)
KIND_API(write, RDMA_WRITE)
KIND_API(write_imm, RDMA_WRITE_IMM)
KIND_API(read, RDMA_READ)
KIND_API(atomic_cmp_swp, RDMA_CAS)
KIND_API(atomic_fetch_add, RDMA_FADD)
KIND_API(remote_net_sync_event_get, RDMA_SE_GET)
KIND_API(remote_net_sync_event_notify_set, RDMA_SE_SET)
KIND_API(remote_net_sync_event_notify_add, RDMA_SE_ADD)

doca_error_t doca_rdma_task_send_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *conn,
					       const struct doca_buf *src_buf, union doca_data user_data,
					       struct doca_rdma_task_send **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_task(rdma, RDMA_SEND, conn, user_data, &t); /* src_buf NULL: an empty message */
	if (err != DOCA_SUCCESS)
		return err;
	t->src = (struct doca_buf *)src_buf;
	*task = (struct doca_rdma_task_send *)(void *)t;
	return DOCA_SUCCESS;
}

SIM_VALUE_GETTER(const struct doca_buf *, doca_rdma_task_send_get_src_buf, const struct doca_rdma_task_send, task, NULL,
	((const struct rdma_task *)(const void *)task)->src)

doca_error_t doca_rdma_task_send_imm_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *conn,
						   const struct doca_buf *src_buf, doca_be32_t immediate_data,
						   union doca_data user_data, struct doca_rdma_task_send_imm **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_task(rdma, RDMA_SEND_IMM, conn, user_data, &t); /* src_buf NULL: an empty message */
	if (err != DOCA_SUCCESS)
		return err;
	t->src = (struct doca_buf *)src_buf;
	t->imm = immediate_data;
	*task = (struct doca_rdma_task_send_imm *)(void *)t;
	return DOCA_SUCCESS;
}

doca_error_t doca_rdma_task_receive_allocate_init(struct doca_rdma *rdma, struct doca_buf *dst_buf,
						  union doca_data user_data, struct doca_rdma_task_receive **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_task(rdma, RDMA_RECEIVE, NULL, user_data, &t);
	if (err != DOCA_SUCCESS)
		return err;
	t->dst = dst_buf; /* may be NULL: a receive for immediate data only */
	*task = (struct doca_rdma_task_receive *)(void *)t;
	return DOCA_SUCCESS;
}

#define RECV(task) ((const struct rdma_task *)(const void *)(task))
SIM_VALUE_GETTER(struct doca_buf *, doca_rdma_task_receive_get_dst_buf, const struct doca_rdma_task_receive, task, NULL,
	RECV(task)->dst)
SIM_VALUE_GETTER(enum doca_rdma_opcode, doca_rdma_task_receive_get_result_opcode, const struct doca_rdma_task_receive,
	task, DOCA_RDMA_OPCODE_RECV_SEND, RECV(task)->opcode)
SIM_VALUE_GETTER(uint32_t, doca_rdma_task_receive_get_result_len, const struct doca_rdma_task_receive, task, 0,
	RECV(task)->result_len)
SIM_VALUE_GETTER(doca_be32_t, doca_rdma_task_receive_get_result_immediate_data, const struct doca_rdma_task_receive,
	task, 0, RECV(task)->result_imm)
SIM_VALUE_GETTER(const struct doca_rdma_connection *, doca_rdma_task_receive_get_result_rdma_connection,
	const struct doca_rdma_task_receive, task, NULL, RECV(task)->result_conn)

static doca_error_t alloc_two_buf(struct doca_rdma *rdma, enum rdma_task_kind kind, struct doca_rdma_connection *conn,
				  const struct doca_buf *src, struct doca_buf *dst, union doca_data user_data,
				  struct rdma_task **t)
{
	doca_error_t err;
	if (src == NULL || dst == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = alloc_task(rdma, kind, conn, user_data, t);
	if (err == DOCA_SUCCESS) {
		(*t)->src = (struct doca_buf *)src;
		(*t)->dst = dst;
	}
	return err;
}

/* Write and read: the same allocation (a source and a destination) and destination getter under each kind's names */
#define TWO_BUF_API(name, KIND) \
	doca_error_t doca_rdma_task_##name##_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *conn, \
							   const struct doca_buf *src_buf, struct doca_buf *dst_buf, \
							   union doca_data user_data, \
							   struct doca_rdma_task_##name **task) \
	{ \
		struct rdma_task *t; \
		doca_error_t err = alloc_two_buf(rdma, KIND, conn, src_buf, dst_buf, user_data, &t); \
		if (err == DOCA_SUCCESS) \
			*task = (struct doca_rdma_task_##name *)(void *)t; \
		return err; \
	} \
	SIM_VALUE_GETTER(struct doca_buf *, doca_rdma_task_##name##_get_dst_buf, const struct doca_rdma_task_##name, \
			 task, NULL, RECV(task)->dst)

TWO_BUF_API(write, RDMA_WRITE)
TWO_BUF_API(read, RDMA_READ)

doca_error_t doca_rdma_task_write_imm_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *conn,
						    const struct doca_buf *src_buf, struct doca_buf *dst_buf,
						    doca_be32_t immediate_data, union doca_data user_data,
						    struct doca_rdma_task_write_imm **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_two_buf(rdma, RDMA_WRITE_IMM, conn, src_buf, dst_buf, user_data, &t);
	if (err == DOCA_SUCCESS) {
		t->imm = immediate_data;
		*task = (struct doca_rdma_task_write_imm *)(void *)t;
	}
	return err;
}

/* An atomic on the peer's 8 bytes at dst (both a destination and a result buffer are required); a and b are the
 * operands (compare and swap values; the addend and 0) */
static doca_error_t alloc_atomic(struct doca_rdma *rdma, enum rdma_task_kind kind, struct doca_rdma_connection *conn,
				 struct doca_buf *dst, struct doca_buf *result, uint64_t a, uint64_t b,
				 union doca_data user_data, struct rdma_task **t)
{
	doca_error_t err = alloc_two_buf(rdma, kind, conn, dst, result, user_data, t);
	if (err == DOCA_SUCCESS) {
		(*t)->dst = dst;
		(*t)->result = result;
		(*t)->src = NULL;
		(*t)->a = a;
		(*t)->b = b;
	}
	return err;
}

doca_error_t doca_rdma_task_atomic_cmp_swp_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *conn,
							 struct doca_buf *dst_buf, struct doca_buf *result_buf,
							 uint64_t cmp_data, uint64_t swap_data, union doca_data user_data,
							 struct doca_rdma_task_atomic_cmp_swp **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_atomic(rdma, RDMA_CAS, conn, dst_buf, result_buf, cmp_data, swap_data, user_data, &t);
	if (err == DOCA_SUCCESS)
		*task = (struct doca_rdma_task_atomic_cmp_swp *)(void *)t;
	return err;
}

doca_error_t doca_rdma_task_atomic_fetch_add_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *conn,
							   struct doca_buf *dst_buf, struct doca_buf *result_buf,
							   uint64_t add_data, union doca_data user_data,
							   struct doca_rdma_task_atomic_fetch_add **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_atomic(rdma, RDMA_FADD, conn, dst_buf, result_buf, add_data, 0, user_data, &t);
	if (err == DOCA_SUCCESS)
		*task = (struct doca_rdma_task_atomic_fetch_add *)(void *)t;
	return err;
}

/* ---------------------------------------------------------------- a peer's sync event */
static doca_error_t alloc_sync_event(struct doca_rdma *rdma, enum rdma_task_kind kind, struct doca_rdma_connection *conn,
				     const struct doca_sync_event_remote_net *event, struct doca_buf *buf,
				     union doca_data user_data, struct rdma_task **t)
{
	doca_error_t err;
	if (event == NULL || buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(event, magic, "sync_event_remote_net", DOCA_ERROR_INVALID_VALUE);
	err = alloc_task(rdma, kind, conn, user_data, t);
	if (err == DOCA_SUCCESS)
		(*t)->sync_event = (struct doca_sync_event_remote_net *)event;
	return err;
}

doca_error_t doca_rdma_task_remote_net_sync_event_get_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *conn, const struct doca_sync_event_remote_net *event,
	struct doca_buf *dst_buf, union doca_data user_data, struct doca_rdma_task_remote_net_sync_event_get **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_sync_event(rdma, RDMA_SE_GET, conn, event, dst_buf, user_data, &t);
	if (err == DOCA_SUCCESS) {
		t->dst = t->result = dst_buf;
		*task = (struct doca_rdma_task_remote_net_sync_event_get *)(void *)t;
	}
	return err;
}
SIM_VALUE_GETTER(struct doca_buf *, doca_rdma_task_remote_net_sync_event_get_get_dst_buf,
	const struct doca_rdma_task_remote_net_sync_event_get, task, NULL, RECV(task)->dst)
SIM_VALUE_GETTER(uint32_t, doca_rdma_task_remote_net_sync_event_get_get_result_len,
	const struct doca_rdma_task_remote_net_sync_event_get, task, 0, RECV(task)->result_len)
SIM_VALUE_GETTER(const struct doca_sync_event_remote_net *, doca_rdma_task_remote_net_sync_event_get_get_sync_event,
	const struct doca_rdma_task_remote_net_sync_event_get, task, NULL, RECV(task)->sync_event)

void doca_rdma_task_remote_net_sync_event_get_set_sync_event(struct doca_rdma_task_remote_net_sync_event_get *task,
							     const struct doca_sync_event_remote_net *event)
{
	if (task != NULL && event != NULL)
		((struct rdma_task *)(void *)task)->sync_event = (struct doca_sync_event_remote_net *)event;
}

doca_error_t doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *conn, struct doca_sync_event_remote_net *event,
	const struct doca_buf *src_buf, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_notify_set **task)
{
	struct rdma_task *t;
	doca_error_t err =
		alloc_sync_event(rdma, RDMA_SE_SET, conn, event, (struct doca_buf *)src_buf, user_data, &t);
	if (err == DOCA_SUCCESS) {
		t->src = (struct doca_buf *)src_buf;
		*task = (struct doca_rdma_task_remote_net_sync_event_notify_set *)(void *)t;
	}
	return err;
}
SIM_VALUE_GETTER(const struct doca_buf *, doca_rdma_task_remote_net_sync_event_notify_set_get_src_buf,
	const struct doca_rdma_task_remote_net_sync_event_notify_set, task, NULL, RECV(task)->src)
SIM_VALUE_GETTER(struct doca_sync_event_remote_net *, doca_rdma_task_remote_net_sync_event_notify_set_get_sync_event,
	const struct doca_rdma_task_remote_net_sync_event_notify_set, task, NULL, RECV(task)->sync_event)

void doca_rdma_task_remote_net_sync_event_notify_set_set_sync_event(
	struct doca_rdma_task_remote_net_sync_event_notify_set *task, struct doca_sync_event_remote_net *event)
{
	if (task != NULL && event != NULL)
		((struct rdma_task *)(void *)task)->sync_event = event;
}

doca_error_t doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *conn, struct doca_sync_event_remote_net *event,
	struct doca_buf *result_buf, uint64_t add_data, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_notify_add **task)
{
	struct rdma_task *t;
	doca_error_t err = alloc_sync_event(rdma, RDMA_SE_ADD, conn, event, result_buf, user_data, &t);
	if (err == DOCA_SUCCESS) {
		t->result = result_buf;
		t->a = add_data;
		*task = (struct doca_rdma_task_remote_net_sync_event_notify_add *)(void *)t;
	}
	return err;
}
SIM_VALUE_GETTER(struct doca_buf *, doca_rdma_task_remote_net_sync_event_notify_add_get_result_buf,
	const struct doca_rdma_task_remote_net_sync_event_notify_add, task, NULL, RECV(task)->result)
SIM_VALUE_GETTER(uint64_t, doca_rdma_task_remote_net_sync_event_notify_add_get_add_data,
	const struct doca_rdma_task_remote_net_sync_event_notify_add, task, 0, RECV(task)->a)

/* ---------------------------------------------------------------- submit: the request frame */
static bool remote(const struct doca_buf *b)
{
	return b != NULL && b->mmap != NULL && b->mmap->rdma_remote;
}

/* The local source of a send or write: a list of at most max_send_buf_list_len buffers (NULL: an empty send) */
static doca_error_t check_source(struct doca_rdma *rdma, struct rdma_task *t)
{
	doca_error_t err;
	t->len = 0;
	if (t->src == NULL)
		return DOCA_SUCCESS;
	err = rdma_list_check_local(t->src, rdma->max_send_buf_list_len, kind_names[t->kind], "source",
				    "max_send_buf_list_len");
	if (err != DOCA_SUCCESS)
		return err;
	t->len = sim_bufs_data_len(t->src);
	if (t->len > UINT32_MAX)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: %llu bytes exceed the max message size", kind_names[t->kind],
				(unsigned long long)t->len);
	return DOCA_SUCCESS;
}

/* A remote buffer (the peer's memory, imported): one buffer, not a list */
static bool remote_single(const struct doca_buf *b)
{
	return remote(b) && b->list_len == 1;
}

doca_error_t rdma_task_issue(struct doca_rdma *rdma, struct rdma_task *t)
{
	struct doca_rdma_connection *c = t->conn;
	struct rdma_frame f;
	const void *payload = NULL;
	uint64_t claim = 0;
	doca_error_t err;

	SIM_RETURN_IF_DEAD(c, magic, "rdma connection", DOCA_ERROR_INVALID_VALUE);
	if (c == NULL || c->state != CONN_CONNECTED || c->socks[0].fd < 0)
		return sim_fail(DOCA_ERROR_NOT_CONNECTED, "%s: connection is not connected", kind_names[t->kind]);
	switch (t->kind) {
	case RDMA_SEND:
	case RDMA_SEND_IMM:
		err = check_source(rdma, t);
		if (err != DOCA_SUCCESS)
			return err;
		rdma_frame_init(&f, t->kind == RDMA_SEND ? OP_SEND : OP_SEND_IMM);
		f.len = (uint32_t)t->len;
		payload = t->src == NULL ? NULL : t->src->data;
		break;
	case RDMA_WRITE:
	case RDMA_WRITE_IMM:
		if (t->src == NULL || !remote_single(t->dst))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: needs a local source and one remote destination "
								  "buffer", kind_names[t->kind]);
		err = check_source(rdma, t);
		if (err != DOCA_SUCCESS)
			return err;
		/* the room other writes in flight to the same buffer claimed is gone: the one that does not fit fails,
		 * as the second of two DMA copies into one buffer does (the data length grows only at the ACK) */
		if (sim_buf_tail_room(t->dst) < t->dst->claimed + t->len)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: the remote destination has no room for %llu bytes "
								  "(%zu of its free bytes are taken by tasks in flight)",
					kind_names[t->kind], (unsigned long long)t->len, t->dst->claimed);
		rdma_frame_init(&f, t->kind == RDMA_WRITE ? OP_WRITE : OP_WRITE_IMM);
		f.len = (uint32_t)t->len;
		f.key = t->dst->mmap->rdma_key;
		f.addr = (uint64_t)(uintptr_t)t->dst->data + t->dst->data_len + t->dst->claimed;
		payload = t->src->data;
		claim = t->len;
		break;
	case RDMA_READ:
		if (!remote_single(t->src) || t->dst == NULL || t->src->data_len > UINT32_MAX)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: needs one remote source buffer and a local "
								  "destination", kind_names[t->kind]);
		err = rdma_list_check_local(t->dst, rdma->max_send_buf_list_len, kind_names[t->kind], "destination",
					    "max_send_buf_list_len");
		if (err != DOCA_SUCCESS)
			return err;
		/* reads in flight into the same destination claimed part of its room (responses land in order) */
		if (sim_bufs_tail_room(t->dst) < t->dst->claimed + t->src->data_len)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: the local destination has no room for %zu bytes "
								  "(%zu of its free bytes are taken by tasks in flight)",
					kind_names[t->kind], t->src->data_len, t->dst->claimed);
		rdma_frame_init(&f, OP_READ_REQ);
		f.key = t->src->mmap->rdma_key;
		f.addr = (uint64_t)(uintptr_t)t->src->data;
		f.a = t->src->data_len;
		claim = t->src->data_len;
		break;
	case RDMA_CAS:
	case RDMA_FADD:
		if (!remote(t->dst) || remote(t->result) || sim_buf_tail_room(t->result) < sizeof(uint64_t) ||
		    t->dst->len - ((uintptr_t)t->dst->data - (uintptr_t)t->dst->head) < sizeof(uint64_t))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: needs a remote 8-byte destination and a local "
								  "result buffer with 8 bytes of room", kind_names[t->kind]);
		rdma_frame_init(&f, t->kind == RDMA_CAS ? OP_CAS : OP_FADD);
		f.key = t->dst->mmap->rdma_key;
		f.addr = (uint64_t)(uintptr_t)t->dst->data;
		f.a = t->a;
		f.b = t->b;
		break;
	case RDMA_SE_GET:
	case RDMA_SE_ADD:
		if (remote(t->result) || sim_buf_tail_room(t->result) < sizeof(uint64_t))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: needs a local buffer with 8 bytes of room",
					kind_names[t->kind]);
		rdma_frame_init(&f, t->kind == RDMA_SE_GET ? OP_SE_GET : OP_FADD);
		f.key = t->sync_event->key;
		f.addr = t->sync_event->addr;
		f.a = t->a;
		break;
	case RDMA_SE_SET:
		if (remote(t->src) || t->src->data_len < sizeof(uint64_t))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: needs a local source holding 8 bytes",
					kind_names[t->kind]);
		rdma_frame_init(&f, OP_SE_SET);
		f.key = t->sync_event->key;
		f.addr = t->sync_event->addr;
		memcpy(&f.a, t->src->data, sizeof(f.a));
		break;
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* nothing fails from here on: the claim is given back in rdma_finish_task */
	t->claimed = claim;
	t->local_status = DOCA_SUCCESS;
	if (claim > 0)
		t->dst->claimed += claim;
	f.imm = t->imm;
	f.id = t->id = rdma->next_request_id++;
	t->wait_next = c->awaiting;
	c->awaiting = t;
	if (t->src != NULL && t->src->list_len > 1 && (t->kind == RDMA_SEND || t->kind == RDMA_SEND_IMM ||
						       t->kind == RDMA_WRITE || t->kind == RDMA_WRITE_IMM))
		rdma_queue_frame_list(rdma, &c->socks[0], &f, t->src);
	else
		rdma_queue_frame(rdma, &c->socks[0], &f, payload, 0);
	return DOCA_SUCCESS;
}
