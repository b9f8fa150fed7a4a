/*
 * Diagnostics of the software device: live-object counters (leak tests), logging and doca_sim_live_objects. Depends
 * on no other file of the device (everyone logs); doca_sim_describe, which reads the configuration, is describe.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doca_sim.h>

#include "internal.h"

static _Atomic uint64_t live[SIM_KIND_COUNT_];

/* Each kind's two names, kept together so a new kind is named once: its counter in doca_sim_describe's live list,
 * and the object a strict-mode leak report (strict.c) says was left */
static const struct {
	const char *counter, *object;
} kind_names[SIM_KIND_COUNT_] = {
	[SIM_KIND_DEVINFO_LIST] = {"devinfo_lists", "devinfo list"},
	[SIM_KIND_DEVINFO_REP_LIST] = {"rep_lists", "devinfo_rep list"},
	[SIM_KIND_DEV] = {"devs", "dev"},
	[SIM_KIND_DEV_REP] = {"dev_reps", "dev_rep"},
	[SIM_KIND_MMAP] = {"mmaps", "mmap"},
	[SIM_KIND_BUF_INVENTORY] = {"inventories", "buf_inventory"},
	[SIM_KIND_BUF] = {"bufs", "buf"},
	[SIM_KIND_PE] = {"pes", "pe"},
	[SIM_KIND_CTX] = {"ctxs", "ctx"},
	[SIM_KIND_TASK] = {"tasks", "task"},
	[SIM_KIND_CONNECTION] = {"connections", "connection (Comch or RDMA, freed with its context)"},
	[SIM_KIND_ACCEL_HANDLE] = {"ec_matrices_and_keys", "ec matrix or aes_gcm key"},
};

void sim_live_inc(enum sim_kind kind)
{
	atomic_fetch_add_explicit(&live[kind], 1, memory_order_relaxed);
}

void sim_live_dec(enum sim_kind kind)
{
	atomic_fetch_sub_explicit(&live[kind], 1, memory_order_relaxed);
}

uint64_t sim_live_count(enum sim_kind kind)
{
	return atomic_load_explicit(&live[kind], memory_order_relaxed);
}

const char *sim_live_kind_name(enum sim_kind kind)
{
	return kind_names[kind].counter;
}

const char *sim_live_kind_object(enum sim_kind kind)
{
	return kind_names[kind].object;
}

static int log_level(void)
{
	static int level = -1;

	if (level < 0) {
		const char *env = getenv("DOCA_SIM_LOG");
		level = (env != NULL && *env != '\0') ? atoi(env) : SIM_LOG_ERROR;
	}
	return level;
}

void sim_escape_line(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (cap == 0)
		return;
	for (const unsigned char *p = (const unsigned char *)in; *p != '\0' && o + 5 < cap; p++) {
		/* C0 controls and DEL, and C1 controls in UTF-8 (0xc2 0x80..0x9f), become \xNN: a path or a
		 * configuration value named in a log line cannot retitle, clear or rewrite the user's terminal */
		bool c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
		if (*p < 0x20 || *p == 0x7f || c1) {
			unsigned char c = c1 ? *++p : *p;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
}

static void vlog(const char *fmt, va_list ap)
{
	char line[1024], safe[4 * sizeof(line) + 1];

	vsnprintf(line, sizeof(line), fmt, ap);
	sim_escape_line(line, safe, sizeof(safe));
	fprintf(stderr, "[doca-sim %d] %s\n", (int)getpid(), safe);
}

void sim_log(enum sim_log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_level())
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

doca_error_t sim_fail(doca_error_t err, const char *fmt, ...)
{
	va_list ap;

	if (log_level() >= SIM_LOG_DEBUG) {
		va_start(ap, fmt);
		vlog(fmt, ap);
		va_end(ap);
	}
	return err;
}

uint64_t doca_sim_live_objects(void)
{
	uint64_t total = 0;

	for (int kind = 0; kind < SIM_KIND_COUNT_; kind++)
		total += sim_live_count((enum sim_kind)kind);
	return total;
}
