/*
 * DOCA RDMA on the software device, two processes (a requester and a responder, forked) as NVIDIA's samples pair them:
 * connection details and an mmap export cross out of band (pipes here), then write, read, send, send with immediate,
 * write with immediate, compare-and-swap and fetch-and-add, each checked on the side that owns the memory; the
 * responder's sync event exported for the network, set, read and added to by the requester's remote-net tasks, a
 * forged sync event key refused; a write to
 * memory exported read-only and a write through a forged (enlarged) descriptor fail; once the responder is gone a
 * request fails instead of hanging. Buffer lists: a send gathered from two local buffers lands scattered over a
 * three-buffer receive, a write gathered from three, a read scattered over two; a list over the context's limit is
 * refused; an empty send (no source buffer) reaches a receive without a buffer, a non-empty one fails there on
 * both sides (and the responder lives on). A second pair connects through RDMA CM (listen, connect to address,
 * accept); a third connects and disconnects 40 times with the device's connection-object bound lowered to 8
 * (DOCA_SIM_RDMA_CONN_OBJECTS): closed connections are retired, so every connection is still served. How
 * connections end against raw peers: sim/tests/rdma_close.c.
 * Usage: rdma_pair  (prints "rdma_pair: ok")
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#include "rdma_test_util.h"

#define BIG (1u << 20)
#define PERMS (DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | \
	       DOCA_ACCESS_FLAG_RDMA_ATOMIC)

struct side {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_buf_inventory *inv;
	struct doca_rdma_connection *conn;
};

static volatile int done_count, fail_count;
static doca_error_t last_error;
static struct doca_rdma_task_receive *last_receive;

T_COUNTING_CB(ok_cb, struct doca_task, done_count)
static void err_cb(struct doca_task *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	last_error = doca_task_get_status(t);
	fail_count++;
}
static void recv_ok(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	last_receive = t;
	done_count++;
}
static void recv_err(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	last_error = doca_task_get_status(doca_rdma_task_receive_as_task(t));
	fail_count++;
}

static void side_open(struct side *s, bool cm)
{
	s->dev = t_open_first_dev();
	T_OK(doca_pe_create(&s->pe));
	T_OK(doca_rdma_create(s->dev, &s->rdma));
	T_OK(doca_rdma_set_permissions(s->rdma, PERMS));
	T_OK(doca_rdma_set_max_num_connections(s->rdma, 4));
#define CONF(kind) T_OK(doca_rdma_task_##kind##_set_conf(s->rdma, (void *)ok_cb, (void *)err_cb, 16))
	CONF(write);
	CONF(write_imm);
	CONF(read);
	CONF(send);
	CONF(send_imm);
	CONF(atomic_cmp_swp);
	CONF(atomic_fetch_add);
	CONF(remote_net_sync_event_get);
	CONF(remote_net_sync_event_notify_set);
	CONF(remote_net_sync_event_notify_add);
	T_OK(doca_rdma_task_receive_set_conf(s->rdma, recv_ok, recv_err, 16));
	{
		/* buffer lists: one buffer per list until asked; the caps bound what may be asked */
		const struct doca_devinfo *di = doca_dev_as_devinfo(s->dev);
		uint32_t v;
		T_OK(doca_rdma_get_max_send_buf_list_len(s->rdma, &v));
		T_TRUE(v == 1);
		T_OK(doca_rdma_task_receive_get_dst_buf_list_len(s->rdma, &v));
		T_TRUE(v == 1);
		T_OK(doca_rdma_cap_get_max_send_buf_list_len(di, &v));
		T_TRUE(v >= 4);
		T_TRUE(doca_rdma_set_max_send_buf_list_len(s->rdma, v + 1) == DOCA_ERROR_INVALID_VALUE);
		T_TRUE(doca_rdma_set_max_send_buf_list_len(s->rdma, 0) == DOCA_ERROR_INVALID_VALUE);
		T_OK(doca_rdma_set_max_send_buf_list_len(s->rdma, 4));
		T_OK(doca_rdma_cap_task_receive_get_max_dst_buf_list_len(di, DOCA_RDMA_TRANSPORT_TYPE_RC, &v));
		T_TRUE(v >= 3);
		T_TRUE(doca_rdma_task_receive_set_dst_buf_list_len(s->rdma, v + 1) == DOCA_ERROR_INVALID_VALUE);
		T_OK(doca_rdma_task_receive_set_dst_buf_list_len(s->rdma, 3));
	}
	if (cm)
		t_cm_callbacks(s->rdma);
	T_OK(doca_pe_connect_ctx(s->pe, doca_rdma_as_ctx(s->rdma)));
	T_OK(doca_ctx_start(doca_rdma_as_ctx(s->rdma)));
	T_TRUE(doca_rdma_set_max_send_buf_list_len(s->rdma, 2) == DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_inventory_create(32, &s->inv));
	T_OK(doca_buf_inventory_start(s->inv));
}

static void wait_tasks(struct side *s, int want_done, int want_fail)
{
	double deadline = t_now() + 20;
	while (done_count < want_done || fail_count < want_fail) {
		doca_pe_progress(s->pe);
		T_TRUE(t_now() < deadline);
	}
}

/* Submits a task that must be accepted and progresses until the completions counted reach want_done and want_fail
 * (a macro, so that a refused submit names the caller's line) */
#define SUBMIT_AND_WAIT(s, task, want_done, want_fail) \
	do { \
		T_OK(doca_task_submit(task)); \
		wait_tasks(s, want_done, want_fail); \
	} while (0)

/* The same for a task that must fail: once the completions counted reach want_done and want_fail, the last failure
 * was want_error */
#define SUBMIT_AND_FAIL(s, task, want_done, want_fail, want_error) \
	do { \
		SUBMIT_AND_WAIT(s, task, want_done, want_fail); \
		T_TRUE(last_error == (want_error)); \
	} while (0)

/* The 64-bit word at p (a result an atomic or a sync-event get wrote into local memory, on any alignment) */
static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* As an event-driven program waits: arm the notification, sleep on the handle, clear, progress. `quiet_ms` > 0 first
 * checks that nothing wakes the sleeper for that long (posted receives alone are no reason to wake). */
static void wait_tasks_sleeping(struct side *s, int want_done, int want_fail, int quiet_ms)
{
	doca_notification_handle_t handle;
	double deadline = t_now() + 20;
	T_OK(doca_pe_get_notification_handle(s->pe, &handle));
	if (quiet_ms > 0) {
		struct pollfd p = { .fd = (int)handle, .events = POLLIN };
		while (doca_pe_progress(s->pe) != 0)
			;
		T_OK(doca_pe_request_notification(s->pe));
		T_TRUE(poll(&p, 1, quiet_ms) == 0);
		T_OK(doca_pe_clear_notification(s->pe, handle));
	}
	while (done_count < want_done || fail_count < want_fail) {
		struct pollfd p = { .fd = (int)handle, .events = POLLIN };
		if (doca_pe_progress(s->pe) != 0)
			continue;
		T_OK(doca_pe_request_notification(s->pe));
		if (doca_pe_progress(s->pe) == 0)
			T_TRUE(poll(&p, 1, 20000) == 1); /* a completion wakes us well before the deadline */
		T_OK(doca_pe_clear_notification(s->pe, handle));
		T_TRUE(t_now() < deadline);
	}
}

static struct doca_buf *buf_at(struct side *s, struct doca_mmap *m, void *addr, size_t len, size_t data_len)
{
	struct doca_buf *b;
	T_OK(doca_buf_inventory_buf_get_by_data(s->inv, m, addr, len, &b));
	T_OK(doca_buf_set_data_len(b, data_len));
	return b;
}

/* A list of `n` buffers over consecutive pieces of `addr` (lens[i] bytes each, data_len = data ? lens[i] : 0) */
static struct doca_buf *list_at(struct side *s, struct doca_mmap *m, uint8_t *addr, const size_t *lens, int n,
				bool data)
{
	struct doca_buf *head = NULL;
	for (int i = 0; i < n; i++) {
		struct doca_buf *b = buf_at(s, m, addr, lens[i], data ? lens[i] : 0);
		if (head == NULL)
			head = b;
		else
			T_OK(doca_buf_chain_list(head, b));
		addr += lens[i];
	}
	return head;
}

static void post_receive(struct side *s, struct doca_mmap *m, void *addr, size_t len)
{
	struct doca_buf *b;
	struct doca_rdma_task_receive *t;
	union doca_data none = { 0 };
	T_OK(doca_buf_inventory_buf_get_by_addr(s->inv, m, addr, len, &b));
	T_OK(doca_rdma_task_receive_allocate_init(s->rdma, b, none, &t));
	T_OK(doca_task_submit(doca_rdma_task_receive_as_task(t)));
}

/* ---------------------------------------------------------------- exported details */
static int responder(int to_parent, int from_parent)
{
	struct side s;
	static uint8_t a[BIG + 4096] __attribute__((aligned(64))), b[4096], inbox[3][256];
	static uint8_t listed[64];
	struct doca_mmap *mlist;
	struct doca_buf *scattered;
	const void *desc;
	size_t len;
	uint8_t details[256];
	struct doca_mmap *ma, *mb, *mi;
	struct doca_sync_event *se;
	const uint8_t *se_blob;
	size_t se_len;
	uint64_t value;
	char cmd;

	side_open(&s, false);
	T_OK(doca_sync_event_create(&se));
	T_TRUE(doca_sync_event_export_to_remote_net(se, &se_blob, &se_len) == DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_sync_event_add_publisher_location_remote_net(se));
	T_OK(doca_sync_event_add_subscriber_location_cpu(se, s.dev));
	T_OK(doca_sync_event_start(se));
	T_OK(doca_sync_event_export_to_remote_net(se, &se_blob, &se_len));
	t_fill(b, sizeof(b), 2);
	ma = t_mmap(s.dev, a, sizeof(a), PERMS);
	mb = t_mmap(s.dev, b, sizeof(b), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ);
	mi = t_mmap(s.dev, inbox, sizeof(inbox), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	for (int i = 0; i < 3; i++)
		post_receive(&s, mi, inbox[i], sizeof(inbox[i]));
	{
		/* after those: a receive scattered over three buffers, then two without a buffer; first a list of four,
		 * over the limit of three, which fails at once and is never posted */
		static const size_t pieces[] = { 4, 4, 8, 8 };
		struct doca_rdma_task_receive *t;
		union doca_data none = { 0 };
		mlist = t_mmap(s.dev, listed, sizeof(listed), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
		scattered = list_at(&s, mlist, listed + 32, pieces, 4, false);
		T_OK(doca_rdma_task_receive_allocate_init(s.rdma, scattered, none, &t));
		T_OK(doca_task_submit(doca_rdma_task_receive_as_task(t)));
		wait_tasks(&s, 0, 1);
		T_TRUE(last_error == DOCA_ERROR_INVALID_VALUE);
		doca_task_free(doca_rdma_task_receive_as_task(t));
		doca_buf_dec_refcount(scattered, NULL);
		scattered = list_at(&s, mlist, listed, pieces, 3, false);
		T_OK(doca_rdma_task_receive_allocate_init(s.rdma, scattered, none, &t));
		T_OK(doca_task_submit(doca_rdma_task_receive_as_task(t)));
		for (int i = 0; i < 2; i++) {
			T_OK(doca_rdma_task_receive_allocate_init(s.rdma, NULL, none, &t));
			T_OK(doca_task_submit(doca_rdma_task_receive_as_task(t)));
		}
	}
	/* five receives posted and nobody connected: an armed notification stays quiet */
	wait_tasks_sleeping(&s, done_count, fail_count, 300);
	T_OK(doca_rdma_export(s.rdma, &desc, &len, &s.conn));
	put_blob(to_parent, desc, len);
	T_OK(doca_mmap_export_rdma(ma, s.dev, &desc, &len));
	put_blob(to_parent, desc, len);
	T_OK(doca_mmap_export_rdma(mb, s.dev, &desc, &len));
	put_blob(to_parent, desc, len);
	put_blob(to_parent, se_blob, se_len);
	len = get_blob(from_parent, details, sizeof(details));
	T_OK(doca_rdma_connect(s.rdma, details, len, s.conn));
	/* The parent says when to check; meanwhile our I/O thread serves it without any progress call of ours
	 * except for the receives, which complete through the pe */
	/* three receives, the scattered one and the empty message; the non-empty message without a buffer fails.
	 * Waited for asleep: the peer's messages wake us, the receives we posted do not */
	wait_tasks_sleeping(&s, 5, 2, 0);
	T_TRUE(last_error == DOCA_ERROR_INVALID_VALUE);
	T_TRUE(read(from_parent, &cmd, 1) == 1 && cmd == 'c');
	{
		size_t lens[3], i = 0;
		T_TRUE(memcmp(listed, "gathered+scatter", 16) == 0);
		for (struct doca_buf *b = scattered; b != NULL && i < 3; i++) {
			struct doca_buf *next = NULL;
			T_OK(doca_buf_get_data_len(b, &lens[i]));
			T_OK(doca_buf_get_next_in_list(b, &next));
			b = next;
		}
		T_TRUE(i == 3 && lens[0] == 4 && lens[1] == 4 && lens[2] == 8);
		T_TRUE(memcmp(a + BIG + 256, "three-pieces-written", 20) == 0);
	}
	{
		uint8_t want[BIG];
		t_fill(want, BIG, 1);
		T_TRUE(memcmp(a, want, BIG) == 0);
		T_TRUE(memcmp(a + BIG, "immediate-write!", 16) == 0);
		T_TRUE(*(uint64_t *)(a + BIG + 64) == 47);
		T_TRUE(memcmp(inbox[0], "hello", 5) == 0);
		T_TRUE(memcmp(inbox[1], "imm!", 4) == 0);
	}
	/* the requester set our sync event to 7 and added 3 */
	T_OK(doca_sync_event_wait_gt(se, 9, UINT64_MAX));
	T_OK(doca_sync_event_get(se, &value));
	T_TRUE(value == 10);
	T_OK(doca_sync_event_stop(se));
	T_OK(doca_sync_event_destroy(se));
	T_TRUE(write(to_parent, "k", 1) == 1);
	return 0;
}

static int requester(int from_child, int to_child, pid_t child)
{
	struct side s;
	static uint8_t local[BIG + 4096];
	uint8_t details[256], desc_a[256], desc_b[256], se_blob[256];
	size_t dl, la, lb, ls;
	struct doca_mmap *ml, *ra, *rb, *forged;
	struct doca_buf *src, *dst;
	union doca_data none = { 0 };
	const void *mine;
	size_t mine_len;
	char ack;
	int d = 0, f = 0;

	side_open(&s, false);
	ml = t_mmap(s.dev, local, sizeof(local), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	dl = get_blob(from_child, details, sizeof(details));
	la = get_blob(from_child, desc_a, sizeof(desc_a));
	lb = get_blob(from_child, desc_b, sizeof(desc_b));
	ls = get_blob(from_child, se_blob, sizeof(se_blob));
	T_OK(doca_rdma_export(s.rdma, &mine, &mine_len, &s.conn));
	T_OK(doca_rdma_connect(s.rdma, details, dl, s.conn));
	put_blob(to_child, mine, mine_len);
	T_OK(doca_mmap_create_from_export(NULL, desc_a, la, s.dev, &ra));
	T_OK(doca_mmap_create_from_export(NULL, desc_b, lb, s.dev, &rb));
	void *ra_base, *rb_base;
	size_t ra_len, rb_len;
	T_OK(doca_mmap_get_memrange(ra, &ra_base, &ra_len));
	T_OK(doca_mmap_get_memrange(rb, &rb_base, &rb_len));

	/* write 1 MiB */
	t_fill(local, BIG, 1);
	src = buf_at(&s, ml, local, BIG, BIG);
	T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ra, ra_base, BIG, &dst));
	struct doca_rdma_task_write *w;
	T_OK(doca_rdma_task_write_allocate_init(s.rdma, s.conn, src, dst, none, &w));
	SUBMIT_AND_WAIT(&s, doca_rdma_task_write_as_task(w), ++d, f);
	size_t got_len;
	T_OK(doca_buf_get_data_len(dst, &got_len));
	T_TRUE(got_len == BIG);
	doca_task_free(doca_rdma_task_write_as_task(w));
	doca_buf_dec_refcount(src, NULL);
	doca_buf_dec_refcount(dst, NULL);

	/* read 4 KiB of the read-only export */
	{
		uint8_t want[4096];
		struct doca_rdma_task_read *r;
		t_fill(want, sizeof(want), 2);
		memset(local, 0, 4096);
		src = buf_at(&s, rb, rb_base, rb_len, rb_len);
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ml, local, 4096, &dst));
		T_OK(doca_rdma_task_read_allocate_init(s.rdma, s.conn, src, dst, none, &r));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_read_as_task(r), ++d, f);
		T_TRUE(memcmp(local, want, sizeof(want)) == 0);
		doca_task_free(doca_rdma_task_read_as_task(r));
		doca_buf_dec_refcount(src, NULL);
		doca_buf_dec_refcount(dst, NULL);
	}

	/* send, send with immediate, write with immediate */
	{
		struct doca_rdma_task_send *sn;
		struct doca_rdma_task_send_imm *si;
		struct doca_rdma_task_write_imm *wi;
		memcpy(local, "hello", 5);
		memcpy(local + 64, "imm!", 4);
		memcpy(local + 128, "immediate-write!", 16);
		src = buf_at(&s, ml, local, 5, 5);
		T_OK(doca_rdma_task_send_allocate_init(s.rdma, s.conn, src, none, &sn));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_send_as_task(sn), ++d, f);
		struct doca_buf *src2 = buf_at(&s, ml, local + 64, 4, 4);
		T_OK(doca_rdma_task_send_imm_allocate_init(s.rdma, s.conn, src2, 0x1234, none, &si));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_send_imm_as_task(si), ++d, f);
		struct doca_buf *src3 = buf_at(&s, ml, local + 128, 16, 16);
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ra, (uint8_t *)ra_base + BIG, 16, &dst));
		T_OK(doca_rdma_task_write_imm_allocate_init(s.rdma, s.conn, src3, dst, 0xbeef, none, &wi));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_write_imm_as_task(wi), ++d, f);
		doca_task_free(doca_rdma_task_send_as_task(sn));
		doca_task_free(doca_rdma_task_send_imm_as_task(si));
		doca_task_free(doca_rdma_task_write_imm_as_task(wi));
		doca_buf_dec_refcount(src, NULL);
		doca_buf_dec_refcount(src2, NULL);
		doca_buf_dec_refcount(src3, NULL);
		doca_buf_dec_refcount(dst, NULL);
	}

	/* atomics on the word at BIG + 64: CAS 0 -> 42, then add 5 */
	{
		struct doca_rdma_task_atomic_cmp_swp *cas;
		struct doca_rdma_task_atomic_fetch_add *fa;
		struct doca_buf *res;
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ra, (uint8_t *)ra_base + BIG + 64, 8, &dst));
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ml, local + 512, 16, &res));
		T_OK(doca_rdma_task_atomic_cmp_swp_allocate_init(s.rdma, s.conn, dst, res, 0, 42, none, &cas));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_atomic_cmp_swp_as_task(cas), ++d, f);
		T_TRUE(u64_at(local + 512) == 0);
		T_OK(doca_rdma_task_atomic_fetch_add_allocate_init(s.rdma, s.conn, dst, res, 5, none, &fa));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_atomic_fetch_add_as_task(fa), ++d, f);
		T_TRUE(u64_at(local + 520) == 42);
		doca_task_free(doca_rdma_task_atomic_cmp_swp_as_task(cas));
		doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fa));
		doca_buf_dec_refcount(res, NULL);
		doca_buf_dec_refcount(dst, NULL);
	}

	/* the responder's sync event: set 7, read it back, add 3 (the value before comes back), then a forged key */
	{
		struct doca_sync_event_remote_net *rse, *forged_se;
		struct doca_rdma_task_remote_net_sync_event_notify_set *set;
		struct doca_rdma_task_remote_net_sync_event_get *get;
		struct doca_rdma_task_remote_net_sync_event_notify_add *add;
		struct doca_buf *res;
		uint64_t seven = 7;
		T_OK(doca_sync_event_remote_net_create_from_export(s.dev, se_blob, ls, &rse));
		memcpy(local + 1024, &seven, 8);
		src = buf_at(&s, ml, local + 1024, 8, 8);
		T_OK(doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(s.rdma, s.conn, rse, src, none, &set));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_remote_net_sync_event_notify_set_as_task(set), ++d, f);
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ml, local + 1100, 8, &res));
		T_OK(doca_rdma_task_remote_net_sync_event_get_allocate_init(s.rdma, s.conn, rse, res, none, &get));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_remote_net_sync_event_get_as_task(get), ++d, f);
		T_TRUE(u64_at(local + 1100) == 7 && doca_rdma_task_remote_net_sync_event_get_get_result_len(get) == 8);
		T_OK(doca_buf_reset_data_len(res));
		T_OK(doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(s.rdma, s.conn, rse, res, 3, none, &add));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_remote_net_sync_event_notify_add_as_task(add), ++d, f);
		T_TRUE(u64_at(local + 1100) == 7);
		doca_task_free(doca_rdma_task_remote_net_sync_event_notify_add_as_task(add));
		doca_task_free(doca_rdma_task_remote_net_sync_event_get_as_task(get));

		se_blob[8] ^= 1; /* the key: a peer that guesses wrong reaches nothing */
		T_OK(doca_sync_event_remote_net_create_from_export(s.dev, se_blob, ls, &forged_se));
		doca_rdma_task_remote_net_sync_event_notify_set_set_sync_event(set, forged_se);
		SUBMIT_AND_FAIL(&s, doca_rdma_task_remote_net_sync_event_notify_set_as_task(set), d, ++f,
				DOCA_ERROR_NOT_PERMITTED);
		doca_task_free(doca_rdma_task_remote_net_sync_event_notify_set_as_task(set));
		T_OK(doca_sync_event_remote_net_destroy(forged_se));
		T_OK(doca_sync_event_remote_net_destroy(rse));
		doca_buf_dec_refcount(res, NULL);
		doca_buf_dec_refcount(src, NULL);
	}

	/* buffer lists, and sends without a source buffer */
	{
		static const size_t two[] = { 8, 8 }, three[] = { 5, 7, 8 }, split[] = { 1000, 3096 },
				    five[] = { 1, 1, 1, 1, 1 };
		struct doca_rdma_task_send *sn;
		struct doca_rdma_task_write *wl;
		struct doca_rdma_task_read *rl, *over;
		struct doca_buf *next;
		uint8_t want[4096];
		size_t n0, n1;

		/* a send gathered from two buffers, scattered over the responder's three */
		memcpy(local + 2048, "gathered+scatter", 16);
		src = list_at(&s, ml, local + 2048, two, 2, true);
		T_OK(doca_rdma_task_send_allocate_init(s.rdma, s.conn, src, none, &sn));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_send_as_task(sn), ++d, f);
		doca_task_free(doca_rdma_task_send_as_task(sn));
		doca_buf_dec_refcount(src, NULL);
		/* an empty message: no source buffer, into a receive without one */
		T_OK(doca_rdma_task_send_allocate_init(s.rdma, s.conn, NULL, none, &sn));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_send_as_task(sn), ++d, f);
		doca_task_free(doca_rdma_task_send_as_task(sn));
		/* five bytes into a receive without a buffer: fails here and there, nobody crashes */
		src = buf_at(&s, ml, local, 5, 5);
		T_OK(doca_rdma_task_send_allocate_init(s.rdma, s.conn, src, none, &sn));
		SUBMIT_AND_FAIL(&s, doca_rdma_task_send_as_task(sn), d, ++f, DOCA_ERROR_INVALID_VALUE);
		doca_task_free(doca_rdma_task_send_as_task(sn));
		doca_buf_dec_refcount(src, NULL);

		/* a write gathered from three buffers */
		memcpy(local + 2048, "three-pieces-written", 20);
		src = list_at(&s, ml, local + 2048, three, 3, true);
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ra, (uint8_t *)ra_base + BIG + 256, 64, &dst));
		T_OK(doca_rdma_task_write_allocate_init(s.rdma, s.conn, src, dst, none, &wl));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_write_as_task(wl), ++d, f);
		T_OK(doca_buf_get_data_len(dst, &n0));
		T_TRUE(n0 == 20);
		doca_task_free(doca_rdma_task_write_as_task(wl));
		doca_buf_dec_refcount(src, NULL);
		doca_buf_dec_refcount(dst, NULL);

		/* a read scattered over two buffers, each filled in turn */
		t_fill(want, sizeof(want), 2);
		memset(local, 0, 4096);
		src = buf_at(&s, rb, rb_base, rb_len, rb_len);
		dst = list_at(&s, ml, local, split, 2, false);
		T_OK(doca_rdma_task_read_allocate_init(s.rdma, s.conn, src, dst, none, &rl));
		SUBMIT_AND_WAIT(&s, doca_rdma_task_read_as_task(rl), ++d, f);
		T_TRUE(memcmp(local, want, sizeof(want)) == 0);
		T_OK(doca_buf_get_data_len(dst, &n0));
		T_OK(doca_buf_get_next_in_list(dst, &next));
		T_OK(doca_buf_get_data_len(next, &n1));
		T_TRUE(n0 == 1000 && n1 == 3096);
		doca_task_free(doca_rdma_task_read_as_task(rl));
		doca_buf_dec_refcount(dst, NULL);

		/* a list longer than the context's max_send_buf_list_len (4) is refused */
		dst = list_at(&s, ml, local, five, 5, false);
		T_OK(doca_rdma_task_read_allocate_init(s.rdma, s.conn, src, dst, none, &over));
		SUBMIT_AND_FAIL(&s, doca_rdma_task_read_as_task(over), d, ++f, DOCA_ERROR_INVALID_VALUE);
		doca_task_free(doca_rdma_task_read_as_task(over));
		doca_buf_dec_refcount(dst, NULL);
		doca_buf_dec_refcount(src, NULL);
	}

	/* refused: a write to memory exported for reading only; a write through an enlarged descriptor */
	{
		struct doca_rdma_task_write *bad;
		src = buf_at(&s, ml, local, 16, 16);
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, rb, rb_base, 16, &dst));
		T_OK(doca_rdma_task_write_allocate_init(s.rdma, s.conn, src, dst, none, &bad));
		SUBMIT_AND_FAIL(&s, doca_rdma_task_write_as_task(bad), d, ++f, DOCA_ERROR_NOT_PERMITTED);
		doca_task_free(doca_rdma_task_write_as_task(bad));
		doca_buf_dec_refcount(dst, NULL);

		uint64_t *lenp = (uint64_t *)(desc_a + 32); /* base at 24, len at 32 in the descriptor */
		*lenp += 1u << 20;
		T_OK(doca_mmap_create_from_export(NULL, desc_a, la, s.dev, &forged));
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, forged, (uint8_t *)ra_base + ra_len + 4096, 16, &dst));
		T_OK(doca_rdma_task_write_allocate_init(s.rdma, s.conn, src, dst, none, &bad));
		SUBMIT_AND_FAIL(&s, doca_rdma_task_write_as_task(bad), d, ++f, DOCA_ERROR_NOT_PERMITTED);
		doca_task_free(doca_rdma_task_write_as_task(bad));
		doca_buf_dec_refcount(dst, NULL);

		/* Destroying an RDMA import closes none of this process's descriptors: it holds none (each destroy used to
		 * close fd 0 three times, whatever fd 0 had become, e.g. a pipe the runtime had opened there) */
		int sentinel = open("/dev/null", O_RDONLY);
		T_TRUE(sentinel >= 0 && dup2(sentinel, 0) == 0);
		if (sentinel != 0)
			close(sentinel);
		T_OK(doca_mmap_destroy(forged));
		T_TRUE(fcntl(0, F_GETFD) != -1);
	}

	T_TRUE(write(to_child, "c", 1) == 1);
	T_TRUE(read(from_child, &ack, 1) == 1 && ack == 'k');
	int status;
	T_TRUE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* the responder is gone: a request fails, it does not hang */
	{
		struct doca_rdma_task_write *late;
		T_OK(doca_buf_inventory_buf_get_by_addr(s.inv, ra, ra_base, 16, &dst));
		T_OK(doca_rdma_task_write_allocate_init(s.rdma, s.conn, src, dst, none, &late));
		T_OK(doca_task_submit(doca_rdma_task_write_as_task(late)));
		wait_tasks(&s, d, ++f);
		T_TRUE(last_error == DOCA_ERROR_CONNECTION_RESET || last_error == DOCA_ERROR_NOT_CONNECTED);
		doca_task_free(doca_rdma_task_write_as_task(late));
		doca_buf_dec_refcount(dst, NULL);
		doca_buf_dec_refcount(src, NULL);
	}
	t_say("rdma_pair: exported details ok");
	return 0;
}

/* ---------------------------------------------------------------- RDMA CM */
/* Listens on a free test port (another test may hold the first one picked) and tells the parent which */
static void listen_and_tell(struct side *s, int ready_fd)
{
	uint16_t port = 0;
	doca_error_t err = DOCA_ERROR_IN_USE;
	for (unsigned tries = 0; err == DOCA_ERROR_IN_USE && tries < 20; tries++)
		err = doca_rdma_start_listen_to_port(s->rdma, port = t_listen_port(tries));
	T_OK(err);
	T_TRUE(write(ready_fd, &port, sizeof(port)) == sizeof(port));
}

static uint16_t wait_listening(int ready_fd)
{
	uint16_t port = 0;
	T_TRUE(read(ready_fd, &port, sizeof(port)) == sizeof(port));
	close(ready_fd);
	return port;
}

static int cm_server(int ready_fd)
{
	struct side s;
	static uint8_t inbox[64];
	struct doca_mmap *mi;

	side_open(&s, true);
	mi = t_mmap(s.dev, inbox, sizeof(inbox), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	post_receive(&s, mi, inbox, sizeof(inbox));
	listen_and_tell(&s, ready_fd);
	double deadline = t_now() + 20;
	while (!(done_count >= 1 && t_cm_disconnected >= 1)) {
		doca_pe_progress(s.pe);
		T_TRUE(t_now() < deadline);
	}
	T_TRUE(t_cm_established == 1);
	T_TRUE(memcmp(inbox, "over cm", 7) == 0);
	T_TRUE(doca_rdma_task_receive_get_result_opcode(last_receive) == DOCA_RDMA_OPCODE_RECV_SEND);
	return 0;
}

static void cm_client(uint16_t port)
{
	struct side s;
	static uint8_t msg[16] = "over cm";
	struct doca_rdma_addr *addr;
	union doca_data none = { 0 };
	struct doca_mmap *ml;
	struct doca_buf *src;
	struct doca_rdma_task_send *sn;

	done_count = fail_count = 0;
	side_open(&s, true);
	T_OK(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", port, &addr));
	T_OK(doca_rdma_connect_to_addr(s.rdma, addr, none));
	double deadline = t_now() + 20;
	while (!t_cm_established) {
		doca_pe_progress(s.pe);
		T_TRUE(t_now() < deadline && fail_count == 0 && t_cm_failed == 0);
	}
	/* a send on the connection the established callback named */
	ml = t_mmap(s.dev, msg, sizeof(msg), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	src = buf_at(&s, ml, msg, sizeof(msg), 7);
	T_OK(doca_rdma_task_send_allocate_init(s.rdma, t_cm_last, src, none, &sn));
	T_OK(doca_task_submit(doca_rdma_task_send_as_task(sn)));
	wait_tasks(&s, 1, 0);
	T_OK(doca_rdma_connection_disconnect(t_cm_last));
	T_OK(doca_rdma_addr_destroy(addr));
	t_say("rdma_pair: rdma cm ok");
}

/* RDMA CM churn: CHURN connections one after the other, each established on both sides, then ended by the client */
#define CHURN 40
static int churn_server(int ready_fd)
{
	struct side s;

	done_count = fail_count = 0;
	side_open(&s, true);
	listen_and_tell(&s, ready_fd);
	double deadline = t_now() + 60;
	while (t_cm_disconnected < CHURN) {
		doca_pe_progress(s.pe);
		T_TRUE(t_now() < deadline && fail_count == 0 && t_cm_failed == 0);
	}
	T_TRUE(t_cm_established == CHURN);
	return 0;
}

static void churn_client(uint16_t port)
{
	struct side s;
	struct doca_rdma_addr *addr;
	union doca_data none = { 0 };

	done_count = fail_count = 0;
	side_open(&s, true);
	T_OK(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", port, &addr));
	for (int i = 0; i < CHURN; i++) {
		double deadline = t_now() + 20;
		T_OK(doca_rdma_connect_to_addr(s.rdma, addr, none));
		while (t_cm_established <= i) {
			doca_pe_progress(s.pe);
			T_TRUE(t_now() < deadline && fail_count == 0 && t_cm_failed == 0);
		}
		T_OK(doca_rdma_connection_disconnect(t_cm_last));
		while (t_cm_disconnected <= i) {
			doca_pe_progress(s.pe);
			T_TRUE(t_now() < deadline);
		}
	}
	T_OK(doca_rdma_addr_destroy(addr));
	t_say("rdma_pair: rdma cm churn ok");
}

/* server in a child process (it writes its port to ready_fd once it listens), client here on that port; the server
 * must exit 0 */
static void server_and_client(int (*server)(int ready_fd), void (*client)(uint16_t port))
{
	int up[2], status;
	pid_t child;

	T_TRUE(pipe(up) == 0);
	child = fork();
	if (child == 0)
		_exit(server(up[1]));
	close(up[1]);
	client(wait_listening(up[0]));
	T_TRUE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	int up[2], down[2];
	pid_t child;

	signal(SIGPIPE, SIG_IGN);
	T_TRUE(pipe(up) == 0 && pipe(down) == 0);
	child = fork();
	if (child == 0)
		_exit(responder(up[1], down[0]));
	/* Only the child holds these ends: a child that failed is an EOF here, not a hang */
	close(up[1]);
	close(down[0]);
	requester(up[0], down[1], child);

	server_and_client(cm_server, cm_client);
	setenv("DOCA_SIM_RDMA_CONN_OBJECTS", "8", 1);
	server_and_client(churn_server, churn_client);
	t_say("rdma_pair: ok");
	return 0;
}
