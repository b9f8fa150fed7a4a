/*
 * Running the compress tasks: validation, then raw deflate / inflate through zlib, LZ4 blocks through liblz4, and the
 * checksums DOCA reports (CRC-32 and Adler-32 of the uncompressed bytes; xxHash-32 for LZ4). Input is never trusted:
 * a corrupt or truncated stream fails the task with INVALID_VALUE, output that does not fit the destination with
 * TOO_BIG, and nothing is written outside the destination's free tail.
 */
#include <stdlib.h>
#include <string.h>

#include "compress_backend.h"
#include "compress_internal.h"

bool sim_compress_kind_available(enum sim_compress_kind kind)
{
	if (kind == SIM_COMPRESS_DEFLATE || kind == SIM_DECOMPRESS_DEFLATE)
		return sim_zlib() != NULL;
	return sim_lz4() != NULL;
}

doca_error_t sim_compress_validate(const struct sim_compress_task *t)
{
	const struct doca_buf *src = t->src;
	const struct doca_buf *dst = t->dst;
	doca_error_t err;

	if (src == NULL || dst == NULL || src->mmap == NULL || dst->mmap == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "compress: missing or released buffer");
	if (src->list_len != 1 || dst->list_len != 1)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "compress: buffer lists are not supported (max list length 1)");
	if (!sim_buf_data_fits(src, src->data, src->data_len) || !sim_buf_data_fits(dst, dst->data, dst->data_len))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "compress: data outside its buffer");
	/* Memory of another process (an mmap created from a PCI export) is allowed, as on a DPU whose engine reaches
	 * the host over PCIe: NVIDIA's comch_to_rdma_gga_offload decompresses straight into the host's memory. The
	 * checks (permissions, no RDMA peer memory) are the accelerators' common ones (buf_io.c). */
	err = sim_bufs_check_src_dst(src, dst, NULL, SIM_COMPRESS_MAX_BUF_LIST_LEN);
	if (err != DOCA_SUCCESS)
		return err;
	if (src->data_len > SIM_COMPRESS_MAX_BUF_SIZE)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "compress: %zu source bytes exceed the max buf size",
				src->data_len);
	if (!sim_compress_kind_available(t->kind))
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "compress: backend library missing (%s)",
				doca_sim_compress_backend_missing());
	return DOCA_SUCCESS;
}

/* ---- checksums ---- */

static uint32_t crc_table[256];

static uint32_t crc32_own(uint32_t crc, const uint8_t *p, size_t len)
{
	if (crc_table[1] == 0)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c;
		}
	crc = ~crc;
	while (len-- > 0)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* zlib's functions take unsigned int lengths: feed them in pieces */
/* zlib's checksum functions (crc32, adler32) take at most an unsigned int of bytes a call: longer input goes in 1 GiB
 * parts, each continuing the value of the one before */
static uint32_t zlib_checksum(unsigned long (*fn)(unsigned long, const unsigned char *, unsigned int),
			      unsigned long value, const uint8_t *p, size_t len)
{
	while (len > 0) {
		unsigned int n = len > (1u << 30) ? 1u << 30 : (unsigned int)len;

		value = fn(value, p, n);
		p += n;
		len -= n;
	}
	return (uint32_t)value;
}

static uint32_t crc32_of(const uint8_t *p, size_t len)
{
	const struct sim_zlib *z = sim_zlib();

	if (z == NULL)
		return crc32_own(0, p, len);
	return zlib_checksum(z->crc32, 0, p, len);
}

static uint32_t adler32_of(const struct sim_zlib *z, const uint8_t *p, size_t len)
{
	return zlib_checksum(z->adler32, 1, p, len);
}

/* xxHash-32 (the LZ4 frame's checksum), from its public specification */
#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static uint32_t read32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t xxh32_round(uint32_t acc, uint32_t lane) { return rotl32(acc + lane * XXH_P2, 13) * XXH_P1; }

uint32_t sim_xxh32(const uint8_t *p, size_t len, uint32_t seed);
uint32_t sim_xxh32(const uint8_t *p, size_t len, uint32_t seed)
{
	const uint8_t *end = p + len;
	uint32_t h;

	if (len >= 16) {
		uint32_t v1 = seed + XXH_P1 + XXH_P2, v2 = seed + XXH_P2, v3 = seed, v4 = seed - XXH_P1;

		for (; end - p >= 16; p += 16) {
			v1 = xxh32_round(v1, read32le(p));
			v2 = xxh32_round(v2, read32le(p + 4));
			v3 = xxh32_round(v3, read32le(p + 8));
			v4 = xxh32_round(v4, read32le(p + 12));
		}
		h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
	} else {
		h = seed + XXH_P5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rotl32(h + read32le(p) * XXH_P3, 17) * XXH_P4;
	for (; p < end; p++)
		h = rotl32(h + *p * XXH_P5, 11) * XXH_P1;
	h ^= h >> 15;
	h *= XXH_P2;
	h ^= h >> 13;
	h *= XXH_P3;
	h ^= h >> 16;
	return h;
}

/* ---- deflate ---- */

/* Raw deflate (window bits -15: no zlib or gzip framing), the whole source in one stream */
static doca_error_t run_deflate(const struct sim_zlib *z, const uint8_t *in, size_t in_len, uint8_t *out,
				size_t room, size_t *produced)
{
	struct sim_z_stream s;
	int rc;

	memset(&s, 0, sizeof(s));
	if (z->deflateInit2_(&s, SIM_Z_DEFAULT_COMPRESSION, SIM_Z_DEFLATED, -15, 8, SIM_Z_DEFAULT_STRATEGY,
			     z->zlibVersion(), (int)sizeof(s)) != SIM_Z_OK)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "compress: deflateInit2 failed");
	s.next_in = in;
	s.avail_in = (unsigned int)in_len; /* at most SIM_COMPRESS_MAX_BUF_SIZE */
	s.next_out = out;
	s.avail_out = room > 0xffffffffu ? 0xffffffffu : (unsigned int)room;
	rc = z->deflate(&s, SIM_Z_FINISH);
	*produced = s.total_out;
	z->deflateEnd(&s);
	if (rc != SIM_Z_STREAM_END)
		return sim_fail(DOCA_ERROR_TOO_BIG, "compress deflate: output does not fit the destination (%zu free)",
				room);
	return DOCA_SUCCESS;
}

static doca_error_t run_inflate(const struct sim_zlib *z, const uint8_t *in, size_t in_len, uint8_t *out,
				size_t room, size_t *produced)
{
	struct sim_z_stream s;
	doca_error_t err = DOCA_SUCCESS;
	int rc;

	memset(&s, 0, sizeof(s));
	if (z->inflateInit2_(&s, -15, z->zlibVersion(), (int)sizeof(s)) != SIM_Z_OK)
		return sim_fail(DOCA_ERROR_NO_MEMORY, "decompress deflate: inflateInit2 failed");
	s.next_in = in;
	s.avail_in = (unsigned int)in_len;
	s.next_out = out;
	s.avail_out = room > 0xffffffffu ? 0xffffffffu : (unsigned int)room;
	rc = z->inflate(&s, SIM_Z_FINISH);
	*produced = s.total_out;
	if (rc == SIM_Z_STREAM_END && s.avail_in != 0)
		err = sim_fail(DOCA_ERROR_INVALID_VALUE, "decompress deflate: %u bytes after the end of the stream",
			       s.avail_in);
	else if (rc == SIM_Z_STREAM_END)
		err = DOCA_SUCCESS;
	else if ((rc == SIM_Z_BUF_ERROR || rc == SIM_Z_OK) && s.avail_out == 0)
		err = sim_fail(DOCA_ERROR_TOO_BIG, "decompress deflate: output does not fit the destination (%zu free)",
			       room);
	else if (rc == SIM_Z_BUF_ERROR || rc == SIM_Z_OK)
		err = sim_fail(DOCA_ERROR_INVALID_VALUE, "decompress deflate: truncated stream");
	else
		err = sim_fail(DOCA_ERROR_INVALID_VALUE, "decompress deflate: corrupt stream (%s)",
			       s.msg != NULL ? s.msg : "zlib error");
	z->inflateEnd(&s);
	return err;
}

/* ---- LZ4 ---- */

/* One block's data into out[pos..room); dependent blocks see the output before them (64 KiB window) */
static doca_error_t lz4_block(const struct sim_lz4 *l, const uint8_t *in, size_t in_len, uint8_t *out, size_t pos,
			      size_t room, bool dependent, size_t *produced)
{
	int n;

	if (in_len > 0x7fffffff)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4: block too large");
	if (room - pos > 0x7fffffff)
		room = pos + 0x7fffffff;
	if (dependent && pos > 0) {
		size_t dict = pos > 65536 ? 65536 : pos;

		n = l->decompress_safe_using_dict((const char *)in, (char *)out + pos, (int)in_len, (int)(room - pos),
						  (const char *)out + pos - dict, (int)dict);
	} else {
		n = l->decompress_safe((const char *)in, (char *)out + pos, (int)in_len, (int)(room - pos));
	}
	/* liblz4 does not tell a corrupt block from a destination too small: both are refused alike */
	if (n < 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE,
				"lz4: corrupt block or output larger than the destination (%zu free)", room - pos);
	*produced = (size_t)n;
	return DOCA_SUCCESS;
}

/* A frame's blocks without the frame: per block a little-endian size word (bit 31: stored uncompressed), the data,
 * and its xxHash-32 when has_block_checksum. A zero size word (the end mark) may close the stream. */
static doca_error_t lz4_stream(const struct sim_lz4 *l, const struct sim_compress_task *t, const uint8_t *in,
			       size_t in_len, uint8_t *out, size_t room, size_t *produced)
{
	size_t at = 0, pos = 0;

	if (in_len == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4 stream: empty source");
	while (at < in_len) {
		uint32_t word, size;
		bool stored;

		if (in_len - at < 4)
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4 stream: truncated block size at %zu", at);
		word = read32le(in + at);
		at += 4;
		if (word == 0) {
			if (at != in_len)
				return sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4 stream: data after the end mark");
			break;
		}
		stored = (word & 0x80000000u) != 0;
		size = word & 0x7fffffffu;
		if (size > in_len - at || (t->has_block_checksum && in_len - at - size < 4))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4 stream: truncated block at %zu", at - 4);
		if (t->has_block_checksum && sim_xxh32(in + at, size, 0) != read32le(in + at + size))
			return sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4 stream: block checksum mismatch at %zu", at - 4);
		if (stored) {
			if (size > room - pos)
				return sim_fail(DOCA_ERROR_TOO_BIG, "lz4 stream: output does not fit the destination");
			memcpy(out + pos, in + at, size);
			pos += size;
		} else {
			size_t n = 0;
			doca_error_t err = lz4_block(l, in + at, size, out, pos, room, !t->are_blocks_independent, &n);

			if (err != DOCA_SUCCESS)
				return err;
			pos += n;
		}
		at += size + (t->has_block_checksum ? 4 : 0);
	}
	*produced = pos;
	return DOCA_SUCCESS;
}

static doca_error_t run_kind(struct sim_compress_task *t, const uint8_t *in, size_t in_len, uint8_t *out,
			     size_t room, size_t *produced);

/*
 * Local buffers are read and written in place. A buffer in another process (from an export) is staged: its source
 * read into local memory first, the output produced locally and appended through sim_bufs_append, which re-checks
 * the export (a link revoked meanwhile fails the task and leaves the destination's data length as it was).
 */
doca_error_t sim_compress_execute(struct sim_compress_task *t)
{
	struct doca_buf *dst = t->dst;
	size_t in_len = t->src->data_len;
	const uint8_t *in = sim_bufs_direct(t->src);
	bool dst_local = sim_bufs_direct(dst) != NULL;
	size_t room = sim_buf_tail_room(dst), produced = 0;
	uint8_t *staged_in = NULL, *staged_out = NULL, *out;
	doca_error_t err = DOCA_SUCCESS;

	if (in == NULL) {
		staged_in = malloc(in_len > 0 ? in_len : 1);
		if (staged_in == NULL)
			return sim_fail(DOCA_ERROR_NO_MEMORY, "compress: staging %zu source bytes", in_len);
		err = sim_bufs_read(t->src, staged_in, in_len);
		in = staged_in;
	}
	if (dst_local) {
		out = (uint8_t *)dst->data + dst->data_len;
	} else {
		out = staged_out = malloc(room > 0 ? room : 1);
		if (staged_out == NULL)
			err = sim_fail(DOCA_ERROR_NO_MEMORY, "compress: staging %zu destination bytes", room);
	}
	if (err == DOCA_SUCCESS)
		err = run_kind(t, in, in_len, out, room, &produced);
	if (err == DOCA_SUCCESS && dst_local)
		dst->data_len += produced;
	else if (err == DOCA_SUCCESS)
		err = sim_bufs_append(dst, staged_out, produced);
	free(staged_in);
	free(staged_out);
	return err;
}

static doca_error_t run_kind(struct sim_compress_task *t, const uint8_t *in, size_t in_len, uint8_t *out,
			     size_t room, size_t *produced_out)
{
	size_t produced = 0;
	const uint8_t *plain;
	size_t plain_len;
	doca_error_t err;

	switch (t->kind) {
	case SIM_COMPRESS_DEFLATE:
		err = run_deflate(sim_zlib(), in, in_len, out, room, &produced);
		plain = in;
		plain_len = in_len;
		break;
	case SIM_DECOMPRESS_DEFLATE:
		err = run_inflate(sim_zlib(), in, in_len, out, room, &produced);
		plain = out;
		plain_len = produced;
		break;
	case SIM_DECOMPRESS_LZ4_STREAM:
		err = lz4_stream(sim_lz4(), t, in, in_len, out, room, &produced);
		plain = out;
		plain_len = produced;
		break;
	default:
		err = in_len == 0 ? sim_fail(DOCA_ERROR_INVALID_VALUE, "lz4 block: empty source")
				  : lz4_block(sim_lz4(), in, in_len, out, 0, room, false, &produced);
		plain = out;
		plain_len = produced;
		break;
	}
	if (err != DOCA_SUCCESS)
		return err; /* the destination's data length is left as it was */
	*produced_out = produced;
	t->crc_cs = crc32_of(plain, plain_len);
	if (t->kind == SIM_COMPRESS_DEFLATE || t->kind == SIM_DECOMPRESS_DEFLATE)
		t->adler_cs = adler32_of(sim_zlib(), plain, plain_len);
	else
		/* DOCA reports the xxHash-32 byte-swapped: NVIDIA's decompress_lz4_stream sample compares it with the frame's
		 * content checksum read as htobe32(le32 word), i.e. the hash's bytes in big-endian order */
		t->xxh_cs = __builtin_bswap32(sim_xxh32(plain, plain_len, 0));
	return DOCA_SUCCESS;
}
