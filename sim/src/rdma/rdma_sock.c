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
#include <sys/uio.h>
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
 * already on its way. The I/O thread does it alongside its other sockets (it once waited for it with the lock held,
 * freezing the application's progress and API calls for up to 200 ms per closed connection).
 */

/* Frames a closing socket still sends from a task's memory are copied, up to this much in all; past it they are cut */
#define RDMA_CLOSING_COPY_MAX (256u * 1024)

static void out_free(struct rdma_out *o)
{
	free(o->owned);
	free(o);
}

static void free_queue(struct rdma_out *o)
{
	while (o != NULL) {
		struct rdma_out *next = o->next;
		out_free(o);
		o = next;
	}
}

/*
 * Gives a frame whose payload is a task's memory (a send or write we issued) a copy of what it has not sent yet: the
 * task fails with the close and hands its buffer back, while the frame may still leave, as a NIC sends what was
 * posted before the disconnection. False when the copy would pass `budget` (the frame is then cut).
 */
static bool own_payload(struct rdma_out *o, size_t *budget)
{
	size_t off = o->sent > sizeof(o->hdr) ? o->sent - sizeof(o->hdr) : 0, len = o->hdr.len;
	if (o->key != 0 || o->owned != NULL || o->payload == o->small || (o->payload == NULL && o->seg == NULL) ||
	    len == 0)
		return true; /* its own bytes, or our exported memory (re-validated per piece) */
	if (len > *budget || (o->owned = malloc(len)) == NULL)
		return false;
	*budget -= len;
	if (o->seg != NULL) {
		const struct doca_buf *seg = o->seg;
		size_t seg_off = o->seg_off, at = off, left = 0;
		const uint8_t *from;
		while (at < len && (from = rdma_list_next_data(&seg, &seg_off, &left)) != NULL) {
			size_t n = left < len - at ? left : len - at;
			memcpy(o->owned + at, from, n);
			at += n;
			seg_off += n;
		}
		if (at < len)
			return false; /* the list shrank under us: the frame cannot be completed */
		o->seg = NULL;
	} else {
		memcpy(o->owned + off, o->payload + off, len - off);
	}
	o->payload = o->owned;
	return true;
}

void rdma_sock_app_release(struct doca_rdma *rdma, struct rdma_sock *s)
{
	if (!s->app_read)
		return;
	s->app_read = false;
	if (rdma->ctx.pe != NULL)
		sim_pe_unwatch_fd(rdma->ctx.pe, s->fd);
}

void rdma_sock_retire(struct doca_rdma *rdma, struct rdma_sock *s)
{
	struct rdma_closing *c;
	struct rdma_out **link;
	size_t budget = RDMA_CLOSING_COPY_MAX;

	rdma_sock_app_release(rdma, s); /* the closing list is the I/O thread's */
	free(s->held); /* read ahead for a request that will not be served any more */
	s->held = NULL;
	s->held_len = 0;
	/* What the socket takes now leaves straight from where it is, while the tasks' memory is still theirs */
	if (s->fd >= 0 && !rdma_sock_flush(s)) {
		close(s->fd);
		s->fd = -1;
	}
	if (s->fd < 0) {
		free_queue(s->out_head);
		s->out_head = s->out_tail = NULL;
		return;
	}
	/* The rest gets its own bytes; from the first frame that cannot, nothing more can be framed: cut there */
	for (link = &s->out_head; *link != NULL && own_payload(*link, &budget); link = &(*link)->next)
		;
	free_queue(*link);
	*link = NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		free_queue(s->out_head);
		close(s->fd);
	} else {
		rdma_sock_init(&c->sock, s->fd);
		c->sock.out_head = s->out_head;
		for (c->sock.out_tail = s->out_head; c->sock.out_tail != NULL && c->sock.out_tail->next != NULL;)
			c->sock.out_tail = c->sock.out_tail->next;
		c->deadline = rdma_now_ms() + 200;
		c->next = rdma->closing;
		rdma->closing = c;
	}
	s->fd = -1;
	s->out_head = s->out_tail = NULL;
}

/*
 * True when the socket is done with (the caller closes it). Input is read and dropped from the start, even while our
 * frames still wait for room: poll reports it until it is read, so leaving it would make the I/O thread spin for the
 * whole 200 ms of a peer that sends but does not read.
 */
static bool closing_step(struct rdma_closing *c, uint64_t now)
{
	char sink[4096];
	if (now >= c->deadline || !rdma_sock_flush(&c->sock))
		return true;
	for (int i = 0; i < 64 && !c->peer_done; i++) {
		ssize_t n = recv(c->sock.fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0)
			c->peer_done = true; /* it may still read what we send: finish sending first */
		else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return true; /* gone */
		else if (n < 0)
			break;
	}
	if (c->sock.out_head != NULL)
		return false;
	if (!c->shut) {
		if (shutdown(c->sock.fd, SHUT_WR) != 0)
			return true;
		c->shut = true;
	}
	return c->peer_done;
}

short rdma_closing_events(const struct rdma_closing *c)
{
	return (short)((c->peer_done ? 0 : POLLIN) | (c->sock.out_head != NULL ? POLLOUT : 0));
}

void rdma_closing_step_all(struct doca_rdma *rdma)
{
	uint64_t now = rdma_now_ms();
	for (struct rdma_closing **link = &rdma->closing; *link != NULL;) {
		struct rdma_closing *c = *link;
		if (!closing_step(c, now)) {
			link = &c->next;
			continue;
		}
		*link = c->next;
		close(c->sock.fd);
		free_queue(c->sock.out_head);
		free(c);
	}
}

void rdma_closing_finish(struct doca_rdma *rdma)
{
	struct pollfd fds[64];
	for (rdma_closing_step_all(rdma); rdma->closing != NULL; rdma_closing_step_all(rdma)) {
		nfds_t n = 0;
		for (struct rdma_closing *c = rdma->closing; c != NULL && n < 64; c = c->next)
			fds[n++] = (struct pollfd){ .fd = c->sock.fd, .events = rdma_closing_events(c) };
		(void)poll(fds, n, 20); /* past 64 sockets, the others are stepped every 20 ms */
	}
}

/* A frame whose payload is plain memory (ours, or a task's single buffer) can be gathered with others into one call */
static bool gatherable(const struct rdma_out *o)
{
	return o->key == 0 && o->seg == NULL;
}

/* A read response's verdict (an ACK carrying the status its pieces gathered), queued right behind it */
static void queue_verdict(struct rdma_sock *s, struct rdma_out *o)
{
	struct rdma_out *ack = calloc(1, sizeof(*ack));
	o->verdict_queued = true;
	if (ack == NULL)
		return; /* the read then waits for a verdict that never comes: bounded by the peer's close */
	rdma_frame_init(&ack->hdr, OP_ACK);
	ack->hdr.id = o->hdr.id;
	ack->hdr.status = o->hdr.status;
	ack->next = o->next;
	o->next = ack;
	if (s->out_tail == o)
		s->out_tail = ack;
}

/* A sent frame leaves the queue; a read response sent piece by piece is followed by its verdict, first in line */
static void frame_sent(struct rdma_sock *s, struct rdma_out *o)
{
	if (o->hdr.op == OP_READ_RESP && !o->verdict_queued)
		queue_verdict(s, o);
	s->out_head = o->next;
	if (s->out_head == NULL)
		s->out_tail = NULL;
	out_free(o);
}

/*
 * A small read response from our exported memory, not started yet, is copied out at once under one bracket (the
 * revocation barrier holds: the copy is the access) and its verdict queued behind it, so both join the gathered call
 * like any plain frame; a large one is sent piece by piece, each piece re-validated, straight from the memory
 */
#define RDMA_READ_COPY_MAX (64u * 1024)

static void materialize(struct rdma_sock *s, struct rdma_out *o)
{
	void *local = NULL;
	if (o->key == 0 || o->sent != 0 || o->hdr.len > RDMA_READ_COPY_MAX ||
	    (o->owned = malloc(o->hdr.len ? o->hdr.len : 1)) == NULL)
		return;
	if (sim_rdma_access_begin(o->key, (uint64_t)(uintptr_t)o->payload, o->hdr.len, DOCA_ACCESS_FLAG_RDMA_READ,
				  &local) == DOCA_SUCCESS) {
		memcpy(o->owned, local, o->hdr.len);
		sim_rdma_access_end();
	} else {
		memset(o->owned, 0, o->hdr.len); /* revoked: zeros, and the verdict says the read failed */
		o->hdr.status = DOCA_ERROR_NOT_PERMITTED;
	}
	o->payload = o->owned;
	o->key = 0;
	if (o->hdr.op == OP_READ_RESP)
		queue_verdict(s, o);
}

/* One piece of the head frame's payload that needs care: our exported memory (re-validated per piece) or a list */
static ssize_t send_special_piece(struct rdma_sock *s, struct rdma_out *o)
{
	size_t off = o->sent - sizeof(o->hdr), chunk = sizeof(o->hdr) + o->hdr.len - o->sent;
	const uint8_t *from;
	void *local = NULL;
	bool bracketed = false;
	ssize_t n;

	if (chunk > RDMA_IO_CHUNK)
		chunk = RDMA_IO_CHUNK;
	if (o->key != 0) {
		/* Our exported memory: re-validated for every piece; revoked mid-way sends zeros and the trailing ACK says
		 * the read failed */
		if (sim_rdma_access_begin(o->key, (uint64_t)(uintptr_t)o->payload + off, chunk, DOCA_ACCESS_FLAG_RDMA_READ,
					  &local) == DOCA_SUCCESS) {
			bracketed = true;
			from = local;
		} else {
			if (chunk > sizeof(zeros))
				chunk = sizeof(zeros);
			from = zeros;
			o->hdr.status = DOCA_ERROR_NOT_PERMITTED; /* remembered for the trailing ACK */
		}
	} else {
		/* gathered from a local buffer list: the current element's unsent data */
		size_t left = 0;
		from = rdma_list_next_data(&o->seg, &o->seg_off, &left);
		if (from == NULL) { /* the list shrank under us (its owner changed it while in flight) */
			errno = EPIPE;
			return -1;
		}
		if (chunk > left)
			chunk = left;
	}
	n = send(s->fd, from, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (bracketed)
		sim_rdma_access_end();
	if (n > 0 && o->seg != NULL)
		o->seg_off += (size_t)n;
	return n;
}

/*
 * Frames go out many per call: the unsent part of every queued frame whose bytes are plain memory is gathered into
 * one sendmsg (small frames, the acknowledgements above all, would otherwise cost a system call each, and a wake-up
 * of the peer each). A frame whose payload needs care (exported memory, a buffer list) ends the gathering after its
 * header and is then sent piece by piece.
 */
#define FLUSH_IOV 64
#define FLUSH_BYTES (4u << 20)

bool rdma_sock_flush(struct rdma_sock *s)
{
	while (s->out_head != NULL) {
		struct rdma_out *o = s->out_head;
		struct iovec iov[FLUSH_IOV];
		struct msghdr msg = { .msg_iov = iov };
		size_t bytes = 0;
		ssize_t n;

		if (o->sent >= sizeof(o->hdr) && !gatherable(o)) {
			n = send_special_piece(s, o);
		} else {
			bool more = false;
			for (; o != NULL && msg.msg_iovlen + 2 <= FLUSH_IOV && bytes < FLUSH_BYTES; o = o->next) {
				size_t at = o->sent;
				materialize(s, o);
				if (at < sizeof(o->hdr)) {
					iov[msg.msg_iovlen++] = (struct iovec){ (char *)&o->hdr + at, sizeof(o->hdr) - at };
					bytes += sizeof(o->hdr) - at;
					at = sizeof(o->hdr);
				}
				if (!gatherable(o)) {
					more = o->hdr.len > 0; /* its payload follows in the next call */
					break;
				}
				if (o->hdr.len > 0) {
					size_t off = at - sizeof(o->hdr), left = o->hdr.len - off;
					if (left > RDMA_IO_CHUNK)
						left = RDMA_IO_CHUNK;
					iov[msg.msg_iovlen++] = (struct iovec){ (void *)(o->payload + off), left };
					bytes += left;
					if (off + left < o->hdr.len)
						break; /* the rest of a large payload in a later call */
				}
			}
			n = sendmsg(s->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0));
		}
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		/* account what left, frame by frame */
		while (n > 0) {
			struct rdma_out *h = s->out_head;
			size_t total = sizeof(h->hdr) + h->hdr.len, take = total - h->sent;
			if (take > (size_t)n)
				take = (size_t)n;
			h->sent += take;
			n -= (ssize_t)take;
			if (h->sent < total)
				break;
			frame_sent(s, h);
		}
	}
	return true;
}
