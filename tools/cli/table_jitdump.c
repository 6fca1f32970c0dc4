/*
 * Writing a jitdump (perf's tools/perf/Documentation/jitdump-specification.txt;
 * docs/formats.md, "Jitdump") from a published table: header, then per
 * region its CODE_UNWINDING_INFO and DEBUG_INFO (when it has them) before its
 * CODE_LOAD. The records are the library's own encoders' (src/jitdump_encode.c,
 * as the jitdump sink writes them), in the host's byte order.
 */
#define _GNU_SOURCE
#include "table_jitdump.h"

#include "jitdump_encode.h"
#include "jitdump_reader.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Unwind data a reader holds (jitframes check: a record it keeps until
 * the load is at most JD_MAX_HELD_RECORD_SIZE), within what is left of room. */
static int unwind_sound(const tr_region *r, uint64_t room)
{
    return r->unwind && r->unwind_len && r->unwind_hdr_len <= r->unwind_len &&
           JITDUMP_UNWIND_FIXED + 8 + (uint64_t)r->unwind_len <= JD_MAX_HELD_RECORD_SIZE &&
           r->unwind_len <= room;
}

/* The code_size of r's CODE_LOAD: its code, then the nonce unless it goes
 * with unwind data (the table's unwind data is laid out for a load of size
 * bytes: perf places it after round8(code_size)). */
static uint64_t load_size(const tr_region *r, int with_unwind)
{
    return r->size + (with_unwind ? 0 : jf__jitdump_nonce_size(strlen(r->name), (size_t)r->size));
}

uint64_t tj_unwind_end(const tr_region *r)
{
    return r->start + jf__round_up((size_t)load_size(r, 1), 8) + jf__jitdump_mapped_size(r->unwind_len);
}

int tj_unwind_fits(const tr_region *r, uint64_t next_start)
{
    return next_start == 0 || next_start <= r->start || tj_unwind_end(r) <= next_start;
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

/* r's DEBUG_INFO, with its line table or without; the code it describes
 * ends at `end`. Stops early (incomplete) once past `stop_after` bytes. */
static void put_debug_info(jf__writer *w, const tr_region *r, int table, uint64_t end, uint64_t ts,
                           size_t stop_after)
{
    size_t n = debug_lines(r, table);
    size_t start = jf__jitdump_begin_record(w, JIT_CODE_DEBUG_INFO, ts);
    jf__jitdump_put_debug_head(w, r->start, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t addr;
        uint32_t line;
        const char *file;
        line_at(r, table, end, i, &addr, &line, &file);
        jf__jitdump_put_debug_entry(w, addr, line, file);
        if (w->pos - start > stop_after)
            return; /* too big: enough known */
    }
    jf__jitdump_end_record(w, start, JITDUMP_RECORD_ALIGN);
}

static uint64_t debug_info_size(const tr_region *r, int table, uint64_t end)
{
    jf__writer w;
    jf__writer_init(&w, NULL, 0); /* measures */
    put_debug_info(&w, r, table, end, 0, JD_MAX_HELD_RECORD_SIZE);
    return w.pos;
}

/* Whether r's DEBUG_INFO carries its line table: not when that makes a
 * record larger than a reader holds, or than what is left of *room (then
 * its first line covers all of it). Takes the record's size from *room. */
static int debug_table_fits(const tr_region *r, uint64_t code_size, uint64_t *room)
{
    uint64_t end = r->start + code_size;
    uint64_t size = debug_info_size(r, 1, end);
    int table = size <= JD_MAX_HELD_RECORD_SIZE && size <= *room;
    if (!table)
        size = debug_info_size(r, 0, end);
    *room -= size < *room ? size : *room;
    return table;
}

/* perf maps round8(code_size) + mapped_size bytes for the region and reads
 * .eh_frame_hdr through that mapping. */
static void put_unwinding_info(jf__writer *w, const tr_region *r, uint64_t ts)
{
    size_t start = jf__jitdump_begin_record(w, JIT_CODE_UNWINDING_INFO, ts);
    size_t sizes_at = w->pos;
    jf__put_zeros(w, 24);
    jf__put_bytes(w, r->unwind, r->unwind_len);
    jf__jitdump_set_unwinding_sizes(w, sizes_at, r->unwind_len, r->unwind_hdr_len,
                                    jf__jitdump_mapped_size(r->unwind_len));
    jf__jitdump_end_record(w, start, JITDUMP_RECORD_ALIGN);
}

/* How one region goes out: with its unwind data, its line table. */
typedef struct region_shape {
    int with_unwind;
    int lines; /* 0: no DEBUG_INFO; 1: its first line; 2: its line table */
    uint64_t index, nonce;
} region_shape;

/* e's records: CODE_UNWINDING_INFO, DEBUG_INFO (as `shape` says), then its
 * CODE_LOAD, whose code is followed by the nonce unless it has unwind data
 * (see load_size). */
static void put_region(jf__writer *w, pid_t pid, const tj_entry *e, const region_shape *shape)
{
    const tr_region *r = e->r;
    if (shape->with_unwind)
        put_unwinding_info(w, r, e->ts);
    uint64_t code_size = load_size(r, shape->with_unwind);
    if (shape->lines)
        put_debug_info(w, r, shape->lines == 2, r->start + code_size, e->ts, SIZE_MAX);
    jf__jitdump_load load = {
        .pid = (uint32_t)pid,
        .tid = (uint32_t)pid,
        .addr = r->start,
        .index = shape->index,
        .name = r->name,
        .code = e->code,
        .size = (size_t)r->size,
        .nonce_size = (size_t)(code_size - r->size),
        .nonce = shape->nonce,
    };
    jf__jitdump_end_record(w, jf__jitdump_put_code_load(w, &load, e->ts), 1);
}

/* Encode e's records into *buf (grown as needed) and write them out. */
static int write_region(FILE *out, pid_t pid, const tj_entry *e, const region_shape *shape, uint8_t **buf,
                        size_t *cap)
{
    jf__writer w;
    jf__writer_init(&w, NULL, 0);
    put_region(&w, pid, e, shape); /* measures */
    if (w.pos > *cap) {
        uint8_t *p = realloc(*buf, w.pos);
        if (!p)
            return -1;
        *buf = p;
        *cap = w.pos;
    }
    jf__writer_init(&w, *buf, *cap);
    put_region(&w, pid, e, shape);
    return jf__writer_ok(&w) && fwrite(*buf, 1, w.pos, out) == w.pos ? 0 : -1;
}

static void write_header(FILE *out, pid_t pid, uint64_t ts)
{
    uint8_t header[JITDUMP_HEADER_SIZE];
    jf__writer w;
    jf__writer_init(&w, header, sizeof header);
    jf__jitdump_put_file_header(&w, (uint32_t)pid, ts);
    fwrite(header, 1, w.pos, out);
}

long tj_write_entries(FILE *out, pid_t pid, const tj_entry *v, size_t n, char *err, size_t err_cap)
{
    uint64_t seed = jf__jitdump_nonce_seed(), first = jf__monotonic_ns();
    for (size_t i = 0; i < n; i++) /* no record older than the header (jitframes check warns) */
        first = v[i].ts < first ? v[i].ts : first;
    write_header(out, pid, first);
    uint64_t room = TJ_TOTAL_MAX; /* line tables and unwind data in all (a table may share one among many) */
    uint8_t *buf = NULL;
    size_t cap = 0;
    int failed = 0;
    for (size_t i = 0; i < n && !failed; i++) {
        const tr_region *r = v[i].r;
        region_shape shape = {.with_unwind = v[i].unwind_ok && unwind_sound(r, room),
                              .index = i + 1,
                              .nonce = jf__jitdump_nonce(seed, i)};
        if (shape.with_unwind)
            room -= r->unwind_len;
        if (r->n_lines || (r->file && r->line))
            shape.lines = 1 + debug_table_fits(r, load_size(r, shape.with_unwind), &room);
        failed = write_region(out, pid, &v[i], &shape, &buf, &cap) != 0;
    }
    free(buf);
    if (failed || ferror(out)) {
        snprintf(err, err_cap, failed && !ferror(out) ? "out of memory" : "write error");
        return -1;
    }
    return (long)n;
}

long tj_write_jitdump(FILE *out, pid_t pid, const tr_snapshot *s, size_t *skipped, char *err, size_t err_cap)
{
    tj_entry *v = calloc(s->n_live ? s->n_live : 1, sizeof *v);
    uint64_t total = 0, ts = jf__monotonic_ns();
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
