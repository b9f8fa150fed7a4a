/*
 * Software DOCA device, libdoca_rdma: the objects shared by rdma.c (context, connections), rdma_task.c (tasks) and
 * rdma_io.c (the I/O thread and the frames on the wire). sim/RDMA.md describes the wire and the trust model.
 *
 * Threading: the application thread owns the context like any DOCA context; one I/O thread per started context moves
 * frames between the sockets and memory. Everything the two share (connection list, queues, task bookkeeping) is
 * under rdma->lock. Completions and connection events the I/O thread produces are queued and delivered by
 * doca_pe_progress on the application thread (DOCA's callback rule); the I/O thread wakes the pe through an eventfd
 * the pe watches.
 */
#ifndef SIM_RDMA_INTERNAL_H_
#define SIM_RDMA_INTERNAL_H_

#include <pthread.h>

#include <doca_rdma.h>

#include "internal.h"

enum rdma_task_kind {
	RDMA_SEND,
	RDMA_SEND_IMM,
	RDMA_RECEIVE,
	RDMA_WRITE,
	RDMA_WRITE_IMM,
	RDMA_READ,
	RDMA_CAS,
	RDMA_FADD,
	RDMA_SE_GET, /* a peer's sync event: read, set, add (sync_event.c exports it as an 8-byte RDMA key) */
	RDMA_SE_SET,
	RDMA_SE_ADD,
	RDMA_KIND_COUNT_,
};

/* Frame operations (rdma_io.c) */
enum rdma_op {
	OP_HELLO = 1,   /* first frame on a socket to an exported connection: payload = its secret */
	OP_HELLO_CM,    /* first frame on an RDMA CM socket: a connection request */
	OP_ACCEPT,
	OP_REJECT,
	OP_DISCONNECT,
	OP_WRITE,       /* payload written at (key, addr) */
	OP_WRITE_IMM,
	OP_READ_REQ,    /* a = length to read at (key, addr) */
	OP_READ_RESP,   /* payload = the bytes read */
	OP_SEND,        /* payload lands in the oldest posted receive */
	OP_SEND_IMM,
	OP_CAS,         /* 8 bytes at (key, addr): compare a, swap b */
	OP_FADD,        /* 8 bytes at (key, addr): add a */
	OP_ATOMIC_RESP, /* a = value before the operation */
	OP_ACK,         /* status = doca_error_t of the request `id` */
	OP_SE_GET,      /* 8 bytes at (key, addr) read atomically: answered with OP_ATOMIC_RESP */
	OP_SE_SET,      /* 8 bytes at (key, addr) set atomically to a: answered with OP_ACK */
	OP_COUNT_,
};

#define RDMA_FRAME_MAGIC 0x464d4452u /* "RDMF" */
#define RDMA_SECRET_LEN 16

struct rdma_frame {
	uint32_t magic;
	uint8_t op;
	uint8_t reserved;
	uint16_t status; /* OP_ACK / responses: a doca_error_t */
	uint32_t imm;
	uint32_t len;    /* payload bytes after the header */
	uint64_t id;     /* the requester's id, echoed in the response */
	uint64_t key;
	uint64_t addr;
	uint64_t a;
	uint64_t b;
};

struct rdma_task {
	struct doca_task base; /* first */
	enum rdma_task_kind kind;
	struct doca_rdma_connection *conn;
	struct doca_buf *src, *dst, *result;
	struct doca_sync_event_remote_net *sync_event; /* RDMA_SE_* */
	uint64_t a, b;
	uint32_t imm;
	uint64_t len;                   /* payload bytes a send or write carries (gathered from its source list) */
	uint64_t id;                    /* while awaiting its response */
	uint64_t claimed;               /* write / read: bytes of dst's free tail it claimed (doca_buf.claimed) */
	doca_error_t local_status;      /* read: set when its response could not land (the ACK then fails the task) */
	struct rdma_task *wait_next;    /* in conn->awaiting / rdma->receives */
	/* receive results */
	enum doca_rdma_opcode opcode;
	uint32_t result_len;
	uint32_t result_imm;
	struct doca_rdma_connection *result_conn;
};

/* One queued outgoing frame: the header, then `len` payload bytes from `payload` (user or exported memory) */
struct rdma_out {
	struct rdma_frame hdr;
	const uint8_t *payload;
	const struct doca_buf *seg; /* payload gathered from this local buffer list instead (its current element) */
	size_t seg_off;             /* bytes of `seg`'s data already sent */
	size_t sent;              /* bytes of header + payload written so far */
	uint64_t key;             /* nonzero: payload is our exported memory, re-validated before each write */
	uint8_t small[RDMA_SECRET_LEN]; /* payloads this small are copied here when queued */
	uint8_t *owned;           /* malloc'd copy `payload` points into (a closing socket's task frame, a small read
				   * response), freed with it */
	bool verdict_queued;      /* a read response whose ACK is already queued behind it */
	struct rdma_out *next;
};

/* One TCP socket of a connection and its receive state */
struct rdma_sock {
	int fd;
	struct rdma_out *out_head, *out_tail;
	struct rdma_frame in;      /* header being read */
	size_t in_got;             /* header bytes read */
	uint64_t in_left;          /* payload bytes still to read for `in` */
	uint64_t in_done;          /* payload bytes already read */
	uint8_t *in_dst;           /* where the payload goes in exported memory (NULL: see in_seg, else discard) */
	struct doca_buf *in_seg;   /* a local destination list (receive, read response): its current element */
	size_t in_seg_off;         /* bytes already placed in in_seg's free tail */
	uint64_t in_key;           /* nonzero: in_dst is our exported memory, re-validated per read */
	doca_error_t in_status;    /* the verdict for the request being read */
	struct rdma_task *in_task; /* the task the payload completes (read response, receive) */
	bool stalled;              /* a SEND waits for a posted receive: stop reading this socket */
	uint32_t last_len;         /* payload length of the last frame read (large: read the next header alone) */
	uint8_t *held;             /* bytes read ahead behind a stalled SEND's header, used once it goes on */
	size_t held_len;
	bool eof;                  /* the peer closed this socket (read returned 0) */
	/* Responses read by doca_pe_progress (rdma_io_app_read): a connection made by exchanged details has a socket of
	 * its own for our requests, whose frames are only responses; the progress engine watches it */
	bool app_eligible;         /* such a socket */
	bool app_read;             /* read by progress now, not by the I/O thread (which only sends what is left) */
};

enum rdma_conn_state {
	CONN_EXPORTED,   /* doca_rdma_export: listening for the peer's socket */
	CONN_CONNECTING, /* CM: request sent, waiting for accept */
	CONN_REQUESTED,  /* CM: the peer asks; waiting for accept/reject */
	CONN_CONNECTED,
	CONN_CLOSED,
};

struct doca_rdma_connection {
	uint32_t magic;                   /* SIM_MAGIC_LIVE; retired connections are released like destroyed handles */
	struct doca_rdma *rdma;
	uint32_t id;
	union doca_data user_data;
	enum rdma_conn_state state;
	bool cm;                          /* RDMA CM connection (events are delivered) */
	bool failed_reported;
	uint32_t events_pending;          /* connection events queued or being delivered (lock held to change) */
	uint32_t pending_sockets;         /* sockets accepted on our listener, still in their handshake (I/O thread) */
	uint8_t secret[RDMA_SECRET_LEN];  /* ours: proves a socket to our listener comes from our peer */
	int listen_fd;                    /* exported connection: our listener (-1 once the peer's socket arrived) */
	struct rdma_sock socks[2];        /* [0] carries our requests; [1] the peer's (same socket for CM) */
	int num_socks;
	struct rdma_task *awaiting;       /* our requests waiting for their response */
	uint64_t closing_deadline;        /* ms: one socket hit end-of-file; the connection closes then at the latest */
	struct doca_rdma_connection *next;
};

/* A connection event to deliver from doca_pe_progress */
enum rdma_event_type { EV_REQUEST, EV_ESTABLISHED, EV_FAILURE, EV_DISCONNECTED };
struct rdma_event {
	enum rdma_event_type type;
	struct doca_rdma_connection *conn;
	struct rdma_event *next;
};

struct rdma_kind_conf {
	sim_task_cb_t success_cb, error_cb;
	uint32_t num_tasks;
	bool set;
};

struct doca_rdma {
	struct doca_ctx ctx; /* first */
	uint32_t magic;
	uint32_t permissions;
	uint32_t gid_index;
	uint16_t max_conns;
	uint32_t send_queue_size, recv_queue_size;
	uint32_t max_send_buf_list_len; /* local buffers per send/write/read list */
	uint32_t recv_buf_list_len;     /* buffers per receive destination list */
	struct rdma_kind_conf conf[RDMA_KIND_COUNT_];
	doca_rdma_connection_request_cb_t on_request;
	doca_rdma_connection_established_cb_t on_established;
	doca_rdma_connection_failure_cb_t on_failure;
	doca_rdma_connection_disconnection_cb_t on_disconnect;

	pthread_mutex_t lock;
	pthread_t io_thread;
	bool io_running, io_quit;
	bool stop_pending; /* doca_ctx_stop ran: IDLE comes at the next progress (RDMA stops asynchronously) */
	int wake_fd;   /* eventfd: the application thread wakes the I/O thread */
	int notify_fd; /* eventfd in the pe's epoll set: the I/O thread wakes doca_pe_progress */
	bool notify_pending; /* notify_fd written since the last progress took the queues (rdma_conn.c) */
	bool io_asleep;      /* the I/O thread is in poll with the set it built under the lock (rdma_io.c) */
	int cm_listen_fd;
	uint8_t *io_stage; /* the I/O thread's read-ahead buffer (RDMA_STAGE_BYTES) */
	uint8_t *app_stage; /* the same for progress reading responses (rdma_io_app_read) */
	bool app_reading;   /* progress is reading: completions go straight to its queue, no eventfd write */
	struct doca_rdma_connection *conns;
	uint32_t num_conns, next_conn_id;
	uint64_t next_request_id;
	struct rdma_task *receives_head, *receives_tail; /* posted receive tasks, oldest first */
	struct doca_task *done_head, *done_tail;         /* completed by the I/O thread, not yet given to the pe */
	struct rdma_event *events_head, *events_tail;
	struct rdma_closing *closing;                    /* sockets on their way out (rdma_sock.c) */
};

/* rdma_io.c */
doca_error_t rdma_io_start(struct doca_rdma *rdma);
void rdma_io_stop(struct doca_rdma *rdma);
void rdma_io_wake(struct doca_rdma *rdma);
/* Lock held: whether the caller must wake the I/O thread for what it just queued (only a sleeping thread needs it,
 * and only once: the first caller takes the duty) */
bool rdma_io_claim_wake(struct doca_rdma *rdma);
/* Lock held, from doca_pe_progress: read the responses waiting on the sockets progress reads (and take back those
 * the I/O thread holds for a large payload, once it is in); true when the I/O thread must be woken */
bool rdma_io_app_read(struct doca_rdma *rdma);
/* Queue a frame on a socket (lock held); a payload over RDMA_SECRET_LEN bytes is not copied: it must stay valid
 * until sent (a submitted task's buffer, or exported memory named by key) */
void rdma_queue_frame(struct doca_rdma *rdma, struct rdma_sock *sock, const struct rdma_frame *hdr,
		      const void *payload, uint64_t key);
/* A listening TCP socket on address (NULL: every address) and port (0: any); -1 with errno on failure */
int rdma_tcp_listen(const char *address, uint16_t port);
/* Connect a TCP socket to address:port (blocking, bounded); -1 on failure */
int rdma_tcp_connect(const char *address, uint16_t port, int timeout_ms);
/* The address our listeners advertise in exported details (DOCA_SIM_RDMA_ADDR, default 127.0.0.1) */
const char *rdma_local_address(void);
/* DOCA_SIM_RDMA_LISTEN_ADDR, or NULL: RDMA CM on every address. */
const char *rdma_listen_address(void);

/* Queue a frame whose payload is gathered from a local buffer list (its elements' data, in order; lock held) */
void rdma_queue_frame_list(struct doca_rdma *rdma, struct rdma_sock *sock, const struct rdma_frame *hdr,
			   const struct doca_buf *list);

/* rdma_buflist.c: local buffer lists */
#define RDMA_MAX_BUF_LIST_LEN 16 /* the device's cap for both kinds of lists */
/* (a list's data length and free tail room: sim_bufs_data_len and sim_bufs_tail_room of common) */
/* A list a task may use as local memory: a list head, at most `max` elements, each local, its data inside it */
doca_error_t rdma_list_check_local(const struct doca_buf *head, uint32_t max, const char *kind, const char *what,
				   const char *limit_name);
/* Cursors: the next data to send (gather) or the next free room to fill (scatter); NULL at the end of the list */
const uint8_t *rdma_list_next_data(const struct doca_buf **seg, size_t *off, size_t *left);
uint8_t *rdma_list_next_room(struct doca_buf **seg, size_t *off, size_t *left);
/* `len` bytes were placed from the first free tail onward: grow each element's data accordingly */
void rdma_list_fill(struct doca_buf *head, uint64_t len);

/* rdma_sock.c: one socket's outgoing side */
#define RDMA_IO_CHUNK (1u << 20)
#define RDMA_STAGE_BYTES (64u * 1024) /* what the I/O thread reads at once while it looks for frame headers */
uint64_t rdma_now_ms(void);
void rdma_sock_init(struct rdma_sock *sock, int fd);
/* Write what the socket takes without blocking; false when the connection broke */
bool rdma_sock_flush(struct rdma_sock *s);
/*
 * A socket on its way out, owned by the I/O thread: what it still has to send leaves, then it closes gracefully (we
 * stop writing, read and drop what the peer still sends until it closes too), 200 ms at most. Kept apart from its
 * connection so closing never waits with the lock held.
 */
struct rdma_closing {
	struct rdma_sock sock; /* its fd and the frames still to send (task payloads copied: the tasks failed) */
	uint64_t deadline;     /* rdma_now_ms() past which it closes whatever is left */
	bool shut;             /* shutdown(SHUT_WR) done: now only reading until the peer's end */
	bool peer_done;        /* the peer's end read: no more input to watch for (EOF stays readable: no spin) */
	struct rdma_closing *next;
};
/* Hand a connection's socket to the closing list (lock held): what it takes at once is sent, frames from a task's
 * memory get a copy of what they still owe (256 KiB at most, past which they are cut); the socket is left without fd
 * and queue */
void rdma_sock_retire(struct doca_rdma *rdma, struct rdma_sock *s);
/* Lock held: a socket progress reads (rdma_io_app_read) goes back to the I/O thread; the engine stops watching it */
void rdma_sock_app_release(struct doca_rdma *rdma, struct rdma_sock *s);
/* One non-blocking step for every closing socket; the ones done are closed and freed (lock held) */
void rdma_closing_step_all(struct doca_rdma *rdma);
/* What poll should watch on a closing socket */
short rdma_closing_events(const struct rdma_closing *c);
/* Closes every closing socket, waiting for them together (200 ms at most): for the stop, once the I/O thread is gone */
void rdma_closing_finish(struct doca_rdma *rdma);

/* rdma_conn.c (lock held) */
void rdma_queue_event(struct doca_rdma *rdma, enum rdma_event_type type, struct doca_rdma_connection *conn);
void rdma_finish_task(struct doca_rdma *rdma, struct rdma_task *task, doca_error_t status);
struct doca_rdma_connection *rdma_conn_new(struct doca_rdma *rdma, bool cm);
/* A receive the socket was filling goes back to the front of the context's queue (lock held) */
void rdma_sock_give_back_receive(struct doca_rdma *rdma, struct rdma_sock *s);
/* Close a connection's sockets and fail what waits on it (lock held) */
void rdma_conn_close(struct doca_rdma *rdma, struct doca_rdma_connection *conn, doca_error_t why);

/* rdma_task.c: start a submitted task's request on its connection (lock held) */
doca_error_t rdma_task_issue(struct doca_rdma *rdma, struct rdma_task *task);
void rdma_task_ops_init(void);

static inline void rdma_frame_init(struct rdma_frame *f, enum rdma_op op)
{
	*f = (struct rdma_frame){ .magic = RDMA_FRAME_MAGIC, .op = (uint8_t)op };
}

#endif /* SIM_RDMA_INTERNAL_H_ */
