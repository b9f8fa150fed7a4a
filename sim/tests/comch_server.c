/*
 * Comch test server (run with DOCA_SIM_SIDE=dpu).
 *
 *   comch_server NAME echo        answer every message with its bytes XOR 0x5a; run until killed
 *   comch_server NAME echo-once   same, exit 0 after the first client disconnects
 *   comch_server NAME kick        disconnect every client right after it connects (doca_comch_server_disconnect)
 *   comch_server NAME consume N [keep]   ("keep": the receives its stop flushes are never freed) on connect, create a consumer and check N producer datagrams (order, imm data,
 *                                 every byte), then expect one oversized datagram to fail with DOCA_ERROR_TOO_BIG
 *
 * Prints LISTENING, CONNECTED, DISCONNECTED, CONSUMED n, TOOBIG OK, SERVER DONE.
 */
#include <stdint.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_mmap.h>

#include "comch_test_util.h"

#define TEST_NAME_MAX 128
#define CONSUMER_BUFS 16
#define CONSUMER_BUF_SIZE 256

enum scenario { ECHO, ECHO_ONCE, CONSUME, KICK };

static struct {
	enum scenario scenario;
	struct doca_pe *pe;
	struct doca_dev *dev;
	struct doca_comch_server *server;
	struct doca_comch_connection *conn; /* the current client */
	int running;
	int idle;
	int connects;
	int disconnected;
	uint32_t msgs;
	/* fast path */
	uint32_t expect_n;
	uint32_t next_seq;
	int too_big_seen;
	int keep_flushed; /* "keep": leave the receives the stop flushes unfreed (strict mode reports it once) */
	int consumer_idle;
	struct doca_comch_consumer *consumer;
	struct doca_pe *cpe; /* the consumer runs on its own engine, as in DOCA's samples */
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
} S;

T_STATE_FLAGS_CB(server_state_cb, S.running, S.idle)

static void msg_recv_cb(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
			struct doca_comch_connection *conn)
{
	uint8_t reply[4080];
	struct doca_comch_task_send *task;
	uint32_t i;

	(void)event;
	EXPECT(doca_comch_server_get_server_ctx(conn) == S.server);
	EXPECT(doca_comch_client_get_client_ctx(conn) == NULL);
	EXPECT(doca_comch_connection_get_user_data(conn).u64 == (uint64_t)S.connects);
	EXPECT(len <= sizeof(reply));
	S.msgs++;
	for (i = 0; i < len; i++)
		reply[i] = buf[i] ^ 0x5a;
	CHECK(doca_comch_server_task_send_alloc_init(S.server, conn, reply, len, &task));
	/* The message was copied by alloc_init: scribbling over our copy must not change what the client gets */
	memset(reply, 0, len);
	CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
}

static void connect_cb(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn,
		       uint8_t ok)
{
	union doca_data ud = {.u64 = 0};

	(void)event;
	EXPECT(ok == 1);
	S.connects++;
	ud.u64 = (uint64_t)S.connects;
	CHECK(doca_comch_connection_set_user_data(conn, ud));
	S.conn = conn;
	say("CONNECTED %d", S.connects);
	if (S.scenario == KICK) {
		CHECK(doca_comch_server_disconnect(S.server, conn));
		S.conn = NULL;
		say("KICKED %d", S.connects);
	}
}

static void disconnect_cb(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn,
			  uint8_t ok)
{
	(void)event;
	(void)ok;
	struct doca_comch_task_send *task;
	uint8_t byte = 1;

	if (conn == S.conn)
		S.conn = NULL;
	S.disconnected++;
	say("DISCONNECTED %d", S.disconnected);
	/* The peer is gone: a send on this connection must fail through the error callback (NOT_CONNECTED) */
	CHECK(doca_comch_server_task_send_alloc_init(S.server, conn, &byte, 1, &task));
	CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
}

static void consumer_event_cb(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	(void)conn;
	say("REMOTE CONSUMER EVENT %u", id);
}

/* ---- fast path (consume scenario) ---- */

static void repost(struct doca_comch_consumer_task_post_recv *task)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	void *head;

	CHECK(doca_buf_get_data(buf, &head));
	CHECK(doca_buf_set_data(buf, head, 0));
	CHECK(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)));
}

static void recv_done_cb(struct doca_comch_consumer_task_post_recv *task, union doca_data tud, union doca_data cud)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	const uint8_t *imm = doca_comch_consumer_task_post_recv_get_imm_data(task);
	uint32_t imm_len = doca_comch_consumer_task_post_recv_get_imm_data_len(task);
	void *data;
	size_t len;
	uint32_t seq;

	(void)tud;
	(void)cud;
	CHECK(doca_buf_get_data(buf, &data));
	CHECK(doca_buf_get_data_len(buf, &len));
	EXPECT(imm_len == 4 && imm != NULL);
	memcpy(&seq, imm, 4);
	if (seq != S.next_seq) {
		say("FAIL out of order: got %u, expected %u", seq, S.next_seq);
		exit(1);
	}
	EXPECT(len == (size_t)(seq % 200u) + 1u);
	EXPECT(check_pattern(data, len, seq));
	EXPECT(doca_comch_consumer_task_post_recv_get_producer_id(task) != 0);
	S.next_seq++;
	if (S.next_seq == S.expect_n)
		say("CONSUMED %u", S.next_seq);
	repost(task);
}

static void recv_err_cb(struct doca_comch_consumer_task_post_recv *task, union doca_data tud, union doca_data cud)
{
	doca_error_t status = doca_task_get_status(doca_comch_consumer_task_post_recv_as_task(task));

	(void)tud;
	(void)cud;
	(void)doca_buf_dec_refcount(doca_comch_consumer_task_post_recv_get_buf(task), NULL);
	if (status == DOCA_ERROR_TOO_BIG && S.next_seq == S.expect_n && !S.too_big_seen) {
		S.too_big_seen = 1;
		say("TOOBIG OK");
		doca_task_free(doca_comch_consumer_task_post_recv_as_task(task));
		return;
	}
	/* Flushed by the consumer stop: expected once the stream is complete */
	if (S.too_big_seen) {
		if (!S.keep_flushed)
			doca_task_free(doca_comch_consumer_task_post_recv_as_task(task));
		return;
	}
	die("post_recv task", status);
}

static void consumer_state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
			      enum doca_ctx_states next)
{
	(void)user_data;
	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_RUNNING) {
		uint32_t i, id = 0;

		CHECK(doca_comch_consumer_get_id(S.consumer, &id));
		say("CONSUMER RUNNING %u", id);
		for (i = 0; i < CONSUMER_BUFS; i++) {
			struct doca_buf *buf;
			struct doca_comch_consumer_task_post_recv *task;

			CHECK(doca_buf_inventory_buf_get_by_addr(S.inv, S.mmap, S.mem + i * CONSUMER_BUF_SIZE,
								 CONSUMER_BUF_SIZE, &buf));
			CHECK(doca_comch_consumer_task_post_recv_alloc_init(S.consumer, buf, &task));
			CHECK(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)));
		}
	} else if (next == DOCA_CTX_STATE_IDLE) {
		S.consumer_idle = 1;
	}
}

static void start_consumer(void)
{
	struct doca_ctx *ctx;
	doca_error_t err;

	S.mem = calloc(CONSUMER_BUFS, CONSUMER_BUF_SIZE);
	EXPECT(S.mem != NULL);
	CHECK(doca_mmap_create(&S.mmap));
	CHECK(doca_mmap_add_dev(S.mmap, S.dev));
	CHECK(doca_mmap_set_memrange(S.mmap, S.mem, CONSUMER_BUFS * CONSUMER_BUF_SIZE));
	CHECK(doca_mmap_set_permissions(S.mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	CHECK(doca_mmap_start(S.mmap));
	CHECK(doca_buf_inventory_create(CONSUMER_BUFS, &S.inv));
	CHECK(doca_buf_inventory_start(S.inv));
	CHECK(doca_comch_consumer_create(S.conn, S.mmap, &S.consumer));
	ctx = doca_comch_consumer_as_ctx(S.consumer);
	CHECK(doca_ctx_set_state_changed_cb(ctx, consumer_state_cb));
	CHECK(doca_comch_consumer_task_post_recv_set_conf(S.consumer, recv_done_cb, recv_err_cb, CONSUMER_BUFS));
	CHECK(doca_comch_consumer_set_imm_data_len(S.consumer, 4));
	CHECK(doca_pe_create(&S.cpe));
	CHECK(doca_pe_connect_ctx(S.cpe, ctx));
	err = doca_ctx_start(ctx);
	if (err != DOCA_ERROR_IN_PROGRESS && err != DOCA_SUCCESS)
		die("consumer start", err);
}

int main(int argc, char **argv)
{
	struct doca_dev_rep *rep;
	struct doca_ctx *ctx;
	uint32_t cap = 0, name_max = 0;
	char long_name[TEST_NAME_MAX * 4];
	struct doca_comch_server *bad;

	if (argc < 3) {
		fprintf(stderr, "usage: comch_server NAME echo|echo-once|kick|consume N\n");
		return 2;
	}
	if (strcmp(argv[2], "echo") == 0)
		S.scenario = ECHO;
	else if (strcmp(argv[2], "echo-once") == 0)
		S.scenario = ECHO_ONCE;
	else if (strcmp(argv[2], "kick") == 0)
		S.scenario = KICK;
	else
		S.scenario = CONSUME;
	if (S.scenario == CONSUME)
		S.expect_n = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1000u;
	S.keep_flushed = S.scenario == CONSUME && argc > 4 && strcmp(argv[4], "keep") == 0;

	S.dev = open_first_dev();
	CHECK(doca_comch_cap_server_is_supported(doca_dev_as_devinfo(S.dev)));
	EXPECT(doca_comch_cap_client_is_supported(doca_dev_as_devinfo(S.dev)) == DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(S.dev), &cap));
	CHECK(doca_comch_cap_get_max_name_len(doca_dev_as_devinfo(S.dev), &name_max));
	EXPECT(cap >= 1024 && name_max >= 16 && name_max < sizeof(long_name));
	rep = open_first_rep(S.dev);
	CHECK(doca_pe_create(&S.pe));

	/* A name of exactly max_name_len characters does not leave room for the NUL */
	memset(long_name, 'n', name_max);
	long_name[name_max] = '\0';
	EXPECT(doca_comch_server_create(S.dev, rep, long_name, &bad) == DOCA_ERROR_INVALID_VALUE);

	CHECK(doca_comch_server_create(S.dev, rep, argv[1], &S.server));
	EXPECT(doca_comch_server_set_max_msg_size(S.server, cap + 1) == DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_comch_server_set_max_msg_size(S.server, cap));
	CHECK(doca_comch_server_set_recv_queue_size(S.server, 16));
	CHECK(doca_comch_server_task_send_set_conf(S.server, send_free, send_err_say_free, 512));
	CHECK(doca_comch_server_event_msg_recv_register(S.server, msg_recv_cb));
	CHECK(doca_comch_server_event_connection_status_changed_register(S.server, connect_cb, disconnect_cb));
	CHECK(doca_comch_server_event_consumer_register(S.server, consumer_event_cb, consumer_event_cb));
	ctx = doca_comch_server_as_ctx(S.server);
	CHECK(doca_ctx_set_state_changed_cb(ctx, server_state_cb));
	CHECK(doca_pe_connect_ctx(S.pe, ctx));
	CHECK(doca_ctx_start(ctx));
	progress_until(S.pe, &S.running, 5, "server running");
	say("LISTENING");

	if (S.scenario == CONSUME) {
		volatile int connected = 0;
		double deadline = now_s() + 30;

		while (!connected) {
			connected = S.conn != NULL;
			if (!connected)
				(void)doca_pe_progress(S.pe);
			EXPECT(now_s() < deadline);
		}
		start_consumer();
		progress2_until(S.pe, S.cpe, &S.too_big_seen, 60, "fast path stream");
		stop_ctx(doca_comch_consumer_as_ctx(S.consumer));
		progress2_until(S.pe, S.cpe, &S.consumer_idle, 5, "consumer idle");
		CHECK(doca_comch_consumer_destroy(S.consumer));
		CHECK(doca_pe_destroy(S.cpe));
		S.consumer = NULL;
		CHECK(doca_buf_inventory_destroy(S.inv));
		CHECK(doca_mmap_destroy(S.mmap));
		free(S.mem);
	}
	if (S.scenario == ECHO || S.scenario == KICK) {
		volatile int never = 0;

		progress_until(S.pe, &never, 1e9, "signal");
	}
	progress_until(S.pe, &S.disconnected, 60, "client disconnect");
	say("SERVER DONE %u", S.msgs);
	stop_ctx(ctx);
	progress_until(S.pe, &S.idle, 5, "server idle");
	CHECK(doca_comch_server_destroy(S.server));
	CHECK(doca_pe_destroy(S.pe));
	CHECK(doca_dev_rep_close(rep));
	CHECK(doca_dev_close(S.dev));
	say("LIVE %llu", (unsigned long long)doca_sim_live_objects());
	return 0;
}
