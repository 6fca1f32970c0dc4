/*
 * Reading a published region table (table_reader.h). One read of the table
 * copies the header, the live slots, the removed ring and the strings, then
 * the slots and the header again: a slot is kept only if both copies are
 * identical with an even sequence number (no write began or ended between),
 * and its strings were read between the two. The read is consistent as a
 * whole when the header's generation did not move; otherwise it is retried,
 * a bounded number of times. Slots are in no order (the writer never moves
 * an entry): the live regions are sorted here. A region's unwind
 * description is rebuilt with the library's own checks and emitter
 * (src/cfi.c), giving the bytes the jitdump sink would have written.
 */
#define _GNU_SOURCE
#include "table_reader.h"

#include "cfi.h"
#include "jft_common.h"
#include "pub_layout.h"
#include "table_shared.h"
#include "text_safe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The header's promises, checked against the mapping's size and the limits. */
static int check_header(const jf__pub_header *h, uint64_t map_size, const tr_limits *lim, char *err,
                        size_t cap)
{
    if (memcmp(h->signature, JF_PUB_SIGNATURE, sizeof h->signature) != 0)
        return fail(err, cap, "no table signature (not published yet, or not a jitframes table)");
    if (h->version != JF_PUB_VERSION)
        return fail(err, cap, "table version %u (this reader knows %d)", h->version, JF_PUB_VERSION);
    if (h->entry_size != sizeof(jf__pub_entry) || h->header_size < sizeof(jf__pub_header))
        return fail(err, cap, "table entry size %u or header size %u is not version %d's", h->entry_size,
                    h->header_size, JF_PUB_VERSION);
    if (!jft_fits(h->entries_off, (uint64_t)h->entries_capacity * sizeof(jf__pub_entry), map_size) ||
        !jft_fits(h->ring_off, (uint64_t)h->ring_capacity * sizeof(jf__pub_entry), map_size) ||
        !jft_fits(h->heap_off, h->heap_capacity, map_size) || h->entries_off < h->header_size)
        return fail(err, cap, "table areas lie outside its %llu-byte mapping", (unsigned long long)map_size);
    if (h->entries_used > h->entries_capacity || h->heap_used > h->heap_capacity)
        return fail(err, cap, "table counts exceed its capacities");
    if (h->entries_used > lim->max_entries || h->ring_capacity > lim->max_ring ||
        h->heap_used > lim->max_heap)
        return fail(err, cap, "table too big for the reader's limits (%u slots, %u ring, %u string bytes)",
                    h->entries_used, h->ring_capacity, h->heap_used);
    return 0;
}

/* The budget of one read: bytes copied and decoded, and a deadline. */
typedef struct budget {
    uint64_t used, max;
    double deadline;
    int over, late;
} budget;

/* Count n more bytes; -1 (and remembered) once over the budget. */
static int take(budget *b, uint64_t n)
{
    if (b->over || n > b->max - b->used) {
        b->over = 1;
        return -1;
    }
    b->used += n;
    return 0;
}

/* 1 while the deadline is ahead (remembered once it is past). */
static int in_time(budget *b)
{
    if (!b->late && now_seconds() > b->deadline)
        b->late = 1;
    return !b->late;
}

/* One copy of everything a read needs. */
typedef struct raw_read {
    jf__pub_header h, h2;
    jf__pub_entry *slots, *slots2, *ring, *ring2;
    char *heap;
} raw_read;

static void raw_free(raw_read *r)
{
    free(r->slots);
    free(r->slots2);
    free(r->ring);
    free(r->ring2);
    free(r->heap);
    memset(r, 0, sizeof *r);
}

static int read_area(tr_read_fn read, void *ctx, uint64_t addr, size_t len, void **out)
{
    *out = malloc(len ? len : 1);
    if (!*out)
        return -1;
    return len ? read(ctx, addr, *out, len) : 0;
}

/* Ring slots holding removals: all once it has wrapped, else the first
 * ring_written (a young process's read stays small, and quick enough to
 * fit between two changes). */
static uint32_t ring_used(const jf__pub_header *h)
{
    return h->ring_written < h->ring_capacity ? (uint32_t)h->ring_written : h->ring_capacity;
}

/* The bytes read_raw copies. */
static uint64_t raw_bytes(const jf__pub_header *h)
{
    return 2 * ((uint64_t)h->entries_used + ring_used(h)) * sizeof(jf__pub_entry) + h->heap_used;
}

static int read_raw(tr_read_fn read, void *ctx, uint64_t base, const jf__pub_header *h, raw_read *r)
{
    size_t slots = (size_t)h->entries_used * sizeof(jf__pub_entry);
    size_t ring = (size_t)ring_used(h) * sizeof(jf__pub_entry);
    r->h = *h;
    if (read_area(read, ctx, base + h->entries_off, slots, (void **)&r->slots) ||
        read_area(read, ctx, base + h->ring_off, ring, (void **)&r->ring) ||
        read_area(read, ctx, base + h->heap_off, h->heap_used, (void **)&r->heap) ||
        read_area(read, ctx, base + h->entries_off, slots, (void **)&r->slots2) ||
        read_area(read, ctx, base + h->ring_off, ring, (void **)&r->ring2) ||
        read(ctx, base, &r->h2, sizeof r->h2))
        return -1;
    return 0;
}

static int raw_consistent(const raw_read *r)
{
    return !(r->h.generation & 1) && r->h.generation == r->h2.generation;
}

/* Heap bytes a decoder may use: bytes[i] is the heap's byte lo + i, for
 * i < hi - lo; what an entry references must lie in [0, bound). */
typedef struct heap_view {
    const char *bytes;
    uint64_t lo, hi, bound;
} heap_view;

/* The first `need` bytes of heap [off, off + len), NULL if that lies
 * outside the heap or the bytes were not copied. */
static const char *view_at(const heap_view *v, uint64_t off, uint64_t len, uint64_t need)
{
    if (!v->bytes || !jft_fits(off, len, v->bound) || need > len || off < v->lo ||
        !jft_fits(off - v->lo, need, v->hi - v->lo))
        return NULL;
    return v->bytes + (off - v->lo);
}

/* Where an entry's strings, line table and unwind description are. */
typedef struct entry_views {
    heap_view name, file, lines, cfi;
} entry_views;

/* What decoding needs: the limits, the budget and the cache of what was
 * decoded (keys are heap offsets: one cache per set of views that agree). */
typedef struct decoder {
    const tr_limits *lim;
    budget *b;
    ts_cache *cache;
} decoder;

enum { KEY_STRING = 1, KEY_LINES, KEY_CFI, KEY_IMAGE, BLOCK_COST = 64, CACHE_FROM = 128 };

/* The cached block for key: 1 with *out (a new reference, maybe NULL).
 * Blobs under CACHE_FROM bytes are decoded again each time: that costs no
 * more than remembering them (most names are short and not shared). */
static int cached(const decoder *d, uint32_t kind, uint32_t off, uint32_t len, uint64_t extra, void **out)
{
    if (len < CACHE_FROM || !ts_cache_get(d->cache, (ts_key){kind, off, len, extra}, out))
        return 0;
    *out = ts_ref(*out);
    return 1;
}

static void remember(const decoder *d, uint32_t kind, uint32_t off, uint32_t len, uint64_t extra, void *v)
{
    if (len >= CACHE_FROM)
        (void)ts_cache_put(d->cache, (ts_key){kind, off, len, extra}, v);
}

/* A shared copy of a heap string, cut to max_string and made safe text
 * (text_safe.h: a name must never forge a line of a perf map, nor reach a
 * terminal as a control sequence); NULL if it lies outside the view or
 * over the budget. */
static char *copy_string(const decoder *d, const heap_view *v, uint32_t off, uint32_t len)
{
    char *s;
    if (cached(d, KEY_STRING, off, len, 0, (void **)&s))
        return s;
    size_t n = len < d->lim->max_string ? len : d->lim->max_string;
    const char *src = view_at(v, off, len, n);
    s = src && take(d->b, n + 2 + BLOCK_COST) == 0 ? ts_new(n + 2, NULL) : NULL;
    if (s)
        txt_sanitize(s, (const uint8_t *)src, n);
    if (src)
        remember(d, KEY_STRING, off, len, 0, s);
    return s;
}

static void free_lines(void *data)
{
    tr_line *v = data;
    for (size_t k = 0; k < ts_size(data) / sizeof *v; k++)
        ts_unref(v[k].file);
}

/* The line table at (off, len), checked line by line: a shared array of
 * n_lines, NULL if unsound (the region keeps its name without it). */
static tr_line *decode_lines(const decoder *d, const heap_view *v, uint32_t off, uint32_t len, size_t *n_out)
{
    uint32_t n;
    const char *blob = len >= sizeof(jf__pub_lines) ? view_at(v, off, len, len) : NULL;
    if (!blob)
        return NULL;
    memcpy(&n, blob, sizeof n);
    if (n == 0 || n > (len - sizeof(jf__pub_lines)) / sizeof(jf__pub_line) ||
        take(d->b, (uint64_t)n * sizeof(tr_line) + BLOCK_COST) != 0)
        return NULL;
    uint64_t used = d->b->used - (uint64_t)n * sizeof(tr_line) - BLOCK_COST;
    tr_line *out = ts_new((size_t)n * sizeof(tr_line), free_lines);
    for (uint32_t k = 0; out && k < n; k++) {
        jf__pub_line l;
        memcpy(&l, blob + sizeof(jf__pub_lines) + (size_t)k * sizeof l, sizeof l);
        out[k].offset = l.offset;
        out[k].line = l.line;
        if ((k % 4096 == 4095 && !in_time(d->b)) ||
            (l.file_len && (!jft_fits(l.file_off, l.file_len, len) ||
                            !(out[k].file = copy_string(d, v, off + l.file_off, l.file_len))))) {
            ts_unref(out); /* outside its own table, or over the budget: none at all */
            return NULL;
        }
    }
    if (out)
        ts_set_aux(out, d->b->used - used); /* its bytes and those of the files first met in it */
    *n_out = n;
    return out;
}

static tr_line *copy_lines(const decoder *d, const heap_view *v, const jf__pub_entry *a, size_t *n_out)
{
    tr_line *out;
    *n_out = 0;
    if (!a->lines_len)
        return NULL;
    if (!cached(d, KEY_LINES, a->lines_off, a->lines_len, 0, (void **)&out)) {
        out = decode_lines(d, v, a->lines_off, a->lines_len, n_out);
        if (!d->b->over && !d->b->late)
            remember(d, KEY_LINES, a->lines_off, a->lines_len, 0, out);
    }
    *n_out = ts_size(out) / sizeof(tr_line);
    return out;
}

enum { CFI_READ_MAX = 1u << 20, FDES_MAX = 1u << 16 };

static void free_cfi(void *data)
{
    jf__cfi_free(*(struct jf_cfi **)data);
}

/* The unwind description at (off, len), checked by the library's reader
 * of that form: a shared block holding it, NULL if unsound. */
static void *decode_cfi(const decoder *d, const heap_view *v, uint32_t off, uint32_t len)
{
    void *held;
    if (cached(d, KEY_CFI, off, len, 0, &held))
        return held;
    const char *bytes = len <= CFI_READ_MAX ? view_at(v, off, len, len) : NULL;
    struct jf_cfi *cfi = bytes ? jf__cfi_deserialize((const uint8_t *)bytes, len, FDES_MAX) : NULL;
    /* What it holds is about twice its serialised form. */
    held = cfi ? ts_new(sizeof cfi, free_cfi) : NULL;
    if (held)
        *(struct jf_cfi **)held = cfi;
    else
        jf__cfi_free(cfi);
    /* Only an unsound one is remembered: a sound one is wanted again only
     * for another region size, and its image is then remembered instead
     * (its description is read again: bounded by the images' budget). */
    if (bytes && !held)
        remember(d, KEY_CFI, off, len, 0, NULL);
    return held;
}

/* The unwinding data of a jitdump CODE_UNWINDING_INFO for entry a: its
 * unwind description emitted by the library's emitter for a load of the
 * region's size (shared by every region with the same description and
 * size); NULL when unsound. ts_aux: its .eh_frame_hdr bytes. */
static uint8_t *copy_unwind(const decoder *d, const heap_view *v, const jf__pub_entry *a)
{
    uint8_t *img;
    if (!a->cfi_len || cached(d, KEY_IMAGE, a->cfi_off, a->cfi_len, a->size, (void **)&img))
        return a->cfi_len ? img : NULL;
    void *held = decode_cfi(d, v, a->cfi_off, a->cfi_len);
    struct jf_cfi *cfi = held ? *(struct jf_cfi **)held : NULL;
    size_t cap = cfi ? jf__cfi_max_image_size(cfi) : 0;
    uint8_t *buf = cap && take(d->b, cap) == 0 ? malloc(cap) : NULL;
    jf__eh_image im;
    img = NULL;
    if (buf && jf__cfi_emit(cfi, JF_EH_LAYOUT_PERF_JITDUMP, a->start, a->size, 0, buf, cap, &im) == 0 &&
        im.eh_frame_size + im.hdr_size <= UINT32_MAX &&
        (img = ts_new(im.eh_frame_size + im.hdr_size, NULL))) {
        memcpy(img, buf, im.eh_frame_size + im.hdr_size);
        ts_set_aux(img, im.hdr_size);
    }
    free(buf);
    ts_unref(held);
    if (!d->b->over)
        remember(d, KEY_IMAGE, a->cfi_off, a->cfi_len, a->size, img);
    return img;
}

void tr_region_free(tr_region *r)
{
    ts_unref(r->unwind);
    ts_unref(r->name);
    ts_unref(r->file);
    ts_unref(r->lines);
    memset(r, 0, sizeof *r);
}

/* 1 if entry a is stable: an even sequence number, the same in both copies. */
static int stable(const jf__pub_entry *a, const jf__pub_entry *b)
{
    return !(a->seq & 1) && memcmp(a, b, sizeof *a) == 0;
}

/* Turn a stable entry into a region if it is of the wanted kind and sound.
 * 1 kept, 0 skipped, -1 over the budget or the deadline. */
static int take_entry(const decoder *d, const entry_views *v, const jf__pub_entry *a, uint32_t kind,
                      tr_region *out)
{
    if (!in_time(d->b))
        return -1;
    if (a->flags != kind || a->size == 0 || a->start + a->size < a->start)
        return 0;
    memset(out, 0, sizeof *out);
    out->start = a->start;
    out->size = a->size;
    out->line = a->line;
    out->removed_ns = a->removed_ns;
    out->published_ns = a->published_ns;
    out->published_gen = a->published_gen;
    out->removed_gen = kind == JF_PUB_REMOVED ? a->removed_gen : 0;
    out->name = copy_string(d, &v->name, a->name_off, a->name_len);
    if (a->file_len)
        out->file = copy_string(d, &v->file, a->file_off, a->file_len);
    if (out->name && (!a->file_len || out->file)) {
        out->lines = copy_lines(d, &v->lines, a, &out->n_lines);
        out->unwind = copy_unwind(d, &v->cfi, a);
        out->unwind_len = (uint32_t)ts_size(out->unwind);
        out->unwind_hdr_len = out->unwind ? (uint32_t)ts_aux(out->unwind) : 0;
    }
    if (d->b->over || d->b->late || !out->name || (a->file_len && !out->file)) {
        tr_region_free(out);
        return d->b->over || d->b->late ? -1 : 0;
    }
    return 1;
}

/* ---- Slots that changed during the whole read, read again alone ---- */

enum { REREAD_TRIES = 4, REREAD_SLOTS_MAX = 8192, LINES_READ_MAX = 16u << 20 };
#define REREAD_BYTES_MAX ((uint64_t)64 << 20)

typedef struct reader {
    tr_read_fn read;
    void *ctx;
    uint64_t base;
    const raw_read *raw;
    decoder d;      /* over the whole read's heap copy */
    size_t rereads; /* slots read alone so far */
    uint64_t reread_bytes;
} reader;

/* Copy heap [off, off + need) of an entry's (off, len) for a slot read
 * alone: *v covers it (or nothing, when it lies outside the heap: the entry
 * is then left out as unsound). 0, or -1 if it cannot be read now. */
static int fetch(reader *rd, uint32_t off, uint32_t len, uint32_t need, heap_view *v, char **buf)
{
    uint64_t bound = rd->raw->h.heap_capacity;
    *buf = NULL;
    *v = (heap_view){NULL, 0, 0, bound};
    if (!need || !jft_fits(off, len, bound))
        return 0;
    if (need > REREAD_BYTES_MAX - rd->reread_bytes || !(*buf = malloc(need)))
        return -1;
    rd->reread_bytes += need;
    if (rd->read(rd->ctx, rd->base + rd->raw->h.heap_off + off, *buf, need) != 0)
        return -1;
    *v = (heap_view){*buf, off, (uint64_t)off + need, bound};
    return 0;
}

static uint32_t at_most(uint32_t v, uint32_t max)
{
    return v < max ? v : max;
}

/* The heap bytes entry a references, copied now. */
static int fetch_entry(reader *rd, const jf__pub_entry *a, entry_views *v, char *bufs[4])
{
    uint32_t name = at_most(a->name_len, rd->d.lim->max_string),
             file = at_most(a->file_len, rd->d.lim->max_string);
    uint32_t lines = a->lines_len <= LINES_READ_MAX ? a->lines_len : 0;
    uint32_t cfi = a->cfi_len <= CFI_READ_MAX ? a->cfi_len : 0;
    return fetch(rd, a->name_off, a->name_len, name, &v->name, &bufs[0]) ||
           fetch(rd, a->file_off, a->file_len, file, &v->file, &bufs[1]) ||
           fetch(rd, a->lines_off, a->lines_len, lines, &v->lines, &bufs[2]) ||
           fetch(rd, a->cfi_off, a->cfi_len, cfi, &v->cfi, &bufs[3]);
}

enum { PROVEN_NONE = 0, PROVEN_KEPT = 1, OVER_BUDGET = -1, UNPROVEN = -2, AGAIN = -3 };

/* One try: the slot, its strings, the slot again. */
static int reread_once(reader *rd, uint64_t addr, uint32_t kind, tr_region *out)
{
    jf__pub_entry a, b;
    if (rd->read(rd->ctx, addr, &a, sizeof a) != 0)
        return UNPROVEN;
    if (a.seq & 1)
        return AGAIN;
    char *bufs[4] = {NULL, NULL, NULL, NULL};
    entry_views v = {{0}, {0}, {0}, {0}};
    int rc = AGAIN;
    if ((a.flags != kind || fetch_entry(rd, &a, &v, bufs) == 0) &&
        rd->read(rd->ctx, addr, &b, sizeof b) == 0 && stable(&a, &b)) {
        ts_cache c = {0}; /* the views are this slot's copies: a cache of its own */
        decoder d = {rd->d.lim, rd->d.b, &c};
        rc = a.flags == kind ? take_entry(&d, &v, &a, kind, out) : PROVEN_NONE;
        ts_cache_free(&c);
    }
    for (int k = 0; k < 4; k++)
        free(bufs[k]);
    return rc;
}

/* Read the slot at addr alone until it is seen stable: PROVEN_KEPT with
 * *out, PROVEN_NONE (not a region of that kind, or unsound), UNPROVEN, or
 * OVER_BUDGET. */
static int reread_slot(reader *rd, uint64_t addr, uint32_t kind, tr_region *out)
{
    if (rd->rereads >= REREAD_SLOTS_MAX)
        return UNPROVEN;
    rd->rereads++;
    for (int t = 0; t < REREAD_TRIES; t++) {
        if (!in_time(rd->d.b))
            return OVER_BUDGET;
        int rc = reread_once(rd, addr, kind, out);
        if (rc != AGAIN)
            return rc;
    }
    return UNPROVEN;
}

/* ---- From the copies to the snapshot ---- */

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* By start, the newest publication first among equal starts. */
static int by_start(const void *x, const void *y)
{
    const tr_region *a = x, *b = y;
    int c = cmp_u64(a->start, b->start);
    return c ? c : cmp_u64(b->published_gen, a->published_gen);
}

static int by_removed(const void *x, const void *y)
{
    const tr_region *a = x, *b = y;
    int c = cmp_u64(a->removed_gen, b->removed_gen);
    return c ? c : cmp_u64(a->removed_ns, b->removed_ns);
}

static void free_regions(tr_region *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tr_region_free(&v[i]);
    free(v);
}

/* A region read in an inconsistent snapshot (removed from one slot,
 * registered again in another while the slots were read) can appear twice:
 * the newest publication is kept. */
static size_t drop_duplicates(tr_region *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && v[k - 1].start == v[i].start) {
            tr_region_free(&v[i]);
            continue;
        }
        v[k++] = v[i];
    }
    return k;
}

static void note_unproven(tr_snapshot *s, uint32_t kind, size_t slot)
{
    if (kind != JF_PUB_LIVE) {
        s->unproven_removed++;
        return;
    }
    s->unproven++;
    if (s->unproven_slots && s->n_unproven_slots < TR_UNPROVEN_LIST)
        s->unproven_slots[s->n_unproven_slots++] = (uint32_t)slot;
}

/* Slot i of an area at addr: taken from the whole read when stable there,
 * else read alone. */
static int take_slot(reader *rd, const jf__pub_entry *a, const jf__pub_entry *b, uint64_t addr, size_t i,
                     uint32_t kind, tr_region *out, tr_snapshot *s)
{
    const heap_view whole = {rd->raw->heap, 0, rd->raw->h.heap_used, rd->raw->h.heap_used};
    const entry_views all = {whole, whole, whole, whole};
    if (stable(&a[i], &b[i]))
        return take_entry(&rd->d, &all, &a[i], kind, out);
    s->torn++;
    int rc = reread_slot(rd, addr + i * sizeof(jf__pub_entry), kind, out);
    s->reread += rc == PROVEN_KEPT || rc == PROVEN_NONE;
    if (rc == UNPROVEN)
        note_unproven(s, kind, i);
    return rc;
}

static int collect(reader *rd, const jf__pub_entry *a, const jf__pub_entry *b, size_t n, uint64_t addr,
                   uint32_t kind, tr_region **out, size_t *n_out, tr_snapshot *s)
{
    tr_region *v = take(rd->d.b, (uint64_t)n * sizeof *v) == 0 ? calloc(n ? n : 1, sizeof *v) : NULL;
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = take_slot(rd, a, b, addr, i, kind, &v[k], s);
        if (rc == OVER_BUDGET) {
            free_regions(v, k);
            return -1;
        }
        k += rc == PROVEN_KEPT;
    }
    qsort(v, k, sizeof *v, kind == JF_PUB_LIVE ? by_start : by_removed);
    if (kind == JF_PUB_LIVE)
        k = drop_duplicates(v, k);
    *out = v;
    *n_out = k;
    return 0;
}

static int build_snapshot(reader *rd, tr_snapshot *s)
{
    const raw_read *r = rd->raw;
    memset(s, 0, sizeof *s);
    s->pid = r->h.pid;
    s->flags = r->h.flags;
    s->dropped = r->h.dropped;
    s->generation = r->h.generation;
    s->consistent = raw_consistent(r);
    s->unproven_slots = s->consistent ? NULL : malloc(TR_UNPROVEN_LIST * sizeof *s->unproven_slots);
    if (collect(rd, r->slots, r->slots2, r->h.entries_used, rd->base + r->h.entries_off, JF_PUB_LIVE,
                &s->live, &s->n_live, s) ||
        collect(rd, r->ring, r->ring2, ring_used(&r->h), rd->base + r->h.ring_off, JF_PUB_REMOVED,
                &s->removed, &s->n_removed, s)) {
        tr_snapshot_free(s);
        return -1;
    }
    return 0;
}

/* Read the whole table until it is seen unchanged, a few times at most:
 * 0 with *r (the last read), or -1 with a reason. */
static int read_whole(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size, const tr_limits *lim,
                      double give_up, raw_read *r, unsigned *attempts, char *err, size_t err_cap)
{
    int have = 0;
    unsigned max = lim->max_attempts ? lim->max_attempts : 1;
    *attempts = 0;
    do {
        ++*attempts;
        jf__pub_header h;
        int bad = map_size < sizeof h || read(ctx, base, &h, sizeof h) != 0
                      ? fail(err, err_cap, "cannot read the table header at 0x%llx", (unsigned long long)base)
                      : check_header(&h, map_size, lim, err, err_cap);
        if (!bad && raw_bytes(&h) > lim->max_bytes)
            bad = fail(err, err_cap,
                       "table refused: copying it takes %llu MiB, over the reader's %llu MiB budget",
                       (unsigned long long)(raw_bytes(&h) >> 20), (unsigned long long)(lim->max_bytes >> 20));
        if (bad) { /* the header changed under us into one that breaks the rules */
            raw_free(r);
            return -1;
        }
        raw_free(r);
        have = read_raw(read, ctx, base, &h, r) == 0; /* else it moved: an area shrank or was unmapped */
        if (have && raw_consistent(r))
            break;
    } while (*attempts < max && now_seconds() < give_up);
    if (!have) {
        raw_free(r);
        return fail(err, err_cap, "no readable table after %u attempts", *attempts);
    }
    return 0;
}

int tr_read_table(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size, const tr_limits *limits,
                  tr_snapshot *out, char *err, size_t err_cap)
{
    tr_limits lim = limits ? *limits : (tr_limits)TR_LIMITS_DEFAULT;
    if (!lim.max_bytes)
        lim.max_bytes = TR_DEFAULT_BYTES;
    double t0 = now_seconds();
    memset(out, 0, sizeof *out);
    raw_read r = {0};
    unsigned attempts;
    /* Whole reads again for a tenth of the deadline at most: the rest is
     * for decoding, and for the slots read alone. */
    if (read_whole(read, ctx, base, map_size, &lim, t0 + lim.seconds / 10, &r, &attempts, err, err_cap) != 0)
        return -1;
    budget b = {raw_bytes(&r.h), lim.max_bytes, t0 + lim.seconds, 0, 0};
    ts_cache cache = {0};
    reader rd = {read, ctx, base, &r, {&lim, &b, &cache}, 0, 0};
    int rc = build_snapshot(&rd, out);
    ts_cache_free(&cache);
    raw_free(&r);
    if (b.over)
        return fail(err, err_cap, "table refused: decoding it needs over the reader's %llu MiB budget",
                    (unsigned long long)(lim.max_bytes >> 20));
    if (b.late)
        return fail(err, err_cap, "table refused: reading it takes over the reader's %g s deadline",
                    lim.seconds);
    if (rc != 0)
        return fail(err, err_cap, "out of memory reading the table");
    out->attempts = attempts;
    return 0;
}

void tr_snapshot_free(tr_snapshot *s)
{
    free_regions(s->live, s->n_live);
    free_regions(s->removed, s->n_removed);
    free(s->unproven_slots);
    memset(s, 0, sizeof *s);
}

size_t tr_live_at_or_before(const tr_snapshot *s, uint64_t pc)
{
    size_t lo = 0, hi = s->n_live;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->live[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const tr_region *tr_lookup(const tr_snapshot *s, uint64_t pc)
{
    size_t lo = tr_live_at_or_before(s, pc);
    if (lo > 0 && pc - s->live[lo - 1].start < s->live[lo - 1].size)
        return &s->live[lo - 1];
    for (size_t i = s->n_removed; i > 0; i--)
        if (pc >= s->removed[i - 1].start && pc - s->removed[i - 1].start < s->removed[i - 1].size)
            return &s->removed[i - 1];
    return NULL;
}

/* ---- A live process ------------------------------------------------------ */

int tr_read_process(void *ctx, uint64_t addr, void *buf, size_t len)
{
    pid_t pid = *(pid_t *)ctx;
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got == (ssize_t)len)
        return 0;
    if (got >= 0 || (errno != ENOSYS && errno != EPERM))
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/mem", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    got = pread(fd, buf, len, (off_t)addr);
    close(fd);
    return got == (ssize_t)len ? 0 : -1;
}

/* The mapping's name as /proc/PID/maps shows it: an anonymous mapping
 * named with PR_SET_VMA_ANON_NAME, or an earlier build's memfd. */
static int is_table_mapping(const char *line)
{
    return strstr(line, " /memfd:" JF_PUB_NAME " (deleted)\n") != NULL ||
           strstr(line, " [anon:" JF_PUB_NAME "]\n") != NULL;
}

/* A writable private mapping with no name: where the table is when the
 * kernel cannot name anonymous mappings. */
static int is_unnamed_anonymous(const char *line)
{
    char perms[8];
    unsigned long long off;
    unsigned major, minor;
    unsigned long inode;
    int end = 0;
    if (sscanf(line, "%*x-%*x %7s %llx %x:%x %lu %n", perms, &off, &major, &minor, &inode, &end) < 5 || !end)
        return 0;
    return perms[0] == 'r' && perms[1] == 'w' && inode == 0 && major == 0 && minor == 0 &&
           (line[end] == '\n' || line[end] == '\0');
}

/* An unnamed mapping is the table if it starts with a published header
 * that gives this mapping's size (signature written last). The pid it
 * names matters no more than a named table's: a table naming another
 * process is read, and its pid reported beside the kernel's ("pid_mismatch"). */
static int holds_table(pid_t pid, uint64_t lo, uint64_t hi)
{
    jf__pub_header h;
    return hi - lo >= sizeof h && tr_read_process(&pid, lo, &h, sizeof h) == 0 &&
           memcmp(h.signature, JF_PUB_SIGNATURE, sizeof h.signature) == 0 && h.map_size == hi - lo;
}

enum { MAPS_LINES_MAX = 4000000, UNNAMED_PROBES_MAX = 4096 };

/* Scan /proc/PID/maps once: the named mapping, else (probing at most
 * UNNAMED_PROBES_MAX unnamed anonymous ones) one holding the table. */
static int scan_maps(FILE *f, pid_t pid, uint64_t *base, uint64_t *size)
{
    char line[512];
    int found = 0, probes = 0;
    /* Lines are bounded by the kernel (a path is at most PATH_MAX), the
     * count by this cap; a longer line is read in pieces and never matches
     * a piece that does not start a line. */
    int at_line_start = 1;
    for (long n = 0; n < MAPS_LINES_MAX && found < 2 && fgets(line, sizeof line, f); n++) {
        int starts = at_line_start;
        at_line_start = strchr(line, '\n') != NULL;
        unsigned long long lo, hi;
        if (!starts || sscanf(line, "%llx-%llx", &lo, &hi) != 2 || hi <= lo)
            continue;
        int named = is_table_mapping(line);
        if (named || (!found && probes < UNNAMED_PROBES_MAX && is_unnamed_anonymous(line) &&
                      (probes++, holds_table(pid, lo, hi)))) {
            *base = lo;
            *size = hi - lo;
            found = named ? 2 : 1;
        }
    }
    return found;
}

int tr_find_table(pid_t pid, uint64_t *base, uint64_t *size, char *err, size_t err_cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return fail(err, err_cap, "%s: %s", path, strerror(errno));
    int found = scan_maps(f, pid, base, size);
    fclose(f);
    if (!found)
        return fail(err, err_cap,
                    "process %ld has no published region table (no jitframes in it, a jitframes "
                    "without the table, jf_init not called, or its memory is not readable by you)",
                    (long)pid);
    return 0;
}

int tr_read_pid(pid_t pid, const tr_limits *limits, tr_snapshot *out, char *err, size_t err_cap)
{
    uint64_t base = 0, size = 0, last_base = 0;
    for (int attempt = 0; attempt < 4; attempt++) {
        if (tr_find_table(pid, &base, &size, err, err_cap) != 0)
            return -1;
        if (attempt > 0 && base == last_base)
            return -1; /* the same mapping failed again: not a move */
        if (tr_read_table(tr_read_process, &pid, base, size, limits, out, err, err_cap) == 0)
            return 0;
        last_base = base;
    }
    return -1;
}
