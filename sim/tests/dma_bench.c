/*
 * Benchmark driver of the software device's DMA against the machine's own limits:
 *   local   DMA memcpy tasks vs plain memcpy of the same buffers
 *   remote  DMA from a host process's export vs a raw process_vm_readv of the same range
 *   small   64-byte tasks per second, `depth` tasks kept in flight (resubmitted from the completion callback)
 * Prints one JSON object per line: {"case":..., "bytes":..., "iters":..., "seconds":..., "gbps" or "ops":..., ...}.
 *
 * Usage: dma_bench [local|remote|small|all] [size_bytes] [iterations]
 * The process runs as the DPU side; the remote case starts a copy of itself as the host (DOCA_SIM_SIDE=host).
 */
#include <errno.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_dma.h>

#include "sim_test_util.h"

struct bench {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_buf_inventory *inv;
	long remaining; /* tasks still to complete */
	int failed;
};

static void on_done(struct doca_dma_task_memcpy *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct bench *b = ctx_user_data.ptr;
	struct doca_buf *dst = doca_dma_task_memcpy_get_dst(task);

	(void)task_user_data;
	if (doca_task_get_status(doca_dma_task_memcpy_as_task(task)) != DOCA_SUCCESS)
		b->failed = 1;
	b->remaining--;
	doca_buf_reset_data_len(dst);
	/* keep the pipeline full: resubmit while more completions are needed beyond those in flight */
	if (b->remaining > 0 && doca_task_submit(doca_dma_task_memcpy_as_task(task)) == DOCA_SUCCESS)
		return;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void setup(struct bench *b, uint32_t tasks)
{
	union doca_data ud = {.ptr = b};

	memset(b, 0, sizeof(*b));
	b->dev = t_open_first_dev();
	T_OK(doca_pe_create(&b->pe));
	T_OK(doca_dma_create(b->dev, &b->dma));
	T_OK(doca_dma_task_memcpy_set_conf(b->dma, on_done, on_done, tasks));
	T_OK(doca_ctx_set_user_data(doca_dma_as_ctx(b->dma), ud));
	T_OK(doca_pe_connect_ctx(b->pe, doca_dma_as_ctx(b->dma)));
	T_OK(doca_ctx_start(doca_dma_as_ctx(b->dma)));
	T_OK(doca_buf_inventory_create(2 * tasks, &b->inv));
	T_OK(doca_buf_inventory_start(b->inv));
}

/* The end of a case: its two maps (their bufs released by then), then the context, engine, inventory and device */
static void teardown(struct bench *b, struct doca_mmap *m1, struct doca_mmap *m2)
{
	T_OK(doca_mmap_destroy(m1));
	T_OK(doca_mmap_destroy(m2));
	T_OK(doca_ctx_stop(doca_dma_as_ctx(b->dma)));
	T_OK(doca_dma_destroy(b->dma));
	T_OK(doca_pe_destroy(b->pe));
	T_OK(doca_buf_inventory_destroy(b->inv));
	T_OK(doca_dev_close(b->dev));
}

/* Run `iters` copies src->dst with `depth` tasks in flight; returns seconds */
static double run_tasks(struct bench *b, struct doca_buf **srcs, struct doca_buf **dsts, uint32_t depth, long iters)
{
	union doca_data none = {.u64 = 0};
	double start = t_now();

	b->remaining = iters;
	for (uint32_t i = 0; i < depth && (long)i < iters; i++) {
		struct doca_dma_task_memcpy *task;

		T_OK(doca_dma_task_memcpy_alloc_init(b->dma, srcs[i], dsts[i], none, &task));
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	}
	while (b->remaining > 0)
		doca_pe_progress(b->pe);
	/* drain completions of tasks submitted beyond the count */
	while (doca_pe_progress(b->pe))
		;
	T_TRUE(!b->failed);
	return t_now() - start;
}

static void bench_local(size_t size, long iters)
{
	struct bench b;
	uint8_t *src = malloc(size), *dst = malloc(size);
	struct doca_mmap *sm, *dm;
	struct doca_buf *sb, *db;
	double t_memcpy, t_dma, start;

	T_TRUE(src && dst);
	t_fill(src, size, 9);
	memset(dst, 0, size);
	setup(&b, 1);
	sm = t_mmap(b.dev, src, size, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	dm = t_mmap(b.dev, dst, size, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_buf_inventory_buf_get_by_data(b.inv, sm, src, size, &sb));
	T_OK(doca_buf_inventory_buf_get_by_addr(b.inv, dm, dst, size, &db));
	start = t_now();
	for (long i = 0; i < iters; i++) {
		memcpy(dst, src, size);
		__asm__ __volatile__("" ::: "memory");
	}
	t_memcpy = t_now() - start;
	t_dma = run_tasks(&b, &sb, &db, 1, iters);
	T_TRUE(memcmp(src, dst, size) == 0);
	printf("{\"case\":\"local\",\"bytes\":%zu,\"iters\":%ld,\"memcpy_gbps\":%.3f,\"dma_gbps\":%.3f,\"ratio\":%.3f}\n",
	       size, iters, (double)size * iters / t_memcpy / 1e9, (double)size * iters / t_dma / 1e9, t_memcpy / t_dma);
	T_OK(doca_buf_dec_refcount(sb, NULL));
	T_OK(doca_buf_dec_refcount(db, NULL));
	teardown(&b, sm, dm);
	free(src);
	free(dst);
}

static void bench_small(long iters)
{
	enum { DEPTH = 64, SMALL = 64 };
	struct bench b;
	static uint8_t src[DEPTH * SMALL], dst[DEPTH * SMALL];
	struct doca_mmap *sm, *dm;
	struct doca_buf *srcs[DEPTH], *dsts[DEPTH];
	double secs;

	setup(&b, DEPTH);
	t_fill(src, sizeof(src), 4);
	sm = t_mmap(b.dev, src, sizeof(src), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	dm = t_mmap(b.dev, dst, sizeof(dst), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	for (int i = 0; i < DEPTH; i++) {
		T_OK(doca_buf_inventory_buf_get_by_data(b.inv, sm, src + i * SMALL, SMALL, &srcs[i]));
		T_OK(doca_buf_inventory_buf_get_by_addr(b.inv, dm, dst + i * SMALL, SMALL, &dsts[i]));
	}
	secs = run_tasks(&b, srcs, dsts, DEPTH, iters);
	T_TRUE(memcmp(src, dst, sizeof(src)) == 0);
	printf("{\"case\":\"small\",\"bytes\":%d,\"iters\":%ld,\"depth\":%d,\"ops\":%.0f,\"ns_per_task\":%.1f}\n", SMALL,
	       iters, DEPTH, iters / secs, secs * 1e9 / iters);
	for (int i = 0; i < DEPTH; i++) {
		T_OK(doca_buf_dec_refcount(srcs[i], NULL));
		T_OK(doca_buf_dec_refcount(dsts[i], NULL));
	}
	teardown(&b, sm, dm);
}

/* The exporting side of the remote case: export, send the descriptor, wait until told to finish */
static int host_main(size_t size, int rfd, int wfd)
{
	struct doca_dev *dev = t_open_first_dev();
	uint8_t *buf = malloc(size);
	struct doca_mmap *mmap;
	const void *desc;
	size_t desc_len;
	uint64_t header[2];
	char done;

	T_TRUE(buf != NULL);
	t_fill(buf, size, 6);
	mmap = t_mmap(dev, buf, size, DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	T_OK(doca_mmap_export_pci(mmap, dev, &desc, &desc_len));
	header[0] = (uint64_t)(uintptr_t)buf;
	header[1] = desc_len;
	T_TRUE(write(wfd, header, sizeof(header)) == sizeof(header));
	T_TRUE(write(wfd, desc, desc_len) == (ssize_t)desc_len);
	T_TRUE(read(rfd, &done, 1) == 1);
	T_OK(doca_mmap_destroy(mmap));
	T_OK(doca_dev_close(dev));
	free(buf);
	return 0;
}

static void bench_remote(size_t size, long iters)
{
	int to_host[2], to_dpu[2];
	uint64_t header[2];
	uint8_t desc[512];
	struct bench b;
	uint8_t *local = malloc(size);
	struct doca_mmap *remote, *lm;
	struct doca_buf *sb, *db;
	double start, t_raw, t_dma;
	pid_t pid;
	int status;

	T_TRUE(local != NULL && pipe(to_host) == 0 && pipe(to_dpu) == 0);
	pid = fork();
	T_TRUE(pid >= 0);
	if (pid == 0) {
		char s[32], rs[16], ws[16];

		/* keep only our ends, so that each side sees EOF when the other goes away */
		close(to_host[1]);
		close(to_dpu[0]);

		snprintf(s, sizeof(s), "%zu", size);
		snprintf(rs, sizeof(rs), "%d", to_host[0]);
		snprintf(ws, sizeof(ws), "%d", to_dpu[1]);
		setenv("DOCA_SIM_SIDE", "host", 1);
		execl("/proc/self/exe", "dma_bench", "--host", s, rs, ws, (char *)NULL);
		_exit(127);
	}
	close(to_host[0]);
	close(to_dpu[1]);
	T_TRUE(read(to_dpu[0], header, sizeof(header)) == sizeof(header) && header[1] <= sizeof(desc));
	T_TRUE(read(to_dpu[0], desc, header[1]) == (ssize_t)header[1]);

	start = t_now();
	for (long i = 0; i < iters; i++) {
		struct iovec l = {.iov_base = local, .iov_len = size};
		struct iovec r = {.iov_base = (void *)(uintptr_t)header[0], .iov_len = size};

		T_TRUE(process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)size);
	}
	t_raw = t_now() - start;

	setup(&b, 1);
	T_OK(doca_mmap_create_from_export(NULL, desc, header[1], b.dev, &remote));
	lm = t_mmap(b.dev, local, size, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_buf_inventory_buf_get_by_data(b.inv, remote, (void *)(uintptr_t)header[0], size, &sb));
	T_OK(doca_buf_inventory_buf_get_by_addr(b.inv, lm, local, size, &db));
	memset(local, 0, size);
	t_dma = run_tasks(&b, &sb, &db, 1, iters);
	T_TRUE(t_check(local, size, 6));
	printf("{\"case\":\"remote\",\"bytes\":%zu,\"iters\":%ld,\"process_vm_readv_gbps\":%.3f,\"dma_gbps\":%.3f,"
	       "\"ratio\":%.3f}\n",
	       size, iters, (double)size * iters / t_raw / 1e9, (double)size * iters / t_dma / 1e9, t_raw / t_dma);
	T_OK(doca_buf_dec_refcount(sb, NULL));
	T_OK(doca_buf_dec_refcount(db, NULL));
	teardown(&b, remote, lm);
	T_TRUE(write(to_host[1], "x", 1) == 1);
	T_TRUE(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(local);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";
	size_t size = argc > 2 ? strtoull(argv[2], NULL, 0) : 1024 * 1024;
	long iters = argc > 3 ? strtol(argv[3], NULL, 0) : 200;
	bool all = strcmp(which, "all") == 0;

	if (argc == 5 && strcmp(argv[1], "--host") == 0)
		return host_main(strtoull(argv[2], NULL, 0), atoi(argv[3]), atoi(argv[4]));
	/* This process is the DPU (it imports the host's export in the remote case); set before any DOCA call */
	setenv("DOCA_SIM_SIDE", "dpu", 1);
	if (all || strcmp(which, "local") == 0)
		bench_local(size, iters);
	if (all || strcmp(which, "small") == 0)
		bench_small(iters * 1000);
	if (all || strcmp(which, "remote") == 0)
		bench_remote(size, iters);
	fflush(stdout);
	return 0;
}
