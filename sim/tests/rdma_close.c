/*
 * How RDMA connections of the software device end, one process, against our own contexts and raw TCP peers (each
 * case in a child process of its own):
 *   vanished requester   a requester that gives up before its request is answered costs the responder no CPU while
 *                        the request waits; the late accept is followed by the disconnection,
 *   prompt disconnect    ending a connection whose peer neither reads nor closes, with a large send still queued
 *                        and the peer's bytes arriving afterwards, holds up neither the call nor the progress calls
 *                        after it and costs no CPU while the socket closes in the background; the peer reads our
 *                        accept, then the end of the stream,
 *   one peer socket      an exported connection takes one peer socket, ever: a second one presenting the secret
 *                        while the first is half closed is refused (its message fills no receive), and the
 *                        receive the first was filling fails with the stop, which completes,
 *   connect after close  doca_rdma_connect that finds its connection closed while it was connecting fails, and the
 *                        connection's count stays right (a new export still fits max_num_connections 1),
 *   stalled burst        sends that arrive together before any receive is posted wait, none lost: the device reads
 *                        frames many at a time, so the ones behind the first stalled send are kept until receives
 *                        come, then each fills its own receive in order and is acknowledged.
 * The wire layouts (frame header, connection details) are restated here on purpose (sim/RDMA.md), as the fuzzer does.
 * Usage: rdma_close  (prints "rdma_close: ok")
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_rdma.h>

#include "rdma_test_util.h"

#define PERMS (DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE)

struct wire_frame { /* sim/RDMA.md "How a request travels" */
	uint32_t magic;
	uint8_t op, reserved;
	uint16_t status;
	uint32_t imm, len;
	uint64_t id, key, addr, a, b;
};
enum { OP_HELLO = 1, OP_HELLO_CM = 2, OP_ACCEPT = 3, OP_SEND = 10, OP_ACK = 15 };
#define MAGIC 0x464d4452u

struct wire_details { /* what doca_rdma_export hands out */
	uint32_t magic;
	uint16_t version, port; /* port in network order */
	char address[48];
	uint8_t secret[16];
};

struct side {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_buf_inventory *inv;
};

static int done_tasks, failed_tasks;
static doca_error_t last_status;

static void task_ok(struct doca_task *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	done_tasks++;
	doca_task_free(t);
}
static void task_failed(struct doca_task *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	last_status = doca_task_get_status(t);
	failed_tasks++;
	doca_task_free(t);
}

static void side_open(struct side *s, uint16_t max_conns)
{
	s->dev = t_open_first_dev();
	T_OK(doca_pe_create(&s->pe));
	T_OK(doca_rdma_create(s->dev, &s->rdma));
	T_OK(doca_rdma_set_permissions(s->rdma, PERMS));
	T_OK(doca_rdma_set_max_num_connections(s->rdma, max_conns));
	T_OK(doca_rdma_task_send_set_conf(s->rdma, (void *)task_ok, (void *)task_failed, 128));
	T_OK(doca_rdma_task_receive_set_conf(s->rdma, (void *)task_ok, (void *)task_failed, 8));
	t_cm_callbacks(s->rdma);
	T_OK(doca_pe_connect_ctx(s->pe, doca_rdma_as_ctx(s->rdma)));
	T_OK(doca_ctx_start(doca_rdma_as_ctx(s->rdma)));
	T_OK(doca_buf_inventory_create(128, &s->inv));
	T_OK(doca_buf_inventory_start(s->inv));
}

static uint16_t listen_cm(struct side *s)
{
	uint16_t port = 0;
	doca_error_t err = DOCA_ERROR_IN_USE;
	for (unsigned tries = 0; err == DOCA_ERROR_IN_USE && tries < 20; tries++)
		err = doca_rdma_start_listen_to_port(s->rdma, port = t_listen_port(tries));
	T_OK(err);
	return port;
}

static void stop(struct side *s)
{
	enum doca_ctx_states state;
	double deadline = t_now() + 5;
	doca_error_t err = doca_ctx_stop(doca_rdma_as_ctx(s->rdma));
	T_TRUE(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS);
	do {
		doca_pe_progress(s->pe);
		T_OK(doca_ctx_get_state(doca_rdma_as_ctx(s->rdma), &state));
		T_TRUE(t_now() < deadline);
	} while (state != DOCA_CTX_STATE_IDLE);
}

static void progress_for(struct side *s, double seconds)
{
	double until = t_now() + seconds;
	while (t_now() < until) {
		doca_pe_progress(s->pe);
		usleep(1000);
	}
}

static double cpu_seconds(void)
{
	struct rusage r;
	T_TRUE(getrusage(RUSAGE_SELF, &r) == 0);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static int tcp_connect(uint16_t port, int rcvbuf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_TRUE(fd >= 0);
	if (rcvbuf > 0) /* before connecting: the window the peer offers stays this small */
		T_TRUE(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) == 0);
	T_TRUE(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* A plain TCP listener on a free loopback port, as a raw peer's own end for exported details */
static int tcp_listen(uint16_t *port, int backlog)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_TRUE(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, backlog) == 0);
	T_TRUE(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void send_all(int fd, const void *p, size_t len)
{
	T_TRUE(send(fd, p, len, MSG_NOSIGNAL) == (ssize_t)len);
}

/* A send to a socket the device may already have refused: sent whole, or refused (reset) */
static void send_unless_refused(int fd, const void *p, size_t len)
{
	ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
	T_TRUE(n == (ssize_t)len || (n < 0 && (errno == EPIPE || errno == ECONNRESET)));
}

/* A raw peer of the server's CM listener (its socket's receive buffer rcvbuf bytes, 0: the kernel's default) that
 * has sent its hello and been accepted: the server's established callback has run */
static int cm_peer_established(struct side *server, int rcvbuf, double deadline)
{
	struct wire_frame hello = { .magic = MAGIC, .op = OP_HELLO_CM };
	int fd = tcp_connect(listen_cm(server), rcvbuf);

	send_all(fd, &hello, sizeof(hello));
	while (t_cm_established < 1) {
		doca_pe_progress(server->pe);
		T_TRUE(t_now() < deadline);
	}
	return fd;
}

static bool ends_soon(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c[4096];
	double deadline = t_now() + ms / 1000.0;
	while (t_now() < deadline) {
		ssize_t n;
		if (poll(&p, 1, 50) != 1)
			continue;
		n = recv(fd, c, sizeof(c), MSG_DONTWAIT);
		if (n <= 0)
			return n == 0 || errno == ECONNRESET;
	}
	return false;
}

static int vanished_requester(void)
{
	struct side server, client;
	struct doca_rdma_addr *addr;
	union doca_data none = { 0 };
	enum doca_ctx_states state;
	double cpu, deadline = t_now() + 20;

	side_open(&server, 4);
	side_open(&client, 4);
	T_OK(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", listen_cm(&server), &addr));
	T_OK(doca_rdma_connect_to_addr(client.rdma, addr, none));
	usleep(100 * 1000); /* the client's I/O thread sends its request */
	(void)doca_ctx_stop(doca_rdma_as_ctx(client.rdma));
	do {
		doca_pe_progress(client.pe);
		T_OK(doca_ctx_get_state(doca_rdma_as_ctx(client.rdma), &state));
		T_TRUE(t_now() < deadline);
	} while (state != DOCA_CTX_STATE_IDLE);
	cpu = cpu_seconds();
	usleep(500 * 1000); /* the request waits, unanswered, its requester gone */
	cpu = cpu_seconds() - cpu;
	if (cpu > 0.25) {
		t_say("FAIL an unanswered request of a vanished requester cost %.2f s of CPU in 0.5 s", cpu);
		return 1;
	}
	while (t_cm_disconnected < 1) {
		doca_pe_progress(server.pe);
		T_TRUE(t_now() < deadline);
	}
	T_TRUE(t_cm_established == 1);
	T_OK(doca_rdma_addr_destroy(addr));
	t_say("rdma_close: vanished requester ok");
	return 0;
}

static int prompt_disconnect(void)
{
	struct wire_frame in;
	struct side server;
	static uint8_t big[6 << 20];
	enum { SENDS = 96 }; /* 64 KiB each: more than the kernel takes for a peer that does not read */
	struct doca_mmap *m;
	struct doca_buf *bufs[SENDS];
	struct doca_rdma_task_send *task;
	union doca_data none = { 0 };
	uint8_t junk[2048] = { 0 };
	double t0, took, cpu, deadline = t_now() + 20;
	size_t got = 0;
	ssize_t n;
	int fd;

	side_open(&server, 4);
	fd = cm_peer_established(&server, 4096, deadline);
	/* Sends far beyond what the peer takes: still queued when we disconnect, the first ones copied to leave later */
	m = t_mmap(server.dev, big, sizeof(big), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	for (int i = 0; i < SENDS; i++) {
		T_OK(doca_buf_inventory_buf_get_by_data(server.inv, m, big + i * (sizeof(big) / SENDS), sizeof(big) / SENDS,
							&bufs[i]));
		T_OK(doca_rdma_task_send_allocate_init(server.rdma, t_cm_last, bufs[i], none, &task));
		T_OK(doca_task_submit(doca_rdma_task_send_as_task(task)));
	}
	progress_for(&server, 0.05);
	t0 = t_now();
	T_OK(doca_rdma_connection_disconnect(t_cm_last));
	for (int i = 0; i < 1000; i++)
		doca_pe_progress(server.pe);
	took = t_now() - t0;
	if (took > 0.1) {
		t_say("FAIL a disconnect and 1000 progress calls took %.3f s (the peer keeps its socket open)", took);
		return 1;
	}
	T_TRUE(t_cm_disconnected == 1 && failed_tasks == SENDS && last_status == DOCA_ERROR_CONNECTION_RESET);
	/* the peer writes while our socket closes with frames it will not take: nothing to spin on */
	send_all(fd, junk, sizeof(junk));
	cpu = cpu_seconds();
	usleep(300 * 1000);
	cpu = cpu_seconds() - cpu;
	if (cpu > 0.1) {
		t_say("FAIL a closing socket with input and queued frames cost %.2f s of CPU in 0.3 s", cpu);
		return 1;
	}
	/* the peer reads our accept, then the end of the stream within the graceful close's bound */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char sink[4096];
		T_TRUE(poll(&p, 1, 2000) == 1);
		n = got < sizeof(in) ? recv(fd, (char *)&in + got, sizeof(in) - got, 0) : recv(fd, sink, sizeof(sink), 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	T_TRUE((n == 0 || errno == ECONNRESET) && got >= sizeof(in) && in.op == OP_ACCEPT);
	T_TRUE(t_now() - t0 < 2.0);
	close(fd);
	for (int i = 0; i < SENDS; i++)
		doca_buf_dec_refcount(bufs[i], NULL);
	t_say("rdma_close: prompt disconnect ok");
	return 0;
}

static int one_peer_socket(void)
{
	struct side s;
	struct doca_rdma_connection *conn;
	struct wire_details ours, theirs = { .magic = 0x434d4452u, .version = 1 };
	struct wire_frame hello = { .magic = MAGIC, .op = OP_HELLO, .len = 16 };
	struct wire_frame half_send = { .magic = MAGIC, .op = OP_SEND, .len = 100, .id = 1 };
	struct wire_frame whole_send = { .magic = MAGIC, .op = OP_SEND, .len = 6, .id = 2 };
	static uint8_t inbox[256];
	uint8_t half[50] = { 0 };
	struct doca_mmap *m;
	struct doca_buf *b;
	struct doca_rdma_task_receive *receive;
	union doca_data none = { 0 };
	const void *details;
	size_t details_len;
	uint16_t their_port;
	int listener, first, second, ours_in;

	side_open(&s, 1);
	m = t_mmap(s.dev, inbox, sizeof(inbox), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_rdma_export(s.rdma, &details, &details_len, &conn));
	T_TRUE(details_len == sizeof(ours));
	memcpy(&ours, details, sizeof(ours));
	/* the raw peer: its own listener (our requests arrive there, never read), two sockets to ours */
	listener = tcp_listen(&their_port, 4);
	theirs.port = htons(their_port);
	strcpy(theirs.address, "127.0.0.1");
	first = tcp_connect(ntohs(ours.port), 0);
	second = tcp_connect(ntohs(ours.port), 0);
	send_all(first, &hello, sizeof(hello));
	send_all(first, ours.secret, sizeof(ours.secret));
	T_OK(doca_rdma_connect(s.rdma, &theirs, sizeof(theirs), conn));
	ours_in = accept(listener, NULL, NULL);
	T_TRUE(ours_in >= 0);
	T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, m, inbox, sizeof(inbox), &b));
	T_OK(doca_rdma_task_receive_allocate_init(s.rdma, b, none, &receive));
	T_OK(doca_task_submit(doca_rdma_task_receive_as_task(receive)));
	progress_for(&s, 0.05);
	/* half a send is being received when the first socket ends its side; the second presents the secret meanwhile */
	send_all(first, &half_send, sizeof(half_send));
	send_all(first, half, sizeof(half));
	progress_for(&s, 0.05);
	T_TRUE(shutdown(first, SHUT_WR) == 0);
	progress_for(&s, 0.03);
	send_all(second, &hello, sizeof(hello));
	send_all(second, ours.secret, sizeof(ours.secret));
	/* refused as soon as its secret is read: the close may reach us between these two (EPIPE) */
	send_unless_refused(second, &whole_send, sizeof(whole_send));
	send_unless_refused(second, "taken?", 6);
	if (!ends_soon(second, 1000) || done_tasks != 0) {
		t_say("FAIL a second peer socket of an exported connection was taken (%d receive(s) filled from it)",
		      done_tasks);
		return 1;
	}
	stop(&s); /* fails within 5 s if the receive was lost */
	T_TRUE(failed_tasks == 1);
	close(first), close(second), close(ours_in), close(listener);
	doca_buf_dec_refcount(b, NULL);
	t_say("rdma_close: one peer socket ok");
	return 0;
}

/*
 * The raw peer, while our doca_rdma_connect waits on its full listener: its socket to our export presents the secret
 * and hangs up (the connection closes), then it makes room in its listener's queue, so our connect's next SYN
 * retransmission gets through and the connect returns with a socket, to a connection that is closed
 */
struct hang_up {
	uint16_t port;
	uint8_t secret[16];
	int listener, made_room;
};
static void *present_and_hang_up(void *arg)
{
	struct hang_up *h = arg;
	struct wire_frame hello = { .magic = MAGIC, .op = OP_HELLO, .len = 16 };
	int fd;
	usleep(100 * 1000); /* our connect is waiting by now */
	fd = tcp_connect(h->port, 0);
	send_all(fd, &hello, sizeof(hello));
	send_all(fd, h->secret, sizeof(h->secret));
	usleep(100 * 1000);
	close(fd);
	usleep(100 * 1000);
	h->made_room = accept(h->listener, NULL, NULL);
	return NULL;
}

static int connect_after_close(void)
{
	struct side s;
	struct doca_rdma_connection *conn, *again;
	struct wire_details ours, theirs = { .magic = 0x434d4452u, .version = 1 };
	struct hang_up h;
	const void *details;
	size_t details_len;
	uint16_t their_port;
	int listener, fillers[8], nfill = 0;
	pthread_t peer;
	doca_error_t err;
	double t0, took;

	side_open(&s, 1);
	T_OK(doca_rdma_export(s.rdma, &details, &details_len, &conn));
	memcpy(&ours, details, sizeof(ours));
	/* The raw peer's listener never accepts and its queue is full: our connect waits for a retransmission (~1 s) */
	listener = tcp_listen(&their_port, 0);
	for (; nfill < 8; nfill++) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(their_port) };
		struct pollfd p;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fillers[nfill] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(fillers[nfill], (struct sockaddr *)&sa, sizeof(sa)) == 0)
			continue;
		p = (struct pollfd){ .fd = fillers[nfill], .events = POLLOUT };
		if (poll(&p, 1, 100) == 0) { /* this one waits: the queue is full */
			close(fillers[nfill]);
			break;
		}
	}
	theirs.port = htons(their_port);
	strcpy(theirs.address, "127.0.0.1");
	h = (struct hang_up){ .port = ntohs(ours.port), .listener = listener, .made_room = -1 };
	memcpy(h.secret, ours.secret, sizeof(h.secret));
	T_TRUE(pthread_create(&peer, NULL, present_and_hang_up, &h) == 0);
	t0 = t_now();
	err = doca_rdma_connect(s.rdma, &theirs, sizeof(theirs), conn);
	took = t_now() - t0;
	T_TRUE(pthread_join(peer, NULL) == 0 && h.made_room >= 0);
	/* the connect got its socket (a retransmission, not the 5-s give-up) after the connection had closed */
	T_TRUE(took > 0.25 && took < 4.5);
	if (err != DOCA_ERROR_CONNECTION_ABORTED) {
		t_say("FAIL doca_rdma_connect answered %s for a connection closed while it connected",
		      doca_error_get_name(err));
		return 1;
	}
	progress_for(&s, 0.05);
	/* the closed connection gave its place back once: a new export fits max_num_connections 1 */
	T_OK(doca_rdma_export(s.rdma, &details, &details_len, &again));
	close(h.made_room);
	for (int i = 0; i < nfill; i++)
		close(fillers[i]);
	close(listener);
	stop(&s);
	t_say("rdma_close: connect after close ok");
	return 0;
}

static int stalled_burst(void)
{
	enum { SENDS = 3, LEN = 100, SLOT = 256 };
	struct wire_frame in;
	struct side server;
	static uint8_t inbox[SENDS * SLOT];
	uint8_t burst[SENDS * (sizeof(struct wire_frame) + LEN)], *at = burst;
	struct doca_mmap *m;
	struct doca_buf *bufs[SENDS];
	struct doca_rdma_task_receive *receive;
	union doca_data none = { 0 };
	double deadline = t_now() + 20;
	size_t got = 0;
	int fd, acks = 0;

	side_open(&server, 1);
	fd = cm_peer_established(&server, 0, deadline);
	/* three sends in one write, so they arrive together, before any receive is posted */
	for (int i = 0; i < SENDS; i++) {
		struct wire_frame f = { .magic = MAGIC, .op = OP_SEND, .len = LEN, .id = (uint64_t)i + 1 };
		memcpy(at, &f, sizeof(f));
		memset(at + sizeof(f), 'a' + i, LEN);
		at += sizeof(f) + LEN;
	}
	send_all(fd, burst, sizeof(burst));
	progress_for(&server, 0.05);
	T_TRUE(done_tasks == 0 && failed_tasks == 0);
	m = t_mmap(server.dev, inbox, sizeof(inbox), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	for (int i = 0; i < SENDS; i++) {
		T_OK(doca_buf_inventory_buf_get_by_addr(server.inv, m, inbox + i * SLOT, SLOT, &bufs[i]));
		T_OK(doca_rdma_task_receive_allocate_init(server.rdma, bufs[i], none, &receive));
		T_OK(doca_task_submit(doca_rdma_task_receive_as_task(receive)));
		while (done_tasks + failed_tasks < i + 1) { /* one receive at a time: each takes the next send */
			doca_pe_progress(server.pe);
			T_TRUE(t_now() < deadline);
		}
	}
	for (int i = 0; i < SENDS; i++) {
		size_t len = 0;
		uint8_t want[LEN];
		memset(want, 'a' + i, LEN);
		T_OK(doca_buf_get_data_len(bufs[i], &len));
		if (failed_tasks != 0 || len != LEN || memcmp(inbox + i * SLOT, want, LEN) != 0) {
			t_say("FAIL send %d of a burst that waited for receives: %d failed, %zu bytes", i + 1, failed_tasks,
			      len);
			return 1;
		}
	}
	/* the peer reads our accept, then one acknowledgement per send, in order, each a success */
	while (acks < SENDS) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		T_TRUE(poll(&p, 1, 2000) == 1);
		n = recv(fd, (char *)&in + got, sizeof(in) - got, 0);
		T_TRUE(n > 0);
		got += (size_t)n;
		if (got < sizeof(in))
			continue;
		got = 0;
		if (in.op == OP_ACCEPT)
			continue;
		T_TRUE(in.op == OP_ACK && in.status == 0 && in.id == (uint64_t)acks + 1);
		acks++;
	}
	stop(&server);
	close(fd);
	for (int i = 0; i < SENDS; i++)
		doca_buf_dec_refcount(bufs[i], NULL);
	t_say("rdma_close: stalled burst ok");
	return 0;
}

int main(void)
{
	int (*const cases[])(void) = { vanished_requester, prompt_disconnect, one_peer_socket, connect_after_close,
				       stalled_burst };

	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status;
		pid_t child = fork();
		if (child == 0)
			_exit(cases[i]());
		T_TRUE(waitpid(child, &status, 0) == child);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 1;
	}
	t_say("rdma_close: ok");
	return 0;
}
