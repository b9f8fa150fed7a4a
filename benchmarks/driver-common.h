/*
 * What the benchmark's C drivers (driver.c, comch-driver.c) share: failing loudly on the first DOCA error, and a
 * monotonic clock. Each driver defines DRIVER_NAME (how its messages start) before including this file.
 */
#ifndef DOCA_TS_BENCH_DRIVER_COMMON_H
#define DOCA_TS_BENCH_DRIVER_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_error.h>

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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
