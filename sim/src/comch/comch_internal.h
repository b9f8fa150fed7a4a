/*
 * Object model of the software device's Comch library (libdoca_comch.so).
 *
 * Every DOCA context here embeds the core's struct doca_ctx as its first member and every task embeds struct
 * doca_task first, so the core's generic doca_ctx_* / doca_task_* / doca_pe_* functions (internal.h) drive them
 * through struct sim_ctx_ops / sim_task_ops.
 */
#ifndef SIM_COMCH_INTERNAL_H_
#define SIM_COMCH_INTERNAL_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>

#include "comch_transport.h"

/* Device limits reported by the cap functions (the core's device caps win where it has them) */
#define COMCH_MAX_NAME_LEN 120u		/* including the NUL */
#define COMCH_MAX_CLIENTS 512u
#define COMCH_MAX_RECV_QUEUE 8192u
#define COMCH_DEFAULT_RECV_QUEUE 128u
#define COMCH_MAX_SEND_TASKS 8192u
#define COMCH_MAX_FASTPATH_TASKS 8192u
#define COMCH_MAX_FASTPATH_BUF (2u * 1024u * 1024u)
#define COMCH_MAX_CONSUMERS 64u		/* per connection, also the size of the remote consumer table */
#define COMCH_MAX_PRODUCERS 64u
#define COMCH_WIRE_VERSION 1u
#define COMCH_CONNECT_RETRY_NS 20000000ll /* a client without a server retries every 20 ms */
#define COMCH_FRAMES_PER_PROGRESS 64	/* fairness between connections within one doca_pe_progress */

/* Payload of COMCH_FRAME_HELLO / HELLO_ACK */
struct comch_hello {
	uint32_t version;
	uint32_t pid;
	uint32_t max_msg_size;
};

struct comch_endpoint;

/*
 * The tasks of a Comch context (control-path sends, fast-path sends and receives) are allocated once, at the first
 * start, and kept on a free list linked through their next field; alloc_init takes one (NO_MEMORY when all are out)
 * and the task's free puts it back.
 */
#define COMCH_FREE_LIST_PUSH(free_list, t) \
	do { \
		(t)->next = (free_list); \
		(free_list) = (t); \
	} while (0)
/* Pushes tasks[n-1] .. tasks[0], so that tasks[0] is taken first */
#define COMCH_FREE_LIST_FILL(free_list, tasks, n) \
	do { \
		for (uint32_t i_ = (n); i_-- > 0;) \
			COMCH_FREE_LIST_PUSH(free_list, &(tasks)[i_]); \
	} while (0)
/* t = the next free task, initialised for ctx with the context's callbacks; returns DOCA_ERROR_NO_MEMORY when none */
#define COMCH_FREE_LIST_TAKE_OR_RETURN(free_list, t, task_ops, ctx, done_cb, err_cb) \
	do { \
		union doca_data none_ = {.u64 = 0}; \
		(t) = (free_list); \
		if ((t) == NULL) \
			return DOCA_ERROR_NO_MEMORY; \
		(free_list) = (t)->next; \
		sim_task_init(&(t)->base, (task_ops), (ctx), sim_task_cb_cast(done_cb), sim_task_cb_cast(err_cb), none_); \
		(t)->next = NULL; \
	} while (0)

/* ---- send task (control path) ---- */

struct doca_comch_task_send {
	struct doca_task base; /* first: doca_comch_task_send_as_task is a cast */
	struct doca_comch_connection *conn;
	uint32_t len;
	uint8_t *msg; /* max_msg_size bytes owned by the endpoint's pool: the message is copied at alloc time */
	struct doca_comch_task_send *next; /* free list or pending queue */
};

/* ---- connection ---- */

enum comch_conn_state {
	COMCH_CONN_HANDSHAKE, /* socket open, HELLO not yet exchanged */
	COMCH_CONN_ACTIVE,
	COMCH_CONN_DEAD, /* socket closed; object kept while producers/consumers still reference it */
};

struct comch_remote_consumer {
	uint32_t id; /* 0 = free slot */
	int fd;	     /* the consumer's data socket, received from the peer */
};

struct doca_comch_connection {
	struct comch_endpoint *ep;
	int fd;
	enum comch_conn_state state;
	bool watched;
	bool watching_out; /* sends wait for room in the socket: its pe also wakes when it can be written */
	bool connect_reported; /* server: connect callback fired, so a disconnect callback is owed */
	union doca_data user_data;
	uint32_t peer_pid;
	uint32_t peer_max_msg_size; /* the peer's configured maximum (handshake): no message sent above it */
	int64_t born_ns;            /* accepted or connected (comch_now_ns): the handshake has a deadline */
	uint64_t counters[5];	    /* live, indexed by enum doca_comch_counter */
	uint64_t counters_snap[5];  /* what doca_comch_connection_get_counter reports */
	struct doca_comch_task_send *pending_head, *pending_tail; /* submitted, not yet written to the socket */
	/* Fast path: producers and consumers may run on other progress engines (other threads) */
	pthread_mutex_t lock;
	struct comch_remote_consumer remote[COMCH_MAX_CONSUMERS];
	uint32_t next_local_id;	/* ids of local consumers and producers on this connection */
	uint32_t users;		/* live local consumers + producers */
	/* Eventfds of the local consumers (each watched by its own pe while receives are posted): written when the
	 * connection dies, so a consumer sleeping on another pe than the endpoint's learns it at once */
	int consumer_wake[COMCH_MAX_CONSUMERS];
	uint32_t num_consumer_wake;
	struct doca_comch_connection *next; /* server's connection list */
};

/* ---- what a server and a client share ---- */

struct comch_ep_ops {
	void (*conn_active)(struct doca_comch_connection *conn); /* handshake completed */
	void (*conn_dead)(struct doca_comch_connection *conn);   /* peer gone, reset or protocol error */
};

struct comch_endpoint {
	struct doca_ctx ctx; /* first: *_as_ctx is a cast */
	bool is_server;
	/* What the connection state machine reports to its endpoint (server or client): a table, so that
	 * comch_connection.c depends on neither comch_server.c nor comch_client.c */
	const struct comch_ep_ops *ops;
	struct doca_dev *dev;
	uint32_t max_msg_size;
	uint32_t recv_queue_size;
	doca_comch_task_send_completion_cb_t send_done_cb;
	doca_comch_task_send_completion_cb_t send_err_cb;
	uint32_t num_send_tasks;
	doca_comch_event_msg_recv_cb_t msg_recv_cb;
	doca_comch_event_consumer_cb_t consumer_new_cb;
	doca_comch_event_consumer_cb_t consumer_expired_cb;
	/* send task pool, allocated at start (the message size is known by then) */
	struct doca_comch_task_send *tasks;
	uint8_t *task_msgs;
	struct doca_comch_task_send *free_tasks;
	uint8_t *recv_buf; /* one received control frame, COMCH_MAX msg size of the device */
	uint32_t recv_buf_size;
};

struct doca_comch_server {
	struct comch_endpoint ep;
	struct doca_dev_rep *rep;
	char name[COMCH_MAX_NAME_LEN];
	char path[108];
	int listen_fd;
	doca_comch_event_connection_status_changed_cb_t connect_cb;
	doca_comch_event_connection_status_changed_cb_t disconnect_cb;
	struct doca_comch_connection *conns;
	uint32_t num_conns;
};

struct doca_comch_client {
	struct comch_endpoint ep;
	char name[COMCH_MAX_NAME_LEN];
	char path[108];
	struct doca_comch_connection *conn; /* allocated at start, kept until destroy if producers use it */
	int64_t next_attempt_ns;
	int retry_fd; /* timerfd ticking while no server answers, so a caller waiting on the pe's handle retries */
};

/* ---- fast path ---- */

struct doca_comch_consumer_task_post_recv {
	struct doca_task base; /* first */
	struct doca_buf *buf;
	uint32_t producer_id;
	uint32_t imm_len;
	uint8_t imm[COMCH_MAX_IMM_DATA];
	struct doca_comch_consumer_task_post_recv *next; /* free list or posted FIFO */
};

struct doca_comch_consumer {
	struct doca_ctx ctx; /* first */
	struct doca_comch_connection *conn;
	struct doca_mmap *mmap;
	uint32_t id;
	uint32_t imm_data_len;
	int data_fd;  /* our end of the data socket */
	int peer_fd;  /* the end handed to the peer, until the announcement is sent */
	int wake_fd;  /* eventfd the connection writes when it dies (comch_conn_kill), watched with data_fd */
	bool announced;
	bool watched;
	bool peer_lost; /* stopping because the peer went away (not a user stop) */
	doca_comch_consumer_task_post_recv_completion_cb_t done_cb;
	doca_comch_consumer_task_post_recv_completion_cb_t err_cb;
	uint32_t num_tasks;
	uint32_t pool_len; /* tasks in the pool (num_tasks when it was made at the first start) */
	struct doca_comch_consumer_task_post_recv *tasks, *free_tasks;
	struct doca_comch_consumer_task_post_recv *posted_head, *posted_tail;
};

struct doca_comch_producer_task_send {
	struct doca_task base; /* first */
	const struct doca_buf *buf;
	uint32_t consumer_id;
	uint32_t imm_len;
	uint8_t imm[COMCH_MAX_IMM_DATA];
	struct doca_comch_producer_task_send *next; /* free list */
};

struct doca_comch_producer {
	struct doca_ctx ctx; /* first */
	struct doca_comch_connection *conn;
	uint32_t id;
	doca_comch_producer_task_send_completion_cb_t done_cb;
	doca_comch_producer_task_send_completion_cb_t err_cb;
	uint32_t num_tasks;
	uint32_t pool_len; /* tasks in the pool (num_tasks when it was made at the first start) */
	struct doca_comch_producer_task_send *tasks, *free_tasks;
};

/* ---- connection (comch_connection.c) ---- */

struct doca_comch_connection *comch_conn_new(struct comch_endpoint *ep, int fd);
/* Reads and dispatches queued frames, writes pending sends; returns 1 when anything happened */
int comch_conn_progress(struct doca_comch_connection *conn);
/* Closes the socket and fails pending sends with pending_status; tell_peer sends DISCONNECT first */
void comch_conn_kill(struct doca_comch_connection *conn, bool tell_peer, doca_error_t pending_status);
/* Frees the object when nothing references it any more; returns true if freed */
bool comch_conn_release_if_unused(struct doca_comch_connection *conn);
void comch_conn_free(struct doca_comch_connection *conn);
/* Writes a control frame now or reports -EAGAIN */
int comch_conn_send_frame(struct doca_comch_connection *conn, uint8_t kind, uint32_t id, const void *p, uint32_t len,
			  int pass_fd);
uint32_t comch_conn_alloc_local_id(struct doca_comch_connection *conn);
/* Duplicated data socket of remote consumer id (caller closes), or -1 when unknown */
int comch_conn_remote_consumer_fd(struct doca_comch_connection *conn, uint32_t id);
/* Its sends in flight (if any) wait for room in a socket the pe watches for writing */
bool comch_conn_sends_wait_on_fd(const struct doca_comch_connection *conn);
void comch_conn_attach_user(struct doca_comch_connection *conn);
void comch_conn_detach_user(struct doca_comch_connection *conn);
/* A local consumer's wake eventfd, written when the connection dies (-1: none, e.g. out of fds) */
void comch_conn_add_consumer_wake(struct doca_comch_connection *conn, int fd);
void comch_conn_remove_consumer_wake(struct doca_comch_connection *conn, int fd);

/* Writes the queued sends of conn (its pending list); returns 1 when anything was written */
int comch_conn_flush(struct doca_comch_connection *conn);
/* Completes every queued send of conn with status, nothing written */
void comch_conn_fail_pending(struct doca_comch_connection *conn, doca_error_t status);

/* ---- send tasks (comch_send.c) ---- */

doca_error_t comch_send_pool_create(struct comch_endpoint *ep);
void comch_send_pool_destroy(struct comch_endpoint *ep);
doca_error_t comch_send_alloc_init(struct comch_endpoint *ep, struct doca_comch_connection *peer, const void *msg,
				   uint32_t len, struct doca_comch_task_send **task);
/* Send tasks on conn submitted and not yet completed (queued to write, or completion not delivered) */
bool comch_send_inflight_on(const struct doca_comch_connection *conn);
doca_error_t comch_send_submit(struct doca_ctx *ctx, struct doca_task *task);
/* The ctx ops of a Comch endpoint (server or client) named `name`: its messages complete in submission order and
 * go out through comch_send_submit; start, stop, progress and waits_on_fd are the endpoint's own */
#define COMCH_ENDPOINT_CTX_OPS(name, start_fn, stop_fn, progress_fn, waits_on_fd_fn) \
	{ \
		.ordered_completions = true, .kind = (name), .start = (start_fn), .stop = (stop_fn), \
		.progress = (progress_fn), .submit = comch_send_submit, .waits_on_fd = (waits_on_fd_fn), \
	}

/* ---- shared endpoint helpers (comch_endpoint.c) ---- */

doca_error_t comch_ep_init(struct comch_endpoint *ep, struct doca_dev *dev, bool is_server);
void comch_ep_fini(struct comch_endpoint *ep);
doca_error_t comch_ep_set_max_msg_size(struct comch_endpoint *ep, uint32_t size);
doca_error_t comch_ep_set_recv_queue_size(struct comch_endpoint *ep, uint32_t size);
bool comch_ep_is_idle(const struct comch_endpoint *ep);

/* ---- small helpers over the core's object model (comch_util.c) ---- */

/* The checks of a fast-path task configuration (consumer post_recv, producer send): both callbacks given, 1 to
 * COMCH_MAX_FASTPATH_TASKS tasks (else INVALID_VALUE), the context idle (else BAD_STATE) */
doca_error_t comch_fastpath_conf_check(const struct doca_ctx *ctx, bool callbacks_given, uint32_t num_tasks);
/* The start of a fast-path context `h` (producer, consumer; `what` names it in messages, `task_kind` its tasks): its
 * connection established and its tasks configured, else BAD_STATE; its task pool made at the first start only (tasks
 * the user kept across a stop/start stay valid). Returns the failure from the caller */
#define COMCH_FASTPATH_START_OR_RETURN(h, what, task_kind) \
	do { \
		if ((h)->conn->state != COMCH_CONN_ACTIVE) \
			return sim_fail(DOCA_ERROR_BAD_STATE, "comch " what ": connection is not established"); \
		if ((h)->num_tasks == 0 || (h)->done_cb == NULL) \
			return sim_fail(DOCA_ERROR_BAD_STATE, "comch " what ": " task_kind " tasks not configured"); \
		if ((h)->tasks == NULL) { \
			(h)->tasks = calloc((h)->num_tasks, sizeof(*(h)->tasks)); \
			if ((h)->tasks == NULL) \
				return DOCA_ERROR_NO_MEMORY; \
			(h)->pool_len = (h)->num_tasks; \
			COMCH_FREE_LIST_FILL((h)->free_tasks, (h)->tasks, (h)->num_tasks); \
		} \
	} while (0)

/* The producer's and consumer's task set_conf under DOCA's name `fn` for a handle of struct `type`: the shared checks,
 * then the callbacks (of DOCA's type `cb_type`) and the task count kept in the handle until the context starts */
#define COMCH_FASTPATH_SET_CONF(fn, type, cb_type) \
	SIM_EXPORT doca_error_t fn(struct type *handle, cb_type task_completion_cb, cb_type task_error_cb, \
				   uint32_t num_tasks) \
	{ \
		doca_error_t err = comch_fastpath_conf_check(handle == NULL ? NULL : &handle->ctx, \
							     task_completion_cb != NULL && task_error_cb != NULL, \
							     num_tasks); \
		if (err != DOCA_SUCCESS) \
			return err; \
		handle->done_cb = task_completion_cb; \
		handle->err_cb = task_error_cb; \
		handle->num_tasks = num_tasks; \
		return DOCA_SUCCESS; \
	}
/* Device limits: the core's per-device caps, with our defaults where a cap is left at 0 */
uint32_t comch_cap_max_msg_size(const struct doca_devinfo *devinfo);
uint32_t comch_cap_max_name_len(const struct doca_devinfo *devinfo);
uint32_t comch_cap_max_clients(const struct doca_devinfo *devinfo);
uint32_t comch_cap_max_recv_queue(const struct doca_devinfo *devinfo);
uint32_t comch_cap_max_send_tasks(const struct doca_devinfo *devinfo);
uint32_t comch_cap_max_buf_size(const struct doca_devinfo *devinfo);

/* Watch / unwatch a socket on the progress engine of ctx (no-op when not connected to a pe) */
void comch_watch(struct doca_ctx *ctx, int fd);
void comch_unwatch(struct doca_ctx *ctx, int fd);

int64_t comch_now_ns(void);
/* How long an accepted peer may take to complete the handshake: DOCA_SIM_HANDSHAKE_MS, default 10 s */
int64_t comch_handshake_deadline_ns(void);

/* DOCA 2.7 names, exported as aliases of the 3.x functions */
doca_error_t doca_comch_server_event_connection_register(struct doca_comch_server *comch_server,
							 doca_comch_event_connection_status_changed_cb_t connect_cb,
							 doca_comch_event_connection_status_changed_cb_t disconnect_cb);
doca_error_t doca_comch_server_get_device_repr(const struct doca_comch_server *comch_server,
					       struct doca_dev_rep **repr);

#endif /* SIM_COMCH_INTERNAL_H_ */
