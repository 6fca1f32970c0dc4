/*
 * Perf map reader and validator. The rules are the strictest form every
 * known reader accepts (docs/formats.md): lowercase hex without 0x, exactly one
 * space between fields, a non-zero size, a printable UTF-8 name, and a
 * newline after every line (perf 6.1 cuts the last character of an
 * unterminated last line). Overlaps are ambiguous (perf takes the first
 * entry, other readers the last), so they are reported with both lines.
 * Blank lines are unused reserved space, lines starting "##" unpublished
 * ones (see perfmap_reader.h): both are counted, never errors.
 */
#include "perfmap_reader.h"

#include <stdlib.h>
#include <string.h>

/* Parse a hex field at line[*pos..n). `what` names it in messages. */
static int parse_hex_field(const uint8_t *line, size_t n, size_t *pos, const char *what,
                           uint64_t line_no, uint64_t *out, jft_error *err)
{
    size_t p = *pos;
    if (p == n)
        return jft_fail(err, line_no, "line ends before the %s", what);
    if (line[p] == ' ')
        return jft_fail(err, line_no, "%s", p == 0 ? "line starts with a space"
                                                   : "more than one space between fields");
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

/* pm_parse, counting blank and unpublished lines into *summary (if not NULL). */
static int parse_lines(const uint8_t *buf, size_t len, pm_entry_fn fn, void *ctx,
                       pm_summary *summary, jft_error *err)
{
    size_t pos = 0;
    uint64_t padding = 0, unpublished = 0;
    for (uint64_t line_no = 1; pos < len; line_no++) {
        const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        if (nl && (n == 0 || (n >= 2 && buf[pos] == '#' && buf[pos + 1] == '#'))) {
            padding += n == 0;
            unpublished += n > 0;
            pos += n + 1;
            continue;
        }
        pm_entry e;
        if (parse_line(buf + pos, n, line_no, &e, err))
            return -1;
        if (!nl)
            return jft_fail(err, line_no,
                            "last line has no trailing newline (perf cuts its last character)");
        if (fn)
            fn(ctx, &e);
        pos += n + 1;
    }
    if (summary) {
        summary->padding = padding;
        summary->unpublished = unpublished;
    }
    return 0;
}

int pm_parse(const uint8_t *buf, size_t len, pm_entry_fn fn, void *ctx, jft_error *err)
{
    return parse_lines(buf, len, fn, ctx, NULL, err);
}

/* ---- overlap detection ------------------------------------------------ */

typedef struct entry_list {
    pm_entry *items; /* in file order */
    size_t n, cap;
    int oom;
} entry_list;

static void collect_entry(void *ctx, const pm_entry *e)
{
    entry_list *l = ctx;
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        pm_entry *items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            l->oom = 1;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = *e;
}

static int same_entry(const pm_entry *a, const pm_entry *b)
{
    return a->start == b->start && a->size == b->size && a->name_len == b->name_len &&
           memcmp(a->name, b->name, a->name_len) == 0;
}

static int overlaps(const pm_entry *a, const pm_entry *b)
{
    return a->start < b->start + b->size && b->start < a->start + a->size;
}

static int by_start_then_line(const void *pa, const void *pb)
{
    const pm_entry *a = *(pm_entry *const *)pa, *b = *(pm_entry *const *)pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/*
 * Sweep the entries sorted by start, ignoring lines after `limit`: an entry
 * overlaps an earlier one iff it starts below the highest end seen so far
 * (exact repeats of the entry holding that end are harmless). Returns 1 if
 * some pair overlaps; counts duplicates in *dups.
 */
static int sweep_finds_overlap(pm_entry **sorted, size_t n, uint64_t limit, uint64_t *dups)
{
    const pm_entry *holder = NULL;
    uint64_t max_end = 0;
    *dups = 0;
    for (size_t i = 0; i < n; i++) {
        const pm_entry *e = sorted[i];
        if (e->line > limit)
            continue;
        if (holder && e->start < max_end) {
            if (!same_entry(e, holder))
                return 1;
            (*dups)++;
            continue;
        }
        if (!holder || e->start + e->size > max_end) {
            holder = e;
            max_end = e->start + e->size;
        }
    }
    return 0;
}

/* The earliest line that overlaps an earlier line: binary search on the
 * prefix length (having an overlap is monotonic in it). */
static void report_first_overlap(const entry_list *l, pm_entry **sorted, jft_error *err)
{
    uint64_t lo = 1, hi = l->items[l->n - 1].line, dups;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sweep_finds_overlap(sorted, l->n, mid, &dups))
            hi = mid;
        else
            lo = mid + 1;
    }
    const pm_entry *late = NULL;
    for (size_t i = 0; i < l->n && !late; i++)
        if (l->items[i].line == lo)
            late = &l->items[i];
    for (size_t i = 0; late && l->items[i].line < lo; i++) {
        const pm_entry *early = &l->items[i];
        if (overlaps(early, late) && !same_entry(early, late)) {
            jft_fail(err, lo,
                     "region %llx-%llx overlaps line %llu (%llx-%llx); readers disagree on "
                     "which name wins",
                     (unsigned long long)late->start, (unsigned long long)(late->start + late->size),
                     (unsigned long long)early->line, (unsigned long long)early->start,
                     (unsigned long long)(early->start + early->size));
            return;
        }
    }
}

static void fill_summary(pm_summary *s, pm_entry **sorted, size_t n, uint64_t dups)
{
    memset(s, 0, sizeof *s);
    s->entries = n;
    s->duplicates = dups;
    if (n == 0)
        return;
    s->lowest = sorted[0]->start;
    for (size_t i = 0; i < n; i++)
        if (sorted[i]->start + sorted[i]->size > s->highest)
            s->highest = sorted[i]->start + sorted[i]->size;
}

int pm_check(const uint8_t *buf, size_t len, pm_summary *summary, jft_error *err)
{
    entry_list l = {0};
    jft_error syntax = {0};
    pm_summary unused = {0};
    int syntax_rc = parse_lines(buf, len, collect_entry, &l, &unused, &syntax);
    pm_entry **sorted = l.n ? malloc(l.n * sizeof *sorted) : NULL;
    if (l.oom || (l.n && !sorted)) {
        free(l.items);
        free(sorted);
        return jft_fail(err, 0, "out of memory");
    }
    for (size_t i = 0; i < l.n; i++)
        sorted[i] = &l.items[i];
    if (l.n)
        qsort(sorted, l.n, sizeof *sorted, by_start_then_line);
    uint64_t dups;
    int rc = 0;
    if (sweep_finds_overlap(sorted, l.n, UINT64_MAX, &dups)) {
        report_first_overlap(&l, sorted, err);
        rc = -1;
    } else if (syntax_rc) {
        if (err)
            *err = syntax; /* entries before the bad line do not overlap */
        rc = -1;
    } else if (summary) {
        fill_summary(summary, sorted, l.n, dups);
        summary->padding = unused.padding;
        summary->unpublished = unused.unpublished;
    }
    free(sorted);
    free(l.items);
    return rc;
}
