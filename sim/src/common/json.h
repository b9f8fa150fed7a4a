/*
 * A small JSON reader for DOCA_SIM_CONFIG: parses a whole document into a tree, by RFC 8259's grammar (strings with
 * every escape, \uXXXX and surrogate pairs as UTF-8; decimal numbers only; nothing after the value). \u0000 is refused
 * (strings are C strings). No streaming.
 */
#ifndef SIM_JSON_H_
#define SIM_JSON_H_

#include <stdbool.h>
#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
	enum json_type type;
	bool boolean;
	double number;
	char *string;                 /* JSON_STRING */
	char *key;                    /* set when this value is a member of an object */
	struct json_value *children;  /* JSON_ARRAY / JSON_OBJECT: array of `count` values */
	size_t count;
};

/* Parse text; NULL on error with a message ("line N: ...") in err. Free with json_free. */
struct json_value *json_parse(const char *text, char *err, size_t err_len);
void json_free(struct json_value *value);

/* Member of an object by key, or NULL */
const struct json_value *json_get(const struct json_value *object, const char *key);

#endif /* SIM_JSON_H_ */
