/*
 * The clocks the C reference copies (copy-floor.c, tcp-copy.c) report with: wall time and each process's CPU time.
 */
#ifndef DOCA_TS_BENCH_COPY_CLOCK_H
#define DOCA_TS_BENCH_COPY_CLOCK_H

#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

/* CPU seconds of this process (RUSAGE_SELF) or of its reaped sender (RUSAGE_CHILDREN): user (user = 1) or
 * system time. User time is the hashing and copying in the program, system time the kernel's file and socket work. */
static inline double cpu_seconds(int who, int user)
{
	struct rusage ru;
	getrusage(who, &ru);
	struct timeval t = user ? ru.ru_utime : ru.ru_stime;
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static inline double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
