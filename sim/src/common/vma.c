/*
 * Mapping identity (vma.h): what the kernel says covers an address of another process, through a /proc/PID/maps
 * descriptor. Linux >= 6.11 answers one PROCMAP_QUERY ioctl per mapping (a few hundred nanoseconds); older kernels and
 * emulators are read the whole text (cost grows with the number of mappings of the process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "vma.h"

/* PROCMAP_QUERY (include/uapi/linux/fs.h, Linux 6.11); declared here so older headers build */
struct sim_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define SIM_PROCMAP_QUERY _IOWR('f', 17, struct sim_procmap_query)
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#define OUR_NAME "[anon:" SIM_VMA_EXPORT_NAME "]"

static atomic_int no_query_ioctl; /* set once the kernel (or an emulator) turned the ioctl down */

int sim_vma_open_maps(pid_t pid)
{
	char path[32];
	int proc, fd;

	snprintf(path, sizeof(path), "%d/maps", (int)pid);
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return -1;
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	close(proc);
	return fd;
}

static int query_ioctl(int fd, uint64_t addr, struct sim_vma_id *out)
{
	struct sim_procmap_query q;
	char name[64];

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_addr = addr;
	q.vma_name_addr = (uint64_t)(uintptr_t)name;
	q.vma_name_size = sizeof(name);
	name[0] = '\0';
	if (ioctl(fd, SIM_PROCMAP_QUERY, &q) != 0) {
		if (errno != ENAMETOOLONG)
			return -errno;
		/* a file path longer than our buffer: not our name; ask again without it */
		q.vma_name_addr = 0;
		q.vma_name_size = 0;
		name[0] = '\0';
		if (ioctl(fd, SIM_PROCMAP_QUERY, &q) != 0)
			return -errno;
	}
	out->start = q.vma_start;
	out->end = q.vma_end;
	out->inode = q.inode;
	out->offset = q.inode != 0 ? q.vma_offset : 0;
	out->dev_major = q.dev_major;
	out->dev_minor = q.dev_minor;
	out->prot = (uint32_t)q.vma_flags & (SIM_VMA_READ | SIM_VMA_WRITE | SIM_VMA_EXEC | SIM_VMA_SHARED);
	if (q.inode == 0 && q.vma_name_size > 0 && strcmp(name, OUR_NAME) == 0)
		out->prot |= SIM_VMA_NAMED;
	out->pad = 0;
	return 0;
}

/* The whole text of the maps file; NULL with *len 0 when the address space is gone */
char *sim_vma_maps_text(int fd, size_t *len)
{
	size_t cap = 16384, got = 0;
	char *text = malloc(cap);

	while (text != NULL) {
		ssize_t n = pread(fd, text + got, cap - got - 1, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (cap - got < 4096) {
			char *bigger = realloc(text, cap * 2);

			if (bigger == NULL) {
				free(text);
				return NULL;
			}
			text = bigger;
			cap *= 2;
		}
	}
	if (text != NULL && got == 0) {
		free(text);
		text = NULL;
	}
	if (text != NULL)
		text[got] = '\0';
	*len = got;
	return text;
}

static int query_text(int fd, uint64_t addr, struct sim_vma_id *out)
{
	size_t len;
	char *text = sim_vma_maps_text(fd, &len);
	int rc = -ENOENT;

	if (text == NULL)
		return len == 0 ? -ESRCH : -ENOMEM;
	for (char *line = text; line != NULL && *line != '\0';) {
		char *next = strchr(line, '\n');
		unsigned long long start, end, offset, inode;
		unsigned int major_no, minor_no;
		char perms[8];
		int name_at = 0;

		if (next != NULL)
			*next++ = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major_no, &minor_no,
			   &inode, &name_at) == 7 &&
		    start <= addr && addr < end && strlen(perms) == 4) {
			out->start = start;
			out->end = end;
			out->inode = inode;
			out->offset = inode != 0 ? offset : 0;
			out->dev_major = major_no;
			out->dev_minor = minor_no;
			out->prot = (perms[0] == 'r' ? SIM_VMA_READ : 0) | (perms[1] == 'w' ? SIM_VMA_WRITE : 0) |
				    (perms[2] == 'x' ? SIM_VMA_EXEC : 0) | (perms[3] == 's' ? SIM_VMA_SHARED : 0);
			if (inode == 0 && name_at > 0 && strcmp(line + name_at, OUR_NAME) == 0)
				out->prot |= SIM_VMA_NAMED;
			out->pad = 0;
			rc = 0;
			break;
		}
		line = next;
	}
	free(text);
	return rc;
}

/* The mapping covering addr: 0, -ENOENT (nothing mapped there), -ESRCH (the address space is gone), other -errno */
static int query(int fd, uint64_t addr, struct sim_vma_id *out)
{
	if (!atomic_load_explicit(&no_query_ioctl, memory_order_relaxed)) {
		int rc = query_ioctl(fd, addr, out);

		if (rc != -ENOTTY && rc != -ENOSYS && rc != -EINVAL && rc != -EOPNOTSUPP)
			return rc;
		atomic_store_explicit(&no_query_ioctl, 1, memory_order_relaxed);
	}
	return query_text(fd, addr, out);
}

void sim_vma_name_own(int maps_fd, uint64_t base, uint64_t len)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t cur = base & ~(page - 1), end = base + len;

	while (cur < end) {
		struct sim_vma_id v;
		uint64_t to;

		if (query(maps_fd, cur, &v) != 0)
			return;
		to = v.end < end ? v.end : (end + page - 1) & ~(page - 1);
		if (to > v.end)
			to = v.end;
		/* private anonymous memory only (file and shared memory have an identity already); failure (a kernel
		 * without CONFIG_ANON_VMA_NAME) leaves the memory unnamed */
		if (v.inode == 0 && !(v.prot & SIM_VMA_SHARED))
			(void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)cur, (unsigned long)(to - cur),
				    (unsigned long)SIM_VMA_EXPORT_NAME);
		cur = to;
	}
}

doca_error_t sim_vma_record(int maps_fd, uint64_t base, uint64_t len, struct sim_vma_id *out, uint32_t max,
			    uint32_t *count)
{
	uint64_t cur = base, end = base + len;
	uint32_t n = 0;

	while (cur < end) {
		struct sim_vma_id v;
		int rc = query(maps_fd, cur, &v);

		if (rc != 0)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "export: 0x%llx is not mapped (%s)",
					(unsigned long long)cur, strerror(-rc));
		if (n == max)
			return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "export: the range spans more than %u mappings", max);
		out[n++] = v;
		cur = v.end;
	}
	*count = n;
	return DOCA_SUCCESS;
}

static bool same_mapping(const struct sim_vma_id *now, const struct sim_vma_id *rec, uint64_t at)
{
	if (now->prot != rec->prot || now->inode != rec->inode || now->dev_major != rec->dev_major ||
	    now->dev_minor != rec->dev_minor)
		return false;
	/* the same file page at the same address (a mapping moved or remapped at another offset is not) */
	return now->inode == 0 || now->offset + (at - now->start) == rec->offset + (at - rec->start);
}

doca_error_t sim_vma_check(int maps_fd, const struct sim_vma_id *rec, uint32_t count, uint64_t addr, uint64_t len,
			   uint32_t need)
{
	uint64_t cur = addr, end = addr + len;
	uint32_t i = 0;

	while (cur < end) {
		struct sim_vma_id now;
		uint64_t next;
		int rc;

		while (i < count && rec[i].end <= cur)
			i++;
		if (i == count || rec[i].start > cur)
			return sim_fail(DOCA_ERROR_NOT_PERMITTED, "remote 0x%llx was not registered", (unsigned long long)cur);
		rc = query(maps_fd, cur, &now);
		if (rc == -ESRCH || rc == -ENOMEM)
			return sim_fail(DOCA_ERROR_IO_FAILED, "the exporting process image is gone (exit or exec)");
		if (rc != 0)
			return sim_fail(DOCA_ERROR_NOT_PERMITTED, "remote 0x%llx is no longer mapped", (unsigned long long)cur);
		if (!same_mapping(&now, &rec[i], cur))
			return sim_fail(DOCA_ERROR_NOT_PERMITTED,
					"remote 0x%llx is no longer the registered memory (remapped or protection changed)",
					(unsigned long long)cur);
		if ((now.prot & need) != need)
			return sim_fail(DOCA_ERROR_NOT_PERMITTED, "remote 0x%llx is not %s", (unsigned long long)cur,
					need & SIM_VMA_WRITE ? "writable" : "readable");
		next = now.end < rec[i].end ? now.end : rec[i].end;
		cur = next;
	}
	return DOCA_SUCCESS;
}
