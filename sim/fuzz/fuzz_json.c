/*
 * Fuzz harness: the DOCA_SIM_CONFIG JSON reader (sim/src/common/json.c) with random and mutated documents.
 *
 * Bounded, deterministic run (CI):   fuzz_json [iterations=20000] [seed=1]
 *
 * Guarantees checked on every input:
 *   - no crash, no out-of-bounds access, no undefined behaviour (run under AddressSanitizer/UBSan by the fuzz build);
 *   - a refused document has an error message "line N: ...";
 *   - an accepted document is JSON by RFC 8259's grammar as far as a second, independent reading can tell: written
 *     back canonically and parsed again, it gives the same canonical text (so strings, escapes and numbers were read
 *     consistently); fixed texts outside the grammar (hex, leading zeros, '+', inf, nan, trailing bytes, lone
 *     surrogates, raw control characters, \u0000) are refused.
 * Exit status 0 and a line "FUZZ json inputs N accepted A rejected R" on success; "FAIL ..." and 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#include "fuzz_rng.h"

#define DOC_MAX 2048

static const char *const seeds[] = {
	"{\"host\": {\"devices\": [{\"pci\": \"0000:b1:00.1\", \"ibdev\": \"mlx5_0\", \"iface\": \"enp177s0f1np1\"}]}}",
	"{\"dpu\": {\"devices\": [{\"pci\": \"03:00.1\", \"caps\": {\"dma_max_buf_size\": 2097152, \"dma_memcpy\": true,"
	" \"comch_max_msg_size\": 4080}, \"representors\": [{\"pci\": \"b1:00.1\", \"filter\": \"net\"}]}]}}",
	"[\"\\u0041\\u00e9\\ud83d\\ude00\", \"\\\"\\\\\\/\\b\\f\\n\\r\\t\", -0, 0.5, 1e10, -1.25E-3, 123456789, null, false]",
	"{\"a\": [[[[{}]]]], \"b\": {\"c\": \"\"}, \"d\": 0}",
	"\"x\"",
	"3.14159",
};

static const char specials[] = "\\u\"0123456789abcdefABCDEFxX+-eE.{}[],: \t\n\r\x01\x7f\x80\xc3\xa9\xed\xa0\x80";

static unsigned long accepted, rejected;

static void fail(const char *what, unsigned long i, const char *doc)
{
	printf("FAIL %s (input %lu): %s\n", what, i, doc);
	fflush(stdout);
	exit(1);
}

/* Canonical text of a tree: strings with only \" \\ and \u00XX escapes, numbers %.17g */
struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		if (o->buf == NULL)
			abort();
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void put_string(struct out *o, const char *s)
{
	put(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];

		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			put(o, esc, 2);
		} else if (*p < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			put(o, esc, 6);
		} else {
			put(o, (const char *)p, 1);
		}
	}
	put(o, "\"", 1);
}

static void canon(struct out *o, const struct json_value *v)
{
	char num[40];

	switch (v->type) {
	case JSON_NULL: put(o, "null", 4); break;
	case JSON_BOOL: v->boolean ? put(o, "true", 4) : put(o, "false", 5); break;
	case JSON_NUMBER:
		/* 1e999 is JSON and reads as infinity: write it back as such */
		if (isinf(v->number))
			snprintf(num, sizeof(num), "%s", v->number > 0 ? "1e999" : "-1e999");
		else
			snprintf(num, sizeof(num), "%.17g", v->number);
		put(o, num, strlen(num));
		break;
	case JSON_STRING: put_string(o, v->string); break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		put(o, v->type == JSON_ARRAY ? "[" : "{", 1);
		for (size_t i = 0; i < v->count; i++) {
			if (i > 0)
				put(o, ",", 1);
			if (v->type == JSON_OBJECT) {
				put_string(o, v->children[i].key);
				put(o, ":", 1);
			}
			canon(o, &v->children[i]);
		}
		put(o, v->type == JSON_ARRAY ? "]" : "}", 1);
		break;
	}
}

static size_t mutate(char *doc, size_t len)
{
	int mutations = 1 + (int)(rnd() % 6);

	for (int m = 0; m < mutations; m++) {
		size_t at = len ? (size_t)(rnd() % len) : 0;

		switch (rnd() % 5) {
		case 0: /* replace a byte by a special one */
			if (len)
				doc[at] = specials[rnd() % (sizeof(specials) - 1)];
			break;
		case 1: /* insert a special byte */
			if (len + 1 < DOC_MAX) {
				memmove(doc + at + 1, doc + at, len - at);
				doc[at] = specials[rnd() % (sizeof(specials) - 1)];
				len++;
			}
			break;
		case 2: /* delete a byte */
			if (len) {
				memmove(doc + at, doc + at + 1, len - at - 1);
				len--;
			}
			break;
		case 3: /* truncate */
			len = at;
			break;
		default: { /* duplicate a slice */
			size_t n = (size_t)(rnd() % 16);

			if (at + n <= len && len + n < DOC_MAX) {
				memmove(doc + at + n, doc + at, len - at);
				len += n;
			}
			break;
		}
		}
	}
	return len;
}

static void one(const char *doc, unsigned long i)
{
	char err[256] = "";
	struct json_value *v = json_parse(doc, err, sizeof(err));

	if (v == NULL) {
		if (strncmp(err, "line ", 5) != 0)
			fail("refused without a \"line N:\" message", i, doc);
		rejected++;
		return;
	}
	accepted++;
	{
		struct out a = {0}, b = {0};
		struct json_value *again;

		canon(&a, v);
		again = json_parse(a.buf, err, sizeof(err));
		if (again == NULL)
			fail("the canonical form of an accepted document is refused", i, a.buf);
		canon(&b, again);
		if (strcmp(a.buf, b.buf) != 0)
			fail("reading the canonical form again changes it", i, a.buf);
		json_free(again);
		free(a.buf);
		free(b.buf);
	}
	json_free(v);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	char doc[DOC_MAX + 1];
	/* Texts that must be refused: hex, leading zeros, '+', trailing bytes, lone surrogates, raw control characters */
	static const char *const bad[] = {"0x100000", "0100", "+1", "1.", ".5", "1e", "{} x", "\"\\ud800\"",
					  "\"\\udc00\"", "\"a\x01\"", "inf", "nan", "[1,]", "{\"a\" 1}", "\"\\u0000\""};

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char err[256];
		struct json_value *v = json_parse(bad[k], err, sizeof(err));

		if (v != NULL)
			fail("a text outside JSON's grammar was accepted", k, bad[k]);
	}
	for (size_t k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++)
		one(seeds[k], k);
	if (accepted != sizeof(seeds) / sizeof(seeds[0]))
		fail("a seed document was refused", 0, "");
	for (unsigned long i = 0; i < n; i++) {
		size_t len;

		if (rnd() % 8 == 0) { /* random bytes */
			len = (size_t)(rnd() % 64);
			for (size_t k = 0; k < len; k++)
				doc[k] = specials[rnd() % (sizeof(specials) - 1)];
		} else {
			const char *s = seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))];

			len = strlen(s);
			memcpy(doc, s, len);
			len = mutate(doc, len);
		}
		doc[len] = '\0';
		one(doc, i);
	}
	printf("FUZZ json inputs %lu accepted %lu rejected %lu\n", n, accepted, rejected);
	return 0;
}
