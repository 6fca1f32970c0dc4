/*
 * Perf map reader and validator. The rules are the strictest form every
 * known reader accepts (docs/formats.md): lowercase hex without 0x, exactly one
 * space between fields, a non-zero size, a printable UTF-8 name, and a
 * newline after every line (perf 6.1 cuts the last character of an
 * unterminated last line). Overlaps are ambiguous (perf takes the first
 * entry, other readers the last), so they are reported with both lines.
 * Blank lines are unused reserved space, lines starting "##" unpublished
 * ones (see perfmap_reader.h): both are counted, never errors.
 * The map is read once, line by line, as a stream: the overlap check keeps
 * each distinct region in 32 bytes and sorts them when its array is full
 * (dropping exact repeats), so memory is bounded (perfmap_reader.h).
 */
#include "perfmap_reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Parse a hex field at line[*pos..n). `what` names it in messages. */
static int parse_hex_field(const uint8_t *line, size_t n, size_t *pos, const char *what, uint64_t line_no,
                           uint64_t *out, jft_error *err)
{
    size_t p = *pos;
    if (p == n)
        return jft_fail(err, line_no, "line ends before the %s", what);
    if (line[p] == ' ')
        return jft_fail(err, line_no, "%s",
                        p == 0 ? "line starts with a space" : "more than one space between fields");
    if (line[p] == '0' && p + 1 < n && (line[p + 1] == 'x' || line[p + 1] == 'X'))
        return jft_fail(err, line_no, "%s has a 0x prefix (write bare hex)", what);
    uint64_t v = 0;
    for (; p < n && line[p] != ' '; p++) {
        uint8_t c = line[p];
        unsigned digit;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            return jft_fail(err, line_no, "uppercase hex digit '%c' in %s (write lowercase)", c, what);
        else if (c == '\t')
            return jft_fail(err, line_no, "tab in %s (fields are separated by exactly one space)", what);
        else
            return jft_fail(err, line_no, "unexpected byte 0x%02x in %s (expected a hex digit)", c, what);
        if (v >> 60)
            return jft_fail(err, line_no, "%s does not fit in 64 bits", what);
        v = v << 4 | digit;
    }
    *out = v;
    *pos = p;
    return 0;
}

/* Parse one line (without its newline) into *e. */
static int parse_line(const uint8_t *line, size_t n, uint64_t line_no, pm_entry *e, jft_error *err)
{
    if (n == 0)
        return jft_fail(err, line_no, "empty line");
    size_t pos = 0;
    if (parse_hex_field(line, n, &pos, "start address", line_no, &e->start, err))
        return -1;
    if (pos == n)
        return jft_fail(err, line_no, "line ends after the start address (missing size and name)");
    pos++; /* the single space */
    if (parse_hex_field(line, n, &pos, "size", line_no, &e->size, err))
        return -1;
    if (pos == n)
        return jft_fail(err, line_no, "line ends after the size (missing name)");
    pos++;
    if (pos < n && line[pos] == ' ')
        return jft_fail(err, line_no, "more than one space between size and name");
    if (e->size == 0)
        return jft_fail(err, line_no, "size is 0");
    if (e->start + e->size < e->start)
        return jft_fail(err, line_no, "region %llx+%llx wraps past the end of the address space",
                        (unsigned long long)e->start, (unsigned long long)e->size);
    char why[128];
    size_t bad;
    if (jft_check_name(line + pos, n - pos, &bad, why, sizeof why))
        return jft_fail(err, line_no, "%s", why);
    e->line = line_no;
    e->name = (const char *)line + pos;
    e->name_len = n - pos;
    return 0;
}

/* ---- lines from a stream -------------------------------------------------- */

/* A window over the stream holding at least one whole line (at most
 * PM_MAX_LINE bytes and its newline). */
typedef struct line_reader {
    jft_stream *in;
    uint8_t *buf;
    size_t cap, start, end;
    int eof;
} line_reader;

/* Make room after the unread bytes: move them to the front, or grow the
 * window up to its limit. Returns 0, or -1 if the line is too long (or out of
 * memory, *oom set). */
static int make_room(line_reader *lr, int *oom)
{
    if (lr->start > 0) {
        memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
        lr->end -= lr->start;
        lr->start = 0;
        if (lr->end < lr->cap)
            return 0;
    }
    if (lr->cap >= PM_MAX_LINE + 1)
        return -1;
    size_t in_memory = lr->in->fd < 0 ? lr->in->mem_len - lr->in->mem_pos + 1 : SIZE_MAX;
    size_t cap = lr->cap ? lr->cap * 2 : in_memory < 1 << 16 ? in_memory : 1 << 16;
    cap = cap > PM_MAX_LINE + 1 ? PM_MAX_LINE + 1 : cap;
    uint8_t *bigger = realloc(lr->buf, cap);
    if (!bigger) {
        *oom = 1;
        return -1;
    }
    lr->buf = bigger;
    lr->cap = cap;
    return 0;
}

/* The next line (without its newline) in *line, *n; *has_nl says whether a
 * newline ended it. Returns 1, 0 at the end of the stream, -1 when the line
 * is longer than PM_MAX_LINE (or memory ran out: *oom). */
static int next_line(line_reader *lr, const uint8_t **line, size_t *n, int *has_nl, int *oom)
{
    size_t scanned = 0;
    if (lr->cap == 0 && make_room(lr, oom))
        return -1;
    for (;;) {
        const uint8_t *from = lr->buf + lr->start;
        const uint8_t *nl = memchr(from + scanned, '\n', lr->end - lr->start - scanned);
        if (nl || (lr->eof && lr->end > lr->start)) {
            *line = from;
            *n = nl ? (size_t)(nl - from) : lr->end - lr->start;
            *has_nl = nl != NULL;
            lr->start += *n + (nl != NULL);
            return *n > PM_MAX_LINE ? -1 : 1;
        }
        if (lr->eof)
            return 0;
        scanned = lr->end - lr->start;
        if (lr->end == lr->cap && make_room(lr, oom))
            return -1;
        size_t got = jft_stream_read(lr->in, lr->buf + lr->end, lr->cap - lr->end);
        lr->end += got;
        lr->eof = got == 0;
    }
}

/* ---- overlap detection ------------------------------------------------ */

/* An entry as the overlap check keeps it: the name as a hash (two lines
 * with equal start and size and different names whose hashes collide read
 * as a duplicate, one chance in 2^64). */
typedef struct region {
    uint64_t start, size, line, name_hash;
} region;

/* The entries seen so far, compacted (sorted, exact repeats dropped) when
 * full: distinct non-overlapping regions are all a valid map keeps. */
typedef struct region_set {
    region *items;
    size_t n, cap;
    uint64_t dups; /* repeats dropped by compaction */
    int done;      /* a problem was found: stop collecting */
} region_set;

static uint64_t name_hash(const char *name, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    return h;
}

static int same_entry(const region *a, const region *b)
{
    return a->start == b->start && a->size == b->size && a->name_hash == b->name_hash;
}

static int overlaps(const region *a, const region *b)
{
    return a->start < b->start + b->size && b->start < a->start + a->size;
}

static int by_start_then_line(const void *pa, const void *pb)
{
    const region *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/*
 * Sweep the regions sorted by start, ignoring lines after `limit`: a region
 * overlaps an earlier one iff it starts below the highest end seen so far
 * (exact repeats of the region holding that end are harmless). Returns 1 if
 * some pair overlaps; counts duplicates in *dups and, with `drop`, removes
 * them from the set.
 */
static int sweep_finds_overlap(region_set *set, uint64_t limit, uint64_t *dups, int drop)
{
    size_t holder = SIZE_MAX, kept = 0;
    uint64_t max_end = 0;
    *dups = 0;
    for (size_t i = 0; i < set->n; i++) {
        const region *e = &set->items[i];
        if (e->line <= limit && holder != SIZE_MAX && e->start < max_end) {
            if (!same_entry(e, &set->items[holder]))
                return 1;
            (*dups)++;
            continue;
        }
        if (drop)
            set->items[kept] = *e;
        if (e->line <= limit && (holder == SIZE_MAX || e->start + e->size > max_end)) {
            holder = drop ? kept : i;
            max_end = e->start + e->size;
        }
        kept++;
    }
    if (drop)
        set->n = kept;
    return 0;
}

/* The earliest line that overlaps an earlier line: binary search on the
 * prefix length (having an overlap is monotonic in it). */
static void report_first_overlap(region_set *set, jft_error *err)
{
    uint64_t lo = 1, hi = 0, dups;
    for (size_t i = 0; i < set->n; i++)
        hi = set->items[i].line > hi ? set->items[i].line : hi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sweep_finds_overlap(set, mid, &dups, 0))
            hi = mid;
        else
            lo = mid + 1;
    }
    const region *late = NULL, *early = NULL;
    for (size_t i = 0; i < set->n && !late; i++)
        if (set->items[i].line == lo)
            late = &set->items[i];
    for (size_t i = 0; late && i < set->n; i++) {
        const region *e = &set->items[i];
        if (e->line < lo && overlaps(e, late) && !same_entry(e, late) && (!early || e->line < early->line))
            early = e;
    }
    if (early)
        jft_fail(err, lo,
                 "region %llx-%llx overlaps line %llu (%llx-%llx); readers disagree on "
                 "which name wins",
                 (unsigned long long)late->start, (unsigned long long)(late->start + late->size),
                 (unsigned long long)early->line, (unsigned long long)early->start,
                 (unsigned long long)(early->start + early->size));
}

/* Sort, look for an overlap (reported in err), drop exact repeats. Returns
 * 0, or -1 when an overlap was found. */
static int compact(region_set *set, jft_error *err)
{
    uint64_t dups;
    if (set->n)
        qsort(set->items, set->n, sizeof *set->items, by_start_then_line);
    if (sweep_finds_overlap(set, UINT64_MAX, &dups, 0)) {
        report_first_overlap(set, err);
        set->done = 1;
        return -1;
    }
    sweep_finds_overlap(set, UINT64_MAX, &dups, 1);
    set->dups += dups;
    return 0;
}

/* Keep an entry; compact when full, grow only when compacting freed less
 * than half. Returns 0, or -1 with err set (an overlap, or more distinct
 * regions than PM_MAX_REGIONS). */
static int add_region(region_set *set, const pm_entry *e, jft_error *err)
{
    if (set->n == set->cap) {
        if (set->cap && compact(set, err))
            return -1;
        if (set->n >= PM_MAX_REGIONS) {
            set->done = 1;
            return jft_fail(err, e->line,
                            "more than %u distinct regions: more than jitframes checks "
                            "for overlaps",
                            PM_MAX_REGIONS);
        }
        if (set->n >= set->cap / 2) {
            size_t cap = set->cap ? set->cap * 2 : 64;
            region *bigger = realloc(set->items, cap * sizeof *bigger);
            if (!bigger) {
                set->done = 1;
                return jft_fail(err, e->line, "out of memory");
            }
            set->items = bigger;
            set->cap = cap;
        }
    }
    set->items[set->n++] = (region){e->start, e->size, e->line, name_hash(e->name, e->name_len)};
    return 0;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct map_walk {
    pm_entry_fn fn; /* called for every well-formed entry (NULL: none) */
    void *ctx;
    region_set *set; /* NULL: syntax only */
    pm_summary counts;
    jft_error overlap; /* the first overlap found (an earlier line than any later syntax error) */
} map_walk;

static void count_entry_in(map_walk *m, const pm_entry *e, jft_error *err)
{
    pm_summary *c = &m->counts;
    if (c->entries == 0 || e->start < c->lowest)
        c->lowest = e->start;
    if (e->start + e->size > c->highest)
        c->highest = e->start + e->size;
    c->entries++;
    if (m->set && !m->set->done)
        add_region(m->set, e, err);
}

/* Read every line; stop at the first malformed one (err), or at the first
 * overlap when no one wants the entries after it. Returns 0 or -1. */
static int walk_lines(jft_stream *in, map_walk *m, jft_error *err)
{
    line_reader lr = {in, NULL, 0, 0, 0, 0};
    int rc = 0, oom = 0, has_nl;
    const uint8_t *line;
    size_t n;
    uint64_t line_no = 1;
    for (;; line_no++) {
        int got = next_line(&lr, &line, &n, &has_nl, &oom);
        if (got <= 0) {
            if (got < 0)
                rc = oom ? jft_fail(err, line_no, "out of memory")
                         : jft_fail(err, line_no, "line longer than %u bytes: more than jitframes reads",
                                    PM_MAX_LINE);
            break;
        }
        if (has_nl && (n == 0 || (n >= 2 && line[0] == '#' && line[1] == '#'))) {
            m->counts.padding += n == 0;
            m->counts.unpublished += n > 0;
            continue;
        }
        pm_entry e;
        if (parse_line(line, n, line_no, &e, err)) {
            rc = -1;
            break;
        }
        if (!has_nl) {
            rc = jft_fail(err, line_no, "last line has no trailing newline (perf cuts its last character)");
            break;
        }
        if (m->fn)
            m->fn(m->ctx, &e);
        count_entry_in(m, &e, &m->overlap);
        if (m->overlap.set && !m->fn)
            break;
    }
    free(lr.buf);
    if (rc == 0 && in->error)
        rc = jft_fail(err, line_no, "read error: %s", strerror(in->error));
    return rc;
}

int pm_parse(const uint8_t *buf, size_t len, pm_entry_fn fn, void *ctx, jft_error *err)
{
    jft_stream in;
    jft_stream_from_buffer(&in, buf, len);
    map_walk m = {fn, ctx, NULL, {0}, {0}};
    return walk_lines(&in, &m, err);
}

int pm_walk_stream(jft_stream *in, pm_entry_fn fn, void *ctx, pm_summary *summary, jft_error *err)
{
    region_set set = {0};
    map_walk m = {fn, ctx, &set, {0}, {0}};
    jft_error syntax = {0};
    int syntax_rc = walk_lines(in, &m, &syntax);
    if (!set.done)
        compact(&set, &m.overlap);
    free(set.items);
    if (m.overlap.set || syntax_rc) {
        if (err && !err->set) /* an overlap is on an earlier line than a syntax error */
            *err = m.overlap.set ? m.overlap : syntax;
        return -1;
    }
    if (summary) {
        *summary = m.counts;
        summary->duplicates = set.dups;
        if (!m.counts.entries)
            summary->lowest = summary->highest = 0;
    }
    return 0;
}

int pm_check(const uint8_t *buf, size_t len, pm_summary *summary, jft_error *err)
{
    jft_stream in;
    jft_stream_from_buffer(&in, buf, len);
    return pm_walk_stream(&in, NULL, NULL, summary, err);
}
