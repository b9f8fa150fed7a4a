/*
 * Diagnostics of the software DOCA device (not part of DOCA: real DOCA libraries do not export these, so callers must
 * treat them as optional symbols).
 */
#ifndef DOCA_SIM_H_
#define DOCA_SIM_H_

#include <stdint.h>

#include <doca_compat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Live handles of every kind (device lists, devices, mmaps, inventories, bufs, pes, contexts, tasks, connections):
 * 0 once a program has released everything. */
DOCA_EXPERIMENTAL
uint64_t doca_sim_live_objects(void);

/* One line: side, devices and live counts per kind. The string is static; valid until the next call. */
DOCA_EXPERIMENTAL
const char *doca_sim_describe(void);

/* Why libdoca_compress reports tasks NOT_SUPPORTED: NULL when zlib and liblz4 are both loaded, else one line naming
 * the missing library and its Debian package (zlib1g, liblz4-1). Exported by libdoca_compress. */
DOCA_EXPERIMENTAL
const char *doca_sim_compress_backend_missing(void);

/* Why libdoca_sha reports tasks NOT_SUPPORTED: NULL when libcrypto.so.3 is loaded, else one line naming the Debian
 * package (libssl3). Exported by libdoca_sha. */
DOCA_EXPERIMENTAL
const char *doca_sim_sha_backend_missing(void);

/* libdoca_aes_gcm: NULL when AES-GCM can run, else one line saying why not (OpenSSL's libcrypto.so.3, Debian
 * package libssl3, is loaded at run time; DOCA_SIM_LIBCRYPTO names another file). Exported by libdoca_aes_gcm only. */
DOCA_EXPERIMENTAL
const char *doca_sim_aes_gcm_status(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SIM_H_ */
