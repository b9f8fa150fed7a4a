/*
 * TEMPORARY, test harness only (tests/sim-nvidia-storage.test.ts): NVIDIA's storage programs include
 * doca_erasure_coding.h even in their zero-copy flow, which only names the matrix type enum. Used only while
 * sim/include lacks the real declaration (libdoca_erasure_coding is being added on another branch); delete this
 * folder once sim/include/doca_erasure_coding.h is on main. Values as DOCA 3.x's header.
 */
#ifndef HARNESS_DOCA_ERASURE_CODING_SHIM_H_
#define HARNESS_DOCA_ERASURE_CODING_SHIM_H_

enum doca_ec_matrix_type {
	DOCA_EC_MATRIX_TYPE_VANDERMONDE = 1,
	DOCA_EC_MATRIX_TYPE_CAUCHY = 2,
};

#endif
