/*
 * Software DOCA device, libdoca_rdma: the I/O thread of a started RDMA context and the frames it exchanges.
 *
 * Every socket is non-blocking and the thread never waits on a write, so two sides sending large transfers to each
 * other cannot deadlock. Payloads move straight between a socket and the memory they belong to (a submitted task's
 * buffer, or our exported memory resolved by key through sim_rdma_access_begin), with no intermediate copy.
 * Every frame that arrives is untrusted: its header is checked before any byte of payload is read, memory is reached
 * only through our own export table, and a socket speaks only for the connection whose secret it presented.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdma_internal.h"

#define RDMA_MAX_PAYLOAD (1ull << 30)
#define PENDING_MAX 64
#define HANDSHAKE_MS 5000

static uint8_t discard_sink[64 * 1024];

const char *rdma_local_address(void)
{
	const char *a = getenv("DOCA_SIM_RDMA_ADDR");
	return a != NULL && *a != '\0' ? a : "127.0.0.1";
}

const char *rdma_listen_address(void)
{
	const char *a = getenv("DOCA_SIM_RDMA_LISTEN_ADDR");
	return a != NULL && *a != '\0' ? a : NULL;
}

static void tune(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int resolve(const char *address, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char service[8];
	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(address, service, &hints, &res) != 0) {
		errno = EINVAL;
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int rdma_tcp_listen(const char *address, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	if (resolve(address != NULL ? address : "0.0.0.0", port, &ss, &len) < 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int rdma_tcp_connect(const char *address, uint16_t port, int timeout_ms)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct pollfd p;
	int fd, err = 0;
	socklen_t el = sizeof(err);

	if (resolve(address, port, &ss, &len) < 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		if (errno != EINPROGRESS)
			goto fail;
		p = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, timeout_ms) != 1) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err != 0) {
			errno = err ? err : EIO;
			goto fail;
		}
	}
	tune(fd);
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

void rdma_io_wake(struct doca_rdma *rdma)
{
	uint64_t one = 1;
	if (rdma->wake_fd >= 0 && write(rdma->wake_fd, &one, sizeof(one)) < 0) {
		/* saturated: the thread is awake anyway */
	}
}

/*
 * The I/O thread sleeps in poll on the set it built under the lock: whatever was queued before that is in the set
 * (a socket with frames to send is watched for room), so only what is queued while it sleeps needs the eventfd, and
 * only once per sleep
 */
bool rdma_io_claim_wake(struct doca_rdma *rdma)
{
	bool asleep = rdma->io_asleep;
	rdma->io_asleep = false;
	return asleep;
}

void rdma_queue_frame(struct doca_rdma *rdma, struct rdma_sock *sock, const struct rdma_frame *hdr,
		      const void *payload, uint64_t key)
{
	struct rdma_out *o = calloc(1, sizeof(*o));
	(void)rdma;
	if (o == NULL)
		return; /* the request's task then waits for a response that never comes: bounded by the peer's close */
	o->hdr = *hdr;
	o->key = key;
	if (payload != NULL && hdr->len <= sizeof(o->small) && key == 0) {
		memcpy(o->small, payload, hdr->len);
		o->payload = o->small;
	} else {
		o->payload = payload;
	}
	SIM_QUEUE_APPEND(sock->out_head, sock->out_tail, o, next);
}

void rdma_queue_frame_list(struct doca_rdma *rdma, struct rdma_sock *sock, const struct rdma_frame *hdr,
			   const struct doca_buf *list)
{
	rdma_queue_frame(rdma, sock, hdr, NULL, 0);
	if (sock->out_tail != NULL && sock->out_tail->payload == NULL) {
		sock->out_tail->seg = list;
		sock->out_tail->seg_off = 0;
	}
}

static void respond(struct doca_rdma *rdma, struct rdma_sock *s, enum rdma_op op, uint64_t id, doca_error_t status,
		    uint64_t a)
{
	struct rdma_frame f;
	rdma_frame_init(&f, op);
	f.id = id;
	f.status = (uint16_t)status;
	f.a = a;
	rdma_queue_frame(rdma, s, &f, NULL, 0);
}

/* ---------------------------------------------------------------- sending */

/* ---------------------------------------------------------------- receiving */

static struct rdma_task *take_awaiting(struct doca_rdma_connection *c, uint64_t id)
{
	for (struct rdma_task **p = &c->awaiting; *p != NULL; p = &(*p)->wait_next)
		if ((*p)->id == id) {
			struct rdma_task *t = *p;
			*p = t->wait_next;
			return t;
		}
	return NULL;
}

static struct rdma_task *peek_awaiting(struct doca_rdma_connection *c, uint64_t id)
{
	for (struct rdma_task *t = c->awaiting; t != NULL; t = t->wait_next)
		if (t->id == id)
			return t;
	return NULL;
}

static struct rdma_task *pop_receive(struct doca_rdma *rdma)
{
	struct rdma_task *t = rdma->receives_head;
	if (t != NULL) {
		rdma->receives_head = t->wait_next;
		if (rdma->receives_head == NULL)
			rdma->receives_tail = NULL;
	}
	return t;
}

/* Check the whole remote-requested range once before reading any of its payload */
static doca_error_t check_range(struct doca_rdma *rdma, uint64_t key, uint64_t addr, uint64_t len, uint32_t need)
{
	doca_error_t err = sim_rdma_access_check(key, addr, len, need);

	/* an atomic on a memory chain is not offered whatever this context's permissions say: asked of the key first */
	if (err == DOCA_ERROR_NOT_SUPPORTED)
		return err;
	if ((rdma->permissions & need) != need)
		return DOCA_ERROR_NOT_PERMITTED;
	return err;
}

enum begin_result { BEGIN_OK, BEGIN_WAIT, BEGIN_BROKEN };

/* A whole header arrived: decide where its payload goes. */
static enum begin_result begin_frame(struct doca_rdma *rdma, struct doca_rdma_connection *c, struct rdma_sock *s)
{
	struct rdma_frame *f = &s->in;
	struct rdma_task *t;

	if (f->magic != RDMA_FRAME_MAGIC || f->op == 0 || f->op >= OP_COUNT_ || f->len > RDMA_MAX_PAYLOAD)
		return BEGIN_BROKEN;
	s->in_left = f->len;
	s->in_done = 0;
	s->in_dst = NULL;
	s->in_seg = NULL;
	s->in_seg_off = 0;
	s->in_key = 0;
	s->in_status = DOCA_SUCCESS;
	s->in_task = NULL;
	switch (f->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		if (f->op == OP_WRITE_IMM && rdma->receives_head == NULL)
			return BEGIN_WAIT; /* the immediate needs a posted receive: hold the peer back (RNR) */
		s->in_status = check_range(rdma, f->key, f->addr, f->len, DOCA_ACCESS_FLAG_RDMA_WRITE);
		if (s->in_status == DOCA_SUCCESS) {
			s->in_key = f->key;
			s->in_dst = (uint8_t *)(uintptr_t)f->addr;
		}
		return BEGIN_OK;
	case OP_SEND:
	case OP_SEND_IMM:
		if (rdma->receives_head == NULL)
			return BEGIN_WAIT;
		t = pop_receive(rdma);
		s->in_task = t;
		/* a receive without a buffer takes empty messages only; a too small one fails on both sides */
		if (f->len > 0 && (t->dst == NULL || sim_bufs_tail_room(t->dst) < f->len))
			s->in_status = DOCA_ERROR_INVALID_VALUE;
		else
			s->in_seg = t->dst;
		return BEGIN_OK;
	case OP_READ_RESP:
		t = peek_awaiting(c, f->id);
		if (t == NULL || t->kind != RDMA_READ || f->len != t->src->data_len)
			return BEGIN_BROKEN; /* a response nobody asked for, or not the size asked */
		if (sim_bufs_tail_room(t->dst) < f->len) {
			/* the program shrank the destination's room while the read was in flight: a local mistake, it fails
			 * this read only (the bytes are dropped, the ACK completes it with the error) */
			t->local_status = sim_fail(DOCA_ERROR_INVALID_VALUE, "rdma_read: the local destination lost "
										  "its room while the read was in flight");
			return BEGIN_OK;
		}
		s->in_seg = t->dst;
		return BEGIN_OK;
	default:
		return f->len == 0 ? BEGIN_OK : BEGIN_BROKEN; /* control frames carry no payload */
	}
}

static bool end_frame(struct doca_rdma *rdma, struct doca_rdma_connection *c, struct rdma_sock *s)
{
	struct rdma_frame *f = &s->in;
	struct rdma_task *t;
	void *local;

	switch (f->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		if (f->op == OP_WRITE_IMM && s->in_status == DOCA_SUCCESS) {
			t = pop_receive(rdma);
			t->opcode = DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM;
			t->result_imm = f->imm;
			t->result_len = 0;
			t->result_conn = c;
			rdma_finish_task(rdma, t, DOCA_SUCCESS);
		}
		respond(rdma, s, OP_ACK, f->id, s->in_status, 0);
		return true;
	case OP_SEND:
	case OP_SEND_IMM:
		t = s->in_task;
		s->in_task = NULL;
		if (s->in_status == DOCA_SUCCESS) {
			rdma_list_fill(t->dst, f->len);
			t->opcode = f->op == OP_SEND ? DOCA_RDMA_OPCODE_RECV_SEND : DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM;
			t->result_imm = f->imm;
			t->result_len = f->len;
			t->result_conn = c;
		}
		rdma_finish_task(rdma, t, s->in_status);
		respond(rdma, s, OP_ACK, f->id, s->in_status, 0);
		return true;
	case OP_READ_REQ: {
		struct rdma_frame r;
		doca_error_t err = f->a > RDMA_MAX_PAYLOAD ? DOCA_ERROR_INVALID_VALUE
							   : check_range(rdma, f->key, f->addr, f->a, DOCA_ACCESS_FLAG_RDMA_READ);
		rdma_frame_init(&r, OP_READ_RESP);
		r.id = f->id;
		if (err != DOCA_SUCCESS) {
			respond(rdma, s, OP_ACK, f->id, err, 0);
			return true;
		}
		r.len = (uint32_t)f->a;
		if (f->a != r.len) {
			respond(rdma, s, OP_ACK, f->id, DOCA_ERROR_INVALID_VALUE, 0);
			return true;
		}
		rdma_queue_frame(rdma, s, &r, (const void *)(uintptr_t)f->addr, f->key);
		return true;
	}
	case OP_CAS:
	case OP_FADD: {
		doca_error_t err = f->addr % 8 != 0 ? DOCA_ERROR_INVALID_VALUE
						     : check_range(rdma, f->key, f->addr, 8, DOCA_ACCESS_FLAG_RDMA_ATOMIC);
		uint64_t old = 0;
		if (err == DOCA_SUCCESS &&
		    sim_rdma_access_begin(f->key, f->addr, 8, DOCA_ACCESS_FLAG_RDMA_ATOMIC, &local) == DOCA_SUCCESS) {
			uint64_t *word = local;
			if (f->op == OP_CAS) {
				old = f->a;
				if (!__atomic_compare_exchange_n(word, &old, f->b, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
					/* old now holds the value found */
				}
			} else {
				old = __atomic_fetch_add(word, f->a, __ATOMIC_SEQ_CST);
			}
			sim_rdma_access_end();
		} else if (err == DOCA_SUCCESS) {
			err = DOCA_ERROR_NOT_PERMITTED;
		}
		if (err != DOCA_SUCCESS)
			respond(rdma, s, OP_ACK, f->id, err, 0);
		else
			respond(rdma, s, OP_ATOMIC_RESP, f->id, DOCA_SUCCESS, old);
		return true;
	}
	case OP_SE_GET:
	case OP_SE_SET: {
		/* a sync event we exported: the word is read or set atomically, never torn, as the CPU side waits on it */
		uint32_t need = f->op == OP_SE_GET ? DOCA_ACCESS_FLAG_RDMA_READ : DOCA_ACCESS_FLAG_RDMA_WRITE;
		doca_error_t err = f->addr % 8 != 0 ? DOCA_ERROR_INVALID_VALUE : check_range(rdma, f->key, f->addr, 8, need);
		uint64_t value = 0;
		if (err == DOCA_SUCCESS && sim_rdma_access_begin(f->key, f->addr, 8, need, &local) == DOCA_SUCCESS) {
			if (f->op == OP_SE_GET)
				value = __atomic_load_n((uint64_t *)local, __ATOMIC_ACQUIRE);
			else
				__atomic_store_n((uint64_t *)local, f->a, __ATOMIC_RELEASE);
			sim_rdma_access_end();
		} else if (err == DOCA_SUCCESS) {
			err = DOCA_ERROR_NOT_PERMITTED;
		}
		if (err != DOCA_SUCCESS || f->op == OP_SE_SET)
			respond(rdma, s, OP_ACK, f->id, err, 0);
		else
			respond(rdma, s, OP_ATOMIC_RESP, f->id, DOCA_SUCCESS, value);
		return true;
	}
	case OP_READ_RESP:
		/* the bytes are in; the trailing ACK completes the read */
		return true;
	case OP_ATOMIC_RESP:
		t = take_awaiting(c, f->id);
		if (t == NULL || (t->kind != RDMA_CAS && t->kind != RDMA_FADD && t->kind != RDMA_SE_GET &&
				  t->kind != RDMA_SE_ADD))
			return false;
		memcpy((uint8_t *)t->result->data + t->result->data_len, &f->a, sizeof(f->a));
		t->result->data_len += sizeof(f->a);
		t->result_len = sizeof(f->a);
		rdma_finish_task(rdma, t, DOCA_SUCCESS);
		return true;
	case OP_ACK:
		t = take_awaiting(c, f->id);
		if (t == NULL)
			return false;
		if (f->status == DOCA_SUCCESS && t->kind == RDMA_READ && t->local_status != DOCA_SUCCESS) {
			rdma_finish_task(rdma, t, t->local_status);
			return true;
		}
		if (f->status == DOCA_SUCCESS) {
			if (t->kind == RDMA_WRITE || t->kind == RDMA_WRITE_IMM)
				t->dst->data_len += t->len;
			else if (t->kind == RDMA_READ)
				rdma_list_fill(t->dst, t->src->data_len);
		}
		rdma_finish_task(rdma, t, f->status <= DOCA_ERROR_DEVICE_FATAL_ERROR ? (doca_error_t)f->status
										      : DOCA_ERROR_IO_FAILED);
		return true;
	case OP_ACCEPT:
		if (!c->cm || c->state != CONN_CONNECTING)
			return false;
		c->state = CONN_CONNECTED;
		rdma_queue_event(rdma, EV_ESTABLISHED, c);
		return true;
	case OP_REJECT:
	case OP_DISCONNECT:
		rdma_conn_close(rdma, c, DOCA_ERROR_CONNECTION_RESET);
		return true;
	default:
		return false; /* HELLO frames belong to the handshake only */
	}
}

/*
 * Payload bytes already read ahead (into the I/O thread's stage) go where the frame's payload belongs: our exported
 * memory (re-validated, as a direct read is), a local destination list's free tails, or nowhere (a refused request)
 */
static void place(struct rdma_sock *s, const uint8_t *from, size_t n)
{
	if (s->in_dst != NULL && s->in_key != 0) {
		void *to = NULL;
		if (sim_rdma_access_begin(s->in_key, (uint64_t)(uintptr_t)s->in_dst + s->in_done, n,
					  DOCA_ACCESS_FLAG_RDMA_WRITE, &to) == DOCA_SUCCESS) {
			memcpy(to, from, n);
			/* a memory chain's bytes go on to the exporting host here (mmap_chain.c), as in read_sock */
			doca_error_t w = sim_rdma_access_end_written(n);
			if (w != DOCA_SUCCESS) {
				s->in_status = w;
				s->in_dst = NULL;
			}
		} else {
			s->in_status = DOCA_ERROR_NOT_PERMITTED; /* revoked mid-way: the rest is dropped */
			s->in_dst = NULL;
		}
	} else if (s->in_dst != NULL) {
		memcpy(s->in_dst + s->in_done, from, n);
	} else {
		size_t at = 0;
		while (at < n && s->in_seg != NULL) {
			size_t left = 0, k;
			uint8_t *to = rdma_list_next_room(&s->in_seg, &s->in_seg_off, &left);
			if (to == NULL)
				break; /* no room left: the rest is dropped */
			k = left < n - at ? left : n - at;
			memcpy(to, from + at, k);
			s->in_seg_off += k;
			at += k;
		}
	}
	s->in_done += n;
	s->in_left -= n;
}

/* Read-ahead bytes a stalled socket could not use yet are kept with it until a receive is posted */
static void hold(struct rdma_sock *s, const uint8_t *buf, size_t len)
{
	if (len == 0)
		return;
	s->held = malloc(len);
	if (s->held == NULL)
		return; /* then the connection's stream is broken: the peer's later frames fail its checks */
	memcpy(s->held, buf, len);
	s->held_len = len;
}

/*
 * Read what the socket has; false when the connection must close. Headers are read many at a time into `stage`
 * (small frames, the acknowledgements above all, cost a system call each otherwise); a payload larger than what came
 * with its header is read straight where it belongs. A header read that returned less than asked emptied the socket,
 * so no second call is made just to hear EAGAIN (poll says when more arrives); a large payload is read until EAGAIN,
 * as it streams in while we copy.
 */
static bool read_sock(struct doca_rdma *rdma, struct doca_rdma_connection *c, struct rdma_sock *s, uint8_t *stage)
{
	const uint8_t *buf = stage;
	size_t len = 0;
	bool drained = false;

	if (s->held != NULL) {
		memcpy(stage, s->held, s->held_len);
		len = s->held_len;
		free(s->held);
		s->held = NULL;
		s->held_len = 0;
	}
	for (;;) {
		ssize_t n;
		if (s->stalled) {
			enum begin_result b = begin_frame(rdma, c, s);
			if (b == BEGIN_WAIT) {
				/* We read nothing while a send waits for a receive, but a peer that hung up meanwhile ends
				 * the connection (its slot and socket would otherwise stay taken for as long as no
				 * receive is posted) */
				struct pollfd p = { .fd = s->fd, .events = POLLRDHUP };
				hold(s, buf, len);
				return !(poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
			}
			if (b == BEGIN_BROKEN)
				return false;
			s->stalled = false;
		} else if (s->in_got < sizeof(s->in)) {
			size_t take;
			if (len == 0) {
				if (drained)
					return true;
				/* After a large frame, large ones likely follow: the header alone, its payload then straight
				 * where it belongs (staging would copy the payload's first 64 KiB once more) */
				size_t ask = s->last_len >= RDMA_STAGE_BYTES ? sizeof(s->in) - s->in_got : RDMA_STAGE_BYTES;
				n = recv(s->fd, stage, ask, MSG_DONTWAIT);
				if (n == 0) {
					s->eof = true;
					return false;
				}
				if (n < 0)
					return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
				buf = stage;
				len = (size_t)n;
				drained = len < ask;
			}
			take = sizeof(s->in) - s->in_got < len ? sizeof(s->in) - s->in_got : len;
			memcpy((char *)&s->in + s->in_got, buf, take);
			buf += take;
			len -= take;
			s->in_got += take;
			if (s->in_got < sizeof(s->in))
				continue;
			enum begin_result b = begin_frame(rdma, c, s);
			if (b == BEGIN_BROKEN)
				return false;
			if (b == BEGIN_WAIT) {
				s->stalled = true;
				hold(s, buf, len);
				return true;
			}
		}
		if (s->in_left > 0 && len > 0) {
			size_t take = s->in_left < len ? (size_t)s->in_left : len;
			place(s, buf, take);
			buf += take;
			len -= take;
		}
		if (s->in_left > RDMA_STAGE_BYTES && s->app_read) {
			/* A large payload (a read's data) streams in while the application does other work: the I/O thread
			 * reads it, as a NIC places it, and progress takes the socket back once the frame is in */
			rdma_sock_app_release(rdma, s);
			return true;
		}
		if (s->in_left > 0) {
			size_t chunk = s->in_left > RDMA_IO_CHUNK ? RDMA_IO_CHUNK : (size_t)s->in_left;
			void *to = NULL;
			bool bracketed = false, into_seg = false;
			if (drained)
				return true; /* the header read emptied the socket: the rest of the payload is not in yet */
			if (s->in_dst != NULL && s->in_key != 0) {
				if (sim_rdma_access_begin(s->in_key, (uint64_t)(uintptr_t)s->in_dst + s->in_done, chunk,
							  DOCA_ACCESS_FLAG_RDMA_WRITE, &to) == DOCA_SUCCESS) {
					bracketed = true;
				} else {
					s->in_status = DOCA_ERROR_NOT_PERMITTED; /* revoked mid-way: the rest is dropped */
					s->in_dst = NULL;
				}
			} else if (s->in_dst != NULL) {
				to = s->in_dst + s->in_done;
			} else if (s->in_seg != NULL) {
				/* a local destination list: the current element's free tail */
				size_t left = 0;
				to = rdma_list_next_room(&s->in_seg, &s->in_seg_off, &left);
				if (to != NULL && chunk > left)
					chunk = left;
				into_seg = to != NULL;
			}
			if (to == NULL) {
				to = discard_sink;
				if (chunk > sizeof(discard_sink))
					chunk = sizeof(discard_sink);
			}
			n = recv(s->fd, to, chunk, MSG_DONTWAIT);
			if (bracketed) {
				/* a memory chain's bytes go on to the exporting host here (mmap_chain.c) */
				doca_error_t w = sim_rdma_access_end_written(n > 0 ? (size_t)n : 0);
				if (w != DOCA_SUCCESS) {
					s->in_status = w;
					s->in_dst = NULL;
				}
			}
			if (n == 0) {
				s->eof = true;
				return false;
			}
			if (n < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
			if (into_seg)
				s->in_seg_off += (size_t)n;
			s->in_done += (uint64_t)n;
			s->in_left -= (uint64_t)n;
			if (s->in_left > 0)
				continue;
		}
		s->in_got = 0;
		s->last_len = s->in.len;
		if (!end_frame(rdma, c, s))
			return false;
		if (c->state == CONN_CLOSED)
			return true;
	}
}

/* ---------------------------------------------------------------- handshakes */
struct pending {
	int fd;
	bool cm;                 /* accepted on the CM listener */
	struct doca_rdma_connection *exported; /* accepted on this exported connection's listener */
	struct rdma_frame hdr;
	uint8_t secret[RDMA_SECRET_LEN];
	size_t got;
	uint64_t deadline;
};

/* Returns true when the pending socket is done with (attached or closed) */
static bool handshake(struct doca_rdma *rdma, struct pending *p)
{
	const size_t want = sizeof(p->hdr) + RDMA_SECRET_LEN;
	size_t need = p->cm ? sizeof(p->hdr) : want;
	while (p->got < need) {
		ssize_t n = p->got < sizeof(p->hdr)
				    ? recv(p->fd, (char *)&p->hdr + p->got, sizeof(p->hdr) - p->got, MSG_DONTWAIT)
				    : recv(p->fd, p->secret + (p->got - sizeof(p->hdr)), want - p->got, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			goto refuse;
		if (n < 0)
			return rdma_now_ms() > p->deadline ? (close(p->fd), true) : false;
		p->got += (size_t)n;
		if (p->got == sizeof(p->hdr) && p->hdr.magic != RDMA_FRAME_MAGIC)
			goto refuse;
	}
	if (p->cm) {
		struct doca_rdma_connection *c;
		if (p->hdr.op != OP_HELLO_CM || p->hdr.len != 0)
			goto refuse;
		c = rdma_conn_new(rdma, true);
		if (c == NULL)
			goto refuse; /* over max_num_connections: the peer sees its connection closed (failure) */
		c->state = CONN_REQUESTED;
		rdma_sock_init(&c->socks[0], p->fd);
		c->num_socks = 1;
		rdma_queue_event(rdma, EV_REQUEST, c);
		return true;
	}
	{
		struct doca_rdma_connection *c = p->exported;
		unsigned diff = 0;
		/* One peer socket per exported connection, ever: a second one (accepted before the listener closed)
		 * would take the place, and the receive in progress, of a socket that is only half closed */
		if (p->hdr.op != OP_HELLO || p->hdr.len != RDMA_SECRET_LEN || c->state == CONN_CLOSED ||
		    c->num_socks >= 2)
			goto refuse;
		for (size_t i = 0; i < RDMA_SECRET_LEN; i++)
			diff |= (unsigned)(p->secret[i] ^ c->secret[i]);
		if (diff != 0)
			goto refuse;
		rdma_sock_init(&c->socks[1], p->fd);
		c->num_socks = 2;
		if (c->listen_fd >= 0)
			close(c->listen_fd); /* one peer per exported connection */
		c->listen_fd = -1;
		return true;
	}
refuse:
	close(p->fd);
	return true;
}

/*
 * One socket of a two-socket connection reached end-of-file: the peer is closing. Its other socket may still hold
 * frames sent before (the acknowledgement of our last request, above all: the two TCP streams are not ordered with
 * each other), so only this socket closes now; the connection closes when the other one ends too, or 200 ms later.
 * False when there is no other socket to wait for.
 */
static bool half_close(struct doca_rdma_connection *c, struct rdma_sock *s)
{
	bool other_open = false;
	for (int i = 0; i < c->num_socks; i++)
		other_open |= &c->socks[i] != s && c->socks[i].fd >= 0 && !c->socks[i].eof;
	if (!other_open)
		return false;
	rdma_sock_give_back_receive(c->rdma, s); /* this socket will not finish it any more */
	rdma_sock_retire(c->rdma, s);
	if (c->closing_deadline == 0)
		c->closing_deadline = rdma_now_ms() + 200;
	return true;
}

/* ---------------------------------------------------------------- responses read by progress */

/*
 * A small operation's response used to reach the application through the I/O thread: it woke on the socket, read the
 * response, queued the completion and woke the application through an eventfd, which then took the lock again.
 * Two thread hand-offs per burst, on two cores, bounded the rate of small operations (a C requester's 64 B write
 * ran at 0.17x a TCP stream). A connection made by exchanged details sends our requests on a socket of its own,
 * whose frames are only responses, so the progress engine watches that socket (sim_pe_watch_fd) and progress reads
 * it: one wake-up, on the application's thread. The I/O thread keeps what needs a thread of its own: the rest of a
 * large payload (read_sock hands the socket back at its header), what a socket did not take at once, and a socket
 * that failed, which it closes as before.
 *
 * app_take: a socket becomes progress's when nothing of a frame is half read (the I/O thread then skips it).
 */
static bool app_take(struct doca_rdma *rdma, struct rdma_sock *s)
{
	if (s->app_read || !s->app_eligible || s->fd < 0 || s->eof || s->in_got != 0 || s->in_left != 0 ||
	    s->stalled || s->held != NULL || rdma->ctx.pe == NULL || rdma->app_stage == NULL)
		return s->app_read;
	if (sim_pe_watch_fd(rdma->ctx.pe, s->fd, &rdma->ctx) != DOCA_SUCCESS)
		return false;
	s->app_read = true;
	return true;
}

bool rdma_io_app_read(struct doca_rdma *rdma)
{
	bool wake = false;
	rdma->app_reading = true;
	for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next) {
		struct rdma_sock *s = &c->socks[0];
		if (c->state != CONN_CONNECTED || !app_take(rdma, s))
			continue;
		if (!read_sock(rdma, c, s, rdma->app_stage)) {
			/* the peer closed it or it broke: closed here as the I/O thread closes one (the closing list and a
			 * half-closed connection's deadline are the I/O thread's) */
			rdma_sock_app_release(rdma, s);
			if (!(s->eof && c->state != CONN_CLOSED && half_close(c, s)))
				rdma_conn_close(rdma, c, DOCA_ERROR_CONNECTION_RESET);
			wake = true;
		} else if (!s->app_read) {
			wake = true; /* handed back at a large payload's header (released): the I/O thread reads on */
		}
	}
	rdma->app_reading = false;
	return wake && rdma_io_claim_wake(rdma);
}

/* ---------------------------------------------------------------- the thread */
static void accept_on(int listen_fd, bool cm, struct doca_rdma_connection *exported, struct pending *pend,
		      size_t *num_pend)
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (*num_pend >= PENDING_MAX) {
			close(fd); /* a flood of silent sockets is bounded */
			continue;
		}
		tune(fd);
		pend[(*num_pend)++] = (struct pending){ .fd = fd, .cm = cm, .exported = exported,
						       .deadline = rdma_now_ms() + HANDSHAKE_MS };
		if (exported != NULL)
			exported->pending_sockets++; /* not retired while this socket may still name it */
	}
}

/* Whether poll reported an error or a hang-up on `fd` in the set it returned */
static bool rdma_io_polled_trouble(const struct pollfd *fds, size_t n, int fd)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i].fd == fd)
			return (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
	return false;
}

static void *io_main(void *arg)
{
	struct doca_rdma *rdma = arg;
	struct pending pend[PENDING_MAX];
	size_t num_pend = 0;
	struct pollfd *fds = NULL;
	size_t cap = 0;
	uint8_t *stage = rdma->io_stage;

	pthread_mutex_lock(&rdma->lock);
	while (!rdma->io_quit) {
		size_t n = 0, want = 2 + PENDING_MAX;
		uint64_t count;
		bool closing = false, ready = false;
		for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next)
			want += 3;
		for (struct rdma_closing *c = rdma->closing; c != NULL; c = c->next)
			want++;
		if (want > cap) {
			struct pollfd *grown = realloc(fds, want * sizeof(*fds));
			if (grown == NULL)
				break;
			fds = grown;
			cap = want;
		}
		fds[n++] = (struct pollfd){ .fd = rdma->wake_fd, .events = POLLIN };
		if (rdma->cm_listen_fd >= 0)
			fds[n++] = (struct pollfd){ .fd = rdma->cm_listen_fd, .events = POLLIN };
		for (size_t i = 0; i < num_pend; i++)
			fds[n++] = (struct pollfd){ .fd = pend[i].fd, .events = POLLIN };
		for (struct rdma_closing *c = rdma->closing; c != NULL; c = c->next)
			fds[n++] = (struct pollfd){ .fd = c->sock.fd, .events = rdma_closing_events(c) };
		closing = rdma->closing != NULL;
		for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next) {
			if (c->listen_fd >= 0)
				fds[n++] = (struct pollfd){ .fd = c->listen_fd, .events = POLLIN };
			closing |= c->closing_deadline != 0 && c->state != CONN_CLOSED;
			for (int i = 0; i < c->num_socks; i++) {
				struct rdma_sock *s = &c->socks[i];
				/* A request the application has not answered yet has nothing to send and nothing may be read
				 * before the answer, so its socket is not watched: a requester that already hung up would make
				 * poll return at once, and the thread spin (a whole core, and the lock the application needs to
				 * answer) for as long as the request waits. The answer wakes the thread; a vanished requester is
				 * found then, as a disconnection */
				if (s->fd < 0 || (c->state == CONN_REQUESTED && i == 0 && s->out_head == NULL))
					continue;
				/* a stalled send whose receive was posted since (its submit did not wake us: we were awake) */
				ready |= s->stalled && rdma->receives_head != NULL;
				fds[n++] = (struct pollfd){ .fd = s->fd,
							    .events = (short)((s->app_read ? 0 : s->stalled ? POLLRDHUP : POLLIN) |
									      (s->out_head ? POLLOUT : 0)) };
			}
		}
		rdma->io_asleep = true;
		pthread_mutex_unlock(&rdma->lock);
		poll(fds, n, ready ? 0 : closing ? 20 : num_pend > 0 ? 100 : 1000);
		pthread_mutex_lock(&rdma->lock);
		rdma->io_asleep = false;
		if ((fds[0].revents & POLLIN) && read(rdma->wake_fd, &count, sizeof(count)) < 0) {
			/* not readable after all */
		}
		if (rdma->io_quit)
			break;
		if (rdma->cm_listen_fd >= 0)
			accept_on(rdma->cm_listen_fd, true, NULL, pend, &num_pend);
		for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next)
			if (c->listen_fd >= 0)
				accept_on(c->listen_fd, false, c, pend, &num_pend);
		for (size_t i = 0; i < num_pend;)
			if (handshake(rdma, &pend[i])) {
				if (pend[i].exported != NULL)
					pend[i].exported->pending_sockets--;
				pend[i] = pend[--num_pend];
			} else {
				i++;
			}
		for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next) {
			for (int i = 0; i < c->num_socks && c->state != CONN_CLOSED; i++) {
				struct rdma_sock *s = &c->socks[i];
				if (s->fd < 0)
					continue;
				if (c->state == CONN_REQUESTED && i == 0) {
					/* nothing but our answer may pass before the application accepts */
					if (!rdma_sock_flush(s))
						rdma_conn_close(rdma, c, DOCA_ERROR_CONNECTION_RESET);
					continue;
				}
				/* a socket progress reads is only flushed here; one that reports an error or a hang-up (poll
				 * tells it whatever the events asked) comes back to this thread, which closes it as always */
				if (s->app_read && rdma_io_polled_trouble(fds, n, s->fd))
					rdma_sock_app_release(rdma, s);
				if ((!s->app_read && !read_sock(rdma, c, s, stage)) ||
				    (c->state != CONN_CLOSED && s->fd >= 0 && !rdma_sock_flush(s))) {
					if (!(s->eof && c->state != CONN_CLOSED && half_close(c, s)))
						rdma_conn_close(rdma, c, DOCA_ERROR_CONNECTION_RESET);
				}
			}
		}
		/* Half-closed connections: closed once no socket is left, or at their deadline */
		for (struct doca_rdma_connection *c = rdma->conns; c != NULL; c = c->next) {
			bool any_open = false;
			if (c->closing_deadline == 0 || c->state == CONN_CLOSED)
				continue;
			for (int i = 0; i < c->num_socks; i++)
				any_open |= c->socks[i].fd >= 0;
			if (!any_open || rdma_now_ms() >= c->closing_deadline)
				rdma_conn_close(rdma, c, DOCA_ERROR_CONNECTION_RESET);
		}
		rdma_closing_step_all(rdma);
	}
	for (size_t i = 0; i < num_pend; i++) {
		close(pend[i].fd);
		if (pend[i].exported != NULL)
			pend[i].exported->pending_sockets--;
	}
	pthread_mutex_unlock(&rdma->lock);
	free(fds);
	return NULL;
}

doca_error_t rdma_io_start(struct doca_rdma *rdma)
{
	rdma->io_stage = malloc(RDMA_STAGE_BYTES);
	rdma->app_stage = malloc(RDMA_STAGE_BYTES);
	if (rdma->io_stage == NULL || rdma->app_stage == NULL) {
		free(rdma->io_stage);
		free(rdma->app_stage);
		rdma->io_stage = rdma->app_stage = NULL;
		return DOCA_ERROR_NO_MEMORY;
	}
	if (pthread_create(&rdma->io_thread, NULL, io_main, rdma) != 0) {
		free(rdma->io_stage);
		free(rdma->app_stage);
		rdma->io_stage = rdma->app_stage = NULL;
		return DOCA_ERROR_NO_MEMORY;
	}
	rdma->io_running = true;
	return DOCA_SUCCESS;
}

void rdma_io_stop(struct doca_rdma *rdma)
{
	if (!rdma->io_running)
		return;
	pthread_mutex_lock(&rdma->lock);
	rdma->io_quit = true;
	pthread_mutex_unlock(&rdma->lock);
	rdma_io_wake(rdma);
	pthread_join(rdma->io_thread, NULL);
	rdma->io_running = false;
	free(rdma->io_stage);
	rdma->io_stage = NULL;
	/* app_stage stays until the connections are closed (rdma_stop), then goes with the context */
}
