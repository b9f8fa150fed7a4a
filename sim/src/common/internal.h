/*
 * Object model of the software DOCA device, shared by every sim/src file (common, dma and comch libraries).
 *
 * Public DOCA handles are the structs below. Context kinds (doca_dma, doca_comch_server, ...) embed struct doca_ctx as
 * their FIRST member, and task kinds embed struct doca_task as their FIRST member, so the generic code in ctx.c / pe.c /
 * task.c drives all of them through small vtables. Nothing here is part of the public DOCA API.
 *
 * Threading: like DOCA, one progress engine and the contexts connected to it belong to one thread. Only the export
 * registry (a mutex; its shared file entries are read by other processes through atomics) and the live-object
 * counters (atomics) are safe to touch from any thread.
 */
#ifndef SIM_INTERNAL_H_
#define SIM_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_types.h>

#ifdef DOCA_SIM_FLAVOUR_2_7
/* DOCA 2.7 has no DOCA_ERROR_BAD_CONFIG (codes 28-31 came later): there a bad device configuration is INVALID_VALUE */
#define DOCA_ERROR_BAD_CONFIG DOCA_ERROR_INVALID_VALUE
#endif

/* Built with -fvisibility=hidden: only DOCA API functions and cross-library sim_* internals are exported. */
#define SIM_EXPORT __attribute__((visibility("default")))

/* Appends item at the tail of a NULL-terminated singly linked queue kept as a head and a tail pointer; link names the
 * item's next field (the queues of tasks, events and frames all have this one shape) */
#define SIM_QUEUE_APPEND(head, tail, item, link) \
	do { \
		(item)->link = NULL; \
		if ((tail) != NULL) \
			(tail)->link = (item); \
		else \
			(head) = (item); \
		(tail) = (item); \
	} while (0)

/* ------------------------------------------------------------------------------------------------------------------
 * Diagnostics: live-object counters and logging
 * ------------------------------------------------------------------------------------------------------------------ */

enum sim_kind {
	SIM_KIND_DEVINFO_LIST,
	SIM_KIND_DEVINFO_REP_LIST,
	SIM_KIND_DEV,
	SIM_KIND_DEV_REP,
	SIM_KIND_MMAP,
	SIM_KIND_BUF_INVENTORY,
	SIM_KIND_BUF, /* bufs currently taken from inventories */
	SIM_KIND_PE,
	SIM_KIND_CTX, /* every context kind: dma, comch server/client/producer/consumer */
	SIM_KIND_TASK, /* tasks allocated and not freed */
	SIM_KIND_CONNECTION,
	SIM_KIND_ACCEL_HANDLE, /* erasure coding matrices and AES-GCM keys */
	SIM_KIND_COUNT_,
};

SIM_EXPORT void sim_live_inc(enum sim_kind kind);
SIM_EXPORT void sim_live_dec(enum sim_kind kind);
SIM_EXPORT uint64_t sim_live_count(enum sim_kind kind);
SIM_EXPORT const char *sim_live_kind_name(enum sim_kind kind);
/* What a leak of the kind is called in strict-mode reports ("dev", "ec matrix or aes_gcm key", ...) */
const char *sim_live_kind_object(enum sim_kind kind);

/* Log levels of DOCA_SIM_LOG (0 silent, 1 errors = default, 2 debug). Config problems are always printed. */
enum sim_log_level { SIM_LOG_ALWAYS = 0, SIM_LOG_ERROR = 1, SIM_LOG_DEBUG = 2 };

SIM_EXPORT void sim_log(enum sim_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `in` with control characters (C0, DEL, UTF-8 C1) written as \xNN, cut to fit `cap`: every log line passes here */
void sim_escape_line(const char *in, char *out, size_t cap);

/* Log why a call fails (debug level) and return err: `return sim_fail(DOCA_ERROR_BAD_STATE, "%s: mmap started", __func__);` */
SIM_EXPORT doca_error_t sim_fail(doca_error_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runtime directory shared by host and DPU processes (DOCA_SIM_DIR, created 0700; runtime_dir.c). Stable for the
 * process lifetime. NULL when the folder is refused (a symlink, another owner, writable by others): the reason is
 * logged once, and every caller fails with a DOCA error. */
SIM_EXPORT const char *sim_dir(void);

/* ------------------------------------------------------------------------------------------------------------------
 * Strict mode (DOCA_SIM_STRICT, strict.c): uses DOCA leaves undefined, or that work only by luck, reported once per
 * kind with a count, and summarised at exit like a sanitizer.
 * ------------------------------------------------------------------------------------------------------------------ */

enum sim_rule {
	SIM_RULE_DATA_OUTSIDE_BUFFER,   /* a buf's data section outside [head, head + len) */
	SIM_RULE_FREE_INFLIGHT_TASK,    /* doca_task_free of a submitted task before its completion callback */
	SIM_RULE_SUBMIT_NOT_RUNNING,    /* task submitted to a context that is not RUNNING */
	SIM_RULE_DESTROY_WITH_CHILDREN, /* mmap/inventory with bufs, pe with contexts, ... */
	SIM_RULE_USE_AFTER_DESTROY,     /* a handle used after its destroy call */
	SIM_RULE_PROGRESS_REENTERED,    /* doca_pe_progress called from one of its own callbacks */
	SIM_RULE_EXPORT_NOT_STARTED,    /* doca_mmap_export_pci of an mmap that is not started */
	SIM_RULE_INVALID_TASK,          /* a task that fails validation (doca_task_submit does not validate) */
	SIM_RULE_TASK_NOT_FREED,        /* a task whose completion ran but that was never freed, at exit */
	SIM_RULE_LEAK,                  /* objects still alive at exit */
	SIM_RULE_RELEASE_HELD_BUF,      /* doca_buf_dec_refcount to 0 of a buf a task in flight uses */
	SIM_RULE_COUNT_,
};

/* 0 off, 1 report (DOCA_SIM_STRICT=1), 2 abort on the first report (DOCA_SIM_STRICT=abort). Read once. */
SIM_EXPORT int sim_strict_mode(void);
/* Report one occurrence: func is the DOCA function, object names the handle's kind ("mmap", "dma_memcpy task"...) */
SIM_EXPORT void sim_strict_report(enum sim_rule rule, const char *func, const char *object, const void *handle,
				  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Handles carry a magic word so that, in strict mode, a destroyed handle is recognised instead of being reused */
#define SIM_MAGIC_LIVE 0x444f4341u /* "DOCA" */
#define SIM_MAGIC_DEAD 0xdead0d0cu
/* ptr = a new zeroed handle, marked live in its magic word; returns DOCA_ERROR_NO_MEMORY from the caller when out of
 * memory (how every create call of a handle starts) */
#define SIM_NEW_HANDLE_OR_RETURN(ptr) \
	do { \
		(ptr) = calloc(1, sizeof(*(ptr))); \
		if ((ptr) == NULL) \
			return DOCA_ERROR_NO_MEMORY; \
		(ptr)->magic = SIM_MAGIC_LIVE; \
	} while (0)
/* Strict mode only: true (after reporting use-after-destroy) when the handle was destroyed */
SIM_EXPORT bool sim_handle_dead(const uint32_t *magic, const char *func, const char *object, const void *handle);
/* Free a destroyed handle; in strict mode poison it and keep it in a bounded quarantine instead */
SIM_EXPORT void sim_release(void *object, uint32_t *magic);
#define SIM_RETURN_IF_DEAD(obj, magic_field, object, ret) \
	do { \
		if ((obj) != NULL && sim_handle_dead(&(obj)->magic_field, __func__, (object), (obj))) \
			return ret; \
	} while (0)
/* The prologue of most functions on a handle: INVALID_VALUE for a NULL handle, and for a destroyed one in strict mode */
#define SIM_RETURN_IF_NULL_OR_DEAD(obj, magic_field, object) \
	do { \
		if ((obj) == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		SIM_RETURN_IF_DEAD(obj, magic_field, object, DOCA_ERROR_INVALID_VALUE); \
	} while (0)

/* Tasks whose completion callback ran and that were neither freed nor resubmitted (reported at exit) */
SIM_EXPORT void sim_completed_tasks_add(int delta);

/* DOCA_SIM_SHUFFLE=SEED: completion order randomisation. Returns false when off; *seed is the parsed seed. */
SIM_EXPORT bool sim_shuffle_seed(uint64_t *seed);

/* ------------------------------------------------------------------------------------------------------------------
 * Devices
 * ------------------------------------------------------------------------------------------------------------------ */

enum sim_side { SIM_SIDE_HOST = 0, SIM_SIDE_DPU = 1 };

/* Side of this process (DOCA_SIM_SIDE, read once) */
SIM_EXPORT enum sim_side sim_side(void);

struct sim_caps {
	bool dma_memcpy_supported;
	uint64_t dma_max_buf_size;     /* bytes; default 2 MiB */
	uint32_t dma_max_buf_list_len; /* default 1 */
	uint32_t dma_max_num_tasks;    /* upper bound of doca_dma_task_memcpy_set_conf's num_tasks */
	bool comch_server_supported;   /* default: dpu side */
	bool comch_client_supported;   /* default: host side */
	uint32_t comch_max_msg_size;   /* default 4080 */
	uint32_t comch_max_name_len;   /* including the NUL */
	uint32_t comch_max_clients;
	uint32_t comch_max_recv_queue_size;
	uint32_t comch_max_send_tasks;
	uint32_t comch_max_buf_size;   /* producer/consumer fast path */
};

struct doca_devinfo_rep {
	char pci_addr[DOCA_DEVINFO_REP_PCI_ADDR_SIZE]; /* PCI address of the host function this represents */
	char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
	enum doca_pci_func_type func_type;
	uint32_t filter_bits;                         /* DOCA_DEVINFO_REP_FILTER_* it matches (NET, EMULATED) */
	struct doca_devinfo *owner;                   /* the DPU device that owns the representor */
};

struct doca_devinfo {
	char pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE]; /* canonical "0000:b1:00.1" */
	char ibdev_name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char iface_name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	enum doca_pci_func_type func_type;
	uint32_t sf_index;                         /* meaningful for DOCA_PCI_FUNC_TYPE_SF only */
	enum sim_side side;
	struct sim_caps caps;
	struct doca_devinfo_rep *reps;             /* representors this device owns (DPU side) */
	size_t num_reps;
};

/* The device table of this process: built once from DOCA_SIM_CONFIG / DOCA_SIM_SIDE and kept for the process lifetime,
 * so devinfo pointers stay valid after doca_devinfo_destroy_list. Returns DOCA_ERROR_BAD_CONFIG etc. on a bad config. */
SIM_EXPORT doca_error_t sim_devices(struct doca_devinfo ***devinfos, size_t *count);
/* The devices of the other side of the link (same configuration), used to decide who may reach whose exports */
SIM_EXPORT doca_error_t sim_peer_devices(struct doca_devinfo ***devinfos, size_t *count);

struct doca_dev {
	struct doca_devinfo *info;
	uint32_t refs; /* mmaps and contexts using it: doca_dev_close refuses with IN_USE while > 0 */
	uint32_t opens; /* doca_dev_open calls not yet closed (DOCA reference-counts opening an open device) */
};

struct doca_dev_rep {
	struct doca_devinfo_rep *info;
	uint32_t refs;
};

SIM_EXPORT void sim_dev_ref(struct doca_dev *dev);
SIM_EXPORT void sim_dev_unref(struct doca_dev *dev);

/* Canonicalise "b1:00.1" / "0000:B1:00.1" into "0000:b1:00.1"; false if it is not a PCI address */
SIM_EXPORT bool sim_pci_canonical(const char *in, char out[DOCA_DEVINFO_PCI_ADDR_SIZE]);
/* Equal PCI addresses, both forms accepted, case-insensitive; false if either is malformed */
SIM_EXPORT bool sim_pci_equal(const char *a, const char *b);

/* True when a process using `importer` may reach memory exported through a device with PCI address exporter_pci:
 * a DPU device owning a representor of that host function; a host device represented on the exporting DPU device
 * (the host copying DPU memory); or the very same device within the exporting process (same_process: local use). */
SIM_EXPORT bool sim_dev_can_reach(const struct doca_devinfo *importer, const char *exporter_pci, bool same_process);

/* ------------------------------------------------------------------------------------------------------------------
 * Progress engine, contexts and tasks
 * ------------------------------------------------------------------------------------------------------------------ */

struct doca_task;

/* Per-kind behaviour of a context. Every hook is optional except where noted. */
struct sim_ctx_ops {
	const char *kind; /* "dma", "comch_server", ... (diagnostics) */
	/* IDLE -> ...: DOCA_SUCCESS makes the ctx RUNNING; DOCA_ERROR_IN_PROGRESS makes it STARTING and the kind later
	 * calls sim_ctx_set_state(ctx, DOCA_CTX_STATE_RUNNING) (from its progress hook); any other error leaves it IDLE. */
	doca_error_t (*start)(struct doca_ctx *ctx);
	/* RUNNING/STARTING -> STOPPING: flush whatever the kind still holds (sim_task_complete with an error status).
	 * DOCA_ERROR_IN_PROGRESS: the kind needs more progress calls and calls sim_ctx_kind_stopped(ctx) when done.
	 * The generic code moves the ctx to IDLE once the kind has stopped and no task is in flight. */
	doca_error_t (*stop)(struct doca_ctx *ctx);
	/* Called by doca_pe_progress in this ctx's turn (before its completions run): execute queued work, poll sockets,
	 * deliver events. Return nonzero if anything happened. A kind stops its turn as soon as ctx->transitioned is set
	 * (a state change is progress on its own: the caller must see it before any later event of this ctx). */
	int (*progress)(struct doca_ctx *ctx);
	/* Accept a task of this ctx (called by doca_task_submit with the ctx RUNNING) WITHOUT validating it, like DOCA:
	 * an invalid task fails at completion. Must not call user callbacks: complete with sim_task_complete (now or
	 * later). Required if the kind has tasks. */
	doca_error_t (*submit)(struct doca_ctx *ctx, struct doca_task *task);
	/* Completions of this kind come in submission order (a queue: comch messages); DOCA_SIM_SHUFFLE then only
	 * spreads them over several progress calls instead of reordering them. DMA leaves the order open. */
	bool ordered_completions;
	/* True when whatever this ctx waits for now (its tasks in flight, a start under way) will be announced by a
	 * watched fd turning readable (an I/O thread's eventfd, a socket, a retry timer), so no progress call is needed
	 * to move it on; doca_pe_request_notification then has no reason to wake a waiter for it (as on hardware, a
	 * receive posted for an hour must not keep an event-driven program spinning). Optional: without it, tasks in
	 * flight and a ctx starting or stopping wake the waiter at once. */
	bool (*waits_on_fd)(const struct doca_ctx *ctx);
	/* doca_task_try_submit's validation (DOCA_ERROR_INVALID_VALUE for an invalid task); optional */
	doca_error_t (*validate)(struct doca_ctx *ctx, struct doca_task *task);
};

struct doca_ctx {
	uint32_t magic;             /* SIM_MAGIC_LIVE until destroyed */
	const struct sim_ctx_ops *ops;
	enum doca_ctx_states state;
	union doca_data user_data;
	doca_ctx_state_changed_callback_t state_changed_cb;
	struct doca_pe *pe;         /* set by doca_pe_connect_ctx */
	struct doca_ctx *pe_next;   /* link in pe->ctxs */
	struct doca_dev *dev;       /* device the ctx was created on (may be NULL) */
	size_t inflight;            /* submitted, completion callback not yet run */
	size_t allocated_tasks;     /* allocated and not freed (informative; DOCA requires them freed before stop ends) */
	bool kind_stopping;         /* ops->stop returned IN_PROGRESS and sim_ctx_kind_stopped was not called yet */
	bool transitioned;          /* the state changed during the current doca_pe_progress turn of this ctx */
	struct doca_task *done_head; /* completed tasks whose callback has not run yet (FIFO) */
	struct doca_task *done_tail;
	size_t num_done;
	struct doca_task *pending_head; /* pooled kinds (task_pool.c): submitted, not yet run */
	struct doca_task *pending_tail;
};

/* Next pseudo-random number of a shuffling pe (xorshift64*) */
SIM_EXPORT uint64_t sim_pe_random(struct doca_pe *pe);

/* Initialise the embedded ctx of a new context object (state IDLE); counts a live SIM_KIND_CTX */
SIM_EXPORT void sim_ctx_init(struct doca_ctx *ctx, const struct sim_ctx_ops *ops, struct doca_dev *dev);
/* Checks before destroying a context object: DOCA_ERROR_BAD_STATE unless IDLE. Disconnects it from its pe. */
/* The answer of a library's capability query for a device: INVALID_VALUE for a NULL devinfo or out-parameter,
 * NOT_SUPPORTED when the library cannot run here (`available` false: its backend is missing), else `value` in *out */
SIM_EXPORT doca_error_t sim_cap_u32(const struct doca_devinfo *devinfo, bool available, uint32_t value, uint32_t *out);
SIM_EXPORT doca_error_t sim_cap_u64(const struct doca_devinfo *devinfo, bool available, uint64_t value, uint64_t *out);
SIM_EXPORT doca_error_t sim_ctx_fini(struct doca_ctx *ctx);
/* The start of a context's destroy: INVALID_VALUE for a NULL handle `obj` (or, in strict mode, one destroyed: its
 * magic word is obj->magic_field), then sim_ctx_fini of obj->ctx_field (BAD_STATE unless idle). Returns the failure
 * from the caller; on success the caller releases what is its own */
#define SIM_CTX_FINI_OR_RETURN(obj, magic_field, ctx_field, object) \
	do { \
		doca_error_t fini_err_; \
		SIM_RETURN_IF_NULL_OR_DEAD(obj, magic_field, object); \
		fini_err_ = sim_ctx_fini(&(obj)->ctx_field); \
		if (fini_err_ != DOCA_SUCCESS) \
			return fini_err_; \
	} while (0)
/* Change state and call the user's state-changed callback (if the state really changes) */
SIM_EXPORT void sim_ctx_set_state(struct doca_ctx *ctx, enum doca_ctx_states next);
/* The kind finished an asynchronous stop (see sim_ctx_ops.stop) */
SIM_EXPORT void sim_ctx_kind_stopped(struct doca_ctx *ctx);
/* True while the ctx accepts configuration (IDLE) */
static inline bool sim_ctx_is_idle(const struct doca_ctx *ctx) { return ctx->state == DOCA_CTX_STATE_IDLE; }

/* Completion callbacks of one task kind, both with DOCA's generic shape; kinds store their typed callbacks here
 * through sim_task_cb_cast (every DOCA task callback is (task*, union doca_data, union doca_data)). */
typedef void (*sim_task_cb_t)(struct doca_task *task, union doca_data task_user_data, union doca_data ctx_user_data);
#define sim_task_cb_cast(cb) ((sim_task_cb_t)(void (*)(void))(cb))

/* Per-kind task behaviour */
#define SIM_TASK_MAX_BUFS 3

struct sim_task_ops {
	const char *kind;                       /* "dma_memcpy", "comch_send", ... */
	void (*free)(struct doca_task *task);   /* return the task to its pool (doca_task_free); required */
	/* optional: the bufs the task uses (list heads), held from its submit until its callback runs */
	size_t (*bufs)(const struct doca_task *task, struct doca_buf *out[SIM_TASK_MAX_BUFS]);
};

struct doca_task {
	const struct sim_task_ops *ops;
	struct doca_ctx *ctx;
	union doca_data user_data;
	doca_error_t status;
	sim_task_cb_t success_cb;
	sim_task_cb_t error_cb;
	struct doca_task *next;  /* intrusive link: pool free list, kind queues, ctx completion queue */
	bool submitted;          /* owned by DOCA: between successful submit and its callback */
	bool completed;          /* its callback ran and it was neither freed nor resubmitted since */
	uint32_t bad_frees;      /* doca_task_free calls while in flight (strict mode reports them) */
	struct doca_buf *held[SIM_TASK_MAX_BUFS]; /* bufs held while in flight (ops->bufs at submit) */
	uint8_t num_held;
	struct sim_task_pool *pool; /* the pool a pooled kind's task returns to (task_pool.c) */
};

/* Status of tasks flushed by doca_ctx_stop before they ran */
#define SIM_TASK_FLUSHED_STATUS DOCA_ERROR_IO_FAILED

/* Initialise the embedded task of a freshly allocated task object (counts a live SIM_KIND_TASK) */
SIM_EXPORT void sim_task_init(struct doca_task *task, const struct sim_task_ops *ops, struct doca_ctx *ctx,
			      sim_task_cb_t success_cb, sim_task_cb_t error_cb, union doca_data user_data);
/* doca_task_free tells the pe a task is being freed: if its completion callback is running, the pe must not carry
 * out a free the program asked for earlier, while the task was in flight (pe.c) */
void sim_pe_note_task_freed(const struct doca_task *task);
/* The device freed this task after its callback (the program had freed it in flight): a later doca_task_free of it is
 * refused without touching its memory. A task allocated again at that address is forgotten there (sim_task_init). */
bool sim_pe_freed_after_callback(const struct doca_task *task);
void sim_pe_forget_deferred_free(const struct doca_task *task);
/* The task's callback is about to run (or its submit failed): the bufs it held are the caller's again (buf.c) */
void sim_task_release_bufs(struct doca_task *task);
/* Undo sim_task_init (called by the kind's free hook) */
SIM_EXPORT void sim_task_fini(struct doca_task *task);
/* Record the result and queue the task on its pe's completion queue; the callback runs from a later
 * doca_pe_progress (never inside submit). DOCA_SUCCESS -> success_cb, anything else -> error_cb. */
SIM_EXPORT void sim_task_complete(struct doca_task *task, doca_error_t status);

struct doca_pe {
	uint32_t magic;
	struct doca_ctx *ctxs;         /* connected contexts (singly linked through pe_next) */
	size_t num_ctxs;
	size_t num_done;               /* completions queued on its contexts, callbacks not yet run */
	size_t next_turn;              /* round robin: index of the ctx whose turn comes next */
	uint64_t ctx_epoch;            /* bumped when a ctx leaves the pe (a callback may destroy one) */
	bool shuffle;                  /* DOCA_SIM_SHUFFLE */
	uint64_t rng;                  /* its generator state */
	size_t inflight;               /* tasks submitted through contexts of this pe, callback not yet run */
	int epoll_fd;                  /* DOCA's notification handle */
	int event_fd;                  /* in epoll_fd; made readable when completions are queued */
	bool event_fd_signalled;
	bool armed;                    /* doca_pe_request_notification called: someone may wait on epoll_fd */
	bool in_progress;              /* inside doca_pe_progress (guards against re-entry from callbacks) */
};

/* Remove ctx from its pe (sim_ctx_fini); internal to libdoca_common */
void sim_pe_disconnect(struct doca_ctx *ctx);

/* Let the pe's notification handle wake up when fd is readable (comch sockets). ctx is for bookkeeping. */
SIM_EXPORT doca_error_t sim_pe_watch_fd(struct doca_pe *pe, int fd, struct doca_ctx *ctx);
/* A watched fd also wakes the pe when it can be written (`out`), or no longer does */
SIM_EXPORT void sim_pe_watch_fd_out(struct doca_pe *pe, int fd, bool out);
SIM_EXPORT void sim_pe_unwatch_fd(struct doca_pe *pe, int fd);
/* Make the notification handle readable (something will be done by the next doca_pe_progress). Cheap when nobody
 * armed the pe: the eventfd is only written while armed. */
SIM_EXPORT void sim_pe_signal(struct doca_pe *pe);

/* ------------------------------------------------------------------------------------------------------------------
 * Memory: mmap, export registry, bufs, inventories
 * ------------------------------------------------------------------------------------------------------------------ */

#define SIM_MMAP_MAX_DEVS 8
#define SIM_EXPORT_KEY_LEN 16

/* Where an imported mmap's memory lives and how to re-validate it before every access */
struct sim_remote {
	pid_t pid;                                  /* exporter's process */
	uint64_t nonce;                             /* exporter's registry file nonce */
	uint32_t index;                             /* entry in the exporter's registry */
	uint8_t key[SIM_EXPORT_KEY_LEN];
	char exporter_pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	const struct sim_registry_entry *entry;     /* the entry inside the exporter's registry, mapped read-only */
	void *map_base;                             /* the mapping holding entry (munmap on destroy; NULL for our own) */
	size_t map_len;
	int pidfd;                                  /* pins the exporter (-1 when it is this process) */
	int registry_fd;                            /* our own open of its registry: the revocation barrier (-1: own) */
	int maps_fd;                                /* its /proc/PID/maps, opened at import: bound to that image */
	int mem_fd;                                 /* its /proc/PID/mem, opened at import (the fallback path), or -1 */
};

struct doca_mmap {
	uint32_t magic;
	bool started;
	bool from_export;             /* created by doca_mmap_create_from_export: memory is in another process */
	void *base;                   /* start of the range: in this process, or the exporter's address if from_export */
	size_t len;
	uint32_t permissions;         /* DOCA_ACCESS_FLAG_* bits */
	struct doca_dev *devs[SIM_MMAP_MAX_DEVS];
	size_t num_devs;
	union doca_data user_data;
	doca_mmap_memrange_free_cb_t *free_cb;
	void *free_cb_opaque;
	size_t live_bufs;             /* bufs from any inventory referencing this mmap */
	/* exporter side */
	int export_index;             /* entry in our registry, -1 when not exported */
	pid_t export_pid;             /* process whose registry holds export_index (a forked child's is not its own) */
	bool exported;
	void *export_descs[SIM_MMAP_MAX_DEVS]; /* per device in devs[]: descriptor from doca_mmap_export_pci (owned) */
	/* importer side */
	struct sim_remote remote;
	/* RDMA (mmap_rdma.c): exporter's key (rdma_key != 0 while exported for RDMA); importer: the peer's key */
	uint64_t rdma_key;
	bool rdma_remote;             /* created from an RDMA export: memory of an RDMA peer, reached only by doca_rdma */
	bool thread_safe;             /* doca_mmap_enable_thread_safety (recorded: every map of the device is) */
	bool has_dmabuf;              /* range set by doca_mmap_set_dmabuf_memrange: dmabuf_fd is our reference */
	int dmabuf_fd;
};

/* Whether dev was added to the mmap: that device, or another handle of the same PCI function */
static inline bool sim_mmap_has_dev(const struct doca_mmap *mmap, const struct doca_dev *dev)
{
	for (size_t i = 0; i < mmap->num_devs; i++)
		if (mmap->devs[i] == dev || mmap->devs[i]->info == dev->info)
			return true;
	return false;
}

/* Whether a range may be set (doca_mmap_set_memrange, ..._set_dmabuf_memrange): not while started (BAD_STATE), and
 * only once (NOT_PERMITTED); func names the call in the log */
doca_error_t sim_mmap_range_settable(const struct doca_mmap *mmap, const char *func);

/* RDMA memory keys (mmap_rdma.c). A responder's I/O thread brackets each touch of its own exported memory with
 * begin/end: begin resolves (key, addr, len) against the live RDMA exports and the permission `need`
 * (DOCA_ACCESS_FLAG_RDMA_*), and holds off doca_mmap_stop/destroy until end, which makes revocation a barrier. */
SIM_EXPORT doca_error_t sim_rdma_access_begin(uint64_t key, uint64_t addr, uint64_t len, uint32_t need, void **local);
SIM_EXPORT void sim_rdma_access_end(void);
/* Ends an RDMA write access that received `written` bytes at *local: for a chained key (an RDMA re-export of a PCI
 * import, mmap_chain.c) they are copied on to the exporting process, whose refusal is returned; else DOCA_SUCCESS */
SIM_EXPORT doca_error_t sim_rdma_access_end_written(size_t written);
/* The checks of sim_rdma_access_begin without an access (a whole request's range, before any of its payload) */
SIM_EXPORT doca_error_t sim_rdma_access_check(uint64_t key, uint64_t addr, uint64_t len, uint32_t need);
/* Revoke the mmap's RDMA export (if any) and wait until no access that began before has ended */
void sim_rdma_unexport(struct doca_mmap *mmap);
/* Memory chains (mmap_chain.c): the RDMA rights an RDMA re-export of a PCI import grants (the exporter's RDMA rights
 * where its PCI rights allow the same direction), and the moves through the importer's door to the exporter's memory
 * (remote.c) that an RDMA access of such a key makes, staged in a per-thread bounce buffer */
uint32_t sim_chain_rdma_permissions(uint32_t pci_export_permissions);
doca_error_t sim_chain_check(const struct doca_mmap *mmap, uint64_t addr, uint64_t len);
doca_error_t sim_chain_stage(const struct doca_mmap *mmap, uint64_t addr, uint64_t len, bool read, void **local);
doca_error_t sim_chain_flush(const struct doca_mmap *mmap, uint64_t addr, size_t written);
/* A key for `len` bytes at `base` that `owner` (an mmap or a sync event) exports for RDMA; unregistering is the barrier */
doca_error_t sim_rdma_register_key(const void *owner, uintptr_t base, size_t len, uint32_t permissions, uint64_t *key);
void sim_rdma_unregister_key(const void *owner);

/* A peer's sync event exported for the network (sync_event.c): its RDMA key and the word's address over there */
struct doca_sync_event_remote_net {
	uint32_t magic;
	struct doca_dev *dev;
	uint64_t key;
	uint64_t addr;
};
/* doca_mmap_create_from_export's RDMA half: is this an RDMA export descriptor, and import it */
bool sim_rdma_is_export_desc(const void *desc, size_t len);
doca_error_t sim_rdma_import(const union doca_data *user_data, const void *desc, size_t len, struct doca_dev *dev,
			     struct doca_mmap **mmap);

/* Re-check, right before touching [addr, addr+len) of an imported mmap, that the export is still live, the key still
 * matches and the range lies inside. DOCA_ERROR_NOT_PERMITTED if revoked/forged/out of range. */
SIM_EXPORT doca_error_t sim_remote_check(const struct doca_mmap *mmap, uint64_t addr, size_t len);
/* The one door to another process's memory (remote.c): copies len bytes between local memory and remote_addr of an
 * imported mmap (remote_is_src: read it), checking right before each access that the export is live, the range
 * inside, and the bytes still the pages registered at export with the protection the access needs (vma.h); the
 * exporter's revocation waits for it (registry.h). process_vm_readv/writev, else /proc/PID/mem with the same checks. */
SIM_EXPORT doca_error_t sim_remote_copy(const struct doca_mmap *mmap, bool remote_is_src, void *local,
					uint64_t remote_addr, size_t len);
/* For imports of this process's own exports (plain memmove): the same page checks, need = SIM_VMA_READ/WRITE */
SIM_EXPORT doca_error_t sim_remote_check_pages(const struct doca_mmap *mmap, uint64_t addr, size_t len,
					       uint32_t need);
/* Append one line to DOCA_SIM_TRACE (no-op if unset) describing a remote access */
SIM_EXPORT void sim_trace_remote(const struct doca_mmap *mmap, uint64_t addr, size_t len, char rw, const char *verdict);

struct doca_buf {
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	void *head;                 /* buffer start (an address in the exporter's process for remote mmaps) */
	size_t len;                 /* buffer length */
	void *data;                 /* data start, head <= data <= head + len */
	size_t data_len;
	size_t claimed;             /* bytes after the data that RDMA writes / reads in flight will fill: taken at submit,
				     * so a second task finds the room gone, given back when the task is done */
	uint16_t refcount;          /* 0 = free in its inventory */
	struct doca_buf *next;      /* next in list (chain_list) or next free in the inventory */
	struct doca_buf *last;      /* list head only: last element (O(1) chaining) */
	uint32_t list_len;          /* elements in the list it heads; 0 marks a non-head list member (or a free buf) */
	uint16_t held;              /* submitted tasks using it whose callback has not run (list heads only) */
	bool release_deferred;      /* its count reached 0 while held: back to the inventory when the last task is done */
	bool release_reported;      /* strict: one of those tasks was not itself freed in flight, so the early release is
				     * a misuse of its own (reported when the last task is done) */
};

/* A submitted task holds its bufs until its callback runs (task.c, pe.c); releasing a held buf is reported in strict
 * mode and takes effect only when the last holder is done, so the inventory never hands it out while DOCA uses it */
void sim_buf_hold(struct doca_buf *buf);
void sim_buf_unhold(struct doca_buf *buf);

/* True when [data, data + data_len) lies inside the buf's [head, head + len) */
SIM_EXPORT bool sim_buf_data_fits(const struct doca_buf *buf, const void *data, size_t data_len);

/* Free room after a buf's data: from the end of its data to the end of the buffer (0 when the data runs past it) */
static inline size_t sim_buf_tail_room(const struct doca_buf *buf)
{
	uintptr_t end = (uintptr_t)buf->head + buf->len, tail = (uintptr_t)buf->data + buf->data_len;

	return tail > end ? 0 : (size_t)(end - tail);
}

/* Buffer lists as accelerator tasks use them (buf_io.c): a source is the data of every element in list order; an
 * output is appended after each element's data, filling one element's free tail after the other */
SIM_EXPORT size_t sim_bufs_data_len(const struct doca_buf *list);
SIM_EXPORT size_t sim_bufs_tail_room(const struct doca_buf *list);
/* A task's buffer list: present, a list head, data inside each element, the device added to each mmap, the access
 * it needs (is_dst: written), no more than max_list_len elements. INVALID_VALUE / NOT_PERMITTED / NOT_SUPPORTED. */
SIM_EXPORT doca_error_t sim_bufs_check(const struct doca_buf *list, const struct doca_dev *dev, uint32_t max_list_len,
				       bool is_dst);
/* An accelerator task's two lists: the source (read), then the destination (written); the first failure */
static inline doca_error_t sim_bufs_check_src_dst(const struct doca_buf *src, const struct doca_buf *dst,
						  const struct doca_dev *dev, uint32_t max_list_len)
{
	doca_error_t err = sim_bufs_check(src, dev, max_list_len, false);

	return err != DOCA_SUCCESS ? err : sim_bufs_check(dst, dev, max_list_len, true);
}
/* Copy the first len bytes of the list's data into out (INVALID_VALUE when it holds fewer) */
SIM_EXPORT doca_error_t sim_bufs_read(const struct doca_buf *list, void *out, size_t len);
/* The data itself when the list is one element of this process's memory (no copy needed), else NULL */
SIM_EXPORT const uint8_t *sim_bufs_direct(const struct doca_buf *list);
/* The free tail of the list when it is one element of this process's memory with len bytes of room (an accelerator
 * then writes its output there at once instead of through a staging copy), else NULL */
SIM_EXPORT uint8_t *sim_bufs_direct_tail(struct doca_buf *list, size_t len);
/* Append len bytes after the list's data (INVALID_VALUE, nothing written, when they do not fit) */
SIM_EXPORT doca_error_t sim_bufs_append(struct doca_buf *list, const void *in, size_t len);

struct doca_buf_inventory {
	uint32_t magic;
	bool started;
	size_t num_elements;
	size_t num_free;
	struct doca_buf *bufs;      /* num_elements slots */
	struct doca_buf *free_list;
	union doca_data user_data;
};

#endif /* SIM_INTERNAL_H_ */
