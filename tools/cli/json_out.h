/*
 * JSON strings for the tool's --json output, always valid UTF-8 that shows
 * no control sequence when printed: quotes and backslashes escaped; control
 * characters (C0, DEL, C1) and bidirectional formatting characters as
 * \uXXXX of their code point; a byte that is not valid UTF-8 as \ufffd
 * (U+FFFD, the replacement character); other characters as they are.
 */
#ifndef JFT_JSON_OUT_H
#define JFT_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

void json_string_n(FILE *out, const char *s, size_t n);
void json_string(FILE *out, const char *s);

#endif
