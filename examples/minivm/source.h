/* Reading a program file into memory. */
#ifndef MVM_SOURCE_H
#define MVM_SOURCE_H

#include <stddef.h>

/* Largest program accepted, in bytes: positions are 32-bit and nobody needs more. */
#define MVM_SOURCE_MAX (16u * 1024u * 1024u)

struct mvm_source {
    char *text; /* malloc'd, NUL-terminated (the lexer does not rely on it) */
    size_t len;
};

/*
 * Read `path` whole. Returns 0, or -1 with a message ("cannot open ...:
 * No such file or directory") in why[why_size].
 */
int mvm_source_read(const char *path, struct mvm_source *out, char *why, size_t why_size);

void mvm_source_free(struct mvm_source *s);

#endif
