/*
 * Comch capability queries. Server: DPU-side devices; client: host-side devices (or whatever the device
 * configuration says). Fast path (producer/consumer) is available wherever the control path is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "comch_internal.h"

static bool comch_any(const struct doca_devinfo *d)
{
	return d->caps.comch_server_supported || d->caps.comch_client_supported;
}

#define CAP_GETTER(fn, expr)                                                                                           \
	SIM_EXPORT doca_error_t fn(const struct doca_devinfo *devinfo, uint32_t *out)                                  \
	{                                                                                                              \
		if (devinfo == NULL || out == NULL)                                                                    \
			return DOCA_ERROR_INVALID_VALUE;                                                               \
		*out = (expr);                                                                                         \
		return DOCA_SUCCESS;                                                                                   \
	}

#define FASTPATH_CAP_GETTER(fn, expr)                                                                                  \
	SIM_EXPORT doca_error_t fn(const struct doca_devinfo *devinfo, uint32_t *out)                                  \
	{                                                                                                              \
		if (devinfo == NULL || out == NULL)                                                                    \
			return DOCA_ERROR_INVALID_VALUE;                                                               \
		if (!comch_any(devinfo))                                                                               \
			return DOCA_ERROR_NOT_SUPPORTED;                                                               \
		*out = (expr);                                                                                         \
		return DOCA_SUCCESS;                                                                                   \
	}

SIM_EXPORT doca_error_t doca_comch_cap_server_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps.comch_server_supported ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

SIM_EXPORT doca_error_t doca_comch_cap_client_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps.comch_client_supported ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

SIM_EXPORT doca_error_t doca_comch_consumer_cap_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return comch_any(devinfo) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

SIM_EXPORT doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo)
{
	return doca_comch_consumer_cap_is_supported(devinfo);
}

CAP_GETTER(doca_comch_cap_get_max_name_len, comch_cap_max_name_len(devinfo))
CAP_GETTER(doca_comch_cap_get_max_msg_size, comch_cap_max_msg_size(devinfo))
CAP_GETTER(doca_comch_cap_get_max_recv_queue_size, comch_cap_max_recv_queue(devinfo))
CAP_GETTER(doca_comch_cap_get_max_clients, comch_cap_max_clients(devinfo))
CAP_GETTER(doca_comch_cap_get_max_send_tasks, comch_cap_max_send_tasks(devinfo))

FASTPATH_CAP_GETTER(doca_comch_consumer_cap_get_max_num_tasks, COMCH_MAX_FASTPATH_TASKS)
FASTPATH_CAP_GETTER(doca_comch_consumer_cap_get_max_buf_size, comch_cap_max_buf_size(devinfo))
FASTPATH_CAP_GETTER(doca_comch_consumer_cap_get_max_buf_list_len, 1u)
CAP_GETTER(doca_comch_consumer_cap_get_max_consumers, COMCH_MAX_CONSUMERS)
CAP_GETTER(doca_comch_consumer_cap_get_max_imm_data_len, COMCH_MAX_IMM_DATA)

FASTPATH_CAP_GETTER(doca_comch_producer_cap_get_max_num_tasks, COMCH_MAX_FASTPATH_TASKS)
FASTPATH_CAP_GETTER(doca_comch_producer_cap_get_max_buf_size, comch_cap_max_buf_size(devinfo))
FASTPATH_CAP_GETTER(doca_comch_producer_cap_get_max_buf_list_len, 1u)
CAP_GETTER(doca_comch_producer_cap_get_max_producers, COMCH_MAX_PRODUCERS)
