/*
 * The few zlib and liblz4 functions the device calls, declared here (no zlib or lz4 headers needed) and resolved with
 * dlopen/dlsym at first use. The z_stream layout is zlib's public one (zlib.h, unchanged since 1.0).
 */
#ifndef SIM_COMPRESS_BACKEND_H_
#define SIM_COMPRESS_BACKEND_H_

#include <stdbool.h>

struct sim_z_stream {
	const unsigned char *next_in;
	unsigned int avail_in;
	unsigned long total_in;
	unsigned char *next_out;
	unsigned int avail_out;
	unsigned long total_out;
	const char *msg;
	void *state;
	void *zalloc;
	void *zfree;
	void *opaque;
	int data_type;
	unsigned long adler;
	unsigned long reserved;
};

/* zlib's constants used here (zlib.h) */
#define SIM_Z_OK 0
#define SIM_Z_STREAM_END 1
#define SIM_Z_NEED_DICT 2
#define SIM_Z_BUF_ERROR (-5)
#define SIM_Z_NO_FLUSH 0
#define SIM_Z_FINISH 4
#define SIM_Z_DEFLATED 8
#define SIM_Z_DEFAULT_COMPRESSION (-1)
#define SIM_Z_DEFAULT_STRATEGY 0

struct sim_zlib {
	const char *(*zlibVersion)(void);
	int (*deflateInit2_)(struct sim_z_stream *strm, int level, int method, int window_bits, int mem_level,
			     int strategy, const char *version, int stream_size);
	int (*deflate)(struct sim_z_stream *strm, int flush);
	int (*deflateEnd)(struct sim_z_stream *strm);
	int (*inflateInit2_)(struct sim_z_stream *strm, int window_bits, const char *version, int stream_size);
	int (*inflate)(struct sim_z_stream *strm, int flush);
	int (*inflateEnd)(struct sim_z_stream *strm);
	unsigned long (*crc32)(unsigned long crc, const unsigned char *buf, unsigned int len);
	unsigned long (*adler32)(unsigned long adler, const unsigned char *buf, unsigned int len);
};

struct sim_lz4 {
	int (*decompress_safe)(const char *src, char *dst, int compressed_size, int dst_capacity);
	int (*decompress_safe_using_dict)(const char *src, char *dst, int compressed_size, int dst_capacity,
					  const char *dict_start, int dict_size);
};

/* The loaded library, or NULL (its absence is logged once at debug level and kept for doca_sim_*_backend_missing) */
const struct sim_zlib *sim_zlib(void);
const struct sim_lz4 *sim_lz4(void);

#endif /* SIM_COMPRESS_BACKEND_H_ */
