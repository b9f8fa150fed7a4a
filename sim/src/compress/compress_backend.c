/*
 * Loading zlib (libz.so.1, Debian zlib1g) and liblz4 (liblz4.so.1, Debian liblz4-1) at first use. A library that is
 * missing, lacks a function, or is switched off with DOCA_SIM_ACCEL_OFF (a comma list of zlib, lz4, crypto: tests use
 * it to see the NOT_SUPPORTED answers) leaves its tasks unsupported, and the reason is kept for doctor.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_sim.h>

#include "backend_lib.h"
#include "compress_backend.h"
#include "internal.h"

static struct sim_zlib zlib_fns;
static struct sim_lz4 lz4_fns;
static bool zlib_ok, lz4_ok;
static char missing[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* struct sim_zlib's pointers bear the names of zlib's functions */
#define ZLIB_SYMBOL(fn) {&zlib_fns.fn, #fn}
static const struct sim_backend_symbol zlib_symbols[] = {
	ZLIB_SYMBOL(zlibVersion),
	ZLIB_SYMBOL(deflateInit2_),
	ZLIB_SYMBOL(deflate),
	ZLIB_SYMBOL(deflateEnd),
	ZLIB_SYMBOL(inflateInit2_),
	ZLIB_SYMBOL(inflate),
	ZLIB_SYMBOL(inflateEnd),
	ZLIB_SYMBOL(crc32),
	ZLIB_SYMBOL(adler32),
};
#undef ZLIB_SYMBOL

static const struct sim_backend_symbol lz4_symbols[] = {
	{&lz4_fns.decompress_safe, "LZ4_decompress_safe"},
	{&lz4_fns.decompress_safe_using_dict, "LZ4_decompress_safe_usingDict"},
};

static void note_missing(const char *what)
{
	size_t used = strlen(missing);

	snprintf(missing + used, sizeof(missing) - used, "%s%s", used > 0 ? "; " : "", what);
	sim_log(SIM_LOG_DEBUG, "compress: %s", what);
}

/* One backing library (DOCA_SIM_ACCEL_OFF calls it off_name): true when it loaded with every symbol; otherwise why
 * (not_loaded or lacks) is noted for doctor */
static bool load_library(const char *soname, const char *off_name, const struct sim_backend_symbol *symbols,
			 size_t count, const char *not_loaded, const char *lacks)
{
	void *handle = sim_backend_open(soname, off_name);

	if (handle == NULL) {
		note_missing(not_loaded);
		return false;
	}
	if (!sim_backend_resolve(handle, symbols, count)) {
		note_missing(lacks);
		return false;
	}
	return true;
}

static void load(void)
{
	zlib_ok = load_library("libz.so.1", "zlib", zlib_symbols, sizeof(zlib_symbols) / sizeof(zlib_symbols[0]),
			       "libz.so.1 not loaded (Debian package zlib1g): deflate not supported",
			       "libz.so.1 lacks a zlib function (Debian package zlib1g): deflate not supported");
	lz4_ok = load_library("liblz4.so.1", "lz4", lz4_symbols, sizeof(lz4_symbols) / sizeof(lz4_symbols[0]),
			      "liblz4.so.1 not loaded (Debian package liblz4-1): LZ4 not supported",
			      "liblz4.so.1 lacks LZ4_decompress_safe (Debian package liblz4-1): LZ4 not supported");
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
