/*
 * Cross-process DMA on the software device. This program is the DPU-side importer; it starts a copy of itself as the
 * host-side exporter (DOCA_SIM_SIDE=host) and talks to it over two pipes: the host exports a buffer with
 * doca_mmap_export_pci and sends the descriptor, the DPU maps it with doca_mmap_create_from_export and runs memcpy
 * tasks against it. One scenario per run:
 *
 *   to_host       DPU writes into a PCI_READ_WRITE export; the host checks every byte
 *   from_host     DPU reads a PCI_READ_ONLY export; the DPU checks every byte
 *   ro_write      DPU writes into a PCI_READ_ONLY export       -> task DOCA_ERROR_NOT_PERMITTED, host bytes unchanged
 *   revoked       host stops its mmap after the DPU imported   -> task DOCA_ERROR_NOT_PERMITTED
 *   forged        descriptor with a flipped key / bad magic    -> DOCA_ERROR_NOT_PERMITTED / DOCA_ERROR_INVALID_VALUE
 *   wrong_device  DPU whose representor is another PCI function -> DOCA_ERROR_NOT_PERMITTED
 *   peer_host     another host-side process imports the export  -> DOCA_ERROR_NOT_PERMITTED
 *   host_reads_dpu  roles swapped: the DPU exports, the host imports through its device and reads every byte
 *   out_of_range  bufs outside the exported range              -> DOCA_ERROR_INVALID_VALUE, oversize task fails at completion
 *   vanished      host process exits after the import          -> task DOCA_ERROR_IO_FAILED
 *
 * Usage: dma_remote <scenario>      (the host role is `dma_remote --host <scenario> <read fd> <write fd>`)
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_dma.h>

#include "dma_test_util.h"

#define BUF_LEN (256 * 1024 + 7)
#define HOST_SEED 2
#define DPU_SEED 3

/* ---------------------------------------------------------------- host role: export and obey */

static int host_main(const char *scenario, int rfd, int wfd)
{
	bool writable = strcmp(scenario, "to_host") == 0;
	uint32_t perms = writable ? (DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE)
				  : DOCA_ACCESS_FLAG_PCI_READ_ONLY;
	struct doca_dev *dev = t_open_first_dev();
	uint8_t *buf = malloc(BUF_LEN);
	struct doca_mmap *mmap;
	const void *desc;
	size_t desc_len;
	struct msg m;

	T_TRUE(buf != NULL);
	if (writable)
		memset(buf, 0, BUF_LEN);
	else
		t_fill(buf, BUF_LEN, HOST_SEED);
	mmap = t_mmap(dev, buf, BUF_LEN, perms);
	T_OK(doca_mmap_export_pci(mmap, dev, &desc, &desc_len));
	send_msg(wfd, "desc", (uint64_t)(uintptr_t)buf, BUF_LEN, desc, desc_len);
	for (;;) {
		recv_msg(rfd, &m);
		if (strcmp(m.cmd, "stop") == 0) {
			T_OK(doca_mmap_stop(mmap));
			send_msg(wfd, "stopped", 0, 0, NULL, 0);
		} else if (strcmp(m.cmd, "exit") == 0) {
			_exit(0); /* vanish without any cleanup */
		} else if (strcmp(m.cmd, "verify") == 0) {
			send_msg(wfd, t_check(buf, BUF_LEN, (uint32_t)m.addr) ? "verified" : "mismatch", 0, 0, NULL, 0);
		} else if (strcmp(m.cmd, "done") == 0) {
			break;
		}
	}
	T_OK(doca_mmap_destroy(mmap));
	T_OK(doca_dev_close(dev));
	T_TRUE(doca_sim_live_objects() == 0);
	free(buf);
	return 0;
}

/* ---------------------------------------------------------------- DPU role: import and copy */

/* The host role's process (0 when none was started, -1 once it was reaped) */
static pid_t host_pid;

static struct doca_mmap *import(struct dpu *d)
{
	struct doca_mmap *remote;

	T_OK(doca_mmap_create_from_export(NULL, d->desc.desc, d->desc.desc_len, d->dev, &remote));
	return remote;
}

static void *remote_addr(struct dpu *d, uint64_t offset)
{
	return (void *)(uintptr_t)(d->desc.addr + offset);
}

static void host_says(struct dpu *d, const char *cmd, uint64_t arg, const char *want)
{
	struct msg m;

	send_msg(d->wfd, cmd, arg, 0, NULL, 0);
	if (want == NULL)
		return;
	recv_msg(d->rfd, &m);
	if (strcmp(m.cmd, want) != 0) {
		t_say("FAIL host answered %s to %s, expected %s", m.cmd, cmd, want);
		exit(1);
	}
}

/* An imported export and the two bufs of one copy over it: into the export from local memory (`len` bytes of local
 * data), or out of the whole export into local memory */
struct transfer {
	struct doca_mmap *remote;
	struct doca_buf *src, *dst;
};

static struct transfer into_export(struct dpu *d, size_t len)
{
	struct transfer t = {.remote = import(d)};

	T_OK(doca_buf_inventory_buf_get_by_data(d->inv, d->local_mmap, d->local, len, &t.src));
	T_OK(doca_buf_inventory_buf_get_by_addr(d->inv, t.remote, remote_addr(d, 0), BUF_LEN, &t.dst));
	return t;
}

static struct transfer out_of_export(struct dpu *d)
{
	struct transfer t = {.remote = import(d)};

	T_OK(doca_buf_inventory_buf_get_by_data(d->inv, t.remote, remote_addr(d, 0), BUF_LEN, &t.src));
	T_OK(doca_buf_inventory_buf_get_by_addr(d->inv, d->local_mmap, d->local, BUF_LEN, &t.dst));
	return t;
}

static void transfer_release(struct transfer *t)
{
	T_OK(doca_buf_dec_refcount(t->src, NULL));
	T_OK(doca_buf_dec_refcount(t->dst, NULL));
	T_OK(doca_mmap_destroy(t->remote));
}

static void scenario_to_host(struct dpu *d)
{
	struct transfer t;

	t_fill(d->local, BUF_LEN, DPU_SEED);
	t = into_export(d, BUF_LEN);
	T_OK(dpu_copy(d, t.src, t.dst));
	host_says(d, "verify", DPU_SEED, "verified");
	t_say("ok DPU wrote %d bytes into host memory, host verified them", BUF_LEN);
	transfer_release(&t);
}

/* Copy the whole export into local memory and check every byte */
static void read_export(struct dpu *d)
{
	struct transfer t;

	memset(d->local, 0, BUF_LEN);
	t = out_of_export(d);
	T_OK(dpu_copy(d, t.src, t.dst));
	T_TRUE(t_check(d->local, BUF_LEN, HOST_SEED));
	transfer_release(&t);
}

static void scenario_from_host(struct dpu *d)
{
	read_export(d);
	t_say("ok DPU read %d bytes of host memory and verified them", BUF_LEN);
}

static void scenario_host_reads_dpu(struct dpu *d)
{
	read_export(d);
	t_say("ok host read %d bytes of DPU memory and verified them", BUF_LEN);
}

static void scenario_ro_write(struct dpu *d)
{
	struct transfer t;

	t_fill(d->local, BUF_LEN, DPU_SEED);
	t = into_export(d, 4096);
	T_EXPECT_ERR(dpu_copy(d, t.src, t.dst), DOCA_ERROR_NOT_PERMITTED);
	host_says(d, "verify", HOST_SEED, "verified");
	t_say("ok write into a PCI_READ_ONLY export: DOCA_ERROR_NOT_PERMITTED, host bytes unchanged");
	transfer_release(&t);
}

static void scenario_revoked(struct dpu *d)
{
	struct doca_mmap *remote;
	struct transfer t;

	memset(d->local, 0, BUF_LEN);
	t = out_of_export(d);
	host_says(d, "stop", 0, "stopped");
	T_EXPECT_ERR(dpu_copy(d, t.src, t.dst), DOCA_ERROR_NOT_PERMITTED);
	for (size_t i = 0; i < BUF_LEN; i++)
		T_TRUE(d->local[i] == 0);
	t_say("ok copy from a revoked export: DOCA_ERROR_NOT_PERMITTED, nothing copied");
	transfer_release(&t);
	/* A fresh import of the revoked descriptor is refused too */
	T_EXPECT_ERR(doca_mmap_create_from_export(NULL, d->desc.desc, d->desc.desc_len, d->dev, &remote),
		     DOCA_ERROR_NOT_PERMITTED);
	t_say("ok import of a revoked export: DOCA_ERROR_NOT_PERMITTED");
}

static void scenario_forged(struct dpu *d)
{
	uint8_t forged[sizeof(d->desc.desc)];
	struct doca_mmap *remote = NULL;
	size_t len = d->desc.desc_len;

	/* The 128-bit key sits after magic/version/length/pid/index/nonce (24 bytes) in our descriptor */
	memcpy(forged, d->desc.desc, len);
	forged[24] ^= 0x5a;
	T_EXPECT_ERR(doca_mmap_create_from_export(NULL, forged, len, d->dev, &remote), DOCA_ERROR_NOT_PERMITTED);
	t_say("ok forged key: DOCA_ERROR_NOT_PERMITTED");
	memcpy(forged, d->desc.desc, len);
	forged[0] ^= 0xff;
	T_EXPECT_ERR(doca_mmap_create_from_export(NULL, forged, len, d->dev, &remote), DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_mmap_create_from_export(NULL, d->desc.desc, len - 1, d->dev, &remote),
		     DOCA_ERROR_INVALID_VALUE);
	t_say("ok malformed descriptor: DOCA_ERROR_INVALID_VALUE");
	T_TRUE(remote == NULL);
}

static void scenario_wrong_device(struct dpu *d)
{
	struct doca_mmap *remote = NULL;

	T_EXPECT_ERR(doca_mmap_create_from_export(NULL, d->desc.desc, d->desc.desc_len, d->dev, &remote),
		     DOCA_ERROR_NOT_PERMITTED);
	t_say("ok import through a device that cannot reach the exporter's: DOCA_ERROR_NOT_PERMITTED");
}

static void scenario_out_of_range(struct dpu *d)
{
	struct doca_mmap *remote = import(d);
	struct doca_buf *buf, *src, *dst;

	T_EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(d->inv, remote, remote_addr(d, BUF_LEN - 10), 20, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	T_EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(d->inv, remote, (uint8_t *)remote_addr(d, 0) - 1, 4, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	t_say("ok bufs outside the exported range: DOCA_ERROR_INVALID_VALUE");
	T_OK(doca_buf_inventory_buf_get_by_addr(d->inv, remote, remote_addr(d, 0), 64, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(d->inv, d->local_mmap, d->local, 128, &dst));
	/* data one byte past the buffer: DOCA_SUCCESS (undefined behaviour on DOCA); the copy is refused, not run */
	T_OK(doca_buf_set_data(src, remote_addr(d, 0), 65));
	T_EXPECT_ERR(dpu_copy(d, src, dst), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_dec_refcount(dst, NULL));
	T_OK(doca_buf_set_data(src, remote_addr(d, 0), 64));
	T_OK(doca_buf_inventory_buf_get_by_addr(d->inv, d->local_mmap, d->local, 32, &dst));
	T_EXPECT_ERR(dpu_copy(d, src, dst), DOCA_ERROR_INVALID_VALUE);
	t_say("ok task whose source does not fit its destination: DOCA_ERROR_INVALID_VALUE at completion");
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	T_OK(doca_mmap_destroy(remote));
}

/* Files in DOCA_SIM_DIR named like the registry files of earlier versions, for process pid */
static int registry_files_of(pid_t pid)
{
	char prefix[64];
	const char *path = getenv("DOCA_SIM_DIR");
	DIR *dir;
	struct dirent *ent;
	int count = 0;

	T_TRUE(path != NULL); /* the test runner always gives a private one */
	dir = opendir(path);
	T_TRUE(dir != NULL);
	snprintf(prefix, sizeof(prefix), "export-%d-", (int)pid);
	while ((ent = readdir(dir)) != NULL)
		count += strncmp(ent->d_name, prefix, strlen(prefix)) == 0;
	closedir(dir);
	return count;
}

/* Export (and un-export) a small local buffer: the first export of a process creates its registry */
static void export_something(struct dpu *d)
{
	const void *desc;
	size_t desc_len;
	struct doca_mmap *mmap = t_mmap(d->dev, d->local, 64, DOCA_ACCESS_FLAG_PCI_READ_ONLY);

	T_OK(doca_mmap_export_pci(mmap, d->dev, &desc, &desc_len));
	T_OK(doca_mmap_destroy(mmap));
}

static void scenario_vanished(struct dpu *d)
{
	struct transfer t = out_of_export(d);
	pid_t host = host_pid;
	int status;

	host_says(d, "exit", 0, NULL);
	T_TRUE(waitpid(host_pid, &status, 0) == host_pid);
	host_pid = -1;
	T_EXPECT_ERR(dpu_copy(d, t.src, t.dst), DOCA_ERROR_IO_FAILED);
	t_say("ok copy from a vanished host process: DOCA_ERROR_IO_FAILED");
	transfer_release(&t);
	/* Registries are anonymous memory files: a dead exporter leaves nothing behind in DOCA_SIM_DIR */
	export_something(d);
	T_TRUE(registry_files_of(host) == 0);
	T_TRUE(registry_files_of(getpid()) == 0);
	t_say("ok no registry file in DOCA_SIM_DIR, from the dead host or from an exporter");
}

/* A configuration whose DPU representor is another host function than the exporter's 0000:b1:00.1 */
static void use_wrong_representor_config(void)
{
	char path[600];
	const char *dir = getenv("DOCA_SIM_DIR");
	FILE *f;

	snprintf(path, sizeof(path), "%s/wrong-rep-%d.json", dir != NULL ? dir : "/tmp", (int)getpid());
	f = fopen(path, "w");
	T_TRUE(f != NULL);
	fprintf(f, "{\"host\": {\"devices\": [{\"pci\": \"0000:b1:00.1\"}]},\n"
		   " \"dpu\": {\"devices\": [{\"pci\": \"0000:03:00.1\", \"ibdev\": \"mlx5_1\",\n"
		   "   \"representors\": [{\"pci\": \"0000:b1:00.0\", \"vuid\": \"OTHER\"}]}]}}\n");
	fclose(f);
	setenv("DOCA_SIM_CONFIG", path, 1);
}

/* The exporting child is the host, except when the host is the one copying */
static const char *exporter_side(const char *scenario)
{
	return strcmp(scenario, "host_reads_dpu") == 0 ? "dpu" : "host";
}

static const char *importer_side(const char *scenario)
{
	return strcmp(scenario, "peer_host") == 0 || strcmp(scenario, "host_reads_dpu") == 0 ? "host" : "dpu";
}

static int dpu_main(const char *scenario)
{
	struct dpu d;
	int status = 0;

	memset(&d, 0, sizeof(d));
	/* This process is the importer (the DPU, unless the scenario says otherwise); the exporter is its child */
	setenv("DOCA_SIM_SIDE", importer_side(scenario), 1);
	if (strcmp(scenario, "wrong_device") == 0)
		use_wrong_representor_config();
	host_pid = start_host_role("dma_remote", scenario, exporter_side(scenario), &d.rfd, &d.wfd);
	recv_msg(d.rfd, &d.desc);
	T_TRUE(strcmp(d.desc.cmd, "desc") == 0 && d.desc.len == BUF_LEN);

	dpu_open(&d, calloc(1, BUF_LEN), BUF_LEN, 4, on_copy);

	if (strcmp(scenario, "to_host") == 0)
		scenario_to_host(&d);
	else if (strcmp(scenario, "from_host") == 0)
		scenario_from_host(&d);
	else if (strcmp(scenario, "host_reads_dpu") == 0)
		scenario_host_reads_dpu(&d);
	else if (strcmp(scenario, "ro_write") == 0)
		scenario_ro_write(&d);
	else if (strcmp(scenario, "revoked") == 0)
		scenario_revoked(&d);
	else if (strcmp(scenario, "forged") == 0)
		scenario_forged(&d);
	else if (strcmp(scenario, "wrong_device") == 0 || strcmp(scenario, "peer_host") == 0)
		scenario_wrong_device(&d);
	else if (strcmp(scenario, "out_of_range") == 0)
		scenario_out_of_range(&d);
	else if (strcmp(scenario, "vanished") == 0)
		scenario_vanished(&d);
	else {
		t_say("FAIL unknown scenario %s", scenario);
		return 2;
	}

	if (host_pid > 0) {
		host_says(&d, "done", 0, NULL);
		T_TRUE(waitpid(host_pid, &status, 0) == host_pid);
		T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	dpu_close(&d);
	T_TRUE(doca_sim_live_objects() == 0);
	free(d.local);
	t_say("PASS dma_remote %s", scenario);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--host") == 0)
		return host_main(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 2)
		return dpu_main(argv[1]);
	fprintf(stderr, "usage: dma_remote <to_host|from_host|ro_write|revoked|forged|wrong_device|peer_host|\n"
			"                   host_reads_dpu|out_of_range|vanished>\n");
	return 2;
}
