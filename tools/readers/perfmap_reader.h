/*
 * Reader and validator for perf maps (/tmp/perf-<pid>.map): one
 * "<start> <size> <name>\n" line per region. The validator accepts only
 * the strictest form every reader understands (docs/formats.md), plus what
 * a writer that reserves space leaves: blank lines (unused space, which
 * every reader skips) and lines starting "##" (a line its writer was killed
 * before publishing; bcc skips them, perf makes them an empty symbol at 0).
 */
#ifndef JFT_PERFMAP_READER_H
#define JFT_PERFMAP_READER_H

#include "jft_common.h"

typedef struct pm_entry {
    uint64_t line; /* 1-based */
    uint64_t start;
    uint64_t size;
    const char *name; /* not NUL-terminated: name_len bytes */
    size_t name_len;
} pm_entry;

/*
 * The checker reads a map line by line, a stream too, in bounded memory:
 * a line is at most PM_MAX_LINE bytes (its newline aside), and at most
 * PM_MAX_REGIONS distinct regions (exact repeats aside) are kept for the
 * overlap check, 32 bytes each. More is a problem on that line naming the
 * limit.
 */
#define PM_MAX_LINE (1u << 20)
#define PM_MAX_REGIONS (1u << 19)

typedef void (*pm_entry_fn)(void *ctx, const pm_entry *entry);

typedef struct pm_summary {
    uint64_t entries;
    uint64_t duplicates;  /* lines repeating an earlier line exactly */
    uint64_t lowest;      /* lowest start (0 if no entries) */
    uint64_t highest;     /* highest end */
    uint64_t padding;     /* bytes of blank lines: reserved space not used */
    uint64_t unpublished; /* lines starting "##": never published */
} pm_summary;

/*
 * Parse buf line by line, calling fn (may be NULL) for each well-formed
 * entry (blank and unpublished lines are skipped). Stops at the first
 * malformed line: returns -1 with err->where = its line number. Returns 0 if
 * every line is well formed.
 */
int pm_parse(const uint8_t *buf, size_t len, pm_entry_fn fn, void *ctx, jft_error *err);

/*
 * Validate the whole map: every line well formed and no two entries
 * overlapping (exact repeats of an earlier line are harmless and counted as
 * duplicates). Reports the problem on the earliest line. Returns 0 and fills
 * *summary (may be NULL) when valid, -1 with err set otherwise.
 */
int pm_check(const uint8_t *buf, size_t len, pm_summary *summary, jft_error *err);

/*
 * pm_check over a stream, read once, calling fn (may be NULL) for every
 * well-formed entry up to the first malformed line. Without fn it stops at
 * the first problem. err gets the problem on the earliest line.
 */
int pm_walk_stream(jft_stream *in, pm_entry_fn fn, void *ctx, pm_summary *summary, jft_error *err);

#endif
