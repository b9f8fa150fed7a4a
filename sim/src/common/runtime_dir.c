/*
 * The runtime folder shared by host and DPU processes (Comch sockets): DOCA_SIM_DIR, else $XDG_RUNTIME_DIR/doca-sim
 * when $XDG_RUNTIME_DIR is absolute (the XDG spec says a relative value is ignored: two processes started from
 * different folders would otherwise meet in different places), else /tmp/doca-sim-<uid>. Whoever controls that folder can stand in for a Comch server and receive what a host sends
 * (export descriptors among it), so it must be this user's alone: created with mode 0700, and an existing one refused
 * when it is a symbolic link, is owned by another uid or is writable by group or others. See docs/FAULTS.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static char dir[512];
static bool dir_ok;
static pthread_once_t dir_once = PTHREAD_ONCE_INIT;

/* Why the existing folder dir must not be used, or NULL when it is ours alone */
static const char *refusal(char *why, size_t cap)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if ((errno == ELOOP || errno == ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			snprintf(why, cap, "it is a symbolic link");
		else
			snprintf(why, cap, "cannot open it: %s", strerror(errno));
		return why;
	}
	if (fstat(fd, &st) != 0)
		snprintf(why, cap, "cannot stat it: %s", strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, cap, "it is not a directory");
	else if (st.st_uid != geteuid())
		snprintf(why, cap, "it is owned by uid %u, not by this process's uid %u", (unsigned)st.st_uid,
			 (unsigned)geteuid());
	else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		snprintf(why, cap, "it is writable by %s (mode %04o; chmod 700 it)",
			 (st.st_mode & S_IWOTH) != 0 ? "others" : "its group", (unsigned)(st.st_mode & 07777));
	else
		why = NULL;
	close(fd);
	return why;
}

static void choose_and_check(void)
{
	const char *env = getenv("DOCA_SIM_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *source = "DOCA_SIM_DIR";
	char why[160];
	int n;

	if (env != NULL && *env != '\0') {
		n = snprintf(dir, sizeof(dir), "%s", env);
	} else if (xdg != NULL && xdg[0] == '/') {
		n = snprintf(dir, sizeof(dir), "%s/doca-sim", xdg);
		source = "the runtime folder ($XDG_RUNTIME_DIR/doca-sim)";
	} else {
		n = snprintf(dir, sizeof(dir), "/tmp/doca-sim-%u", (unsigned)geteuid());
		source = "the runtime folder (/tmp fallback)";
	}
	if (n < 0 || (size_t)n >= sizeof(dir)) {
		sim_log(SIM_LOG_ERROR, "%s is too long (at most %zu bytes)", source, sizeof(dir) - 1);
		return;
	}
	/* mkdir never follows a symbolic link at the last component: EEXIST, then refusal() looks at what is there */
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		sim_log(SIM_LOG_ERROR, "%s %s: cannot create it: %s", source, dir, strerror(errno));
		return;
	}
	if (refusal(why, sizeof(why)) != NULL) {
		sim_log(SIM_LOG_ERROR, "%s %s refused: %s", source, dir, why);
		return;
	}
	dir_ok = true;
}

const char *sim_dir(void)
{
	pthread_once(&dir_once, choose_and_check);
	return dir_ok ? dir : NULL;
}
