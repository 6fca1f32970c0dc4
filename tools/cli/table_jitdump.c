/*
 * Writing a jitdump (perf's tools/perf/Documentation/jitdump-specification.txt;
 * docs/formats.md, "Jitdump") from a published table: header, then per
 * region its CODE_UNWINDING_INFO and DEBUG_INFO (when it has them) before its
 * CODE_LOAD. Host byte order, as perf expects of a dump written on this
 * machine.
 */
#define _GNU_SOURCE
#include "table_jitdump.h"

#include "arch/host.h"
#include "jitdump_reader.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { NONCE_SIZE = 8, LOAD_FIXED = JD_PREFIX_SIZE + 40, UNWIND_FIXED = JD_PREFIX_SIZE + 24 };

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

static uint64_t round8(uint64_t v)
{
    return (v + 7) & ~(uint64_t)7;
}

static void put_zeros(FILE *f, size_t n)
{
    static const uint8_t zeros[64];
    for (; n > sizeof zeros; n -= sizeof zeros)
        fwrite(zeros, 1, sizeof zeros, f);
    fwrite(zeros, 1, n, f);
}

/* The nonce's bytes, with the zeros that keep every record 4-aligned where
 * the host needs it (as src/jitdump.c: arch/host.h). */
static size_t nonce_size(const tr_region *r)
{
    if (JF_HOST_UNALIGNED_STORE32_ATOMIC)
        return NONCE_SIZE;
    size_t unpadded = LOAD_FIXED + strlen(r->name) + 1 + r->size + NONCE_SIZE;
    return NONCE_SIZE + (4 - unpadded % 4) % 4;
}

/* Unwind data a reader holds (jitframes check: a record it keeps until
 * the load is at most JD_MAX_HELD_RECORD_SIZE), within what is left of room. */
static int unwind_sound(const tr_region *r, uint64_t room)
{
    return r->unwind && r->unwind_len && r->unwind_hdr_len <= r->unwind_len &&
           UNWIND_FIXED + 8 + (uint64_t)r->unwind_len <= JD_MAX_HELD_RECORD_SIZE && r->unwind_len <= room;
}

/* The code_size of r's CODE_LOAD: its code, then the nonce unless it goes
 * with unwind data (the table's unwind data is laid out for a load of size
 * bytes: perf places it after round8(code_size)). */
static uint64_t load_size(const tr_region *r, int with_unwind)
{
    return r->size + (with_unwind ? 0 : nonce_size(r));
}

uint64_t tj_unwind_end(const tr_region *r)
{
    return r->start + round8(load_size(r, 1)) + round8(r->unwind_len);
}

int tj_unwind_fits(const tr_region *r, uint64_t next_start)
{
    return next_start == 0 || next_start <= r->start || tj_unwind_end(r) <= next_start;
}

/* A bijection (splitmix64's finaliser): distinct indices, distinct nonces. */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
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

/* Line i of r's table, or of its first line alone when !table (i ==
 * count: its last line again, closing the code_size bytes of its CODE_LOAD
 * at end). */
static void line_at(const tr_region *r, int table, uint64_t end, size_t i, uint64_t *addr, uint32_t *line,
                    const char **file)
{
    if (!table || r->n_lines == 0) {
        const tr_line *first = r->n_lines ? &r->lines[0] : NULL;
        *addr = i ? end : r->start;
        *line = first ? first->line : r->line;
        *file = first && first->file ? first->file : r->file ? r->file : "??";
        return;
    }
    const tr_line *l = &r->lines[i < r->n_lines ? i : r->n_lines - 1];
    *addr = i < r->n_lines ? r->start + l->offset : end;
    *line = l->line;
    *file = l->file ? l->file : r->file ? r->file : "??";
}

static size_t debug_lines(const tr_region *r, int table)
{
    return (table && r->n_lines ? r->n_lines : 1) + 1;
}

/* The DEBUG_INFO record's size for r, with its line table or without. */
static uint64_t debug_info_size(const tr_region *r, int table, uint64_t end)
{
    uint64_t bytes = JD_PREFIX_SIZE + 16;
    for (size_t i = 0; i < debug_lines(r, table); i++) {
        uint64_t addr;
        uint32_t line;
        const char *file;
        line_at(r, table, end, i, &addr, &line, &file);
        bytes += 16 + strlen(file) + 1;
        if (bytes > JD_MAX_HELD_RECORD_SIZE)
            break; /* too big: enough known */
    }
    return bytes;
}

/* The region's line table (or its first line over all of it, when the
 * table would make a record larger than a reader holds, or than what is
 * left of *room), closed by an entry at its end (perf gives the last
 * entry's range no line: docs/formats.md). */
static void write_debug_info(FILE *f, const tr_region *r, uint64_t code_size, uint64_t ts, uint64_t *room)
{
    uint64_t end = r->start + code_size;
    uint64_t size = debug_info_size(r, 1, end);
    int table = size <= JD_MAX_HELD_RECORD_SIZE && size <= *room;
    if (!table)
        size = debug_info_size(r, 0, end);
    *room -= size < *room ? size : *room;
    size_t n = debug_lines(r, table);
    put_prefix(f, JD_CODE_DEBUG_INFO, size, ts);
    put64(f, r->start);
    put64(f, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t addr;
        uint32_t line;
        const char *file;
        line_at(r, table, end, i, &addr, &line, &file);
        put_line(f, addr, line, file);
    }
}

/* perf maps round8(code_size) + mapped_size bytes for the region and reads
 * .eh_frame_hdr through that mapping. */
static void write_unwinding_info(FILE *f, const tr_region *r, uint64_t ts)
{
    uint64_t record = round8(UNWIND_FIXED + (uint64_t)r->unwind_len);
    put_prefix(f, JD_CODE_UNWINDING_INFO, record, ts);
    put64(f, r->unwind_len);
    put64(f, r->unwind_hdr_len);
    put64(f, round8(r->unwind_len));
    fwrite(r->unwind, 1, r->unwind_len, f);
    put_zeros(f, (size_t)(record - UNWIND_FIXED - r->unwind_len));
}

/* code NULL: zeros in place of the code (it could not be read). */
/* nonced: the code is followed by nonce (see load_size). */
static void write_code_load(FILE *f, pid_t pid, const tr_region *r, const uint8_t *code, uint64_t index,
                            int nonced, uint64_t nonce, uint64_t ts)
{
    size_t name_size = strlen(r->name) + 1;
    put_prefix(f, JD_CODE_LOAD, LOAD_FIXED + name_size + load_size(r, !nonced), ts);
    put32(f, (uint32_t)pid);
    put32(f, (uint32_t)pid);
    put64(f, r->start);
    put64(f, r->start);
    put64(f, load_size(r, !nonced));
    put64(f, index);
    fwrite(r->name, 1, name_size, f);
    if (code)
        fwrite(code, 1, r->size, f);
    else
        put_zeros(f, r->size);
    if (nonced) {
        put64(f, nonce);
        put_zeros(f, nonce_size(r) - NONCE_SIZE);
    }
}

long tj_write_entries(FILE *out, pid_t pid, const tj_entry *v, size_t n, char *err, size_t err_cap)
{
    uint64_t seed = mix64(monotonic_ns() ^ ((uint64_t)getpid() << 32)), first = monotonic_ns();
    for (size_t i = 0; i < n; i++) /* no record older than the header (jitframes check warns) */
        first = v[i].ts < first ? v[i].ts : first;
    write_header(out, pid, first);
    uint64_t room = TJ_TOTAL_MAX; /* line tables and unwind data in all (a table may share one among many) */
    for (size_t i = 0; i < n; i++) {
        const tr_region *r = v[i].r;
        int with_unwind = v[i].unwind_ok && unwind_sound(r, room);
        if (with_unwind) {
            write_unwinding_info(out, r, v[i].ts);
            room -= r->unwind_len;
        }
        if (r->n_lines || (r->file && r->line))
            write_debug_info(out, r, load_size(r, with_unwind), v[i].ts, &room);
        write_code_load(out, pid, r, v[i].code, i + 1, !with_unwind, mix64(seed + i), v[i].ts);
    }
    if (ferror(out)) {
        snprintf(err, err_cap, "write error");
        return -1;
    }
    return (long)n;
}

long tj_write_jitdump(FILE *out, pid_t pid, const tr_snapshot *s, size_t *skipped, char *err, size_t err_cap)
{
    tj_entry *v = calloc(s->n_live ? s->n_live : 1, sizeof *v);
    uint64_t total = 0, ts = monotonic_ns();
    size_t n = 0;
    *skipped = 0;
    for (size_t i = 0; v && i < s->n_live; i++) {
        const tr_region *r = &s->live[i];
        uint8_t *bytes = r->size <= TJ_CODE_MAX && total + r->size <= TJ_TOTAL_MAX ? malloc(r->size) : NULL;
        if (!bytes || tr_read_process(&pid, r->start, bytes, r->size) != 0) {
            free(bytes);
            ++*skipped; /* too big, or its code is gone (unmapped since) */
            continue;
        }
        total += r->size;
        uint64_t next = i + 1 < s->n_live ? s->live[i + 1].start : 0;
        v[n++] = (tj_entry){r, bytes, ts, tj_unwind_fits(r, next)};
    }
    long written = v ? tj_write_entries(out, pid, v, n, err, err_cap) : -1;
    if (!v)
        snprintf(err, err_cap, "out of memory");
    for (size_t i = 0; i < n; i++)
        free((void *)v[i].code);
    free(v);
    return written;
}
