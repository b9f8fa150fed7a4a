/*
 * Software DOCA device: symbol export and API-stability markers (same macro names as DOCA's doca_compat.h).
 * Libraries are built with -fvisibility=hidden; every function declared with one of these markers is exported.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <doca_flavour.h>

#if defined(__GNUC__) || defined(__clang__)
#define DOCA_EXPORTED __attribute__((visibility("default")))
#define DOCA_DEPRECATED __attribute__((deprecated))
#else
#define DOCA_EXPORTED
#define DOCA_DEPRECATED
#endif

/* Part of the stable API */
#define DOCA_STABLE DOCA_EXPORTED
/* Part of the API that may still change between releases */
#define DOCA_EXPERIMENTAL DOCA_EXPORTED

#endif /* DOCA_COMPAT_H_ */
