/*
 * doca-ts software DOCA device: Comch fast path, consumer side.
 *
 * Our own text; prototypes and names follow NVIDIA DOCA 3.x's doca_comch_consumer.h (the DPA-only functions are
 * not provided by the software device and are not declared).
 */
#ifndef DOCA_COMCH_CONSUMER_H_
#define DOCA_COMCH_CONSUMER_H_

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
struct doca_mmap;
struct doca_ctx;
struct doca_task;
struct doca_comch_connection;

struct doca_comch_consumer;

/* ---- creation ---- */

/* buf_mmap: the memory producers may write into (every posted buffer must lie inside it) */
DOCA_STABLE
doca_error_t doca_comch_consumer_create(struct doca_comch_connection *comch_connection,
					struct doca_mmap *buf_mmap,
					struct doca_comch_consumer **consumer);

DOCA_STABLE
doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *consumer);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_is_supported(const struct doca_devinfo *devinfo);

/* Unique per connection; the peer learns it through its new-consumer event */
DOCA_STABLE
doca_error_t doca_comch_consumer_get_id(const struct doca_comch_consumer *consumer, uint32_t *id);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_consumers(const struct doca_devinfo *devinfo, uint32_t *max_consumers);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_imm_data_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_imm_data_len);

DOCA_STABLE
doca_error_t doca_comch_consumer_get_imm_data_len(const struct doca_comch_consumer *consumer, uint32_t *imm_data_len);

DOCA_STABLE
doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *consumer, uint32_t imm_data_len);

DOCA_STABLE
struct doca_ctx *doca_comch_consumer_as_ctx(struct doca_comch_consumer *consumer);

/* ---- post receive task ---- */

struct doca_comch_consumer_task_post_recv;

typedef void (*doca_comch_consumer_task_post_recv_completion_cb_t)(struct doca_comch_consumer_task_post_recv *task,
								   union doca_data task_user_data,
								   union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_comch_consumer_task_post_recv_set_conf(
	struct doca_comch_consumer *consumer,
	doca_comch_consumer_task_post_recv_completion_cb_t task_completion_cb,
	doca_comch_consumer_task_post_recv_completion_cb_t task_error_cb,
	uint32_t num_post_recv_tasks);

/* Received bytes are appended after the buffer's current data (reset its data length before re-posting) */
DOCA_STABLE
doca_error_t doca_comch_consumer_task_post_recv_alloc_init(struct doca_comch_consumer *consumer,
							   struct doca_buf *buf,
							   struct doca_comch_consumer_task_post_recv **task);

DOCA_STABLE
struct doca_buf *doca_comch_consumer_task_post_recv_get_buf(DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
void doca_comch_consumer_task_post_recv_set_buf(struct doca_comch_consumer_task_post_recv *task, struct doca_buf *buf);

DOCA_STABLE
uint32_t doca_comch_consumer_task_post_recv_get_producer_id(DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
DOCA_SIM_IMM_CONST uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
uint32_t doca_comch_consumer_task_post_recv_get_imm_data_len(DOCA_SIM_TASK_CONST struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
struct doca_task *doca_comch_consumer_task_post_recv_as_task(struct doca_comch_consumer_task_post_recv *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_CONSUMER_H_ */
