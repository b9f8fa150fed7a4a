/*
 * Fuzz harness: raw frames from the network into a software-device RDMA responder (libdoca_rdma over TCP).
 *
 * Bounded, deterministic run (CI):   fuzz_rdma_frames [inputs=1500] [seed=1]
 *
 * One process runs the responder through the DOCA API (RDMA CM listening on a loopback port, requests accepted, a
 * few receives kept posted (one buffer, a list of two, no buffer), three memory regions: one exported read/write/atomic, one exported read-only, one not
 * exported at all, each between guard bytes) and dials it with plain TCP sockets. Each input is a short session: a
 * valid or broken CM hello, then 1-4 frames mutated from well-formed ones (writes, reads, sends with and without
 * immediate, atomics, sync event get/set, stray responses and acknowledgements, control frames) with wrong magic,
 * operations, lengths, keys, addresses, ids and truncations, or plain random bytes. Checked:
 *   - no crash, no out-of-bounds access (AddressSanitizer/UBSan in the fuzz build),
 *   - nothing outside the read/write export changes: the guard bytes, the read-only export, the unexported region
 *     and the bytes past every receive buffer keep their pattern, whatever the frames said,
 *   - the responder stays up: after all inputs a well-behaved DOCA RDMA requester (a second context, by RDMA CM)
 *     writes 16 bytes into the export and they land,
 *   - no descriptor leak (count of /proc/self/fd) once the sessions are closed and none waits in the accept queue
 *     (a failure lists what is left open).
 * The frame layout is restated here on purpose (sim/RDMA.md), so a change on either side shows up.
 * Prints "FUZZ rdma-frames inputs N frames F writes W" and exits 0; "FAIL ..." and exit 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#include "fuzz_fds.h"
#include "fuzz_rng.h"

struct frame { /* sim/RDMA.md "How a request travels": 56 bytes */
	uint32_t magic;
	uint8_t op;
	uint8_t reserved;
	uint16_t status;
	uint32_t imm;
	uint32_t len;
	uint64_t id;
	uint64_t key;
	uint64_t addr;
	uint64_t a;
	uint64_t b;
};
#define MAGIC 0x464d4452u
enum { HELLO = 1, HELLO_CM, ACCEPT, REJECT, DISCONNECT, WRITE, WRITE_IMM, READ_REQ, READ_RESP, SEND, SEND_IMM, CAS,
       FADD, ATOMIC_RESP, ACK, SE_GET, SE_SET, OP_END };

#define REGION 4096
#define GUARD 4096
#define RECEIVES 4
#define RECV_SIZE 256
struct arena {
	uint8_t before[GUARD];
	uint8_t rw[REGION];     /* exported: RDMA read, write, atomic */
	uint8_t middle[GUARD];
	uint8_t ro[REGION];     /* exported: RDMA read only */
	uint8_t after[GUARD];
	uint8_t hidden[REGION]; /* never exported */
	uint8_t recv[RECEIVES][RECV_SIZE * 2]; /* receives use the first half; the second half is a guard */
};
static struct arena arena __attribute__((aligned(4096)));

static struct doca_dev *dev;
static struct doca_pe *pe;
static struct doca_rdma *rdma;
static struct doca_buf_inventory *inv;
static struct doca_mmap *m_rw, *m_ro, *m_recv;
static uint64_t key_rw, key_ro, base_rw, base_ro;
static uint16_t port;
static unsigned long frames, writes, accepted;

static void fail(const char *what)
{
	printf("FAIL %s\n", what);
	fflush(stdout);
	exit(1);
}

static void progress(int n)
{
	for (int i = 0; i < n; i++)
		(void)doca_pe_progress(pe);
}

/* What the descriptors left open are, for the failure message: their link and, for TCP sockets, their state and
 * ports as /proc/self/net/tcp says (a leak names its kind rather than only a count) */
static void list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[256], line[512];
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		ssize_t n;
		unsigned long inode = 0;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		printf("  fd %s -> %s", e->d_name, link);
		if (sscanf(link, "socket:[%lu]", &inode) == 1) {
			FILE *f = fopen("/proc/self/net/tcp", "r");
			while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
				unsigned local_port = 0, remote_port = 0, state = 0;
				unsigned long ino = 0;
				if (sscanf(line, " %*d: %*x:%x %*x:%x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &local_port,
					   &remote_port, &state, &ino) == 4 &&
				    ino == inode)
					printf(" tcp state %u, local port %u, remote port %u", state, local_port, remote_port);
			}
			if (f != NULL)
				fclose(f);
		}
		printf("\n");
	}
	closedir(d);
}

/* Connections the kernel completed on our listening port that the responder has not accepted yet (its accept queue, the
 * rx_queue of the LISTEN row of /proc/self/net/tcp): they become descriptors when it does */
static unsigned backlog(void)
{
	FILE *f = fopen("/proc/self/net/tcp", "r");
	char line[512];
	unsigned queued = 0;
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		unsigned local_port = 0, state = 0, rx = 0;
		if (sscanf(line, " %*d: %*x:%x %*x:%*x %x %*x:%x", &local_port, &state, &rx) == 3 && local_port == port &&
		    state == 0x0a)
			queued += rx;
	}
	if (f != NULL)
		fclose(f);
	return queued;
}

/* ---------------------------------------------------------------- the responder */
static void post_receive(int i);

static void recv_done(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = doca_rdma_task_receive_get_dst_buf(t);
	(void)c;
	doca_task_free(doca_rdma_task_receive_as_task(t));
	if (b != NULL)
		doca_buf_dec_refcount(b, NULL);
	post_receive((int)u.u64);
}

static void recv_failed(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = doca_rdma_task_receive_get_dst_buf(t);
	doca_error_t status = doca_task_get_status(doca_rdma_task_receive_as_task(t));
	(void)c;
	doca_task_free(doca_rdma_task_receive_as_task(t));
	if (b != NULL)
		doca_buf_dec_refcount(b, NULL);
	/* The message did not fit (a receive without a buffer takes empty messages only): post it again, so the run keeps
	 * exercising the send path; a receive flushed by the stop is not */
	if (status == DOCA_ERROR_INVALID_VALUE)
		post_receive((int)u.u64);
}

/* Receive i takes one buffer (i % 3 == 0), a list of two halves (1) or no buffer at all (2: empty messages only) */
static void post_receive(int i)
{
	struct doca_buf *b = NULL, *half;
	struct doca_rdma_task_receive *t;
	union doca_data u = { .u64 = (uint64_t)i };
	if (i % 3 == 0 &&
	    doca_buf_inventory_buf_get_by_addr(inv, m_recv, arena.recv[i], RECV_SIZE, &b) != DOCA_SUCCESS)
		return;
	if (i % 3 == 1) {
		if (doca_buf_inventory_buf_get_by_addr(inv, m_recv, arena.recv[i], RECV_SIZE / 2, &b) != DOCA_SUCCESS)
			return;
		if (doca_buf_inventory_buf_get_by_addr(inv, m_recv, arena.recv[i] + RECV_SIZE / 2, RECV_SIZE / 2,
							&half) != DOCA_SUCCESS ||
		    doca_buf_chain_list(b, half) != DOCA_SUCCESS)
			fail("cannot build a receive list");
	}
	if (doca_rdma_task_receive_allocate_init(rdma, b, u, &t) != DOCA_SUCCESS ||
	    doca_task_submit(doca_rdma_task_receive_as_task(t)) != DOCA_SUCCESS)
		fail("cannot post a receive");
}

static void on_request(struct doca_rdma_connection *conn, union doca_data c)
{
	(void)c;
	if (doca_rdma_connection_accept(conn, NULL, 0) == DOCA_SUCCESS)
		accepted++;
}
static void on_established(struct doca_rdma_connection *conn, union doca_data u, union doca_data c)
{
	(void)conn, (void)u, (void)c;
}
static void on_failure(struct doca_rdma_connection *conn, union doca_data u, union doca_data c)
{
	(void)conn, (void)u, (void)c;
}
static void on_disconnect(struct doca_rdma_connection *conn, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	(void)doca_rdma_connection_disconnect(conn);
}

static struct doca_mmap *region(void *addr, size_t len, uint32_t perms, uint64_t *key, uint64_t *base)
{
	struct doca_mmap *m;
	const uint8_t *desc;
	size_t desc_len;
	if (doca_mmap_create(&m) || doca_mmap_set_memrange(m, addr, len) || doca_mmap_set_permissions(m, perms) ||
	    doca_mmap_add_dev(m, dev) || doca_mmap_start(m))
		fail("mmap");
	if (key != NULL) {
		if (doca_mmap_export_rdma(m, dev, (const void **)&desc, &desc_len) || desc_len < 32)
			fail("export");
		memcpy(key, desc + 16, 8); /* restated layout: magic, version, length, permissions, reserved, key, base */
		memcpy(base, desc + 24, 8);
	}
	return m;
}

static void start_responder(void)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	const uint32_t remote = DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC;

	if (doca_devinfo_create_list(&list, &n) || n == 0 || doca_dev_open(list[0], &dev))
		fail("no device");
	doca_devinfo_destroy_list(list);
	if (doca_pe_create(&pe) || doca_rdma_create(dev, &rdma) || doca_rdma_set_permissions(rdma, remote) ||
	    doca_rdma_set_max_num_connections(rdma, 8) ||
	    doca_rdma_task_receive_set_conf(rdma, recv_done, recv_failed, 16) ||
	    doca_rdma_task_receive_set_dst_buf_list_len(rdma, 2) ||
	    doca_rdma_set_connection_state_callbacks(rdma, on_request, on_established, on_failure, on_disconnect) ||
	    doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)) || doca_ctx_start(doca_rdma_as_ctx(rdma)))
		fail("rdma context");
	if (doca_buf_inventory_create(64, &inv) || doca_buf_inventory_start(inv))
		fail("inventory");
	memset(&arena, 0xa5, sizeof(arena));
	m_rw = region(arena.rw, REGION, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | remote, &key_rw, &base_rw);
	m_ro = region(arena.ro, REGION, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ, &key_ro, &base_ro);
	m_recv = region(arena.recv, sizeof(arena.recv), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, NULL, NULL);
	for (int i = 0; i < RECEIVES; i++)
		post_receive(i);
	for (int tries = 0;; tries++) {
		port = (uint16_t)(20000 + (getpid() * 7 + tries * 13) % 12000); /* below the ephemeral ports */
		if (doca_rdma_start_listen_to_port(rdma, port) == DOCA_SUCCESS)
			break;
		if (tries > 20)
			fail("cannot listen");
	}
}

static void check_untouched(const char *when)
{
	static const uint8_t *const parts[] = { arena.before, arena.middle, arena.after };
	char what[160];
	for (size_t p = 0; p < 3; p++)
		for (size_t i = 0; i < GUARD; i++)
			if (parts[p][i] != 0xa5) {
				snprintf(what, sizeof(what), "%s: guard %zu byte %zu changed", when, p, i);
				fail(what);
			}
	for (size_t i = 0; i < REGION; i++)
		if (arena.ro[i] != 0xa5 || arena.hidden[i] != 0xa5) {
			snprintf(what, sizeof(what), "%s: %s byte %zu changed", when,
				 arena.ro[i] != 0xa5 ? "read-only export" : "unexported region", i);
			fail(what);
		}
	for (int r = 0; r < RECEIVES; r++)
		for (size_t i = RECV_SIZE; i < 2 * RECV_SIZE; i++)
			if (arena.recv[r][i] != 0xa5) {
				snprintf(what, sizeof(what), "%s: byte past receive buffer %d changed", when, r);
				fail(what);
			}
}

/* ---------------------------------------------------------------- the attacker */
static int dial(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fail("cannot dial the responder");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void put(int fd, const void *p, size_t len)
{
	(void)send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL); /* a full buffer or a closed peer is part of the game */
}

static void drain(int fd)
{
	char sink[4096];
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
}

/* A frame aimed somewhere interesting: mostly at the exports' edges, sometimes anywhere */
static void aim(struct frame *f, uint32_t len)
{
	static const uint64_t *const keys[] = { &key_rw, &key_ro };
	uint64_t k = rnd() % 8;
	f->key = k < 5 ? key_rw : k < 7 ? *keys[rnd() % 2] : rnd();
	switch (rnd() % 6) {
	case 0: f->addr = (f->key == key_ro ? base_ro : base_rw) + rnd() % REGION; break;
	case 1: f->addr = base_rw + REGION - len + (rnd() % 3) - 1; break;   /* at the end, and one past */
	case 2: f->addr = base_rw - (rnd() % 16); break;                      /* just before */
	case 3: f->addr = (uint64_t)(uintptr_t)arena.hidden + rnd() % REGION; break;
	case 4: f->addr = base_rw + ((rnd() % (REGION / 8)) * 8); break;
	default: f->addr = rnd(); break;
	}
}

static void one_frame(int fd)
{
	struct frame f = { .magic = MAGIC };
	uint8_t payload[1024];
	uint32_t len = (uint32_t)(rnd() % 9 == 0 ? rnd() % sizeof(payload) : rnd() % 64);
	size_t send_len;

	f.op = (uint8_t)(1 + rnd() % (OP_END - 1));
	f.id = rnd() % 4 == 0 ? rnd() : rnd() % 8;
	f.imm = (uint32_t)rnd();
	f.a = rnd() % 3 == 0 ? rnd() : rnd() % 64;
	f.b = rnd();
	aim(&f, len ? len : 8);
	f.len = (f.op == WRITE || f.op == WRITE_IMM || f.op == SEND || f.op == SEND_IMM || f.op == READ_RESP || rnd() % 10 == 0)
			? len : 0;
	if (f.op == WRITE && f.key == key_rw)
		writes++;
	for (size_t i = 0; i < f.len && i < sizeof(payload); i++)
		payload[i] = (uint8_t)rnd();
	/* mutations */
	switch (rnd() % 12) {
	case 0: f.magic ^= 1u << (rnd() % 32); break;
	case 1: f.op = (uint8_t)rnd(); break;
	case 2: f.len = (uint32_t)rnd(); break;             /* claims more payload than comes */
	case 3: f.status = (uint16_t)rnd(); break;
	case 4: f.reserved = (uint8_t)rnd(); break;
	case 5: f.a = rnd(); break;                        /* a read of any length */
	default: break;
	}
	send_len = sizeof(f);
	if (rnd() % 10 == 0)
		send_len = rnd() % sizeof(f);                  /* truncated header */
	put(fd, &f, send_len);
	if (send_len == sizeof(f) && f.len > 0)
		put(fd, payload, f.len < sizeof(payload) ? f.len : sizeof(payload));
	frames++;
}

static void session(void)
{
	int fd = dial();
	if (rnd() % 4 != 0) {
		struct frame hello = { .magic = MAGIC, .op = HELLO_CM };
		if (rnd() % 8 == 0)
			hello.len = (uint32_t)rnd() % 32;          /* a hello with a payload is refused */
		put(fd, &hello, sizeof(hello));
		progress(20); /* the request event: accepted in on_request */
	} else if (rnd() % 2) {
		uint8_t junk[64];
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rnd();
		put(fd, junk, rnd() % sizeof(junk));
	}
	for (int n = 1 + (int)(rnd() % 4); n > 0; n--) {
		one_frame(fd);
		progress(10);
		drain(fd);
	}
	close(fd);
	progress(20);
}

/* ---------------------------------------------------------------- a well-behaved requester afterwards */
static struct doca_rdma_connection *established;
static int refused;

static void requester_established(struct doca_rdma_connection *conn, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	established = conn;
}

/* The responder may still be full of fuzzing sessions it has not seen close yet (a loaded machine): ask again */
static void requester_failed(struct doca_rdma_connection *conn, union doca_data u, union doca_data c)
{
	(void)conn, (void)u, (void)c;
	refused = 1;
}

static void write_done(struct doca_rdma_task_write *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	doca_task_free(doca_rdma_task_write_as_task(t));
}

static void requester_still_served(void)
{
	struct doca_rdma *req;
	struct doca_rdma_addr *addr;
	struct doca_mmap *local, *remote;
	struct doca_buf *src, *dst;
	struct doca_rdma_task_write *w;
	static uint8_t mine[64];
	const void *desc;
	size_t desc_len;
	union doca_data none = { 0 };
	time_t t0 = time(NULL);

	if (doca_rdma_create(dev, &req) || doca_rdma_set_permissions(req, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) ||
	    doca_rdma_task_write_set_conf(req, write_done, write_done, 4) ||
	    doca_rdma_set_connection_state_callbacks(req, on_request, requester_established, requester_failed,
						      on_disconnect) ||
	    doca_pe_connect_ctx(pe, doca_rdma_as_ctx(req)) || doca_ctx_start(doca_rdma_as_ctx(req)))
		fail("requester context");
	if (doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", port, &addr) ||
	    doca_rdma_connect_to_addr(req, addr, none))
		fail("requester connect");
	while (established == NULL) {
		progress(1);
		if (refused) {
			refused = 0;
			usleep(50 * 1000);
			if (doca_rdma_connect_to_addr(req, addr, none))
				fail("requester reconnect");
		}
		if (time(NULL) - t0 > 30)
			fail("a well-behaved requester was not accepted after the fuzzing");
	}
	memcpy(mine, "still-served-ok!", 16);
	local = region(mine, sizeof(mine), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, NULL, NULL);
	if (doca_mmap_export_rdma(m_rw, dev, &desc, &desc_len) ||
	    doca_mmap_create_from_export(NULL, desc, desc_len, dev, &remote))
		fail("import of the export");
	if (doca_buf_inventory_buf_get_by_data(inv, local, mine, 16, &src) ||
	    doca_buf_inventory_buf_get_by_addr(inv, remote, (void *)(uintptr_t)base_rw, 16, &dst))
		fail("bufs");
	if (doca_rdma_task_write_allocate_init(req, established, src, dst, none, &w) ||
	    doca_task_submit(doca_rdma_task_write_as_task(w)))
		fail("write");
	while (memcmp(arena.rw, "still-served-ok!", 16) != 0) {
		progress(1);
		if (time(NULL) - t0 > 40)
			fail("the well-behaved write did not land");
	}
	(void)doca_rdma_addr_destroy(addr);
}

int main(int argc, char **argv)
{
	unsigned long inputs = argc > 1 ? strtoul(argv[1], NULL, 10) : 1500;
	int fds0;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	start_responder();
	fds0 = count_fds();
	for (unsigned long i = 0; i < inputs; i++) {
		session();
		if (i % 100 == 99)
			check_untouched("during the run");
	}
	/* The responder's I/O thread accepts the last sessions and notices their hang-ups on its own schedule: give it 10 s
	 * (a loaded machine). Sessions still in the accept queue are not descriptors yet, so an empty queue is part of the
	 * condition (read before the count: what the thread accepts in between is counted) */
	for (int i = 0; i < 1000 && (backlog() > 0 || count_fds() > fds0 + 2); i++) {
		progress(10);
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	check_untouched("after the run");
	if (getenv("FUZZ_IGNORE_FDS") == NULL && (backlog() > 0 || count_fds() > fds0 + 2)) {
		printf("FAIL descriptors leaked: %d before, %d after, %u sessions never accepted (responder port %u); open "
		       "now:\n",
		       fds0, count_fds(), backlog(), port);
		list_fds();
		return 1;
	}
	requester_still_served();
	check_untouched("after the well-behaved write");
	printf("FUZZ rdma-frames inputs %lu frames %lu writes %lu accepted %lu\n", inputs, frames, writes, accepted);
	return 0;
}
