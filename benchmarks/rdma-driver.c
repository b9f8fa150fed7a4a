/*
 * The C side of the RDMA rows (benchmarks/rdma.ts): a DOCA RDMA program on the software device, written as a careful
 * C user would (tasks allocated up front, each completion resubmitting its task), and the TCP stream that bounds it.
 *
 * Both sides sleep on the progress engine's notification handle when nothing moves (see idle_wait).
 *
 *   rdma-driver responder            exports a 4 MiB region (RDMA read/write) and a connection, keeps 32 receives
 *                                    posted, serves until stdin closes. stdout: "details HEX", "mmap HEX";
 *                                    stdin: "peer HEX" (the requester's details) → prints "connected".
 *   rdma-driver requester OPS SIZES SECONDS DEPTH
 *                                    stdin: "details HEX", "mmap HEX"; stdout: "details HEX", then after stdin
 *                                    "go": one line per cell "cell OP SIZE OPS SECONDS" (OP write|read|send), "done".
 *   rdma-driver tcp-sink [SIZES]     listens on 127.0.0.1 (ephemeral port), prints "port N", drains one connection;
 *                                    with SIZES (the source's, in order), answers every message with 8 bytes
 *   rdma-driver tcp-source PORT SIZES SECONDS [DEPTH]
 *                                    streams write() calls of each size for SECONDS: "cell tcp SIZE OPS SECONDS";
 *                                    with DEPTH, at most DEPTH messages unanswered (a request and its answer, as an
 *                                    RDMA write and its acknowledgement, with the requester's depth), both sides
 *                                    with TCP_NODELAY as the device's sockets: "cell tcp-depth SIZE OPS SECONDS"
 */
#define DRIVER_NAME "rdma-driver"
#include "driver-common.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#define REGION (4u << 20)
#define RECEIVES 32
#define MAX_DEPTH 128

static struct doca_dev *dev;
static struct doca_pe *pe;
static struct doca_rdma *rdma;
static struct doca_rdma_connection *conn;
static struct doca_mmap *local_mmap;
static struct doca_buf_inventory *inv;
static char *region;
static long completed;
static int failed;

static void open_first_rdma_device(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	ok(doca_devinfo_create_list(&list, &n), "doca_devinfo_create_list");
	for (uint32_t i = 0; i < n; i++) {
		if (doca_rdma_cap_task_write_is_supported(list[i]) == DOCA_SUCCESS) {
			ok(doca_dev_open(list[i], &dev), "doca_dev_open");
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	if (dev == NULL)
		die("no device with RDMA write", NULL);
}

static void print_hex(const char *tag, const void *data, size_t len)
{
	const unsigned char *p = data;

	printf("%s ", tag);
	for (size_t i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("\n");
	fflush(stdout);
}

/* Reads "TAG HEX" from stdin into a malloc'ed buffer. */
static void *read_hex(const char *tag, size_t *len)
{
	static char line[1 << 16];
	size_t tl = strlen(tag);

	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, tag, tl) != 0 || line[tl] != ' ')
		die("expected on stdin", tag);
	char *hex = line + tl + 1;
	size_t n = strcspn(hex, "\r\n") / 2;
	unsigned char *out = malloc(n ? n : 1);
	for (size_t i = 0; i < n; i++) {
		unsigned int b;
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			die("bad hex for", tag);
		out[i] = (unsigned char)b;
	}
	*len = n;
	return out;
}

/*
 * Nothing moved: sleep on the engine's notification handle until something does, as an event-driven DOCA program
 * does (doca-ts's pump too). A program that spins on doca_pe_progress instead takes a core from the device's I/O
 * threads, which carry the transfers; on two cores that halved the device's write rate. `extra_fd` (or -1) also
 * wakes the sleep; returns true when it did.
 */
static bool idle_wait(int extra_fd, int timeout_ms)
{
	doca_notification_handle_t handle;
	struct pollfd p[2];
	bool extra = false;

	ok(doca_pe_get_notification_handle(pe, &handle), "doca_pe_get_notification_handle");
	ok(doca_pe_request_notification(pe), "doca_pe_request_notification");
	p[0] = (struct pollfd){.fd = (int)handle, .events = POLLIN};
	p[1] = (struct pollfd){.fd = extra_fd, .events = POLLIN};
	/* something may have completed before the arm: progress once more before sleeping */
	if (doca_pe_progress(pe) == 0 && poll(p, extra_fd >= 0 ? 2 : 1, timeout_ms) > 0)
		extra = extra_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP)) != 0;
	ok(doca_pe_clear_notification(pe, handle), "doca_pe_clear_notification");
	return extra;
}

/* The running cell: each completion resubmits its task until the cell's end time (as a careful C program does). */
static double cell_deadline;
static int cell_inflight;

/* One completion: resubmit `task` (destination `dst` emptied first, or NULL) until the cell's end time. */
static void completed_one(struct doca_task *task, struct doca_buf *dst)
{
	completed++;
	if (now() >= cell_deadline) {
		cell_inflight--;
		return;
	}
	/* The destination's data section grows with each write/read: empty it before the task goes again. */
	if (dst != NULL)
		doca_buf_reset_data_len(dst);
	if (doca_task_submit(task) != DOCA_SUCCESS) {
		failed = 1;
		cell_inflight--;
	}
}

static void failed_one(struct doca_task *task)
{
	fprintf(stderr, DRIVER_NAME ": task failed: %s\n", doca_error_get_name(doca_task_get_status(task)));
	failed = 1;
	cell_inflight--;
}

static void write_done(struct doca_rdma_task_write *t, union doca_data ud, union doca_data cud)
{
	(void)ud, (void)cud;
	completed_one(doca_rdma_task_write_as_task(t), doca_rdma_task_write_get_dst_buf(t));
}

static void read_done(struct doca_rdma_task_read *t, union doca_data ud, union doca_data cud)
{
	(void)ud, (void)cud;
	completed_one(doca_rdma_task_read_as_task(t), doca_rdma_task_read_get_dst_buf(t));
}

static void send_done(struct doca_rdma_task_send *t, union doca_data ud, union doca_data cud)
{
	(void)ud, (void)cud;
	completed_one(doca_rdma_task_send_as_task(t), NULL);
}

static void write_failed(struct doca_rdma_task_write *t, union doca_data ud, union doca_data cud)
{
	(void)ud, (void)cud;
	failed_one(doca_rdma_task_write_as_task(t));
}

static void read_failed(struct doca_rdma_task_read *t, union doca_data ud, union doca_data cud)
{
	(void)ud, (void)cud;
	failed_one(doca_rdma_task_read_as_task(t));
}

static void send_failed(struct doca_rdma_task_send *t, union doca_data ud, union doca_data cud)
{
	(void)ud, (void)cud;
	failed_one(doca_rdma_task_send_as_task(t));
}

/* Receive completions repost the same task at once (the responder keeps RECEIVES posted). */
static void recv_done(struct doca_rdma_task_receive *task, union doca_data ud, union doca_data ctx_ud)
{
	(void)ud;
	(void)ctx_ud;
	completed++;
	struct doca_buf *buf = doca_rdma_task_receive_get_dst_buf(task);
	doca_buf_reset_data_len(buf);
	if (doca_task_submit(doca_rdma_task_receive_as_task(task)) != DOCA_SUCCESS)
		failed = 1;
}

static void recv_failed(struct doca_rdma_task_receive *task, union doca_data ud, union doca_data ctx_ud)
{
	(void)ud;
	(void)ctx_ud;
	(void)task;
	/* Flushed at stop, or the peer left: the responder ends with stdin anyway. */
}

static void setup(uint32_t access)
{
	open_first_rdma_device();
	ok(doca_pe_create(&pe), "doca_pe_create");
	ok(doca_rdma_create(dev, &rdma), "doca_rdma_create");
	ok(doca_rdma_set_permissions(rdma, access), "doca_rdma_set_permissions");
	ok(doca_rdma_task_write_set_conf(rdma, write_done, write_failed, MAX_DEPTH), "doca_rdma_task_write_set_conf");
	ok(doca_rdma_task_read_set_conf(rdma, read_done, read_failed, MAX_DEPTH), "doca_rdma_task_read_set_conf");
	ok(doca_rdma_task_send_set_conf(rdma, send_done, send_failed, MAX_DEPTH), "doca_rdma_task_send_set_conf");
	ok(doca_rdma_task_receive_set_conf(rdma, recv_done, recv_failed, RECEIVES), "doca_rdma_task_receive_set_conf");
	ok(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)), "doca_pe_connect_ctx");
	ok_or_pending(doca_ctx_start(doca_rdma_as_ctx(rdma)), "doca_ctx_start");
	enum doca_ctx_states state = DOCA_CTX_STATE_STARTING;
	for (double deadline = now() + 10; state != DOCA_CTX_STATE_RUNNING; doca_pe_progress(pe)) {
		ok(doca_ctx_get_state(doca_rdma_as_ctx(rdma), &state), "doca_ctx_get_state");
		if (now() > deadline)
			die("rdma context did not start", NULL);
	}
	region = aligned_alloc(4096, REGION);
	memset(region, 0x5a, REGION);
	local_mmap = started_mmap(dev, region, REGION, access);
	ok(doca_buf_inventory_create(2 * MAX_DEPTH + RECEIVES, &inv), "doca_buf_inventory_create");
	ok(doca_buf_inventory_start(inv), "doca_buf_inventory_start");
	const void *details;
	size_t len;
	ok(doca_rdma_export(rdma, &details, &len, &conn), "doca_rdma_export");
	print_hex("details", details, len);
}

static void responder(void)
{
	setup(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE);
	const void *desc;
	size_t desc_len;
	ok(doca_mmap_export_rdma(local_mmap, dev, &desc, &desc_len), "doca_mmap_export_rdma");
	print_hex("mmap", desc, desc_len);
	size_t peer_len;
	void *peer = read_hex("peer", &peer_len);
	ok(doca_rdma_connect(rdma, peer, peer_len, conn), "doca_rdma_connect");
	/* Receives all land in the same region: the rows measure rates, not contents. */
	for (int i = 0; i < RECEIVES; i++) {
		struct doca_buf *buf;
		struct doca_rdma_task_receive *task;
		ok(doca_buf_inventory_buf_get_by_addr(inv, local_mmap, region, REGION, &buf), "buf_get_by_addr");
		ok(doca_rdma_task_receive_allocate_init(rdma, buf, (union doca_data){.u64 = 0}, &task), "receive_allocate_init");
		ok(doca_task_submit(doca_rdma_task_receive_as_task(task)), "doca_task_submit(receive)");
	}
	printf("connected\n");
	fflush(stdout);
	/* Serve (the responder's own progress carries out the peer's reads and writes) until stdin closes. */
	for (;;) {
		while (doca_pe_progress(pe) != 0)
			;
		if (idle_wait(0, 1000)) {
			char c;
			if (read(0, &c, 1) <= 0)
				break;
		}
	}
	printf("received %ld\n", completed);
	exit(failed);
}

enum op { OP_WRITE, OP_READ, OP_SEND };

static void run_cell(enum op op, size_t size, double seconds, int depth, struct doca_mmap *remote)
{
	struct doca_task *tasks[MAX_DEPTH];
	struct doca_buf *held[2 * MAX_DEPTH];
	int num_held = 0;
	char *rbase;
	size_t rlen;

	ok(doca_mmap_get_memrange(remote, (void **)&rbase, &rlen), "doca_mmap_get_memrange");
	for (int i = 0; i < depth; i++) {
		struct doca_buf *lbuf, *rbuf = NULL;
		union doca_data ud = {.u64 = (uint64_t)i};
		/* Every task reuses its own buffers: source data [region, +size) and destination [remote, +size). */
		if (op == OP_READ) {
			ok(doca_buf_inventory_buf_get_by_data(inv, remote, rbase, size, &rbuf), "remote buf");
			ok(doca_buf_inventory_buf_get_by_addr(inv, local_mmap, region, size, &lbuf), "local buf");
			struct doca_rdma_task_read *t;
			ok(doca_rdma_task_read_allocate_init(rdma, conn, rbuf, lbuf, ud, &t), "read_allocate_init");
			tasks[i] = doca_rdma_task_read_as_task(t);
		} else if (op == OP_WRITE) {
			ok(doca_buf_inventory_buf_get_by_data(inv, local_mmap, region, size, &lbuf), "local buf");
			ok(doca_buf_inventory_buf_get_by_addr(inv, remote, rbase, size, &rbuf), "remote buf");
			struct doca_rdma_task_write *t;
			ok(doca_rdma_task_write_allocate_init(rdma, conn, lbuf, rbuf, ud, &t), "write_allocate_init");
			tasks[i] = doca_rdma_task_write_as_task(t);
		} else {
			ok(doca_buf_inventory_buf_get_by_data(inv, local_mmap, region, size, &lbuf), "local buf");
			struct doca_rdma_task_send *t;
			ok(doca_rdma_task_send_allocate_init(rdma, conn, lbuf, ud, &t), "send_allocate_init");
			tasks[i] = doca_rdma_task_send_as_task(t);
		}
		held[num_held++] = lbuf;
		if (rbuf != NULL)
			held[num_held++] = rbuf;
	}
	completed = 0;
	double start = now();
	cell_deadline = start + seconds;
	cell_inflight = depth;
	for (int i = 0; i < depth; i++)
		ok(doca_task_submit(tasks[i]), "doca_task_submit");
	while (cell_inflight > 0)
		if (doca_pe_progress(pe) == 0)
			idle_wait(-1, 100);
	if (failed)
		die("a task failed", NULL);
	long ops = completed;
	double took = now() - start;
	static const char *names[] = {"write", "read", "send"};
	printf("cell %s %zu %ld %.6f\n", names[op], size, ops, took);
	fflush(stdout);
	for (int i = 0; i < depth; i++)
		doca_task_free(tasks[i]);
	/* the next cell takes its buffers from the same inventory */
	for (int i = 0; i < num_held; i++)
		doca_buf_dec_refcount(held[i], NULL);
}

static void requester(const char *ops_arg, const char *sizes_arg, double seconds, int depth)
{
	setup(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	size_t len;
	void *peer = read_hex("details", &len);
	size_t desc_len;
	void *desc = read_hex("mmap", &desc_len);
	struct doca_mmap *remote;
	ok(doca_mmap_create_from_export(NULL, desc, desc_len, dev, &remote), "doca_mmap_create_from_export");
	ok(doca_rdma_connect(rdma, peer, len, conn), "doca_rdma_connect");
	char line[64];
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "go", 2) != 0)
		die("expected go on stdin", NULL);
	char ops[64], sizes[1024];
	snprintf(ops, sizeof(ops), "%s", ops_arg);
	for (char *o = strtok(ops, ","); o; o = strtok(NULL, ",")) {
		enum op op = strcmp(o, "write") == 0 ? OP_WRITE : strcmp(o, "read") == 0 ? OP_READ : OP_SEND;
		snprintf(sizes, sizeof(sizes), "%s", sizes_arg);
		char *save;
		for (char *s = strtok_r(sizes, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			size_t size = strtoull(s, NULL, 10);
			if (size == 0 || size > REGION)
				die("size out of range", s);
			run_cell(op, size, seconds, depth, remote);
		}
	}
	printf("done\n");
	fflush(stdout);
	exit(0);
}

static void no_delay(int s)
{
	int one = 1;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* The sizes of a cell list ("64,4096"), each checked; returns how many */
static int parse_sizes(const char *arg, size_t out[], int max)
{
	char sizes[1024];
	int n = 0;
	snprintf(sizes, sizeof(sizes), "%s", arg);
	for (char *p = strtok(sizes, ","); p && n < max; p = strtok(NULL, ",")) {
		out[n] = strtoull(p, NULL, 10);
		if (out[n] == 0 || out[n] > REGION)
			die("size out of range", p);
		n++;
	}
	return n;
}

static void write_all(int s, const char *buf, size_t len, const char *what)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(s, buf + done, len - done);
		if (n <= 0)
			die(what, NULL);
		done += (size_t)n;
	}
}

/*
 * Answering sink: reads what arrived, and answers each message completed by it with 8 bytes, all in one write (as
 * the device's responder gathers its acknowledgements). A cell's end is a 1-byte message of value 0xff; a cell's
 * messages are its size, so the sink follows the source's sizes in order.
 */
static void tcp_answer(int c, const char *sizes_arg)
{
	size_t sizes[32];
	int cells = parse_sizes(sizes_arg, sizes, 32);
	static char buf[REGION], acks[REGION / 8 * 8];
	size_t have = 0; /* bytes of the current message read so far */
	for (int cell = 0; cell < cells; cell++) {
		size_t size = sizes[cell];
		bool ended = false;
		while (!ended) {
			ssize_t n = read(c, buf, sizeof(buf));
			size_t answers = 0;
			if (n <= 0)
				exit(0);
			for (ssize_t at = 0; at < n;) {
				/* the marker that ends a cell stands where a message would start */
				if (have == 0 && (unsigned char)buf[at] == 0xff) {
					ended = true;
					at++;
					break;
				}
				size_t take = size - have < (size_t)(n - at) ? size - have : (size_t)(n - at);
				have += take;
				at += (ssize_t)take;
				if (have == size) {
					have = 0;
					answers++;
				}
			}
			if (answers > 0)
				write_all(c, acks, answers * 8, "tcp-sink: write");
		}
		write_all(c, "\xff", 1, "tcp-sink: write"); /* the cell's end, answered */
	}
	exit(0);
}

static void tcp_sink(const char *answer_sizes)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 1) != 0 || getsockname(s, (struct sockaddr *)&a, &al) != 0)
		die("tcp-sink: listen", NULL);
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	int c = accept(s, NULL, NULL);
	if (c < 0)
		die("tcp-sink: accept", NULL);
	if (answer_sizes != NULL) {
		no_delay(c);
		tcp_answer(c, answer_sizes);
	}
	static char buf[REGION];
	while (read(c, buf, sizeof(buf)) > 0)
		;
	exit(0);
}

/* DEPTH messages in flight, each answered by the sink: the TCP counterpart of the RDMA requester's cells (the
 * messages the window has room for leave from `buf` in one call, as many as it holds) */
static long tcp_depth_cell(int s, const char *buf, size_t size, double seconds, int depth)
{
	static char answers[MAX_DEPTH * 8];
	size_t pending = 0; /* answer bytes owed */
	long ops = 0;
	double end = now() + seconds;
	bool stop = false;
	while (!stop || pending > 0) {
		if (!stop && now() >= end) {
			stop = true;
			write_all(s, "\xff", 1, "tcp-source: write");
			pending += 1;
		}
		/* every message the window has room for, in one call (as the device gathers its frames) */
		if (!stop && pending / 8 < (size_t)depth) {
			size_t room = (size_t)depth - pending / 8;
			if (room * size > REGION)
				room = REGION / size;
			write_all(s, buf, room * size, "tcp-source: write");
			pending += room * 8;
		}
		ssize_t n = read(s, answers, pending < sizeof(answers) ? pending : sizeof(answers));
		if (n <= 0)
			die("tcp-source: read", NULL);
		/* the end marker's answer is the last byte owed; each full 8 bytes before it is one message done */
		size_t before = pending / 8;
		pending -= (size_t)n;
		ops += (long)(before - pending / 8);
	}
	return ops;
}

static void tcp_source(int port, const char *sizes_arg, double seconds, int depth)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("tcp-source: connect", NULL);
	static char buf[REGION];
	memset(buf, 0x5a, sizeof(buf));
	size_t sizes[32];
	int cells = parse_sizes(sizes_arg, sizes, 32);
	if (depth > 0)
		no_delay(s);
	for (int cell = 0; cell < cells; cell++) {
		size_t size = sizes[cell];
		long ops = 0;
		double start = now(), end = start + seconds;
		if (depth > 0) {
			ops = tcp_depth_cell(s, buf, size, seconds, depth);
		} else {
			while (now() < end) {
				write_all(s, buf, size, "tcp-source: write");
				ops++;
			}
		}
		printf("cell %s %zu %ld %.6f\n", depth > 0 ? "tcp-depth" : "tcp", size, ops, now() - start);
		fflush(stdout);
	}
	close(s);
	exit(0);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "responder") == 0)
		responder();
	if (argc == 6 && strcmp(argv[1], "requester") == 0)
		requester(argv[2], argv[3], atof(argv[4]), atoi(argv[5]) < 1 ? 1 : atoi(argv[5]) > MAX_DEPTH ? MAX_DEPTH : atoi(argv[5]));
	if ((argc == 2 || argc == 3) && strcmp(argv[1], "tcp-sink") == 0)
		tcp_sink(argc == 3 ? argv[2] : NULL);
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "tcp-source") == 0)
		tcp_source(atoi(argv[2]), argv[3], atof(argv[4]), argc == 6 ? (atoi(argv[5]) < 1 ? 1 : atoi(argv[5]) > MAX_DEPTH ? MAX_DEPTH : atoi(argv[5])) : 0);
	fprintf(stderr, "usage: rdma-driver responder | requester OPS SIZES SECONDS DEPTH | tcp-sink [SIZES] | tcp-source PORT SIZES SECONDS [DEPTH]\n");
	return 2;
}
