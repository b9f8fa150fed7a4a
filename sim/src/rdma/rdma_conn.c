/*
 * Software DOCA device, libdoca_rdma: connection objects and the queues both threads feed (completions, connection
 * events), with rdma->lock held. The lowest layer of the RDMA files: rdma.c (API) and rdma_io.c (I/O thread) call it,
 * it calls neither.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "rdma_internal.h"

/*
 * Connection objects one context keeps, live and closed. Past it the oldest closed connection that is done with
 * (its callbacks delivered, its sockets closed) is retired, as destroyed handles are (strict mode keeps it poisoned
 * and reports a later use); only when none is, a new connection is refused. Live connections are bounded by
 * max_num_connections.
 */
#define RDMA_MAX_CONN_OBJECTS 4096

/* DOCA_SIM_RDMA_CONN_OBJECTS (test-only) lowers the bound, so a test reaches it in a few connections */
static uint32_t max_conn_objects(void)
{
	const char *v = getenv("DOCA_SIM_RDMA_CONN_OBJECTS");
	long n = v != NULL ? strtol(v, NULL, 10) : 0;
	return n >= 2 && n < RDMA_MAX_CONN_OBJECTS ? (uint32_t)n : RDMA_MAX_CONN_OBJECTS;
}

static bool retirable(const struct doca_rdma_connection *c)
{
	if (c->state != CONN_CLOSED || c->events_pending != 0 || c->pending_sockets != 0 || c->listen_fd >= 0)
		return false;
	for (int i = 0; i < 2; i++)
		if (c->socks[i].fd >= 0 || c->socks[i].out_head != NULL)
			return false;
	return true;
}

/* Frees the oldest retirable connection (the list is newest first); false when there is none */
static bool retire_oldest_closed(struct doca_rdma *rdma)
{
	struct doca_rdma_connection **link = &rdma->conns, **oldest = NULL;

	for (; *link != NULL; link = &(*link)->next)
		if (retirable(*link))
			oldest = link;
	if (oldest == NULL)
		return false;
	{
		struct doca_rdma_connection *c = *oldest;
		*oldest = c->next;
		sim_live_dec(SIM_KIND_CONNECTION);
		sim_release(c, &c->magic);
	}
	return true;
}

/*
 * Tell the progress engine something is ready to deliver: one eventfd write until the next progress call takes the
 * queues (a burst of completions costs one write and one wake-up, not one per task). notify_pending is true exactly
 * while the eventfd may be readable; both change under the lock.
 */
static void notify(struct doca_rdma *rdma)
{
	uint64_t one = 1;
	if (rdma->notify_pending || rdma->notify_fd < 0 || rdma->app_reading)
		return; /* progress reading responses takes the queues right after */
	rdma->notify_pending = true;
	if (write(rdma->notify_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the pe is awake anyway */
	}
}

void rdma_queue_event(struct doca_rdma *rdma, enum rdma_event_type type, struct doca_rdma_connection *conn)
{
	struct rdma_event *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return;
	e->type = type;
	e->conn = conn;
	conn->events_pending++; /* not retired before its callback has run (rdma.c delivers, then counts it down) */
	SIM_QUEUE_APPEND(rdma->events_head, rdma->events_tail, e, next);
	notify(rdma);
}

void rdma_finish_task(struct doca_rdma *rdma, struct rdma_task *task, doca_error_t status)
{
	/* the destination room a write or read claimed at submit is free again (its bytes, if they landed, are in the
	 * data length by now); the task still holds the buffer, so it is alive */
	if (task->claimed > 0) {
		task->dst->claimed -= task->claimed;
		task->claimed = 0;
	}
	task->base.status = status;
	SIM_QUEUE_APPEND(rdma->done_head, rdma->done_tail, &task->base, next);
	notify(rdma);
}

struct doca_rdma_connection *rdma_conn_new(struct doca_rdma *rdma, bool cm)
{
	struct doca_rdma_connection *c;
	uint32_t objects = 0;

	if (rdma->num_conns >= rdma->max_conns)
		return NULL;
	for (c = rdma->conns; c != NULL; c = c->next)
		objects++;
	if (objects >= max_conn_objects() && !retire_oldest_closed(rdma))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->magic = SIM_MAGIC_LIVE;
	c->rdma = rdma;
	c->id = rdma->next_conn_id++;
	c->cm = cm;
	c->listen_fd = -1;
	for (int i = 0; i < 2; i++)
		rdma_sock_init(&c->socks[i], -1);
	if (getrandom(c->secret, sizeof(c->secret), 0) != sizeof(c->secret)) {
		free(c);
		return NULL;
	}
	c->next = rdma->conns;
	rdma->conns = c;
	rdma->num_conns++;
	sim_live_inc(SIM_KIND_CONNECTION);
	return c;
}

void rdma_sock_give_back_receive(struct doca_rdma *rdma, struct rdma_sock *s)
{
	if (s->in_task != NULL && s->in_task->kind == RDMA_RECEIVE) {
		s->in_task->wait_next = rdma->receives_head;
		rdma->receives_head = s->in_task;
		if (rdma->receives_tail == NULL)
			rdma->receives_tail = s->in_task;
	}
	s->in_task = NULL;
}

void rdma_conn_close(struct doca_rdma *rdma, struct doca_rdma_connection *conn, doca_error_t why)
{
	if (conn->state == CONN_CLOSED)
		return;
	for (int i = 0; i < conn->num_socks; i++) {
		struct rdma_sock *s = &conn->socks[i];
		rdma_sock_retire(rdma, s); /* the I/O thread sends what may still leave, then closes it */
		rdma_sock_give_back_receive(rdma, s);
	}
	conn->num_socks = 0;
	if (conn->listen_fd >= 0)
		close(conn->listen_fd);
	conn->listen_fd = -1;
	while (conn->awaiting != NULL) {
		struct rdma_task *t = conn->awaiting;
		conn->awaiting = t->wait_next;
		rdma_finish_task(rdma, t, why);
	}
	if (conn->cm && rdma->ctx.state == DOCA_CTX_STATE_RUNNING && why != SIM_TASK_FLUSHED_STATUS) {
		if (conn->state == CONN_CONNECTED)
			rdma_queue_event(rdma, EV_DISCONNECTED, conn);
		else if (conn->state == CONN_CONNECTING || conn->state == CONN_REQUESTED)
			rdma_queue_event(rdma, EV_FAILURE, conn);
	}
	conn->state = CONN_CLOSED;
	rdma->num_conns--;
}
