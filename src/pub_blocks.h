/*
 * The published table's heap bookkeeping (src/published.c): every entry's
 * strings, line table and unwind description live in one block of the
 * heap (a shared description in a block of its own, never freed), sized to
 * a class (16-byte steps up to 256 bytes, then four steps per power of two:
 * at most 25% slack). A freed block joins its class's set of
 * free blocks and the next block of that class is the lowest one in it, so
 * a change costs O(1), nothing ever moves (no compaction, and readers
 * never see a string move under an entry), and after removals in any
 * order new blocks are neighbours again (lowest_set.h). The sets are in
 * the writer's own memory, made for a class when its first block is freed
 * and grown with the heap: nothing the process writes into the table can
 * send a block elsewhere, and freeing allocates nothing once the class has
 * its set. The heap is in a mapping the process can write: a removed
 * entry's offset that would put a block past the heap, or off a block's
 * 16-byte boundary, is not freed. Not thread-safe: the registry lock
 * serialises it.
 */
#ifndef JF_PUB_BLOCKS_H
#define JF_PUB_BLOCKS_H

#include "lowest_set.h"

#include <stdint.h>

enum {
    PUB_SMALL_STEP = 16, /* small classes: 16, 32, ..., 256 bytes */
    PUB_SMALL_MAX = 256,
    PUB_SMALL_CLASSES = PUB_SMALL_MAX / PUB_SMALL_STEP,
    PUB_CLASSES = PUB_SMALL_CLASSES + 4 * (32 - 8), /* up to 2^32 bytes */
};

typedef struct jf__pub_blocks {
    char *heap;                       /* where the offsets point (the mapping's heap area) */
    uint64_t heap_size;               /* its bytes: no block ends past them */
    jf__lowest_set free[PUB_CLASSES]; /* per class: the free blocks, offset / PUB_SMALL_STEP */
} jf__pub_blocks;

/* The class of a block for `bytes` (1 .. 2^32 - 1). */
static inline uint32_t jf__pub_class(uint64_t bytes)
{
    if (bytes <= PUB_SMALL_MAX)
        return bytes ? (uint32_t)((bytes - 1) / PUB_SMALL_STEP) : 0;
    uint64_t m = bytes - 1;
    uint32_t p = 63u - (uint32_t)__builtin_clzll(m); /* 2^p <= m < 2^(p+1), p >= 8 */
    return PUB_SMALL_CLASSES + (p - 8) * 4 + (uint32_t)((m >> (p - 2)) & 3);
}

/* The bytes of a block of class c (at least what jf__pub_class was asked). */
static inline uint64_t jf__pub_class_size(uint32_t c)
{
    if (c < PUB_SMALL_CLASSES)
        return (uint64_t)(c + 1) * PUB_SMALL_STEP;
    uint32_t k = c - PUB_SMALL_CLASSES;
    return (uint64_t)(5 + (k & 3)) << (k / 4 + 6);
}

/* Does a block of class c at off lie within the heap? */
static inline int jf__pub_block_fits(const jf__pub_blocks *b, uint32_t off, uint32_t c)
{
    return (uint64_t)off + jf__pub_class_size(c) <= b->heap_size;
}

/* The lowest free block of class c: 1 with *off, or 0. */
static inline int jf__pub_blocks_take(jf__pub_blocks *b, uint32_t c, uint32_t *off)
{
    uint32_t i = b->free[c].count ? jf__lowest_set_take(&b->free[c]) : UINT32_MAX;
    if (i == UINT32_MAX)
        return 0;
    *off = i * PUB_SMALL_STEP;
    return 1;
}

/* A free block of a larger class than c, split: its first
 * jf__pub_class_size(c) bytes are *off, the rest goes back to the lists.
 * 1, or 0 when there is none. O(classes): for a heap that cannot grow. */
int jf__pub_blocks_take_larger(jf__pub_blocks *b, uint32_t c, uint32_t *off);

/* The set of class c's first free block: made for the heap's size. */
void jf__pub_blocks_make_set(jf__pub_blocks *b, uint32_t c);

/* Free the block of class c at off (one past the heap or off a block
 * boundary is not kept). */
static inline void jf__pub_blocks_put(jf__pub_blocks *b, uint32_t off, uint32_t c)
{
    if (__builtin_expect(!jf__pub_block_fits(b, off, c) || off % PUB_SMALL_STEP, 0))
        return;
    if (__builtin_expect(!b->free[c].levels, 0))
        jf__pub_blocks_make_set(b, c);
    jf__lowest_set_add(&b->free[c], off / PUB_SMALL_STEP);
}

/* The heap the sets are for, after it was mapped or copied to a bigger
 * mapping (the offsets stay valid: the heap is copied whole). */
void jf__pub_blocks_attach(jf__pub_blocks *b, char *heap, uint64_t heap_size);

/* Forget every free block (the heap was emptied, or the table forgotten),
 * and the sets' memory. */
void jf__pub_blocks_clear(jf__pub_blocks *b);

#endif
