/*
 * Every Comch queue is bounded (docs/FAULTS.md): the DPU-side server's memory under hostile or careless clients.
 * This program is the host side; it starts a copy of itself as a DPU-side server (DOCA_SIM_SIDE=dpu) that accepts
 * every client and never serves one (messages are received and dropped), and reads the server's VmRSS from
 * /proc/PID/status.
 *
 *   comch_flood flood N     3 clients each send N messages of the maximum size (4080 B) as fast as their 16 send
 *                           tasks complete; prints the server's RSS before and after (must stay within 8 MiB)
 *   comch_flood cycles N    N connect/disconnect cycles of a DOCA client (create, start, RUNNING, stop, IDLE,
 *                           destroy); prints the server's RSS after the first 10 % and at the end (must not grow
 *                           by more than 2 MiB: no per-connection leak)
 *   comch_flood halfopen    600 raw peers connect and never say hello (more than the server's 512 client slots);
 *                           after the server's handshake deadline (DOCA_SIM_HANDSHAKE_MS, 300 ms here) a DOCA client
 *                           connects and its connection works
 *   comch_flood bigmsg      the server is configured with a maximum message size of 256: a DOCA client's 4000-byte
 *                           send is refused at alloc_init (DOCA_ERROR_INVALID_VALUE); a raw peer that sends one anyway
 *                           is disconnected and the server never receives it
 *
 * Prints "RSS ..." lines and "PASS comch_flood <mode>".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_comch.h>

#include "comch_test_util.h"
#include "comch_wire.h"

#define NAME "flood"
#define CLIENTS 3
#define TASKS 16

/* ---------------------------------------------------------------- the DPU-side server: accepts, never serves */

static struct {
	uint64_t msgs, too_long, connects, disconnects;
	uint32_t max_msg;
	int running, idle;
} S;

T_STATE_FLAGS_CB(s_state, S.running, S.idle)

static void s_msg(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *c)
{
	(void)event;
	(void)buf;
	(void)c;
	S.msgs++;
	if (len > S.max_msg)
		S.too_long++;
}

static void s_conn(struct doca_comch_event_connection_status_changed *e, struct doca_comch_connection *c, uint8_t ok)
{
	(void)e;
	(void)c;
	(void)ok;
	S.connects++;
}

static void s_disc(struct doca_comch_event_connection_status_changed *e, struct doca_comch_connection *c, uint8_t ok)
{
	(void)e;
	(void)c;
	(void)ok;
	S.disconnects++;
}

/* Runs until stdin closes, then prints its counters */
static int server_main(uint32_t max_msg)
{
	struct doca_dev *dev = open_first_dev();
	struct doca_dev_rep *rep = open_first_rep(dev);
	struct doca_comch_server *server;
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	struct pollfd in = {.fd = 0, .events = POLLIN};

	S.max_msg = max_msg;
	CHECK(doca_pe_create(&pe));
	CHECK(doca_comch_server_create(dev, rep, NAME, &server));
	CHECK(doca_comch_server_set_max_msg_size(server, max_msg));
	CHECK(doca_comch_server_task_send_set_conf(server, send_free, send_free, TASKS));
	CHECK(doca_comch_server_event_msg_recv_register(server, s_msg));
	CHECK(doca_comch_server_event_connection_status_changed_register(server, s_conn, s_disc));
	ctx = doca_comch_server_as_ctx(server);
	CHECK(doca_ctx_set_state_changed_cb(ctx, s_state));
	CHECK(doca_pe_connect_ctx(pe, ctx));
	CHECK(doca_ctx_start(ctx));
	progress_until(pe, &S.running, 10, "server running");
	say("LISTENING");
	for (;;) {
		if (doca_pe_progress(pe) == 0) {
			if (poll(&in, 1, 0) == 1)
				break;
			usleep(50);
		}
	}
	stop_ctx(ctx);
	progress_until(pe, &S.idle, 10, "server idle");
	CHECK(doca_comch_server_destroy(server));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_dev_rep_close(rep));
	CHECK(doca_dev_close(dev));
	say("SERVER msgs=%llu too_long=%llu connects=%llu disconnects=%llu", (unsigned long long)S.msgs,
	    (unsigned long long)S.too_long, (unsigned long long)S.connects, (unsigned long long)S.disconnects);
	return 0;
}

/* ---------------------------------------------------------------- host side */

static pid_t server_pid;
static int server_in = -1, server_out = -1;

static void start_server(uint32_t max_msg)
{
	int in[2], out[2];
	char line[64];
	ssize_t n;

	EXPECT(pipe(in) == 0 && pipe(out) == 0);
	server_pid = fork();
	EXPECT(server_pid >= 0);
	if (server_pid == 0) {
		char m[16];

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		snprintf(m, sizeof(m), "%u", max_msg);
		setenv("DOCA_SIM_SIDE", "dpu", 1);
		setenv("DOCA_SIM_HANDSHAKE_MS", "300", 1);
		execl("/proc/self/exe", "comch_flood", "--server", m, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	server_in = in[1];
	server_out = out[0];
	n = read(server_out, line, sizeof(line) - 1);
	EXPECT(n > 0);
	line[n] = '\0';
	EXPECT(strncmp(line, "LISTENING", 9) == 0);
}

/* The server's counters line, after it stopped */
static void stop_server(char *report, size_t cap)
{
	size_t got = 0;
	ssize_t n;
	int status;

	close(server_in);
	while (got < cap - 1 && (n = read(server_out, report + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	report[got] = '\0';
	EXPECT(waitpid(server_pid, &status, 0) == server_pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(server_out);
}

static long server_rss_kib(void)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)server_pid);
	f = fopen(path, "re");
	EXPECT(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

struct client {
	struct doca_pe *pe;
	struct doca_comch_client *client;
	struct doca_comch_connection *conn;
	int running, idle;
	uint32_t inflight;
	uint64_t sent;
};

/* user_data: the client */
T_STATE_FLAGS_CB(c_state, ((struct client *)user_data.ptr)->running, ((struct client *)user_data.ptr)->idle)

static void c_send_done(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	struct client *c = cud.ptr;

	(void)tud;
	c->inflight--;
	c->sent++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void c_send_err(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	die("client send", doca_task_get_status(doca_comch_task_send_as_task(task)));
}

static void client_open(struct doca_dev *dev, struct client *c)
{
	struct doca_ctx *ctx;
	union doca_data ud = {.ptr = c};
	doca_error_t err;

	memset(c, 0, sizeof(*c));
	CHECK(doca_pe_create(&c->pe));
	CHECK(doca_comch_client_create(dev, NAME, &c->client));
	CHECK(doca_comch_client_task_send_set_conf(c->client, c_send_done, c_send_err, TASKS));
	ctx = doca_comch_client_as_ctx(c->client);
	CHECK(doca_ctx_set_user_data(ctx, ud));
	CHECK(doca_ctx_set_state_changed_cb(ctx, c_state));
	CHECK(doca_pe_connect_ctx(c->pe, ctx));
	err = doca_ctx_start(ctx);
	EXPECT(err == DOCA_ERROR_IN_PROGRESS || err == DOCA_SUCCESS);
	progress_until(c->pe, &c->running, 30, "client running");
	CHECK(doca_comch_client_get_connection(c->client, &c->conn));
}

static void client_close(struct client *c)
{
	struct doca_ctx *ctx = doca_comch_client_as_ctx(c->client);

	while (c->inflight > 0)
		(void)doca_pe_progress(c->pe);
	stop_ctx(ctx);
	progress_until(c->pe, &c->idle, 30, "client idle");
	CHECK(doca_comch_client_destroy(c->client));
	CHECK(doca_pe_destroy(c->pe));
}

static void flood(struct doca_dev *dev, uint64_t n)
{
	static uint8_t msg[4080];
	struct client c[CLIENTS];
	long before, after;
	bool busy = true;

	for (int i = 0; i < CLIENTS; i++)
		client_open(dev, &c[i]);
	before = server_rss_kib();
	while (busy) {
		busy = false;
		for (int i = 0; i < CLIENTS; i++) {
			struct doca_comch_task_send *task;

			while (c[i].sent + c[i].inflight < n && c[i].inflight < TASKS) {
				CHECK(doca_comch_client_task_send_alloc_init(c[i].client, c[i].conn, msg, sizeof(msg), &task));
				CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
				c[i].inflight++;
			}
			(void)doca_pe_progress(c[i].pe);
			busy = busy || c[i].sent < n;
		}
	}
	after = server_rss_kib();
	for (int i = 0; i < CLIENTS; i++)
		client_close(&c[i]);
	say("RSS flood: %d clients x %llu messages of 4080 B (%llu MiB sent): server RSS %ld KiB before, %ld KiB after",
	    CLIENTS, (unsigned long long)n, (unsigned long long)(CLIENTS * n * 4080 >> 20), before, after);
	EXPECT(after - before < 8 * 1024);
}

static void cycles(struct doca_dev *dev, uint64_t n)
{
	long warm = 0, end;
	double t0 = now_s();

	for (uint64_t i = 0; i < n; i++) {
		struct client c;

		client_open(dev, &c);
		client_close(&c);
		if (i + 1 == n / 10)
			warm = server_rss_kib();
	}
	end = server_rss_kib();
	say("RSS cycles: %llu connect/disconnect cycles in %.1f s: server RSS %ld KiB after %llu, %ld KiB at the end "
	    "(%+.1f B per cycle)",
	    (unsigned long long)n, now_s() - t0, warm, (unsigned long long)(n / 10), end,
	    (double)(end - warm) * 1024.0 / (double)(n - n / 10));
	EXPECT(end - warm < 2 * 1024);
}

static void server_socket(struct sockaddr_un *addr)
{
	DIR *d = opendir(getenv("DOCA_SIM_DIR"));
	struct dirent *e;

	EXPECT(d != NULL);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "comch-", 6) == 0 && strstr(e->d_name, ".sock") != NULL)
			EXPECT(snprintf(addr->sun_path, sizeof(addr->sun_path), "%.60s/%.40s", getenv("DOCA_SIM_DIR"),
					e->d_name) < (int)sizeof(addr->sun_path));
	closedir(d);
}

#define HALF_OPEN 600

static void halfopen(struct doca_dev *dev)
{
	static int fds[HALF_OPEN];
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct doca_comch_task_send *task;
	struct client c;
	int opened = 0;
	double t0;

	server_socket(&addr);
	for (int i = 0; i < HALF_OPEN; i++) {
		fds[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		EXPECT(fds[i] >= 0);
		/* the kernel's listen backlog may refuse some while the server is busy: those are not half-open */
		if (connect(fds[i], (struct sockaddr *)&addr, sizeof(addr)) == 0)
			opened++;
	}
	t0 = now_s();
	usleep(1000 * 1000); /* past the 300 ms deadline, with slack for a loaded machine */
	client_open(dev, &c);
	CHECK(doca_comch_client_task_send_alloc_init(c.client, c.conn, "hi", 2, &task));
	CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
	c.inflight++;
	client_close(&c);
	say("ok %d peers connected without a handshake; %.1f s later a DOCA client connected and sent", opened,
	    now_s() - t0);
	for (int i = 0; i < HALF_OPEN; i++)
		close(fds[i]);
}

static void bigmsg(struct doca_dev *dev)
{
	static uint8_t frame[sizeof(struct wire_hdr) + 4000];
	struct client c;
	struct doca_comch_task_send *task;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct wire_hdr h = {.magic = COMCH_WIRE_MAGIC, .kind = 1, .payload_len = sizeof(struct wire_hello)};
	struct wire_hello hello = {.version = 1, .pid = (uint32_t)getpid(), .max_msg_size = 4080};
	struct pollfd p;
	uint8_t buf[8192];
	int fd;

	client_open(dev, &c);
	EXPECT(doca_comch_client_task_send_alloc_init(c.client, c.conn, frame, 4000, &task) == DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_comch_client_task_send_alloc_init(c.client, c.conn, frame, 256, &task));
	CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
	c.inflight++;
	client_close(&c);
	say("ok a 4000-byte send to a server whose max msg size is 256: DOCA_ERROR_INVALID_VALUE at alloc_init; "
	    "256 bytes go");

	/* A peer that ignores the announced maximum, on the server's socket (the only one in DOCA_SIM_DIR) */
	server_socket(&addr);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	EXPECT(fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
	memcpy(frame, &h, sizeof(h));
	memcpy(frame + sizeof(h), &hello, sizeof(hello));
	EXPECT(send(fd, frame, sizeof(h) + sizeof(hello), MSG_NOSIGNAL) > 0);
	EXPECT(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(struct wire_hdr)); /* the server's hello ack */
	h.kind = 3;
	h.payload_len = 4000;
	memcpy(frame, &h, sizeof(h));
	memset(frame + sizeof(h), 'x', 4000);
	EXPECT(send(fd, frame, sizeof(frame), MSG_NOSIGNAL) == (ssize_t)sizeof(frame));
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	for (;;) {
		ssize_t n;

		EXPECT(poll(&p, 1, 5000) == 1);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
	}
	close(fd);
	say("ok a raw peer's 4000-byte message to that server: the peer is disconnected");
}

int main(int argc, char **argv)
{
	struct doca_dev *dev;
	char report[512];
	const char *mode = argc >= 2 ? argv[1] : "";
	uint64_t n = argc >= 3 ? strtoull(argv[2], NULL, 10) : 0;

	if (argc == 3 && strcmp(mode, "--server") == 0)
		return server_main((uint32_t)strtoul(argv[2], NULL, 10));
	if (strcmp(mode, "bigmsg") != 0 && strcmp(mode, "halfopen") != 0 && (n == 0 || (strcmp(mode, "flood") != 0 && strcmp(mode, "cycles") != 0))) {
		fprintf(stderr, "usage: comch_flood flood N | cycles N | halfopen | bigmsg\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setenv("DOCA_SIM_SIDE", "host", 1);
	start_server(strcmp(mode, "bigmsg") == 0 ? 256 : 4080);
	dev = open_first_dev();
	if (strcmp(mode, "flood") == 0)
		flood(dev, n);
	else if (strcmp(mode, "cycles") == 0)
		cycles(dev, n);
	else if (strcmp(mode, "halfopen") == 0)
		halfopen(dev);
	else
		bigmsg(dev);
	CHECK(doca_dev_close(dev));
	stop_server(report, sizeof(report));
	fputs(report, stdout);
	if (strcmp(mode, "bigmsg") == 0)
		EXPECT(strstr(report, "msgs=1 too_long=0") != NULL);
	say("PASS comch_flood %s", mode);
	return 0;
}
