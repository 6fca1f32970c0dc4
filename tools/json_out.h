/*
 * JSON strings for the tool's --json output: quotes, backslashes and
 * control characters escaped, other bytes as they are.
 */
#ifndef JFT_JSON_OUT_H
#define JFT_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

void json_string_n(FILE *out, const char *s, size_t n);
void json_string(FILE *out, const char *s);

#endif
