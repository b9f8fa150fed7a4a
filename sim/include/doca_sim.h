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

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SIM_H_ */
