/*
 * The C side of `deno task bench`: the machine's limits and the same DMA workloads as benchmarks/workload.ts,
 * written as a careful C program would write them against the DOCA API. One process runs a list of cells and
 * prints one JSON object per cell on stdout, so the orchestrator can alternate it with the runtimes.
 *
 *   driver run SECONDS CELL...      CELL = op:size[:depth]
 *       memcpy:S             single-thread memcpy of S bytes, repeated                      -> bytes/s
 *       pvm-read:S           process_vm_readv of S bytes from a child process               -> bytes/s
 *       pvm-write:S          process_vm_writev of S bytes into a child process              -> bytes/s
 *       local:S:D            DMA memcpy, local buffers, D tasks in flight                    -> bytes/s
 *       read:S:D / write:S:D DMA memcpy from / into the exporter's memory (BENCH_EXPORT)     -> bytes/s
 *       rate:S:D             DMA memcpy tasks of S bytes, D in flight                        -> tasks/s
 *       call                 doca_pe_progress with nothing to do                             -> ns/call
 *   driver export SIZE FILE         host side: export SIZE bytes (PCI read/write), write FILE, wait for stdin EOF
 *   driver rusage OUT CMD ARGS...   runs CMD, then writes {"status","seconds","maxrssKiB","cpuSeconds"} to OUT
 *
 * DMA cells split S into tasks of at most the device's max buf size; see benchmarks/README.md for the shape.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#define MAX_DEPTH 1024

#define DRIVER_NAME "bench driver"
#include "driver-common.h"

/* Fresh memory filled with `fill`: sources get SRC_BYTE, destinations DST_BYTE, so a copy that moved nothing shows */
#define SRC_BYTE 0x5a
#define DST_BYTE 0xa5

static uint8_t *pages(size_t len, int fill)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", strerror(errno));
	memset(p, fill, len); /* also faults every page in before timing */
	return p;
}

/* ------------------------------------------------------------------ limits */

static void report(const char *op, size_t size, unsigned depth, double value, const char *unit)
{
	printf("{\"op\":\"%s\",\"size\":%zu,\"depth\":%u,\"value\":%.6g,\"unit\":\"%s\"}\n", op, size, depth, value, unit);
	fflush(stdout);
}

static void limit_memcpy(size_t size, double seconds)
{
	uint8_t *src = pages(size, SRC_BYTE), *dst = pages(size, DST_BYTE);
	double start = now(), t;
	uint64_t n = 0;

	do {
		memcpy(dst, src, size);
		__asm__ __volatile__("" ::: "memory");
		n++;
	} while ((t = now() - start) < seconds);
	report("memcpy", size, 1, (double)size * n / t, "B/s");
	munmap(src, size);
	munmap(dst, size);
}

static void limit_process_vm(size_t size, double seconds, bool write)
{
	uint8_t *local = pages(size, DST_BYTE), *shared = pages(size, SRC_BYTE);
	int gate[2];
	pid_t pid;
	double start, t;
	uint64_t n = 0;
	char c;

	if (pipe(gate) != 0)
		die("pipe", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) { /* the peer: same addresses as ours after fork, alive until the pipe closes */
		close(gate[1]);
		while (read(gate[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(gate[0]);
	start = now();
	do {
		struct iovec l = {.iov_base = local, .iov_len = size};
		struct iovec r = {.iov_base = shared, .iov_len = size};
		ssize_t done = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (done != (ssize_t)size)
			die(write ? "process_vm_writev" : "process_vm_readv", strerror(errno));
		n++;
	} while ((t = now() - start) < seconds);
	close(gate[1]);
	waitpid(pid, NULL, 0);
	report(write ? "pvm-write" : "pvm-read", size, 1, (double)size * n / t, "B/s");
	munmap(local, size);
	munmap(shared, size);
}

/* ------------------------------------------------------------------ DMA */

struct engine {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_buf_inventory *inv;
	size_t max_buf;
	/* the running cell */
	struct doca_buf *src[MAX_DEPTH], *dst[MAX_DEPTH];
	unsigned pairs, depth, next_pair;
	uint64_t completed, submitted, target;
	bool failed;
};

static void submit(struct engine *e, unsigned pair)
{
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = pair};

	ok(doca_buf_reset_data_len(e->dst[pair]), "doca_buf_reset_data_len");
	ok(doca_dma_task_memcpy_alloc_init(e->dma, e->src[pair], e->dst[pair], ud, &task), "doca_dma_task_memcpy_alloc_init");
	ok(doca_task_submit(doca_dma_task_memcpy_as_task(task)), "doca_task_submit");
	e->submitted++;
}

/* Completion (success or error): free the task, then give its pair the next copy while the target is not reached. */
static void on_done(struct doca_dma_task_memcpy *task, union doca_data task_ud, union doca_data ctx_ud)
{
	struct engine *e = ctx_ud.ptr;
	struct doca_task *t = doca_dma_task_memcpy_as_task(task);

	if (doca_task_get_status(t) != DOCA_SUCCESS)
		e->failed = true;
	doca_task_free(t);
	e->completed++;
	if (e->submitted < e->target) {
		/* the pair just freed continues with the pair `depth` further on (each pair has one task at a time) */
		unsigned pair = (unsigned)task_ud.u64;

		if (e->pairs > e->depth)
			pair = (pair + e->depth) % e->pairs;
		submit(e, pair);
	}
}

static void engine_open(struct engine *e)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	union doca_data ud = {.ptr = e};

	memset(e, 0, sizeof(*e));
	ok(doca_devinfo_create_list(&list, &n), "doca_devinfo_create_list");
	if (n == 0)
		die("no DOCA device", NULL);
	ok(doca_dev_open(list[0], &e->dev), "doca_dev_open");
	ok(doca_dma_cap_task_memcpy_get_max_buf_size(list[0], &e->max_buf), "doca_dma_cap_task_memcpy_get_max_buf_size");
	ok(doca_devinfo_destroy_list(list), "doca_devinfo_destroy_list");
	ok(doca_pe_create(&e->pe), "doca_pe_create");
	ok(doca_dma_create(e->dev, &e->dma), "doca_dma_create");
	ok(doca_dma_task_memcpy_set_conf(e->dma, on_done, on_done, MAX_DEPTH), "doca_dma_task_memcpy_set_conf");
	ok(doca_ctx_set_user_data(doca_dma_as_ctx(e->dma), ud), "doca_ctx_set_user_data");
	ok(doca_pe_connect_ctx(e->pe, doca_dma_as_ctx(e->dma)), "doca_pe_connect_ctx");
	ok(doca_ctx_start(doca_dma_as_ctx(e->dma)), "doca_ctx_start");
	ok(doca_buf_inventory_create(2 * MAX_DEPTH, &e->inv), "doca_buf_inventory_create");
	ok(doca_buf_inventory_start(e->inv), "doca_buf_inventory_start");
}

static struct doca_mmap *local_mmap(struct engine *e, void *addr, size_t len)
{
	return started_mmap(e->dev, addr, len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE);
}

/*
 * Tasks of `chunk` bytes over `chunks` consecutive chunks from (smap, saddr) to (dmap, daddr), `depth` in flight:
 * pairs = max(chunks, depth) buffer pairs (pair p covers chunk p mod chunks), each pair one task at a time.
 */
static double run_cell(struct engine *e, struct doca_mmap *smap, uint8_t *saddr, struct doca_mmap *dmap, uint8_t *daddr,
		       size_t chunk, unsigned chunks, unsigned depth, double seconds, uint64_t *tasks_out)
{
	double start, t;

	e->depth = depth;
	e->pairs = chunks > depth ? chunks : depth;
	if (e->pairs > MAX_DEPTH || e->pairs % depth != 0)
		die("a cell needs chunks and depth that divide (powers of two) and at most 1024 buffers", NULL);
	for (unsigned p = 0; p < e->pairs; p++) {
		size_t off = (size_t)(p % chunks) * chunk;

		ok(doca_buf_inventory_buf_get_by_data(e->inv, smap, saddr + off, chunk, &e->src[p]), "buf_get_by_data");
		ok(doca_buf_inventory_buf_get_by_addr(e->inv, dmap, daddr + off, chunk, &e->dst[p]), "buf_get_by_addr");
	}
	/* warm-up: one pass over every pair */
	e->completed = e->submitted = 0;
	e->target = e->pairs;
	for (unsigned p = 0; p < depth && p < e->pairs; p++)
		submit(e, p);
	while (e->completed < e->submitted)
		doca_pe_progress(e->pe);
	/* timed: keep `depth` in flight; stop submitting once the time is up, then drain */
	e->completed = e->submitted = 0;
	e->target = UINT64_MAX;
	start = now();
	for (unsigned p = 0; p < depth; p++)
		submit(e, p % e->pairs);
	for (unsigned spin = 0;; spin++) {
		doca_pe_progress(e->pe);
		if ((spin & 63) == 0 && now() - start >= seconds)
			break;
	}
	e->target = 0;
	while (e->completed < e->submitted)
		doca_pe_progress(e->pe);
	t = now() - start;
	if (e->failed)
		die("a DMA task failed", NULL);
	for (unsigned p = 0; p < e->pairs; p++) {
		ok(doca_buf_dec_refcount(e->src[p], NULL), "doca_buf_dec_refcount");
		ok(doca_buf_dec_refcount(e->dst[p], NULL), "doca_buf_dec_refcount");
	}
	*tasks_out = e->completed;
	return t;
}

/* The exporter's memory, imported from the file `driver export` wrote: "address length hex-descriptor". */
struct remote {
	struct doca_mmap *mmap;
	uint8_t *addr;
	size_t len;
};

static struct remote import_export(struct engine *e)
{
	const char *path = getenv("BENCH_EXPORT");
	struct remote r = {0};
	unsigned long long addr, len;
	char hex[4096];
	uint8_t desc[2048];
	size_t n;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		die("read/write cells need BENCH_EXPORT (a file written by `driver export`)", path);
	if (fscanf(f, "%llu %llu %4095s", &addr, &len, hex) != 3)
		die("bad export file", path);
	fclose(f);
	n = strlen(hex) / 2;
	if (n > sizeof(desc))
		die("descriptor too long", path);
	for (size_t i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", &desc[i]);
	ok(doca_mmap_create_from_export(NULL, desc, n, e->dev, &r.mmap), "doca_mmap_create_from_export");
	r.addr = (uint8_t *)(uintptr_t)addr;
	r.len = len;
	return r;
}

static void dma_cell(struct engine *e, struct remote *remote, const char *op, size_t size, unsigned depth, double seconds)
{
	bool rate = strcmp(op, "rate") == 0;
	bool from_remote = strcmp(op, "read") == 0, to_remote = strcmp(op, "write") == 0;
	/* bandwidth: `size` bytes in tasks of at most the max buf size; rate: `depth` tasks of `size` bytes each */
	size_t chunk = rate || size < e->max_buf ? size : e->max_buf;
	unsigned chunks = rate ? depth : (unsigned)(size / chunk);
	size_t span = chunk * chunks;
	uint8_t *a = pages(span, SRC_BYTE), *b = pages(span, DST_BYTE);
	struct doca_mmap *am = local_mmap(e, a, span), *bm = local_mmap(e, b, span);
	uint64_t tasks;
	double t;

	if ((from_remote || to_remote) && !remote->mmap)
		*remote = import_export(e);
	if ((from_remote || to_remote) && span > remote->len)
		die("the export is smaller than the cell", op);
	if (from_remote)
		t = run_cell(e, remote->mmap, remote->addr, bm, b, chunk, chunks, depth, seconds, &tasks);
	else if (to_remote)
		t = run_cell(e, am, a, remote->mmap, remote->addr, chunk, chunks, depth, seconds, &tasks);
	else
		t = run_cell(e, am, a, bm, b, chunk, chunks, depth, seconds, &tasks);
	/* every cell but `write` lands in b; its source (a, or the exporter) holds SRC_BYTE like a */
	if (!to_remote && memcmp(a, b, span) != 0)
		die("the copied bytes differ from the source", op);
	if (rate)
		report(op, size, depth, tasks / t, "tasks/s");
	else
		report(op, size, depth, (double)tasks * chunk / t, "B/s");
	ok(doca_mmap_destroy(am), "doca_mmap_destroy");
	ok(doca_mmap_destroy(bm), "doca_mmap_destroy");
	munmap(a, span);
	munmap(b, span);
}

static void call_cell(struct engine *e, double seconds)
{
	uint64_t n = 0;
	double start = now(), t;

	do {
		for (int i = 0; i < 4096; i++)
			doca_pe_progress(e->pe);
		n += 4096;
	} while ((t = now() - start) < seconds);
	report("call", 0, 0, t * 1e9 / n, "ns");
}

static int run(double seconds, int ncells, char **cells)
{
	struct engine e;
	struct remote remote = {0};
	bool opened = false;

	for (int i = 0; i < ncells; i++) {
		char op[32];
		unsigned long long size = 0;
		unsigned depth = 1;

		if (sscanf(cells[i], "%31[^:]:%llu:%u", op, &size, &depth) < 1 || depth == 0 || depth > MAX_DEPTH)
			die("bad cell", cells[i]);
		if (strcmp(op, "memcpy") == 0) {
			limit_memcpy(size, seconds);
		} else if (strcmp(op, "pvm-read") == 0 || strcmp(op, "pvm-write") == 0) {
			limit_process_vm(size, seconds, op[4] == 'w');
		} else {
			if (!opened)
				engine_open(&e);
			opened = true;
			if (strcmp(op, "call") == 0)
				call_cell(&e, seconds);
			else if (strcmp(op, "local") == 0 || strcmp(op, "read") == 0 || strcmp(op, "write") == 0 ||
				 strcmp(op, "rate") == 0)
				dma_cell(&e, &remote, op, size, depth, seconds);
			else
				die("unknown cell", cells[i]);
		}
	}
	if (remote.mmap)
		ok(doca_mmap_destroy(remote.mmap), "doca_mmap_destroy");
	if (opened) {
		ok(doca_ctx_stop(doca_dma_as_ctx(e.dma)), "doca_ctx_stop");
		ok(doca_dma_destroy(e.dma), "doca_dma_destroy");
		ok(doca_pe_destroy(e.pe), "doca_pe_destroy");
		ok(doca_buf_inventory_destroy(e.inv), "doca_buf_inventory_destroy");
		ok(doca_dev_close(e.dev), "doca_dev_close");
	}
	return 0;
}

/* ------------------------------------------------------------------ exporter and rusage */

static int export_main(size_t size, const char *path)
{
	struct engine e;
	uint8_t *mem = pages(size, SRC_BYTE);
	struct doca_mmap *m;
	const void *desc;
	size_t len;
	char tmp[4096];
	char c;
	FILE *f;

	engine_open(&e);
	m = local_mmap(&e, mem, size);
	ok(doca_mmap_export_pci(m, e.dev, &desc, &len), "doca_mmap_export_pci");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		die("cannot write", tmp);
	fprintf(f, "%llu %zu ", (unsigned long long)(uintptr_t)mem, size);
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", ((const uint8_t *)desc)[i]);
	fputc('\n', f);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		die("cannot write", path);
	while (read(0, &c, 1) > 0) /* the orchestrator closes stdin when it is done */
		;
	ok(doca_mmap_destroy(m), "doca_mmap_destroy");
	return 0;
}

static int rusage_main(const char *out, char **argv)
{
	double start = now();
	struct rusage ru;
	int status;
	pid_t pid = fork();
	FILE *f;

	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "bench driver: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		die("wait4", strerror(errno));
	if (!(f = fopen(out, "w")))
		die("cannot write", out);
	/* cpuSeconds: user + system time of CMD and of the children it reaped (a C copy's forked sender) */
	fprintf(f, "{\"status\":%d,\"seconds\":%.6f,\"maxrssKiB\":%ld,\"cpuSeconds\":%.6f}\n",
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), now() - start, ru.ru_maxrss,
		(double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "run") == 0)
		return run(strtod(argv[2], NULL), argc - 3, argv + 3);
	if (argc == 4 && strcmp(argv[1], "export") == 0)
		return export_main(strtoull(argv[2], NULL, 0), argv[3]);
	if (argc >= 4 && strcmp(argv[1], "rusage") == 0)
		return rusage_main(argv[2], argv + 3);
	fprintf(stderr, "usage: driver run SECONDS op:size[:depth]... | driver export SIZE FILE | driver rusage OUT CMD...\n");
	return 2;
}
