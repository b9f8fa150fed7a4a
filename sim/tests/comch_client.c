/*
 * Comch test client (run with DOCA_SIM_SIDE=host).
 *
 *   comch_client NAME echo M      send M messages of varied sizes, check every echoed byte and the order, check
 *                                 oversized sends are refused, then stop (orderly disconnect)
 *   comch_client NAME hold        connect, then wait until the context falls back to IDLE (server gone)
 *   comch_client NAME produce N   wait for the server's consumer, stream N datagrams (imm data = sequence
 *                                 number), then one datagram too large for the consumer's buffers
 *
 * Prints RUNNING, ECHO OK n, OVERSIZE OK, PRODUCED n, IDLE, CLIENT DONE.
 */
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_comch_producer.h>
#include <doca_mmap.h>

#include "comch_test_util.h"

#define PRODUCER_BUF_SIZE 512
#define PRODUCER_TASKS 32

static struct {
	struct doca_pe *pe;
	struct doca_dev *dev;
	struct doca_comch_client *client;
	struct doca_comch_connection *conn;
	int running;
	int idle;
	int saw_starting;
	int saw_stopping;
	uint32_t max_msg;
	/* echo */
	uint32_t sent_done;
	uint32_t echoed;
	uint8_t expect[4080];
	/* fast path */
	uint32_t consumer_id;
	int consumer_seen;
	int consumer_expired;
	struct doca_comch_producer *producer;
	struct doca_pe *ppe; /* the producer runs on its own engine, as in DOCA's samples */
	uint32_t produced_done;
	int producer_idle;
} C;

static void client_state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
			    enum doca_ctx_states next)
{
	(void)user_data;
	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_STARTING)
		C.saw_starting = 1;
	if (next == DOCA_CTX_STATE_RUNNING)
		C.running = 1;
	if (next == DOCA_CTX_STATE_STOPPING)
		C.saw_stopping = 1;
	if (next == DOCA_CTX_STATE_IDLE)
		C.idle = 1;
}

static void send_done_cb(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	C.sent_done++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static uint32_t echo_len(uint32_t seq)
{
	return (seq * 37u) % C.max_msg + 1u;
}

static void msg_recv_cb(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
			struct doca_comch_connection *conn)
{
	uint32_t i;

	(void)event;
	EXPECT(conn == C.conn);
	EXPECT(doca_comch_client_get_client_ctx(conn) == C.client);
	EXPECT(doca_comch_server_get_server_ctx(conn) == NULL);
	EXPECT(len == echo_len(C.echoed));
	fill_pattern(C.expect, len, C.echoed);
	for (i = 0; i < len; i++)
		if ((uint8_t)(buf[i] ^ 0x5a) != C.expect[i]) {
			say("FAIL echo %u byte %u differs", C.echoed, i);
			exit(1);
		}
	C.echoed++;
}

static void consumer_new_cb(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	/* May arrive in the same progress call as the connection itself, before main() stored C.conn */
	EXPECT(doca_comch_client_get_client_ctx(conn) == C.client);
	C.consumer_id = id;
	C.consumer_seen = 1;
	say("REMOTE CONSUMER %u", id);
}

static void consumer_expired_cb(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn,
				uint32_t id)
{
	(void)event;
	(void)conn;
	EXPECT(id == C.consumer_id);
	C.consumer_expired = 1;
	say("REMOTE CONSUMER EXPIRED %u", id);
}

static void send_one(uint32_t seq)
{
	uint8_t msg[4080];
	struct doca_comch_task_send *task;
	uint32_t len = echo_len(seq);
	doca_error_t err;

	fill_pattern(msg, len, seq);
	/* Task pool exhausted: progress to get completions back, then retry */
	while ((err = doca_comch_client_task_send_alloc_init(C.client, C.conn, msg, len, &task)) == DOCA_ERROR_NO_MEMORY)
		(void)doca_pe_progress(C.pe);
	if (err != DOCA_SUCCESS)
		die("send alloc_init", err);
	CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
}

/*
 * One message with the caller asleep on the progress engine's notification handle: the echo must wake it (the
 * connection socket is in the handle's epoll set), with no busy polling.
 */
static void echo_while_sleeping(void)
{
	doca_notification_handle_t handle;
	struct epoll_event ev = {.events = EPOLLIN}, out;
	int ep = epoll_create1(0), n;

	EXPECT(ep >= 0);
	send_one(0);
	while (C.sent_done == 0) /* the send completion is not what we want to be woken by */
		(void)doca_pe_progress(C.pe);
	CHECK(doca_pe_get_notification_handle(C.pe, &handle));
	EXPECT(epoll_ctl(ep, EPOLL_CTL_ADD, (int)handle, &ev) == 0);
	while (C.echoed == 0) {
		CHECK(doca_pe_request_notification(C.pe));
		n = epoll_wait(ep, &out, 1, 3000);
		EXPECT(n == 1);
		CHECK(doca_pe_clear_notification(C.pe, handle));
		(void)doca_pe_progress(C.pe);
	}
	close(ep);
	say("NOTIFY OK");
}

static void run_echo(uint32_t m)
{
	struct doca_comch_task_send *task;
	uint8_t big[4096 + 8] = {0};
	uint32_t i;
	double deadline = now_s() + 30;

	echo_while_sleeping();
	for (i = 1; i < m; i++) {
		send_one(i);
		(void)doca_pe_progress(C.pe);
	}
	while (C.echoed < m) {
		(void)doca_pe_progress(C.pe);
		EXPECT(now_s() < deadline);
	}
	say("ECHO OK %u", C.echoed);

	EXPECT(C.max_msg < sizeof(big));
	EXPECT(doca_comch_client_task_send_alloc_init(C.client, C.conn, big, C.max_msg + 1, &task) ==
	       DOCA_ERROR_INVALID_VALUE);
	say("OVERSIZE OK");
}

/* ---- fast path ---- */

static void produce_done_cb(struct doca_comch_producer_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	C.produced_done++;
	(void)doca_buf_dec_refcount((struct doca_buf *)doca_comch_producer_task_send_get_buf(task), NULL);
	doca_task_free(doca_comch_producer_task_send_as_task(task));
}

static void produce_err_cb(struct doca_comch_producer_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	die("producer send task", doca_task_get_status(doca_comch_producer_task_send_as_task(task)));
}

T_IDLE_FLAG_CB(producer_state_cb, C.producer_idle)

static void produce(struct doca_mmap *mmap, struct doca_buf_inventory *inv, uint8_t *mem, uint32_t seq, uint32_t len)
{
	uint8_t *slot = mem + (seq % PRODUCER_TASKS) * PRODUCER_BUF_SIZE;
	struct doca_comch_producer_task_send *task;
	struct doca_buf *buf;
	doca_error_t err;

	/* The slot is reused only after its previous task completed (at most PRODUCER_TASKS in flight) */
	while (seq - C.produced_done >= PRODUCER_TASKS)
		(void)doca_pe_progress(C.ppe);
	fill_pattern(slot, len, seq);
	CHECK(doca_buf_inventory_buf_get_by_data(inv, mmap, slot, len, &buf));
	CHECK(doca_comch_producer_task_send_alloc_init(C.producer, buf, (uint8_t *)&seq, 4, C.consumer_id, &task));
	EXPECT(doca_comch_producer_task_send_get_consumer_id(task) == C.consumer_id);
	EXPECT(doca_comch_producer_task_send_get_imm_data_len(task) == 4);
	EXPECT(doca_comch_producer_task_send_get_buf(task) == buf);
	/* AGAIN: the consumer has no free receive buffer yet; progress both sides' engines and retry */
	while ((err = doca_task_submit(doca_comch_producer_task_send_as_task(task))) == DOCA_ERROR_AGAIN) {
		(void)doca_pe_progress(C.ppe);
		(void)doca_pe_progress(C.pe);
	}
	if (err != DOCA_SUCCESS)
		die("producer submit", err);
}

static void run_produce(uint32_t n)
{
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_ctx *ctx;
	uint8_t *mem;
	uint32_t seq;

	progress_until(C.pe, &C.consumer_seen, 30, "remote consumer");
	mem = calloc(PRODUCER_TASKS, PRODUCER_BUF_SIZE);
	EXPECT(mem != NULL);
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_add_dev(mmap, C.dev));
	CHECK(doca_mmap_set_memrange(mmap, mem, PRODUCER_TASKS * PRODUCER_BUF_SIZE));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(PRODUCER_TASKS * 2, &inv));
	CHECK(doca_buf_inventory_start(inv));

	CHECK(doca_comch_producer_create(C.conn, &C.producer));
	ctx = doca_comch_producer_as_ctx(C.producer);
	CHECK(doca_ctx_set_state_changed_cb(ctx, producer_state_cb));
	CHECK(doca_comch_producer_task_send_set_conf(C.producer, produce_done_cb, produce_err_cb, PRODUCER_TASKS));
	CHECK(doca_pe_create(&C.ppe));
	CHECK(doca_pe_connect_ctx(C.ppe, ctx));
	CHECK(doca_ctx_start(ctx));

	for (seq = 0; seq < n; seq++)
		produce(mmap, inv, mem, seq, (seq % 200u) + 1u);
	while (C.produced_done < n)
		(void)doca_pe_progress(C.ppe);
	say("PRODUCED %u", n);
	/* Larger than the consumer's 256-byte buffers: the consumer's post_recv task must fail */
	produce(mmap, inv, mem, n, 300);
	while (C.produced_done < n + 1)
		(void)doca_pe_progress(C.ppe);
	progress_until(C.pe, &C.consumer_expired, 30, "consumer expiry");

	stop_ctx(ctx);
	progress_until(C.ppe, &C.producer_idle, 5, "producer idle");
	CHECK(doca_comch_producer_destroy(C.producer));
	CHECK(doca_pe_destroy(C.ppe));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	free(mem);
}

int main(int argc, char **argv)
{
	struct doca_comch_connection *conn = NULL;
	struct doca_ctx *ctx;
	uint32_t cap = 0;
	doca_error_t err;
	union doca_data ud = {.u64 = 0xfeedf00dull};

	if (argc < 3) {
		fprintf(stderr, "usage: comch_client NAME echo M|hold|produce N\n");
		return 2;
	}
	C.dev = open_first_dev();
	CHECK(doca_comch_cap_client_is_supported(doca_dev_as_devinfo(C.dev)));
	EXPECT(doca_comch_cap_server_is_supported(doca_dev_as_devinfo(C.dev)) == DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(C.dev), &cap));
	CHECK(doca_pe_create(&C.pe));
	CHECK(doca_comch_client_create(C.dev, argv[1], &C.client));
	EXPECT(doca_comch_client_set_max_msg_size(C.client, cap + 1) == DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_comch_client_set_max_msg_size(C.client, cap));
	CHECK(doca_comch_client_get_max_msg_size(C.client, &C.max_msg));
	EXPECT(C.max_msg == cap);
	CHECK(doca_comch_client_set_recv_queue_size(C.client, 16));
	CHECK(doca_comch_client_task_send_set_conf(C.client, send_done_cb, send_err_say_free, 16));
	CHECK(doca_comch_client_event_msg_recv_register(C.client, msg_recv_cb));
	CHECK(doca_comch_client_event_consumer_register(C.client, consumer_new_cb, consumer_expired_cb));
	ctx = doca_comch_client_as_ctx(C.client);
	CHECK(doca_ctx_set_state_changed_cb(ctx, client_state_cb));
	CHECK(doca_pe_connect_ctx(C.pe, ctx));
	EXPECT(doca_comch_client_get_connection(C.client, &conn) == DOCA_ERROR_BAD_STATE);
	err = doca_ctx_start(ctx);
	if (err != DOCA_ERROR_IN_PROGRESS)
		die("client start must be IN_PROGRESS", err);
	progress_until(C.pe, &C.running, 30, "client running");
	EXPECT(C.saw_starting);
	say("RUNNING");
	/* A server that disconnects at once may already have sent the client back to IDLE in that same progress */
	if (!C.idle) {
		CHECK(doca_comch_client_get_connection(C.client, &C.conn));
		CHECK(doca_comch_connection_set_user_data(C.conn, ud));
		EXPECT(doca_comch_connection_get_user_data(C.conn).u64 == 0xfeedf00dull);
	}

	if (strcmp(argv[2], "echo") == 0) {
		uint64_t sent = 0, recv = 0;

		run_echo(argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 100u);
		CHECK(doca_comch_connection_update_info(C.conn));
		CHECK(doca_comch_connection_get_counter(C.conn, DOCA_COMCH_COUNTER_SENT_MESSAGES, &sent));
		CHECK(doca_comch_connection_get_counter(C.conn, DOCA_COMCH_COUNTER_RECV_MESSAGES, &recv));
		EXPECT(sent == C.echoed && recv == C.echoed);
	} else if (strcmp(argv[2], "produce") == 0) {
		run_produce(argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1000u);
	} else {
		/* hold: the server goes away; the client must fall back to IDLE through STOPPING */
		progress_until(C.pe, &C.idle, 30, "client idle after server loss");
		EXPECT(C.saw_stopping);
		say("IDLE");
		CHECK(doca_comch_client_destroy(C.client));
		say("CLIENT DONE");
		return 0;
	}
	err = doca_ctx_stop(ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		die("client stop", err);
	progress_until(C.pe, &C.idle, 5, "client idle");
	CHECK(doca_comch_client_destroy(C.client));
	CHECK(doca_pe_destroy(C.pe));
	CHECK(doca_dev_close(C.dev));
	say("LIVE %llu", (unsigned long long)doca_sim_live_objects());
	say("CLIENT DONE");
	return 0;
}
