/*
 * What the two-process DMA tests of the software device share (dma_remote.c, pages_bound.c, hostile_exports.c):
 * the fixed-size message the host and DPU roles exchange over a pipe (a command, an address and length, an export
 * descriptor), the memcpy completion callback that records a task's status and frees it, and the DPU role's DMA
 * engine (open, one copy, close).
 */
#ifndef DMA_TEST_UTIL_H_
#define DMA_TEST_UTIL_H_

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include <doca_dma.h>

#include "sim_test_util.h"

struct msg {
	char cmd[16];
	uint64_t addr;
	uint64_t len;
	uint32_t desc_len;
	uint8_t desc[512];
};

static inline void send_msg(int fd, const char *cmd, uint64_t addr, uint64_t len, const void *desc, size_t desc_len)
{
	struct msg m;

	memset(&m, 0, sizeof(m));
	snprintf(m.cmd, sizeof(m.cmd), "%s", cmd);
	m.addr = addr;
	m.len = len;
	T_TRUE(desc_len <= sizeof(m.desc));
	m.desc_len = (uint32_t)desc_len;
	if (desc_len > 0)
		memcpy(m.desc, desc, desc_len);
	T_TRUE(write(fd, &m, sizeof(m)) == (ssize_t)sizeof(m));
}

/* Reads one whole message; a peer that closed the pipe ends this process with FAIL */
static inline void recv_msg(int fd, struct msg *m)
{
	size_t got = 0;

	while (got < sizeof(*m)) {
		ssize_t n = read(fd, (char *)m + got, sizeof(*m) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			t_say("FAIL peer closed the pipe");
			exit(1);
		}
		got += (size_t)n;
	}
}

/* Starts the other role of a two-process test: this program again (/proc/self/exe, argv[0] program) as
 * `program --host SCENARIO RFD WFD` on side (DOCA_SIM_SIDE), with the default device configuration, joined to this
 * process by two pipes: *rfd reads what it writes, *wfd writes what it reads. Returns its pid. */
static inline pid_t start_host_role(const char *program, const char *scenario, const char *side, int *rfd, int *wfd)
{
	int to_host[2], to_dpu[2];
	pid_t pid;

	T_TRUE(pipe(to_host) == 0 && pipe(to_dpu) == 0);
	pid = fork();
	T_TRUE(pid >= 0);
	if (pid == 0) {
		char rs[16], ws[16];

		close(to_host[1]);
		close(to_dpu[0]);
		snprintf(rs, sizeof(rs), "%d", to_host[0]);
		snprintf(ws, sizeof(ws), "%d", to_dpu[1]);
		setenv("DOCA_SIM_SIDE", side, 1);
		unsetenv("DOCA_SIM_CONFIG");
		execl("/proc/self/exe", program, "--host", scenario, rs, ws, (char *)NULL);
		_exit(127);
	}
	close(to_host[0]);
	close(to_dpu[1]);
	*rfd = to_dpu[0];
	*wfd = to_host[1];
	return pid;
}

/* One memcpy's outcome: set by on_copy, which also frees the task */
struct copy_state {
	int done;
	doca_error_t status;
};

static inline void on_copy(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct copy_state *st = task_user_data.ptr;

	(void)ctx_user_data;
	st->status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	st->done = 1;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

/* The DPU role of a two-process DMA test: a device, a progress engine with a started DMA context, an inventory, a local
 * buffer registered for local read/write, and the pipe to the other role with the export descriptor it sent */
struct dpu {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_buf_inventory *inv;
	uint8_t *local;
	struct doca_mmap *local_mmap;
	int rfd, wfd;
	struct msg desc;
};

/* Opens the first device with a DMA context of num_tasks memcpy tasks completing through done (success and error)
 * and an inventory of as many buffers; local (the caller's, NULL fails) is registered */
static inline void dpu_open(struct dpu *d, uint8_t *local, size_t local_len, uint32_t num_tasks,
			    doca_dma_task_memcpy_completion_cb_t done)
{
	d->dev = t_open_first_dev();
	T_OK(doca_pe_create(&d->pe));
	T_OK(doca_dma_create(d->dev, &d->dma));
	T_OK(doca_dma_task_memcpy_set_conf(d->dma, done, done, num_tasks));
	T_OK(doca_pe_connect_ctx(d->pe, doca_dma_as_ctx(d->dma)));
	T_OK(doca_ctx_start(doca_dma_as_ctx(d->dma)));
	T_OK(doca_buf_inventory_create(num_tasks, &d->inv));
	T_OK(doca_buf_inventory_start(d->inv));
	T_TRUE(local != NULL);
	d->local = local;
	d->local_mmap = t_mmap(d->dev, local, local_len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
}

/* Destroys what dpu_open made, every call checked (the local buffer stays the caller's) */
static inline void dpu_close(struct dpu *d)
{
	T_OK(doca_mmap_destroy(d->local_mmap));
	T_OK(doca_buf_inventory_destroy(d->inv));
	T_OK(doca_ctx_stop(doca_dma_as_ctx(d->dma)));
	T_OK(doca_dma_destroy(d->dma));
	T_OK(doca_pe_destroy(d->pe));
	T_OK(doca_dev_close(d->dev));
}

/* One memcpy from src to dst (the context's tasks complete through on_copy): the submit error, or the task's
 * completion status */
static inline doca_error_t dpu_copy(struct dpu *d, struct doca_buf *src, struct doca_buf *dst)
{
	struct copy_state st = {0, DOCA_SUCCESS};
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.ptr = &st};
	doca_error_t err;

	T_OK(doca_dma_task_memcpy_alloc_init(d->dma, src, dst, ud, &task));
	err = doca_task_submit(doca_dma_task_memcpy_as_task(task));
	if (err != DOCA_SUCCESS) {
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		return err;
	}
	t_progress_until(d->pe, &st.done);
	return st.status;
}

#endif
