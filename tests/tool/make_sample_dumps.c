/* Write DIR/good.dump (valid) and DIR/bad.dump (mapped_size 0) for the
 * command-line test. Usage: make_sample_dumps DIR */
#include "jitdump_builder.h"

#include <stdio.h>
#include <stdlib.h>

static int save(const char *dir, const char *name, const jdb *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static void build(jdb *b, uint64_t mapped_size)
{
    static const jdb_line lines[] = {{0, 7, "sample.c"}, {4, 8, "sample.c"}, {64, 9, "sample.c"}};
    jdb_fde fde = {0, 64, jdb_framed_insns, jdb_framed_insns_size};
    size_t eh, hdr;
    uint8_t *data = jdb_unwind_data(64, &fde, 1, &eh, &hdr, NULL);
    jdb_header(b, 100);
    jdb_debug(b, 101, 0x10000, lines, 3);
    jdb_unwind(b, 101, data, eh, hdr, mapped_size);
    jdb_load(b, 102, 0x10000, 64, 0, "sample_fn");
    jdb_close(b, 103);
    free(data);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_sample_dumps DIR\n");
        return 2;
    }
    jdb good, bad;
    jdb_init(&good, 0);
    jdb_init(&bad, 0);
    build(&good, 128);
    build(&bad, 0);
    int rc = save(argv[1], "good.dump", &good) | save(argv[1], "bad.dump", &bad);
    jdb_free(&good);
    jdb_free(&bad);
    return rc;
}
