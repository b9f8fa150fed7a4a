/*
 * Loading zlib (libz.so.1, Debian zlib1g) and liblz4 (liblz4.so.1, Debian liblz4-1) at first use. A library that is
 * missing, lacks a function, or is switched off with DOCA_SIM_ACCEL_OFF (a comma list of zlib, lz4, crypto: tests use
 * it to see the NOT_SUPPORTED answers) leaves its tasks unsupported, and the reason is kept for doctor.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_sim.h>

#include "compress_backend.h"
#include "internal.h"

static struct sim_zlib zlib_fns;
static struct sim_lz4 lz4_fns;
static bool zlib_ok, lz4_ok;
static char missing[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* True when DOCA_SIM_ACCEL_OFF names `name` among its comma-separated words */
static bool switched_off(const char *name)
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

static void note_missing(const char *what)
{
	size_t used = strlen(missing);

	snprintf(missing + used, sizeof(missing) - used, "%s%s", used > 0 ? "; " : "", what);
	sim_log(SIM_LOG_DEBUG, "compress: %s", what);
}

/* dlsym into a function pointer field (POSIX guarantees the conversion) */
#define RESOLVE(handle, field, symbol, ok) \
	do { \
		void *sym_ = dlsym((handle), (symbol)); \
		if (sym_ == NULL) \
			(ok) = false; \
		memcpy(&(field), &sym_, sizeof(sym_)); \
	} while (0)

static void load(void)
{
	/* RTLD_DEEPBIND: the library's own calls stay inside it. A host program may export functions of the same
	 * names (Node links its own zlib and OpenSSL and exports them): without it, libz's deflateInit2_ called Node's
	 * deflateReset, whose state layout differs, and crashed. */
	void *z = switched_off("zlib") ? NULL : dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	void *l = switched_off("lz4") ? NULL : dlopen("liblz4.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);

	if (z != NULL) {
		zlib_ok = true;
		RESOLVE(z, zlib_fns.zlibVersion, "zlibVersion", zlib_ok);
		RESOLVE(z, zlib_fns.deflateInit2_, "deflateInit2_", zlib_ok);
		RESOLVE(z, zlib_fns.deflate, "deflate", zlib_ok);
		RESOLVE(z, zlib_fns.deflateEnd, "deflateEnd", zlib_ok);
		RESOLVE(z, zlib_fns.inflateInit2_, "inflateInit2_", zlib_ok);
		RESOLVE(z, zlib_fns.inflate, "inflate", zlib_ok);
		RESOLVE(z, zlib_fns.inflateEnd, "inflateEnd", zlib_ok);
		RESOLVE(z, zlib_fns.crc32, "crc32", zlib_ok);
		RESOLVE(z, zlib_fns.adler32, "adler32", zlib_ok);
		if (!zlib_ok)
			note_missing("libz.so.1 lacks a zlib function (Debian package zlib1g): deflate not supported");
	} else {
		note_missing("libz.so.1 not loaded (Debian package zlib1g): deflate not supported");
	}
	if (l != NULL) {
		lz4_ok = true;
		RESOLVE(l, lz4_fns.decompress_safe, "LZ4_decompress_safe", lz4_ok);
		RESOLVE(l, lz4_fns.decompress_safe_using_dict, "LZ4_decompress_safe_usingDict", lz4_ok);
		if (!lz4_ok)
			note_missing("liblz4.so.1 lacks LZ4_decompress_safe (Debian package liblz4-1): LZ4 not supported");
	} else {
		note_missing("liblz4.so.1 not loaded (Debian package liblz4-1): LZ4 not supported");
	}
}

const struct sim_zlib *sim_zlib(void)
{
	pthread_once(&once, load);
	return zlib_ok ? &zlib_fns : NULL;
}

const struct sim_lz4 *sim_lz4(void)
{
	pthread_once(&once, load);
	return lz4_ok ? &lz4_fns : NULL;
}

const char *doca_sim_compress_backend_missing(void)
{
	pthread_once(&once, load);
	return missing[0] != '\0' ? missing : NULL;
}
