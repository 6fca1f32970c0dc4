/*
 * jitdump walker and validator. What perf relies on (tools/perf/util/
 * jitdump.c and genelf.c, perf 6.x):
 * - header: magic in either byte order, version <= 1, flags without bits
 *   other than bit 0 (arch timestamps); header size is trusted to skip
 *   extensions. We require exactly version 1, size 40, reserved 0.
 * - records are read back to back: perf stops at a record header whose size
 *   is < 16 (so a zero-filled tail ends the dump) and does NOT require any
 *   alignment of record sizes or offsets; we check none either (the
 *   unwinding data alone is zero padded to 8, per the format).
 * - debug and unwinding info are kept until the next CODE_LOAD and used for
 *   it; the code is the last code_size bytes of a CODE_LOAD record. A
 *   CODE_MOVE reads the kept unwinding info's mapped_size (for the moved
 *   mapping) and leaves it kept: a later load or move without its own would
 *   take it, unless it describes nothing (no FDE, mapped_size 0).
 * - the synthesized DSO maps round8(code_size) + mapped_size bytes at
 *   code_addr (code_size alone without unwinding info; a CODE_MOVE maps it
 *   at new_code_addr with the kept unwinding info's mapped_size, if any),
 *   with .eh_frame at offset round8(code_size) and .eh_frame_hdr after it.
 * Everything else we check (order, indices, timestamps, overlaps, line
 * table closing entry) is what makes perf's output right rather than what
 * makes it read the file.
 * The walk streams: one record is read at a time, a debug or unwinding
 * record is kept until its CODE_LOAD, and the live mappings are kept for
 * the overlap and CODE_MOVE checks; each of these is bounded
 * (jitdump_reader.h), so any input, endless ones too, is read in bounded
 * memory.
 */
#include "jitdump_reader.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A synthesized mapping [start, end) of a live load, sorted by start. */
typedef struct live_map {
    uint64_t start, end, code_end, index, load_offset;
} live_map;

typedef struct pending {
    int present;
    jd_record rec;
    uint8_t *bytes;   /* the record, owned: rec points into it */
    jd_line *lines;   /* debug info: decoded entries */
    int used_by_move; /* unwinding info: a CODE_MOVE read it; perf keeps it */
} pending;

typedef struct walker {
    jft_stream *in;
    uint8_t *cur; /* the record being read (at most JD_MAX_RECORD_SIZE bytes) */
    size_t cur_cap;
    jd_header h;
    unsigned address_size;
    const jd_visitor *v;
    void *ctx;
    jft_rules rules;
    jd_summary *sum;
    jft_error *err;
    uint64_t last_timestamp;
    int have_index;
    uint64_t last_index;
    int closed;
    int seen_record;
    uint64_t close_offset;
    pending debug, unwind;
    live_map *live;
    size_t n_live, cap_live;
} walker;

const char *jd_record_name(uint32_t id)
{
    static const char *const names[] = {"CODE_LOAD", "CODE_MOVE", "CODE_DEBUG_INFO", "CODE_CLOSE",
                                        "CODE_UNWINDING_INFO"};
    return id < sizeof names / sizeof names[0] ? names[id] : "unknown record";
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* A rule perf does not enforce: counted, the first one kept, not an error. */
static void warn(walker *w, uint64_t where, const char *fmt, ...) JFT_PRINTF(3, 4);
static void warn(walker *w, uint64_t where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    w->sum->warnings++;
    jft_vfail(&w->sum->warning, where, fmt, ap);
    va_end(ap);
}

/* ---- fixed-size fields ---------------------------------------------------- */

/* One field of a record's (or the header's) fixed part, in file order: where
 * it goes in the decoded struct and how many bytes it takes (4 or 8). */
typedef struct field {
    size_t at;
    unsigned width;
} field;

#define FIELD(type, member)                                 \
    {                                                       \
        offsetof(type, member), sizeof(((type *)0)->member) \
    }
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const field header_fields[] = {
    FIELD(jd_header, version),  FIELD(jd_header, total_size), FIELD(jd_header, elf_mach),
    FIELD(jd_header, reserved), FIELD(jd_header, pid),        FIELD(jd_header, timestamp),
    FIELD(jd_header, flags),
};
static const field prefix_fields[] = {FIELD(jd_record, id), FIELD(jd_record, total_size),
                                      FIELD(jd_record, timestamp)};
static const field load_fields[] = {
    FIELD(jd_load, pid),       FIELD(jd_load, tid),       FIELD(jd_load, vma),
    FIELD(jd_load, code_addr), FIELD(jd_load, code_size), FIELD(jd_load, code_index),
};
static const field move_fields[] = {
    FIELD(jd_move, pid),           FIELD(jd_move, tid),           FIELD(jd_move, vma),
    FIELD(jd_move, old_code_addr), FIELD(jd_move, new_code_addr), FIELD(jd_move, code_size),
    FIELD(jd_move, code_index),
};
static const field debug_fields[] = {FIELD(jd_debug, code_addr), FIELD(jd_debug, nr_entry)};
static const field line_fields[] = {FIELD(jd_line, addr), FIELD(jd_line, lineno), FIELD(jd_line, discrim)};
static const field unwind_fields[] = {FIELD(jd_unwind, unwinding_size), FIELD(jd_unwind, eh_frame_hdr_size),
                                      FIELD(jd_unwind, mapped_size)};

/* Read n fields into *out in the reader's byte order (a short read sets
 * r->overrun and leaves zeros). Returns how many bytes they take. */
static uint32_t read_fields(jft_reader *r, void *out, const field *f, size_t n)
{
    uint32_t size = 0;
    for (size_t i = 0; i < n; i++) {
        char *to = (char *)out + f[i].at;
        if (f[i].width == 4) {
            uint32_t v = jft_u32(r);
            memcpy(to, &v, sizeof v);
        } else {
            uint64_t v = jft_u64(r);
            memcpy(to, &v, sizeof v);
        }
        size += f[i].width;
    }
    return size;
}

/* Read a record's fixed part (after its 16-byte prefix) into *out. A record
 * too short to hold it (r->overrun) breaks a rule: the result is the rule's
 * verdict (0 to keep going, -1 to stop). */
static int read_fixed_part(walker *w, const jd_record *rec, jft_reader *r, void *out, const field *f,
                           size_t n)
{
    uint32_t fixed = JD_PREFIX_SIZE + read_fields(r, out, f, n);
    if (r->overrun)
        return jft_violation(&w->rules, rec->offset, "%s of %u bytes is shorter than its %u-byte fixed part",
                             jd_record_name(rec->id), rec->total_size, fixed);
    return 0;
}

/* ---- header -------------------------------------------------------------- */

static unsigned address_size_of(uint32_t elf_mach)
{
    switch (elf_mach) {
    case 3:
    case 8:
    case 20:
    case 40: return 4; /* i386, MIPS, PPC, ARM */
    default: return 8;
    }
}

static int known_machine(uint32_t m)
{
    static const uint32_t known[] = {3, 8, 20, 21, 22, 40, 62, 183, 243, 258};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i] == m)
            return 1;
    return 0;
}

static int read_header(walker *w)
{
    uint8_t buf[JD_HEADER_SIZE];
    size_t len = jft_stream_read(w->in, buf, sizeof buf);
    if (len < JD_HEADER_SIZE)
        return jft_fail(w->err, 0, "file too short for a jitdump header (%zu bytes, need 40)", len);
    jft_reader r;
    jft_reader_init(&r, buf, len, 0);
    jd_header *h = &w->h;
    if (jft_u32(&r) != JD_MAGIC) {
        jft_reader_init(&r, buf, len, 1);
        if (jft_u32(&r) != JD_MAGIC)
            return jft_fail(w->err, 0, "not a jitdump (bad magic)");
    }
    h->big_endian = r.big_endian;
    read_fields(&r, h, header_fields, COUNT(header_fields)); /* 40 bytes read: no overrun */
    w->address_size = address_size_of(h->elf_mach);
    w->last_timestamp = h->timestamp;
    if (w->v && w->v->header)
        w->v->header(w->ctx, h);
    if (h->version != 1)
        return jft_violation(&w->rules, 4, "header version %u (perf reads version 1)", h->version);
    if (h->total_size != JD_HEADER_SIZE)
        return jft_violation(&w->rules, 8, "header size %u (expected 40)", h->total_size);
    if (!known_machine(h->elf_mach)) /* perf's ELF files take the machine perf was built for */
        warn(w, 12, "unknown ELF machine %u in the header (perf does not use it)", h->elf_mach);
    if (h->reserved != 0) /* perf never reads it (CPython 3.13 leaves it uninitialised) */
        warn(w, 16, "header reserved field is 0x%x (should be 0; perf does not read it)", h->reserved);
    if (h->flags & ~(uint64_t)JD_FLAG_ARCH_TIMESTAMP)
        return jft_violation(&w->rules, 32, "header flags 0x%llx have unknown bits (perf rejects the file)",
                             (unsigned long long)h->flags);
    return 0;
}

/* ---- live synthesized mappings ------------------------------------------ */

/* Index of the first live map ending after `start`. */
static size_t first_ending_after(const walker *w, uint64_t start)
{
    size_t lo = 0, hi = w->n_live;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->live[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void remove_live(walker *w, size_t i)
{
    memmove(&w->live[i], &w->live[i + 1], (w->n_live - i - 1) * sizeof *w->live);
    w->n_live--;
}

static int insert_live(walker *w, const live_map *m)
{
    if (w->n_live == JD_MAX_LIVE_REGIONS) /* keep_going: go on without it */
        return jft_violation(&w->rules, m->load_offset,
                             "more than %u live code regions (loads no later load or "
                             "move replaced): more than jitframes tracks",
                             JD_MAX_LIVE_REGIONS);
    if (w->n_live == w->cap_live) {
        size_t cap = w->cap_live ? w->cap_live * 2 : 64;
        if (cap > JD_MAX_LIVE_REGIONS)
            cap = JD_MAX_LIVE_REGIONS;
        live_map *bigger = realloc(w->live, cap * sizeof *bigger);
        if (!bigger)
            return jft_fail(w->err, m->load_offset, "out of memory");
        w->live = bigger;
        w->cap_live = cap;
    }
    size_t i = first_ending_after(w, m->start);
    memmove(&w->live[i + 1], &w->live[i], (w->n_live - i) * sizeof *w->live);
    w->live[i] = *m;
    w->n_live++;
    return 0;
}

/*
 * Add a load's synthesized mapping. Code overlapping an older load's code
 * replaces it (address reuse, fine: records are timestamped). Any other
 * overlap means perf splits the older mapping and its unwind data is lost.
 */
static int add_mapping(walker *w, const live_map *m, uint64_t where)
{
    size_t i = first_ending_after(w, m->start);
    while (i < w->n_live && w->live[i].start < m->end) {
        const live_map *old = &w->live[i];
        int code_overlaps = old->start < m->code_end && m->start < old->code_end;
        if (code_overlaps) {
            remove_live(w, i);
            continue;
        }
        if (jft_violation(
                &w->rules, where,
                "synthesized mapping %llx-%llx overlaps the one of code_index %llu "
                "(%llx-%llx, loaded at 0x%llx): perf splits it and that region loses its unwind data",
                (unsigned long long)m->start, (unsigned long long)m->end, (unsigned long long)old->index,
                (unsigned long long)old->start, (unsigned long long)old->end,
                (unsigned long long)old->load_offset))
            return -1;
        remove_live(w, i); /* keep going with a consistent set */
    }
    return insert_live(w, m);
}

/* ---- CODE_DEBUG_INFO ----------------------------------------------------- */

static void drop_pending(pending *p)
{
    free(p->lines);
    free(p->bytes);
    memset(p, 0, sizeof *p);
}

static int parse_debug(walker *w, jd_record *rec, jft_reader *r)
{
    jd_debug *d = &rec->u.debug;
    int rc = read_fixed_part(w, rec, r, d, debug_fields, COUNT(debug_fields));
    if (rc || r->overrun) /* kept going past a short record: nothing more to read */
        return rc;
    if (d->nr_entry == 0)
        return jft_violation(&w->rules, rec->offset + 24, "CODE_DEBUG_INFO has no entries");
    if (d->nr_entry > jft_left(r) / 17)
        return jft_violation(&w->rules, rec->offset + 24,
                             "nr_entry %llu cannot fit in the record's %zu bytes",
                             (unsigned long long)d->nr_entry, jft_left(r));
    jd_line *lines = calloc((size_t)d->nr_entry, sizeof *lines);
    if (!lines)
        return jft_fail(w->err, rec->offset, "out of memory");
    w->debug.lines = lines;
    d->lines = lines;
    for (uint64_t i = 0; i < d->nr_entry; i++) {
        uint64_t where = rec->offset + r->pos;
        read_fields(r, &lines[i], line_fields, COUNT(line_fields));
        const uint8_t *name = r->data + r->pos;
        const uint8_t *nul = r->overrun ? NULL : memchr(name, 0, jft_left(r));
        if (!nul)
            return jft_violation(&w->rules, where,
                                 "line entry %llu runs past the record (file name not NUL-terminated)",
                                 (unsigned long long)i);
        lines[i].file = (const char *)name;
        jft_skip(r, (size_t)(nul - name) + 1);
        char why[128];
        size_t bad;
        if (jft_check_name(name, (size_t)(nul - name), &bad, why, sizeof why))
            return jft_violation(&w->rules, where + 16, "line entry %llu file name: %s",
                                 (unsigned long long)i, why);
        if (i > 0 && lines[i].addr < lines[i - 1].addr)
            return jft_violation(&w->rules, where,
                                 "line entry %llu address %llx is below the previous entry's %llx",
                                 (unsigned long long)i, (unsigned long long)lines[i].addr,
                                 (unsigned long long)lines[i - 1].addr);
    }
    if (jft_left(r) >= 8 || !all_zero(r->data + r->pos, jft_left(r)))
        return jft_violation(
            &w->rules, rec->offset + r->pos,
            "%zu bytes after the last line entry (only zero padding below 8 bytes is allowed)", jft_left(r));
    return 0;
}

static int check_debug_against_load(walker *w, const jd_record *rec, const jd_load *load)
{
    const jd_debug *d = &rec->u.debug;
    uint64_t end = load->code_addr + load->code_size;
    if (d->code_addr != load->code_addr)
        return jft_violation(&w->rules, rec->offset + 16,
                             "CODE_DEBUG_INFO code_addr %llx differs from its CODE_LOAD's %llx",
                             (unsigned long long)d->code_addr, (unsigned long long)load->code_addr);
    for (uint64_t i = 0; i < d->nr_entry; i++)
        if (d->lines[i].addr < load->code_addr || d->lines[i].addr > end)
            return jft_violation(&w->rules, rec->offset,
                                 "line entry %llu address %llx lies outside the code %llx-%llx",
                                 (unsigned long long)i, (unsigned long long)d->lines[i].addr,
                                 (unsigned long long)load->code_addr, (unsigned long long)end);
    if (d->lines[d->nr_entry - 1].addr != end)
        return jft_violation(&w->rules, rec->offset,
                             "last line entry at %llx does not close the code at %llx "
                             "(perf gives the last range no line)",
                             (unsigned long long)d->lines[d->nr_entry - 1].addr, (unsigned long long)end);
    return 0;
}

/* ---- CODE_UNWINDING_INFO ------------------------------------------------- */

static int parse_unwind(walker *w, jd_record *rec, jft_reader *r)
{
    jd_unwind *u = &rec->u.unwind;
    int rc = read_fixed_part(w, rec, r, u, unwind_fields, COUNT(unwind_fields));
    if (rc || r->overrun) /* kept going past a short record: nothing more to read */
        return rc;
    size_t data = jft_left(r);
    if (u->unwinding_size > data)
        return jft_violation(&w->rules, rec->offset + 16,
                             "unwinding_size %llu exceeds the record's %zu data bytes",
                             (unsigned long long)u->unwinding_size, data);
    if (u->eh_frame_hdr_size > u->unwinding_size)
        return jft_violation(&w->rules, rec->offset + 24,
                             "eh_frame_hdr_size %llu exceeds unwinding_size %llu",
                             (unsigned long long)u->eh_frame_hdr_size, (unsigned long long)u->unwinding_size);
    if (data - u->unwinding_size >= 8 ||
        !all_zero(r->data + r->pos + u->unwinding_size, data - u->unwinding_size))
        return jft_violation(&w->rules, rec->offset + 40 + u->unwinding_size,
                             "%zu bytes after the unwinding data (only zero padding to 8 is allowed)",
                             data - (size_t)u->unwinding_size);
    u->eh_frame_size = u->unwinding_size - u->eh_frame_hdr_size;
    u->eh_frame = r->data + r->pos;
    u->eh_frame_hdr = u->eh_frame + u->eh_frame_size;
    if (u->eh_frame_size == 0)
        return jft_violation(&w->rules, rec->offset + 16, "no .eh_frame data");
    if (u->eh_frame_hdr_size == 0)
        return jft_violation(&w->rules, rec->offset + 24,
                             "no .eh_frame_hdr (perf's unwinder looks FDEs up in it)");
    return 0;
}

static int check_fde_ranges(walker *w, const jd_record *rec, const ehf_table *t, uint64_t code_size)
{
    uint64_t base = rec->offset + 40;
    for (size_t i = 0; i < t->n_fdes; i++) {
        const ehf_fde *f = &t->fdes[i];
        const ehf_cie *c = &t->cies[f->cie];
        if ((c->fde_encoding & 0x70) != 0x10)
            return jft_violation(&w->rules, base + f->pc_begin_field,
                                 "FDE pc_begin encoding 0x%02x is not pc-relative (perf's synthesized DSO "
                                 "needs pc-relative pointers)",
                                 c->fde_encoding);
        if (f->pc_begin < 0 || !jft_fits((uint64_t)f->pc_begin, f->pc_range, code_size)) /* pc_range > 0 */
            return jft_violation(
                &w->rules, base + f->pc_begin_field,
                "FDE at .eh_frame offset %llu covers code offsets [%lld, %lld), outside the code "
                "[0, %llu): pc_begin must be -(round8(code_size) + field offset) for offset 0",
                (unsigned long long)f->offset, (long long)f->pc_begin,
                (long long)(f->pc_begin + (int64_t)f->pc_range), (unsigned long long)code_size);
        for (size_t j = 0; j < i; j++) {
            const ehf_fde *g = &t->fdes[j];
            if (f->pc_begin < g->pc_begin + (int64_t)g->pc_range &&
                g->pc_begin < f->pc_begin + (int64_t)f->pc_range)
                return jft_violation(&w->rules, base + f->offset,
                                     "FDEs at .eh_frame offsets %llu and %llu overlap",
                                     (unsigned long long)g->offset, (unsigned long long)f->offset);
        }
    }
    return 0;
}

/* Decode the pending unwinding record's .eh_frame for a load of code_size
 * bytes, placed as perf places it. The table is returned in *t. */
static int check_unwind_against_load(walker *w, jd_record *rec, uint64_t code_size, ehf_table *t)
{
    jd_unwind *u = &rec->u.unwind;
    u->layout.big_endian = w->h.big_endian;
    u->layout.address_size = w->address_size;
    u->layout.section_addr = (int64_t)jft_round_up(code_size, 8);
    u->layout.error_base = rec->offset + 40;
    jft_error local = {0};
    if (ehf_decode(u->eh_frame, (size_t)u->eh_frame_size, &u->layout, t, &local))
        return jft_violation(&w->rules, local.where, ".eh_frame: %s", local.msg);
    u->table = t;
    if (t->n_fdes == 0 && u->mapped_size != 0)
        return jft_violation(&w->rules, rec->offset + 40,
                             ".eh_frame has no FDE (but mapped_size %llu: "
                             "data that describes nothing must map nothing)",
                             (unsigned long long)u->mapped_size);
    if (t->n_fdes != 0 && u->mapped_size == 0)
        return jft_violation(
            &w->rules, rec->offset + 32,
            "mapped_size is 0 (perf then maps only the code and call chains come out wrong)");
    if (check_fde_ranges(w, rec, t, code_size))
        return -1;
    int64_t hdr_addr = u->layout.section_addr + (int64_t)u->eh_frame_size;
    if (ehf_check_hdr(u->eh_frame_hdr, (size_t)u->eh_frame_hdr_size, hdr_addr, &u->layout, t,
                      rec->offset + 40 + u->eh_frame_size, &local))
        return jft_violation(&w->rules, local.where, "%s", local.msg);
    return 0;
}

/* ---- CODE_LOAD / CODE_MOVE ----------------------------------------------- */

static int parse_load_fields(walker *w, jd_record *rec, jft_reader *r)
{
    jd_load *l = &rec->u.load;
    int rc = read_fixed_part(w, rec, r, l, load_fields, COUNT(load_fields));
    if (rc || r->overrun) /* kept going past a short record: nothing more to read */
        return rc;
    size_t room = jft_left(r);
    if (l->code_size > room)
        return jft_violation(&w->rules, rec->offset + 40,
                             "code_size %llu does not fit in the record (%zu bytes after the fixed part)",
                             (unsigned long long)l->code_size, room);
    const uint8_t *name = r->data + r->pos;
    const uint8_t *nul = memchr(name, 0, room - (size_t)l->code_size);
    if (!nul)
        return jft_violation(&w->rules, rec->offset + 56, "name is not NUL-terminated before the code");
    l->name = (const char *)name;
    l->code = r->data + r->len - l->code_size;
    if (!all_zero(nul + 1, (size_t)(l->code - nul - 1)))
        return jft_violation(&w->rules, rec->offset + 56 + (uint64_t)(nul + 1 - name),
                             "non-zero bytes between the name and the code");
    return 0;
}

static int check_load(walker *w, const jd_record *rec)
{
    const jd_load *l = &rec->u.load;
    char why[128];
    size_t bad;
    if (jft_check_name((const uint8_t *)l->name, strlen(l->name), &bad, why, sizeof why))
        return jft_violation(&w->rules, rec->offset + 56 + bad, "name: %s", why);
    if (l->code_size == 0)
        return jft_violation(&w->rules, rec->offset + 40, "code_size is 0");
    if (l->code_size > INT_MAX)
        return jft_violation(&w->rules, rec->offset + 40,
                             "code_size %llu is above INT_MAX (perf truncates it)",
                             (unsigned long long)l->code_size);
    if (l->code_addr + l->code_size < l->code_addr)
        return jft_violation(&w->rules, rec->offset + 32,
                             "code %llx+%llu wraps past the end of the address space",
                             (unsigned long long)l->code_addr, (unsigned long long)l->code_size);
    if (l->pid != w->h.pid)
        return jft_violation(&w->rules, rec->offset + 16,
                             "pid %u differs from the header's pid %u (a forked child "
                             "writing into its parent's dump?)",
                             l->pid, w->h.pid);
    if (w->have_index && l->code_index <= w->last_index)
        return jft_violation(&w->rules, rec->offset + 48,
                             "code_index %llu is not greater than the previous one (%llu)",
                             (unsigned long long)l->code_index, (unsigned long long)w->last_index);
    return 0;
}

static void report(walker *w, const jd_record *rec)
{
    if (w->v && w->v->record)
        w->v->record(w->ctx, rec, w->h.elf_mach);
}

/* perf takes the kept unwinding info for this load or move: wrong if a
 * CODE_MOVE used it already and it describes code (it is that region's). */
static int check_not_stale(walker *w, const jd_record *rec)
{
    const pending *u = &w->unwind;
    if (!u->present || !u->used_by_move || u->rec.u.unwind.mapped_size == 0)
        return 0;
    return jft_violation(&w->rules, rec->offset,
                         "%s would take the unwinding info at 0x%llx, which the "
                         "CODE_MOVE before it used (perf keeps it until a CODE_LOAD): write one of its own, "
                         "or one describing nothing, first",
                         jd_record_name(rec->id), (unsigned long long)u->rec.offset);
}

static int finish_load(walker *w, jd_record *rec)
{
    const jd_load *l = &rec->u.load;
    ehf_table table = {0};
    int rc = check_not_stale(w, rec);
    int fresh_unwind = w->unwind.present && !w->unwind.used_by_move;
    if (rc == 0 && w->debug.present)
        rc = check_debug_against_load(w, &w->debug.rec, l);
    if (rc == 0 && fresh_unwind)
        rc = check_unwind_against_load(w, &w->unwind.rec, l->code_size, &table);
    if (w->debug.present)
        report(w, &w->debug.rec);
    if (fresh_unwind)
        report(w, &w->unwind.rec);
    report(w, rec);
    uint64_t mapped = w->unwind.present && w->unwind.rec.u.unwind.mapped_size
                          ? jft_round_up(l->code_size, 8) + w->unwind.rec.u.unwind.mapped_size
                          : l->code_size;
    live_map m = {l->code_addr, l->code_addr + mapped, l->code_addr + l->code_size, l->code_index,
                  rec->offset};
    if (m.end < m.start)
        m.end = UINT64_MAX;
    if (rc == 0)
        rc = add_mapping(w, &m, rec->offset);
    w->sum->loads++;
    w->sum->debug_infos += (uint64_t)w->debug.present;
    w->sum->unwind_infos += (uint64_t)(w->unwind.present && w->unwind.rec.u.unwind.mapped_size);
    w->have_index = 1;
    w->last_index = l->code_index;
    drop_pending(&w->debug);
    drop_pending(&w->unwind);
    ehf_free(&table);
    return rc;
}

static int handle_load(walker *w, jd_record *rec, jft_reader *r)
{
    uint64_t before = w->rules.count;
    if (parse_load_fields(w, rec, r) || w->rules.count != before) {
        drop_pending(&w->debug);
        drop_pending(&w->unwind);
        return w->rules.keep_going ? 0 : -1;
    }
    if (check_load(w, rec))
        return -1;
    return finish_load(w, rec);
}

/* Unwinding info written for this move: valid for the moved code, and from
 * now on kept by perf as used. */
static int check_move_unwind(walker *w, uint64_t code_size)
{
    pending *u = &w->unwind;
    if (!u->present || u->used_by_move)
        return 0;
    if (code_size == 0 || code_size > INT_MAX)
        return 0; /* no load has that size: the move's own check says so */
    ehf_table table = {0};
    int rc = check_unwind_against_load(w, &u->rec, code_size, &table);
    report(w, &u->rec);
    ehf_free(&table);
    u->used_by_move = 1;
    return rc;
}

static int handle_move(walker *w, jd_record *rec, jft_reader *r)
{
    jd_move *m = &rec->u.move;
    uint32_t expected = JD_PREFIX_SIZE + read_fields(r, m, move_fields, COUNT(move_fields));
    if (r->overrun || jft_left(r) != 0)
        return jft_violation(&w->rules, rec->offset, "CODE_MOVE record is %u bytes (expected %u)",
                             rec->total_size, expected);
    if (check_not_stale(w, rec) || check_move_unwind(w, m->code_size))
        return -1;
    report(w, rec);
    w->sum->moves++;
    if (m->pid != w->h.pid)
        return jft_violation(&w->rules, rec->offset + 16, "pid %u differs from the header's pid %u", m->pid,
                             w->h.pid);
    size_t i = 0;
    while (i < w->n_live && w->live[i].index != m->code_index)
        i++;
    if (i == w->n_live)
        return jft_violation(&w->rules, rec->offset + 56,
                             "CODE_MOVE of code_index %llu, which no live CODE_LOAD has "
                             "(never loaded, or a later load or move overlapped its code)",
                             (unsigned long long)m->code_index);
    live_map moved = w->live[i];
    if (moved.start != m->old_code_addr || moved.code_end - moved.start != m->code_size)
        return jft_violation(&w->rules, rec->offset + 32,
                             "CODE_MOVE old_code_addr/code_size %llx/%llu do not match "
                             "code_index %llu's %llx/%llu",
                             (unsigned long long)m->old_code_addr, (unsigned long long)m->code_size,
                             (unsigned long long)m->code_index, (unsigned long long)moved.start,
                             (unsigned long long)(moved.code_end - moved.start));
    remove_live(w, i);
    /* perf maps code_size bytes, plus the kept unwinding info's mapped_size
     * (the .so made at the load holds the unwind data there). */
    uint64_t usize = w->unwind.present ? w->unwind.rec.u.unwind.mapped_size : 0;
    moved.start = m->new_code_addr;
    moved.code_end = m->new_code_addr + m->code_size;
    moved.end = usize ? m->new_code_addr + jft_round_up(m->code_size, 8) + usize : moved.code_end;
    moved.load_offset = rec->offset;
    if (moved.end < moved.start || moved.code_end < moved.start)
        return jft_violation(&w->rules, rec->offset + 40,
                             "moved code wraps past the end of the address space");
    return add_mapping(w, &moved, rec->offset);
}

/* ---- the record loop ----------------------------------------------------- */

static int check_order(walker *w, const jd_record *rec)
{
    const pending *p = w->debug.present ? &w->debug : w->unwind.present ? &w->unwind : NULL;
    if (w->closed) { /* perf reads on past a CODE_CLOSE: a writer opened again */
        w->closed = 0;
        w->sum->reopened++;
    }
    int unwind_then_move = rec->id == JD_CODE_MOVE && !w->debug.present;
    if (p && !unwind_then_move && !(p == &w->unwind && w->unwind.used_by_move) && rec->id != JD_CODE_LOAD &&
        rec->id != JD_CODE_DEBUG_INFO && rec->id != JD_CODE_UNWINDING_INFO)
        return jft_violation(
            &w->rules, rec->offset, "%s at 0x%llx must be followed by its CODE_LOAD, not by %s",
            jd_record_name(p->rec.id), (unsigned long long)p->rec.offset, jd_record_name(rec->id));
    if (!w->seen_record && rec->timestamp < w->h.timestamp) {
        /* perf never compares records with the header's timestamp (CPython
         * 3.13's -X perf_jit writes wall-clock microseconds there). */
        warn(w, rec->offset + 8,
             "timestamp %llu is earlier than the header's %llu (perf does not use "
             "the header's timestamp)",
             (unsigned long long)rec->timestamp, (unsigned long long)w->h.timestamp);
    } else if (rec->timestamp < w->last_timestamp) {
        return jft_violation(&w->rules, rec->offset + 8,
                             "timestamp %llu is earlier than the previous record's %llu",
                             (unsigned long long)rec->timestamp, (unsigned long long)w->last_timestamp);
    }
    w->seen_record = 1;
    return 0;
}

/* Keep a debug/unwinding record until its CODE_LOAD. */
static int hold(walker *w, pending *slot, jd_record *rec, jft_reader *r)
{
    if (slot->present && slot->used_by_move)
        drop_pending(slot); /* replaced, as perf replaces it */
    if (slot->present)
        return jft_violation(&w->rules, rec->offset, "second %s before a CODE_LOAD (the first is at 0x%llx)",
                             jd_record_name(rec->id), (unsigned long long)slot->rec.offset);
    uint64_t before = w->rules.count;
    int bad = rec->id == JD_CODE_DEBUG_INFO ? parse_debug(w, rec, r) : parse_unwind(w, rec, r);
    if (bad || w->rules.count != before) {
        drop_pending(slot);
        return bad;
    }
    slot->present = 1;
    slot->rec = *rec;
    slot->bytes = w->cur; /* rec points into it: kept until its CODE_LOAD */
    w->cur = NULL;
    w->cur_cap = 0;
    return 0;
}

static int handle_record(walker *w, jd_record *rec)
{
    jft_reader r;
    jft_reader_init(&r, w->cur, rec->total_size, w->h.big_endian);
    r.pos = JD_PREFIX_SIZE;
    if (check_order(w, rec))
        return -1;
    w->last_timestamp = rec->timestamp;
    switch (rec->id) {
    case JD_CODE_LOAD: return handle_load(w, rec, &r);
    case JD_CODE_MOVE: return handle_move(w, rec, &r);
    case JD_CODE_DEBUG_INFO: return hold(w, &w->debug, rec, &r);
    case JD_CODE_UNWINDING_INFO: return hold(w, &w->unwind, rec, &r);
    case JD_CODE_CLOSE:
        report(w, rec);
        w->sum->closes++;
        w->closed = 1;
        w->close_offset = rec->offset;
        if (rec->total_size != JD_PREFIX_SIZE)
            return jft_violation(&w->rules, rec->offset + 4, "CODE_CLOSE record is %u bytes (expected 16)",
                                 rec->total_size);
        return 0;
    default:
        report(w, rec);
        return jft_violation(&w->rules, rec->offset, "unknown record id %u (perf skips it)", rec->id);
    }
}

/* The largest record of this kind the walker reads (jitdump_reader.h). */
static uint32_t max_record_size(uint32_t id)
{
    return id == JD_CODE_DEBUG_INFO || id == JD_CODE_UNWINDING_INFO ? JD_MAX_HELD_RECORD_SIZE
                                                                    : JD_MAX_RECORD_SIZE;
}

/* Double the record buffer (at least 4 KiB, at most the record's size),
 * keeping what it holds. */
static int grow_record_buffer(walker *w, const jd_record *rec)
{
    size_t cap = w->cur_cap * 2 > 4096 ? w->cur_cap * 2 : 4096;
    cap = cap > rec->total_size ? rec->total_size : cap;
    uint8_t *bigger = realloc(w->cur, cap);
    if (!bigger)
        return jft_fail(w->err, rec->offset, "out of memory");
    w->cur = bigger;
    w->cur_cap = cap;
    return 0;
}

/* The stream ended `left` bytes into the record. */
static int runs_past_end(walker *w, const jd_record *rec, size_t left)
{
    return jft_fail(w->err, rec->offset,
                    "%s record of %u bytes runs past the end of the file (%zu bytes left)",
                    jd_record_name(rec->id), rec->total_size, left);
}

/* Read the rest of the record whose 16-byte prefix is `prefix` into w->cur.
 * Returns 1 to handle it, 0 when it was skipped (too large, keep_going), -1
 * to stop. */
static int read_record(walker *w, const jd_record *rec, const uint8_t *prefix)
{
    size_t body = rec->total_size - JD_PREFIX_SIZE;
    if (rec->total_size > max_record_size(rec->id)) {
        if (jft_violation(&w->rules, rec->offset + 4,
                          "%s record of %u bytes is larger than the %u bytes "
                          "jitframes reads for one",
                          jd_record_name(rec->id), rec->total_size, max_record_size(rec->id)))
            return -1;
        uint64_t got = jft_stream_skip(w->in, body, NULL);
        return got < body ? runs_past_end(w, rec, JD_PREFIX_SIZE + (size_t)got) : 0;
    }
    /* The buffer grows as the bytes arrive: a size the data does not back
     * costs nothing. */
    if (w->cur_cap < JD_PREFIX_SIZE && grow_record_buffer(w, rec))
        return -1;
    memcpy(w->cur, prefix, JD_PREFIX_SIZE);
    size_t have = JD_PREFIX_SIZE;
    while (have < rec->total_size) {
        if (have == w->cur_cap && grow_record_buffer(w, rec))
            return -1;
        size_t end = rec->total_size < w->cur_cap ? rec->total_size : w->cur_cap;
        have += jft_stream_read(w->in, w->cur + have, end - have);
        if (have < end)
            return runs_past_end(w, rec, have);
    }
    return 1;
}

/*
 * A record header with a size below 16 ends the records: perf stops there.
 * Fine if the rest of the file is zero (a reserved, unused tail) or if the
 * size is 0 (a group whose first size is not stored yet: its bytes count as
 * unpublished). Returns 0 or -1.
 */
static int end_of_records(walker *w, const jd_record *rec, const uint8_t *prefix)
{
    int zero = all_zero(prefix, JD_PREFIX_SIZE);
    if (rec->total_size != 0)
        return jft_fail(w->err, rec->offset,
                        "record header with size %u (< 16) followed by non-zero bytes: "
                        "perf stops reading here",
                        rec->total_size);
    int rest_zero;
    uint64_t rest = jft_stream_skip(w->in, UINT64_MAX, &rest_zero);
    if (!zero || !rest_zero)
        w->sum->unpublished = JD_PREFIX_SIZE + rest;
    return 0;
}

/* Skip a header longer than 40 bytes (a violation kept going past). */
static uint64_t records_start(walker *w)
{
    if (w->h.total_size <= JD_HEADER_SIZE)
        return JD_HEADER_SIZE;
    return JD_HEADER_SIZE + jft_stream_skip(w->in, w->h.total_size - JD_HEADER_SIZE, NULL);
}

static int walk_records(walker *w)
{
    uint64_t pos = records_start(w);
    for (uint64_t index = 0;; index++) {
        uint8_t prefix[JD_PREFIX_SIZE];
        size_t got = jft_stream_read(w->in, prefix, sizeof prefix);
        if (got == 0)
            break;
        if (got < JD_PREFIX_SIZE) {
            if (all_zero(prefix, got))
                break;
            return jft_fail(w->err, pos, "%zu stray non-zero bytes at the end, too short for a record header",
                            got);
        }
        jft_reader r;
        jft_reader_init(&r, prefix, sizeof prefix, w->h.big_endian);
        jd_record rec = {0};
        rec.offset = pos;
        rec.index = index;
        read_fields(&r, &rec, prefix_fields, COUNT(prefix_fields)); /* 16 bytes read: no overrun */
        if (rec.total_size < JD_PREFIX_SIZE) {
            if (end_of_records(w, &rec, prefix))
                return -1;
            break;
        }
        int rc = read_record(w, &rec, prefix);
        if (rc < 0)
            return -1;
        w->sum->records++;
        if (rc > 0 && handle_record(w, &rec))
            return -1;
        pos += rec.total_size;
    }
    if (w->in->error)
        return jft_fail(w->err, pos, "read error: %s", strerror(w->in->error));
    w->sum->end_offset = pos;
    const pending *p = w->debug.present                               ? &w->debug
                       : w->unwind.present && !w->unwind.used_by_move ? &w->unwind
                                                                      : NULL;
    if (p)
        return jft_violation(&w->rules, p->rec.offset, "%s at the end of the dump has no CODE_LOAD after it",
                             jd_record_name(p->rec.id));
    return 0;
}

int jd_walk_stream(jft_stream *in, const jd_visitor *v, void *ctx, int keep_going, jd_summary *summary,
                   jft_error *err)
{
    jd_summary local_summary;
    walker w = {0};
    w.in = in;
    w.v = v;
    w.ctx = ctx;
    jft_rules_init(&w.rules, err, keep_going);
    w.sum = summary ? summary : &local_summary;
    w.err = w.rules.err;
    memset(w.sum, 0, sizeof *w.sum);
    int rc = read_header(&w);
    if (rc == 0)
        rc = walk_records(&w);
    drop_pending(&w.debug);
    drop_pending(&w.unwind);
    free(w.cur);
    free(w.live);
    return rc || w.err->set ? -1 : 0;
}

int jd_walk(const uint8_t *buf, size_t len, const jd_visitor *v, void *ctx, int keep_going,
            jd_summary *summary, jft_error *err)
{
    jft_stream in;
    jft_stream_from_buffer(&in, buf, len);
    return jd_walk_stream(&in, v, ctx, keep_going, summary, err);
}

int jd_check(const uint8_t *buf, size_t len, jd_summary *summary, jft_error *err)
{
    return jd_walk(buf, len, NULL, NULL, 0, summary, err);
}
