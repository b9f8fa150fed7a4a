/*
 * Software DOCA device, libdoca_rdma: one socket of a connection, on its way out. Sending is non-blocking and
 * resumable (a frame leaves in as many pieces as the socket takes), and closing is graceful. Kept apart from the
 * I/O thread (rdma_io.c) and the connection objects (rdma_conn.c) because both close sockets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdma_internal.h"

static const uint8_t zeros[64 * 1024];

uint64_t rdma_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void rdma_sock_init(struct rdma_sock *sock, int fd)
{
	memset(sock, 0, sizeof(*sock));
	sock->fd = fd;
}

/*
 * Before a socket closes: what is already queued (the acknowledgements of requests we served, above all) still
 * leaves, and the close is graceful: we stop writing, then read and drop what the peer still sends until it closes
 * too, 200 ms at most in all. A NIC acknowledges a request as soon as it lands, whatever the application does next;
 * without the flush a responder that stops right after its receive completed fails the requester's finished send,
 * and closing with unread input makes the kernel reset the connection, which destroys the acknowledgement that is
 * already on its way.
 */
void rdma_sock_linger(struct rdma_sock *s)
{
	uint64_t deadline = rdma_now_ms() + 200;
	char sink[4096];
	while (s->fd >= 0 && s->out_head != NULL && rdma_sock_flush(s) && s->out_head != NULL) {
		uint64_t now = rdma_now_ms();
		struct pollfd p = { .fd = s->fd, .events = POLLOUT };
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0)
			break;
	}
	if (s->fd < 0 || shutdown(s->fd, SHUT_WR) != 0)
		return;
	for (;;) {
		uint64_t now = rdma_now_ms();
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0)
			return;
		if (recv(s->fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			return; /* the peer closed (or is gone) */
	}
}

bool rdma_sock_flush(struct rdma_sock *s)
{
	while (s->out_head != NULL) {
		struct rdma_out *o = s->out_head;
		size_t total = sizeof(o->hdr) + o->hdr.len;
		ssize_t n;
		if (o->sent < sizeof(o->hdr)) {
			n = send(s->fd, (const char *)&o->hdr + o->sent, sizeof(o->hdr) - o->sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL | (o->hdr.len ? MSG_MORE : 0));
		} else {
			size_t off = o->sent - sizeof(o->hdr), chunk = total - o->sent;
			const uint8_t *from;
			void *local = NULL;
			bool bracketed = false;
			if (chunk > RDMA_IO_CHUNK)
				chunk = RDMA_IO_CHUNK;
			if (o->key != 0) {
				/* Our exported memory: re-validated for every piece; revoked mid-way sends zeros and the
				 * trailing ACK says the read failed */
				if (sim_rdma_access_begin(o->key, (uint64_t)(uintptr_t)o->payload + off, chunk,
							  DOCA_ACCESS_FLAG_RDMA_READ, &local) == DOCA_SUCCESS) {
					bracketed = true;
					from = local;
				} else {
					if (chunk > sizeof(zeros))
						chunk = sizeof(zeros);
					from = zeros;
					o->hdr.status = DOCA_ERROR_NOT_PERMITTED; /* remembered for the trailing ACK */
				}
			} else if (o->seg != NULL) {
				/* gathered from a local buffer list: the current element's unsent data */
				size_t left = 0;
				from = rdma_list_next_data(&o->seg, &o->seg_off, &left);
				if (from == NULL) /* the list shrank under us (its owner changed it while in flight) */
					return false;
				if (chunk > left)
					chunk = left;
			} else {
				from = o->payload + off;
			}
			n = send(s->fd, from, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (bracketed)
				sim_rdma_access_end();
			if (n > 0 && o->seg != NULL)
				o->seg_off += (size_t)n;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		o->sent += (size_t)n;
		if (o->sent < total)
			continue;
		s->out_head = o->next;
		if (s->out_head == NULL)
			s->out_tail = NULL;
		if (o->hdr.op == OP_READ_RESP) {
			/* the verdict for the bytes just sent */
			struct rdma_out *ack = calloc(1, sizeof(*ack));
			if (ack != NULL) {
				rdma_frame_init(&ack->hdr, OP_ACK);
				ack->hdr.id = o->hdr.id;
				ack->hdr.status = o->hdr.status;
				ack->next = s->out_head;
				s->out_head = ack;
				if (s->out_tail == NULL)
					s->out_tail = ack;
			}
		}
		free(o);
	}
	return true;
}
