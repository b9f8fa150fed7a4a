/*
 * Test harness only: the stand-ins' implementation (doca_argp.h, doca_log.h in this folder). Small on purpose: it
 * parses what NVIDIA's samples register and prints what they log; nothing of the software device depends on it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_argp.h"
#include "doca_log.h"

struct doca_argp_param {
	const char *short_name, *long_name;
	doca_argp_param_cb_t callback;
	enum doca_argp_type type;
	bool mandatory, seen, multiple;
};

#define MAX_PARAMS 64
static struct doca_argp_param *params[MAX_PARAMS];
static int num_params;
static void *config;
static const char *level_names[] = { "", "CRIT", "ERR", "WARN", "INFO", "DBG", "TRC" };

void harness_log(enum doca_log_level level, const char *source, const char *format, ...)
{
	va_list ap;
	int index = level / 10 - 1;
	fprintf(stderr, "[%s][%s] ", index >= 1 && index <= 6 ? level_names[index] : "?", source);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputc('\n', stderr);
}

doca_error_t doca_log_backend_create_standard(void)
{
	setvbuf(stderr, NULL, _IOLBF, 0);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend)
{
	if (fptr == NULL || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*backend = (struct doca_log_backend *)(void *)fptr;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level)
{
	(void)level;
	return backend == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

doca_error_t doca_argp_init(const char *program_name, void *program_config)
{
	(void)program_name;
	config = program_config;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_param_create(struct doca_argp_param **param)
{
	*param = calloc(1, sizeof(**param));
	return *param == NULL ? DOCA_ERROR_NO_MEMORY : DOCA_SUCCESS;
}

void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name) { param->short_name = name; }
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name) { param->long_name = name; }
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description) { (void)param; (void)description; }
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments) { (void)param; (void)arguments; }
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback) { param->callback = callback; }
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type) { param->type = type; }
void doca_argp_param_set_mandatory(struct doca_argp_param *param) { param->mandatory = true; }
void doca_argp_param_set_multiplicity(struct doca_argp_param *param) { param->multiple = true; }

doca_error_t doca_argp_register_param(struct doca_argp_param *param)
{
	if (num_params == MAX_PARAMS)
		return DOCA_ERROR_NO_MEMORY;
	params[num_params++] = param;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback)
{
	return callback == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

static struct doca_argp_param *find(const char *arg)
{
	for (int i = 0; i < num_params; i++) {
		const struct doca_argp_param *p = params[i];
		if ((arg[0] == '-' && arg[1] != '-' && p->short_name != NULL && strcmp(arg + 1, p->short_name) == 0) ||
		    (strncmp(arg, "--", 2) == 0 && p->long_name != NULL && strcmp(arg + 2, p->long_name) == 0))
			return params[i];
	}
	return NULL;
}

static doca_argp_validation_cb_t validation;

doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback)
{
	validation = callback;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_start(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct doca_argp_param *p = find(argv[i]);
		bool flag = true;
		int number;
		void *value;
		doca_error_t err;
		if (p == NULL) {
			fprintf(stderr, "argp: unknown option %s\n", argv[i]);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (p->seen && !p->multiple) {
			fprintf(stderr, "argp: %s given twice\n", argv[i]);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (p->type == DOCA_ARGP_TYPE_BOOLEAN) {
			value = &flag;
		} else if (i + 1 >= argc) {
			fprintf(stderr, "argp: %s needs a value\n", argv[i]);
			return DOCA_ERROR_INVALID_VALUE;
		} else if (p->type == DOCA_ARGP_TYPE_INT) {
			number = atoi(argv[++i]);
			value = &number;
		} else {
			value = argv[++i];
		}
		err = p->callback(value, config);
		if (err != DOCA_SUCCESS)
			return err;
		p->seen = true;
	}
	for (int i = 0; i < num_params; i++)
		if (params[i]->mandatory && !params[i]->seen) {
			if (params[i]->short_name != NULL)
				fprintf(stderr, "argp: missing mandatory option -%s\n", params[i]->short_name);
			else
				fprintf(stderr, "argp: missing mandatory option --%s\n", params[i]->long_name);
			return DOCA_ERROR_INVALID_VALUE;
		}
	return validation != NULL ? validation(config) : DOCA_SUCCESS;
}

doca_error_t doca_argp_destroy(void)
{
	for (int i = 0; i < num_params; i++)
		free(params[i]);
	num_params = 0;
	return DOCA_SUCCESS;
}
