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

/*
 * A context library's create, destroy and as_ctx, which DOCA declares alike for each (compress, sha, ec, aes_gcm, dma,
 * rdma): doca_<lib>_create(dev, &handle), doca_<lib>_destroy(handle), doca_<lib>_as_ctx(handle). One use expands to
 * DOCA's three prototypes for `lib`, marked `stability` (DOCA_STABLE or DOCA_EXPERIMENTAL) as DOCA marks that library.
 * The header using it declares struct doca_<lib> and includes doca_error.h and doca_types.h first.
 */
#define DOCA_SIM_CTX_DECL(stability, lib) \
	stability doca_error_t doca_##lib##_create(struct doca_dev *dev, struct doca_##lib **lib); \
	stability doca_error_t doca_##lib##_destroy(struct doca_##lib *lib); \
	stability struct doca_ctx *doca_##lib##_as_ctx(struct doca_##lib *lib);

#endif /* DOCA_COMPAT_H_ */
