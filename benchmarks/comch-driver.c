/*
 * The C side of the Comch rows of `deno task bench`: message rates host → DPU on the software device, written as a
 * careful C program would write them against the DOCA API. Two processes, the same cells given to both:
 *
 *   comch-driver serve NAME CELL...          DPU side (DOCA_SIM_SIDE=dpu): Comch server, receives and checks
 *   comch-driver client NAME SECONDS CELL... host side: connects, sends for SECONDS per cell, prints one JSON line
 *       ctrl:S:D   control path: doca_comch_client_task_send of S-byte messages, D in flight     -> msgs/s
 *       fast:S:D   fast path: producer → the server's consumer, S-byte buffers, D sends in flight -> msgs/s
 *
 * Protocol (benchmarks/comch-workload.ts speaks it too): for each cell the server sends "ready ID" on the control
 * path (ID: the consumer it created for a fast cell, else 0); the client sends messages whose first 4 bytes are a
 * sequence number (little-endian) and whose last byte is that number's low byte, then, once all completed, one
 * 1-byte end marker on the same path; the server checks order, length and bytes of each message and answers
 * "ack COUNT" (or "bad WHY"). The client's rate: messages / (ack received - ready received), so the receiver's
 * work is inside the time and only the last message's trip is not overlapped.
 *
 * Every wait has a deadline (a peer that dies or goes silent ends this process with exit 1, never a hang).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#define MAX_DEPTH 1024
/* Receive buffers the consumer keeps posted (as DOCA's fast-path samples keep a full queue) */
#define CONSUMER_BUFS 128
/* How long a peer may stay silent before this side gives up */
#define PEER_TIMEOUT_S 10.0
/* Empty progress calls before sleeping on the engine's notification handle (as doca-ts's pump does) */
#define IDLE_SPINS 32

#define DRIVER_NAME "comch driver"
#include "driver-common.h"

/*
 * One step of a loop that waits for the peer: doca_pe_progress, and after IDLE_SPINS calls in a row that did
 * nothing, a sleep of at most 1 ms on the engine's notification handle. Spinning there would starve the peer
 * process on a machine with few cores (both sides of the bench share them); doca-ts's pump sleeps the same way.
 * The client's timed send loop does not use it: with tasks in flight it spins on doca_pe_progress, as a careful
 * C program does.
 */
static void pump(struct doca_pe *pe)
{
	static int ep = -1;
	static unsigned idle;
	static doca_notification_handle_t handle;
	struct epoll_event ev = {.events = EPOLLIN}, out;

	if (doca_pe_progress(pe)) {
		idle = 0;
		return;
	}
	if (++idle < IDLE_SPINS)
		return;
	idle = 0;
	if (ep < 0) {
		ok(doca_pe_get_notification_handle(pe, &handle), "doca_pe_get_notification_handle");
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, (int)handle, &ev) != 0)
			die("epoll on the notification handle", NULL);
	}
	ok(doca_pe_request_notification(pe), "doca_pe_request_notification");
	(void)epoll_wait(ep, &out, 1, 1);
	ok(doca_pe_clear_notification(pe, handle), "doca_pe_clear_notification");
}

struct cell {
	bool fast;
	uint32_t size, depth;
};

static void parse_cells(int n, char **text, struct cell *cells)
{
	for (int i = 0; i < n; i++) {
		char op[16];

		if (sscanf(text[i], "%15[^:]:%u:%u", op, &cells[i].size, &cells[i].depth) != 3 || cells[i].size < 8 ||
		    cells[i].depth == 0 || cells[i].depth > MAX_DEPTH)
			die("bad cell (ctrl:S:D or fast:S:D, S >= 8)", text[i]);
		if (strcmp(op, "fast") == 0)
			cells[i].fast = true;
		else if (strcmp(op, "ctrl") != 0)
			die("unknown cell", text[i]);
	}
}

/* A message's content: sequence number in front, its low byte at the end (so a short or shifted copy shows). */
static void stamp(uint8_t *msg, uint32_t size, uint32_t seq)
{
	memcpy(msg, &seq, 4);
	msg[size - 1] = (uint8_t)seq;
}

/*
 * The callbacks every context and task kind of this driver needs, written once: a context's state callback keeps
 * its running/idle flags, a send kind's success frees the task, its failure ends the run (`then`: what a success does after the free, given the task's user data). One line below per context or task kind.
 */
#define STATE_CALLBACK(name, running_flag, idle_flag) \
	static void name(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev, \
			 enum doca_ctx_states next) \
	{ \
		bool *running = (running_flag); \
		(void)ud; \
		(void)ctx; \
		(void)prev; \
		if (running) \
			*running = next == DOCA_CTX_STATE_RUNNING; \
		*(idle_flag) = next == DOCA_CTX_STATE_IDLE; \
	}

#define SEND_DONE_CALLBACK(name, task_type, as_task, then) \
	static void name(struct task_type *task, union doca_data tud, union doca_data cud) \
	{ \
		(void)cud; \
		doca_task_free(as_task(task)); \
		then(tud); \
	}

#define SEND_ERROR_CALLBACK(name, task_type, as_task, what) \
	static void name(struct task_type *task, union doca_data tud, union doca_data cud) \
	{ \
		(void)tud; \
		(void)cud; \
		die(what, doca_error_get_name(doca_task_get_status(as_task(task)))); \
	}

/* ------------------------------------------------------------------ server (DPU side) */

static struct {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_comch_server *server;
	struct doca_comch_connection *conn;
	bool running, idle, disconnected;
	/* the running cell */
	struct cell cell;
	uint64_t count;
	uint32_t expect;
	const char *bad;
	bool marker;
	double last_activity;
	/* fast path */
	struct doca_comch_consumer *consumer;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	bool consumer_running, consumer_idle;
} S;

STATE_CALLBACK(server_state, &S.running, &S.idle)
STATE_CALLBACK(consumer_state, &S.consumer_running, &S.consumer_idle)
SEND_DONE_CALLBACK(server_send_done, doca_comch_task_send, doca_comch_task_send_as_task, (void))
SEND_ERROR_CALLBACK(server_send_error, doca_comch_task_send, doca_comch_task_send_as_task, "server send")

/* One message of the running cell, from either path: check it, count it, or note the end marker. */
static void server_take(const uint8_t *msg, size_t len)
{
	uint32_t seq;

	S.last_activity = now();
	if (len == 1) {
		S.marker = true;
		return;
	}
	if (S.bad)
		return;
	memcpy(&seq, msg, 4);
	if (len != S.cell.size)
		S.bad = "wrong length";
	else if (seq != S.expect)
		S.bad = "out of order";
	else if (msg[len - 1] != (uint8_t)seq)
		S.bad = "wrong bytes";
	S.expect++;
	S.count++;
}

static void server_send(const char *text)
{
	struct doca_comch_task_send *task;

	ok(doca_comch_server_task_send_alloc_init(S.server, S.conn, text, (uint32_t)strlen(text), &task),
	   "doca_comch_server_task_send_alloc_init");
	ok(doca_task_submit(doca_comch_task_send_as_task(task)), "doca_task_submit");
}

static void server_msg(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
		       struct doca_comch_connection *conn)
{
	(void)event;
	(void)conn;
	server_take(buf, len);
}

static void server_connect(struct doca_comch_event_connection_status_changed *event,
			   struct doca_comch_connection *conn, uint8_t success)
{
	(void)event;
	if (success && !S.conn)
		S.conn = conn;
}

static void server_disconnect(struct doca_comch_event_connection_status_changed *event,
			      struct doca_comch_connection *conn, uint8_t success)
{
	(void)event;
	(void)success;
	if (conn == S.conn)
		S.disconnected = true;
}

static void repost(struct doca_comch_consumer_task_post_recv *task)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	void *head;

	ok(doca_buf_get_head(buf, &head), "doca_buf_get_head");
	ok(doca_buf_set_data(buf, head, 0), "doca_buf_set_data");
	ok(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)), "doca_task_submit (post_recv)");
}

static void recv_done(struct doca_comch_consumer_task_post_recv *task, union doca_data tud, union doca_data cud)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	void *data;
	size_t len;

	(void)tud;
	(void)cud;
	ok(doca_buf_get_data(buf, &data), "doca_buf_get_data");
	ok(doca_buf_get_data_len(buf, &len), "doca_buf_get_data_len");
	server_take(data, len);
	repost(task); /* the consumer keeps every buffer posted */
}

static void recv_error(struct doca_comch_consumer_task_post_recv *task, union doca_data tud, union doca_data cud)
{
	doca_error_t status = doca_task_get_status(doca_comch_consumer_task_post_recv_as_task(task));

	(void)tud;
	(void)cud;
	(void)doca_buf_dec_refcount(doca_comch_consumer_task_post_recv_get_buf(task), NULL);
	doca_task_free(doca_comch_consumer_task_post_recv_as_task(task));
	if (!S.consumer_running || S.marker) /* flushed by our own stop */
		return;
	die("post_recv", doca_error_get_name(status));
}

/* Progress until *flag, or die when the peer stayed silent PEER_TIMEOUT_S (also when it disconnected). */
static void server_wait(volatile bool *flag, const char *what)
{
	S.last_activity = now();
	while (!*flag) {
		pump(S.pe);
		/* after the last cell the client may leave while our consumer stops (it then stops on its own) */
		if (S.disconnected && flag != &S.disconnected && flag != &S.consumer_idle)
			die("the client disconnected while waiting for", what);
		if (now() - S.last_activity > PEER_TIMEOUT_S)
			die("timed out waiting for", what);
	}
}

static uint32_t start_consumer(uint32_t size)
{
	struct doca_ctx *ctx;
	uint32_t id = 0;

	S.mem = calloc(CONSUMER_BUFS, size);
	if (!S.mem)
		die("out of memory", NULL);
	ok(doca_mmap_create(&S.mmap), "doca_mmap_create");
	ok(doca_mmap_add_dev(S.mmap, S.dev), "doca_mmap_add_dev");
	ok(doca_mmap_set_memrange(S.mmap, S.mem, (size_t)CONSUMER_BUFS * size), "doca_mmap_set_memrange");
	ok(doca_mmap_set_permissions(S.mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE), "doca_mmap_set_permissions");
	ok(doca_mmap_start(S.mmap), "doca_mmap_start");
	ok(doca_buf_inventory_create(CONSUMER_BUFS, &S.inv), "doca_buf_inventory_create");
	ok(doca_buf_inventory_start(S.inv), "doca_buf_inventory_start");
	ok(doca_comch_consumer_create(S.conn, S.mmap, &S.consumer), "doca_comch_consumer_create");
	ctx = doca_comch_consumer_as_ctx(S.consumer);
	ok(doca_ctx_set_state_changed_cb(ctx, consumer_state), "doca_ctx_set_state_changed_cb");
	ok(doca_comch_consumer_task_post_recv_set_conf(S.consumer, recv_done, recv_error, CONSUMER_BUFS),
	   "doca_comch_consumer_task_post_recv_set_conf");
	ok(doca_pe_connect_ctx(S.pe, ctx), "doca_pe_connect_ctx");
	ok_or_pending(doca_ctx_start(ctx), "doca_ctx_start (consumer)");
	server_wait(&S.consumer_running, "the consumer to run");
	for (uint32_t i = 0; i < CONSUMER_BUFS; i++) {
		struct doca_buf *buf;
		struct doca_comch_consumer_task_post_recv *task;

		ok(doca_buf_inventory_buf_get_by_addr(S.inv, S.mmap, S.mem + (size_t)i * size, size, &buf),
		   "doca_buf_inventory_buf_get_by_addr");
		ok(doca_comch_consumer_task_post_recv_alloc_init(S.consumer, buf, &task),
		   "doca_comch_consumer_task_post_recv_alloc_init");
		ok(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)), "doca_task_submit (post_recv)");
	}
	ok(doca_comch_consumer_get_id(S.consumer, &id), "doca_comch_consumer_get_id");
	return id;
}

static void stop_consumer(void)
{
	ok_or_pending(doca_ctx_stop(doca_comch_consumer_as_ctx(S.consumer)), "doca_ctx_stop (consumer)");
	server_wait(&S.consumer_idle, "the consumer to stop");
	ok(doca_comch_consumer_destroy(S.consumer), "doca_comch_consumer_destroy");
	ok(doca_buf_inventory_destroy(S.inv), "doca_buf_inventory_destroy");
	ok(doca_mmap_destroy(S.mmap), "doca_mmap_destroy");
	free(S.mem);
	S.consumer = NULL;
}

static int serve_main(const char *name, int ncells, struct cell *cells)
{
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep;
	struct doca_ctx *ctx;
	uint32_t nreps = 0, max_msg = 0;
	double deadline;
	char text[64];

	S.dev = open_first_dev();
	ok(doca_devinfo_rep_create_list(S.dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &nreps), "doca_devinfo_rep_create_list");
	if (nreps == 0)
		die("no representor (run with DOCA_SIM_SIDE=dpu)", NULL);
	ok(doca_dev_rep_open(reps[0], &rep), "doca_dev_rep_open");
	ok(doca_devinfo_rep_destroy_list(reps), "doca_devinfo_rep_destroy_list");
	ok(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(S.dev), &max_msg), "doca_comch_cap_get_max_msg_size");
	ok(doca_pe_create(&S.pe), "doca_pe_create");
	ok(doca_comch_server_create(S.dev, rep, name, &S.server), "doca_comch_server_create");
	ok(doca_comch_server_set_max_msg_size(S.server, max_msg), "doca_comch_server_set_max_msg_size");
	ok(doca_comch_server_task_send_set_conf(S.server, server_send_done, server_send_error, 16),
	   "doca_comch_server_task_send_set_conf");
	ok(doca_comch_server_event_msg_recv_register(S.server, server_msg), "doca_comch_server_event_msg_recv_register");
	ok(doca_comch_server_event_connection_status_changed_register(S.server, server_connect, server_disconnect),
	   "doca_comch_server_event_connection_status_changed_register");
	ctx = doca_comch_server_as_ctx(S.server);
	ok(doca_ctx_set_state_changed_cb(ctx, server_state), "doca_ctx_set_state_changed_cb");
	ok(doca_pe_connect_ctx(S.pe, ctx), "doca_pe_connect_ctx");
	ok(doca_ctx_start(ctx), "doca_ctx_start (server)");
	server_wait(&S.running, "the server to run");
	printf("listening\n");
	fflush(stdout);
	for (deadline = now() + 30; !S.conn; pump(S.pe))
		if (now() > deadline)
			die("no client connected within 30 s", NULL);

	for (int i = 0; i < ncells; i++) {
		uint32_t id = 0;

		S.cell = cells[i];
		S.count = S.expect = 0;
		S.bad = NULL;
		S.marker = false;
		if (cells[i].fast)
			id = start_consumer(cells[i].size);
		snprintf(text, sizeof(text), "ready %u", id);
		server_send(text);
		server_wait(&S.marker, "the client's messages");
		if (S.bad)
			snprintf(text, sizeof(text), "bad %s", S.bad);
		else
			snprintf(text, sizeof(text), "ack %llu", (unsigned long long)S.count);
		server_send(text);
		if (cells[i].fast)
			stop_consumer();
	}
	server_wait(&S.disconnected, "the client to disconnect");
	ok(doca_ctx_stop(ctx), "doca_ctx_stop (server)");
	server_wait(&S.idle, "the server to stop");
	ok(doca_comch_server_destroy(S.server), "doca_comch_server_destroy");
	ok(doca_pe_destroy(S.pe), "doca_pe_destroy");
	ok(doca_dev_rep_close(rep), "doca_dev_rep_close");
	ok(doca_dev_close(S.dev), "doca_dev_close");
	return 0;
}

/* ------------------------------------------------------------------ client (host side) */

static struct {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_comch_client *client;
	struct doca_comch_connection *conn;
	bool running, idle;
	/* the server's control messages not yet taken ("ack" of one cell and "ready" of the next can arrive together) */
	char replies[8][64];
	unsigned replies_in, replies_out;
	/* the running cell */
	uint32_t free_slots[MAX_DEPTH + 1], nfree;
	uint64_t completed;
	struct doca_comch_producer *producer;
	bool producer_idle;
} C;

static void client_msg(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
		       struct doca_comch_connection *conn)
{
	(void)event;
	(void)conn;
	char *slot = C.replies[C.replies_in % 8];

	if (len >= sizeof(C.replies[0]) || C.replies_in - C.replies_out == 8)
		die("unexpected message from the server", NULL);
	memcpy(slot, buf, len);
	slot[len] = '\0';
	C.replies_in++;
}

/* The client's send completions (both paths): the task's slot is free again */
static void slot_free(union doca_data tud)
{
	C.free_slots[C.nfree++] = (uint32_t)tud.u64;
	C.completed++;
}

STATE_CALLBACK(client_state, &C.running, &C.idle)
STATE_CALLBACK(producer_state, NULL, &C.producer_idle)
SEND_DONE_CALLBACK(send_done, doca_comch_task_send, doca_comch_task_send_as_task, slot_free)
SEND_ERROR_CALLBACK(send_error, doca_comch_task_send, doca_comch_task_send_as_task, "control-path send")
SEND_DONE_CALLBACK(produce_done, doca_comch_producer_task_send, doca_comch_producer_task_send_as_task, slot_free)
SEND_ERROR_CALLBACK(produce_error, doca_comch_producer_task_send, doca_comch_producer_task_send_as_task, "producer send")

/* Progress until *flag (or a server message when flag is NULL); die after PEER_TIMEOUT_S or when the server left. */
static void client_wait(volatile bool *flag, const char *what)
{
	double deadline = now() + PEER_TIMEOUT_S;

	while (flag ? !*flag : C.replies_in == C.replies_out) {
		pump(C.pe);
		if (C.idle && flag != &C.idle)
			die("the server went away while waiting for", what);
		if (now() > deadline)
			die("timed out waiting for", what);
	}
}

/* Waits for the server's next control message and returns it (valid until the next wait). */
static const char *server_says(const char *what)
{
	static char taken[sizeof(C.replies[0])];

	client_wait(NULL, what);
	memcpy(taken, C.replies[C.replies_out++ % 8], sizeof(taken));
	return taken;
}

/* The fast path's sending side: D registered buffers of S bytes, one producer task per buffer at a time. */
struct producer_bufs {
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	struct doca_buf *bufs[MAX_DEPTH + 1]; /* the last one holds the 1-byte end marker */
};

static void producer_open(struct producer_bufs *p, const struct cell *cell)
{
	struct doca_ctx *ctx;

	p->mem = calloc(cell->depth + 1, cell->size);
	if (!p->mem)
		die("out of memory", NULL);
	ok(doca_mmap_create(&p->mmap), "doca_mmap_create");
	ok(doca_mmap_add_dev(p->mmap, C.dev), "doca_mmap_add_dev");
	ok(doca_mmap_set_memrange(p->mmap, p->mem, (size_t)(cell->depth + 1) * cell->size), "doca_mmap_set_memrange");
	ok(doca_mmap_set_permissions(p->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), "doca_mmap_set_permissions");
	ok(doca_mmap_start(p->mmap), "doca_mmap_start");
	ok(doca_buf_inventory_create(cell->depth + 1, &p->inv), "doca_buf_inventory_create");
	ok(doca_buf_inventory_start(p->inv), "doca_buf_inventory_start");
	for (uint32_t i = 0; i <= cell->depth; i++)
		ok(doca_buf_inventory_buf_get_by_data(p->inv, p->mmap, p->mem + (size_t)i * cell->size,
						      i < cell->depth ? cell->size : 1, &p->bufs[i]),
		   "doca_buf_inventory_buf_get_by_data");
	ok(doca_comch_producer_create(C.conn, &C.producer), "doca_comch_producer_create");
	ctx = doca_comch_producer_as_ctx(C.producer);
	ok(doca_ctx_set_state_changed_cb(ctx, producer_state), "doca_ctx_set_state_changed_cb");
	ok(doca_comch_producer_task_send_set_conf(C.producer, produce_done, produce_error, cell->depth + 1),
	   "doca_comch_producer_task_send_set_conf");
	ok(doca_pe_connect_ctx(C.pe, ctx), "doca_pe_connect_ctx");
	ok(doca_ctx_start(ctx), "doca_ctx_start (producer)");
	C.producer_idle = false;
}

static void producer_close(struct producer_bufs *p, uint32_t depth)
{
	ok_or_pending(doca_ctx_stop(doca_comch_producer_as_ctx(C.producer)), "doca_ctx_stop (producer)");
	client_wait(&C.producer_idle, "the producer to stop");
	ok(doca_comch_producer_destroy(C.producer), "doca_comch_producer_destroy");
	for (uint32_t i = 0; i <= depth; i++)
		ok(doca_buf_dec_refcount(p->bufs[i], NULL), "doca_buf_dec_refcount");
	ok(doca_buf_inventory_destroy(p->inv), "doca_buf_inventory_destroy");
	ok(doca_mmap_destroy(p->mmap), "doca_mmap_destroy");
	free(p->mem);
}

/*
 * Submits message `seq` from slot `slot` (or the end marker when seq is UINT32_MAX). Returns false when the fast
 * path said AGAIN (the consumer's queue is full): the caller progresses and tries the same message again.
 */
static bool submit(const struct cell *cell, struct producer_bufs *p, uint8_t *ctrl_msg, uint32_t slot,
		   uint32_t consumer_id, uint32_t seq)
{
	union doca_data ud = {.u64 = slot};
	struct doca_task *task;
	doca_error_t rc;
	bool marker = seq == UINT32_MAX;

	if (cell->fast) {
		struct doca_comch_producer_task_send *t;

		if (!marker)
			stamp(p->mem + (size_t)slot * cell->size, cell->size, seq);
		ok(doca_comch_producer_task_send_alloc_init(C.producer, p->bufs[slot], NULL, 0, consumer_id, &t),
		   "doca_comch_producer_task_send_alloc_init");
		task = doca_comch_producer_task_send_as_task(t);
	} else {
		struct doca_comch_task_send *t;

		if (!marker)
			stamp(ctrl_msg, cell->size, seq);
		/* the message is copied into the task: one staging array serves every send */
		ok(doca_comch_client_task_send_alloc_init(C.client, C.conn, ctrl_msg, marker ? 1 : cell->size, &t),
		   "doca_comch_client_task_send_alloc_init");
		task = doca_comch_task_send_as_task(t);
	}
	doca_task_set_user_data(task, ud);
	rc = doca_task_submit(task);
	if (rc == DOCA_ERROR_AGAIN) {
		doca_task_free(task);
		return false;
	}
	ok(rc, "doca_task_submit");
	return true;
}

static void client_cell(const struct cell *cell, const char *text, double seconds)
{
	struct producer_bufs p = {0};
	uint8_t *ctrl_msg = calloc(1, cell->size);
	unsigned long long acked = 0;
	uint32_t consumer_id = 0, seq = 0;
	uint64_t submitted = 0, seen = 0;
	double start, end, last;
	const char *reply;

	if (!ctrl_msg)
		die("out of memory", NULL);
	reply = server_says("the server to be ready");
	if (sscanf(reply, "ready %u", &consumer_id) != 1)
		die("unexpected message from the server", reply);
	if (cell->fast)
		producer_open(&p, cell);
	C.nfree = 0;
	for (uint32_t s = cell->depth; s-- > 0;)
		C.free_slots[C.nfree++] = s;
	C.completed = 0;
	start = now();
	end = start + seconds;
	last = start;
	for (unsigned spin = 0;; spin++) {
		while (C.nfree > 0) {
			if (!submit(cell, &p, ctrl_msg, C.free_slots[C.nfree - 1], consumer_id, seq))
				break;
			C.nfree--;
			seq++;
			submitted++;
		}
		(void)doca_pe_progress(C.pe);
		if ((spin & 63) == 0) {
			double t = now();

			if (t >= end)
				break;
			if (C.completed != seen)
				seen = C.completed, last = t;
			if (t - last > PEER_TIMEOUT_S)
				die("the server stopped taking messages", text);
		}
	}
	/* drain, then the end marker on the same path */
	for (double deadline = now() + PEER_TIMEOUT_S; C.completed < submitted; (void)doca_pe_progress(C.pe))
		if (now() > deadline || C.idle)
			die("sends did not complete", text);
	for (double deadline = now() + PEER_TIMEOUT_S; !submit(cell, &p, ctrl_msg, cell->depth, consumer_id, UINT32_MAX);
	     (void)doca_pe_progress(C.pe))
		if (now() > deadline)
			die("the end marker was not taken", text);
	reply = server_says("the server's count");
	end = now();
	if (sscanf(reply, "ack %llu", &acked) != 1)
		die("the server refused the messages", reply);
	if (acked != submitted)
		die("the server counted other than we sent", text);
	for (double deadline = now() + PEER_TIMEOUT_S; C.completed < submitted + 1; pump(C.pe))
		if (now() > deadline)
			die("the end marker did not complete", text);
	if (cell->fast)
		producer_close(&p, cell->depth);
	free(ctrl_msg);
	printf("{\"op\":\"%s\",\"size\":%u,\"depth\":%u,\"value\":%.6g,\"unit\":\"msgs/s\"}\n",
	       cell->fast ? "fast" : "ctrl", cell->size, cell->depth, (double)submitted / (end - start));
	fflush(stdout);
}

static int client_main(const char *name, double seconds, int ncells, struct cell *cells, char **texts)
{
	struct doca_ctx *ctx;
	uint32_t max_msg = 0;

	C.dev = open_first_dev();
	ok(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(C.dev), &max_msg), "doca_comch_cap_get_max_msg_size");
	for (int i = 0; i < ncells; i++)
		if (!cells[i].fast && cells[i].size > max_msg)
			die("a control-path message is larger than the device's max message size", texts[i]);
	ok(doca_pe_create(&C.pe), "doca_pe_create");
	ok(doca_comch_client_create(C.dev, name, &C.client), "doca_comch_client_create");
	ok(doca_comch_client_set_max_msg_size(C.client, max_msg), "doca_comch_client_set_max_msg_size");
	/* one task per message in flight, plus the end marker */
	ok(doca_comch_client_task_send_set_conf(C.client, send_done, send_error, MAX_DEPTH + 1),
	   "doca_comch_client_task_send_set_conf");
	ok(doca_comch_client_event_msg_recv_register(C.client, client_msg), "doca_comch_client_event_msg_recv_register");
	ctx = doca_comch_client_as_ctx(C.client);
	ok(doca_ctx_set_state_changed_cb(ctx, client_state), "doca_ctx_set_state_changed_cb");
	ok(doca_pe_connect_ctx(C.pe, ctx), "doca_pe_connect_ctx");
	ok_or_pending(doca_ctx_start(ctx), "doca_ctx_start (client)");
	client_wait(&C.running, "the connection");
	ok(doca_comch_client_get_connection(C.client, &C.conn), "doca_comch_client_get_connection");
	for (int i = 0; i < ncells; i++)
		client_cell(&cells[i], texts[i], seconds);
	ok_or_pending(doca_ctx_stop(ctx), "doca_ctx_stop (client)");
	client_wait(&C.idle, "the client to stop");
	ok(doca_comch_client_destroy(C.client), "doca_comch_client_destroy");
	ok(doca_pe_destroy(C.pe), "doca_pe_destroy");
	ok(doca_dev_close(C.dev), "doca_dev_close");
	return 0;
}

int main(int argc, char **argv)
{
	static struct cell cells[64];

	if (argc >= 4 && strcmp(argv[1], "serve") == 0 && argc - 3 <= 64) {
		parse_cells(argc - 3, argv + 3, cells);
		return serve_main(argv[2], argc - 3, cells);
	}
	if (argc >= 5 && strcmp(argv[1], "client") == 0 && argc - 4 <= 64) {
		parse_cells(argc - 4, argv + 4, cells);
		return client_main(argv[2], strtod(argv[3], NULL), argc - 4, cells, argv + 4);
	}
	fprintf(stderr, "usage: comch-driver serve NAME CELL... | comch-driver client NAME SECONDS CELL...\n"
			"  CELL = ctrl:SIZE:DEPTH | fast:SIZE:DEPTH\n");
	return 2;
}
