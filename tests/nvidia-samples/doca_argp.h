/*
 * Test harness only (tests/sim-nvidia-rdma.test.ts): a stand-in for DOCA's argument parser, enough for NVIDIA's
 * samples to build unmodified against the software device: "-short VALUE" / "--long VALUE" (booleans take no value),
 * each value handed to the parameter's callback with the program's configuration. Real DOCA ships libdoca_argp.
 */
#ifndef HARNESS_DOCA_ARGP_H_
#define HARNESS_DOCA_ARGP_H_

#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING,
	DOCA_ARGP_TYPE_INT,
	DOCA_ARGP_TYPE_BOOLEAN,
	DOCA_ARGP_TYPE_JSON_OBJ,
};

struct doca_argp_param;
typedef doca_error_t (*doca_argp_param_cb_t)(void *param, void *config);
/* checks the whole configuration once every option was parsed (NVIDIA's applications register one) */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *config);

doca_error_t doca_argp_init(const char *program_name, void *program_config);
doca_error_t doca_argp_param_create(struct doca_argp_param **param);
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);
void doca_argp_param_set_mandatory(struct doca_argp_param *param);
/* the flag may be given more than once: the callback runs for each occurrence (NVIDIA's storage programs' --cpu) */
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);
doca_error_t doca_argp_register_param(struct doca_argp_param *param);
/* what --version prints; this stand-in has no --version, so the callback is kept and never called */
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);
doca_error_t doca_argp_start(int argc, char **argv);
doca_error_t doca_argp_destroy(void);

#ifdef __cplusplus
}
#endif

#endif
