/*
 * copy-floor: the least work a verified two-process file copy must do on this machine, in C, without DOCA.
 * It is the floor for dma-copy (issue 29): what dma-copy can at best reach on these cores with its check on.
 *
 *   copy-floor SOURCE TARGET CHUNK SLOTS sha|nosha [direct]
 *
 * The sender (a child process) reads SOURCE in CHUNK-byte pieces into a window of SLOTS slots in its own memory and
 * feeds each piece to one running SHA-256 (dma-copy's end-to-end digest). The receiver (this process) copies each
 * piece out of the sender's window with process_vm_readv (the software device's DMA is that one cross-process copy),
 * hands the slot back at once, hashes its copy, pwrites it into a temporary file beside TARGET (starting writeback
 * every 64 MiB, as dma-copy's receiver does), and at the end compares digests, fsyncs and renames. Slots travel over
 * a socketpair (dma-copy's window messages go over Comch). "nosha" skips both hashes: the difference is what
 * SHA-256 costs; "direct" makes the receiver write with O_DIRECT, around the page cache (an experiment: the tasks
 * write through the page cache). Prints one JSON line: bytes, seconds (fork to rename), bytesPerSecond, sha256, and
 * the user and system CPU seconds of the sender and of the receiver: on two cores, the busier one bounds the copy.
 * Exit 0 when copied, 2 for bad arguments, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COPY_NAME "copy-floor"
#include "copy-common.h"

/* "direct": the receiver writes with O_DIRECT (no page cache), in pieces aligned to this */
#define DIRECT_ALIGN 4096
/* The receiver's last message: the file is committed (the sender may exit). */
#define COMMITTED UINT32_MAX

/* One message either way: sender → receiver "slot holds len bytes at offset" (len 0: end, digest follows);
 * receiver → sender "slot is free again". */
struct slot_msg {
	uint64_t addr;
	uint64_t offset;
	uint32_t slot;
	uint32_t len;
	unsigned char digest[32];
};

static void send_msg(int fd, const struct slot_msg *m)
{
	if (send(fd, m, sizeof(*m), MSG_NOSIGNAL) != (ssize_t)sizeof(*m))
		die("send");
}

static void recv_msg(int fd, struct slot_msg *m)
{
	ssize_t n = recv(fd, m, sizeof(*m), 0);
	if (n == 0) {
		fprintf(stderr, "copy-floor: the peer process ended early\n");
		if (temp[0])
			unlink(temp);
		exit(1);
	}
	if (n != (ssize_t)sizeof(*m))
		die("recv");
}

static EVP_MD_CTX *sha_start(int hashing)
{
	if (!hashing)
		return NULL;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		fprintf(stderr, "copy-floor: EVP SHA-256 init failed\n");
		exit(1);
	}
	return ctx;
}

static void sha_finish(EVP_MD_CTX *ctx, unsigned char out[32])
{
	memset(out, 0, 32);
	if (!ctx)
		return;
	unsigned int len = 0;
	EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
}

static void sender(int sock, const char *source, uint64_t chunk, uint32_t slots, int hashing)
{
	struct stat st;
	int fd = open_source(source, &st);
	unsigned char *window = malloc(chunk * slots);
	if (!window)
		die("malloc window");
	EVP_MD_CTX *sha = sha_start(hashing);
	uint64_t size = (uint64_t)st.st_size, offset = 0, sent = 0;
	struct slot_msg m;
	for (; offset < size; sent++) {
		uint32_t slot = (uint32_t)(sent % slots);
		if (sent >= slots)
			recv_msg(sock, &m); /* a slot came back; slots come back in order */
		uint32_t len = (uint32_t)(size - offset < chunk ? size - offset : chunk);
		unsigned char *at = window + (uint64_t)slot * chunk;
		for (uint32_t got = 0; got < len;) {
			ssize_t n = pread(fd, at + got, len - got, (off_t)(offset + got));
			if (n <= 0)
				die("pread");
			got += (uint32_t)n;
		}
		if (sha)
			EVP_DigestUpdate(sha, at, len);
		memset(&m, 0, sizeof(m));
		m.addr = (uint64_t)(uintptr_t)at;
		m.offset = offset;
		m.slot = slot;
		m.len = len;
		send_msg(sock, &m);
		offset += len;
	}
	memset(&m, 0, sizeof(m));
	sha_finish(sha, m.digest);
	send_msg(sock, &m);
	do /* the slots still coming back, then the receiver's last word: it has committed */
		recv_msg(sock, &m);
	while (m.slot != COMMITTED);
	exit(0);
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc > 7 || (strcmp(argv[5], "sha") != 0 && strcmp(argv[5], "nosha") != 0) ||
	    (argc == 7 && strcmp(argv[6], "direct") != 0)) {
		fprintf(stderr, "usage: copy-floor SOURCE TARGET CHUNK SLOTS sha|nosha [direct]\n");
		return 2;
	}
	int direct = argc == 7;
	const char *source = argv[1], *target = argv[2];
	uint64_t chunk = strtoull(argv[3], NULL, 10);
	uint32_t slots = (uint32_t)strtoul(argv[4], NULL, 10);
	int hashing = strcmp(argv[5], "sha") == 0;
	if (chunk == 0 || chunk > (1ULL << 30) || slots == 0 || slots > 1024 || (direct && chunk % DIRECT_ALIGN)) {
		fprintf(stderr, "copy-floor: CHUNK must be 1..2^30 (with direct: a multiple of %d) and SLOTS 1..1024\n", DIRECT_ALIGN);
		return 2;
	}
	int socks[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, socks) != 0)
		die("socketpair");
	double started = now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(socks[0]);
		sender(socks[1], source, chunk, slots, hashing);
	}
	close(socks[1]);
	int sock = socks[0];

	snprintf(temp, sizeof(temp), "%s.copy-floor-%d", target, (int)getpid());
	int out = open(temp, O_WRONLY | O_CREAT | O_EXCL | (direct ? O_DIRECT : 0), 0644);
	if (out < 0)
		die(temp);
	unsigned char *mine = NULL;
	if (posix_memalign((void **)&mine, DIRECT_ALIGN, chunk) != 0)
		die("posix_memalign");
	EVP_MD_CTX *sha = sha_start(hashing);
	struct written w = {0};
	struct slot_msg m;
	for (;;) {
		recv_msg(sock, &m);
		if (m.len == 0)
			break;
		struct iovec local = {mine, m.len}, remote = {(void *)(uintptr_t)m.addr, m.len};
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)m.len)
			die("process_vm_readv");
		struct slot_msg back = {.slot = m.slot};
		send_msg(sock, &back); /* the slot is the sender's again before we hash and write */
		if (sha)
			EVP_DigestUpdate(sha, mine, m.len);
		if (direct && m.len % DIRECT_ALIGN && fcntl(out, F_SETFL, 0) != 0) /* the file's unaligned tail */
			die("fcntl");
		for (uint32_t put = 0; put < m.len;) {
			ssize_t n = pwrite(out, mine + put, m.len - put, (off_t)(m.offset + put));
			if (n <= 0)
				die("pwrite");
			put += (uint32_t)n;
		}
		wrote(out, &w, m.len);
	}
	uint64_t bytes = w.bytes;
	unsigned char digest[32];
	sha_finish(sha, digest);
	if (memcmp(digest, m.digest, 32) != 0) {
		unlink(temp);
		temp[0] = 0;
		fprintf(stderr, "copy-floor: SHA-256 mismatch: the copy differs from the source\n");
		return 1;
	}
	commit(out, target);
	double seconds = now() - started;
	struct slot_msg done = {.slot = COMMITTED};
	send_msg(sock, &done);
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "copy-floor: the sender process failed\n");
		return 1;
	}
	char hex[65] = "";
	for (int i = 0; i < 32 && hashing; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	printf("{\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"bytesPerSecond\":%.0f,\"sha256\":\"%s\","
	       "\"senderUserSeconds\":%.6f,\"senderSystemSeconds\":%.6f,"
	       "\"receiverUserSeconds\":%.6f,\"receiverSystemSeconds\":%.6f}\n",
	       bytes, seconds, seconds > 0 ? (double)bytes / seconds : 0.0, hex, cpu_seconds(RUSAGE_CHILDREN, 1),
	       cpu_seconds(RUSAGE_CHILDREN, 0), cpu_seconds(RUSAGE_SELF, 1), cpu_seconds(RUSAGE_SELF, 0));
	return 0;
}
