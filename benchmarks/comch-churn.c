/*
 * Comch clients that come and go, for the memory row of `deno task bench:churn` (benchmarks/churn.ts): written as a
 * plain C program against the DOCA API, host side (DOCA_SIM_SIDE=host).
 *
 *   comch-churn hold NAME                connects and stays, silent, until stdin closes (the client a DPU serves)
 *   comch-churn cycle NAME CYCLES STEP   connects and disconnects CYCLES times, one client context per cycle, and
 *                                        prints "cycles N" after every STEP (the clients a DPU turns away)
 *
 * A cycle: create a client, start it, wait until it is connected, take whatever the server says meanwhile, stop it,
 * wait until it is idle, destroy it. Every wait has a deadline (a server that dies or stalls ends this process with
 * exit 1, never a hang).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>

#define DRIVER_NAME "comch-churn"
#include "driver-common.h"

/* How long the server may take to accept or to let a client go */
#define PEER_TIMEOUT_S 10.0

static struct {
	bool running, idle;
	uint64_t messages;
} S;

static void on_state(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ud;
	(void)ctx;
	(void)prev;
	S.running = next == DOCA_CTX_STATE_RUNNING;
	S.idle = next == DOCA_CTX_STATE_IDLE;
}

static void on_msg(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
		   struct doca_comch_connection *conn)
{
	(void)event;
	(void)buf;
	(void)len;
	(void)conn;
	S.messages++;
}

static void unused_send(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	doca_task_free(doca_comch_task_send_as_task(task));
}

/* Progress until *flag; the client is polled (a Comch connection completes in progress calls) */
static void wait_for(struct doca_pe *pe, volatile bool *flag, const char *what)
{
	double deadline = now() + PEER_TIMEOUT_S;
	unsigned idle = 0;

	while (!*flag) {
		if (doca_pe_progress(pe)) {
			idle = 0;
			continue;
		}
		if (++idle > 32)
			usleep(100); /* the server needs the core this process would spin on */
		if (now() > deadline)
			die("timed out waiting for", what);
	}
}

static struct doca_comch_client *client_up(struct doca_dev *dev, struct doca_pe *pe, const char *name)
{
	struct doca_comch_client *client;
	struct doca_ctx *ctx;

	ok(doca_comch_client_create(dev, name, &client), "doca_comch_client_create");
	ok(doca_comch_client_task_send_set_conf(client, unused_send, unused_send, 1), "doca_comch_client_task_send_set_conf");
	ok(doca_comch_client_event_msg_recv_register(client, on_msg), "doca_comch_client_event_msg_recv_register");
	ctx = doca_comch_client_as_ctx(client);
	ok(doca_ctx_set_state_changed_cb(ctx, on_state), "doca_ctx_set_state_changed_cb");
	ok(doca_pe_connect_ctx(pe, ctx), "doca_pe_connect_ctx");
	S.running = S.idle = false;
	ok_or_pending(doca_ctx_start(ctx), "doca_ctx_start");
	wait_for(pe, &S.running, "the connection");
	return client;
}

static void client_down(struct doca_pe *pe, struct doca_comch_client *client)
{
	ok_or_pending(doca_ctx_stop(doca_comch_client_as_ctx(client)), "doca_ctx_stop");
	wait_for(pe, &S.idle, "the client to stop");
	ok(doca_comch_client_destroy(client), "doca_comch_client_destroy");
}

static int hold(const char *name)
{
	struct doca_dev *dev = open_first_dev();
	struct doca_pe *pe;
	struct doca_comch_client *client;
	struct pollfd in = { .fd = 0, .events = POLLIN };
	char sink[64];

	ok(doca_pe_create(&pe), "doca_pe_create");
	client = client_up(dev, pe, name);
	printf("connected\n");
	fflush(stdout);
	/* stay connected, serving progress now and then, until whoever started us closes our stdin */
	for (;;) {
		while (doca_pe_progress(pe))
			;
		if (poll(&in, 1, 100) == 1 && read(0, sink, sizeof(sink)) <= 0)
			break;
	}
	client_down(pe, client);
	ok(doca_pe_destroy(pe), "doca_pe_destroy");
	ok(doca_dev_close(dev), "doca_dev_close");
	return 0;
}

static int cycle(const char *name, unsigned long cycles, unsigned long step)
{
	struct doca_dev *dev = open_first_dev();
	struct doca_pe *pe;

	ok(doca_pe_create(&pe), "doca_pe_create");
	for (unsigned long i = 1; i <= cycles; i++) {
		struct doca_comch_client *client = client_up(dev, pe, name);
		/* a moment for what the server says right away (a DPU turning us away says why), as a user's client has */
		for (int k = 0; k < 4; k++)
			doca_pe_progress(pe);
		client_down(pe, client);
		if (i % step == 0) {
			printf("cycles %lu messages %llu\n", i, (unsigned long long)S.messages);
			fflush(stdout);
		}
	}
	ok(doca_pe_destroy(pe), "doca_pe_destroy");
	ok(doca_dev_close(dev), "doca_dev_close");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	if (argc == 5 && strcmp(argv[1], "cycle") == 0) {
		unsigned long cycles = strtoul(argv[3], NULL, 10), step = strtoul(argv[4], NULL, 10);
		if (cycles > 0 && step > 0)
			return cycle(argv[2], cycles, step);
	}
	fprintf(stderr, "usage: comch-churn hold NAME | comch-churn cycle NAME CYCLES STEP\n");
	return 2;
}
