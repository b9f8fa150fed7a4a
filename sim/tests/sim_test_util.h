/*
 * Helpers of the software-device C tests (sim_*.c, dma_*.c): checks that name the DOCA error, a progress loop with a
 * deadline, device opening and a byte pattern. Each program prints "ok <what>" per check and "PASS <program>" last,
 * and exits non-zero on the first failure (tests/sim-c.test.ts asserts both). Built with -D_GNU_SOURCE.
 */
#ifndef SIM_TEST_UTIL_H_
#define SIM_TEST_UTIL_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sim.h>

static inline void t_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The call must return exactly `want` */
#define T_EXPECT_ERR(call, want) \
	do { \
		doca_error_t got_ = (call); \
		if (got_ != (want)) { \
			t_say("FAIL line %d: %s returned %s, expected %s", __LINE__, #call, doca_error_get_name(got_), \
			      doca_error_get_name(want)); \
			exit(1); \
		} \
	} while (0)

#define T_OK(call) T_EXPECT_ERR(call, DOCA_SUCCESS)

#define T_TRUE(cond) \
	do { \
		if (!(cond)) { \
			t_say("FAIL line %d: %s", __LINE__, #cond); \
			exit(1); \
		} \
	} while (0)

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A port for a test listener, random from 20000 up to the kernel's ephemeral range: outgoing connections take their
 * local ports from that range, so a listener inside it can find its port taken at any moment (tests/helpers/ports.ts
 * says the same for the TypeScript tests). The caller still retries on DOCA_ERROR_IN_USE (another test's listener).
 */
static inline uint16_t t_listen_port(unsigned salt)
{
	unsigned ephemeral = 32768, top;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	struct timespec ts;
	if (f != NULL) {
		if (fscanf(f, "%u", &ephemeral) != 1)
			ephemeral = 32768;
		fclose(f);
	}
	top = ephemeral > 21000 && ephemeral <= 65535 ? ephemeral : 32768;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint16_t)(20000 + ((unsigned)ts.tv_nsec / 1000 + salt * 7919u) % (top - 20000));
}

/* Progress until *flag is non-zero (fails after 10 s) */
static inline void t_progress_until(struct doca_pe *pe, volatile int *flag)
{
	double deadline = t_now() + 10.0;

	while (!*flag) {
		doca_pe_progress(pe);
		if (t_now() > deadline) {
			t_say("FAIL timeout waiting in doca_pe_progress");
			exit(1);
		}
	}
}

/* Defines `name`, a callback of DOCA's (object, task user data, ctx user data) form for an `object_type` (a task, an
 * RDMA connection) that only counts its calls in `counter` (an int lvalue); a task is not freed */
#define T_COUNTING_CB(name, object_type, counter) \
	static void name(object_type *object, union doca_data user_data, union doca_data ctx_user_data) \
	{ \
		(void)object, (void)user_data, (void)ctx_user_data; \
		counter++; \
	}

/* Defines the context state callback `name` whose body is `on_next` (statements on the new state `next`) */
#define T_STATE_CB(name, on_next) \
	static void name(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev, \
			 enum doca_ctx_states next) \
	{ \
		(void)user_data; \
		(void)ctx; \
		(void)prev; \
		on_next \
	}

/* Defines the context state callback `name`, which sets `running` and `idle` (int lvalues; they may name the ctx user
 * data `user_data`) to 1 when the context reaches RUNNING and IDLE */
#define T_STATE_FLAGS_CB(name, running, idle) \
	T_STATE_CB(name, if (next == DOCA_CTX_STATE_RUNNING) running = 1; if (next == DOCA_CTX_STATE_IDLE) idle = 1;)

/* Defines the context state callback `name`, which sets `idle` (an int lvalue) to 1 when the context reaches IDLE */
#define T_IDLE_FLAG_CB(name, idle) T_STATE_CB(name, if (next == DOCA_CTX_STATE_IDLE) idle = 1;)

static inline struct doca_dev *t_open_first_dev(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	T_OK(doca_devinfo_create_list(&list, &n));
	T_TRUE(n >= 1);
	T_OK(doca_dev_open(list[0], &dev));
	T_OK(doca_devinfo_destroy_list(list));
	return dev;
}

/* Started mmap over [addr, addr+len) on dev with the given permissions */
static inline struct doca_mmap *t_mmap(struct doca_dev *dev, void *addr, size_t len, uint32_t permissions)
{
	struct doca_mmap *mmap;

	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_memrange(mmap, addr, len));
	T_OK(doca_mmap_set_permissions(mmap, permissions));
	T_OK(doca_mmap_add_dev(mmap, dev));
	T_OK(doca_mmap_start(mmap));
	return mmap;
}

static inline void t_fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 24);
	}
}

static inline int t_check(const uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (p[i] != (uint8_t)(x >> 24))
			return 0;
	}
	return 1;
}

#endif /* SIM_TEST_UTIL_H_ */
