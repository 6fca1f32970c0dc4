/*
 * The table of live regions, keyed by start address: open addressing with
 * linear probing and backward-shift deletion. Each slot keeps the start
 * address next to the region pointer, so a lookup touches only the slot
 * array (one cache line, usually), never the regions themselves.
 * Not thread-safe: the registry lock protects it. Iteration allocates
 * nothing, so it can run in a child right after fork().
 */
#ifndef JF_REGION_TABLE_H
#define JF_REGION_TABLE_H

#include "internal.h"

#include <stddef.h>

typedef struct region_slot {
    uintptr_t start; /* meaningful only when region is not NULL */
    jf_live *region; /* NULL = empty */
} region_slot;

typedef struct region_table {
    region_slot *slots;
    size_t capacity; /* power of two (at least 64), or 0 */
    size_t count;
} region_table;

/* Find the region starting at `start`, or NULL. */
jf_live *region_table_find(const region_table *t, uintptr_t start);

/* Make room for `extra` more insertions without failing (JF_ENOMEM). */
int region_table_reserve(region_table *t, size_t extra);

/* Insert r unless a region with its start is present (then JF_EEXIST and
 * nothing changes). Room must have been reserved. */
int region_table_insert(region_table *t, jf_live *r);

/* Remove and return the region starting at `start`, or NULL. */
jf_live *region_table_remove(region_table *t, uintptr_t start);

/* Visit every region in table order; stops early when visit returns non-zero
 * and returns that value. */
int region_table_foreach(const region_table *t, int (*visit)(jf_live *r, void *ctx), void *ctx);

/* Free the slot array (not the regions). */
void region_table_clear(region_table *t);

#endif
