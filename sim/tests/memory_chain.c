/*
 * Memory chains, three processes as NVIDIA's storage reference application runs them: a host exports its memory over
 * PCI (doca_mmap_export_pci), a DPU imports it (doca_mmap_create_from_export) and re-exports the import for RDMA
 * (doca_mmap_export_rdma), and a remote RDMA peer (the storage target) writes and reads the host's memory through
 * that chain, the DPU never holding the bytes. This program forks the three and drives them through pipes:
 *
 *   map 0  PCI read-write + RDMA: a 256 KiB write lands in the host, a read returns the host's bytes; a descriptor
 *          enlarged by the peer reaches nothing past the range; then the host destroys its map: the peer's next
 *          write and read fail (NOT_PERMITTED) and the host's bytes stay as they were; an atomic through the
 *          chain is NOT_SUPPORTED (not offered), though neither the host nor the DPU granted ATOMIC
 *   map 1  the DPU destroys its import: the peer's write fails (NOT_PERMITTED)
 *   map 2  PCI read-only + RDMA read/write: the peer may read, its write fails and the host is unchanged
 *          (the rights a chain grants are the host's RDMA rights where its PCI rights allow the same direction)
 *   map 3  PCI read-write without RDMA rights: the DPU's re-export is refused (NOT_PERMITTED)
 *   map 4  the DPU stops its import: the peer's write fails
 *   map 5  the host process exits: the peer's write fails
 *   map 6  the peer streams writes (4 in flight, alternating contents) while the host destroys its map: once the
 *          destroy returned, the host's bytes never change again (revocation is a barrier), later writes fail
 *   map 7  the same while the DPU destroys its import
 *
 * Usage: memory_chain      (prints "memory_chain: ok")
 */
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

#include "rdma_test_util.h"

#define MAPS 8
#define LEN (256u * 1024)
#define RDMA_RW (DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE)

static const uint32_t host_perms[MAPS] = {
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | RDMA_RW,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | RDMA_RW,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_ONLY | RDMA_RW,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | RDMA_RW,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | RDMA_RW,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | RDMA_RW,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | RDMA_RW,
};

/* ---------------------------------------------------------------- pipes */
/* A command and its answer: op, map index, a DOCA status */
struct cmd {
	char op;
	int map;
	int status;
};
static void send_cmd(int fd, char op, int map, int status)
{
	struct cmd c = { op, map, status };
	T_TRUE(write(fd, &c, sizeof(c)) == sizeof(c));
}
static struct cmd get_cmd(int fd)
{
	struct cmd c;
	T_TRUE(read(fd, &c, sizeof(c)) == sizeof(c));
	return c;
}

/* ---------------------------------------------------------------- host: exports its memory over PCI */
static int host(int to_dpu, int from_ctl, int to_ctl)
{
	static uint8_t mem[MAPS][LEN] __attribute__((aligned(4096)));
	struct doca_dev *dev = t_open_first_dev();
	struct doca_mmap *maps[MAPS];

	for (int i = 0; i < MAPS; i++) {
		const void *desc;
		size_t len;
		t_fill(mem[i], LEN, 100 + (uint32_t)i);
		maps[i] = t_mmap(dev, mem[i], LEN, host_perms[i]);
		T_OK(doca_mmap_export_pci(maps[i], dev, &desc, &len));
		put_blob(to_dpu, desc, len);
	}
	for (;;) {
		struct cmd c = get_cmd(from_ctl);
		int ok = 1;
		if (c.op == 'x')
			_exit(0);
		if (c.op == 'd') /* revoke: destroy the exported map */
			ok = doca_mmap_destroy(maps[c.map]) == DOCA_SUCCESS;
		if (c.op == 'c') /* the bytes are those of pattern `status` over [LEN/4, LEN/2) and untouched elsewhere */
			ok = t_check(mem[c.map] + LEN / 4, LEN / 4, (uint32_t)c.status) &&
			     t_check(mem[c.map], LEN / 4, 100 + (uint32_t)c.map);
		if (c.op == 'u') /* unchanged since the start */
			ok = t_check(mem[c.map], LEN, 100 + (uint32_t)c.map);
		if (c.op == 'D' || c.op == 'Z') {
			/* ('D': destroy the map first) no byte may change from now on: the revocation was a barrier */
			static uint8_t snapshot[LEN];
			if (c.op == 'D')
				ok = doca_mmap_destroy(maps[c.map]) == DOCA_SUCCESS;
			memcpy(snapshot, mem[c.map], LEN);
			usleep(400 * 1000);
			ok = ok && memcmp(snapshot, mem[c.map], LEN) == 0;
		}
		send_cmd(to_ctl, c.op, c.map, ok ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED);
	}
}

/* ---------------------------------------------------------------- DPU: imports and re-exports for RDMA */
static int dpu(int from_host, int to_peer, int from_peer, int from_ctl, int to_ctl)
{
	struct doca_dev *dev = t_open_first_dev();
	struct doca_mmap *imports[MAPS];
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_rdma_connection *conn;
	uint8_t blob[512];
	const void *desc;
	size_t len;

	for (int i = 0; i < MAPS; i++) {
		len = get_blob(from_host, blob, sizeof(blob));
		T_OK(doca_mmap_create_from_export(NULL, blob, len, dev, &imports[i]));
		T_OK(doca_mmap_enable_thread_safety(imports[i]));
		if (i == 3) {
			/* the host granted PCI access only: nothing to pass on to an RDMA peer */
			T_TRUE(doca_mmap_export_rdma(imports[i], dev, &desc, &len) == DOCA_ERROR_NOT_PERMITTED);
			put_blob(to_peer, NULL, 0);
			continue;
		}
		T_OK(doca_mmap_export_rdma(imports[i], dev, &desc, &len));
		put_blob(to_peer, desc, len);
	}
	T_OK(doca_pe_create(&pe));
	T_OK(doca_rdma_create(dev, &rdma));
	T_OK(doca_rdma_set_permissions(rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | RDMA_RW));
	T_OK(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)));
	T_OK(doca_ctx_start(doca_rdma_as_ctx(rdma)));
	T_OK(doca_rdma_export(rdma, &desc, &len, &conn));
	put_blob(to_peer, desc, len);
	len = get_blob(from_peer, blob, sizeof(blob));
	T_OK(doca_rdma_connect(rdma, blob, len, conn));
	/* The peer's requests are served by the device's I/O thread; we only wait for orders */
	for (;;) {
		struct pollfd p = { .fd = from_ctl, .events = POLLIN };
		struct cmd c;
		int ok = 1;
		doca_pe_progress(pe);
		if (poll(&p, 1, 10) != 1)
			continue;
		c = get_cmd(from_ctl);
		if (c.op == 'x')
			_exit(0);
		if (c.op == 'd')
			ok = doca_mmap_destroy(imports[c.map]) == DOCA_SUCCESS;
		if (c.op == 's')
			ok = doca_mmap_stop(imports[c.map]) == DOCA_SUCCESS;
		send_cmd(to_ctl, c.op, c.map, ok ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED);
	}
}

/* ---------------------------------------------------------------- the remote RDMA peer (the storage target) */
static volatile int done_count, fail_count;
static doca_error_t last_error;

static void ok_cb(struct doca_task *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	doca_task_free(t);
	done_count++;
}
static void err_cb(struct doca_task *t, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	last_error = doca_task_get_status(t);
	doca_task_free(t);
	fail_count++;
}

/* Writes [LEN/4, LEN/2) of map `m` for 1.5 s, 4 in flight, from two local halves of different contents in turn;
 * answers how many succeeded (in `map`) and how many failed (in `status`) */
static void stream(struct doca_rdma *rdma, struct doca_rdma_connection *conn, struct doca_pe *pe,
		   struct doca_buf_inventory *inv, struct doca_mmap *ml, uint8_t *local, struct doca_mmap *m,
		   int to_ctl)
{
	struct doca_buf *lb[2], *rb[4];
	union doca_data none = { 0 };
	void *base;
	size_t range;
	int first_done = done_count, first_fail = fail_count, submitted = 0;
	double end = t_now() + 1.5, deadline = end + 20;

	T_OK(doca_mmap_get_memrange(m, &base, &range));
	t_fill(local, LEN / 4, 200);
	t_fill(local + LEN / 4, LEN / 4, 201);
	for (int i = 0; i < 2; i++)
		T_OK(doca_buf_inventory_buf_get_by_data(inv, ml, local + i * (LEN / 4), LEN / 4, &lb[i]));
	for (int i = 0; i < 4; i++)
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, m, (uint8_t *)base + LEN / 4, LEN / 4, &rb[i]));
	while (t_now() < end) {
		int finished = (done_count - first_done) + (fail_count - first_fail);
		if (submitted - finished < 4) {
			struct doca_rdma_task_write *t;
			struct doca_buf *dst = rb[submitted % 4];
			/* the slot's previous write has completed: its destination is reused empty */
			T_OK(doca_buf_reset_data_len(dst));
			T_OK(doca_rdma_task_write_allocate_init(rdma, conn, lb[submitted % 2], dst, none, &t));
			T_OK(doca_task_submit(doca_rdma_task_write_as_task(t)));
			submitted++;
		}
		doca_pe_progress(pe);
	}
	while ((done_count - first_done) + (fail_count - first_fail) < submitted) {
		doca_pe_progress(pe);
		T_TRUE(t_now() < deadline);
	}
	for (int i = 0; i < 2; i++)
		doca_buf_dec_refcount(lb[i], NULL);
	for (int i = 0; i < 4; i++)
		doca_buf_dec_refcount(rb[i], NULL);
	send_cmd(to_ctl, 'S', done_count - first_done, fail_count - first_fail);
}

static int peer(int from_dpu, int to_dpu, int from_ctl, int to_ctl)
{
	static uint8_t local[LEN] __attribute__((aligned(4096)));
	struct doca_dev *dev = t_open_first_dev();
	struct doca_mmap *remote[MAPS] = { 0 }, *ml, *forged;
	struct doca_buf_inventory *inv;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_rdma_connection *conn;
	uint8_t blob[512], forged_blob[512];
	const void *mine;
	size_t len, mine_len, forged_len = 0;

	T_OK(doca_pe_create(&pe));
	T_OK(doca_rdma_create(dev, &rdma));
	T_OK(doca_rdma_set_permissions(rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | RDMA_RW));
	T_OK(doca_rdma_task_write_set_conf(rdma, (void *)ok_cb, (void *)err_cb, 8));
	T_OK(doca_rdma_task_read_set_conf(rdma, (void *)ok_cb, (void *)err_cb, 8));
	T_OK(doca_rdma_task_atomic_fetch_add_set_conf(rdma, (void *)ok_cb, (void *)err_cb, 8));
	T_OK(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)));
	T_OK(doca_ctx_start(doca_rdma_as_ctx(rdma)));
	T_OK(doca_buf_inventory_create(8, &inv));
	T_OK(doca_buf_inventory_start(inv));
	ml = t_mmap(dev, local, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	for (int i = 0; i < MAPS; i++) {
		len = get_blob(from_dpu, blob, sizeof(blob));
		if (len == 0)
			continue;
		T_OK(doca_mmap_create_from_export(NULL, blob, len, dev, &remote[i]));
		if (i == 0) {
			memcpy(forged_blob, blob, len);
			forged_len = len;
		}
	}
	/* the same descriptor as map 0's with its length doubled (the rdma descriptor's last field) */
	{
		uint64_t l;
		memcpy(&l, forged_blob + forged_len - 8, 8);
		l *= 2;
		memcpy(forged_blob + forged_len - 8, &l, 8);
		T_OK(doca_mmap_create_from_export(NULL, forged_blob, forged_len, dev, &forged));
	}
	len = get_blob(from_dpu, blob, sizeof(blob));
	T_OK(doca_rdma_export(rdma, &mine, &mine_len, &conn));
	put_blob(to_dpu, mine, mine_len);
	T_OK(doca_rdma_connect(rdma, blob, len, conn));
	for (;;) {
		struct cmd c = get_cmd(from_ctl);
		struct doca_mmap *m = c.op == 'W' ? forged : remote[c.map];
		void *base;
		size_t range;
		struct doca_buf *lb, *rb;
		union doca_data none = { 0 };
		int want_done = done_count + 1, want_fail = fail_count + 1;
		double deadline = t_now() + 20;
		doca_error_t status = DOCA_SUCCESS;

		if (c.op == 'x')
			_exit(0);
		if (c.op == 'S') {
			stream(rdma, conn, pe, inv, ml, local, m, to_ctl);
			continue;
		}
		T_OK(doca_mmap_get_memrange(m, &base, &range));
		if (c.op == 'W') /* past the real range: the second half of the enlarged one */
			base = (uint8_t *)base + LEN;
		if (c.op == 'a') {
			/* fetch-add on the first word of [LEN/4, LEN/2) through the chain, the old value into `local` */
			struct doca_rdma_task_atomic_fetch_add *t;
			T_OK(doca_buf_inventory_buf_get_by_data(inv, m, (uint8_t *)base + LEN / 4, 8, &rb));
			T_OK(doca_buf_inventory_buf_get_by_addr(inv, ml, local, 8, &lb));
			T_OK(doca_rdma_task_atomic_fetch_add_allocate_init(rdma, conn, rb, lb, 1, none, &t));
			T_OK(doca_task_submit(doca_rdma_task_atomic_fetch_add_as_task(t)));
		} else if (c.op == 'w' || c.op == 'W') {
			/* pattern `status` over [LEN/4, LEN/2) of the host's memory */
			t_fill(local, LEN / 4, (uint32_t)c.status);
			T_OK(doca_buf_inventory_buf_get_by_data(inv, ml, local, LEN / 4, &lb));
			T_OK(doca_buf_inventory_buf_get_by_addr(inv, m, (uint8_t *)base + LEN / 4, LEN / 4, &rb));
			struct doca_rdma_task_write *t;
			T_OK(doca_rdma_task_write_allocate_init(rdma, conn, lb, rb, none, &t));
			T_OK(doca_task_submit(doca_rdma_task_write_as_task(t)));
		} else { /* 'r': read [LEN/4, LEN/2) ('R': [0, LEN/4)) and compare with pattern `status` */
			size_t at = c.op == 'R' ? 0 : LEN / 4;
			memset(local, 0, LEN);
			T_OK(doca_buf_inventory_buf_get_by_data(inv, m, (uint8_t *)base + at, LEN / 4, &rb));
			T_OK(doca_buf_inventory_buf_get_by_addr(inv, ml, local, LEN / 4, &lb));
			struct doca_rdma_task_read *t;
			T_OK(doca_rdma_task_read_allocate_init(rdma, conn, rb, lb, none, &t));
			T_OK(doca_task_submit(doca_rdma_task_read_as_task(t)));
		}
		while (done_count < want_done && fail_count < want_fail) {
			doca_pe_progress(pe);
			T_TRUE(t_now() < deadline);
		}
		if (fail_count == want_fail)
			status = last_error;
		else if ((c.op == 'r' || c.op == 'R') && !t_check(local, LEN / 4, (uint32_t)c.status))
			status = DOCA_ERROR_UNEXPECTED;
		doca_buf_dec_refcount(lb, NULL);
		doca_buf_dec_refcount(rb, NULL);
		send_cmd(to_ctl, c.op, c.map, status);
	}
}

/* ---------------------------------------------------------------- the orchestrator */
static int ctl_to[3], ctl_from[3];
enum { HOST, DPU, PEER };

static doca_error_t ask(int who, char op, int map, int arg)
{
	struct cmd c;
	send_cmd(ctl_to[who], op, map, arg);
	c = get_cmd(ctl_from[who]);
	return (doca_error_t)c.status;
}

#define EXPECT(who, op, map, arg, want)                                                                               \
	do {                                                                                                           \
		doca_error_t got_ = ask(who, op, map, arg);                                                            \
		if (got_ != (want)) {                                                                                  \
			fprintf(stderr, "memory_chain: %s %c map %d: %s, expected %s\n", #who, op, map,               \
				doca_error_get_name(got_), doca_error_get_name(want));                                  \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	int host_dpu[2], dpu_peer[2], peer_dpu[2];
	pid_t pids[3];
	const char *sides[3] = { "host", "dpu", "host" };

	signal(SIGPIPE, SIG_IGN);
	T_TRUE(pipe(host_dpu) == 0 && pipe(dpu_peer) == 0 && pipe(peer_dpu) == 0);
	for (int who = 0; who < 3; who++) {
		int to[2], from[2];
		T_TRUE(pipe(to) == 0 && pipe(from) == 0);
		pids[who] = fork();
		T_TRUE(pids[who] >= 0);
		if (pids[who] == 0) {
			setenv("DOCA_SIM_SIDE", sides[who], 1);
			alarm(120);
			if (who == HOST)
				return host(host_dpu[1], to[0], from[1]);
			if (who == DPU)
				return dpu(host_dpu[0], dpu_peer[1], peer_dpu[0], to[0], from[1]);
			return peer(dpu_peer[0], peer_dpu[1], to[0], from[1]);
		}
		ctl_to[who] = to[1];
		ctl_from[who] = from[0];
	}
	alarm(150);

	/* map 0: through the chain both ways, nothing past the range, then the host revokes */
	EXPECT(PEER, 'w', 0, 7, DOCA_SUCCESS);
	EXPECT(HOST, 'c', 0, 7, DOCA_SUCCESS);
	EXPECT(PEER, 'r', 0, 7, DOCA_SUCCESS);
	EXPECT(PEER, 'W', 0, 8, DOCA_ERROR_NOT_PERMITTED);
	EXPECT(HOST, 'c', 0, 7, DOCA_SUCCESS);
	EXPECT(PEER, 'a', 0, 0, DOCA_ERROR_NOT_SUPPORTED);
	EXPECT(HOST, 'c', 0, 7, DOCA_SUCCESS);
	EXPECT(HOST, 'd', 0, 0, DOCA_SUCCESS);
	EXPECT(PEER, 'w', 0, 9, DOCA_ERROR_NOT_PERMITTED);
	EXPECT(PEER, 'r', 0, 7, DOCA_ERROR_NOT_PERMITTED);
	EXPECT(HOST, 'c', 0, 7, DOCA_SUCCESS);
	t_say("memory_chain: write and read through the chain ok");
	/* map 1: the DPU revokes */
	EXPECT(PEER, 'w', 1, 3, DOCA_SUCCESS);
	EXPECT(DPU, 'd', 1, 0, DOCA_SUCCESS);
	EXPECT(PEER, 'w', 1, 4, DOCA_ERROR_NOT_PERMITTED);
	EXPECT(HOST, 'c', 1, 3, DOCA_SUCCESS);
	/* map 4: the DPU stops its import */
	EXPECT(DPU, 's', 4, 0, DOCA_SUCCESS);
	EXPECT(PEER, 'w', 4, 4, DOCA_ERROR_NOT_PERMITTED);
	EXPECT(HOST, 'u', 4, 0, DOCA_SUCCESS);
	t_say("memory_chain: revocation by host and DPU ok");
	/* map 2: PCI read-only on the host: readable through the chain, not writable */
	EXPECT(PEER, 'R', 2, 102, DOCA_SUCCESS);
	EXPECT(PEER, 'w', 2, 5, DOCA_ERROR_NOT_PERMITTED);
	EXPECT(HOST, 'u', 2, 0, DOCA_SUCCESS);
	t_say("memory_chain: permissions intersect ok");
	/* maps 6, 7: revocation while the peer streams writes is a barrier */
	for (int map = 6; map <= 7; map++) {
		struct cmd streamed;
		send_cmd(ctl_to[PEER], 'S', map, 0);
		usleep(500 * 1000); /* writes are landing */
		if (map == 6) {
			EXPECT(HOST, 'D', 6, 0, DOCA_SUCCESS);
		} else {
			EXPECT(DPU, 'd', 7, 0, DOCA_SUCCESS);
			EXPECT(HOST, 'Z', 7, 0, DOCA_SUCCESS);
		}
		streamed = get_cmd(ctl_from[PEER]);
		if (streamed.map == 0 || streamed.status == 0) {
			fprintf(stderr, "memory_chain: map %d stream: %d writes succeeded, %d failed (want both)\n", map,
				streamed.map, streamed.status);
			exit(1);
		}
	}
	t_say("memory_chain: barrier ok");
	/* map 5: the host process goes away */
	EXPECT(PEER, 'w', 5, 6, DOCA_SUCCESS);
	send_cmd(ctl_to[HOST], 'x', 0, 0);
	T_TRUE(waitpid(pids[HOST], NULL, 0) == pids[HOST]);
	{
		doca_error_t got = ask(PEER, 'w', 5, 7);
		T_TRUE(got == DOCA_ERROR_NOT_PERMITTED || got == DOCA_ERROR_IO_FAILED);
	}
	t_say("memory_chain: host gone ok");
	send_cmd(ctl_to[PEER], 'x', 0, 0);
	send_cmd(ctl_to[DPU], 'x', 0, 0);
	for (int who = DPU; who <= PEER; who++) {
		int st;
		T_TRUE(waitpid(pids[who], &st, 0) == pids[who] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	t_say("memory_chain: ok");
	return 0;
}
