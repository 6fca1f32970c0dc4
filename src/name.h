/*
 * Region names as every sink writes them: sanitised once at registration.
 */
#ifndef JF_NAME_H
#define JF_NAME_H

#include <stddef.h>

/* Copy `name` into dst replacing control characters and invalid UTF-8 with
 * '?', cutting at len bytes on a character boundary. len is the caller's
 * strnlen(name, JF_NAME_MAX): sanitising never lengthens a name (one '?'
 * per bad byte), so dst needs len + 1 bytes. Returns the length written
 * (dst is NUL-terminated). */
size_t jf__sanitize_name(char *dst, const char *name, size_t len);

#endif
