/*
 * RDMA CM connection callbacks for the software device's C tests: every request is accepted, every event counted,
 * and the connection the last established callback named is kept (rdma_pair.c, rdma_close.c); and the length-prefixed
 * blobs the two-process tests exchange over a pipe (rdma_pair.c, memory_chain.c).
 */
#ifndef RDMA_TEST_UTIL_H_
#define RDMA_TEST_UTIL_H_

#include <stdint.h>
#include <unistd.h>

#include <doca_rdma.h>

#include "sim_test_util.h"

static volatile int t_cm_established, t_cm_disconnected, t_cm_failed;
static struct doca_rdma_connection *t_cm_last;

static void t_cm_on_request(struct doca_rdma_connection *conn, union doca_data c)
{
	(void)c;
	T_OK(doca_rdma_connection_accept(conn, NULL, 0));
}
static void t_cm_on_established(struct doca_rdma_connection *conn, union doca_data u, union doca_data c)
{
	(void)u, (void)c;
	t_cm_established++;
	t_cm_last = conn;
}
T_COUNTING_CB(t_cm_on_failure, struct doca_rdma_connection, t_cm_failed)
T_COUNTING_CB(t_cm_on_disconnect, struct doca_rdma_connection, t_cm_disconnected)

/* The callbacks above on a context (before it starts); the counts start again from zero */
static inline void t_cm_callbacks(struct doca_rdma *rdma)
{
	t_cm_established = t_cm_disconnected = t_cm_failed = 0;
	t_cm_last = NULL;
	T_OK(doca_rdma_set_connection_state_callbacks(rdma, t_cm_on_request, t_cm_on_established, t_cm_on_failure,
						      t_cm_on_disconnect));
}

/* A blob over a pipe: its length (4 bytes, host order) then its bytes; get_blob fails the test on a blob over cap */
static inline void put_blob(int fd, const void *p, size_t len)
{
	uint32_t n = (uint32_t)len;
	T_TRUE(write(fd, &n, 4) == 4 && (len == 0 || write(fd, p, len) == (ssize_t)len));
}
static inline size_t get_blob(int fd, void *p, size_t cap)
{
	uint32_t n;
	T_TRUE(read(fd, &n, 4) == 4 && n <= cap);
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		T_TRUE(r > 0);
		got += (size_t)r;
	}
	return n;
}

#endif /* RDMA_TEST_UTIL_H_ */
