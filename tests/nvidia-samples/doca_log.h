/*
 * Test harness only (tests/sim-nvidia-rdma.test.ts): a stand-in for DOCA's logging header, enough for NVIDIA's
 * samples to build unmodified against the software device. Every line goes to stderr as "[LEVEL][source] text".
 * Not part of the software device: real DOCA ships doca_log with libdoca_common.
 */
#ifndef HARNESS_DOCA_LOG_H_
#define HARNESS_DOCA_LOG_H_

#include <stdint.h>
#include <stdio.h>

#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10,
	DOCA_LOG_LEVEL_CRIT = 20,
	DOCA_LOG_LEVEL_ERROR = 30,
	DOCA_LOG_LEVEL_WARNING = 40,
	DOCA_LOG_LEVEL_INFO = 50,
	DOCA_LOG_LEVEL_DEBUG = 60,
	DOCA_LOG_LEVEL_TRACE = 70,
};

struct doca_log_backend;

doca_error_t doca_log_backend_create_standard(void);
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);

void harness_log(enum doca_log_level level, const char *source, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

#define DOCA_LOG_REGISTER(SOURCE) static const char *const harness_log_source __attribute__((unused)) = #SOURCE
#define DOCA_LOG_CRIT(...) harness_log(DOCA_LOG_LEVEL_CRIT, harness_log_source, __VA_ARGS__)
#define DOCA_LOG_ERR(...) harness_log(DOCA_LOG_LEVEL_ERROR, harness_log_source, __VA_ARGS__)
#define DOCA_LOG_WARN(...) harness_log(DOCA_LOG_LEVEL_WARNING, harness_log_source, __VA_ARGS__)
#define DOCA_LOG_INFO(...) harness_log(DOCA_LOG_LEVEL_INFO, harness_log_source, __VA_ARGS__)
#define DOCA_LOG_DBG(...) harness_log(DOCA_LOG_LEVEL_DEBUG, harness_log_source, __VA_ARGS__)
#define DOCA_LOG_TRC(...) harness_log(DOCA_LOG_LEVEL_TRACE, harness_log_source, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
