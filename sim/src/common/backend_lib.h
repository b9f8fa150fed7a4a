/*
 * Opening a backing library of an accelerator at first use (zlib and liblz4 for compress, libcrypto for SHA) the
 * same way in each: DOCA_SIM_ACCEL_OFF (a comma list of zlib, lz4, crypto) switches one off so the tests see the
 * NOT_SUPPORTED answers, and its functions are looked up from a table. Static inline: each library that includes it
 * keeps its own copy, so libdoca_common exports nothing more. The includer defines _GNU_SOURCE (RTLD_DEEPBIND).
 */
#ifndef SIM_BACKEND_LIB_H_
#define SIM_BACKEND_LIB_H_

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* True when DOCA_SIM_ACCEL_OFF names `name` among its comma-separated words */
static inline bool sim_backend_switched_off(const char *name)
{
	const char *list = getenv("DOCA_SIM_ACCEL_OFF");
	size_t n = strlen(name);

	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = end != NULL ? end + 1 : NULL;
	}
	return false;
}

/* The library `soname`, or NULL when it does not load or DOCA_SIM_ACCEL_OFF names `off_name`. RTLD_DEEPBIND: the
 * library's own calls stay inside it. A host program may export functions of the same names (Node links its own zlib
 * and OpenSSL and exports them): without it, libz's deflateInit2_ called Node's deflateReset, whose state layout
 * differs, and crashed. */
static inline void *sim_backend_open(const char *soname, const char *off_name)
{
	return sim_backend_switched_off(off_name) ? NULL : dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}

/* One function to look up: `fn` is the address of the function pointer that receives symbol `name` */
struct sim_backend_symbol {
	void *fn;
	const char *name;
};

/* Looks every symbol up in handle (a missing one leaves its pointer NULL): true when all were found */
static inline bool sim_backend_resolve(void *handle, const struct sim_backend_symbol *symbols, size_t count)
{
	bool all = true;

	for (size_t i = 0; i < count; i++) {
		void *sym = dlsym(handle, symbols[i].name);

		if (sym == NULL)
			all = false;
		memcpy(symbols[i].fn, &sym, sizeof(sym)); /* into a function pointer: POSIX guarantees the conversion */
	}
	return all;
}

#endif /* SIM_BACKEND_LIB_H_ */
