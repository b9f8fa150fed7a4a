/*
 * Calls doca-ts's native completion stubs (ffi/native/completion-ring.ts) the way DOCA calls a task completion callback,
 * and checks the ring they write. The stub bytes come from the command line, so this tests exactly what the
 * TypeScript ships (tests/ffi-completion-ring.test.ts passes them, for x86-64 natively and for aarch64 under qemu):
 *
 *   completion_stub HEX OK_OFFSET ERROR_OFFSET ADDRESS_OFFSET...
 *
 * Ring layout: [0] u64 count, [8] u64 capacity, [16] u64 successes counted, entries of 4 u64 (task, task user data,
 * ctx user data, ok) from 64, u64 counters from 0x41000 (a success whose task user data has bit 40 set only
 * increments [16] and counter (user data >> 20) & 1023).
 * Self-contained (libc and doca_types.h only) so that it cross-compiles without the software device.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <doca_types.h>

#include "machine_code_page.h"

#define CAPACITY 4
#define ENTRY_WORDS 4
#define COUNTERS_AT 0x41000
#define COUNTERS 1024
#define COUNTED (1ull << 40)

/* DOCA's task completion callback type, e.g. doca_dma_task_memcpy_completion_cb_t */
typedef void (*completion_cb_t)(void *task, union doca_data task_user_data, union doca_data ctx_user_data);

struct ring {
	uint64_t count;
	uint64_t capacity;
	uint64_t counted;
	uint64_t pad[5];
	uint64_t entries[CAPACITY + 1][ENTRY_WORDS]; /* one more entry as a guard: must stay untouched */
	uint8_t gap[COUNTERS_AT - 64 - (CAPACITY + 1) * ENTRY_WORDS * 8];
	uint64_t counters[COUNTERS + 1]; /* one more as a guard */
};
_Static_assert(offsetof(struct ring, counters) == COUNTERS_AT, "the counters' offset");

static void check_entry(const struct ring *r, unsigned i, uint64_t task, uint64_t tud, uint64_t cud, uint64_t ok)
{
	const uint64_t *e = r->entries[i];

	if (e[0] != task || e[1] != tud || e[2] != cud || e[3] != ok) {
		printf("entry %u: %#llx %#llx %#llx %llu, expected %#llx %#llx %#llx %llu\n", i, (unsigned long long)e[0],
		       (unsigned long long)e[1], (unsigned long long)e[2], (unsigned long long)e[3],
		       (unsigned long long)task, (unsigned long long)tud, (unsigned long long)cud, (unsigned long long)ok);
		fail("ring entry");
	}
}

int main(int argc, char **argv)
{
	size_t i;
	uint8_t *code;
	struct ring *r;
	completion_cb_t ok_cb, err_cb;
	union doca_data tud, cud;

	if (argc < 5) {
		fprintf(stderr, "usage: completion_stub HEX OK_OFFSET ERROR_OFFSET ADDRESS_OFFSET...\n");
		return 2;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		fail("setup");
	code = code_page_from_hex(argv[1]);
	for (int a = 4; a < argc; a++) {
		uint64_t address = (uint64_t)(uintptr_t)r;

		memcpy(code + strtoul(argv[a], NULL, 0), &address, sizeof(address));
	}
	/* As doca-ts does it: written while RW, then read+execute */
	code_page_seal(code);
	ok_cb = (completion_cb_t)(void *)(code + strtoul(argv[2], NULL, 0));
	err_cb = (completion_cb_t)(void *)(code + strtoul(argv[3], NULL, 0));
	r->capacity = CAPACITY;
	memset(r->entries[CAPACITY], 0xee, sizeof(r->entries[CAPACITY]));

	tud.u64 = 0x1122324455667788ull; /* bit 40 clear: recorded */
	cud.u64 = 7;
	ok_cb((void *)0x7f0011223340ull, tud, cud);
	tud.u64 = 3;
	cud.ptr = (void *)0xfedcba9876543210ull;
	err_cb((void *)0x55aa55aa55a0ull, tud, cud);
	if (r->count != 2)
		fail("count after two completions");
	check_entry(r, 0, 0x7f0011223340ull, 0x1122324455667788ull, 7, 1);
	check_entry(r, 1, 0x55aa55aa55a0ull, 3, 0xfedcba9876543210ull, 0);
	printf("ok success and error stubs record task, task user data, ctx user data and ok flag in order\n");

	/* Counted successes: no entry, [16] and the task's counter incremented; a counted failure is recorded */
	tud.u64 = COUNTED | (5ull << 20) | 77;
	cud.u64 = 7;
	ok_cb((void *)0x3000ull, tud, cud);
	ok_cb((void *)0x3008ull, tud, cud);
	tud.u64 = COUNTED | (1023ull << 20) | 3;
	ok_cb((void *)0x3010ull, tud, cud);
	if (r->count != 2 || r->counted != 3 || r->counters[5] != 2 || r->counters[1023] != 1)
		fail("counted successes");
	for (i = 0; i <= COUNTERS; i++)
		if (i != 5 && i != 1023 && r->counters[i] != 0)
			fail("a counted success reached another counter");
	tud.u64 = COUNTED | (5ull << 20) | 78;
	err_cb((void *)0x3018ull, tud, cud);
	if (r->count != 3 || r->counted != 3 || r->counters[5] != 2)
		fail("a counted failure");
	check_entry(r, 2, 0x3018ull, COUNTED | (5ull << 20) | 78, 7, 0);
	printf("ok counted successes only count (their own counter and the total); counted failures are recorded\n");

	/* Drained: the reader resets count, and the next completion lands in entry 0 again */
	r->count = 0;
	tud.u64 = 9;
	cud.u64 = 1;
	err_cb((void *)0x1000ull, tud, cud);
	if (r->count != 1)
		fail("count after reset");
	check_entry(r, 0, 0x1000ull, 9, 1, 0);
	printf("ok after a drain (count reset) recording restarts at entry 0\n");

	/* Beyond capacity: counted, never stored (the guard entry stays intact), so the reader can detect it */
	for (i = 1; i < CAPACITY + 3; i++) {
		tud.u64 = i;
		ok_cb((void *)(0x2000ull + i), tud, cud);
	}
	if (r->count != CAPACITY + 3)
		fail("count past capacity");
	for (i = 1; i < CAPACITY; i++)
		check_entry(r, (unsigned)i, 0x2000ull + i, i, 1, 1);
	for (i = 0; i < ENTRY_WORDS; i++)
		if (r->entries[CAPACITY][i] != 0xeeeeeeeeeeeeeeeeull)
			fail("a completion past capacity was written beyond the ring");
	printf("ok overflow counted (%llu of capacity %d) and nothing written past the ring\n",
	       (unsigned long long)r->count, CAPACITY);
	printf("PASS completion_stub\n");
	return 0;
}
