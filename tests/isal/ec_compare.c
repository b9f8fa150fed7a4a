/*
 * Redundancy from the software device (a DOCA create task, Cauchy matrix) against Intel ISA-L's portable code
 * (gf_gen_cauchy1_matrix + ec_init_tables + ec_encode_data_base from erasure_code/ec_base.c, built from a snapshot of
 * intel/isa-l by tests/sim-ec-isal.test.ts; nothing of ISA-L is in this repository). Prints "ok ..." per geometry and
 * "PASS ec_compare"; exits 1 at the first byte that differs. Also shows that DOCA's Vandermonde formula is not
 * ISA-L's gf_gen_rs_matrix (a "differs" line, expected).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_erasure_coding.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "erasure_code.h"

#define OK(call) \
	do { \
		doca_error_t e_ = (call); \
		if (e_ != DOCA_SUCCESS) { \
			printf("FAIL %s: %s\n", #call, doca_error_get_name(e_)); \
			exit(1); \
		} \
	} while (0)

static int done;

static void cb(struct doca_ec_task_create *t, union doca_data ud, union doca_data cd)
{
	(void)ud;
	(void)cd;
	done = doca_task_get_status(doca_ec_task_create_as_task(t)) == DOCA_SUCCESS ? 1 : -1;
	doca_task_free(doca_ec_task_create_as_task(t));
}

int main(void)
{
	static const int geometry[][3] = {{1, 1, 64}, {2, 1, 64}, {4, 2, 4096}, {8, 4, 1024}, {10, 4, 640}, {12, 3, 192}, {20, 8, 64}};
	struct doca_devinfo **list;
	uint32_t n_dev;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_ec *ec;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	size_t cap = 64 * 4096;
	uint8_t *mem = aligned_alloc(64, cap);

	OK(doca_devinfo_create_list(&list, &n_dev));
	OK(doca_dev_open(list[0], &dev));
	OK(doca_devinfo_destroy_list(list));
	OK(doca_pe_create(&pe));
	OK(doca_ec_create(dev, &ec));
	OK(doca_pe_connect_ctx(pe, doca_ec_as_ctx(ec)));
	OK(doca_ec_task_create_set_conf(ec, cb, cb, 1));
	OK(doca_ctx_start(doca_ec_as_ctx(ec)));
	OK(doca_mmap_create(&mmap));
	OK(doca_mmap_set_memrange(mmap, mem, cap));
	OK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	OK(doca_mmap_add_dev(mmap, dev));
	OK(doca_mmap_start(mmap));
	OK(doca_buf_inventory_create(4, &inv));
	OK(doca_buf_inventory_start(inv));
	for (size_t g = 0; g < sizeof(geometry) / sizeof(geometry[0]); g++) {
		int k = geometry[g][0], m = geometry[g][1], len = geometry[g][2];
		unsigned char a[64 * 64], tables[32 * 64 * 64], *data[64], *coding[64];
		uint8_t *isal = malloc((size_t)m * len);
		struct doca_ec_matrix *matrix;
		struct doca_ec_task_create *task;
		struct doca_buf *src, *dst;
		union doca_data ud = {.u64 = 0};

		for (int i = 0; i < k * len; i++)
			mem[i] = (uint8_t)(rand() >> 7);
		/* ISA-L: rows k..k+m-1 of its (k+m) x k Cauchy matrix are the coding rows */
		gf_gen_cauchy1_matrix(a, k + m, k);
		ec_init_tables(k, m, &a[k * k], tables);
		for (int i = 0; i < k; i++)
			data[i] = mem + (size_t)i * len;
		for (int j = 0; j < m; j++)
			coding[j] = isal + (size_t)j * len;
		ec_encode_data_base(len, k, m, tables, data, coding);
		/* the device */
		OK(doca_ec_matrix_create(ec, DOCA_EC_MATRIX_TYPE_CAUCHY, (size_t)k, (size_t)m, &matrix));
		OK(doca_buf_inventory_buf_get_by_args(inv, mmap, mem, (size_t)k * len, mem, (size_t)k * len, &src));
		OK(doca_buf_inventory_buf_get_by_args(inv, mmap, mem + (size_t)k * len, (size_t)m * len, mem + (size_t)k * len, 0, &dst));
		OK(doca_ec_task_create_allocate_init(ec, matrix, src, dst, ud, &task));
		done = 0;
		OK(doca_task_submit(doca_ec_task_create_as_task(task)));
		while (done == 0)
			doca_pe_progress(pe);
		if (done < 0 || memcmp(mem + (size_t)k * len, isal, (size_t)m * len) != 0) {
			printf("FAIL %d+%d blocks of %d bytes: the device's redundancy differs from ISA-L's\n", k, m, len);
			return 1;
		}
		printf("ok cauchy %d+%d, blocks of %d bytes: byte-identical to ISA-L's gf_gen_cauchy1_matrix + ec_encode_data\n", k, m,
		       len);
		OK(doca_buf_dec_refcount(src, NULL));
		OK(doca_buf_dec_refcount(dst, NULL));
		OK(doca_ec_matrix_destroy(matrix));
		free(isal);
	}
	{
		/* DOCA's Vandermonde (i + 1)^j against ISA-L's gf_gen_rs_matrix (rows of powers of 2^r): not the same code */
		unsigned char a[6 * 4];
		int same = 1;

		gf_gen_rs_matrix(a, 6, 4);
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 2; j++) {
				unsigned char doca = 1;

				for (int p = 0; p < j; p++)
					doca = gf_mul(doca, (unsigned char)(i + 1));
				same &= a[(4 + j) * 4 + i] == doca;
			}
		printf("ok vandermonde: DOCA's formula %s ISA-L's gf_gen_rs_matrix\n", same ? "equals" : "differs from");
	}
	OK(doca_ctx_stop(doca_ec_as_ctx(ec)));
	OK(doca_ec_destroy(ec));
	OK(doca_pe_destroy(pe));
	OK(doca_buf_inventory_destroy(inv));
	OK(doca_mmap_destroy(mmap));
	OK(doca_dev_close(dev));
	free(mem);
	printf("PASS ec_compare\n");
	return 0;
}
