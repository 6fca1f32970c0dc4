/*
 * Free lists of the published table's heap by size class (pub_blocks.h).
 */
#include "pub_blocks.h"

#include <stdlib.h>
#include <string.h>

void jf__pub_blocks_put_slow(jf__pub_blocks *b, uint32_t off, uint32_t c)
{
    jf__pub_free_list *l = &b->cls[c];
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 64;
        uint32_t *v = realloc(l->off, (size_t)cap * sizeof *v);
        if (!v) { /* without memory for the list, the block is just not reused */
            b->lost_bytes += jf__pub_class_size(c);
            return;
        }
        l->off = v;
        l->cap = cap;
    }
    l->off[l->n++] = off;
}

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

void jf__pub_blocks_clear(jf__pub_blocks *b)
{
    for (uint32_t c = 0; c < PUB_CLASSES; c++)
        b->cls[c].n = 0;
    b->lost_bytes = 0;
}

void jf__pub_blocks_free(jf__pub_blocks *b)
{
    for (uint32_t c = 0; c < PUB_CLASSES; c++)
        free(b->cls[c].off);
    memset(b, 0, sizeof *b);
}
