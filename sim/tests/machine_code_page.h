/*
 * What the machine-code harnesses (call_each.c, completion_stub.c) share: the bytes doca-ts ships, given as hex on
 * the command line, loaded into a fresh page the way the TypeScript does it (written while read-write, then made
 * read+execute before it ever runs). Self-contained (libc only) so that the harnesses still cross-compile alone.
 */
#ifndef MACHINE_CODE_PAGE_H_
#define MACHINE_CODE_PAGE_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CODE_PAGE 4096

static void fail(const char *what)
{
	printf("FAIL %s\n", what);
	exit(1);
}

/* The bytes of hex (two digits each, 1 to CODE_PAGE of them) in a fresh read-write page */
static uint8_t *code_page_from_hex(const char *hex)
{
	size_t len = strlen(hex) / 2;
	uint8_t *code = mmap(NULL, CODE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED || len == 0 || len > CODE_PAGE)
		fail("setup");
	for (size_t i = 0; i < len; i++) {
		unsigned byte;

		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			fail("hex");
		code[i] = (uint8_t)byte;
	}
	return code;
}

/* Read+execute from now on (the page never ran before) */
static void code_page_seal(uint8_t *code)
{
	if (mprotect(code, CODE_PAGE, PROT_READ | PROT_EXEC) != 0)
		fail("mprotect");
}

#endif /* MACHINE_CODE_PAGE_H_ */
