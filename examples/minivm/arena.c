/* Bump allocator: blocks of at least 64 KiB, freed all at once. */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#define ARENA_BLOCK_MIN (64u * 1024u)

struct mvm_arena_block {
    struct mvm_arena_block *next;
    size_t used;
    size_t cap;
    alignas(max_align_t) unsigned char data[];
};

static struct mvm_arena_block *arena_new_block(size_t need)
{
    size_t cap = need > ARENA_BLOCK_MIN ? need : ARENA_BLOCK_MIN;
    if (cap > SIZE_MAX - sizeof(struct mvm_arena_block))
        return NULL;
    struct mvm_arena_block *b = calloc(1, sizeof *b + cap);
    if (b)
        b->cap = cap;
    return b;
}

void *mvm_arena_alloc(struct mvm_arena *a, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX - align)
        return NULL;
    size = (size + align - 1) & ~(align - 1);
    struct mvm_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        b = arena_new_block(size);
        if (!b)
            return NULL;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    return p;
}

void mvm_arena_free(struct mvm_arena *a)
{
    struct mvm_arena_block *b = a->head;
    while (b) {
        struct mvm_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}
