/*
 * A DOCA 2.7-style program (our own), built against the 2.7 flavour's headers (sim/flavours/2.7/include first, then
 * sim/include) and libraries (build/sim-2.7/lib) by tests/sim-flavour-27.test.ts, as C and as C++ (constness
 * mismatches are errors only in C++). It uses what DOCA 2.7 names differently from 3.x: the comch server's
 * doca_comch_server_get_device_repr and doca_comch_server_event_connection_register, fast-path task getters that take
 * non-const tasks, `uint8_t *` immediate data; and checks 2.7's version macros and error codes 0-27.
 */
#include <stdio.h>
#include <string.h>

#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_error.h>
#include <doca_version.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			printf("FAIL %s\n", #cond); \
			return 1; \
		} \
	} while (0)

static void on_connection(struct doca_comch_event_connection_status_changed *event,
			  struct doca_comch_connection *connection, uint8_t ok)
{
	(void)event, (void)connection, (void)ok;
}

int main(void)
{
	/* 2.7's signatures exactly: these assignments do not compile against 3.x's declarations in C++ */
	uint8_t *(*consumer_imm)(struct doca_comch_consumer_task_post_recv *) =
		doca_comch_consumer_task_post_recv_get_imm_data;
	struct doca_buf *(*consumer_buf)(struct doca_comch_consumer_task_post_recv *) =
		doca_comch_consumer_task_post_recv_get_buf;
	uint8_t *(*producer_imm)(struct doca_comch_producer_task_send *) = doca_comch_producer_task_send_get_imm_data;
	const struct doca_buf *(*producer_buf)(struct doca_comch_producer_task_send *) =
		doca_comch_producer_task_send_get_buf;
	struct doca_dev_rep *rep = NULL;

	CHECK(consumer_imm != NULL && consumer_buf != NULL && producer_imm != NULL && producer_buf != NULL);
	CHECK(doca_comch_server_get_device_repr(NULL, &rep) == DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_comch_server_event_connection_register(NULL, on_connection, on_connection) ==
	      DOCA_ERROR_INVALID_VALUE);
	CHECK(DOCA_VERSION_MAJOR == 2 && DOCA_VERSION_MINOR == 7 && DOCA_VERSION_PATCH == 85);
	CHECK(strcmp(DOCA_VERSION_STRING, "2.7.0085") == 0);
	CHECK(strncmp(doca_version_runtime(), "2.7", 3) == 0);
	CHECK(strcmp(doca_error_get_name(DOCA_ERROR_TOO_BIG), "DOCA_ERROR_TOO_BIG") == 0); /* 27: the last 2.7 code */
	CHECK(strcmp(doca_error_get_name((doca_error_t)28), "DOCA_ERROR_AUTHENTICATION") != 0);
	printf("PASS flavour_27 (%s)\n", doca_version_runtime());
	return 0;
}
