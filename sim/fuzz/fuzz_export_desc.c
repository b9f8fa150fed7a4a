/*
 * Fuzz harness: doca_mmap_create_from_export() with random and mutated export descriptors.
 *
 * Bounded, deterministic run (CI):   fuzz_export_desc [iterations=20000] [seed=1]
 * libFuzzer campaign:                build with -DDOCA_SIM_LIBFUZZER -fsanitize=fuzzer,address (see sim/fuzz/README.md)
 *
 * Guarantees checked on every input:
 *   - no crash, no out-of-bounds access (run under AddressSanitizer/UBSan by the fuzz build),
 *   - an import succeeds only for a descriptor naming a live export of this process, and then its range is exactly
 *     that export's range (a mutated descriptor never yields a map over bytes that were not exported),
 *   - a revoked export is never importable,
 *   - nothing leaks: doca_sim_live_objects() is back to its starting value at the end.
 * Exit status 0 and a line "FUZZ export-desc inputs N accepted A rejected R" on success; "FAIL ..." and 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_sim.h>

#include "fuzz_rng.h"

#define DESC_MAX 256

struct export_ref {
	uint8_t desc[DESC_MAX];
	size_t len;
	void *addr;
	size_t range_len;
	int live;
};

static struct doca_dev *dev;
static struct export_ref refs[3]; /* 0: read-write, 1: read-only, 2: revoked */
static uint8_t *mem_rw, *mem_ro, *mem_gone;
static struct doca_mmap *map_rw, *map_ro;
static unsigned long accepted, rejected;

static void fail(const char *what, unsigned long i)
{
	printf("FAIL %s (input %lu)\n", what, i);
	fflush(stdout);
	exit(1);
}

static struct doca_mmap *exported(void *addr, size_t len, uint32_t perm, struct export_ref *ref)
{
	struct doca_mmap *m;
	const void *d;
	size_t n;

	if (doca_mmap_create(&m) || doca_mmap_set_memrange(m, addr, len) || doca_mmap_set_permissions(m, perm) ||
	    doca_mmap_add_dev(m, dev) || doca_mmap_start(m) || doca_mmap_export_pci(m, dev, &d, &n) || n > DESC_MAX)
		fail("setting up an export", 0);
	memcpy(ref->desc, d, n);
	ref->len = n;
	ref->addr = addr;
	ref->range_len = len;
	ref->live = 1;
	return m;
}

static void setup(void)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	struct doca_mmap *gone;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS || n == 0 || doca_dev_open(list[0], &dev) != DOCA_SUCCESS)
		fail("no device", 0);
	doca_devinfo_destroy_list(list);
	mem_rw = calloc(1, 65536);
	mem_ro = calloc(1, 4096);
	mem_gone = calloc(1, 8192);
	map_rw = exported(mem_rw, 65536, DOCA_ACCESS_FLAG_PCI_READ_WRITE, &refs[0]);
	map_ro = exported(mem_ro, 4096, DOCA_ACCESS_FLAG_PCI_READ_ONLY, &refs[1]);
	gone = exported(mem_gone, 8192, DOCA_ACCESS_FLAG_PCI_READ_WRITE, &refs[2]);
	doca_mmap_destroy(gone);
	refs[2].live = 0;
}

/* Imports `len` bytes of `desc`; checks the outcome against the exports that exist. */
static void try_import(const uint8_t *desc, size_t len, unsigned long i)
{
	struct doca_mmap *m = NULL;
	void *addr = NULL;
	size_t range = 0;
	int ok = 0;

	if (doca_mmap_create_from_export(NULL, desc, len, dev, &m) != DOCA_SUCCESS) {
		rejected++;
		return;
	}
	accepted++;
	if (doca_mmap_get_memrange(m, &addr, &range) != DOCA_SUCCESS)
		fail("get_memrange of an imported map", i);
	for (int k = 0; k < 3; k++)
		if (refs[k].live && addr == refs[k].addr && range == refs[k].range_len)
			ok = 1;
	if (!ok) {
		printf("FAIL import accepted a range that was never exported: %p+%zu (input %lu)\n", addr, range, i);
		exit(1);
	}
	if (doca_mmap_destroy(m) != DOCA_SUCCESS)
		fail("destroying an imported map", i);
}

static const uint64_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000u, 0xffffffffu,
				       0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull, 4096, 65536, 80, 88};

/* One mutated or random input derived from the iteration's random stream */
static size_t make_input(uint8_t *buf)
{
	uint64_t r = rnd();
	size_t len;
	int base = (int)(r % 8);

	if (base <= 2) { /* a mutated real descriptor (RW, RO, revoked) */
		memcpy(buf, refs[base].desc, DESC_MAX);
		len = refs[base].len;
	} else if (base == 3) { /* another live export's fields spliced in */
		memcpy(buf, refs[0].desc, DESC_MAX);
		memcpy(buf + 40, refs[1].desc + 40, 16);
		len = refs[0].len;
	} else { /* random bytes, random length */
		for (size_t k = 0; k < DESC_MAX; k++)
			buf[k] = (uint8_t)rnd();
		len = (base == 4) ? refs[0].len : (size_t)(rnd() % (DESC_MAX + 1));
		if (base == 5) /* random, but with the right magic and version: reaches the deeper checks */
			memcpy(buf, refs[0].desc, 8);
	}
	int mutations = 1 + (int)(rnd() % 8);
	for (int m = 0; m < mutations; m++) {
		uint64_t op = rnd() % 6, at = rnd() % (len ? len : 1);
		switch (op) {
		case 0:
			buf[at] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1:
			buf[at] = (uint8_t)rnd();
			break;
		case 2: { /* an interesting u64 at an aligned field */
			uint64_t v = interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))];
			size_t off = (size_t)(rnd() % 11) * 8; /* every u64 slot of the 88-byte descriptor */
			if (off + 8 <= DESC_MAX)
				memcpy(buf + off, &v, 8);
			break;
		}
		case 3: { /* an interesting u32 anywhere */
			uint32_t v = (uint32_t)interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))];
			size_t off = (size_t)(rnd() % (DESC_MAX - 4));
			memcpy(buf + off, &v, 4);
			break;
		}
		case 4: /* length change */
			len = (size_t)(rnd() % (DESC_MAX + 1));
			break;
		default: /* leave as is (a few unmutated real descriptors too) */
			break;
		}
	}
	return len;
}

#ifdef DOCA_SIM_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	uint8_t buf[DESC_MAX];

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size == 0)
		return 0;
	/* First byte picks a real descriptor to XOR the rest onto (or none), so the fuzzer reaches the deep checks */
	memset(buf, 0, sizeof(buf));
	size--;
	if (size > DESC_MAX)
		size = DESC_MAX;
	if (data[0] < 3)
		memcpy(buf, refs[data[0]].desc, refs[data[0]].len);
	for (size_t k = 0; k < size; k++)
		buf[k] ^= data[1 + k];
	try_import(buf, data[0] < 3 ? refs[data[0]].len : size, 0);
	return 0;
}
#else
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	uint8_t buf[DESC_MAX];
	uint64_t live0;

	rng_state = seed;
	setup();
	live0 = doca_sim_live_objects();
	/* The unmutated descriptors behave: live ones import, the revoked one does not */
	try_import(refs[0].desc, refs[0].len, 0);
	try_import(refs[1].desc, refs[1].len, 0);
	if (accepted != 2)
		fail("a real descriptor was refused", 0);
	try_import(refs[2].desc, refs[2].len, 0);
	if (accepted != 2)
		fail("a revoked descriptor was imported", 0);
	for (unsigned long i = 1; i <= n; i++) {
		size_t len = make_input(buf);

		try_import(buf, len, i);
	}
	if (doca_sim_live_objects() != live0)
		fail("imported maps leaked", n);
	doca_mmap_destroy(map_rw);
	doca_mmap_destroy(map_ro);
	doca_dev_close(dev);
	printf("FUZZ export-desc inputs %lu accepted %lu rejected %lu seed %llu\n", n + 3, accepted, rejected,
	       (unsigned long long)seed);
	return 0;
}
#endif
