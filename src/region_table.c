/*
 * Hash table of live regions (see region_table.h). Addresses are hashed with
 * a multiplicative mix because JIT code is often aligned, which would
 * otherwise cluster the low bits.
 */
#include "region_table.h"

#include <stdlib.h>

/* Fold the high bits down (murmur3's finaliser), then keep the product's
 * top bits. A bare multiplication clusters strided addresses: 1M regions
 * 64 KiB apart (one mmap per function) took 49 extra probes per insertion
 * with Fibonacci hashing alone, 0.46 with the fold, whatever the stride. */
static size_t slot_of(uintptr_t start, size_t capacity)
{
    uint64_t h = (uint64_t)start;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> (64 - __builtin_ctzll((unsigned long long)capacity)));
}

/* The slot holding `start`, or the empty slot ending its probe run. */
static size_t probe(const region_slot *slots, size_t capacity, uintptr_t start)
{
    size_t mask = capacity - 1;
    size_t i = slot_of(start, capacity);
    while (slots[i].region && slots[i].start != start)
        i = (i + 1) & mask;
    return i;
}

jf_live *region_table_find(const region_table *t, uintptr_t start)
{
    if (t->capacity == 0)
        return NULL;
    return t->slots[probe(t->slots, t->capacity, start)].region;
}

int region_table_reserve(region_table *t, size_t extra)
{
    if (extra > SIZE_MAX / 4 - t->count)
        return JF_ENOMEM;
    size_t need = t->count + extra;
    if (need * 2 <= t->capacity) /* keep the load factor at most 1/2 */
        return 0;
    size_t capacity = t->capacity ? t->capacity : 64;
    while (capacity < need * 2)
        capacity *= 2;
    if (capacity > SIZE_MAX / sizeof(region_slot))
        return JF_ENOMEM;
    region_slot *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return JF_ENOMEM;
    for (size_t i = 0; i < t->capacity; i++)
        if (t->slots[i].region)
            slots[probe(slots, capacity, t->slots[i].start)] = t->slots[i];
    free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return 0;
}

int region_table_insert(region_table *t, jf_live *r)
{
    size_t i = probe(t->slots, t->capacity, r->start);
    if (t->slots[i].region)
        return JF_EEXIST;
    t->slots[i].start = r->start;
    t->slots[i].region = r;
    t->count++;
    return 0;
}

jf_live *region_table_remove(region_table *t, uintptr_t start)
{
    if (t->capacity == 0)
        return NULL;
    size_t mask = t->capacity - 1;
    size_t i = probe(t->slots, t->capacity, start);
    jf_live *found = t->slots[i].region;
    if (!found)
        return NULL;
    /* Backward-shift: pull later members of the probe run into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; t->slots[j].region; j = (j + 1) & mask) {
        size_t home = slot_of(t->slots[j].start, t->capacity);
        int movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    t->slots[hole].region = NULL;
    t->count--;
    return found;
}

int region_table_foreach(const region_table *t, int (*visit)(jf_live *r, void *ctx), void *ctx)
{
    for (size_t i = 0; i < t->capacity; i++) {
        if (t->slots[i].region) {
            int rc = visit(t->slots[i].region, ctx);
            if (rc)
                return rc;
        }
    }
    return 0;
}

void region_table_clear(region_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->capacity = 0;
    t->count = 0;
}
