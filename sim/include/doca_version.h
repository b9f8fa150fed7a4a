/*
 * Software DOCA device: version of the DOCA API these headers describe.
 * doca_version() is inline (the version compiled against); doca_version_runtime() is exported by libdoca_common.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include <doca_compat.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_VER_MAJOR 3
#define DOCA_VER_MINOR 3
#define DOCA_VER_PATCH 0
#define DOCA_VER_STRING "3.3.0"

/* One number per version, ordered like the versions: DOCA_VERSION_NUM(3, 3, 0) */
#define DOCA_VERSION_NUM(major, minor, patch) ((size_t)((major) << 24 | (minor) << 16 | (patch)))
#define DOCA_CURRENT_VERSION_NUM DOCA_VERSION_NUM(DOCA_VER_MAJOR, DOCA_VER_MINOR, DOCA_VER_PATCH)

/* Compile-time comparisons of a version with the one these headers describe */
#define DOCA_VERSION_EQ_CURRENT(major, minor, patch) (DOCA_VERSION_NUM(major, minor, patch) == DOCA_CURRENT_VERSION_NUM)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch) (DOCA_VERSION_NUM(major, minor, patch) <= DOCA_CURRENT_VERSION_NUM)

/* Version the program was compiled against */
static inline const char *doca_version(void)
{
	return DOCA_VER_STRING;
}

/* Version of the library loaded at run time */
DOCA_STABLE
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
