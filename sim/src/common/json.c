/*
 * Recursive-descent JSON parser behind json.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 32

struct parser {
	const char *p;
	const char *start;
	char *err;
	size_t err_len;
	bool failed;
};

static void fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int line = 1;
	int used;

	if (ps->failed)
		return;
	ps->failed = true;
	for (const char *c = ps->start; c < ps->p; c++)
		line += (*c == '\n');
	used = snprintf(ps->err, ps->err_len, "line %d: ", line);
	if (used < 0 || (size_t)used >= ps->err_len)
		return;
	va_start(ap, fmt);
	vsnprintf(ps->err + used, ps->err_len - (size_t)used, fmt, ap);
	va_end(ap);
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static void release(struct json_value *v)
{
	free(v->string);
	free(v->key);
	for (size_t i = 0; i < v->count; i++)
		release(&v->children[i]);
	free(v->children);
}

/* Four hex digits at p, or -1 */
static long hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* The code point of a \u escape at ps->p (just after the 'u'), joining a surrogate pair; -1 on error (reported) */
static long parse_unicode_escape(struct parser *ps)
{
	long hi = hex4(ps->p);
	long lo;

	if (hi < 0) {
		fail(ps, "\\u must be followed by four hex digits");
		return -1;
	}
	ps->p += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff) {
		fail(ps, "\\u%04lx is a lone low surrogate", hi);
		return -1;
	}
	if (hi < 0xd800 || hi > 0xdbff)
		return hi;
	if (ps->p[0] != '\\' || ps->p[1] != 'u' || (lo = hex4(ps->p + 2)) < 0xdc00 || lo > 0xdfff) {
		fail(ps, "\\u%04lx (a high surrogate) must be followed by a \\u escape of a low surrogate", hi);
		return -1;
	}
	ps->p += 6;
	return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* Append code point cp (<= 0x10ffff) to out as UTF-8; out has room for 4 more bytes */
static size_t put_utf8(char *out, long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static char *parse_string_raw(struct parser *ps)
{
	size_t cap = 16, len = 0;
	char *out;

	if (*ps->p != '"') {
		fail(ps, "expected a string");
		return NULL;
	}
	ps->p++;
	out = malloc(cap);
	if (out == NULL) {
		fail(ps, "out of memory");
		return NULL;
	}
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p;
		long cp = c;

		if (c == '\0' || c == '\n') {
			fail(ps, "unterminated string");
			free(out);
			return NULL;
		}
		if (c < 0x20) {
			fail(ps, "control character 0x%02x in a string (write it as a \\u escape)", c);
			free(out);
			return NULL;
		}
		ps->p++;
		if (c == '\\') {
			char e = *ps->p++;

			switch (e) {
			case '"': cp = '"'; break;
			case '\\': cp = '\\'; break;
			case '/': cp = '/'; break;
			case 'n': cp = '\n'; break;
			case 't': cp = '\t'; break;
			case 'r': cp = '\r'; break;
			case 'b': cp = '\b'; break;
			case 'f': cp = '\f'; break;
			case 'u':
				cp = parse_unicode_escape(ps);
				if (cp == 0) {
					fail(ps, "\\u0000 (a NUL character) is not allowed in a string here");
					cp = -1;
				}
				break;
			default:
				ps->p--;
				fail(ps, "invalid escape \\%c", e ? e : '?');
				cp = -1;
			}
			if (cp < 0) {
				free(out);
				return NULL;
			}
		}
		if (len + 5 >= cap) {
			char *bigger = realloc(out, cap * 2);

			if (bigger == NULL) {
				free(out);
				fail(ps, "out of memory");
				return NULL;
			}
			out = bigger;
			cap *= 2;
		}
		/* Raw bytes (UTF-8 of the file) are copied as they are; escapes are encoded as UTF-8 */
		if (c == '\\')
			len += put_utf8(out + len, cp);
		else
			out[len++] = (char)c;
	}
	ps->p++;
	out[len] = '\0';
	return out;
}

/* The digits of a fraction or an exponent: at least one (else fail with why), *p moved past them all */
static bool skip_digits(struct parser *ps, const char **p, const char *why)
{
	if (!(**p >= '0' && **p <= '9')) {
		fail(ps, "%s", why);
		return false;
	}
	while (**p >= '0' && **p <= '9')
		(*p)++;
	return true;
}

/* A number by JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (no hex, no leading zeros, no +) */
static bool parse_number(struct parser *ps, double *out)
{
	const char *p = ps->p;
	char text[64];
	char *end;

	if (*p == '-')
		p++;
	if (*p == '0') {
		p++;
		if (*p >= '0' && *p <= '9') {
			fail(ps, "numbers may not have leading zeros");
			return false;
		}
	} else if (*p >= '1' && *p <= '9') {
		while (*p >= '0' && *p <= '9')
			p++;
	} else {
		fail(ps, "unexpected character '%c'", *ps->p ? *ps->p : '?');
		return false;
	}
	if (*p == '.') {
		p++;
		if (!skip_digits(ps, &p, "a digit must follow the decimal point"))
			return false;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!skip_digits(ps, &p, "a digit must follow the exponent"))
			return false;
	}
	if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '.' || *p == '_') {
		fail(ps, "not a JSON number (JSON has decimal numbers only)");
		return false;
	}
	if ((size_t)(p - ps->p) >= sizeof(text)) {
		fail(ps, "number too long");
		return false;
	}
	/* strtod on a copy holding exactly the validated text (it would accept hex, inf and nan on its own) */
	memcpy(text, ps->p, (size_t)(p - ps->p));
	text[p - ps->p] = '\0';
	*out = strtod(text, &end);
	if (*end != '\0') {
		fail(ps, "cannot read the number %s", text);
		return false;
	}
	ps->p = p;
	return true;
}

static bool parse_value(struct parser *ps, struct json_value *out, int depth);

static bool append(struct parser *ps, struct json_value *parent, struct json_value *child)
{
	struct json_value *grown = realloc(parent->children, (parent->count + 1) * sizeof(*grown));

	if (grown == NULL) {
		release(child);
		fail(ps, "out of memory");
		return false;
	}
	parent->children = grown;
	parent->children[parent->count++] = *child;
	return true;
}

static bool parse_container(struct parser *ps, struct json_value *out, int depth)
{
	bool is_object = (*ps->p == '{');
	char close = is_object ? '}' : ']';

	out->type = is_object ? JSON_OBJECT : JSON_ARRAY;
	ps->p++;
	skip_space(ps);
	if (*ps->p == close) {
		ps->p++;
		return true;
	}
	for (;;) {
		struct json_value child;
		char *key = NULL;

		memset(&child, 0, sizeof(child));
		skip_space(ps);
		if (is_object) {
			key = parse_string_raw(ps);
			if (key == NULL)
				return false;
			skip_space(ps);
			if (*ps->p != ':') {
				free(key);
				fail(ps, "expected ':' after key");
				return false;
			}
			ps->p++;
		}
		if (!parse_value(ps, &child, depth + 1)) {
			free(key);
			release(&child);
			return false;
		}
		child.key = key;
		if (!append(ps, out, &child))
			return false;
		skip_space(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			return true;
		}
		fail(ps, "expected ',' or '%c'", close);
		return false;
	}
}

static bool parse_value(struct parser *ps, struct json_value *out, int depth)
{
	if (depth > JSON_MAX_DEPTH) {
		fail(ps, "nested too deeply");
		return false;
	}
	skip_space(ps);
	switch (*ps->p) {
	case '{':
	case '[':
		return parse_container(ps, out, depth);
	case '"':
		out->type = JSON_STRING;
		out->string = parse_string_raw(ps);
		return out->string != NULL;
	case 't':
	case 'f':
	case 'n':
		if (strncmp(ps->p, "true", 4) == 0) {
			out->type = JSON_BOOL;
			out->boolean = true;
			ps->p += 4;
		} else if (strncmp(ps->p, "false", 5) == 0) {
			out->type = JSON_BOOL;
			ps->p += 5;
		} else if (strncmp(ps->p, "null", 4) == 0) {
			out->type = JSON_NULL;
			ps->p += 4;
		} else {
			fail(ps, "unexpected word");
			return false;
		}
		return true;
	case '\0':
		fail(ps, "unexpected end of input");
		return false;
	default:
		out->type = JSON_NUMBER;
		return parse_number(ps, &out->number);
	}
}

struct json_value *json_parse(const char *text, char *err, size_t err_len)
{
	struct parser ps = {.p = text, .start = text, .err = err, .err_len = err_len, .failed = false};
	struct json_value *root = calloc(1, sizeof(*root));

	if (root == NULL) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (parse_value(&ps, root, 0)) {
		skip_space(&ps);
		if (*ps.p != '\0')
			fail(&ps, "trailing characters after the JSON value");
	}
	if (ps.failed) {
		json_free(root);
		return NULL;
	}
	return root;
}

void json_free(struct json_value *value)
{
	if (value == NULL)
		return;
	release(value);
	free(value);
}

const struct json_value *json_get(const struct json_value *object, const char *key)
{
	if (object == NULL || object->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < object->count; i++)
		if (strcmp(object->children[i].key, key) == 0)
			return &object->children[i];
	return NULL;
}
