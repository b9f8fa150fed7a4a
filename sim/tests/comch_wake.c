/*
 * Event-driven waiting on Comch (run by tests/sim-comch.test.ts): programs that sleep on the progress engine's
 * notification handle are woken by what they wait for, and only by that.
 *
 *   comch_wake idle-client            a client with no server sleeps 1 s: woken by the 20 ms retry timer only
 *                                     (at most 100 wake-ups, not a busy loop); prints "PASS idle-client N"
 *   comch_wake hs-client              the same while a server that accepted the connection is stopped (SIGSTOP)
 *                                     before it answers the hello; once it runs again the client gets RUNNING
 *   comch_wake full-socket            a server sends 256 messages of 4000 bytes to a client that reads nothing for
 *                                     2 s: asleep meanwhile (at most 10 wake-ups in 0.5 s, not a busy loop), then
 *                                     woken as the client reads, every send completes
 *   comch_wake stop | srvstop | kill  a DPU server's consumer runs on its own pe and thread (as in NVIDIA's
 *                                     secure_channel), receives posted, asleep with a 20 s poll; the host client
 *                                     (a forked process with a live producer) stops its client context ("stop"), or
 *                                     the server stops its own context ("srvstop"), or the client is killed
 *                                     ("kill"): the consumer must be woken (never the 20 s timeout) and its receives
 *                                     fail with DOCA_ERROR_NOT_CONNECTED; prints "PASS MODE"
 * Needs DOCA_SIM_DIR (a fresh folder).
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_mmap.h>

#include "comch_test_util.h"

#define NAME "wake"
#define SLEEP_MS 20000

static const char *mode;
static int go[2]; /* server -> client: "L" listening, "G" do it */

/* The documented waiting pattern: progress until nothing moves, and unless `done` (may be NULL) became true, arm,
 * progress once more, sleep, clear. Returns false when the sleep ran out (nothing woke it). */
static bool sleep_once(struct doca_pe *pe, int timeout_ms, atomic_int *done)
{
	doca_notification_handle_t h;
	bool woken = true;

	CHECK(doca_pe_get_notification_handle(pe, &h));
	while (doca_pe_progress(pe))
		;
	if (done != NULL && atomic_load(done))
		return true;
	CHECK(doca_pe_request_notification(pe));
	if (doca_pe_progress(pe) == 0) {
		struct pollfd p = {.fd = (int)h, .events = POLLIN};
		woken = poll(&p, 1, timeout_ms) > 0;
	}
	CHECK(doca_pe_clear_notification(pe, h));
	return woken;
}

/* ---------------------------------------------------------------- what the modes share */
/* A forked peer dies with this process: a mode that fails (EXPECT exits) leaves nothing running */
static pid_t fork_peer(void)
{
	pid_t pid = fork();

	EXPECT(pid >= 0);
	if (pid == 0)
		EXPECT(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
	return pid;
}

static void free_send(struct doca_comch_task_send *t, union doca_data a, union doca_data b)
{
	(void)a, (void)b;
	doca_task_free(doca_comch_task_send_as_task(t));
}
static void no_msg(struct doca_comch_event_msg_recv *e, uint8_t *b, uint32_t l, struct doca_comch_connection *c)
{
	(void)e, (void)b, (void)l, (void)c;
}
static void no_consumer(struct doca_comch_event_consumer *e, struct doca_comch_connection *c, uint32_t id)
{
	(void)e, (void)c, (void)id;
}
static void no_disconnect(struct doca_comch_event_connection_status_changed *e, struct doca_comch_connection *conn,
			  uint8_t ok)
{
	(void)e, (void)conn, (void)ok;
}

/* Sets the flag the context's user data points at once the context is RUNNING */
static void flag_running(const union doca_data u, struct doca_ctx *c, enum doca_ctx_states p, enum doca_ctx_states n)
{
	(void)c, (void)p;
	if (n == DOCA_CTX_STATE_RUNNING)
		*(volatile int *)u.ptr = 1;
}

static void watch_running(struct doca_ctx *ctx, volatile int *running)
{
	CHECK(doca_ctx_set_user_data(ctx, (union doca_data){.ptr = (void *)running}));
	CHECK(doca_ctx_set_state_changed_cb(ctx, flag_running));
}

/* The connection the server accepted */
static struct doca_comch_connection *server_conn;

static void on_connect(struct doca_comch_event_connection_status_changed *e, struct doca_comch_connection *conn,
		       uint8_t ok)
{
	(void)e, (void)ok;
	server_conn = conn;
}

/* The DPU side's server, running on a pe of its own (*pe), with `tasks` send tasks completing through `sent`
 * (and a maximum message size when `max_msg` is not 0); "L" to the client once it listens */
static struct doca_comch_server *start_server(struct doca_pe **pe, doca_comch_task_send_completion_cb_t sent,
					      uint32_t tasks, uint32_t max_msg)
{
	static volatile int running;
	struct doca_dev *dev = open_first_dev();
	struct doca_comch_server *sv;

	CHECK(doca_pe_create(pe));
	CHECK(doca_comch_server_create(dev, open_first_rep(dev), NAME, &sv));
	if (max_msg != 0)
		CHECK(doca_comch_server_set_max_msg_size(sv, max_msg));
	CHECK(doca_comch_server_task_send_set_conf(sv, sent, sent, tasks));
	CHECK(doca_comch_server_event_msg_recv_register(sv, no_msg));
	CHECK(doca_comch_server_event_connection_status_changed_register(sv, on_connect, no_disconnect));
	CHECK(doca_comch_server_event_consumer_register(sv, no_consumer, no_consumer));
	watch_running(doca_comch_server_as_ctx(sv), &running);
	CHECK(doca_pe_connect_ctx(*pe, doca_comch_server_as_ctx(sv)));
	CHECK(doca_ctx_start(doca_comch_server_as_ctx(sv)));
	progress_until(*pe, &running, 5, "server running");
	EXPECT(write(go[1], "L", 1) == 1);
	return sv;
}

/* A host-side client of `name` on a pe of its own (*pe); `running` is set once connected; `on_consumer` (or NULL)
 * hears of the server's new consumers */
static struct doca_comch_client *start_client(struct doca_pe **pe, const char *name, volatile int *running,
					      doca_comch_event_msg_recv_cb_t on_msg,
					      doca_comch_event_consumer_cb_t on_consumer)
{
	struct doca_comch_client *cl;

	CHECK(doca_pe_create(pe));
	CHECK(doca_comch_client_create(open_first_dev(), name, &cl));
	watch_running(doca_comch_client_as_ctx(cl), running);
	CHECK(doca_comch_client_task_send_set_conf(cl, free_send, free_send, 16));
	CHECK(doca_comch_client_event_msg_recv_register(cl, on_msg));
	if (on_consumer != NULL)
		CHECK(doca_comch_client_event_consumer_register(cl, on_consumer, no_consumer));
	CHECK(doca_pe_connect_ctx(*pe, doca_comch_client_as_ctx(cl)));
	(void)doca_ctx_start(doca_comch_client_as_ctx(cl));
	return cl;
}

/* ---------------------------------------------------------------- a client with no server, or a stalled one */
static void stalled_server(void)
{
	struct doca_pe *pe;

	(void)start_server(&pe, free_send, 4, 0);
	for (;;) /* serves (once it is let run again) until killed */
		(void)sleep_once(pe, 1000, NULL);
}

static int idle_client(bool stalled)
{
	static volatile int idle_running;
	struct doca_pe *pe;
	long wakes = 0;
	pid_t server = -1;
	char c;

	if (stalled) {
		EXPECT(pipe(go) == 0);
		server = fork_peer();
		if (server == 0) {
			setenv("DOCA_SIM_SIDE", "dpu", 1);
			stalled_server();
		}
		EXPECT(read(go[0], &c, 1) == 1 && c == 'L');
		kill(server, SIGSTOP); /* it will accept (the kernel does) but not answer */
	}
	setenv("DOCA_SIM_SIDE", "host", 1);
	(void)start_client(&pe, stalled ? NAME : "nobody-serves-this", &idle_running, no_msg, NULL);
	for (double end = now_s() + 1; now_s() < end;)
		if (sleep_once(pe, 1000, NULL))
			wakes++;
	/* the retry timer ticks every 20 ms: about 50; a busy loop is hundreds of thousands */
	EXPECT(wakes <= 100);
	EXPECT(!idle_running);
	if (stalled) {
		int status;
		kill(server, SIGCONT);
		for (double deadline = now_s() + 20; !idle_running; (void)sleep_once(pe, 1000, NULL))
			EXPECT(now_s() < deadline);
		kill(server, SIGKILL);
		waitpid(server, &status, 0);
	}
	say("PASS %s %ld", stalled ? "hs-client" : "idle-client", wakes);
	return 0;
}

/* ---------------------------------------------------------------- sends into a full socket */
#define FULL_SENDS 256
#define FULL_SIZE 4000
static atomic_int full_done, full_failed, full_all_sent; /* the server's */
static atomic_int full_got;                                /* the client's */
static int back[2];                                        /* client -> server: "C" connected */

static void full_sent(struct doca_comch_task_send *t, union doca_data a, union doca_data b)
{
	(void)a, (void)b;
	if (doca_task_get_status(doca_comch_task_send_as_task(t)) != DOCA_SUCCESS)
		atomic_fetch_add(&full_failed, 1);
	doca_task_free(doca_comch_task_send_as_task(t));
	if (atomic_fetch_add(&full_done, 1) + 1 == FULL_SENDS)
		atomic_store(&full_all_sent, 1);
}

static void full_msg(struct doca_comch_event_msg_recv *e, uint8_t *b, uint32_t l, struct doca_comch_connection *c)
{
	(void)e, (void)b, (void)c;
	EXPECT(l == FULL_SIZE);
	atomic_fetch_add(&full_got, 1);
}

/* The client: connects, says so, reads nothing for 2 s, then reads every message */
static void full_client(void)
{
	static volatile int running;
	struct doca_pe *pe;

	(void)start_client(&pe, NAME, &running, full_msg, NULL);
	progress_until(pe, &running, 10, "client running");
	EXPECT(write(back[1], "C", 1) == 1);
	sleep(2);
	for (double deadline = now_s() + 30; atomic_load(&full_got) < FULL_SENDS; (void)sleep_once(pe, 1000, NULL))
		EXPECT(now_s() < deadline);
	for (;;) /* connected until the server kills us */
		(void)sleep_once(pe, 1000, NULL);
}

static int full_socket(void)
{
	struct doca_pe *pe;
	struct doca_comch_server *sv;
	static uint8_t msg[FULL_SIZE];
	long wakes = 0;
	pid_t client;
	int status;
	char c;

	EXPECT(pipe(go) == 0 && pipe(back) == 0);
	client = fork_peer();
	if (client == 0) {
		setenv("DOCA_SIM_SIDE", "host", 1);
		EXPECT(read(go[0], &c, 1) == 1 && c == 'L');
		full_client();
	}
	sv = start_server(&pe, full_sent, FULL_SENDS, FULL_SIZE);
	/* serve the handshake until the client says it is connected and about to stop reading */
	for (struct pollfd p = {.fd = back[0], .events = POLLIN}; poll(&p, 1, 0) == 0;)
		(void)sleep_once(pe, 20, NULL);
	EXPECT(read(back[0], &c, 1) == 1 && c == 'C');
	for (double deadline = now_s() + 10; server_conn == NULL; doca_pe_progress(pe))
		EXPECT(now_s() < deadline);
	for (int i = 0; i < FULL_SENDS; i++) {
		struct doca_comch_task_send *t;
		CHECK(doca_comch_server_task_send_alloc_init(sv, server_conn, msg, sizeof(msg), &t));
		CHECK(doca_task_submit(doca_comch_task_send_as_task(t)));
	}
	for (double end = now_s() + 0.5; now_s() < end;)
		if (sleep_once(pe, 500, &full_all_sent))
			wakes++;
	EXPECT(atomic_load(&full_done) < FULL_SENDS); /* the socket did fill: the case is real */
	EXPECT(wakes <= 10);
	while (atomic_load(&full_done) < FULL_SENDS)
		EXPECT(sleep_once(pe, SLEEP_MS, &full_all_sent)); /* woken as the client reads, never by the timeout */
	EXPECT(atomic_load(&full_failed) == 0);
	kill(client, SIGKILL);
	waitpid(client, &status, 0);
	say("PASS full-socket %ld", wakes);
	return 0;
}

/* ---------------------------------------------------------------- server (this process, DPU side) */
static struct {
	struct doca_pe *pe, *cpe;
	struct doca_comch_server *server;
	struct doca_comch_consumer *consumer;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t mem[4 * 256];
	volatile int consumer_running;
	atomic_int received, failed, timed_out, status;
} S;

static void recv_ok(struct doca_comch_consumer_task_post_recv *t, union doca_data a, union doca_data b)
{
	(void)a, (void)b;
	CHECK(doca_buf_reset_data_len(doca_comch_consumer_task_post_recv_get_buf(t)));
	atomic_fetch_add(&S.received, 1);
	CHECK(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(t)));
}
static void recv_err(struct doca_comch_consumer_task_post_recv *t, union doca_data a, union doca_data b)
{
	struct doca_task *task = doca_comch_consumer_task_post_recv_as_task(t);

	(void)a, (void)b;
	if (atomic_fetch_add(&S.failed, 1) == 0)
		atomic_store(&S.status, (int)doca_task_get_status(task));
	(void)doca_buf_dec_refcount(doca_comch_consumer_task_post_recv_get_buf(t), NULL);
	doca_task_free(task);
}

/* The consumer's own thread: asleep on its own pe until its receives fail */
static void *consumer_thread(void *arg)
{
	(void)arg;
	while (atomic_load(&S.failed) == 0)
		if (!sleep_once(S.cpe, SLEEP_MS, &S.failed)) {
			atomic_store(&S.timed_out, 1);
			break;
		}
	return NULL;
}

static void server(pid_t client)
{
	struct doca_dev *dev = open_first_dev();
	struct doca_ctx *ctx, *cctx;
	pthread_t thread;
	int status;

	S.server = start_server(&S.pe, free_send, 16, 0);
	ctx = doca_comch_server_as_ctx(S.server);
	for (double deadline = now_s() + 20; server_conn == NULL; doca_pe_progress(S.pe))
		EXPECT(now_s() < deadline);

	CHECK(doca_mmap_create(&S.mmap));
	CHECK(doca_mmap_add_dev(S.mmap, dev));
	CHECK(doca_mmap_set_memrange(S.mmap, S.mem, sizeof(S.mem)));
	CHECK(doca_mmap_set_permissions(S.mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	CHECK(doca_mmap_start(S.mmap));
	CHECK(doca_buf_inventory_create(8, &S.inv));
	CHECK(doca_buf_inventory_start(S.inv));
	CHECK(doca_comch_consumer_create(server_conn, S.mmap, &S.consumer));
	cctx = doca_comch_consumer_as_ctx(S.consumer);
	watch_running(cctx, &S.consumer_running);
	CHECK(doca_comch_consumer_task_post_recv_set_conf(S.consumer, recv_ok, recv_err, 4));
	CHECK(doca_pe_create(&S.cpe));
	CHECK(doca_pe_connect_ctx(S.cpe, cctx));
	(void)doca_ctx_start(cctx);
	progress2_until(S.pe, S.cpe, &S.consumer_running, 5, "consumer running");
	for (int i = 0; i < 4; i++) {
		struct doca_buf *b;
		struct doca_comch_consumer_task_post_recv *t;
		CHECK(doca_buf_inventory_buf_get_by_addr(S.inv, S.mmap, S.mem + 256 * i, 256, &b));
		CHECK(doca_comch_consumer_task_post_recv_alloc_init(S.consumer, b, &t));
		CHECK(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(t)));
	}
	pthread_create(&thread, NULL, consumer_thread, NULL);
	/* The server's own pe on this thread; once the client's datagram arrived (its producer now holds the
	 * consumer's socket), the connection ends */
	for (double deadline = now_s() + 20; atomic_load(&S.received) == 0; doca_pe_progress(S.pe))
		EXPECT(now_s() < deadline);
	if (strcmp(mode, "srvstop") == 0) {
		doca_error_t err = doca_ctx_stop(ctx);
		EXPECT(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS);
	} else {
		EXPECT(write(go[1], "G", 1) == 1);
	}
	for (double deadline = now_s() + 30; atomic_load(&S.failed) == 0 && !atomic_load(&S.timed_out);) {
		doca_pe_progress(S.pe);
		EXPECT(now_s() < deadline);
		usleep(1000);
	}
	pthread_join(thread, NULL);
	kill(client, SIGKILL);
	waitpid(client, &status, 0);
	EXPECT(!atomic_load(&S.timed_out)); /* a missed wake-up: nothing woke the consumer's sleep */
	EXPECT(atomic_load(&S.status) == DOCA_ERROR_NOT_CONNECTED);
	say("PASS %s", mode);
}

/* ---------------------------------------------------------------- client (forked process, host side) */
static volatile int c_running, c_consumer_seen, c_produced;
static uint32_t c_consumer_id;
static void consumer_new(struct doca_comch_event_consumer *e, struct doca_comch_connection *c, uint32_t id)
{
	(void)e, (void)c;
	c_consumer_id = id;
	c_consumer_seen = 1;
}
static void produced(struct doca_comch_producer_task_send *t, union doca_data a, union doca_data b)
{
	(void)a, (void)b;
	c_produced++;
	doca_task_free(doca_comch_producer_task_send_as_task(t));
}

static int client(void)
{
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_comch_client *cl;
	struct doca_comch_connection *conn;
	struct doca_comch_producer *producer;
	struct doca_mmap *mm;
	struct doca_buf_inventory *inv;
	struct doca_buf *b;
	struct doca_comch_producer_task_send *t;
	static uint8_t mem[256];
	char c;

	setenv("DOCA_SIM_SIDE", "host", 1);
	EXPECT(read(go[0], &c, 1) == 1 && c == 'L');
	dev = open_first_dev();
	cl = start_client(&pe, NAME, &c_running, no_msg, consumer_new);
	progress_until(pe, &c_running, 10, "client running");
	CHECK(doca_comch_client_get_connection(cl, &conn));
	progress_until(pe, &c_consumer_seen, 10, "consumer seen");
	CHECK(doca_mmap_create(&mm));
	CHECK(doca_mmap_add_dev(mm, dev));
	CHECK(doca_mmap_set_memrange(mm, mem, sizeof(mem)));
	CHECK(doca_mmap_set_permissions(mm, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_start(mm));
	CHECK(doca_buf_inventory_create(4, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_comch_producer_create(conn, &producer));
	CHECK(doca_comch_producer_task_send_set_conf(producer, produced, produced, 4));
	CHECK(doca_pe_connect_ctx(pe, doca_comch_producer_as_ctx(producer)));
	CHECK(doca_ctx_start(doca_comch_producer_as_ctx(producer)));
	CHECK(doca_buf_inventory_buf_get_by_data(inv, mm, mem, 16, &b));
	CHECK(doca_comch_producer_task_send_alloc_init(producer, b, NULL, 0, c_consumer_id, &t));
	CHECK(doca_task_submit(doca_comch_producer_task_send_as_task(t)));
	progress_until(pe, &c_produced, 10, "produced");
	for (struct pollfd p = {.fd = go[0], .events = POLLIN}; poll(&p, 1, 1) == 0;)
		doca_pe_progress(pe); /* serve the connection until told */
	if (read(go[0], &c, 1) != 1)
		return 0; /* the server is done (srvstop) */
	if (strcmp(mode, "kill") == 0)
		kill(getpid(), SIGKILL);
	(void)doca_ctx_stop(doca_comch_client_as_ctx(cl)); /* "stop": the producer stays alive */
	for (double end = now_s() + 30;; usleep(1000)) /* alive, progressing, until the server kills us */
		if (doca_pe_progress(pe), now_s() > end)
			break;
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid;

	mode = argc > 1 ? argv[1] : "";
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(mode, "idle-client") == 0 || strcmp(mode, "hs-client") == 0)
		return idle_client(strcmp(mode, "hs-client") == 0);
	if (strcmp(mode, "full-socket") == 0) {
		setenv("DOCA_SIM_SIDE", "dpu", 1);
		return full_socket();
	}
	if (strcmp(mode, "stop") != 0 && strcmp(mode, "srvstop") != 0 && strcmp(mode, "kill") != 0) {
		fprintf(stderr, "usage: comch_wake idle-client | hs-client | full-socket | stop | srvstop | kill\n");
		return 2;
	}
	EXPECT(pipe(go) == 0);
	setenv("DOCA_SIM_SIDE", "dpu", 1);
	pid = fork_peer();
	if (pid == 0)
		_exit(client());
	server(pid);
	return 0;
}
