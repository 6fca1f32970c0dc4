/*
 * Following a published table (table_follow.h). A region read before is
 * recognised by the previous read's live list (same start, size, name and
 * publication generation), so each read costs one pass over the table and
 * one search per region. Timestamps: the table's published_ns when it has
 * one, else the start of the previous read (the region was not there yet),
 * and never before the removal of a region that held its start (the ring
 * says when): perf then gives each sample the region live at its time.
 */
#define _GNU_SOURCE
#include "table_follow.h"

#include "table_shared.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void tf_init(tf_state *st, pid_t pid, uint64_t base, uint64_t size, size_t max_regions, uint64_t max_bytes)
{
    memset(st, 0, sizeof *st);
    st->pid = pid;
    st->base = base;
    st->size = size;
    st->max_regions = max_regions;
    st->max_bytes = max_bytes;
}

void tf_free(tf_state *st)
{
    for (size_t i = 0; i < st->n_kept; i++) {
        tr_region_free(&st->kept[i].r);
        free(st->kept[i].code);
    }
    free(st->kept);
    free(st->live);
    memset(st, 0, sizeof *st);
}

/* The bytes of shared block p (table_shared.h) not yet counted: a block
 * many regions hold is counted once; claim: count it now. */
static uint64_t block_bytes(void *p, uint64_t size, int claim)
{
    if (!p || ts_claimed(p))
        return 0;
    if (claim)
        ts_claim(p);
    return size;
}

/* Bytes a kept region costs: what it holds that no kept region held
 * before, and its code (read, or zeros in the jitdump when it cannot be). */
static uint64_t region_bytes(const tr_region *r, int claim)
{
    return sizeof *r + r->size + block_bytes(r->name, ts_size(r->name), claim) +
           block_bytes(r->file, ts_size(r->file), claim) + block_bytes(r->unwind, ts_size(r->unwind), claim) +
           block_bytes(r->lines, ts_aux(r->lines), claim); /* with its files (table_reader.h) */
}

/* Room for r, kept, within the bounds. */
static int room_for(tf_state *st, const tr_region *r)
{
    if (r->size > TJ_CODE_MAX) { /* no code is that big: a lie, not named */
        st->too_big++;
        return 0;
    }
    if (st->n_kept >= st->max_regions || region_bytes(r, 0) > st->max_bytes - st->bytes) {
        st->full = 1;
        return 0;
    }
    if (st->n_kept == st->cap_kept) {
        size_t cap = st->cap_kept ? 2 * st->cap_kept : 256;
        tf_kept *v = realloc(st->kept, cap * sizeof *v);
        if (!v) {
            st->full = 1;
            return 0;
        }
        st->kept = v;
        st->cap_kept = cap;
    }
    return 1;
}

/* Take r out of its snapshot (the snapshot frees what is left: nothing). */
static size_t keep(tf_state *st, tr_region *r, uint8_t *code, uint64_t ts, int unwind_ok)
{
    st->bytes += region_bytes(r, 1);
    st->kept[st->n_kept] = (tf_kept){*r, code, ts, unwind_ok, 0};
    memset(r, 0, sizeof *r);
    return st->n_kept++;
}

/* The index in the previous read's live list of the region at start, or -1. */
static long find_live(const tf_state *st, uint64_t start)
{
    size_t lo = 0, hi = st->n_live;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->live[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->n_live && st->live[lo].start == start ? (long)lo : -1;
}

static int same_region(const tr_region *a, const tr_region *b)
{
    return a->start == b->start && a->size == b->size && a->published_gen == b->published_gen &&
           strcmp(a->name, b->name) == 0;
}

/* Was r (live at the previous read) kept then? Its index, or -1. */
static long seen_before(const tf_state *st, const tr_region *r)
{
    long i = find_live(st, r->start);
    return i >= 0 && same_region(&st->kept[st->live[i].kept].r, r) ? (long)st->live[i].kept : -1;
}

/* The removals of one read, by start then time, to find the last removal
 * at an address in O(log n) (a hostile ring is large). */
typedef struct removal {
    uint64_t start, ns;
} removal;

static int by_start_then_ns(const void *x, const void *y)
{
    const removal *a = x, *b = y;
    if (a->start != b->start)
        return (a->start > b->start) - (a->start < b->start);
    return (a->ns > b->ns) - (a->ns < b->ns);
}

/* NULL when out of memory (then no removal is known: timestamps are only
 * less tight). */
static removal *sorted_removals(const tr_snapshot *s)
{
    removal *v = malloc((s->n_removed ? s->n_removed : 1) * sizeof *v);
    for (size_t i = 0; v && i < s->n_removed; i++)
        v[i] = (removal){s->removed[i].start, s->removed[i].removed_ns};
    if (v)
        qsort(v, s->n_removed, sizeof *v, by_start_then_ns);
    return v;
}

/* The latest removal before `before` of a region that started at start (0:
 * none). */
static uint64_t removal_before(const removal *v, size_t n, uint64_t start, uint64_t before)
{
    size_t lo = 0, hi = v ? n : 0;
    while (lo < hi) { /* the first entry not below (start, before) */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start < start || (v[mid].start == start && v[mid].ns < before))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && v[lo - 1].start == start ? v[lo - 1].ns : 0;
}

/* A lower bound of r's publication: the table's, else the start of the
 * previous read; not before a removal at its start that preceded it. */
static uint64_t load_time(const tf_state *st, const removal *rm, size_t n_rm, const tr_region *r,
                          uint64_t before)
{
    uint64_t ts = r->published_ns ? r->published_ns : st->prev_read_ns;
    uint64_t removed = removal_before(rm, n_rm, r->start, before);
    return removed >= ts ? removed + 1 : ts;
}

/* Regions the ring shows removed since the last read that no read saw live. */
static void take_removed(tf_state *st, tr_snapshot *s, const removal *rm)
{
    uint64_t newest = st->ring_seen_ns;
    for (size_t i = 0; i < s->n_removed; i++) {
        tr_region *r = &s->removed[i];
        if (r->removed_ns <= st->ring_seen_ns || r->removed_ns < st->first_read_ns)
            continue;
        if (r->removed_ns > newest)
            newest = r->removed_ns;
        if (seen_before(st, r) >= 0 || !room_for(st, r))
            continue;
        uint64_t ts = load_time(st, rm, s->n_removed, r, r->removed_ns);
        size_t k = keep(st, r, NULL, ts < r->removed_ns ? ts : r->removed_ns, 0);
        st->kept[k].ring_only = 1;
        st->died_unseen++;
    }
    st->ring_seen_ns = newest;
}

/* The code of r, read now; NULL if it cannot be (or is over the bounds). */
static uint8_t *read_code(tf_state *st, const tr_region *r)
{
    uint8_t *code = malloc(r->size);
    if (code && tr_read_process(&st->pid, r->start, code, r->size) != 0) {
        free(code);
        code = NULL;
    }
    return code;
}

/* The live regions of s into the new live list, keeping those not seen. */
static void take_live(tf_state *st, tr_snapshot *s, const removal *rm, tf_live *now, size_t *n_now)
{
    *n_now = 0;
    for (size_t i = 0; i < s->n_live; i++) {
        tr_region *r = &s->live[i];
        long k = seen_before(st, r);
        if (k < 0) {
            if (!room_for(st, r))
                continue;
            uint64_t ts = load_time(st, rm, s->n_removed, r, UINT64_MAX);
            uint8_t *code = read_code(st, r);
            st->unread += code == NULL;
            uint64_t next = i + 1 < s->n_live ? s->live[i + 1].start : 0;
            k = (long)keep(st, r, code, ts, tj_unwind_fits(r, next));
        }
        now[(*n_now)++] = (tf_live){st->kept[k].r.start, (size_t)k};
    }
}

/* Read the table where it was; where it is now if that fails and it moved. */
static int read_table(tf_state *st, const tr_limits *lim, tr_snapshot *s, char *err, size_t err_cap)
{
    if (tr_read_table(tr_read_process, &st->pid, st->base, st->size, lim, s, err, err_cap) == 0)
        return 0;
    uint64_t base, size;
    if (tr_find_table(st->pid, &base, &size, err, err_cap) != 0 || (base == st->base && size == st->size))
        return -1;
    st->base = base;
    st->size = size;
    return tr_read_table(tr_read_process, &st->pid, base, size, lim, s, err, err_cap);
}

int tf_poll(tf_state *st, const tr_limits *lim, char *err, size_t err_cap)
{
    uint64_t t = monotonic_ns();
    tr_snapshot s;
    st->reads++;
    if (read_table(st, lim, &s, err, err_cap) != 0) {
        st->failed_reads++;
        return -1;
    }
    st->inconsistent_reads += !s.consistent;
    tf_live *now = malloc((s.n_live ? s.n_live : 1) * sizeof *now);
    if (!now) {
        tr_snapshot_free(&s);
        snprintf(err, err_cap, "out of memory");
        st->failed_reads++;
        return -1;
    }
    if (st->reads == 1)
        st->first_read_ns = t;
    removal *rm = sorted_removals(&s);
    take_removed(st, &s, rm);
    size_t n_now;
    take_live(st, &s, rm, now, &n_now);
    free(rm);
    free(st->live);
    st->live = now;
    st->n_live = n_now;
    st->prev_read_ns = t;
    tr_snapshot_free(&s);
    return 0;
}

static int by_ts(const void *x, const void *y)
{
    const tj_entry *a = x, *b = y;
    if (a->ts != b->ts)
        return (a->ts > b->ts) - (a->ts < b->ts);
    return (a->r > b->r) - (a->r < b->r); /* kept order: addresses in one array */
}

static int by_start(const void *x, const void *y)
{
    const tj_entry *a = x, *b = y;
    return (a->r->start > b->r->start) - (a->r->start < b->r->start);
}

/* The first of v (n, by start) that starts above start. */
static size_t first_above(const tj_entry *v, size_t n, uint64_t start)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].r->start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum { OVERLAP_LOOKS_MAX = 64 };

/* Whether the ring-only region e's unwind data may go with it (see
 * tf_entries): no region of v (by start) loaded no later than it starts
 * inside its mapping. More than OVERLAP_LOOKS_MAX candidates: no. */
static int ring_unwind_fits(const tj_entry *e, const tj_entry *by_start_v, size_t n)
{
    uint64_t end = tj_unwind_end(e->r);
    size_t i = first_above(by_start_v, n, e->r->start);
    for (size_t looks = 0; i < n && by_start_v[i].r->start < end; i++, looks++)
        if (looks == OVERLAP_LOOKS_MAX || by_start_v[i].ts <= e->ts)
            return 0;
    return 1;
}

static void settle_ring_unwind(const tf_state *st, tj_entry *v)
{
    tj_entry *s = malloc((st->n_kept ? st->n_kept : 1) * sizeof *s);
    if (!s)
        return; /* no unwind data for them: only less complete */
    memcpy(s, v, st->n_kept * sizeof *s);
    qsort(s, st->n_kept, sizeof *s, by_start);
    for (size_t i = 0; i < st->n_kept; i++) {
        const tf_kept *k = &st->kept[i];
        if (k->ring_only && k->r.unwind)
            v[i].unwind_ok = ring_unwind_fits(&v[i], s, st->n_kept);
    }
    free(s);
}

tj_entry *tf_entries(const tf_state *st)
{
    tj_entry *v = malloc((st->n_kept ? st->n_kept : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < st->n_kept; i++)
        v[i] = (tj_entry){&st->kept[i].r, st->kept[i].code, st->kept[i].ts, st->kept[i].unwind_ok};
    settle_ring_unwind(st, v);
    qsort(v, st->n_kept, sizeof *v, by_ts);
    return v;
}
