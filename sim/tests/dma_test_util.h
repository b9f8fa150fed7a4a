/*
 * What the two-process DMA tests of the software device share (dma_remote.c, pages_bound.c, hostile_exports.c):
 * the fixed-size message the host and DPU roles exchange over a pipe (a command, an address and length, an export
 * descriptor), and the memcpy completion callback that records a task's status and frees it.
 */
#ifndef DMA_TEST_UTIL_H_
#define DMA_TEST_UTIL_H_

#include <errno.h>
#include <stdint.h>
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

#endif
