/* Reading a program file into memory, with errors worded for the user. */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int source_fail(char *why, size_t why_size, const char *what, const char *path, int err)
{
    snprintf(why, why_size, "cannot %s %s: %s", what, path, strerror(err));
    return -1;
}

/* Read at most MVM_SOURCE_MAX bytes; one more byte read means the file is too big. */
static int source_read_stream(FILE *f, const char *path, struct mvm_source *out, char *why, size_t why_size)
{
    char *buf = malloc(MVM_SOURCE_MAX + 2);
    if (!buf)
        return source_fail(why, why_size, "read", path, ENOMEM);
    size_t n = fread(buf, 1, MVM_SOURCE_MAX + 1, f);
    if (ferror(f)) {
        int err = errno ? errno : EIO;
        free(buf);
        return source_fail(why, why_size, "read", path, err);
    }
    if (n > MVM_SOURCE_MAX) {
        free(buf);
        snprintf(why, why_size, "%s: program larger than %u bytes", path, MVM_SOURCE_MAX);
        return -1;
    }
    buf[n] = '\0';
    char *shrunk = realloc(buf, n + 1);
    out->text = shrunk ? shrunk : buf;
    out->len = n;
    return 0;
}

int mvm_source_read(const char *path, struct mvm_source *out, char *why, size_t why_size)
{
    out->text = NULL;
    out->len = 0;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return source_fail(why, why_size, "open", path, errno);
    int rc = source_read_stream(f, path, out, why, why_size);
    fclose(f);
    return rc;
}

void mvm_source_free(struct mvm_source *s)
{
    free(s->text);
    s->text = NULL;
    s->len = 0;
}
