/*
 * GF(2^8) arithmetic for erasure coding, generator 2 over the polynomial 0x11d (x^8 + x^4 + x^3 + x^2 + 1), the field
 * of Intel ISA-L's erasure code and of the Reed-Solomon codes storage systems share. Tables are built once; a region
 * multiply uses one 256-byte row of the full product table per coefficient.
 */
#include <pthread.h>
#include <string.h>

#include "ec_internal.h"

static uint8_t gf_exp[512];
static uint8_t gf_log[256];
static uint8_t gf_table[256][256]; /* gf_table[c][x] = c * x */
static pthread_once_t gf_once = PTHREAD_ONCE_INIT;

static void gf_build(void)
{
	unsigned x = 1;

	for (unsigned i = 0; i < 255; i++) {
		gf_exp[i] = (uint8_t)x;
		gf_log[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	for (unsigned i = 255; i < 512; i++)
		gf_exp[i] = gf_exp[i - 255];
	for (unsigned c = 0; c < 256; c++)
		for (unsigned v = 0; v < 256; v++)
			gf_table[c][v] = (c == 0 || v == 0) ? 0 : gf_exp[gf_log[c] + gf_log[v]];
}

static void gf_ready(void)
{
	pthread_once(&gf_once, gf_build);
}

uint8_t sim_gf_mul(uint8_t a, uint8_t b)
{
	gf_ready();
	return gf_table[a][b];
}

uint8_t sim_gf_inv(uint8_t a)
{
	gf_ready();
	return a == 0 ? 0 : gf_exp[255 - gf_log[a]];
}

uint8_t sim_gf_pow(uint8_t a, unsigned n)
{
	uint8_t r = 1;

	while (n-- > 0)
		r = sim_gf_mul(r, a);
	return r;
}

/*
 * The erasure-coding hot loop: dst ^= c * src, byte by byte through c's row of the product table. Eight bytes a turn,
 * combined in a word: the lookups stay independent and the loop no longer depends on where the linker happens to
 * place it (the byte-at-a-time form ran at half speed after an unrelated change elsewhere in the library moved it).
 */
__attribute__((aligned(64))) void sim_gf_mul_add_region(uint8_t *dst, const uint8_t *src, uint8_t c, size_t len)
{
	const uint8_t *row;
	size_t i = 0;

	if (c == 0)
		return;
	if (c == 1) {
		for (; i < len; i++)
			dst[i] ^= src[i];
		return;
	}
	gf_ready();
	row = gf_table[c];
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ /* byte i of the word is dst[i] (x86-64, aarch64) */
	for (; i + 8 <= len; i += 8) {
		uint64_t word, product = (uint64_t)row[src[i]] | (uint64_t)row[src[i + 1]] << 8 |
					 (uint64_t)row[src[i + 2]] << 16 | (uint64_t)row[src[i + 3]] << 24 |
					 (uint64_t)row[src[i + 4]] << 32 | (uint64_t)row[src[i + 5]] << 40 |
					 (uint64_t)row[src[i + 6]] << 48 | (uint64_t)row[src[i + 7]] << 56;

		memcpy(&word, dst + i, sizeof(word));
		word ^= product;
		memcpy(dst + i, &word, sizeof(word));
	}
#endif
	for (; i < len; i++)
		dst[i] ^= row[src[i]];
}

bool sim_gf_invert(const uint8_t *m, uint8_t *inv, size_t n)
{
	uint8_t work[SIM_EC_MAX_BLOCKS * SIM_EC_MAX_BLOCKS];

	if (n == 0 || n > SIM_EC_MAX_BLOCKS)
		return false;
	memcpy(work, m, n * n);
	memset(inv, 0, n * n);
	for (size_t i = 0; i < n; i++)
		inv[i * n + i] = 1;
	/* Gauss-Jordan: addition is XOR, so no sign or rounding trouble */
	for (size_t col = 0; col < n; col++) {
		size_t pivot = col;
		uint8_t scale;

		while (pivot < n && work[pivot * n + col] == 0)
			pivot++;
		if (pivot == n)
			return false;
		if (pivot != col) {
			for (size_t k = 0; k < n; k++) {
				uint8_t t = work[col * n + k];

				work[col * n + k] = work[pivot * n + k];
				work[pivot * n + k] = t;
				t = inv[col * n + k];
				inv[col * n + k] = inv[pivot * n + k];
				inv[pivot * n + k] = t;
			}
		}
		scale = sim_gf_inv(work[col * n + col]);
		for (size_t k = 0; k < n; k++) {
			work[col * n + k] = sim_gf_mul(work[col * n + k], scale);
			inv[col * n + k] = sim_gf_mul(inv[col * n + k], scale);
		}
		for (size_t row = 0; row < n; row++) {
			uint8_t f = work[row * n + col];

			if (row == col || f == 0)
				continue;
			for (size_t k = 0; k < n; k++) {
				work[row * n + k] ^= sim_gf_mul(f, work[col * n + k]);
				inv[row * n + k] ^= sim_gf_mul(f, inv[col * n + k]);
			}
		}
	}
	return true;
}
