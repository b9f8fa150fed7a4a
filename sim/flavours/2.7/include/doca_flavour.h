/*
 * Software DOCA device, DOCA 2.7 flavour: first on the include path of a 2.7 build (and of a 2.7 program built against
 * it), so sim/include's headers declare what DOCA 2.7.0085's headers declare: 2.7's comch server names
 * (doca_comch_server_get_device_repr, doca_comch_server_event_connection_register), non-const fast-path task getters,
 * `uint8_t *` immediate data, error codes 0-27 only, and version 2.7.0085.
 */
#ifndef DOCA_FLAVOUR_H_
#define DOCA_FLAVOUR_H_

#define DOCA_SIM_FLAVOUR_2_7 1
#define DOCA_SIM_TASK_CONST
#define DOCA_SIM_IMM_CONST

#endif /* DOCA_FLAVOUR_H_ */
