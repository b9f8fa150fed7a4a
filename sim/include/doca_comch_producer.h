/*
 * doca-ts software DOCA device: Comch fast path, producer side.
 *
 * Our own text; prototypes and names follow NVIDIA DOCA 3.x's doca_comch_producer.h (the DPA-only functions are
 * not provided by the software device and are not declared).
 */
#ifndef DOCA_COMCH_PRODUCER_H_
#define DOCA_COMCH_PRODUCER_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifndef DOCA_STABLE
#define DOCA_STABLE
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_dev;
struct doca_devinfo;
struct doca_ctx;
struct doca_task;
struct doca_comch_connection;

struct doca_comch_producer;

/* ---- creation ---- */

DOCA_STABLE
doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection,
					struct doca_comch_producer **producer);

DOCA_STABLE
doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo);

DOCA_STABLE
doca_error_t doca_comch_producer_get_id(const struct doca_comch_producer *producer, uint32_t *id);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_producers(const struct doca_devinfo *devinfo, uint32_t *max_producers);

DOCA_STABLE
struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *producer);

/* ---- send task ---- */

struct doca_comch_producer_task_send;

typedef void (*doca_comch_producer_task_send_completion_cb_t)(struct doca_comch_producer_task_send *task,
							      union doca_data task_user_data,
							      union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_comch_producer_task_send_set_conf(struct doca_comch_producer *producer,
						    doca_comch_producer_task_send_completion_cb_t task_completion_cb,
						    doca_comch_producer_task_send_completion_cb_t task_error_cb,
						    uint32_t num_send_tasks);

/* imm_data is copied into the task; submit returns DOCA_ERROR_AGAIN while the consumer has no room */
DOCA_STABLE
doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer,
						      const struct doca_buf *buf,
						      uint8_t *imm_data,
						      uint32_t imm_data_len,
						      uint32_t consumer_id,
						      struct doca_comch_producer_task_send **task);

DOCA_STABLE
const struct doca_buf *doca_comch_producer_task_send_get_buf(DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send *task);

DOCA_STABLE
void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf);

DOCA_STABLE
uint32_t doca_comch_producer_task_send_get_consumer_id(DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send *task);

DOCA_STABLE
void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task,
						   const uint32_t consumer_id);

DOCA_STABLE
uint8_t *doca_comch_producer_task_send_get_imm_data(DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send *task);

DOCA_STABLE
uint32_t doca_comch_producer_task_send_get_imm_data_len(DOCA_SIM_TASK_CONST struct doca_comch_producer_task_send *task);

DOCA_STABLE
void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task,
						uint8_t *imm_data,
						uint32_t imm_data_len);

DOCA_STABLE
struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_PRODUCER_H_ */
