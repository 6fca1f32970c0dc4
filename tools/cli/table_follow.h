/*
 * Following a process's published table over time (`jitframes perfmap PID
 * --follow`, run by `jitframes record` while perf records): each read keeps
 * the regions not seen before, with their code bytes read at once, and the
 * regions the removed ring shows were born and removed between two reads
 * (no code left to read). What is kept is bounded in regions and bytes; the
 * target is only read, never written.
 */
#ifndef JFT_TABLE_FOLLOW_H
#define JFT_TABLE_FOLLOW_H

#include "table_jitdump.h"
#include "table_reader.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tf_kept {
    tr_region r;   /* owned */
    uint8_t *code; /* NULL: could not be read (or removed before it was seen) */
    uint64_t ts;   /* CODE_LOAD timestamp: a lower bound of its publication */
    int unwind_ok;
    int ring_only; /* seen only in the removed ring: unwind_ok is settled by tf_entries */
} tf_kept;

typedef struct tf_live {
    uint64_t start;
    size_t kept; /* index in kept */
} tf_live;

typedef struct tf_state {
    pid_t pid;
    uint64_t base, size; /* where its table is mapped (found again when it moves) */
    size_t max_regions;  /* regions kept at most */
    uint64_t max_bytes;  /* code, unwind data and strings kept at most */
    tf_kept *kept;
    size_t n_kept, cap_kept;
    tf_live *live; /* the previous read's live regions, by start */
    size_t n_live;
    uint64_t bytes;
    uint64_t prev_read_ns;  /* start of the previous read; 0 before the first */
    uint64_t first_read_ns; /* removals before the first read are not taken */
    uint64_t ring_seen_ns;  /* removals up to this one were taken */
    size_t reads, failed_reads, inconsistent_reads;
    size_t died_unseen; /* taken from the removed ring, never seen live */
    size_t unread;      /* seen live, code unreadable */
    size_t too_big;     /* left out: larger than TJ_CODE_MAX (a lie) */
    int full;           /* a bound was reached: later regions were not kept */
} tf_state;

/* base, size: where the table was found (tr_find_table). */
void tf_init(tf_state *st, pid_t pid, uint64_t base, uint64_t size, size_t max_regions, uint64_t max_bytes);

/* One read of the table (found again if it moved: the writer grows it into
 * a new mapping). 0, or -1 with a reason (nothing kept from that read). */
int tf_poll(tf_state *st, const tr_limits *lim, char *err, size_t err_cap);

/* The kept regions in CODE_LOAD order (timestamps ascending, ties in the
 * order they were kept): an array of st->n_kept entries to free(), pointing
 * into st; NULL when out of memory. A region seen only in the removed ring
 * keeps its unwind data unless the mapping perf makes for it (code, then
 * unwind data) would cover the start of a region loaded before it (that
 * region's later samples would be named after it). */
tj_entry *tf_entries(const tf_state *st);

void tf_free(tf_state *st);

#endif
