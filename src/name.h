/*
 * Region names as every sink writes them: sanitised once at registration.
 */
#ifndef JF_NAME_H
#define JF_NAME_H

#include <stddef.h>

/* Copy `name` into dst (capacity cap >= 1) replacing control characters and
 * invalid UTF-8 with '?', cutting at JF_NAME_MAX bytes on a character
 * boundary. Returns the length written (dst is NUL-terminated). */
size_t jf__sanitize_name(char *dst, size_t cap, const char *name);

#endif
