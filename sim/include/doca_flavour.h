/*
 * Software DOCA device: which DOCA release's declarations the headers give. This is the 3.x one; the DOCA 2.7 flavour
 * puts its own doca_flavour.h first on the include path (sim/flavours/2.7/include), and the same headers then declare
 * 2.7's names, constness and codes. Not a DOCA header: the device's way of keeping one set of headers and sources.
 */
#ifndef DOCA_FLAVOUR_H_
#define DOCA_FLAVOUR_H_

/* 3.x: the fast path's task getters take const tasks and the consumer's immediate data is const */
#define DOCA_SIM_TASK_CONST const
#define DOCA_SIM_IMM_CONST const

#endif /* DOCA_FLAVOUR_H_ */
