/*
 * Free blocks of the published table's heap by size class (pub_blocks.h).
 */
#include "pub_blocks.h"

#include <string.h>

/* Free [off, off + len) (a multiple of PUB_SMALL_STEP) as the largest
 * blocks that fit, in order. */
static void put_span(jf__pub_blocks *b, uint32_t off, uint64_t len)
{
    while (len >= PUB_SMALL_STEP) {
        uint32_t c = jf__pub_class(len);
        if (jf__pub_class_size(c) > len)
            c--; /* the class of len rounds up: the one below fits */
        uint64_t size = jf__pub_class_size(c);
        jf__pub_blocks_put(b, off, c);
        off += (uint32_t)size;
        len -= size;
    }
}

int jf__pub_blocks_take_larger(jf__pub_blocks *b, uint32_t c, uint32_t *off)
{
    for (uint32_t k = c + 1; k < PUB_CLASSES; k++)
        if (jf__pub_blocks_take(b, k, off)) {
            uint64_t used = jf__pub_class_size(c);
            put_span(b, *off + (uint32_t)used, jf__pub_class_size(k) - used);
            return 1;
        }
    return 0;
}

/* A set's capacity: a number per 16 bytes of the heap. */
static uint32_t set_capacity(const jf__pub_blocks *b)
{
    return (uint32_t)(b->heap_size / PUB_SMALL_STEP);
}

void jf__pub_blocks_make_set(jf__pub_blocks *b, uint32_t c)
{
    if (jf__lowest_set_init(&b->free[c], set_capacity(b)) != 0)
        jf__lowest_set_destroy(&b->free[c]); /* no memory: its blocks are not reused, the heap grows sooner */
}

void jf__pub_blocks_attach(jf__pub_blocks *b, char *heap, uint64_t heap_size)
{
    b->heap = heap;
    if (heap_size == b->heap_size)
        return;
    b->heap_size = heap_size;
    for (uint32_t c = 0; c < PUB_CLASSES; c++)
        if (b->free[c].levels)
            (void)jf__lowest_set_grow(&b->free[c], set_capacity(b)); /* else blocks past the old heap */
                                                                     /* are not reused */
}

void jf__pub_blocks_clear(jf__pub_blocks *b)
{
    for (uint32_t c = 0; c < PUB_CLASSES; c++)
        jf__lowest_set_destroy(&b->free[c]);
}
