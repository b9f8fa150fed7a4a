/*
 * What the benchmark's C drivers (driver.c, rdma-driver.c, comch-driver.c, comch-churn.c, accel-driver.c,
 * accel-ea-driver.c) share: failing loudly on the first DOCA error, a monotonic clock and opening the first device.
 * Each driver defines DRIVER_NAME (how its messages start) before including this file.
 */
#ifndef DOCA_TS_BENCH_DRIVER_COMMON_H
#define DOCA_TS_BENCH_DRIVER_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>

static void die(const char *what, const char *detail)
{
	fprintf(stderr, DRIVER_NAME ": %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

static void ok(doca_error_t rc, const char *call)
{
	if (rc != DOCA_SUCCESS)
		die(call, doca_error_get_name(rc));
}

/* The call must return DOCA_SUCCESS; the message names the call */
#define OK(call) ok((call), #call)

/* A context's start or stop: DOCA_SUCCESS, or DOCA_ERROR_IN_PROGRESS when it completes later (its state callback
 * says when); anything else fails with what (the call) */
static inline void ok_or_pending(doca_error_t rc, const char *what)
{
	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_IN_PROGRESS)
		die(what, doca_error_get_name(rc));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the whole process (all threads), seconds */
static inline double process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The clock of one accelerator cell (accel-driver.c, accel-ea-driver.c): WARMUP seconds of the same work untimed
 * (lazy library set-up, first page faults; the TypeScript side warms its JIT the same way, accel-cell.ts), then
 * SECONDS measured. cell_tick() is called after each finished operation with the count so far: it notes the count
 * when the warm-up ends and says whether the cell still runs.
 */
struct cell_clock {
	double warm_end, seconds, deadline, start, cpu_start;
	unsigned long long ops_at_start;
	int timing;
};

/* The warm-up of a cell of SECONDS: half of a short cell, 0.25 s of a longer one (accel-cell.ts: the same rule) */
static inline double cell_warmup(double seconds)
{
	return seconds < 0.5 ? seconds / 2 : 0.25;
}

static inline void cell_begin(struct cell_clock *c, double seconds)
{
	double t = now();

	c->warm_end = t + cell_warmup(seconds);
	c->seconds = seconds;
	c->deadline = c->warm_end + seconds; /* moved when the measured part starts */
	c->start = c->warm_end;
	c->cpu_start = process_cpu();
	c->ops_at_start = 0;
	c->timing = 0;
}

/* After an operation: 1 while the cell runs (warm-up or measured part), 0 once its time is up. The measured part
 * starts at the first operation finished after the warm-up and lasts SECONDS from there, so it always counts some. */
static inline int cell_tick(struct cell_clock *c, unsigned long long ops)
{
	double t = now();

	if (!c->timing && t >= c->warm_end) {
		c->timing = 1;
		c->start = t;
		c->deadline = t + c->seconds;
		c->cpu_start = process_cpu();
		c->ops_at_start = ops;
	}
	return t < c->deadline;
}

/* The measured part: operations, seconds (from the end of the warm-up to now) and the CPU seconds the process used
 * meanwhile (what the rates per CPU second of a loaded machine divide by) */
static inline void cell_end(const struct cell_clock *c, unsigned long long ops, unsigned long long *measured,
			    double *seconds, double *cpu)
{
	*measured = c->timing ? ops - c->ops_at_start : ops;
	*seconds = now() - c->start;
	*cpu = process_cpu() - c->cpu_start;
}

/* The first device of this side (the software device lists one per side) */
static inline struct doca_dev *open_first_dev(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint32_t n = 0;

	ok(doca_devinfo_create_list(&list, &n), "doca_devinfo_create_list");
	if (n == 0)
		die("no DOCA device", NULL);
	ok(doca_dev_open(list[0], &dev), "doca_dev_open");
	ok(doca_devinfo_destroy_list(list), "doca_devinfo_destroy_list");
	return dev;
}

/* A started mmap over [mem, mem + len) on dev with the given access permissions */
static inline struct doca_mmap *started_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t permissions)
{
	struct doca_mmap *mmap;

	OK(doca_mmap_create(&mmap));
	OK(doca_mmap_set_memrange(mmap, mem, len));
	OK(doca_mmap_set_permissions(mmap, permissions));
	OK(doca_mmap_add_dev(mmap, dev));
	OK(doca_mmap_start(mmap));
	return mmap;
}

#endif
