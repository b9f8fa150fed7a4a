/*
 * Runs doca-ts's call_each machine code (ffi/native/native-call.ts) as the TypeScript does: directly with six arguments,
 * and through its packed entry via libc's bsearch (Deno's route). The bytes come from the command line, so this
 * tests what the TypeScript ships (tests/ffi-completion-ring.test.ts: x86-64 natively, aarch64 under qemu):
 *
 *   call_each HEX PACKED_OFFSET
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "machine_code_page.h"

typedef uint64_t (*call_each_t)(void *fn, uint64_t n, const uint64_t *c0, const uint64_t *c1, const uint64_t *c2,
				uint32_t mask);

static uint64_t seen[3][8];
static unsigned calls;

/* Records its three arguments; returns nonzero for the row whose first argument is 5 */
static int record(uint64_t a, uint64_t b, uint64_t c)
{
	seen[0][calls] = a;
	seen[1][calls] = b;
	seen[2][calls] = c;
	calls++;
	return a == 5 ? 7 : 0;
}

/* A void function leaves garbage in the result register: call_each must ignore it when told to */
static uint64_t sum;
static void add(uint64_t a)
{
	sum += a;
}

int main(int argc, char **argv)
{
	uint64_t c0[8], c1[8], c2[8], block[7];
	size_t i;
	uint8_t *code;
	call_each_t each;
	int (*packed)(const void *, const void *);

	if (argc != 3)
		return 2;
	code = code_page_from_hex(argv[1]);
	code_page_seal(code);
	each = (call_each_t)(void *)code;
	packed = (int (*)(const void *, const void *))(void *)(code + strtoul(argv[2], NULL, 0));
	for (i = 0; i < 8; i++) {
		c0[i] = i + 1;
		c1[i] = 0x100000000ull * (i + 1) + 3;
		c2[i] = ~(uint64_t)i;
	}

	if (each((void *)record, 8, c0, c1, c2, 0xffffffffu) != 4 || calls != 5)
		fail("checked run should stop at the row returning nonzero (index 4)");
	for (i = 0; i < 5; i++)
		if (seen[0][i] != c0[i] || seen[1][i] != c1[i] || seen[2][i] != c2[i])
			fail("arguments of a row");
	printf("ok checked run: rows passed in order with three 64-bit arguments, stops at the first nonzero result\n");

	calls = 0;
	if (each((void *)record, 8, c0, c1, c2, 0) != 8 || calls != 8)
		fail("unchecked run should call every row");
	if (each((void *)add, 8, c0, c0, c0, 0) != 8 || sum != 36)
		fail("void function over 8 rows");
	printf("ok unchecked run calls every row (void functions too)\n");

	calls = 0;
	block[0] = (uint64_t)(uintptr_t)record;
	block[1] = 3;
	block[2] = (uint64_t)(uintptr_t)c0;
	block[3] = (uint64_t)(uintptr_t)c1;
	block[4] = (uint64_t)(uintptr_t)c2;
	block[5] = 0xffffffffu;
	block[6] = 99;
	if (bsearch(block, block, 1, 1, packed) != block || block[6] != 3 || calls != 3)
		fail("packed entry through bsearch");
	printf("ok packed entry through bsearch: result stored in args[6], returns 0\n");
	printf("PASS call_each\n");
	return 0;
}
