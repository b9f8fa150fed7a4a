/*
 * tcp-copy: a file copied between two processes over a TCP socket on 127.0.0.1, in C: issue 29's comparison for
 * rdma-copy (the software device's RDMA itself runs over loopback TCP).
 *
 *   tcp-copy SOURCE TARGET [BUFFER]
 *
 * The receiver (this process) listens on an ephemeral port of 127.0.0.1, then forks the sender, which connects and
 * sendfile()s SOURCE whole. The receiver read()s BUFFER bytes at a time (default 1 MiB, rdma-copy's chunk) and
 * write()s them into a temporary file beside TARGET, starts writeback every 64 MiB (as rdma-copy's receiver does),
 * fsyncs at the end and renames. No checksum: this is the transport and the disk alone. Prints one JSON line:
 * bytes, seconds (fork to rename), bytesPerSecond, and the user and system CPU seconds of the sender and of the
 * receiver. Exit 0 when copied, 2 for bad arguments, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COPY_NAME "tcp-copy"
#include "copy-common.h"

static void sender(const struct sockaddr_in *to, const char *source)
{
	struct stat st;
	int fd = open_source(source, &st);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (const struct sockaddr *)to, sizeof(*to)) != 0)
		die("connect");
	off_t offset = 0;
	while (offset < st.st_size) {
		ssize_t n = sendfile(s, fd, &offset, (size_t)(st.st_size - offset));
		if (n <= 0)
			die("sendfile");
	}
	shutdown(s, SHUT_WR);
	char ack;
	if (read(s, &ack, 1) != 1) /* the receiver's word that it committed */
		die("waiting for the receiver");
	exit(0);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: tcp-copy SOURCE TARGET [BUFFER]\n");
		return 2;
	}
	const char *source = argv[1], *target = argv[2];
	size_t buffer = argc == 4 ? strtoull(argv[3], NULL, 10) : (1u << 20);
	if (buffer == 0 || buffer > (1u << 30)) {
		fprintf(stderr, "tcp-copy: BUFFER must be 1..2^30\n");
		return 2;
	}
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(at);
	if (l < 0 || bind(l, (struct sockaddr *)&at, sizeof(at)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&at, &len) != 0)
		die("listen on 127.0.0.1");
	struct stat source_st;
	if (stat(source, &source_st) != 0) /* before the fork: a missing source must not leave us waiting */
		die(source);
	double started = now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(l);
		sender(&at, source);
	}
	/* Wait for the sender's connection, but not for a sender that already died or never comes (30 s) */
	for (int waited_ms = 0;; waited_ms += 100) {
		struct pollfd p = {.fd = l, .events = POLLIN};
		int status;
		if (poll(&p, 1, 100) == 1)
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "tcp-copy: the sender process ended before it connected\n");
			return 1;
		}
		if (waited_ms >= 30000) {
			kill(pid, SIGKILL);
			fprintf(stderr, "tcp-copy: no sender connected within 30 s\n");
			return 1;
		}
	}
	int s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	close(l);
	snprintf(temp, sizeof(temp), "%s.tcp-copy-%d", target, (int)getpid());
	int out = open(temp, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (out < 0)
		die(temp);
	char *buf = malloc(buffer);
	if (!buf)
		die("malloc");
	struct written w = {0};
	for (;;) {
		ssize_t n = read(s, buf, buffer);
		if (n < 0)
			die("read");
		if (n == 0)
			break;
		for (ssize_t put = 0; put < n;) {
			ssize_t w = write(out, buf + put, (size_t)(n - put));
			if (w <= 0)
				die("write");
			put += w;
		}
		wrote(out, &w, (uint64_t)n);
	}
	uint64_t bytes = w.bytes;
	struct stat st;
	if (stat(source, &st) != 0)
		die(source);
	if (bytes != (uint64_t)st.st_size) {
		fprintf(stderr, "tcp-copy: received %" PRIu64 " of %lld bytes: the sender ended early\n", bytes, (long long)st.st_size);
		unlink(temp);
		return 1;
	}
	commit(out, target);
	double seconds = now() - started;
	if (write(s, "k", 1) != 1)
		die("acknowledging");
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tcp-copy: the sender process failed\n");
		return 1;
	}
	printf("{\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"bytesPerSecond\":%.0f,"
	       "\"senderUserSeconds\":%.6f,\"senderSystemSeconds\":%.6f,"
	       "\"receiverUserSeconds\":%.6f,\"receiverSystemSeconds\":%.6f}\n",
	       bytes, seconds, seconds > 0 ? (double)bytes / seconds : 0.0, cpu_seconds(RUSAGE_CHILDREN, 1),
	       cpu_seconds(RUSAGE_CHILDREN, 0), cpu_seconds(RUSAGE_SELF, 1), cpu_seconds(RUSAGE_SELF, 0));
	return 0;
}
