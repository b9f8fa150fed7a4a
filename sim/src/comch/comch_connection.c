/*
 * Comch connection: one socket between a server and a client, its frame dispatch and its death.
 *
 * Frames arriving on the socket are validated by the transport (sizes, magic, kind) and here (protocol state,
 * ids): anything unexpected from the peer ends the connection, exactly like a peer that died.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comch_internal.h"

struct doca_comch_connection *comch_conn_new(struct comch_endpoint *ep, int fd)
{
	struct doca_comch_connection *conn = calloc(1, sizeof(*conn));

	if (conn == NULL)
		return NULL;
	conn->ep = ep;
	conn->fd = fd;
	conn->state = COMCH_CONN_HANDSHAKE;
	conn->next_local_id = 1;
	conn->born_ns = comch_now_ns();
	pthread_mutex_init(&conn->lock, NULL);
	if (fd >= 0) {
		comch_watch(&ep->ctx, fd);
		conn->watched = true;
	}
	sim_live_inc(SIM_KIND_CONNECTION);
	return conn;
}

void comch_conn_free(struct doca_comch_connection *conn)
{
	if (conn->fd >= 0)
		comch_conn_kill(conn, false, DOCA_ERROR_NOT_CONNECTED);
	pthread_mutex_destroy(&conn->lock);
	free(conn);
	sim_live_dec(SIM_KIND_CONNECTION);
}

bool comch_conn_release_if_unused(struct doca_comch_connection *conn)
{
	uint32_t users;

	pthread_mutex_lock(&conn->lock);
	users = conn->users;
	pthread_mutex_unlock(&conn->lock);
	if (conn->state != COMCH_CONN_DEAD || users != 0)
		return false;
	comch_conn_free(conn);
	return true;
}

int comch_conn_send_frame(struct doca_comch_connection *conn, uint8_t kind, uint32_t id, const void *p, uint32_t len,
			  int pass_fd)
{
	if (conn->fd < 0)
		return -ENOTCONN;
	return comch_send_frame(conn->fd, kind, id, p, len, pass_fd);
}

uint32_t comch_conn_alloc_local_id(struct doca_comch_connection *conn)
{
	uint32_t id;

	pthread_mutex_lock(&conn->lock);
	id = conn->next_local_id++;
	if (conn->next_local_id == 0)
		conn->next_local_id = 1; /* 0 means "none" in post_recv_get_producer_id */
	pthread_mutex_unlock(&conn->lock);
	return id;
}

int comch_conn_remote_consumer_fd(struct doca_comch_connection *conn, uint32_t id)
{
	int fd = -1;
	uint32_t i;

	pthread_mutex_lock(&conn->lock);
	for (i = 0; i < COMCH_MAX_CONSUMERS; i++)
		if (conn->remote[i].id == id && id != 0) {
			/* dup: the table entry may be closed by another thread while the producer writes */
			fd = dup(conn->remote[i].fd);
			break;
		}
	pthread_mutex_unlock(&conn->lock);
	return fd;
}

void comch_conn_attach_user(struct doca_comch_connection *conn)
{
	pthread_mutex_lock(&conn->lock);
	conn->users++;
	pthread_mutex_unlock(&conn->lock);
}

void comch_conn_detach_user(struct doca_comch_connection *conn)
{
	pthread_mutex_lock(&conn->lock);
	conn->users--;
	pthread_mutex_unlock(&conn->lock);
}

void comch_conn_add_consumer_wake(struct doca_comch_connection *conn, int fd)
{
	pthread_mutex_lock(&conn->lock);
	if (fd >= 0 && conn->num_consumer_wake < COMCH_MAX_CONSUMERS)
		conn->consumer_wake[conn->num_consumer_wake++] = fd;
	pthread_mutex_unlock(&conn->lock);
}

void comch_conn_remove_consumer_wake(struct doca_comch_connection *conn, int fd)
{
	pthread_mutex_lock(&conn->lock);
	for (uint32_t i = 0; i < conn->num_consumer_wake; i++)
		if (conn->consumer_wake[i] == fd) {
			conn->consumer_wake[i] = conn->consumer_wake[--conn->num_consumer_wake];
			break;
		}
	pthread_mutex_unlock(&conn->lock);
}

/* Local consumers may sleep on other pes than the endpoint's: tell each that the connection is gone */
static void wake_local_consumers(struct doca_comch_connection *conn)
{
	uint64_t one = 1;

	pthread_mutex_lock(&conn->lock);
	for (uint32_t i = 0; i < conn->num_consumer_wake; i++)
		(void)!write(conn->consumer_wake[i], &one, sizeof(one));
	pthread_mutex_unlock(&conn->lock);
}

static void close_remote_consumers(struct doca_comch_connection *conn)
{
	uint32_t i;

	pthread_mutex_lock(&conn->lock);
	for (i = 0; i < COMCH_MAX_CONSUMERS; i++)
		if (conn->remote[i].id != 0) {
			close(conn->remote[i].fd);
			conn->remote[i].id = 0;
			conn->remote[i].fd = -1;
		}
	pthread_mutex_unlock(&conn->lock);
}

void comch_conn_kill(struct doca_comch_connection *conn, bool tell_peer, doca_error_t pending_status)
{
	if (conn->fd >= 0) {
		if (tell_peer && conn->state == COMCH_CONN_ACTIVE)
			(void)comch_send_frame(conn->fd, COMCH_FRAME_DISCONNECT, 0, NULL, 0, -1);
		if (conn->watched)
			comch_unwatch(&conn->ep->ctx, conn->fd);
		conn->watched = false;
		conn->watching_out = false;
		close(conn->fd);
		conn->fd = -1;
	}
	conn->state = COMCH_CONN_DEAD;
	/* Closing the peer consumers' data sockets makes our producers fail instead of writing into the void */
	close_remote_consumers(conn);
	wake_local_consumers(conn);
	comch_conn_fail_pending(conn, pending_status);
}

/* The peer went away (or misbehaved): tear down and let the endpoint report it */
/* ---- the queue of sends waiting for room in the socket (filled by comch_send.c) ---- */

static void pending_pop(struct doca_comch_connection *conn)
{
	conn->pending_head = conn->pending_head->next;
	if (conn->pending_head == NULL)
		conn->pending_tail = NULL;
}

int comch_conn_flush(struct doca_comch_connection *conn)
{
	int did = 0;

	while (conn->pending_head != NULL && conn->fd >= 0) {
		struct doca_comch_task_send *t = conn->pending_head;
		int rc = comch_conn_send_frame(conn, COMCH_FRAME_MSG, 0, t->msg, t->len, -1);

		if (rc == -EAGAIN)
			break; /* the peer's queue is full: retry on a later progress */
		pending_pop(conn);
		t->next = NULL;
		did = 1;
		if (rc != 0) {
			sim_task_complete(&t->base, DOCA_ERROR_NOT_CONNECTED);
			continue;
		}
		conn->counters[DOCA_COMCH_COUNTER_SENT_MESSAGES]++;
		conn->counters[DOCA_COMCH_COUNTER_SENT_BYTES] += t->len;
		sim_task_complete(&t->base, DOCA_SUCCESS);
	}
	/* Sends left waiting for room: the socket turning writable wakes a waiter (no progress call needs to poll) */
	if (conn->fd >= 0 && conn->watched && (conn->pending_head != NULL) != conn->watching_out) {
		conn->watching_out = conn->pending_head != NULL;
		sim_pe_watch_fd_out(conn->ep->ctx.pe, conn->fd, conn->watching_out);
	}
	return did;
}

bool comch_conn_sends_wait_on_fd(const struct doca_comch_connection *conn)
{
	return conn->pending_head == NULL || conn->watching_out;
}

void comch_conn_fail_pending(struct doca_comch_connection *conn, doca_error_t status)
{
	while (conn->pending_head != NULL) {
		struct doca_comch_task_send *t = conn->pending_head;

		pending_pop(conn);
		t->next = NULL;
		sim_task_complete(&t->base, status);
	}
}

static void conn_lost(struct doca_comch_connection *conn)
{
	comch_conn_kill(conn, false, DOCA_ERROR_NOT_CONNECTED);
	conn->ep->ops->conn_dead(conn);
}

static bool handle_hello(struct doca_comch_connection *conn, const struct comch_frame_hdr *hdr, ssize_t len)
{
	struct comch_hello hello;
	bool expected_kind = conn->ep->is_server ? hdr->kind == COMCH_FRAME_HELLO : hdr->kind == COMCH_FRAME_HELLO_ACK;

	if (!expected_kind || len != (ssize_t)sizeof(hello))
		return false;
	memcpy(&hello, conn->ep->recv_buf, sizeof(hello));
	if (hello.version != COMCH_WIRE_VERSION)
		return false;
	conn->peer_pid = hello.pid;
	conn->peer_max_msg_size = hello.max_msg_size;
	if (conn->ep->is_server) {
		struct comch_hello ack = {.version = COMCH_WIRE_VERSION, .pid = (uint32_t)getpid(),
					  .max_msg_size = conn->ep->max_msg_size};

		if (comch_conn_send_frame(conn, COMCH_FRAME_HELLO_ACK, ack.pid, &ack, sizeof(ack), -1) != 0)
			return false;
	}
	conn->state = COMCH_CONN_ACTIVE;
	conn->ep->ops->conn_active(conn);
	return true;
}

static bool add_remote_consumer(struct doca_comch_connection *conn, uint32_t id, int fd)
{
	uint32_t i, free_slot = COMCH_MAX_CONSUMERS;

	pthread_mutex_lock(&conn->lock);
	for (i = 0; i < COMCH_MAX_CONSUMERS; i++) {
		if (conn->remote[i].id == id) {
			free_slot = COMCH_MAX_CONSUMERS; /* duplicate id: protocol error */
			break;
		}
		if (conn->remote[i].id == 0 && free_slot == COMCH_MAX_CONSUMERS)
			free_slot = i;
	}
	if (free_slot < COMCH_MAX_CONSUMERS) {
		conn->remote[free_slot].id = id;
		conn->remote[free_slot].fd = fd;
	}
	pthread_mutex_unlock(&conn->lock);
	return free_slot < COMCH_MAX_CONSUMERS;
}

static bool remove_remote_consumer(struct doca_comch_connection *conn, uint32_t id)
{
	bool found = false;
	uint32_t i;

	pthread_mutex_lock(&conn->lock);
	for (i = 0; i < COMCH_MAX_CONSUMERS; i++)
		if (conn->remote[i].id == id) {
			close(conn->remote[i].fd);
			conn->remote[i].id = 0;
			conn->remote[i].fd = -1;
			found = true;
			break;
		}
	pthread_mutex_unlock(&conn->lock);
	return found;
}

/* Returns false when the frame breaks the protocol */
static bool dispatch(struct doca_comch_connection *conn, const struct comch_frame_hdr *hdr, ssize_t len, int passed_fd)
{
	struct comch_endpoint *ep = conn->ep;

	if (conn->state == COMCH_CONN_HANDSHAKE)
		return passed_fd < 0 && handle_hello(conn, hdr, len);

	switch (hdr->kind) {
	case COMCH_FRAME_MSG:
		/* A message longer than this side's configured maximum never reaches it: the peer broke the size both
		 * sides announced at the handshake, and is disconnected */
		if (passed_fd >= 0 || (uint64_t)len > ep->max_msg_size) {
			if (passed_fd < 0)
				sim_log(SIM_LOG_ERROR, "comch: a %zd-byte message exceeds this side's max msg size %u: "
						      "disconnecting the peer",
					len, ep->max_msg_size);
			return false;
		}
		conn->counters[DOCA_COMCH_COUNTER_RECV_MESSAGES]++;
		conn->counters[DOCA_COMCH_COUNTER_RECV_BYTES] += (uint64_t)len;
		if (ep->msg_recv_cb != NULL)
			ep->msg_recv_cb((struct doca_comch_event_msg_recv *)ep, ep->recv_buf, (uint32_t)len, conn);
		return true;
	case COMCH_FRAME_CONSUMER_NEW:
		if (passed_fd < 0 || hdr->id == 0 || len != 0 || !add_remote_consumer(conn, hdr->id, passed_fd)) {
			if (passed_fd >= 0)
				close(passed_fd);
			return false;
		}
		if (ep->consumer_new_cb != NULL)
			ep->consumer_new_cb((struct doca_comch_event_consumer *)ep, conn, hdr->id);
		return true;
	case COMCH_FRAME_CONSUMER_GONE:
		if (passed_fd >= 0 || len != 0 || !remove_remote_consumer(conn, hdr->id))
			return false;
		if (ep->consumer_expired_cb != NULL)
			ep->consumer_expired_cb((struct doca_comch_event_consumer *)ep, conn, hdr->id);
		return true;
	case COMCH_FRAME_DISCONNECT:
		conn_lost(conn);
		return true;
	default: /* HELLO twice, DATA on the control socket, ... */
		if (passed_fd >= 0)
			close(passed_fd);
		return false;
	}
}

int comch_conn_progress(struct doca_comch_connection *conn)
{
	struct comch_endpoint *ep = conn->ep;
	int did = 0, i;

	if (conn->fd < 0)
		return 0;
	did |= comch_conn_flush(conn);
	for (i = 0; i < COMCH_FRAMES_PER_PROGRESS && conn->fd >= 0; i++) {
		struct comch_frame_hdr hdr;
		int passed_fd = -1;
		ssize_t n = comch_recv_frame(conn->fd, &hdr, ep->recv_buf, ep->recv_buf_size, &passed_fd);

		if (n == -EAGAIN)
			break;
		did = 1;
		if (n < 0) { /* end of stream, reset or a malformed frame */
			conn_lost(conn);
			break;
		}
		{
			bool handshake = conn->state == COMCH_CONN_HANDSHAKE;

			if (!dispatch(conn, &hdr, n, passed_fd)) {
				conn_lost(conn);
				break;
			}
			/* A completed handshake (client: the ctx became RUNNING; server: the connect event) is this
			 * call's progress: later frames wait for the next call, so the program sees RUNNING, or runs
			 * its connect callback, before any message of the connection (DOCA's granularity) */
			if (handshake || ep->ctx.transitioned)
				break;
		}
	}
	if (conn->fd >= 0)
		did |= comch_conn_flush(conn);
	/* A peer that connected and never completed the handshake holds one of the server's comch_max_clients slots:
	 * not for longer than the deadline (server side only: a client waits for a busy server as long as it likes) */
	if (ep->is_server && conn->fd >= 0 && conn->state == COMCH_CONN_HANDSHAKE &&
	    comch_now_ns() - conn->born_ns > comch_handshake_deadline_ns()) {
		sim_log(SIM_LOG_DEBUG, "comch: a peer did not complete the handshake in time: dropped");
		conn_lost(conn);
		did = 1;
	}
	return did;
}

/* ---- public connection API ---- */

SIM_EXPORT doca_error_t doca_comch_connection_set_user_data(struct doca_comch_connection *connection,
							     union doca_data user_data)
{
	if (connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	connection->user_data = user_data;
	return DOCA_SUCCESS;
}

SIM_EXPORT union doca_data doca_comch_connection_get_user_data(const struct doca_comch_connection *connection)
{
	union doca_data none = {.u64 = 0};

	return connection == NULL ? none : connection->user_data;
}

SIM_EXPORT struct doca_comch_server *doca_comch_server_get_server_ctx(const struct doca_comch_connection *connection)
{
	if (connection == NULL || !connection->ep->is_server)
		return NULL;
	return (struct doca_comch_server *)connection->ep;
}

SIM_EXPORT struct doca_comch_client *doca_comch_client_get_client_ctx(const struct doca_comch_connection *connection)
{
	if (connection == NULL || connection->ep->is_server)
		return NULL;
	return (struct doca_comch_client *)connection->ep;
}

SIM_EXPORT doca_error_t doca_comch_connection_update_info(struct doca_comch_connection *comch_connection)
{
	if (comch_connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (comch_connection->state == COMCH_CONN_HANDSHAKE)
		return DOCA_ERROR_CONNECTION_INPROGRESS;
	if (comch_connection->state == COMCH_CONN_DEAD)
		return DOCA_ERROR_CONNECTION_ABORTED;
	memcpy(comch_connection->counters_snap, comch_connection->counters, sizeof(comch_connection->counters));
	return DOCA_SUCCESS;
}

SIM_EXPORT doca_error_t doca_comch_connection_get_counter(const struct doca_comch_connection *comch_connection,
							   enum doca_comch_counter counter_type,
							   uint64_t *counter_value)
{
	if (comch_connection == NULL || counter_value == NULL || counter_type < DOCA_COMCH_COUNTER_SENT_MESSAGES ||
	    counter_type > DOCA_COMCH_COUNTER_RECV_BYTES)
		return DOCA_ERROR_INVALID_VALUE;
	*counter_value = comch_connection->counters_snap[counter_type];
	return DOCA_SUCCESS;
}
