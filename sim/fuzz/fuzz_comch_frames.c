/*
 * Fuzz harness: raw frames into a software-device Comch server (DOCA_SIM_SIDE=dpu), over its Unix socket.
 *
 * Bounded, deterministic run (CI):   DOCA_SIM_SIDE=dpu fuzz_comch_frames [inputs=20000] [seed=1]
 * libFuzzer campaign:                build with -DDOCA_SIM_LIBFUZZER (see sim/fuzz/README.md)
 *
 * One process runs the server through the DOCA API and dials its socket directly. Each input is a short session of
 * 1-4 frames: mutations of valid frames (HELLO, MSG, CONSUMER_NEW/GONE, DISCONNECT, DATA) with wrong magic, kinds,
 * lengths, ids, reserved bytes, truncations, and plain random datagrams, optionally after a valid HELLO. The server is
 * progressed between frames. Checked:
 *   - no crash, no out-of-bounds access (AddressSanitizer/UBSan in the fuzz build),
 *   - every message the server delivers to its msg_recv callback is one the harness sent as a well-formed MSG
 *     after a HELLO on that connection (length and bytes identical),
 *   - the server stays up: after all inputs a well-behaved raw client gets its HELLO_ACK and its message delivered,
 *   - no descriptor leak (count of /proc/self/fd) and no handle leak (doca_sim_live_objects) once sessions close.
 * Prints "FUZZ comch-frames inputs N frames F delivered D" and exits 0; "FAIL ..." and exit 1 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>
#include <doca_sim.h>

#include "../tests/comch_wire.h"
#include "fuzz_fds.h"
#include "fuzz_rng.h"

#define MAXF 5000

static struct doca_pe *pe;
static struct doca_comch_server *server;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 256];
static unsigned long frames, delivered;
/* What a well-formed MSG carried, so the callback can check it */
static uint8_t expect_msg[MAXF];
static uint32_t expect_len;
static int expect_pending, maybe_pending;

static void fail(const char *what)
{
	printf("FAIL %s\n", what);
	fflush(stdout);
	exit(1);
}

static void msg_cb(struct doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len, struct doca_comch_connection *c)
{
	(void)ev;
	(void)c;
	if (!(expect_pending || maybe_pending) || len != expect_len || memcmp(buf, expect_msg, len) != 0) {
		printf("FAIL server delivered a %u-byte message nobody sent well-formed\n", len);
		exit(1);
	}
	expect_pending = maybe_pending = 0;
	delivered++;
}

static void conn_cb(struct doca_comch_event_connection_status_changed *e, struct doca_comch_connection *c, uint8_t ok)
{
	(void)e;
	(void)c;
	(void)ok;
}

static void send_ok(struct doca_comch_task_send *t, union doca_data a, union doca_data b)
{
	(void)a;
	(void)b;
	doca_task_free(doca_comch_task_send_as_task(t));
}

static void progress(int n)
{
	for (int i = 0; i < n; i++)
		(void)doca_pe_progress(pe);
}

static void start_server(void)
{
	struct doca_devinfo **list;
	struct doca_devinfo_rep **reps;
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	uint32_t n = 0;
	const char *dir = getenv("DOCA_SIM_DIR");
	struct dirent *e;
	DIR *d;

	if (doca_devinfo_create_list(&list, &n) || n == 0 || doca_dev_open(list[0], &dev))
		fail("no DPU device (run with DOCA_SIM_SIDE=dpu)");
	doca_devinfo_destroy_list(list);
	if (doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n) || n == 0 ||
	    doca_dev_rep_open(reps[0], &rep))
		fail("no representor");
	doca_devinfo_rep_destroy_list(reps);
	if (doca_pe_create(&pe) || doca_comch_server_create(dev, rep, "fuzz server", &server) ||
	    doca_comch_server_task_send_set_conf(server, send_ok, send_ok, 64) ||
	    doca_comch_server_event_msg_recv_register(server, msg_cb) ||
	    doca_comch_server_event_connection_status_changed_register(server, conn_cb, conn_cb) ||
	    doca_pe_connect_ctx(pe, doca_comch_server_as_ctx(server)) || doca_ctx_start(doca_comch_server_as_ctx(server)))
		fail("server start");
	progress(4);
	if (dir == NULL || (d = opendir(dir)) == NULL)
		fail("DOCA_SIM_DIR");
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "comch-", 6) == 0 && len > 5 && strcmp(e->d_name + len - 5, ".sock") == 0)
			snprintf(sock_path, sizeof(sock_path), "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (!sock_path[0])
		fail("no server socket");
}

static int dial(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	strcpy(addr.sun_path, sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		fail("connect");
	return fd;
}

static void put(int fd, const void *p, size_t n)
{
	frames++;
	/* The server may already have dropped us: EPIPE/ECONNRESET/EAGAIN are fine */
	(void)send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	progress(2);
}

static size_t build_frame(uint8_t *buf, uint8_t kind, uint32_t id, const void *payload, uint32_t len)
{
	struct wire_hdr h = {.magic = COMCH_WIRE_MAGIC, .kind = kind, .id = id, .payload_len = len};

	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	return sizeof(h) + len;
}

static size_t hello_frame(uint8_t *buf)
{
	uint32_t hi[3] = {1, (uint32_t)getpid(), 4080};

	return build_frame(buf, 1, (uint32_t)getpid(), hi, sizeof(hi));
}

/* A frame the server must deliver: well-formed MSG (0: no, 1: yes, 2: ambiguous — id or length the spec leaves open) */
static int deliverable(const uint8_t *buf, size_t n)
{
	struct wire_hdr h;

	if (n < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != COMCH_WIRE_MAGIC || h.kind != 3 || h.imm_len != 0 || h.reserved != 0 ||
	    h.payload_len != n - sizeof(h) || h.payload_len > 4080)
		return 0;
	return (h.id != 0 || h.payload_len == 0) ? 2 : 1;
}

/* One fuzz session: dial, maybe HELLO, 1-4 mutated frames, close. */
static void session(void)
{
	uint8_t buf[MAXF + 64], payload[MAXF];
	int fd = dial();
	int helloed = 0;
	int nframes = 1 + (int)(rnd() % 4);

	progress(2);
	if (rnd() % 4 != 0) {
		put(fd, buf, hello_frame(buf));
		helloed = 1;
	}
	for (int f = 0; f < (helloed ? nframes : 1); f++) {
		uint8_t kind = (uint8_t)(1 + rnd() % 7);
		uint32_t plen = (uint32_t)(rnd() % 3 == 0 ? rnd() % MAXF : rnd() % 64);
		size_t n;
		int mutate = (int)(rnd() % 3); /* 0: well-formed, 1-2: mutated */
		int d;

		if (helloed && rnd() % 2)
			kind = 3; /* plenty of messages, so the delivery check has work */
		for (uint32_t k = 0; k < plen; k++)
			payload[k] = (uint8_t)rnd();
		if (kind == 1 && rnd() % 2)
			n = hello_frame(buf);
		else
			n = build_frame(buf, kind, kind == 3 ? 0 : (uint32_t)(rnd() % 4), payload, plen);
		if (mutate) {
			int m = 1 + (int)(rnd() % 4);

			for (int i = 0; i < m && n > 0; i++) {
				switch (rnd() % 7) {
				case 0: buf[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8)); break;
				case 1: buf[rnd() % (n < 16 ? n : 16)] = (uint8_t)rnd(); break; /* header byte */
				case 2: n = (size_t)(rnd() % (n + 1)); break;                /* truncate */
				case 3: if (n >= 16) { uint32_t v = (uint32_t)rnd(); memcpy(buf + 12, &v, 4); } break;
				case 4: if (n > 4) buf[4] = (uint8_t)rnd(); break;            /* kind */
				case 5: if (n > 5) buf[5] = (uint8_t)(rnd() % 40); break;     /* imm_len */
				default: if (n >= 8) { uint16_t v = (uint16_t)rnd(); memcpy(buf + 6, &v, 2); } break;
				}
			}
		}
		d = helloed ? deliverable(buf, n) : 0;
		expect_pending = d == 1;
		maybe_pending = d == 2;
		if (d) {
			memcpy(expect_msg, buf + sizeof(struct wire_hdr), n - sizeof(struct wire_hdr));
			expect_len = (uint32_t)(n - sizeof(struct wire_hdr));
		}
		put(fd, buf, n);
		if (d == 1) {
			for (int i = 0; i < 50 && expect_pending; i++)
				progress(1);
			if (expect_pending) {
				printf("FAIL a well-formed %u-byte message after HELLO was not delivered\n", expect_len);
				exit(1);
			}
			continue;
		}
		progress(2);
		break; /* anything else may end the session on the server's side: start a new one */
	}
	expect_pending = maybe_pending = 0;
	close(fd);
	progress(2);
}

/* Progress for ~50 ms so the server notices closed peers and frees their connections */
static void settle(void)
{
	struct timespec pause = {0, 500000};

	for (int i = 0; i < 100; i++) {
		progress(1);
		nanosleep(&pause, NULL);
	}
}

/* A well-behaved raw client: HELLO, HELLO_ACK back, one MSG delivered intact */
static void healthy_client(void)
{
	uint8_t buf[256], ack[64];
	const char *text = "still serving";
	int fd = dial();
	struct timespec pause = {0, 1000000};

	put(fd, buf, hello_frame(buf));
	for (int i = 0; i < 2000; i++) {
		progress(1);
		if (recv(fd, ack, sizeof(ack), MSG_DONTWAIT) >= (ssize_t)sizeof(struct wire_hdr))
			break;
		if (i == 1999)
			fail("the server no longer answers a HELLO");
		nanosleep(&pause, NULL);
	}
	memcpy(expect_msg, text, strlen(text));
	expect_len = (uint32_t)strlen(text);
	expect_pending = 1;
	put(fd, buf, build_frame(buf, 3, 0, text, expect_len));
	for (int i = 0; i < 2000 && expect_pending; i++) {
		progress(1);
		nanosleep(&pause, NULL);
	}
	if (expect_pending)
		fail("the server no longer delivers a well-formed message");
	close(fd);
	settle();
}

#ifdef DOCA_SIM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	uint8_t buf[64];
	int fd;

	if (!ready) {
		start_server();
		ready = 1;
	}
	fd = dial();
	progress(2);
	if (size > 0 && data[0] & 1)
		put(fd, buf, hello_frame(buf));
	/* The input is a sequence of datagrams: 2-byte length, then the bytes */
	for (size_t at = 1; at + 2 <= size;) {
		size_t n = (size_t)data[at] | ((size_t)data[at + 1] << 8);

		at += 2;
		if (n > size - at)
			n = size - at;
		put(fd, data + at, n);
		at += n;
	}
	close(fd);
	progress(4);
	return 0;
}
#else
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	int fds0;
	uint64_t live0;

	rng_state = seed;
	start_server();
	healthy_client();
	fds0 = count_fds();
	live0 = doca_sim_live_objects();
	for (unsigned long i = 0; i < n; i++)
		session();
	settle();
	healthy_client();
	if (count_fds() > fds0) {
		printf("FAIL descriptor leak: %d open before, %d after\n", fds0, count_fds());
		return 1;
	}
	if (doca_sim_live_objects() > live0) {
		printf("FAIL handle leak: %llu live before, %llu after\n", (unsigned long long)live0,
		       (unsigned long long)doca_sim_live_objects());
		return 1;
	}
	printf("FUZZ comch-frames inputs %lu frames %lu delivered %lu seed %llu\n", n, frames, delivered,
	       (unsigned long long)seed);
	return 0;
}
#endif
