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
		char c = *ps->p;

		if (c == '\0' || c == '\n') {
			fail(ps, "unterminated string");
			free(out);
			return NULL;
		}
		if (c == '\\') {
			ps->p++;
			switch (*ps->p) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			default:
				fail(ps, "unsupported escape \\%c", *ps->p);
				free(out);
				return NULL;
			}
		}
		if (len + 1 >= cap) {
			char *bigger = realloc(out, cap * 2);

			if (bigger == NULL) {
				free(out);
				fail(ps, "out of memory");
				return NULL;
			}
			out = bigger;
			cap *= 2;
		}
		out[len++] = c;
		ps->p++;
	}
	ps->p++;
	out[len] = '\0';
	return out;
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
	default: {
		char *end;

		out->type = JSON_NUMBER;
		out->number = strtod(ps->p, &end);
		if (end == ps->p) {
			fail(ps, "unexpected character '%c'", *ps->p ? *ps->p : '?');
			return false;
		}
		ps->p = end;
		return true;
	}
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
			fail(&ps, "trailing characters after the document");
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
