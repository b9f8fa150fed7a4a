/*
 * Accessors said once: each macro defines one exported DOCA function whose whole body is an argument check and one
 * read or write of a field. The prototype stays the one of sim/include (the compiler holds the definition to it and
 * the header's DOCA_STABLE/DOCA_EXPERIMENTAL marker exports it), so a line such as
 *
 *   SIM_GETTER(doca_buf_get_len, const struct doca_buf, buf, size_t, len, buf->len)
 *
 * defines doca_buf_get_len(const struct doca_buf *buf, size_t *len) with DOCA's checks and return values.
 * Functions that log, check a state or do more than one thing are written out where they live.
 */
#ifndef SIM_ACCESSORS_H_
#define SIM_ACCESSORS_H_

#include "internal.h"

/* doca_error_t fn(handle_type *handle, out_type *out): INVALID_VALUE when either is NULL, else *out = value */
#define SIM_GETTER(fn, handle_type, handle, out_type, out, value) \
	doca_error_t fn(handle_type *handle, out_type *out) \
	{ \
		if (handle == NULL || out == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		*out = (value); \
		return DOCA_SUCCESS; \
	}

/* SIM_GETTER for a handle with a magic word: a destroyed handle is INVALID_VALUE (reported in strict mode) */
#define SIM_LIVE_GETTER(fn, handle_type, handle, object, out_type, out, value) \
	doca_error_t fn(handle_type *handle, out_type *out) \
	{ \
		if (handle == NULL || out == NULL) \
			return DOCA_ERROR_INVALID_VALUE; \
		SIM_RETURN_IF_DEAD(handle, magic, object, DOCA_ERROR_INVALID_VALUE); \
		*out = (value); \
		return DOCA_SUCCESS; \
	}

/* doca_error_t fn(handle_type *handle, value_type value) storing value in handle->field; a NULL or destroyed
 * handle is INVALID_VALUE */
#define SIM_LIVE_SETTER(fn, handle_type, handle, object, value_type, value, field) \
	doca_error_t fn(handle_type *handle, value_type value) \
	{ \
		SIM_RETURN_IF_NULL_OR_DEAD(handle, magic, object); \
		handle->field = value; \
		return DOCA_SUCCESS; \
	}

/* A getter as DOCA declares those of tasks and the as_ctx/as_task casts (no error code): ret fn(handle_type *handle)
 * returning value, or none for a NULL handle; handle_type carries its own const */
#define SIM_VALUE_GETTER(ret, fn, handle_type, handle, none, value) \
	ret fn(handle_type *handle) \
	{ \
		return handle == NULL ? (none) : (value); \
	}

/* A setter as DOCA declares those of tasks (void): void fn(handle_type *handle, value_type value) storing value in
 * target (an lvalue that names handle); a NULL handle is ignored */
#define SIM_VALUE_SETTER(fn, handle_type, handle, value_type, value, target) \
	void fn(handle_type *handle, value_type value) \
	{ \
		if (handle != NULL) \
			target = value; \
	}

#endif /* SIM_ACCESSORS_H_ */
