/* See dump_parse.h. */
#define _POSIX_C_SOURCE 200809L
#include "dump_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t dump_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t dump_u64(const uint8_t *p)
{
    return (uint64_t)dump_u32(p) | (uint64_t)dump_u32(p + 4) << 32;
}

static int read_all(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *bigger = realloc(buf, cap);
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    fclose(f);
    *data = buf;
    *size = n;
    return 0;
}

int dump_load(const char *path, dump_file *out)
{
    memset(out, 0, sizeof *out);
    if (read_all(path, &out->data, &out->file_size) != 0)
        return -1;
    if (out->file_size < 40 || dump_u32(out->data) != 0x4A695444u) {
        dump_free(out);
        return -1;
    }
    size_t pos = dump_u32(out->data + 8), cap = 0;
    while (pos + 16 <= out->file_size) {
        uint32_t size = dump_u32(out->data + pos + 4);
        if (size < 16 || size > out->file_size - pos)
            break;
        if (out->n_records == cap) {
            cap = cap ? cap * 2 : 64;
            dump_record *bigger = realloc(out->records, cap * sizeof *bigger);
            if (!bigger) {
                dump_free(out);
                return -1;
            }
            out->records = bigger;
        }
        dump_record *r = &out->records[out->n_records++];
        r->id = dump_u32(out->data + pos);
        r->size = size;
        r->timestamp = dump_u64(out->data + pos + 8);
        r->offset = pos;
        r->body = out->data + pos + 16;
        pos += size;
    }
    out->records_end = pos;
    out->tail_is_zero = 1;
    for (size_t i = pos; i < out->file_size; i++)
        if (out->data[i])
            out->tail_is_zero = 0;
    return 0;
}

void dump_free(dump_file *d)
{
    free(d->data);
    free(d->records);
    memset(d, 0, sizeof *d);
}

int dump_code_load(const dump_record *r, dump_load_info *out)
{
    if (r->id != 0 || r->size < 16 + 40 + 1)
        return -1;
    const uint8_t *b = r->body;
    out->pid = dump_u32(b);
    out->tid = dump_u32(b + 4);
    out->vma = dump_u64(b + 8);
    out->code_addr = dump_u64(b + 16);
    out->code_size = dump_u64(b + 24);
    out->code_index = dump_u64(b + 32);
    out->name = (const char *)(b + 40);
    size_t body = r->size - 16;
    size_t name_len = strnlen(out->name, body - 40);
    if (40 + name_len + 1 + out->code_size != body)
        return -1; /* the code must be exactly the record's tail */
    out->code = b + body - out->code_size;
    return 0;
}

size_t dump_count(const dump_file *d, uint32_t id)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n_records; i++)
        n += d->records[i].id == id;
    return n;
}

int dump_tool_check(const char *path, char *msg, size_t cap)
{
#ifdef JITFRAMES_TOOL
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' check '%s' 2>&1", JITFRAMES_TOOL, path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(msg, 1, cap - 1, p);
    msg[n] = '\0';
    int status = pclose(p);
    if (strstr(msg, "not supported yet"))
        return -1;
    return status == 0 ? 0 : 1;
#else
    (void)path;
    snprintf(msg, cap, "no jitframes tool in this build");
    return -1;
#endif
}

const char *dump_path(const char *dir, long pid)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dir, pid);
    return path;
}

char test_dir[256];

int make_dir(void **state)
{
    (void)state;
    snprintf(test_dir, sizeof test_dir, "/tmp/jf-jitdump-test.XXXXXX");
    return mkdtemp(test_dir) ? 0 : -1;
}

int remove_dir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
    return system(cmd) == 0 ? 0 : -1;
}
