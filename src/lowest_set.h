/*
 * A set of numbers below a capacity, taken lowest first, in private memory:
 * the published table's free slots (src/published.c) and its free heap
 * blocks of each size class (src/pub_blocks.h). Whatever order things are
 * freed in, the next ones taken are the lowest, so a run of registrations
 * after a random-order churn writes neighbouring entries and blocks (lists
 * of the last freed first scattered them: every registration and removal
 * then missed the cache on each). A bitmap with a summary level per 64
 * words of the level below: adding, taking and finding the lowest are a
 * few word operations per level (5 levels for 2^30), in any order.
 */
#ifndef JF_LOWEST_SET_H
#define JF_LOWEST_SET_H

#include <stddef.h>
#include <stdint.h>

enum { JF__LOWEST_SET_LEVELS = 5 };

typedef struct jf__lowest_set {
    uint64_t *bits[JF__LOWEST_SET_LEVELS]; /* [0]: a bit per number; [k + 1]: a bit per word of [k] */
    uint32_t words[JF__LOWEST_SET_LEVELS]; /* of each level */
    uint32_t levels;                       /* the top one is a single word */
    uint32_t capacity, count;
    size_t map_bytes; /* of the mapping that holds every level */
} jf__lowest_set;

/* An empty set for [0, capacity) (at most 2^30); 0, or -1 without memory
 * (s can then be destroyed, and adds nothing). */
int jf__lowest_set_init(jf__lowest_set *s, uint32_t capacity);

/* The same set for a larger capacity (what it holds stays); 0, or -1
 * without memory (s unchanged). */
int jf__lowest_set_grow(jf__lowest_set *s, uint32_t capacity);

void jf__lowest_set_destroy(jf__lowest_set *s);

/* Marks the levels above word w of level 0 (which just got its first
 * member). */
void jf__lowest_set_add_above(jf__lowest_set *s, uint32_t w);

/* i joins the set (already in it: nothing changes); a number past the
 * capacity is ignored (a set that could not be made or grown). Inline:
 * one word's bit, unless that word was empty. */
static inline void jf__lowest_set_add(jf__lowest_set *s, uint32_t i)
{
    if (i >= s->capacity)
        return;
    uint64_t *word = &s->bits[0][i / 64];
    uint64_t bit = UINT64_C(1) << (i % 64), was = *word;
    if (was & bit)
        return;
    *word = was | bit;
    s->count++;
    if (!was)
        jf__lowest_set_add_above(s, i / 64);
}

/* The lowest number in the set, taken out of it; UINT32_MAX when empty. */
uint32_t jf__lowest_set_take(jf__lowest_set *s);

#endif
