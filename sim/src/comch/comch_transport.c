/*
 * Comch socket transport: see comch_transport.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "comch_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* FNV-1a: a stable, dependency-free way to turn any server name into a fixed-size file name part */
static uint64_t fnv1a64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s != '\0'; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

int comch_server_path(char *out, size_t cap, const char *dir, const char *rep_pci, const char *name)
{
	char pci[16];
	size_t i;
	int n;

	/* ':' is legal in file names but awkward in shells; keep the path readable and safe */
	for (i = 0; rep_pci[i] != '\0' && i + 1 < sizeof(pci); i++)
		pci[i] = rep_pci[i] == ':' ? '_' : rep_pci[i];
	pci[i] = '\0';
	/* The name is hashed: names may hold any byte and be longer than a socket path allows */
	n = snprintf(out, cap, "%s/comch-%s-%016llx.sock", dir, pci, (unsigned long long)fnv1a64(name));
	if (n < 0 || (size_t)n >= cap || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

static int fill_addr(struct sockaddr_un *addr, const char *path)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr->sun_path))
		return -ENAMETOOLONG;
	strcpy(addr->sun_path, path);
	return 0;
}

/* A non-blocking seqpacket socket for path, whose address goes to *addr: the socket, or a negative errno */
static int path_socket(const char *path, struct sockaddr_un *addr)
{
	int fd, rc = fill_addr(addr, path);

	if (rc != 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

int comch_listen(const char *path)
{
	struct sockaddr_un addr;
	int fd = path_socket(path, &addr), rc;

	if (fd < 0)
		return fd;
	/* A previous server that died leaves its socket file behind */
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 64) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int comch_accept(int listen_fd)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return fd;
}

int comch_connect(const char *path)
{
	struct sockaddr_un addr;
	int fd = path_socket(path, &addr), rc;

	if (fd < 0)
		return fd;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		rc = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int comch_data_socketpair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	return 0;
}

static int send_errno(void)
{
	if (errno == EWOULDBLOCK || errno == EAGAIN || errno == ENOBUFS)
		return -EAGAIN;
	return -errno;
}

int comch_send_frame(int fd, uint8_t kind, uint32_t id, const void *payload, uint32_t len, int pass_fd)
{
	struct comch_frame_hdr hdr = {.magic = COMCH_FRAME_MAGIC, .kind = kind, .id = id, .payload_len = len};
	struct iovec iov[2] = {{.iov_base = &hdr, .iov_len = sizeof(hdr)}, {.iov_base = (void *)payload, .iov_len = len}};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1};

	if (pass_fd >= 0) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	/* MSG_NOSIGNAL: a dead peer must become an error code, not a SIGPIPE that kills the caller */
	if (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return send_errno();
	return 0;
}

/*
 * recvmsg for a SOCK_SEQPACKET socket whose peer may have closed. A peer that closes while messages it was sent are
 * still unread on its side makes the kernel report ECONNRESET once, *before* the frames that peer sent earlier and
 * that are still queued here. Those frames were sent and completed on the peer's side (a failure reason, a final
 * status), so they must still be delivered: read again past the one-time report; the end of the stream (0) comes
 * after them.
 */
static ssize_t recvmsg_past_reset(int fd, struct msghdr *msg, int flags)
{
	ssize_t n = recvmsg(fd, msg, flags);

	if (n < 0 && errno == ECONNRESET) {
		n = recvmsg(fd, msg, flags);
		if (n < 0 && errno == EWOULDBLOCK)
			errno = ECONNRESET;
	}
	return n;
}

/* Keeps at most one passed descriptor, closing anything else a (possibly hostile) peer attached */
static int take_passed_fd(struct msghdr *msg, int keep)
{
	struct cmsghdr *cm;
	int kept = -1;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		size_t n, i;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (keep && kept < 0)
				kept = fd;
			else
				close(fd);
		}
	}
	return kept;
}

static int hdr_is_valid(const struct comch_frame_hdr *hdr)
{
	return hdr->magic == COMCH_FRAME_MAGIC && hdr->reserved == 0 && hdr->kind >= COMCH_FRAME_HELLO &&
	       hdr->kind <= COMCH_FRAME_DATA;
}

ssize_t comch_recv_frame(int fd, struct comch_frame_hdr *hdr, void *payload, uint32_t cap, int *recv_fd)
{
	struct iovec iov[2] = {{.iov_base = hdr, .iov_len = sizeof(*hdr)}, {.iov_base = payload, .iov_len = cap}};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} control;
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf)};
	ssize_t n;
	int passed;

	*recv_fd = -1;
	n = recvmsg_past_reset(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -ECONNRESET;
	passed = take_passed_fd(&msg, n >= (ssize_t)sizeof(*hdr) && hdr->kind == COMCH_FRAME_CONSUMER_NEW);
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || n < (ssize_t)sizeof(*hdr) || !hdr_is_valid(hdr) ||
	    hdr->kind == COMCH_FRAME_DATA || hdr->imm_len != 0 ||
	    (size_t)n - sizeof(*hdr) != (size_t)hdr->payload_len) {
		if (passed >= 0)
			close(passed);
		return -EPROTO;
	}
	*recv_fd = passed;
	return (ssize_t)hdr->payload_len;
}

int comch_send_data(int fd, uint32_t producer_id, const uint8_t *imm, uint32_t imm_len, const void *data,
		    uint32_t len)
{
	struct comch_frame_hdr hdr = {
		.magic = COMCH_FRAME_MAGIC, .kind = COMCH_FRAME_DATA, .imm_len = (uint8_t)imm_len, .id = producer_id,
		.payload_len = len};
	uint8_t slot[COMCH_MAX_IMM_DATA] = {0};
	struct iovec iov[3] = {{.iov_base = &hdr, .iov_len = sizeof(hdr)},
			       {.iov_base = slot, .iov_len = sizeof(slot)},
			       {.iov_base = (void *)data, .iov_len = len}};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len > 0 ? 3 : 2};

	if (imm_len > COMCH_MAX_IMM_DATA)
		return -EINVAL;
	if (imm_len > 0)
		memcpy(slot, imm, imm_len);
	if (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return send_errno();
	return 0;
}

ssize_t comch_recv_data(int fd, uint32_t *producer_id, uint8_t imm[COMCH_MAX_IMM_DATA], uint32_t *imm_len, void *dst,
			size_t cap)
{
	struct comch_frame_hdr hdr;
	struct iovec iov[3] = {{.iov_base = &hdr, .iov_len = sizeof(hdr)},
			       {.iov_base = imm, .iov_len = COMCH_MAX_IMM_DATA},
			       {.iov_base = dst, .iov_len = cap}};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = cap > 0 ? 3 : 2};
	ssize_t n;

	n = recvmsg_past_reset(fd, &msg, MSG_DONTWAIT);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -ECONNRESET;
	if (n < (ssize_t)COMCH_DATA_PREFIX_LEN || !hdr_is_valid(&hdr) || hdr.kind != COMCH_FRAME_DATA ||
	    hdr.imm_len > COMCH_MAX_IMM_DATA)
		return -EPROTO;
	if ((msg.msg_flags & MSG_TRUNC) != 0)
		return -EMSGSIZE;
	if ((size_t)n - COMCH_DATA_PREFIX_LEN != (size_t)hdr.payload_len)
		return -EPROTO;
	*producer_id = hdr.id;
	*imm_len = hdr.imm_len;
	return (ssize_t)hdr.payload_len;
}
