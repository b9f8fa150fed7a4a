/*
 * Shared helpers of the comch_*.c test programs: device opening, a progress loop with a deadline, and reporting.
 * Every program prints one line per milestone on stdout (flushed) so tests/sim-comch.test.ts can follow it.
 */
#ifndef COMCH_TEST_UTIL_H_
#define COMCH_TEST_UTIL_H_

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>
#include <doca_sim.h> /* software-device diagnostics: doca_sim_live_objects() for leak checks */

#include "sim_test_util.h"

/* The Comch tests' names for sim_test_util.h's helpers (one implementation for every C test) */
#define say(...) t_say(__VA_ARGS__)

static inline void die(const char *what, doca_error_t err)
{
	say("FAIL %s: %s", what, doca_error_get_name(err));
	exit(1);
}

#define CHECK(call)                                                                                                    \
	do {                                                                                                           \
		doca_error_t check_err_ = (call);                                                                      \
		if (check_err_ != DOCA_SUCCESS)                                                                        \
			die(#call, check_err_);                                                                        \
	} while (0)

#define EXPECT(cond)                                                                                                   \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			say("FAIL expectation %s (line %d)", #cond, __LINE__);                                           \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

static inline double now_s(void)
{
	return t_now();
}

/* Progress one or two engines (b may be NULL) until *flag becomes non-zero; fails the program after timeout_s */
static inline void progress2_until(struct doca_pe *a, struct doca_pe *b, volatile int *flag, double timeout_s,
				   const char *what)
{
	double deadline = now_s() + timeout_s;
	struct timespec pause = {.tv_sec = 0, .tv_nsec = 100000};

	while (!*flag) {
		uint8_t did = doca_pe_progress(a);

		if (b != NULL)
			did |= doca_pe_progress(b);
		if (did == 0)
			nanosleep(&pause, NULL);
		if (now_s() > deadline) {
			say("FAIL timeout waiting for %s", what);
			exit(1);
		}
	}
}

static inline void progress_until(struct doca_pe *pe, volatile int *flag, double timeout_s, const char *what)
{
	progress2_until(pe, NULL, flag, timeout_s, what);
}

/* doca_ctx_stop is asynchronous when tasks are still in flight (DOCA_ERROR_IN_PROGRESS): both are fine here */
static inline void stop_ctx(struct doca_ctx *ctx)
{
	doca_error_t err = doca_ctx_stop(ctx);

	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		die("doca_ctx_stop", err);
}

/* The first device of this side (the software device lists exactly one per side) */
static inline struct doca_dev *open_first_dev(void)
{
	return t_open_first_dev();
}

/* DPU side: the network representor of the host function */
static inline struct doca_dev_rep *open_first_rep(struct doca_dev *dev)
{
	struct doca_devinfo_rep **list;
	struct doca_dev_rep *rep = NULL;
	uint32_t n = 0;

	CHECK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n));
	EXPECT(n >= 1);
	CHECK(doca_dev_rep_open(list[0], &rep));
	CHECK(doca_devinfo_rep_destroy_list(list));
	return rep;
}

/* Deterministic payload so the receiver can check every byte of message `seq` */
static inline void fill_pattern(uint8_t *p, size_t len, uint32_t seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 31u + i * 7u + 1u);
}

static inline int check_pattern(const uint8_t *p, size_t len, uint32_t seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seq * 31u + i * 7u + 1u))
			return 0;
	return 1;
}

/* The callback of a message send task whose outcome the test does not follow: frees the task */
static inline void send_free(struct doca_comch_task_send *task, union doca_data task_user_data,
			     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	doca_task_free(doca_comch_task_send_as_task(task));
}

/* The error callback of a message send task that says which error it was and frees the task (the test goes on) */
static inline void send_err_say_free(struct doca_comch_task_send *task, union doca_data task_user_data,
				     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	say("SEND ERROR %s", doca_error_get_name(doca_task_get_status(doca_comch_task_send_as_task(task))));
	doca_task_free(doca_comch_task_send_as_task(task));
}

#endif /* COMCH_TEST_UTIL_H_ */
