/**
 * The one DOCA symbol table: every exported function doca-ts calls, declared once with its C prototype beside it
 * (DOCA 3.x headers). The loaders translate it for Deno, Bun and koffi. Header-inline functions (doca_version,
 * doca_buf_inventory_buf_get_by_addr/_by_data) are not here: they are not in the libraries; we call what they wrap.
 *
 * Pointer arguments and results are "ptr" (a JS number above the loaders); `union doca_data` is "u64".
 *
 * Aliases are the spellings of other DOCA releases doca-ts can run on (2.7 and later). DOCA 1.x names
 * (doca_devinfo_list_create, doca_mmap_dev_add, ...) are deliberately absent: a 1.x library has no progress engine
 * and no doca_comch, so resolving a few of its names could never make it usable (shared DOCA notes, "Names to try").
 */
import type { SymbolTable, TypedSymbolTable } from "../load/types.ts";

export const DOCA_SYMBOLS = {
  // ---------------------------------------------------------------- libdoca_common: errors, version
  // const char *doca_error_get_name(doca_error_t error);
  doca_error_get_name: { lib: "common", params: ["i32"], result: "ptr" },
  // const char *doca_error_get_descr(doca_error_t error);
  doca_error_get_descr: { lib: "common", params: ["i32"], result: "ptr" },
  // const char *doca_version_runtime(void);
  doca_version_runtime: { lib: "common", params: [], result: "ptr" },

  // ---------------------------------------------------------------- devices (doca_dev.h)
  // doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);
  doca_devinfo_create_list: { lib: "common", params: ["ptr", "ptr"], result: "i32" },
  // doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);
  doca_devinfo_destroy_list: { lib: "common", params: ["ptr"], result: "i32" },
  // doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);
  doca_devinfo_get_pci_addr_str: { lib: "common", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str, uint8_t *is_equal);
  doca_devinfo_is_equal_pci_addr: { lib: "common", params: ["ptr<doca_devinfo>", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);
  doca_devinfo_get_ibdev_name: { lib: "common", params: ["ptr<doca_devinfo>", "ptr", "u32"], result: "i32" },
  // doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);
  doca_devinfo_get_iface_name: { lib: "common", params: ["ptr<doca_devinfo>", "ptr", "u32"], result: "i32" },
  // doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo, enum doca_pci_func_type *pci_func_type);
  doca_devinfo_get_pci_func_type: { lib: "common", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index);
  doca_devinfo_get_sf_index: { lib: "common", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);
  doca_dev_open: { lib: "common", params: ["ptr<doca_devinfo>", "ptr"], result: "i32" },
  // doca_error_t doca_dev_close(struct doca_dev *dev);
  doca_dev_close: { lib: "common", params: ["ptr<doca_dev>"], result: "i32" },
  // struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);
  doca_dev_as_devinfo: { lib: "common", params: ["ptr<doca_dev>"], result: "ptr<doca_devinfo>" },
  // doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter, struct doca_devinfo_rep ***dev_list_rep, uint32_t *nb_devs_rep);
  doca_devinfo_rep_create_list: { lib: "common", params: ["ptr<doca_dev>", "i32", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep);
  doca_devinfo_rep_destroy_list: { lib: "common", params: ["ptr"], result: "i32" },
  // doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);
  doca_devinfo_rep_get_pci_addr_str: { lib: "common", params: ["ptr<doca_devinfo_rep>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep, const char *pci_addr_str, uint8_t *is_equal);
  doca_devinfo_rep_is_equal_pci_addr: { lib: "common", params: ["ptr<doca_devinfo_rep>", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);
  doca_devinfo_rep_get_vuid: { lib: "common", params: ["ptr<doca_devinfo_rep>", "ptr", "u32"], result: "i32" },
  // doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);
  doca_dev_rep_open: { lib: "common", params: ["ptr<doca_devinfo_rep>", "ptr"], result: "i32" },
  // doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev);
  doca_dev_rep_close: { lib: "common", params: ["ptr<doca_dev_rep>"], result: "i32" },

  // ---------------------------------------------------------------- memory maps (doca_mmap.h)
  // doca_error_t doca_mmap_create(struct doca_mmap **mmap);
  doca_mmap_create: { lib: "common", params: ["ptr"], result: "i32" },
  // doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);
  doca_mmap_destroy: { lib: "common", params: ["ptr<doca_mmap>"], result: "i32" },
  // doca_error_t doca_mmap_start(struct doca_mmap *mmap);
  doca_mmap_start: { lib: "common", params: ["ptr<doca_mmap>"], result: "i32" },
  // doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);
  doca_mmap_set_memrange: { lib: "common", params: ["ptr<doca_mmap>", "ptr<void>", "usize"], result: "i32" },
  // doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);
  doca_mmap_get_memrange: { lib: "common", params: ["ptr<doca_mmap>", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);
  doca_mmap_set_permissions: { lib: "common", params: ["ptr<doca_mmap>", "u32"], result: "i32" },
  // doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);
  doca_mmap_add_dev: { lib: "common", params: ["ptr<doca_mmap>", "ptr<doca_dev>"], result: "i32" },
  // doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc, size_t *export_desc_len);
  doca_mmap_export_pci: { lib: "common", params: ["ptr<doca_mmap>", "ptr<doca_dev>", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc, size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);
  doca_mmap_create_from_export: { lib: "common", params: ["ptr", "ptr<void>", "usize", "ptr<doca_dev>", "ptr"], result: "i32" },
  // doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *mmap);   (DOCA 3.x; NVIDIA's storage programs)
  doca_mmap_enable_thread_safety: { lib: "common", params: ["ptr<doca_mmap>"], result: "i32", optional: true },
  // doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset, size_t len);
  doca_mmap_set_dmabuf_memrange: { lib: "common", params: ["ptr<doca_mmap>", "i32", "ptr<void>", "usize", "usize"], result: "i32", optional: true },

  // ---------------------------------------------------------------- buffers (doca_buf.h, doca_buf_inventory.h)
  // doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **buf_inventory);
  doca_buf_inventory_create: { lib: "common", params: ["usize", "ptr"], result: "i32" },
  // doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);
  doca_buf_inventory_start: { lib: "common", params: ["ptr<doca_buf_inventory>"], result: "i32" },
  // doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);
  doca_buf_inventory_stop: { lib: "common", params: ["ptr<doca_buf_inventory>"], result: "i32", optional: true },
  // doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);
  doca_buf_inventory_destroy: { lib: "common", params: ["ptr<doca_buf_inventory>"], result: "i32" },
  // doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *addr, size_t len, void *data, size_t data_len, struct doca_buf **buf);
  doca_buf_inventory_buf_get_by_args: { lib: "common", params: ["ptr<doca_buf_inventory>", "ptr<doca_mmap>", "ptr<void>", "usize", "ptr<void>", "usize", "ptr"], result: "i32" },
  // doca_error_t doca_buf_inventory_buf_reuse_by_args(struct doca_buf *buf, void *addr, size_t len, void *data, size_t data_len);   (the inline reuse_by_addr / _by_data wrap it)
  doca_buf_inventory_buf_reuse_by_args: { lib: "common", params: ["ptr<doca_buf>", "ptr<void>", "usize", "ptr<void>", "usize"], result: "i32", optional: true },
  // doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);
  doca_buf_dec_refcount: { lib: "common", params: ["ptr<doca_buf>", "ptr"], result: "i32" },
  // doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);
  doca_buf_get_data: { lib: "common", params: ["ptr<doca_buf>", "ptr"], result: "i32" },
  // doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);
  doca_buf_get_data_len: { lib: "common", params: ["ptr<doca_buf>", "ptr"], result: "i32" },
  // doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);
  doca_buf_reset_data_len: { lib: "common", params: ["ptr<doca_buf>"], result: "i32" },
  // doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);
  doca_buf_chain_list: { lib: "common", params: ["ptr<doca_buf>", "ptr<doca_buf>"], result: "i32" },
  // doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);
  doca_buf_unchain_list: { lib: "common", params: ["ptr<doca_buf>", "ptr<doca_buf>"], result: "i32" },
  // doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);
  doca_buf_set_data: { lib: "common", params: ["ptr<doca_buf>", "ptr<void>", "usize"], result: "i32" },

  // ---------------------------------------------------------------- progress engine, tasks (doca_pe.h)
  // doca_error_t doca_pe_create(struct doca_pe **pe);
  doca_pe_create: { lib: "common", params: ["ptr"], result: "i32" },
  // doca_error_t doca_pe_destroy(struct doca_pe *pe);
  doca_pe_destroy: { lib: "common", params: ["ptr<doca_pe>"], result: "i32" },
  // uint8_t doca_pe_progress(struct doca_pe *pe);
  doca_pe_progress: { lib: "common", params: ["ptr<doca_pe>"], result: "u8" },
  // doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);
  doca_pe_connect_ctx: { lib: "common", params: ["ptr<doca_pe>", "ptr<doca_ctx>"], result: "i32" },
  // doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle);  (int fd on Linux)
  doca_pe_get_notification_handle: { lib: "common", params: ["ptr<doca_pe>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_pe_request_notification(struct doca_pe *pe);
  doca_pe_request_notification: { lib: "common", params: ["ptr<doca_pe>"], result: "i32", optional: true },
  // doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);
  doca_pe_clear_notification: { lib: "common", params: ["ptr<doca_pe>", "i32"], result: "i32", optional: true },
  // doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);
  doca_pe_get_num_inflight_tasks: { lib: "common", params: ["ptr<doca_pe>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_task_submit(struct doca_task *task);
  doca_task_submit: { lib: "common", params: ["ptr<doca_task>"], result: "i32" },
  // void doca_task_free(struct doca_task *task);
  doca_task_free: { lib: "common", params: ["ptr<doca_task>"], result: "void" },
  // doca_error_t doca_task_get_status(const struct doca_task *task);
  doca_task_get_status: { lib: "common", params: ["ptr<doca_task>"], result: "i32" },
  // void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);
  doca_task_set_user_data: { lib: "common", params: ["ptr<doca_task>", "u64"], result: "void" },

  // ---------------------------------------------------------------- contexts (doca_ctx.h)
  // doca_error_t doca_ctx_start(struct doca_ctx *ctx);   (may fire the state-changed callback synchronously)
  doca_ctx_start: { lib: "common", params: ["ptr<doca_ctx>"], result: "i32" },
  // doca_error_t doca_ctx_stop(struct doca_ctx *ctx);    (may fire state-changed / flushed-task callbacks)
  doca_ctx_stop: { lib: "common", params: ["ptr<doca_ctx>"], result: "i32" },
  // doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);
  doca_ctx_get_state: { lib: "common", params: ["ptr<doca_ctx>", "ptr"], result: "i32" },
  // doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);
  doca_ctx_set_user_data: { lib: "common", params: ["ptr<doca_ctx>", "u64"], result: "i32" },
  // doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);
  doca_ctx_get_user_data: { lib: "common", params: ["ptr<doca_ctx>", "ptr"], result: "i32" },
  // doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);
  doca_ctx_set_state_changed_cb: { lib: "common", params: ["ptr<doca_ctx>", "ptr"], result: "i32" },

  // ---------------------------------------------------------------- software-device diagnostics (absent from real DOCA)
  // uint64_t doca_sim_live_objects(void);
  doca_sim_live_objects: { lib: "common", params: [], result: "u64", optional: true },
  // const char *doca_sim_describe(void);
  doca_sim_describe: { lib: "common", params: [], result: "ptr", optional: true },

  // ---------------------------------------------------------------- libdoca_dma (doca_dma.h)
  // doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma);
  doca_dma_create: { lib: "dma", params: ["ptr<doca_dev>", "ptr"], result: "i32" },
  // doca_error_t doca_dma_destroy(struct doca_dma *dma);
  doca_dma_destroy: { lib: "dma", params: ["ptr<doca_dma>"], result: "i32" },
  // struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);
  doca_dma_as_ctx: { lib: "dma", params: ["ptr<doca_dma>"], result: "ptr<doca_ctx>" },
  // doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo);
  doca_dma_cap_task_memcpy_is_supported: { lib: "dma", params: ["ptr<doca_devinfo>"], result: "i32" },
  // doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size);
  doca_dma_cap_task_memcpy_get_max_buf_size: { lib: "dma", params: ["ptr<doca_devinfo>", "ptr"], result: "i32" },
  // doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);
  doca_dma_cap_task_memcpy_get_max_buf_list_len: { lib: "dma", params: ["ptr<doca_devinfo>", "ptr"], result: "i32" },
  // doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma, doca_dma_task_memcpy_completion_cb_t successful_task_completion_cb, doca_dma_task_memcpy_completion_cb_t error_task_completion_cb, uint32_t num_memcpy_tasks);
  doca_dma_task_memcpy_set_conf: { lib: "dma", params: ["ptr<doca_dma>", "ptr", "ptr", "u32"], result: "i32" },
  // doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst, union doca_data user_data, struct doca_dma_task_memcpy **task);
  doca_dma_task_memcpy_alloc_init: { lib: "dma", params: ["ptr<doca_dma>", "ptr<doca_buf>", "ptr<doca_buf>", "u64", "ptr"], result: "i32" },
  // struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task);
  doca_dma_task_memcpy_as_task: { lib: "dma", params: ["ptr<doca_dma_task_memcpy>"], result: "ptr<doca_task>" },
  // Task reuse (issue 13): re-arm a completed memcpy task with other buffers instead of free + alloc_init.
  // void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src);
  doca_dma_task_memcpy_set_src: { lib: "dma", params: ["ptr<doca_dma_task_memcpy>", "ptr<doca_buf>"], result: "void" },
  // void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst);
  doca_dma_task_memcpy_set_dst: { lib: "dma", params: ["ptr<doca_dma_task_memcpy>", "ptr<doca_buf>"], result: "void" },

  // ---------------------------------------------------------------- libdoca_comch (doca_comch.h)
  // doca_error_t doca_comch_cap_server_is_supported(const struct doca_devinfo *devinfo);
  doca_comch_cap_server_is_supported: { lib: "comch", params: ["ptr<doca_devinfo>"], result: "i32" },
  // doca_error_t doca_comch_cap_client_is_supported(const struct doca_devinfo *devinfo);
  doca_comch_cap_client_is_supported: { lib: "comch", params: ["ptr<doca_devinfo>"], result: "i32" },
  // doca_error_t doca_comch_cap_get_max_msg_size(const struct doca_devinfo *devinfo, uint32_t *size);
  doca_comch_cap_get_max_msg_size: { lib: "comch", params: ["ptr<doca_devinfo>", "ptr"], result: "i32" },
  // doca_error_t doca_comch_cap_get_max_name_len(const struct doca_devinfo *devinfo, uint32_t *max_name_len);
  doca_comch_cap_get_max_name_len: { lib: "comch", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_comch_server_create(struct doca_dev *dev, struct doca_dev_rep *repr, const char *name, struct doca_comch_server **comch_server);
  doca_comch_server_create: { lib: "comch", params: ["ptr<doca_dev>", "ptr<doca_dev_rep>", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_comch_server_destroy(struct doca_comch_server *comch_server);
  doca_comch_server_destroy: { lib: "comch", params: ["ptr<doca_comch_server>"], result: "i32" },
  // struct doca_ctx *doca_comch_server_as_ctx(struct doca_comch_server *comch_server);
  doca_comch_server_as_ctx: { lib: "comch", params: ["ptr<doca_comch_server>"], result: "ptr<doca_ctx>" },
  // doca_error_t doca_comch_server_set_max_msg_size(struct doca_comch_server *comch_server, uint32_t size);
  doca_comch_server_set_max_msg_size: { lib: "comch", params: ["ptr<doca_comch_server>", "u32"], result: "i32" },
  // doca_error_t doca_comch_server_set_recv_queue_size(struct doca_comch_server *comch_server, uint32_t size);
  doca_comch_server_set_recv_queue_size: { lib: "comch", params: ["ptr<doca_comch_server>", "u32"], result: "i32" },
  // doca_error_t doca_comch_server_disconnect(struct doca_comch_server *comch_server, struct doca_comch_connection *connection);
  doca_comch_server_disconnect: { lib: "comch", params: ["ptr<doca_comch_server>", "ptr<doca_comch_connection>"], result: "i32" },
  // doca_error_t doca_comch_server_task_send_set_conf(struct doca_comch_server *comch_server, doca_comch_task_send_completion_cb_t task_completion_cb, doca_comch_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks);
  doca_comch_server_task_send_set_conf: { lib: "comch", params: ["ptr<doca_comch_server>", "ptr", "ptr", "u32"], result: "i32" },
  // doca_error_t doca_comch_server_task_send_alloc_init(struct doca_comch_server *comch_server, struct doca_comch_connection *peer, const void *msg, uint32_t len, struct doca_comch_task_send **task);
  doca_comch_server_task_send_alloc_init: { lib: "comch", params: ["ptr<doca_comch_server>", "ptr<doca_comch_connection>", "ptr<void>", "u32", "ptr"], result: "i32" },
  // doca_error_t doca_comch_server_event_msg_recv_register(struct doca_comch_server *comch_server, doca_comch_event_msg_recv_cb_t recv_event_cb);
  doca_comch_server_event_msg_recv_register: { lib: "comch", params: ["ptr<doca_comch_server>", "ptr"], result: "i32" },
  // doca_error_t doca_comch_server_event_connection_status_changed_register(struct doca_comch_server *comch_server, doca_comch_event_connection_status_changed_cb_t connect_event_cb, doca_comch_event_connection_status_changed_cb_t disconnect_event_cb);
  doca_comch_server_event_connection_status_changed_register: {
    lib: "comch",
    params: ["ptr", "ptr", "ptr"],
    result: "i32",
    aliases: ["doca_comch_server_event_connection_register"],
  },
  // doca_error_t doca_comch_server_event_consumer_register(struct doca_comch_server *comch_server, doca_comch_event_consumer_cb_t new_consumer_event_cb, doca_comch_event_consumer_cb_t expired_consumer_event_cb);
  doca_comch_server_event_consumer_register: { lib: "comch", params: ["ptr<doca_comch_server>", "ptr", "ptr"], result: "i32", optional: true },
  // struct doca_comch_server *doca_comch_server_get_server_ctx(const struct doca_comch_connection *connection);
  doca_comch_server_get_server_ctx: { lib: "comch", params: ["ptr<doca_comch_connection>"], result: "ptr<doca_comch_server>", optional: true },
  // doca_error_t doca_comch_client_create(struct doca_dev *dev, const char *name, struct doca_comch_client **comch_client);
  doca_comch_client_create: { lib: "comch", params: ["ptr<doca_dev>", "ptr", "ptr"], result: "i32" },
  // doca_error_t doca_comch_client_destroy(struct doca_comch_client *comch_client);
  doca_comch_client_destroy: { lib: "comch", params: ["ptr<doca_comch_client>"], result: "i32" },
  // struct doca_ctx *doca_comch_client_as_ctx(struct doca_comch_client *comch_client);
  doca_comch_client_as_ctx: { lib: "comch", params: ["ptr<doca_comch_client>"], result: "ptr<doca_ctx>" },
  // doca_error_t doca_comch_client_set_max_msg_size(struct doca_comch_client *comch_client, uint32_t size);
  doca_comch_client_set_max_msg_size: { lib: "comch", params: ["ptr<doca_comch_client>", "u32"], result: "i32" },
  // doca_error_t doca_comch_client_set_recv_queue_size(struct doca_comch_client *comch_client, uint32_t size);
  doca_comch_client_set_recv_queue_size: { lib: "comch", params: ["ptr<doca_comch_client>", "u32"], result: "i32" },
  // doca_error_t doca_comch_client_get_connection(const struct doca_comch_client *comch_client, struct doca_comch_connection **connection);
  doca_comch_client_get_connection: { lib: "comch", params: ["ptr<doca_comch_client>", "ptr"], result: "i32" },
  // doca_error_t doca_comch_client_task_send_set_conf(struct doca_comch_client *comch_client, doca_comch_task_send_completion_cb_t task_completion_cb, doca_comch_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks);
  doca_comch_client_task_send_set_conf: { lib: "comch", params: ["ptr<doca_comch_client>", "ptr", "ptr", "u32"], result: "i32" },
  // doca_error_t doca_comch_client_task_send_alloc_init(struct doca_comch_client *comch_client, struct doca_comch_connection *peer, const void *msg, uint32_t len, struct doca_comch_task_send **task);
  doca_comch_client_task_send_alloc_init: { lib: "comch", params: ["ptr<doca_comch_client>", "ptr<doca_comch_connection>", "ptr<void>", "u32", "ptr"], result: "i32" },
  // doca_error_t doca_comch_client_event_msg_recv_register(struct doca_comch_client *comch_client, doca_comch_event_msg_recv_cb_t recv_event_cb);
  doca_comch_client_event_msg_recv_register: { lib: "comch", params: ["ptr<doca_comch_client>", "ptr"], result: "i32" },
  // doca_error_t doca_comch_client_event_consumer_register(struct doca_comch_client *comch_client, doca_comch_event_consumer_cb_t new_consumer_event_cb, doca_comch_event_consumer_cb_t expired_consumer_event_cb);
  doca_comch_client_event_consumer_register: { lib: "comch", params: ["ptr<doca_comch_client>", "ptr", "ptr"], result: "i32", optional: true },
  // struct doca_comch_client *doca_comch_client_get_client_ctx(const struct doca_comch_connection *connection);
  doca_comch_client_get_client_ctx: { lib: "comch", params: ["ptr<doca_comch_connection>"], result: "ptr<doca_comch_client>", optional: true },
  // struct doca_task *doca_comch_task_send_as_task(struct doca_comch_task_send *task);
  doca_comch_task_send_as_task: { lib: "comch", params: ["ptr<doca_comch_task_send>"], result: "ptr<doca_task>" },
  // doca_error_t doca_comch_connection_set_user_data(struct doca_comch_connection *connection, union doca_data user_data);
  doca_comch_connection_set_user_data: { lib: "comch", params: ["ptr<doca_comch_connection>", "u64"], result: "i32" },
  // union doca_data doca_comch_connection_get_user_data(const struct doca_comch_connection *connection);
  doca_comch_connection_get_user_data: { lib: "comch", params: ["ptr<doca_comch_connection>"], result: "u64" },

  // ---------------------------------------------------------------- comch fast path (doca_comch_producer.h, doca_comch_consumer.h)
  // doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection, struct doca_comch_producer **producer);
  doca_comch_producer_create: { lib: "comch", params: ["ptr<doca_comch_connection>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer);
  doca_comch_producer_destroy: { lib: "comch", params: ["ptr<doca_comch_producer>"], result: "i32", optional: true },
  // struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *producer);
  doca_comch_producer_as_ctx: { lib: "comch", params: ["ptr<doca_comch_producer>"], result: "ptr<doca_ctx>", optional: true },
  // doca_error_t doca_comch_producer_task_send_set_conf(struct doca_comch_producer *producer, doca_comch_producer_task_send_completion_cb_t task_completion_cb, doca_comch_producer_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks);
  doca_comch_producer_task_send_set_conf: { lib: "comch", params: ["ptr<doca_comch_producer>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer, const struct doca_buf *buf, const uint8_t *imm_data, uint32_t imm_data_len, uint32_t consumer_id, struct doca_comch_producer_task_send **task);
  doca_comch_producer_task_send_alloc_init: { lib: "comch", params: ["ptr<doca_comch_producer>", "ptr<doca_buf>", "ptr", "u32", "u32", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task);
  doca_comch_producer_task_send_as_task: { lib: "comch", params: ["ptr<doca_comch_producer_task_send>"], result: "ptr<doca_task>", optional: true },
  // const struct doca_buf *doca_comch_producer_task_send_get_buf(const struct doca_comch_producer_task_send *task);
  doca_comch_producer_task_send_get_buf: { lib: "comch", params: ["ptr<doca_comch_producer_task_send>"], result: "ptr<doca_buf>", optional: true },
  // void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf);
  doca_comch_producer_task_send_set_buf: { lib: "comch", params: ["ptr<doca_comch_producer_task_send>", "ptr<doca_buf>"], result: "void", optional: true },
  // void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task, const uint32_t consumer_id);
  doca_comch_producer_task_send_set_consumer_id: { lib: "comch", params: ["ptr<doca_comch_producer_task_send>", "u32"], result: "void", optional: true },
  // void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task, uint8_t *imm_data, uint32_t imm_data_len);
  doca_comch_producer_task_send_set_imm_data: { lib: "comch", params: ["ptr<doca_comch_producer_task_send>", "ptr", "u32"], result: "void", optional: true },
  // uint32_t doca_comch_producer_task_send_get_imm_data_len(const struct doca_comch_producer_task_send *task);
  doca_comch_producer_task_send_get_imm_data_len: { lib: "comch", params: ["ptr<doca_comch_producer_task_send>"], result: "u32", optional: true },
  // doca_error_t doca_comch_consumer_create(struct doca_comch_connection *comch_connection, struct doca_mmap *buf_mmap, struct doca_comch_consumer **consumer);
  doca_comch_consumer_create: { lib: "comch", params: ["ptr<doca_comch_connection>", "ptr<doca_mmap>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *consumer);
  doca_comch_consumer_destroy: { lib: "comch", params: ["ptr<doca_comch_consumer>"], result: "i32", optional: true },
  // struct doca_ctx *doca_comch_consumer_as_ctx(struct doca_comch_consumer *consumer);
  doca_comch_consumer_as_ctx: { lib: "comch", params: ["ptr<doca_comch_consumer>"], result: "ptr<doca_ctx>", optional: true },
  // doca_error_t doca_comch_consumer_get_id(const struct doca_comch_consumer *consumer, uint32_t *id);
  doca_comch_consumer_get_id: { lib: "comch", params: ["ptr<doca_comch_consumer>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_comch_consumer_task_post_recv_set_conf(struct doca_comch_consumer *consumer, doca_comch_consumer_task_post_recv_completion_cb_t task_completion_cb, doca_comch_consumer_task_post_recv_completion_cb_t task_error_cb, uint32_t num_post_recv_tasks);
  doca_comch_consumer_task_post_recv_set_conf: { lib: "comch", params: ["ptr<doca_comch_consumer>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_comch_consumer_task_post_recv_alloc_init(struct doca_comch_consumer *consumer, struct doca_buf *buf, struct doca_comch_consumer_task_post_recv **task);
  doca_comch_consumer_task_post_recv_alloc_init: { lib: "comch", params: ["ptr<doca_comch_consumer>", "ptr<doca_buf>", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_comch_consumer_task_post_recv_as_task(struct doca_comch_consumer_task_post_recv *task);
  doca_comch_consumer_task_post_recv_as_task: { lib: "comch", params: ["ptr<doca_comch_consumer_task_post_recv>"], result: "ptr<doca_task>", optional: true },
  // const uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(const struct doca_comch_consumer_task_post_recv *task);
  doca_comch_consumer_task_post_recv_get_imm_data: { lib: "comch", params: ["ptr<doca_comch_consumer_task_post_recv>"], result: "ptr", optional: true },
  // struct doca_buf *doca_comch_consumer_task_post_recv_get_buf(const struct doca_comch_consumer_task_post_recv *task);
  doca_comch_consumer_task_post_recv_get_buf: { lib: "comch", params: ["ptr<doca_comch_consumer_task_post_recv>"], result: "ptr<doca_buf>", optional: true },
  // void doca_comch_consumer_task_post_recv_set_buf(struct doca_comch_consumer_task_post_recv *task, struct doca_buf *buf);
  doca_comch_consumer_task_post_recv_set_buf: { lib: "comch", params: ["ptr<doca_comch_consumer_task_post_recv>", "ptr<doca_buf>"], result: "void", optional: true },
  // doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *consumer, uint32_t imm_data_len);
  doca_comch_consumer_set_imm_data_len: { lib: "comch", params: ["ptr<doca_comch_consumer>", "u32"], result: "i32", optional: true },
  // doca_error_t doca_comch_consumer_get_imm_data_len(const struct doca_comch_consumer *consumer, uint32_t *imm_data_len);
  doca_comch_consumer_get_imm_data_len: { lib: "comch", params: ["ptr<doca_comch_consumer>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_comch_consumer_cap_get_max_imm_data_len(const struct doca_devinfo *devinfo, uint32_t *max_imm_data_len);
  doca_comch_consumer_cap_get_max_imm_data_len: { lib: "comch", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // uint32_t doca_comch_consumer_task_post_recv_get_producer_id(struct doca_comch_consumer_task_post_recv *task);
  doca_comch_consumer_task_post_recv_get_producer_id: { lib: "comch", params: ["ptr<doca_comch_consumer_task_post_recv>"], result: "u32", optional: true },
  // uint32_t doca_comch_consumer_task_post_recv_get_imm_data_len(const struct doca_comch_consumer_task_post_recv *task);
  doca_comch_consumer_task_post_recv_get_imm_data_len: { lib: "comch", params: ["ptr<doca_comch_consumer_task_post_recv>"], result: "u32", optional: true },
} as const satisfies TypedSymbolTable;

/** libc functions the loaders and NativeMemory use (same loaders, libc.so.6). */
export const LIBC_SYMBOLS = {
  // void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);
  mmap: { lib: "libc", params: ["ptr", "usize", "i32", "i32", "i32", "u64"], result: "ptr" },
  // int memfd_create(const char *name, unsigned int flags);   (NativeMemory.shared: the memory a dma-buf range names)
  memfd_create: { lib: "libc", params: ["ptr", "u32"], result: "i32" },
  // int ftruncate(int fd, off_t length);
  ftruncate: { lib: "libc", params: ["i32", "u64"], result: "i32" },
  // int close(int fd);
  close: { lib: "libc", params: ["i32"], result: "i32" },
  // int munmap(void *addr, size_t length);
  munmap: { lib: "libc", params: ["ptr", "usize"], result: "i32" },
  // int madvise(void *addr, size_t length, int advice);
  madvise: { lib: "libc", params: ["ptr", "usize", "i32"], result: "i32" },
  // int poll(struct pollfd *fds, nfds_t nfds, int timeout);   (blocking: loaders add pollAsync)
  poll: { lib: "libc", params: ["ptr", "u64", "i32"], result: "i32", blocking: true },
  // size_t strlen(const char *s);
  strlen: { lib: "libc", params: ["ptr"], result: "usize" },
  // void *memcpy(void *dest, const void *src, size_t n);
  memcpy: { lib: "libc", params: ["ptr", "ptr", "usize"], result: "ptr" },
  // void *dlopen(const char *filename, int flags);
  dlopen: { lib: "libc", params: ["ptr", "i32"], result: "ptr" },
  // int setenv(const char *name, const char *value, int overwrite);
  setenv: { lib: "libc", params: ["ptr", "ptr", "i32"], result: "i32" },
  // int *__errno_location(void);
  __errno_location: { lib: "libc", params: [], result: "ptr" },
} as const satisfies SymbolTable;

/**
 * Callback prototypes DOCA calls. One native callback per kind per runtime: doca-ts finds the JS owner from the
 * small integer id carried in the ctx / task user data.
 */
export const CALLBACKS = {
  // void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev_state, enum doca_ctx_states next_state);
  ctxStateChanged: { params: ["u64", "ptr", "i32", "i32"], result: "void" },
  // void (*doca_task_completion_cb_t)(struct doca_task *task, union doca_data task_user_data, union doca_data ctx_user_data);  (also dma memcpy, comch send, producer send, consumer post-recv)
  taskCompletion: { params: ["ptr", "u64", "u64"], result: "void" },
  // void (*doca_comch_event_msg_recv_cb_t)(struct doca_comch_event_msg_recv *event, uint8_t *recv_buffer, uint32_t msg_len, struct doca_comch_connection *comch_connection);
  msgRecv: { params: ["ptr", "ptr", "u32", "ptr"], result: "void" },
  // void (*doca_comch_event_connection_status_changed_cb_t)(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *comch_connection, uint8_t change_successful);
  connectionStatus: { params: ["ptr", "ptr", "u8"], result: "void" },
  // void (*doca_comch_event_consumer_cb_t)(struct doca_comch_event_consumer *event, struct doca_comch_connection *comch_connection, uint32_t id);
  consumerEvent: { params: ["ptr", "ptr", "u32"], result: "void" },
} as const;

// ===================================================================================================================
// RDMA (issue 21): libdoca_rdma, plus the libdoca_common functions only RDMA needs. Every entry is optional: a DOCA
// install (or a 2.7 build) without libdoca_rdma still loads DMA and Comch; ffi/rdma*.ts require what they use
// (requireFns → DocaError NOT_SUPPORTED naming the missing function). Prototypes: DOCA 3.x doca_rdma.h / doca_mmap.h.
// `doca_be32_t` immediate data travels as a u32, unchanged (as NVIDIA's samples use it).
// ===================================================================================================================
export const RDMA_SYMBOLS = {
  // doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc, size_t *export_desc_len);
  doca_mmap_export_rdma: { lib: "common", params: ["ptr", "ptr", "ptr", "ptr"], result: "i32", optional: true },

  // doca_error_t doca_rdma_create(struct doca_dev *dev, struct doca_rdma **rdma);
  doca_rdma_create: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_destroy(struct doca_rdma *rdma);
  doca_rdma_destroy: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma);
  doca_rdma_as_ctx: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions);
  doca_rdma_set_permissions: { lib: "rdma", params: ["ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index);
  doca_rdma_set_gid_index: { lib: "rdma", params: ["ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_max_num_connections(struct doca_rdma *rdma, uint16_t max_num_connections);
  doca_rdma_set_max_num_connections: { lib: "rdma", params: ["ptr", "u16"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type);
  doca_rdma_set_transport_type: { lib: "rdma", params: ["ptr", "i32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size);
  doca_rdma_set_send_queue_size: { lib: "rdma", params: ["ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size);
  doca_rdma_set_recv_queue_size: { lib: "rdma", params: ["ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_max_send_buf_list_len(struct doca_rdma *rdma, uint32_t max_send_buf_list_len);
  doca_rdma_set_max_send_buf_list_len: { lib: "rdma", params: ["ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_get_max_send_buf_list_len(const struct doca_rdma *rdma, uint32_t *max_send_buf_list_len);
  doca_rdma_get_max_send_buf_list_len: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_receive_set_dst_buf_list_len(struct doca_rdma *rdma, uint32_t buf_list_len);
  doca_rdma_task_receive_set_dst_buf_list_len: { lib: "rdma", params: ["ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_receive_get_dst_buf_list_len(const struct doca_rdma *rdma, uint32_t *buf_list_len);
  doca_rdma_task_receive_get_dst_buf_list_len: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_export(struct doca_rdma *rdma, const void **local_rdma_conn_details, size_t *local_rdma_conn_details_size, struct doca_rdma_connection **rdma_connection);
  doca_rdma_export: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_rdma_conn_details, size_t remote_rdma_conn_details_size, struct doca_rdma_connection *rdma_connection);
  doca_rdma_connect: { lib: "rdma", params: ["ptr", "ptr", "usize", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_addr_create(enum doca_rdma_addr_type addr_type, const char *address, uint16_t port, struct doca_rdma_addr **addr);
  doca_rdma_addr_create: { lib: "rdma", params: ["i32", "ptr", "u16", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_addr_destroy(struct doca_rdma_addr *addr);
  doca_rdma_addr_destroy: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_start_listen_to_port(struct doca_rdma *rdma, uint16_t port);
  doca_rdma_start_listen_to_port: { lib: "rdma", params: ["ptr", "u16"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connect_to_addr(struct doca_rdma *rdma, struct doca_rdma_addr *addr, union doca_data connection_user_data);
  doca_rdma_connect_to_addr: { lib: "rdma", params: ["ptr", "ptr", "u64"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connection_accept(struct doca_rdma_connection *rdma_connection, void *private_data, uint8_t private_data_len);
  doca_rdma_connection_accept: { lib: "rdma", params: ["ptr", "ptr", "u8"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connection_reject(struct doca_rdma_connection *rdma_connection);
  doca_rdma_connection_reject: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connection_disconnect(struct doca_rdma_connection *rdma_connection);
  doca_rdma_connection_disconnect: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connection_set_user_data(struct doca_rdma_connection *rdma_connection, union doca_data connection_user_data);
  doca_rdma_connection_set_user_data: { lib: "rdma", params: ["ptr", "u64"], result: "i32", optional: true },
  // doca_error_t doca_rdma_connection_get_id(const struct doca_rdma_connection *rdma_connection, uint32_t *connection_id);
  doca_rdma_connection_get_id: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_set_connection_state_callbacks(struct doca_rdma *rdma, doca_rdma_connection_request_cb_t, doca_rdma_connection_established_cb_t, doca_rdma_connection_failure_cb_t, doca_rdma_connection_disconnection_cb_t);
  doca_rdma_set_connection_state_callbacks: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr", "ptr"], result: "i32", optional: true },

  // ---------------------------------------------------------------- capabilities (devinfo)
  // doca_error_t doca_rdma_cap_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size);
  doca_rdma_cap_get_max_message_size: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);
  doca_rdma_cap_get_max_send_queue_size: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);
  doca_rdma_cap_get_max_recv_queue_size: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_get_max_send_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_send_buf_list_len);
  doca_rdma_cap_get_max_send_buf_list_len: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_receive_get_max_dst_buf_list_len(const struct doca_devinfo *devinfo, enum doca_rdma_transport_type transport_type, uint32_t *max_buf_list_len);
  doca_rdma_cap_task_receive_get_max_dst_buf_list_len: { lib: "rdma", params: ["ptr", "i32", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_get_gid_table_size(const struct doca_devinfo *devinfo, uint32_t *gid_table_size);
  doca_rdma_cap_get_gid_table_size: { lib: "rdma", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_transport_type_is_supported(const struct doca_devinfo *devinfo, enum doca_rdma_transport_type transport_type);
  doca_rdma_cap_transport_type_is_supported: { lib: "rdma", params: ["ptr", "i32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_write_is_supported(const struct doca_devinfo *devinfo);
  doca_rdma_cap_task_write_is_supported: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_read_is_supported(const struct doca_devinfo *devinfo);
  doca_rdma_cap_task_read_is_supported: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_send_is_supported(const struct doca_devinfo *devinfo);
  doca_rdma_cap_task_send_is_supported: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_receive_is_supported(const struct doca_devinfo *devinfo);
  doca_rdma_cap_task_receive_is_supported: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_atomic_cmp_swp_is_supported(const struct doca_devinfo *devinfo);
  doca_rdma_cap_task_atomic_cmp_swp_is_supported: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_rdma_cap_task_atomic_fetch_add_is_supported(const struct doca_devinfo *devinfo);
  doca_rdma_cap_task_atomic_fetch_add_is_supported: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },

  // ---------------------------------------------------------------- tasks (doca_rdma.h)
  // doca_error_t doca_rdma_task_send_set_conf(struct doca_rdma *rdma, doca_rdma_task_send_completion_cb_t successful_task_completion_cb, doca_rdma_task_send_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_send_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_send_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, const struct doca_buf *src_buf, union doca_data user_data, struct doca_rdma_task_send **task);
  doca_rdma_task_send_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_send_as_task(struct doca_rdma_task_send *task);
  doca_rdma_task_send_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_send_imm_set_conf(struct doca_rdma *rdma, doca_rdma_task_send_imm_completion_cb_t successful_task_completion_cb, doca_rdma_task_send_imm_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_send_imm_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_send_imm_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, const struct doca_buf *src_buf, doca_be32_t immediate_data, union doca_data user_data, struct doca_rdma_task_send_imm **task);
  doca_rdma_task_send_imm_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_send_imm_as_task(struct doca_rdma_task_send_imm *task);
  doca_rdma_task_send_imm_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_receive_set_conf(struct doca_rdma *rdma, doca_rdma_task_receive_completion_cb_t successful_task_completion_cb, doca_rdma_task_receive_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_receive_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_receive_allocate_init(struct doca_rdma *rdma, struct doca_buf *dst_buf, union doca_data user_data, struct doca_rdma_task_receive **task);
  doca_rdma_task_receive_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_receive_as_task(struct doca_rdma_task_receive *task);
  doca_rdma_task_receive_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // enum doca_rdma_opcode doca_rdma_task_receive_get_result_opcode(const struct doca_rdma_task_receive *task);
  doca_rdma_task_receive_get_result_opcode: { lib: "rdma", params: ["ptr"], result: "i32", optional: true },
  // uint32_t doca_rdma_task_receive_get_result_len(const struct doca_rdma_task_receive *task);
  doca_rdma_task_receive_get_result_len: { lib: "rdma", params: ["ptr"], result: "u32", optional: true },
  // doca_be32_t doca_rdma_task_receive_get_result_immediate_data(const struct doca_rdma_task_receive *task);
  doca_rdma_task_receive_get_result_immediate_data: { lib: "rdma", params: ["ptr"], result: "u32", optional: true },
  // const struct doca_rdma_connection *doca_rdma_task_receive_get_result_rdma_connection(const struct doca_rdma_task_receive *task);
  doca_rdma_task_receive_get_result_rdma_connection: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_write_set_conf(struct doca_rdma *rdma, doca_rdma_task_write_completion_cb_t successful_task_completion_cb, doca_rdma_task_write_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_write_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_write_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, const struct doca_buf *src_buf, struct doca_buf *dst_buf, union doca_data user_data, struct doca_rdma_task_write **task);
  doca_rdma_task_write_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_write_as_task(struct doca_rdma_task_write *task);
  doca_rdma_task_write_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_write_imm_set_conf(struct doca_rdma *rdma, doca_rdma_task_write_imm_completion_cb_t successful_task_completion_cb, doca_rdma_task_write_imm_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_write_imm_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_write_imm_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, const struct doca_buf *src_buf, struct doca_buf *dst_buf, doca_be32_t immediate_data, union doca_data user_data, struct doca_rdma_task_write_imm **task);
  doca_rdma_task_write_imm_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr", "u32", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_write_imm_as_task(struct doca_rdma_task_write_imm *task);
  doca_rdma_task_write_imm_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_read_set_conf(struct doca_rdma *rdma, doca_rdma_task_read_completion_cb_t successful_task_completion_cb, doca_rdma_task_read_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_read_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_read_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, const struct doca_buf *src_buf, struct doca_buf *dst_buf, union doca_data user_data, struct doca_rdma_task_read **task);
  doca_rdma_task_read_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_read_as_task(struct doca_rdma_task_read *task);
  doca_rdma_task_read_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_atomic_cmp_swp_set_conf(struct doca_rdma *rdma, doca_rdma_task_atomic_cmp_swp_completion_cb_t successful_task_completion_cb, doca_rdma_task_atomic_cmp_swp_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_atomic_cmp_swp_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_atomic_cmp_swp_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, struct doca_buf *dst_buf, struct doca_buf *result_buf, uint64_t cmp_data, uint64_t swap_data, union doca_data user_data, struct doca_rdma_task_atomic_cmp_swp **task);
  doca_rdma_task_atomic_cmp_swp_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr", "u64", "u64", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_atomic_cmp_swp_as_task(struct doca_rdma_task_atomic_cmp_swp *task);
  doca_rdma_task_atomic_cmp_swp_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_rdma_task_atomic_fetch_add_set_conf(struct doca_rdma *rdma, doca_rdma_task_atomic_fetch_add_completion_cb_t successful_task_completion_cb, doca_rdma_task_atomic_fetch_add_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_rdma_task_atomic_fetch_add_set_conf: { lib: "rdma", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_rdma_task_atomic_fetch_add_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, struct doca_buf *dst_buf, struct doca_buf *result_buf, uint64_t add_data, union doca_data user_data, struct doca_rdma_task_atomic_fetch_add **task);
  doca_rdma_task_atomic_fetch_add_allocate_init: { lib: "rdma", params: ["ptr", "ptr", "ptr", "ptr", "u64", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_rdma_task_atomic_fetch_add_as_task(struct doca_rdma_task_atomic_fetch_add *task);
  doca_rdma_task_atomic_fetch_add_as_task: { lib: "rdma", params: ["ptr"], result: "ptr", optional: true },
} as const satisfies TypedSymbolTable;

/** libdoca_compress (optional: a DOCA install may lack it): every function of DOCA 3.x's doca_compress.h, plus the software device's backend diagnostic. */
export const COMPRESS_SYMBOLS = {
  // doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **compress);
  doca_compress_create: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_destroy(struct doca_compress *compress);
  doca_compress_destroy: { lib: "compress", params: ["ptr"], result: "i32", optional: true },
  // struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress);
  doca_compress_as_ctx: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks);
  doca_compress_cap_get_max_num_tasks: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_compress_deflate_is_supported(const struct doca_devinfo *devinfo);
  doca_compress_cap_task_compress_deflate_is_supported: { lib: "compress", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_compress_deflate_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);
  doca_compress_cap_task_compress_deflate_get_max_buf_size: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_compress_deflate_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);
  doca_compress_cap_task_compress_deflate_get_max_buf_list_len: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_compress_deflate_set_conf( struct doca_compress *compress, doca_compress_task_compress_deflate_completion_cb_t task_completion_cb, doca_compress_task_compress_deflate_completion_cb_t task_error_cb, uint32_t num_tasks);
  doca_compress_task_compress_deflate_set_conf: { lib: "compress", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_compress_deflate_alloc_init(struct doca_compress *compress, struct doca_buf const *src_buff, struct doca_buf *dst_buff, union doca_data user_data, struct doca_compress_task_compress_deflate **task);
  doca_compress_task_compress_deflate_alloc_init: { lib: "compress", params: ["ptr", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_compress_task_compress_deflate_as_task(struct doca_compress_task_compress_deflate *task);
  doca_compress_task_compress_deflate_as_task: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_compress_deflate_set_src(struct doca_compress_task_compress_deflate *task, struct doca_buf const *src_buff);
  doca_compress_task_compress_deflate_set_src: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf const *doca_compress_task_compress_deflate_get_src( const struct doca_compress_task_compress_deflate *task);
  doca_compress_task_compress_deflate_get_src: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_compress_deflate_set_dst(struct doca_compress_task_compress_deflate *task, struct doca_buf *dst_buff);
  doca_compress_task_compress_deflate_set_dst: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf *doca_compress_task_compress_deflate_get_dst(const struct doca_compress_task_compress_deflate *task);
  doca_compress_task_compress_deflate_get_dst: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // uint32_t doca_compress_task_compress_deflate_get_crc_cs(const struct doca_compress_task_compress_deflate *task);
  doca_compress_task_compress_deflate_get_crc_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *task);
  doca_compress_task_compress_deflate_get_adler_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_deflate_is_supported(const struct doca_devinfo *devinfo);
  doca_compress_cap_task_decompress_deflate_is_supported: { lib: "compress", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_deflate_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);
  doca_compress_cap_task_decompress_deflate_get_max_buf_size: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_deflate_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);
  doca_compress_cap_task_decompress_deflate_get_max_buf_list_len: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_decompress_deflate_set_conf( struct doca_compress *compress, doca_compress_task_decompress_deflate_completion_cb_t task_completion_cb, doca_compress_task_decompress_deflate_completion_cb_t task_error_cb, uint32_t num_tasks);
  doca_compress_task_decompress_deflate_set_conf: { lib: "compress", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_decompress_deflate_alloc_init(struct doca_compress *compress, struct doca_buf const *src_buff, struct doca_buf *dst_buff, union doca_data user_data, struct doca_compress_task_decompress_deflate **task);
  doca_compress_task_decompress_deflate_alloc_init: { lib: "compress", params: ["ptr", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_compress_task_decompress_deflate_as_task(struct doca_compress_task_decompress_deflate *task);
  doca_compress_task_decompress_deflate_as_task: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_decompress_deflate_set_src(struct doca_compress_task_decompress_deflate *task, struct doca_buf const *src_buff);
  doca_compress_task_decompress_deflate_set_src: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf const *doca_compress_task_decompress_deflate_get_src( const struct doca_compress_task_decompress_deflate *task);
  doca_compress_task_decompress_deflate_get_src: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_decompress_deflate_set_dst(struct doca_compress_task_decompress_deflate *task, struct doca_buf *dst_buff);
  doca_compress_task_decompress_deflate_set_dst: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf *doca_compress_task_decompress_deflate_get_dst(const struct doca_compress_task_decompress_deflate *task);
  doca_compress_task_decompress_deflate_get_dst: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // uint32_t doca_compress_task_decompress_deflate_get_crc_cs(const struct doca_compress_task_decompress_deflate *task);
  doca_compress_task_decompress_deflate_get_crc_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *task);
  doca_compress_task_decompress_deflate_get_adler_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_lz4_stream_is_supported(const struct doca_devinfo *devinfo);
  doca_compress_cap_task_decompress_lz4_stream_is_supported: { lib: "compress", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);
  doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_lz4_stream_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);
  doca_compress_cap_task_decompress_lz4_stream_get_max_buf_list_len: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_decompress_lz4_stream_set_conf( struct doca_compress *compress, doca_compress_task_decompress_lz4_stream_completion_cb_t task_completion_cb, doca_compress_task_decompress_lz4_stream_completion_cb_t task_error_cb, uint32_t num_tasks);
  doca_compress_task_decompress_lz4_stream_set_conf: { lib: "compress", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_decompress_lz4_stream_alloc_init(struct doca_compress *compress, uint8_t has_block_checksum, uint8_t are_blocks_independent, struct doca_buf const *src_buff, struct doca_buf *dst_buff, union doca_data user_data, struct doca_compress_task_decompress_lz4_stream **task);
  doca_compress_task_decompress_lz4_stream_alloc_init: { lib: "compress", params: ["ptr", "u8", "u8", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_compress_task_decompress_lz4_stream_as_task( struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_as_task: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_decompress_lz4_stream_set_has_block_checksum( struct doca_compress_task_decompress_lz4_stream *task, uint8_t has_block_checksum);
  doca_compress_task_decompress_lz4_stream_set_has_block_checksum: { lib: "compress", params: ["ptr", "u8"], result: "void", optional: true },
  // uint8_t doca_compress_task_decompress_lz4_stream_get_has_block_checksum( const struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_get_has_block_checksum: { lib: "compress", params: ["ptr"], result: "u8", optional: true },
  // void doca_compress_task_decompress_lz4_stream_set_are_blocks_independent( struct doca_compress_task_decompress_lz4_stream *task, uint8_t are_blocks_independent);
  doca_compress_task_decompress_lz4_stream_set_are_blocks_independent: { lib: "compress", params: ["ptr", "u8"], result: "void", optional: true },
  // uint8_t doca_compress_task_decompress_lz4_stream_get_are_blocks_independent( const struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_get_are_blocks_independent: { lib: "compress", params: ["ptr"], result: "u8", optional: true },
  // void doca_compress_task_decompress_lz4_stream_set_src(struct doca_compress_task_decompress_lz4_stream *task, struct doca_buf const *src_buff);
  doca_compress_task_decompress_lz4_stream_set_src: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf const *doca_compress_task_decompress_lz4_stream_get_src( const struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_get_src: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_decompress_lz4_stream_set_dst(struct doca_compress_task_decompress_lz4_stream *task, struct doca_buf *dst_buff);
  doca_compress_task_decompress_lz4_stream_set_dst: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf *doca_compress_task_decompress_lz4_stream_get_dst( const struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_get_dst: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // uint32_t doca_compress_task_decompress_lz4_stream_get_crc_cs( const struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_get_crc_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // uint32_t doca_compress_task_decompress_lz4_stream_get_xxh_cs( const struct doca_compress_task_decompress_lz4_stream *task);
  doca_compress_task_decompress_lz4_stream_get_xxh_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_lz4_block_is_supported(const struct doca_devinfo *devinfo);
  doca_compress_cap_task_decompress_lz4_block_is_supported: { lib: "compress", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);
  doca_compress_cap_task_decompress_lz4_block_get_max_buf_size: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_cap_task_decompress_lz4_block_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);
  doca_compress_cap_task_decompress_lz4_block_get_max_buf_list_len: { lib: "compress", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_decompress_lz4_block_set_conf( struct doca_compress *compress, doca_compress_task_decompress_lz4_block_completion_cb_t task_completion_cb, doca_compress_task_decompress_lz4_block_completion_cb_t task_error_cb, uint32_t num_tasks);
  doca_compress_task_decompress_lz4_block_set_conf: { lib: "compress", params: ["ptr", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_compress_task_decompress_lz4_block_alloc_init(struct doca_compress *compress, struct doca_buf const *src_buff, struct doca_buf *dst_buff, union doca_data user_data, struct doca_compress_task_decompress_lz4_block **task);
  doca_compress_task_decompress_lz4_block_alloc_init: { lib: "compress", params: ["ptr", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_compress_task_decompress_lz4_block_as_task(struct doca_compress_task_decompress_lz4_block *task);
  doca_compress_task_decompress_lz4_block_as_task: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_decompress_lz4_block_set_src(struct doca_compress_task_decompress_lz4_block *task, struct doca_buf const *src_buff);
  doca_compress_task_decompress_lz4_block_set_src: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf const *doca_compress_task_decompress_lz4_block_get_src( const struct doca_compress_task_decompress_lz4_block *task);
  doca_compress_task_decompress_lz4_block_get_src: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // void doca_compress_task_decompress_lz4_block_set_dst(struct doca_compress_task_decompress_lz4_block *task, struct doca_buf *dst_buff);
  doca_compress_task_decompress_lz4_block_set_dst: { lib: "compress", params: ["ptr", "ptr"], result: "void", optional: true },
  // struct doca_buf *doca_compress_task_decompress_lz4_block_get_dst( const struct doca_compress_task_decompress_lz4_block *task);
  doca_compress_task_decompress_lz4_block_get_dst: { lib: "compress", params: ["ptr"], result: "ptr", optional: true },
  // uint32_t doca_compress_task_decompress_lz4_block_get_crc_cs(const struct doca_compress_task_decompress_lz4_block *task);
  doca_compress_task_decompress_lz4_block_get_crc_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // uint32_t doca_compress_task_decompress_lz4_block_get_xxh_cs(const struct doca_compress_task_decompress_lz4_block *task);
  doca_compress_task_decompress_lz4_block_get_xxh_cs: { lib: "compress", params: ["ptr"], result: "u32", optional: true },
  // const char *doca_sim_compress_backend_missing(void);
  doca_sim_compress_backend_missing: { lib: "compress", params: [], result: "ptr", optional: true },
} as const satisfies TypedSymbolTable;

/** libdoca_sha (optional): every function of DOCA 3.x's doca_sha.h, plus the software device's backend diagnostic. */
export const SHA_SYMBOLS = {
  // doca_error_t doca_sha_create(struct doca_dev *dev, struct doca_sha **sha);
  doca_sha_create: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_destroy(struct doca_sha *sha);
  doca_sha_destroy: { lib: "sha", params: ["ptr"], result: "i32", optional: true },
  // struct doca_ctx *doca_sha_as_ctx(struct doca_sha *sha);
  doca_sha_as_ctx: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_sha_cap_task_hash_get_supported(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm);
  doca_sha_cap_task_hash_get_supported: { lib: "sha", params: ["ptr", "i32"], result: "i32", optional: true },
  // doca_error_t doca_sha_cap_task_partial_hash_get_supported(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm);
  doca_sha_cap_task_partial_hash_get_supported: { lib: "sha", params: ["ptr", "i32"], result: "i32", optional: true },
  // doca_error_t doca_sha_cap_get_max_list_buf_num_elem(struct doca_devinfo const *devinfo, uint32_t *max_list_num_elem);
  doca_sha_cap_get_max_list_buf_num_elem: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_cap_get_max_src_buf_size(struct doca_devinfo const *devinfo, uint64_t *max_buf_size);
  doca_sha_cap_get_max_src_buf_size: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_cap_get_min_dst_buf_size(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm, uint32_t *min_buf_size);
  doca_sha_cap_get_min_dst_buf_size: { lib: "sha", params: ["ptr", "i32", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_cap_get_partial_hash_block_size(struct doca_devinfo const *devinfo, enum doca_sha_algorithm algorithm, uint32_t *partial_block_size);
  doca_sha_cap_get_partial_hash_block_size: { lib: "sha", params: ["ptr", "i32", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_hash_set_conf(struct doca_sha *sha, doca_sha_task_hash_completion_cb_t task_completion_cb, doca_sha_task_hash_completion_cb_t task_error_cb, uint8_t log_num_tasks);
  doca_sha_task_hash_set_conf: { lib: "sha", params: ["ptr", "ptr", "ptr", "u8"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_hash_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm, struct doca_buf const *src_buf, struct doca_buf *dst_buf, union doca_data user_data, struct doca_sha_task_hash **task);
  doca_sha_task_hash_alloc_init: { lib: "sha", params: ["ptr", "i32", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_hash_set_src(struct doca_sha_task_hash *task, struct doca_buf const *src_buf);
  doca_sha_task_hash_set_src: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // struct doca_buf const *doca_sha_task_hash_get_src(struct doca_sha_task_hash const *task);
  doca_sha_task_hash_get_src: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_sha_task_hash_set_dst(struct doca_sha_task_hash *task, struct doca_buf *dst_buf);
  doca_sha_task_hash_set_dst: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // struct doca_buf const *doca_sha_task_hash_get_dst(struct doca_sha_task_hash const *task);
  doca_sha_task_hash_get_dst: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_sha_task_hash_set_algorithm(struct doca_sha_task_hash *task, enum doca_sha_algorithm algorithm);
  doca_sha_task_hash_set_algorithm: { lib: "sha", params: ["ptr", "i32"], result: "i32", optional: true },
  // enum doca_sha_algorithm doca_sha_task_hash_get_algorithm(struct doca_sha_task_hash const *task);
  doca_sha_task_hash_get_algorithm: { lib: "sha", params: ["ptr"], result: "i32", optional: true },
  // struct doca_task *doca_sha_task_hash_as_task(struct doca_sha_task_hash *task);
  doca_sha_task_hash_as_task: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_sha_task_partial_hash_set_conf(struct doca_sha *sha, doca_sha_task_partial_hash_completion_cb_t task_completion_cb, doca_sha_task_partial_hash_completion_cb_t task_error_cb, uint8_t log_num_tasks);
  doca_sha_task_partial_hash_set_conf: { lib: "sha", params: ["ptr", "ptr", "ptr", "u8"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_partial_hash_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm, struct doca_buf const *src_buf, struct doca_buf *dst_buf, union doca_data user_data, struct doca_sha_task_partial_hash **task);
  doca_sha_task_partial_hash_alloc_init: { lib: "sha", params: ["ptr", "i32", "ptr", "ptr", "u64", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_partial_hash_reset(struct doca_sha_task_partial_hash *task);
  doca_sha_task_partial_hash_reset: { lib: "sha", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_partial_hash_set_src(struct doca_sha_task_partial_hash *task, struct doca_buf const *src_buf);
  doca_sha_task_partial_hash_set_src: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // struct doca_buf const *doca_sha_task_partial_hash_get_src(struct doca_sha_task_partial_hash const *task);
  doca_sha_task_partial_hash_get_src: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_sha_task_partial_hash_set_dst(struct doca_sha_task_partial_hash *task, struct doca_buf *dst_buf);
  doca_sha_task_partial_hash_set_dst: { lib: "sha", params: ["ptr", "ptr"], result: "i32", optional: true },
  // struct doca_buf const *doca_sha_task_partial_hash_get_dst(struct doca_sha_task_partial_hash const *task);
  doca_sha_task_partial_hash_get_dst: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // doca_error_t doca_sha_task_partial_hash_set_algorithm(struct doca_sha_task_partial_hash *task, enum doca_sha_algorithm algorithm);
  doca_sha_task_partial_hash_set_algorithm: { lib: "sha", params: ["ptr", "i32"], result: "i32", optional: true },
  // enum doca_sha_algorithm doca_sha_task_partial_hash_get_algorithm(struct doca_sha_task_partial_hash const *task);
  doca_sha_task_partial_hash_get_algorithm: { lib: "sha", params: ["ptr"], result: "i32", optional: true },
  // doca_error_t doca_sha_task_partial_hash_set_is_final_buf(struct doca_sha_task_partial_hash *task);
  doca_sha_task_partial_hash_set_is_final_buf: { lib: "sha", params: ["ptr"], result: "i32", optional: true },
  // uint8_t doca_sha_task_partial_hash_get_is_final(struct doca_sha_task_partial_hash const *task);
  doca_sha_task_partial_hash_get_is_final: { lib: "sha", params: ["ptr"], result: "u8", optional: true },
  // uint8_t doca_sha_task_partial_hash_get_has_result(struct doca_sha_task_partial_hash const *task);
  doca_sha_task_partial_hash_get_has_result: { lib: "sha", params: ["ptr"], result: "u8", optional: true },
  // struct doca_task *doca_sha_task_partial_hash_as_task(struct doca_sha_task_partial_hash *task);
  doca_sha_task_partial_hash_as_task: { lib: "sha", params: ["ptr"], result: "ptr", optional: true },
  // const char *doca_sim_sha_backend_missing(void);
  doca_sim_sha_backend_missing: { lib: "sha", params: [], result: "ptr", optional: true },
} as const satisfies TypedSymbolTable;

// ===================================================================================================================
// Erasure coding and AES-GCM (issue 30): libdoca_erasure_coding and libdoca_aes_gcm, loaded only when present beside
// the others. Every entry is optional; ffi/doca/erasure_coding and ffi/doca/aes_gcm require what they use (requireFns
// → DocaError NOT_SUPPORTED naming the missing function). Prototypes: DOCA 3.x doca_erasure_coding.h, doca_aes_gcm.h
// (typed task pointers are plain "ptr": the task kinds only pass them to their _as_task).
// ===================================================================================================================
export const ACCEL_EA_SYMBOLS = {
  // doca_error_t doca_ec_create(struct doca_dev *dev, struct doca_ec **ec);
  doca_ec_create: { lib: "erasure_coding", params: ["ptr<doca_dev>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_destroy(struct doca_ec *ec);
  doca_ec_destroy: { lib: "erasure_coding", params: ["ptr<doca_ec>"], result: "i32", optional: true },
  // struct doca_ctx *doca_ec_as_ctx(struct doca_ec *ec);
  doca_ec_as_ctx: { lib: "erasure_coding", params: ["ptr<doca_ec>"], result: "ptr<doca_ctx>", optional: true },
  // doca_error_t doca_ec_cap_get_max_block_size(const struct doca_devinfo *devinfo, uint64_t *max_block_size);
  doca_ec_cap_get_max_block_size: { lib: "erasure_coding", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);
  doca_ec_cap_get_max_buf_list_len: { lib: "erasure_coding", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_cap_task_create_is_supported(const struct doca_devinfo *devinfo);
  doca_ec_cap_task_create_is_supported: { lib: "erasure_coding", params: ["ptr<doca_devinfo>"], result: "i32", optional: true },
  // doca_error_t doca_ec_cap_task_recover_is_supported(const struct doca_devinfo *devinfo);
  doca_ec_cap_task_recover_is_supported: { lib: "erasure_coding", params: ["ptr<doca_devinfo>"], result: "i32", optional: true },
  // doca_error_t doca_ec_matrix_create(struct doca_ec *ec, enum doca_ec_matrix_type type, size_t data_block_count, size_t rdnc_block_count, struct doca_ec_matrix **matrix);
  doca_ec_matrix_create: { lib: "erasure_coding", params: ["ptr<doca_ec>", "i32", "usize", "usize", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_matrix_create_from_raw(struct doca_ec *ec, uint8_t *data, size_t data_block_count, size_t rdnc_block_count, struct doca_ec_matrix **matrix);
  doca_ec_matrix_create_from_raw: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr", "usize", "usize", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_matrix_create_update(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix, uint32_t update_indices[], size_t n_updates, struct doca_ec_matrix **matrix);
  doca_ec_matrix_create_update: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr<doca_ec_matrix>", "ptr", "usize", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_matrix_create_recover(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix, uint32_t missing_indices[], size_t n_missing, struct doca_ec_matrix **matrix);
  doca_ec_matrix_create_recover: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr<doca_ec_matrix>", "ptr", "usize", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_ec_matrix_destroy(struct doca_ec_matrix *matrix);
  doca_ec_matrix_destroy: { lib: "erasure_coding", params: ["ptr<doca_ec_matrix>"], result: "i32", optional: true },
  // doca_error_t doca_ec_task_create_set_conf(struct doca_ec *ec, doca_ec_task_create_completion_cb_t successful_task_completion_cb, doca_ec_task_create_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_ec_task_create_set_conf: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_ec_task_create_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix, const struct doca_buf *original_data_blocks, struct doca_buf *rdnc_blocks, union doca_data user_data, struct doca_ec_task_create **task);
  doca_ec_task_create_allocate_init: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr<doca_ec_matrix>", "ptr<doca_buf>", "ptr<doca_buf>", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_ec_task_create_as_task(struct doca_ec_task_create *task);
  doca_ec_task_create_as_task: { lib: "erasure_coding", params: ["ptr"], result: "ptr<doca_task>", optional: true },
  // void doca_ec_task_create_set_coding_matrix(struct doca_ec_task_create *task, const struct doca_ec_matrix *coding_matrix);
  doca_ec_task_create_set_coding_matrix: { lib: "erasure_coding", params: ["ptr", "ptr<doca_ec_matrix>"], result: "void", optional: true },
  // void doca_ec_task_create_set_original_data_blocks(struct doca_ec_task_create *task, const struct doca_buf *original_data_blocks);
  doca_ec_task_create_set_original_data_blocks: { lib: "erasure_coding", params: ["ptr", "ptr<doca_buf>"], result: "void", optional: true },
  // void doca_ec_task_create_set_rdnc_blocks(struct doca_ec_task_create *task, struct doca_buf *rdnc_blocks);
  doca_ec_task_create_set_rdnc_blocks: { lib: "erasure_coding", params: ["ptr", "ptr<doca_buf>"], result: "void", optional: true },
  // doca_error_t doca_ec_task_recover_set_conf(struct doca_ec *ec, doca_ec_task_recover_completion_cb_t successful_task_completion_cb, doca_ec_task_recover_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_ec_task_recover_set_conf: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_ec_task_recover_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *recover_matrix, const struct doca_buf *available_blocks, struct doca_buf *recovered_data_blocks, union doca_data user_data, struct doca_ec_task_recover **task);
  doca_ec_task_recover_allocate_init: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr<doca_ec_matrix>", "ptr<doca_buf>", "ptr<doca_buf>", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_ec_task_recover_as_task(struct doca_ec_task_recover *task);
  doca_ec_task_recover_as_task: { lib: "erasure_coding", params: ["ptr"], result: "ptr<doca_task>", optional: true },
  // doca_error_t doca_ec_task_update_set_conf(struct doca_ec *ec, doca_ec_task_update_completion_cb_t successful_task_completion_cb, doca_ec_task_update_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_ec_task_update_set_conf: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_ec_task_update_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *update_matrix, const struct doca_buf *original_updated_and_rdnc_blocks, struct doca_buf *updated_rdnc_blocks, union doca_data user_data, struct doca_ec_task_update **task);
  doca_ec_task_update_allocate_init: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr<doca_ec_matrix>", "ptr<doca_buf>", "ptr<doca_buf>", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_ec_task_update_as_task(struct doca_ec_task_update *task);
  doca_ec_task_update_as_task: { lib: "erasure_coding", params: ["ptr"], result: "ptr<doca_task>", optional: true },
  // doca_error_t doca_ec_task_galois_mul_set_conf(struct doca_ec *ec, doca_ec_task_galois_mul_completion_cb_t successful_task_completion_cb, doca_ec_task_galois_mul_completion_cb_t error_task_completion_cb, uint32_t num_tasks);
  doca_ec_task_galois_mul_set_conf: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_ec_task_galois_mul_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix, const struct doca_buf *src_buf, struct doca_buf *dst_buf, union doca_data user_data, struct doca_ec_task_galois_mul **task);
  doca_ec_task_galois_mul_allocate_init: { lib: "erasure_coding", params: ["ptr<doca_ec>", "ptr<doca_ec_matrix>", "ptr<doca_buf>", "ptr<doca_buf>", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_ec_task_galois_mul_as_task(struct doca_ec_task_galois_mul *task);
  doca_ec_task_galois_mul_as_task: { lib: "erasure_coding", params: ["ptr"], result: "ptr<doca_task>", optional: true },

  // doca_error_t doca_aes_gcm_create(struct doca_dev *dev, struct doca_aes_gcm **aes_gcm);
  doca_aes_gcm_create: { lib: "aes_gcm", params: ["ptr<doca_dev>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_destroy(struct doca_aes_gcm *aes_gcm);
  doca_aes_gcm_destroy: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>"], result: "i32", optional: true },
  // struct doca_ctx *doca_aes_gcm_as_ctx(struct doca_aes_gcm *aes_gcm);
  doca_aes_gcm_as_ctx: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>"], result: "ptr<doca_ctx>", optional: true },
  // doca_error_t doca_aes_gcm_key_create(struct doca_aes_gcm *aes_gcm, const void *raw_key, enum doca_aes_gcm_key_type raw_key_type, struct doca_aes_gcm_key **key);
  doca_aes_gcm_key_create: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>", "ptr<void>", "i32", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_key_destroy(struct doca_aes_gcm_key *key);
  doca_aes_gcm_key_destroy: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm_key>"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_cap_task_encrypt_is_supported(const struct doca_devinfo *devinfo);
  doca_aes_gcm_cap_task_encrypt_is_supported: { lib: "aes_gcm", params: ["ptr<doca_devinfo>"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_cap_task_encrypt_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);
  doca_aes_gcm_cap_task_encrypt_get_max_buf_size: { lib: "aes_gcm", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_cap_task_encrypt_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);
  doca_aes_gcm_cap_task_encrypt_get_max_list_buf_num_elem: { lib: "aes_gcm", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_task_encrypt_set_conf(struct doca_aes_gcm *aes_gcm, doca_aes_gcm_task_encrypt_completion_cb_t task_completion_cb, doca_aes_gcm_task_encrypt_completion_cb_t task_error_cb, uint32_t num_tasks);
  doca_aes_gcm_task_encrypt_set_conf: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_task_encrypt_alloc_init(struct doca_aes_gcm *aes_gcm, struct doca_buf const *src_buff, struct doca_buf *dst_buff, struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t iv_length, uint32_t tag_size, uint32_t aad_size, union doca_data user_data, struct doca_aes_gcm_task_encrypt **task);
  doca_aes_gcm_task_encrypt_alloc_init: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>", "ptr<doca_buf>", "ptr<doca_buf>", "ptr<doca_aes_gcm_key>", "ptr", "u32", "u32", "u32", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_aes_gcm_task_encrypt_as_task(struct doca_aes_gcm_task_encrypt *task);
  doca_aes_gcm_task_encrypt_as_task: { lib: "aes_gcm", params: ["ptr"], result: "ptr<doca_task>", optional: true },
  // void doca_aes_gcm_task_encrypt_set_src(struct doca_aes_gcm_task_encrypt *task, struct doca_buf const *src_buff);
  doca_aes_gcm_task_encrypt_set_src: { lib: "aes_gcm", params: ["ptr", "ptr<doca_buf>"], result: "void", optional: true },
  // void doca_aes_gcm_task_encrypt_set_dst(struct doca_aes_gcm_task_encrypt *task, struct doca_buf *dst_buff);
  doca_aes_gcm_task_encrypt_set_dst: { lib: "aes_gcm", params: ["ptr", "ptr<doca_buf>"], result: "void", optional: true },
  // void doca_aes_gcm_task_encrypt_set_key(struct doca_aes_gcm_task_encrypt *task, struct doca_aes_gcm_key *key);
  doca_aes_gcm_task_encrypt_set_key: { lib: "aes_gcm", params: ["ptr", "ptr<doca_aes_gcm_key>"], result: "void", optional: true },
  // void doca_aes_gcm_task_encrypt_set_iv(struct doca_aes_gcm_task_encrypt *task, const uint8_t *iv, uint32_t iv_length);
  doca_aes_gcm_task_encrypt_set_iv: { lib: "aes_gcm", params: ["ptr", "ptr", "u32"], result: "void", optional: true },
  // void doca_aes_gcm_task_encrypt_set_tag_size(struct doca_aes_gcm_task_encrypt *task, uint32_t tag_size);
  doca_aes_gcm_task_encrypt_set_tag_size: { lib: "aes_gcm", params: ["ptr", "u32"], result: "void", optional: true },
  // void doca_aes_gcm_task_encrypt_set_aad_size(struct doca_aes_gcm_task_encrypt *task, uint32_t aad_size);
  doca_aes_gcm_task_encrypt_set_aad_size: { lib: "aes_gcm", params: ["ptr", "u32"], result: "void", optional: true },
  // doca_error_t doca_aes_gcm_cap_task_decrypt_is_supported(const struct doca_devinfo *devinfo);
  doca_aes_gcm_cap_task_decrypt_is_supported: { lib: "aes_gcm", params: ["ptr<doca_devinfo>"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_cap_task_decrypt_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);
  doca_aes_gcm_cap_task_decrypt_get_max_buf_size: { lib: "aes_gcm", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_cap_task_decrypt_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);
  doca_aes_gcm_cap_task_decrypt_get_max_list_buf_num_elem: { lib: "aes_gcm", params: ["ptr<doca_devinfo>", "ptr"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_task_decrypt_set_conf(struct doca_aes_gcm *aes_gcm, doca_aes_gcm_task_decrypt_completion_cb_t task_completion_cb, doca_aes_gcm_task_decrypt_completion_cb_t task_error_cb, uint32_t num_tasks);
  doca_aes_gcm_task_decrypt_set_conf: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>", "ptr", "ptr", "u32"], result: "i32", optional: true },
  // doca_error_t doca_aes_gcm_task_decrypt_alloc_init(struct doca_aes_gcm *aes_gcm, struct doca_buf const *src_buff, struct doca_buf *dst_buff, struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t iv_length, uint32_t tag_size, uint32_t aad_size, union doca_data user_data, struct doca_aes_gcm_task_decrypt **task);
  doca_aes_gcm_task_decrypt_alloc_init: { lib: "aes_gcm", params: ["ptr<doca_aes_gcm>", "ptr<doca_buf>", "ptr<doca_buf>", "ptr<doca_aes_gcm_key>", "ptr", "u32", "u32", "u32", "u64", "ptr"], result: "i32", optional: true },
  // struct doca_task *doca_aes_gcm_task_decrypt_as_task(struct doca_aes_gcm_task_decrypt *task);
  doca_aes_gcm_task_decrypt_as_task: { lib: "aes_gcm", params: ["ptr"], result: "ptr<doca_task>", optional: true },
  // void doca_aes_gcm_task_decrypt_set_src(struct doca_aes_gcm_task_decrypt *task, struct doca_buf const *src_buff);
  doca_aes_gcm_task_decrypt_set_src: { lib: "aes_gcm", params: ["ptr", "ptr<doca_buf>"], result: "void", optional: true },
  // void doca_aes_gcm_task_decrypt_set_dst(struct doca_aes_gcm_task_decrypt *task, struct doca_buf *dst_buff);
  doca_aes_gcm_task_decrypt_set_dst: { lib: "aes_gcm", params: ["ptr", "ptr<doca_buf>"], result: "void", optional: true },
  // void doca_aes_gcm_task_decrypt_set_key(struct doca_aes_gcm_task_decrypt *task, struct doca_aes_gcm_key *key);
  doca_aes_gcm_task_decrypt_set_key: { lib: "aes_gcm", params: ["ptr", "ptr<doca_aes_gcm_key>"], result: "void", optional: true },
  // void doca_aes_gcm_task_decrypt_set_iv(struct doca_aes_gcm_task_decrypt *task, const uint8_t *iv, uint32_t iv_length);
  doca_aes_gcm_task_decrypt_set_iv: { lib: "aes_gcm", params: ["ptr", "ptr", "u32"], result: "void", optional: true },
  // void doca_aes_gcm_task_decrypt_set_tag_size(struct doca_aes_gcm_task_decrypt *task, uint32_t tag_size);
  doca_aes_gcm_task_decrypt_set_tag_size: { lib: "aes_gcm", params: ["ptr", "u32"], result: "void", optional: true },
  // void doca_aes_gcm_task_decrypt_set_aad_size(struct doca_aes_gcm_task_decrypt *task, uint32_t aad_size);
  doca_aes_gcm_task_decrypt_set_aad_size: { lib: "aes_gcm", params: ["ptr", "u32"], result: "void", optional: true },
  // const char *doca_sim_aes_gcm_status(void);
  doca_sim_aes_gcm_status: { lib: "aes_gcm", params: [], result: "ptr", optional: true },
} as const satisfies TypedSymbolTable;

/** RDMA connection state callbacks (doca_rdma_set_connection_state_callbacks); doca-ts routes by ctx user data. */
export const RDMA_CALLBACKS = {
  // void (*doca_rdma_connection_request_cb_t)(struct doca_rdma_connection *rdma_connection, union doca_data ctx_user_data);
  connectionRequest: { params: ["ptr", "u64"], result: "void" },
  // void (*doca_rdma_connection_{established,failure,disconnection}_cb_t)(struct doca_rdma_connection *rdma_connection, union doca_data connection_user_data, union doca_data ctx_user_data);
  connectionEvent: { params: ["ptr", "u64", "u64"], result: "void" },
} as const;
// ===================================================================================================================
