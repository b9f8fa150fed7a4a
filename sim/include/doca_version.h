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

/* The DOCA release these headers describe (DOCA 3.x spellings; 2.x had DOCA_VER_*) */
#ifdef DOCA_SIM_FLAVOUR_2_7
#define DOCA_VERSION_MAJOR 2
#define DOCA_VERSION_MINOR 7
#define DOCA_VERSION_PATCH 85
#define DOCA_VERSION_STRING "2.7.0085"
#else
#define DOCA_VERSION_MAJOR 3
#define DOCA_VERSION_MINOR 3
#define DOCA_VERSION_PATCH 0
#define DOCA_VERSION_STRING "3.3.0"
#endif

/* Exact version number: the patch counts as is */
#define DOCA_VERSION_CALC_EXACT(major, minor, patch) ((size_t)((major) << 24 | (minor) << 16 | (patch)))
#define DOCA_VERSION_EXACT DOCA_VERSION_CALC_EXACT(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

/* Official version number: the patch is scaled by 1000, as DOCA numbers its official releases */
#define DOCA_VERSION_CALC(major, minor, patch) ((size_t)((major) << 24 | (minor) << 16 | ((patch) * 1000)))
#define DOCA_VERSION_OFFICIAL DOCA_VERSION_CALC(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

/* Compile-time comparisons of a version with the official one these headers describe */
#define DOCA_VERSION_EQ_CURRENT(major, minor, patch) (DOCA_VERSION_CALC(major, minor, patch) == DOCA_VERSION_OFFICIAL)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch) (DOCA_VERSION_CALC(major, minor, patch) <= DOCA_VERSION_OFFICIAL)

/* Version the program was compiled against */
static inline const char *doca_version(void)
{
	return DOCA_VERSION_STRING;
}

/* Version of the library loaded at run time */
DOCA_EXPERIMENTAL
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
