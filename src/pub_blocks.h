/*
 * The published table's heap bookkeeping (src/published.c): every entry's
 * strings, line table and unwind description live in one block of the
 * heap, sized to a class (16-byte steps up to 256 bytes, then four steps per
 * power of two: at most 25% slack). A freed block goes to its class's list
 * and the next block of that class reuses it, so a change costs O(1) and
 * nothing ever moves: no compaction, and readers never see a string move
 * under an entry. Each list is linked through its free blocks themselves
 * (a free block's first 4 bytes: 1 + the offset of the block freed before
 * it, 0 at the end), so freeing costs no memory and no allocation (arrays
 * of offsets grew by realloc in the middle of removals: 62 instructions a
 * removal of a line-table region). The heap is in a mapping the process
 * can write: an offset or a link that would put a block past the heap is
 * not followed. Not thread-safe: the registry lock serialises it.
 */
#ifndef JF_PUB_BLOCKS_H
#define JF_PUB_BLOCKS_H

#include <stdint.h>
#include <string.h>

enum {
    PUB_SMALL_STEP = 16, /* small classes: 16, 32, ..., 256 bytes */
    PUB_SMALL_MAX = 256,
    PUB_SMALL_CLASSES = PUB_SMALL_MAX / PUB_SMALL_STEP,
    PUB_CLASSES = PUB_SMALL_CLASSES + 4 * (32 - 8), /* up to 2^32 bytes */
};

typedef struct jf__pub_blocks {
    char *heap;                /* where the offsets point (the mapping's heap area) */
    uint64_t heap_size;        /* its bytes: no block ends past them */
    uint32_t top[PUB_CLASSES]; /* 1 + the last freed block of each class, 0 when none */
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

/* A free block of class c, reused last freed first: 1 with *off, or 0
 * (also when the link is one no block could have: the list ends there). */
static inline int jf__pub_blocks_take(jf__pub_blocks *b, uint32_t c, uint32_t *off)
{
    uint32_t top = b->top[c];
    if (!top)
        return 0;
    if (__builtin_expect(!jf__pub_block_fits(b, top - 1, c), 0)) {
        b->top[c] = 0;
        return 0;
    }
    *off = top - 1;
    memcpy(&b->top[c], b->heap + *off, sizeof top);
    return 1;
}

/* A free block of a larger class than c, split: its first
 * jf__pub_class_size(c) bytes are *off, the rest goes back to the lists.
 * 1, or 0 when there is none. O(classes): for a heap that cannot grow. */
int jf__pub_blocks_take_larger(jf__pub_blocks *b, uint32_t c, uint32_t *off);

/* Free the block of class c at off (one past the heap is not kept). */
static inline void jf__pub_blocks_put(jf__pub_blocks *b, uint32_t off, uint32_t c)
{
    if (__builtin_expect(!jf__pub_block_fits(b, off, c), 0))
        return;
    memcpy(b->heap + off, &b->top[c], sizeof b->top[c]);
    b->top[c] = off + 1;
}

/* The heap the lists are in, after it was mapped or copied to a bigger
 * mapping (the offsets and links stay valid: the heap is copied whole). */
static inline void jf__pub_blocks_attach(jf__pub_blocks *b, char *heap, uint64_t heap_size)
{
    b->heap = heap;
    b->heap_size = heap_size;
}

/* Forget every free block (the heap was emptied). */
void jf__pub_blocks_clear(jf__pub_blocks *b);

#endif
