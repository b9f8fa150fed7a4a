/*
 * What the C reference copies (copy-floor.c, tcp-copy.c) share: the clocks they report with (wall time and each
 * process's CPU time) and the receiver's target file: a temporary file beside TARGET that a failure removes, writeback
 * started every 64 MiB, fsync and rename at the end. Each program defines COPY_NAME (how its messages start) before
 * including this file.
 */
#ifndef DOCA_TS_BENCH_COPY_COMMON_H
#define DOCA_TS_BENCH_COPY_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

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

/* The receiver's temporary file while it exists: a failure removes it (nothing half-written stays). */
static char temp[4096];

static void die(const char *what)
{
	fprintf(stderr, COPY_NAME ": %s: %s\n", what, strerror(errno));
	if (temp[0])
		unlink(temp);
	exit(1);
}

/* The sender's source, open for reading, and its size in *st */
static int open_source(const char *source, struct stat *st)
{
	int fd = open(source, O_RDONLY);
	if (fd < 0)
		die(source);
	if (fstat(fd, st) != 0)
		die("fstat");
	return fd;
}

#define FLUSH_EVERY (64ULL << 20)

/* How much of the target is written, and how much of that writeback has been started for */
struct written {
	uint64_t bytes, unflushed, flushed_to;
};

/* n more bytes are in the target: every FLUSH_EVERY bytes, writeback of what came since starts (as the tasks'
 * receivers do), so the final fsync does not meet the whole file at once */
static void wrote(int out, struct written *w, uint64_t n)
{
	w->bytes += n;
	w->unflushed += n;
	if (w->unflushed >= FLUSH_EVERY) {
		sync_file_range(out, (off_t)w->flushed_to, (off_t)(w->bytes - w->flushed_to), SYNC_FILE_RANGE_WRITE);
		w->flushed_to = w->bytes;
		w->unflushed = 0;
	}
}

/* The copy is whole: fsync the temporary file, close it and rename it to target */
static void commit(int out, const char *target)
{
	if (fsync(out) != 0 || close(out) != 0)
		die("fsync");
	if (rename(temp, target) != 0)
		die("rename");
	temp[0] = 0;
}

#endif
