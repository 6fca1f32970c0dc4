/*
 * Writing a jitdump (perf's tools/perf/Documentation/jitdump-specification.txt;
 * docs/formats.md, "Jitdump") from a published table: header, then per
 * region a DEBUG_INFO (when it has a source file and line) before its CODE_LOAD.
 * Host byte order, as perf expects of a dump written on this machine.
 */
#define _GNU_SOURCE
#include "table_jitdump.h"

#include "arch/host.h"
#include "jitdump_reader.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CODE_MAX = 16u << 20 };
#define TOTAL_MAX ((uint64_t)256 << 20)

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void put32(FILE *f, uint32_t v)
{
    fwrite(&v, sizeof v, 1, f);
}

static void put64(FILE *f, uint64_t v)
{
    fwrite(&v, sizeof v, 1, f);
}

static void put_prefix(FILE *f, uint32_t id, uint64_t size, uint64_t ts)
{
    put32(f, id);
    put32(f, (uint32_t)size);
    put64(f, ts);
}

static void write_header(FILE *f, pid_t pid, uint64_t ts)
{
    put32(f, JD_MAGIC);
    put32(f, 1);
    put32(f, JD_HEADER_SIZE);
    put32(f, JF_HOST_ELF_MACHINE);
    put32(f, 0);
    put32(f, (uint32_t)pid);
    put64(f, ts);
    put64(f, 0);
}

static void put_line(FILE *f, uint64_t addr, uint32_t line, const char *file)
{
    put64(f, addr);
    put32(f, line);
    put32(f, 0);
    fwrite(file, 1, strlen(file) + 1, f);
}

/* Line i of r's table (i == n_lines: its first line, as the closing entry). */
static void line_at(const tr_region *r, size_t i, uint64_t *addr, uint32_t *line, const char **file)
{
    if (r->n_lines == 0) {
        *addr = i ? r->start + r->size : r->start;
        *line = r->line;
        *file = r->file;
        return;
    }
    const tr_line *l = &r->lines[i < r->n_lines ? i : r->n_lines - 1];
    *addr = i < r->n_lines ? r->start + l->offset : r->start + r->size;
    *line = l->line;
    *file = l->file ? l->file : r->file ? r->file : "??";
}

/* The region's line table (or its first line over all of it), closed by an
 * entry at its end (perf gives the last entry's range no line:
 * docs/formats.md). */
static void write_debug_info(FILE *f, const tr_region *r, uint64_t ts)
{
    size_t n = (r->n_lines ? r->n_lines : 1) + 1, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t addr;
        uint32_t line;
        const char *file;
        line_at(r, i, &addr, &line, &file);
        bytes += 16 + strlen(file) + 1;
    }
    put_prefix(f, JD_CODE_DEBUG_INFO, JD_PREFIX_SIZE + 16 + bytes, ts);
    put64(f, r->start);
    put64(f, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t addr;
        uint32_t line;
        const char *file;
        line_at(r, i, &addr, &line, &file);
        put_line(f, addr, line, file);
    }
}

static void write_code_load(FILE *f, pid_t pid, const tr_region *r, const uint8_t *code, uint64_t index,
                            uint64_t ts)
{
    size_t name_size = strlen(r->name) + 1;
    put_prefix(f, JD_CODE_LOAD, JD_PREFIX_SIZE + 40 + name_size + r->size, ts);
    put32(f, (uint32_t)pid);
    put32(f, (uint32_t)pid);
    put64(f, r->start);
    put64(f, r->start);
    put64(f, r->size);
    put64(f, index);
    fwrite(r->name, 1, name_size, f);
    fwrite(code, 1, r->size, f);
}

long tj_write_jitdump(FILE *out, pid_t pid, const tr_snapshot *s, size_t *skipped, char *err, size_t err_cap)
{
    uint8_t *code = malloc(CODE_MAX);
    if (!code) {
        snprintf(err, err_cap, "out of memory");
        return -1;
    }
    uint64_t ts = monotonic_ns(), total = 0;
    long written = 0;
    *skipped = 0;
    write_header(out, pid, ts);
    for (size_t i = 0; i < s->n_live; i++) {
        const tr_region *r = &s->live[i];
        if (r->size > CODE_MAX || total + r->size > TOTAL_MAX ||
            tr_read_process(&pid, r->start, code, r->size) != 0) {
            ++*skipped; /* too big, or its code is gone (unmapped since) */
            continue;
        }
        total += r->size;
        if (r->n_lines || (r->file && r->line))
            write_debug_info(out, r, ts);
        write_code_load(out, pid, r, code, (uint64_t)written++, ts);
    }
    free(code);
    if (ferror(out)) {
        snprintf(err, err_cap, "write error");
        return -1;
    }
    return written;
}
