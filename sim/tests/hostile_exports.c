/*
 * A hostile same-user process against the software device's exports (issue 9, docs/FAULTS.md). This program is the
 * DPU-side importer and the attacker at once; it starts copies of itself as host-side processes: a "victim" that never
 * exports anything but holds a secret buffer, and an "exporter" that exports a buffer honestly. One scenario per run:
 *
 *   never_exported  descriptors naming the victim (its real start time, every fd number 0..31, the secret's range),
 *                   also with a planted registry file in DOCA_SIM_DIR and a crafted registry memfd the victim merely
 *                   holds (passed to it, not mapped by it)                           -> all DOCA_ERROR_NOT_PERMITTED
 *   self_code       descriptors naming this very process with a range over its program code, before and after it
 *                   exported something; the genuine own descriptor still imports and copies
 *   replay_killed   a genuine descriptor replayed after its exporter was SIGKILLed; the same descriptor pointed at a
 *                   live exporter's pid (pid reuse, simulated), with the old and with a forged matching start time;
 *                   a DMA through a map imported before the kill                     -> refused, no byte touched
 *   tamper          another process cannot write the exporter's registry (sealed memfd, mode 0400)
 *   fork            a forked child's export is its own; its destroy of the inherited mmap keeps the parent's export
 *
 * The victim and the exporter check their secret/pattern bytes at the end: no byte outside a live export changed.
 * Usage: hostile_exports <scenario>
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_dma.h>

#include "dma_test_util.h"

#define SECRET_LEN 4096
#define SECRET_SEED 7
#define EXPORT_LEN 8192
#define EXPORT_SEED 9
#define HOST_PCI "0000:b1:00.1"

/* The descriptor's layout (sim/src/common/registry.h, struct sim_export_desc, version 2), for forging */
struct desc_v2 {
	uint32_t magic;
	uint16_t version;
	uint16_t length;
	int32_t pid;
	uint32_t index;
	uint64_t nonce;
	uint64_t start_time;
	uint8_t key[16];
	uint64_t base;
	uint64_t len;
	uint32_t permissions;
	int32_t registry_fd;
	char pci[16];
};

/* What a host-side child tells the attacker when it is ready */
struct hello {
	pid_t pid;
	uint64_t addr;
	uint64_t len;
	uint32_t desc_len;
	uint8_t desc[256];
};

struct child {
	pid_t pid;
	int rfd, wfd; /* from / to the child */
	struct hello hello;
};

static void read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		T_TRUE(n > 0);
		got += (size_t)n;
	}
}

static uint64_t start_time_of(pid_t pid)
{
	char path[64], text[1024];
	unsigned long long ticks = 0;
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	T_TRUE(fd >= 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	T_TRUE(n > 0);
	text[n] = '\0';
	p = strrchr(text, ')') + 1;
	for (int field = 3; field < 22; field++)
		p = strchr(p + 1, ' ');
	T_TRUE(sscanf(p, " %llu", &ticks) == 1);
	return ticks;
}

/* ---------------------------------------------------------------- host-side children */

/* Both roles: say hello, then obey one-byte commands: 'v' verify (answers 1/0), 'q' quit */
static int child_main(bool exporter, int rfd, int wfd)
{
	uint8_t *buf = aligned_alloc(4096, EXPORT_LEN);
	size_t len = exporter ? EXPORT_LEN : SECRET_LEN;
	uint32_t seed = exporter ? EXPORT_SEED : SECRET_SEED;
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap = NULL;
	struct hello h;
	char cmd;

	T_TRUE(buf != NULL);
	t_fill(buf, len, seed);
	memset(&h, 0, sizeof(h));
	h.pid = getpid();
	h.addr = (uint64_t)(uintptr_t)buf;
	h.len = len;
	if (exporter) {
		const void *desc;
		size_t desc_len;

		dev = t_open_first_dev();
		mmap = t_mmap(dev, buf, len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE);
		T_OK(doca_mmap_export_pci(mmap, dev, &desc, &desc_len));
		T_TRUE(desc_len <= sizeof(h.desc));
		memcpy(h.desc, desc, desc_len);
		h.desc_len = (uint32_t)desc_len;
	}
	T_TRUE(write(wfd, &h, sizeof(h)) == (ssize_t)sizeof(h));
	while (read(rfd, &cmd, 1) == 1) {
		if (cmd == 'v') {
			char ok = (char)t_check(buf, len, seed);

			T_TRUE(write(wfd, &ok, 1) == 1);
		} else if (cmd == 'q') {
			break;
		}
	}
	if (mmap != NULL) {
		T_OK(doca_mmap_destroy(mmap));
		T_OK(doca_dev_close(dev));
	}
	return 0;
}

/* Start a host-side copy of this program; keep_fd (or -1) is inherited by it at the same number */
static void spawn_child(struct child *c, bool exporter, int keep_fd)
{
	int to_child[2], from_child[2];

	T_TRUE(pipe2(to_child, O_CLOEXEC) == 0 && pipe2(from_child, O_CLOEXEC) == 0);
	c->pid = fork();
	T_TRUE(c->pid >= 0);
	if (c->pid == 0) {
		char r[16], w[16];
		int rfd = dup(to_child[0]), wfd = dup(from_child[1]); /* without O_CLOEXEC */

		if (keep_fd >= 0)
			fcntl(keep_fd, F_SETFD, 0);
		snprintf(r, sizeof(r), "%d", rfd);
		snprintf(w, sizeof(w), "%d", wfd);
		setenv("DOCA_SIM_SIDE", "host", 1);
		execl("/proc/self/exe", "hostile_exports", exporter ? "--exporter" : "--victim", r, w, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	c->wfd = to_child[1];
	c->rfd = from_child[0];
	read_full(c->rfd, &c->hello, sizeof(c->hello));
}

static bool child_intact(struct child *c)
{
	char ok = 0;

	T_TRUE(write(c->wfd, "v", 1) == 1);
	read_full(c->rfd, &ok, 1);
	return ok == 1;
}

static void stop_child(struct child *c)
{
	int status;

	T_TRUE(write(c->wfd, "q", 1) == 1);
	T_TRUE(waitpid(c->pid, &status, 0) == c->pid);
	T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(c->wfd);
	close(c->rfd);
}

/* ---------------------------------------------------------------- the DPU-side attacker */

/* Copy len bytes from src (an imported map at addr) into our local buffer; the task's status */
static doca_error_t copy_from(struct dpu *d, struct doca_mmap *src_map, uint64_t addr, size_t len)
{
	struct doca_buf *src, *dst;
	doca_error_t status;

	T_OK(doca_buf_inventory_buf_get_by_data(d->inv, src_map, (void *)(uintptr_t)addr, len, &src));
	T_OK(doca_buf_inventory_buf_get_by_addr(d->inv, d->local_mmap, d->local, EXPORT_LEN, &dst));
	status = dpu_copy(d, src, dst);
	T_OK(doca_buf_dec_refcount(src, NULL));
	T_OK(doca_buf_dec_refcount(dst, NULL));
	return status;
}

/* Import must be refused with NOT_PERMITTED (and never yield a map) */
static void expect_refused(struct dpu *d, const struct desc_v2 *desc, const char *what)
{
	struct doca_mmap *m = NULL;
	doca_error_t err = doca_mmap_create_from_export(NULL, desc, sizeof(*desc), d->dev, &m);

	if (err != DOCA_ERROR_NOT_PERMITTED) {
		t_say("FAIL %s: import returned %s, expected DOCA_ERROR_NOT_PERMITTED", what, doca_error_get_name(err));
		exit(1);
	}
	T_TRUE(m == NULL);
}

static struct desc_v2 forged_for(const struct child *victim)
{
	struct desc_v2 f;

	memset(&f, 0, sizeof(f));
	f.magic = 0x58455344u;
	f.version = 2;
	f.length = sizeof(f);
	f.pid = victim->pid;
	f.start_time = start_time_of(victim->pid);
	T_TRUE(getrandom(&f.nonce, sizeof(f.nonce), 0) == sizeof(f.nonce));
	T_TRUE(getrandom(f.key, sizeof(f.key), 0) == sizeof(f.key));
	f.base = victim->hello.addr;
	f.len = victim->hello.len;
	f.permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE;
	memcpy(f.pci, HOST_PCI, strlen(HOST_PCI));
	return f;
}

/* A registry as the software device writes it (header + entry 0 over [base, base+len) with f's key) */
static void write_registry(int fd, const struct desc_v2 *f, uint32_t version)
{
	uint8_t *image = calloc(1, 32 + 4096 * 104);
	uint32_t u32;

	T_TRUE(image != NULL);
	u32 = 0x47455253u;
	memcpy(image, &u32, 4);
	memcpy(image + 4, &version, 4);
	memcpy(image + 8, &f->pid, 4);
	u32 = 4096;
	memcpy(image + 12, &u32, 4);
	memcpy(image + 16, &f->nonce, 8);
	memcpy(image + 24, &f->start_time, 8);
	/* entry 0 at 32: live, permissions, base, len, key, pci[0] */
	u32 = 1;
	memcpy(image + 32, &u32, 4);
	memcpy(image + 36, &f->permissions, 4);
	memcpy(image + 40, &f->base, 8);
	memcpy(image + 48, &f->len, 8);
	memcpy(image + 56, f->key, 16);
	memcpy(image + 72, HOST_PCI, strlen(HOST_PCI));
	T_TRUE(write(fd, image, 32 + 4096 * 104) == 32 + 4096 * 104);
	free(image);
}

static void scenario_never_exported(struct dpu *d)
{
	struct child victim;
	struct desc_v2 f;
	char path[700];
	int planted;

	/* A crafted registry memfd, named like ours, sealed like ours, which the victim merely inherits (as it would
	 * receive one over a socket): holding a file proves nothing, only the exporter maps its registry */
	planted = memfd_create("doca-sim-registry", MFD_ALLOW_SEALING);
	T_TRUE(planted >= 0);
	spawn_child(&victim, false, planted);
	f = forged_for(&victim);
	write_registry(planted, &f, 2);
	T_TRUE(fchmod(planted, 0400) == 0);
	T_TRUE(fcntl(planted, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
	for (int fd = 0; fd < 32; fd++) {
		f.registry_fd = fd;
		expect_refused(d, &f, "descriptor naming a process that never exported");
	}
	t_say("ok descriptors naming a process that never exported (fds 0..31, one a planted registry memfd): "
	      "DOCA_ERROR_NOT_PERMITTED");
	/* Registry files of earlier versions in DOCA_SIM_DIR: a file that merely exists proves nothing */
	for (uint32_t version = 1; version <= 2; version++) {
		int fd;

		snprintf(path, sizeof(path), "%s/export-%d-%016llx.reg", getenv("DOCA_SIM_DIR"), (int)victim.pid,
			 (unsigned long long)f.nonce);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		T_TRUE(fd >= 0);
		write_registry(fd, &f, version);
		close(fd);
		f.registry_fd = planted;
		expect_refused(d, &f, "descriptor backed by a planted registry file");
		unlink(path);
	}
	t_say("ok planted registry files in DOCA_SIM_DIR: DOCA_ERROR_NOT_PERMITTED");
	T_TRUE(child_intact(&victim));
	t_say("ok the victim's memory is unchanged");
	stop_child(&victim);
	close(planted);
}

static void scenario_self_code(struct dpu *d)
{
	struct desc_v2 f, genuine;
	struct child self = {.pid = getpid(), .hello = {.addr = (uint64_t)(uintptr_t)&scenario_self_code, .len = 4096}};
	struct doca_mmap *exp, *imp;
	uint8_t *mine = calloc(1, EXPORT_LEN);
	const void *desc;
	size_t desc_len;

	/* Our own code, writable: the crafted descriptor that made a DPU memcpy over its program */
	f = forged_for(&self);
	f.base &= ~(uint64_t)4095;
	for (int fd = 0; fd < 32; fd++) {
		f.registry_fd = fd;
		expect_refused(d, &f, "descriptor naming this process before it exported");
	}
	t_say("ok descriptors naming this process, which exported nothing: DOCA_ERROR_NOT_PERMITTED");
	/* Now export a small buffer: the registry exists, and the forgeries borrow its identity */
	T_TRUE(mine != NULL);
	t_fill(mine, EXPORT_LEN, EXPORT_SEED);
	exp = t_mmap(d->dev, mine, EXPORT_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	T_OK(doca_mmap_export_pci(exp, d->dev, &desc, &desc_len));
	T_TRUE(desc_len == sizeof(genuine));
	memcpy(&genuine, desc, sizeof(genuine));
	f = genuine;
	f.base = (uint64_t)(uintptr_t)&scenario_self_code & ~(uint64_t)4095;
	f.len = 4096;
	expect_refused(d, &f, "own identity and key, range over the code");
	f = genuine;
	f.len = genuine.len + 4096;
	expect_refused(d, &f, "own export grown by a page");
	f = genuine;
	f.permissions |= DOCA_ACCESS_FLAG_PCI_READ_WRITE;
	f.permissions &= ~(uint32_t)DOCA_ACCESS_FLAG_PCI_READ_ONLY;
	expect_refused(d, &f, "own read-only export made writable");
	f = genuine;
	f.index = 7;
	expect_refused(d, &f, "own identity, an unused entry");
	f = genuine;
	f.key[0] ^= 1;
	expect_refused(d, &f, "own export, wrong key");
	t_say("ok descriptors naming this process with its code as range or a changed export: DOCA_ERROR_NOT_PERMITTED");
	/* The genuine one still works: the checks refuse forgeries, not imports */
	T_OK(doca_mmap_create_from_export(NULL, &genuine, sizeof(genuine), d->dev, &imp));
	T_OK(copy_from(d, imp, genuine.base, EXPORT_LEN));
	T_TRUE(t_check(d->local, EXPORT_LEN, EXPORT_SEED));
	T_OK(doca_mmap_destroy(imp));
	t_say("ok the genuine own descriptor imports and copies");
	T_OK(doca_mmap_destroy(exp));
	expect_refused(d, &genuine, "own descriptor after its mmap was destroyed");
	t_say("ok own descriptor replayed after revocation: DOCA_ERROR_NOT_PERMITTED");
	free(mine);
}

static void scenario_replay_killed(struct dpu *d)
{
	struct child a, b;
	struct desc_v2 da, db, f;
	struct doca_mmap *imp;
	int status;

	spawn_child(&a, true, -1);
	T_TRUE(a.hello.desc_len == sizeof(da));
	memcpy(&da, a.hello.desc, sizeof(da));
	T_OK(doca_mmap_create_from_export(NULL, &da, sizeof(da), d->dev, &imp));
	T_OK(copy_from(d, imp, da.base, EXPORT_LEN));
	T_TRUE(t_check(d->local, EXPORT_LEN, EXPORT_SEED));
	t_say("ok the genuine descriptor imports and copies");
	T_TRUE(kill(a.pid, SIGKILL) == 0);
	T_TRUE(waitpid(a.pid, &status, 0) == a.pid);
	close(a.rfd);
	close(a.wfd);
	expect_refused(d, &da, "descriptor replayed after its exporter was SIGKILLed");
	T_EXPECT_ERR(copy_from(d, imp, da.base, EXPORT_LEN), DOCA_ERROR_IO_FAILED);
	T_OK(doca_mmap_destroy(imp));
	t_say("ok replay after SIGKILL refused; a map imported before the kill fails with DOCA_ERROR_IO_FAILED");

	/* Pid reuse, simulated: the dead exporter's pid now names a live exporter b */
	spawn_child(&b, true, -1);
	memcpy(&db, b.hello.desc, sizeof(db));
	f = da;
	f.pid = b.pid;
	f.base = db.base;
	expect_refused(d, &f, "replay naming a reused pid (old start time)");
	f.start_time = db.start_time; /* the forger reads /proc/PID/stat too */
	expect_refused(d, &f, "replay naming a reused pid (matching start time)");
	f.registry_fd = db.registry_fd;
	f.index = db.index;
	expect_refused(d, &f, "replay naming a reused pid (its registry fd and entry, the old secrets)");
	/* A live exporter's descriptor with a stale start time: the pid is not that process any more */
	f = db;
	f.start_time--;
	expect_refused(d, &f, "live exporter's descriptor with another start time");
	T_TRUE(child_intact(&b));
	t_say("ok replays naming a reused pid (old or forged start time, old secrets): DOCA_ERROR_NOT_PERMITTED, "
	      "its memory unchanged");
	stop_child(&b);
}

static void scenario_tamper(void)
{
	struct child b;
	struct desc_v2 db;
	char path[64];
	int fd;

	spawn_child(&b, true, -1);
	memcpy(&db, b.hello.desc, sizeof(db));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)b.pid, (int)db.registry_fd);
	fd = open(path, O_RDWR);
	if (fd < 0) {
		T_TRUE(errno == EACCES);
		t_say("ok the exporter's registry cannot be opened for writing by another process (mode 0400)");
	} else {
		/* root passes the mode check: the seals still forbid every new way of writing */
		void *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		T_TRUE(w == MAP_FAILED);
		T_TRUE(pwrite(fd, "x", 1, 0) < 0);
		T_TRUE(ftruncate(fd, 0) != 0);
		close(fd);
		t_say("ok the exporter's registry cannot be written, mapped writable or truncated by another process "
		      "(sealed)");
	}
	fd = open(path, O_RDONLY);
	T_TRUE(fd >= 0);
	T_TRUE(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	close(fd);
	T_TRUE(child_intact(&b));
	stop_child(&b);
}

/* A forked child that destroys an mmap its parent exported must not revoke the parent's export; exporting it again
 * gives the child a descriptor of its own registry */
static void scenario_fork(struct dpu *d)
{
	uint8_t *mine = calloc(1, EXPORT_LEN);
	struct doca_mmap *exp, *imp;
	struct desc_v2 genuine;
	const void *desc;
	size_t desc_len;
	int up[2], status;
	pid_t pid;
	char verdict = 0;

	T_TRUE(mine != NULL && pipe(up) == 0);
	t_fill(mine, EXPORT_LEN, EXPORT_SEED);
	exp = t_mmap(d->dev, mine, EXPORT_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	T_OK(doca_mmap_export_pci(exp, d->dev, &desc, &desc_len));
	memcpy(&genuine, desc, sizeof(genuine));
	pid = fork();
	T_TRUE(pid >= 0);
	if (pid == 0) {
		struct desc_v2 childs;
		struct doca_mmap *own;

		close(up[0]);
		/* the child's copy of the parent's export: exported afresh, from the child's own registry */
		T_OK(doca_mmap_export_pci(exp, d->dev, &desc, &desc_len));
		memcpy(&childs, desc, sizeof(childs));
		T_TRUE(childs.pid == getpid() && childs.nonce != genuine.nonce);
		T_OK(doca_mmap_create_from_export(NULL, &childs, sizeof(childs), d->dev, &own));
		T_OK(doca_mmap_destroy(own));
		T_OK(doca_mmap_destroy(exp));
		verdict = 1;
		T_TRUE(write(up[1], &verdict, 1) == 1);
		_exit(0);
	}
	close(up[1]);
	T_TRUE(read(up[0], &verdict, 1) == 1 && verdict == 1);
	T_TRUE(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(up[0]);
	t_say("ok a forked child exports its inherited mmap from its own registry");
	T_OK(doca_mmap_create_from_export(NULL, &genuine, sizeof(genuine), d->dev, &imp));
	T_OK(copy_from(d, imp, genuine.base, EXPORT_LEN));
	T_TRUE(t_check(d->local, EXPORT_LEN, EXPORT_SEED));
	T_OK(doca_mmap_destroy(imp));
	T_OK(doca_mmap_destroy(exp));
	expect_refused(d, &genuine, "own descriptor after its mmap was destroyed");
	t_say("ok the child's destroy of its inherited copy left the parent's export live");
	free(mine);
}

int main(int argc, char **argv)
{
	struct dpu d;

	if (argc == 4 && (strcmp(argv[1], "--victim") == 0 || strcmp(argv[1], "--exporter") == 0))
		return child_main(strcmp(argv[1], "--exporter") == 0, atoi(argv[2]), atoi(argv[3]));
	if (argc != 2) {
		fprintf(stderr, "usage: hostile_exports <never_exported|self_code|replay_killed|tamper|fork>\n");
		return 2;
	}
	memset(&d, 0, sizeof(d));
	dpu_open(&d, calloc(1, EXPORT_LEN), EXPORT_LEN, 8, on_copy);
	if (strcmp(argv[1], "never_exported") == 0)
		scenario_never_exported(&d);
	else if (strcmp(argv[1], "self_code") == 0)
		scenario_self_code(&d);
	else if (strcmp(argv[1], "replay_killed") == 0)
		scenario_replay_killed(&d);
	else if (strcmp(argv[1], "tamper") == 0)
		scenario_tamper();
	else if (strcmp(argv[1], "fork") == 0)
		scenario_fork(&d);
	else {
		fprintf(stderr, "unknown scenario %s\n", argv[1]);
		return 2;
	}
	dpu_close(&d);
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok no live objects left");
	t_say("PASS hostile_exports %s", argv[1]);
	return 0;
}
