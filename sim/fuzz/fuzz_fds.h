/*
 * The descriptor-leak check of the frame fuzzers (fuzz_comch_frames.c, fuzz_rdma_frames.c): how many descriptors
 * this process holds, counted in /proc/self/fd, before the sessions and after they closed.
 */
#ifndef FUZZ_FDS_H_
#define FUZZ_FDS_H_

#include <dirent.h>

/* Open descriptors of this process (the directory's own included), or -1 when /proc cannot be read */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#endif
