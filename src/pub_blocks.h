/*
 * The published table's heap bookkeeping (src/published.c): every entry's
 * strings, line table and unwind description live in one block of the
 * heap, sized to a class (16-byte steps up to 256 bytes, then four steps per
 * power of two: at most 25% slack). A freed block goes to its class's list
 * and the next block of that class reuses it, so a change costs O(1) and
 * nothing ever moves: no compaction, and readers never see a string move
 * under an entry. The lists are private (malloc), the blocks are offsets
 * into the shared heap. Not thread-safe: the registry lock serialises it.
 */
#ifndef JF_PUB_BLOCKS_H
#define JF_PUB_BLOCKS_H

#include <stdint.h>

enum {
    PUB_SMALL_STEP = 16, /* small classes: 16, 32, ..., 256 bytes */
    PUB_SMALL_MAX = 256,
    PUB_SMALL_CLASSES = PUB_SMALL_MAX / PUB_SMALL_STEP,
    PUB_CLASSES = PUB_SMALL_CLASSES + 4 * (32 - 8), /* up to 2^32 bytes */
};

typedef struct jf__pub_free_list {
    uint32_t *off; /* block offsets, the last freed on top */
    uint32_t n, cap;
} jf__pub_free_list;

typedef struct jf__pub_blocks {
    jf__pub_free_list cls[PUB_CLASSES];
    uint64_t lost_bytes; /* freed blocks no list could take (no memory): never reused */
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

/* A free block of class c, reused last freed first: 1 with *off, or 0. */
static inline int jf__pub_blocks_take(jf__pub_blocks *b, uint32_t c, uint32_t *off)
{
    jf__pub_free_list *l = &b->cls[c];
    if (!l->n)
        return 0;
    *off = l->off[--l->n];
    return 1;
}

/* jf__pub_blocks_put when its list is full: the list grows. */
void jf__pub_blocks_put_slow(jf__pub_blocks *b, uint32_t off, uint32_t c);

/* A free block of a larger class than c, split: its first
 * jf__pub_class_size(c) bytes are *off, the rest goes back to the lists.
 * 1, or 0 when there is none. O(classes): for a heap that cannot grow. */
int jf__pub_blocks_take_larger(jf__pub_blocks *b, uint32_t c, uint32_t *off);

/* Free the block of class c at off. */
static inline void jf__pub_blocks_put(jf__pub_blocks *b, uint32_t off, uint32_t c)
{
    jf__pub_free_list *l = &b->cls[c];
    if (__builtin_expect(l->n == l->cap, 0))
        return jf__pub_blocks_put_slow(b, off, c);
    l->off[l->n++] = off;
}

/* Forget every free block (the heap was emptied), keeping the lists' memory. */
void jf__pub_blocks_clear(jf__pub_blocks *b);

/* Release the lists' memory. */
void jf__pub_blocks_free(jf__pub_blocks *b);

#endif
