/*
 * The registry's private index of live regions (not the published
 * jf_region_table, which src/published.c writes for other processes),
 * keyed by start address, in two levels: a small hash directory of 4 KiB
 * code pages, and per page a sorted array of the regions that start in it. JITs allocate code sequentially, so consecutive
 * registrations land in the same page, whose array is already in cache: a
 * flat hash of a million regions missed the cache (and the TLB) on every
 * insertion and cost as much as the write(2) of the perf map line.
 * Not thread-safe: the registry lock protects it. Iteration allocates
 * nothing, so it can run in a child right after fork().
 */
#ifndef JF_REGION_INDEX_H
#define JF_REGION_INDEX_H

#include "region.h"

#include <stddef.h>

typedef struct jf__region_slot {
    uintptr_t start;
    jf__live *region;
} jf__region_slot;

/* The live regions starting in one page; a directory slot is empty when
 * `entries` is NULL. */
typedef struct jf__region_page {
    uintptr_t page;           /* start >> 12 */
    jf__region_slot *entries; /* sorted by start */
    uint32_t count;
    uint32_t capacity;
} jf__region_page;

typedef struct jf__region_index {
    jf__region_page *pages; /* open addressing, linear probing */
    size_t capacity;        /* power of two (at least 64), or 0 */
    size_t used_pages;
    size_t count;    /* regions */
    size_t max_size; /* largest region ever inserted: how far back an
                           overlapping region can start */
} jf__region_index;

/* Find the region starting at `start`, or NULL. */
jf__live *jf__region_index_find(const jf__region_index *t, uintptr_t start);

/* Whether a region starts in [lo, hi). */
int jf__region_index_any_start_in(const jf__region_index *t, uintptr_t lo, uintptr_t hi);

/* Insert r. JF_EEXIST if a region with its start is present, JF_ENOMEM if
 * memory runs out; nothing changes then. */
int jf__region_index_insert(jf__region_index *t, jf__live *r);

/* Remove and return the region starting at `start`, or NULL. */
jf__live *jf__region_index_remove(jf__region_index *t, uintptr_t start);

/* A live region whose code [start, start + size) meets [lo, hi), or NULL.
 * Costs a lookup per page from lo - max_size to hi (at most one pass over
 * the directory). */
jf__live *jf__region_index_overlapping(const jf__region_index *t, uintptr_t lo, uintptr_t hi);

/* Moving regions all or nothing: detach takes the region at `start` out but
 * keeps its page's memory, so inserting it again at `start` cannot fail;
 * release_empty then frees the page holding `start` if it was left empty. */
jf__live *jf__region_index_detach(jf__region_index *t, uintptr_t start);
void jf__region_index_release_empty(jf__region_index *t, uintptr_t start);

/* Visit every region; stops early when visit returns non-zero and returns
 * that value. */
int jf__region_index_foreach(const jf__region_index *t, int (*visit)(jf__live *r, void *ctx), void *ctx);

/* Free the table's memory (not the regions). */
void jf__region_index_clear(jf__region_index *t);

#endif
