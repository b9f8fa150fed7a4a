/*
 * Hostile Comch peer: talks to a software-device Comch server socket directly (no DOCA API) and sends malformed
 * frames. For each case the server must drop this connection (end of stream within 3 s) and stay alive.
 *
 *   comch_raw_peer            uses the only comch-*.sock in DOCA_SIM_DIR
 *   comch_raw_peer last-words sends one message, lets the server's echo sit unread, sends 50 more and closes at
 *                             once: a server must still receive all 51 (prints "SENT 51")
 *
 * Prints one "CASE name dropped" line per case and "RAW OK n" at the end; exits 1 on the first failure.
 * The frame layout written here is the software device's wire format (sim/COMCH.md), restated on purpose.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "comch_wire.h"


#define K_HELLO 1
#define K_MSG 3
#define K_CONSUMER_NEW 4
#define K_CONSUMER_GONE 5
#define K_DATA 7

static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

static void find_socket(void)
{
	const char *dir = getenv("DOCA_SIM_DIR");
	struct dirent *e;
	DIR *d;

	if (dir == NULL || (d = opendir(dir)) == NULL) {
		printf("FAIL no DOCA_SIM_DIR\n");
		exit(1);
	}
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, "comch-", 6) == 0 && n > 5 && strcmp(e->d_name + n - 5, ".sock") == 0) {
			snprintf(sock_path, sizeof(sock_path), "%s/%s", dir, e->d_name);
			break;
		}
	}
	closedir(d);
	if (sock_path[0] == '\0') {
		printf("FAIL no server socket in %s\n", dir);
		exit(1);
	}
}

static int dial(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	strcpy(addr.sun_path, sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		printf("FAIL connect %s: %s\n", sock_path, strerror(errno));
		exit(1);
	}
	return fd;
}

static void send_raw(int fd, const void *p, size_t n)
{
	if (send(fd, p, n, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET) {
		printf("FAIL send: %s\n", strerror(errno));
		exit(1);
	}
}

static void send_frame(int fd, uint8_t kind, uint32_t id, const void *payload, uint32_t len, uint32_t claimed_len)
{
	uint8_t buf[16384];
	struct wire_hdr h = {.magic = COMCH_WIRE_MAGIC, .kind = kind, .id = id, .payload_len = claimed_len};

	memcpy(buf, &h, sizeof(h));
	if (len > 0)
		memcpy(buf + sizeof(h), payload, len);
	send_raw(fd, buf, sizeof(h) + len);
}

static void hello(int fd)
{
	struct wire_hello hi = {.version = 1, .pid = (uint32_t)getpid(), .max_msg_size = 4080};
	uint8_t ack[64];

	send_frame(fd, K_HELLO, (uint32_t)getpid(), &hi, sizeof(hi), sizeof(hi));
	/* The acknowledgement proves the server accepted us before the bad frame comes */
	if (recv(fd, ack, sizeof(ack), 0) < (ssize_t)sizeof(struct wire_hdr)) {
		printf("FAIL no hello ack\n");
		exit(1);
	}
}

/* The server must close its end: recv returns 0 (or reset) within 3 seconds */
static void expect_dropped(int fd, const char *name)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	uint8_t junk[8192];

	for (;;) {
		ssize_t n;

		if (poll(&p, 1, 3000) != 1) {
			printf("FAIL case %s: connection not dropped\n", name);
			exit(1);
		}
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		/* A disconnect frame may precede the end of stream */
	}
	close(fd);
	printf("CASE %s dropped\n", name);
	fflush(stdout);
}

/*
 * Closing with unread data makes the kernel report a reset to the other side before the frames still queued there;
 * those frames were sent and must arrive (a peer's failure reason travels exactly like this).
 */
static int last_words(void)
{
	int fd = dial();

	hello(fd);
	send_frame(fd, K_MSG, 0, "one", 3, 3);
	usleep(300 * 1000); /* the echo of "one" now waits unread here */
	/* a burst, so that some of it is surely still queued at the server when we close */
	for (int i = 0; i < 50; i++)
		send_frame(fd, K_MSG, 0, "more", 4, 4);
	close(fd);
	printf("SENT 51\n");
	return 0;
}

/* A message larger than the server's maximum (4080), sent whole */
static const uint8_t big[12000];
#define BIG_PAYLOAD ((uint32_t)(sizeof(big) - sizeof(struct wire_hdr)))

/* Frames the server must drop the connection for, each alone on a new connection (after a proper hello or not),
 * in the order they are tried */
static const struct bad_frame {
	const char *name;
	bool after_hello;
	uint8_t kind;
	uint32_t id;
	const void *payload;
	uint32_t len, claimed_len;
} bad_frames[] = {
	{"unknown-kind", false, 99, 0, NULL, 0, 0},
	{"message-before-hello", false, K_MSG, 0, "hi", 2, 2},
	{"short-hello", false, K_HELLO, 0, "x", 1, 1},
	{"length-mismatch", true, K_MSG, 0, "0123456789", 10, 100},
	{"oversized-message", true, K_MSG, 0, big, BIG_PAYLOAD, BIG_PAYLOAD},
	{"data-on-control", true, K_DATA, 1, NULL, 0, 0},
	{"consumer-without-socket", true, K_CONSUMER_NEW, 7, NULL, 0, 0},
	{"unknown-consumer-gone", true, K_CONSUMER_GONE, 12345, NULL, 0, 0},
	{"second-hello", true, K_HELLO, 0, NULL, 0, 0},
};

int main(int argc, char **argv)
{
	struct wire_hdr h;
	int fd, cases = 0;

	find_socket();
	if (argc > 1 && strcmp(argv[1], "last-words") == 0)
		return last_words();

	fd = dial();
	send_raw(fd, "abc", 3);
	expect_dropped(fd, "short-garbage"), cases++;

	fd = dial();
	h = (struct wire_hdr){.magic = 0xdeadbeef, .kind = K_HELLO, .payload_len = 0};
	send_raw(fd, &h, sizeof(h));
	expect_dropped(fd, "bad-magic"), cases++;

	for (size_t i = 0; i < sizeof(bad_frames) / sizeof(bad_frames[0]); i++) {
		const struct bad_frame *b = &bad_frames[i];

		fd = dial();
		if (b->after_hello)
			hello(fd);
		send_frame(fd, b->kind, b->id, b->payload, b->len, b->claimed_len);
		expect_dropped(fd, b->name), cases++;
	}

	fd = dial();
	send_raw(fd, "", 0);
	expect_dropped(fd, "empty-datagram"), cases++;

	printf("RAW OK %d\n", cases);
	return 0;
}
