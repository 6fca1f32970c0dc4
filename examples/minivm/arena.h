/*
 * A bump allocator for the syntax tree: the parser allocates many small nodes
 * that all die together once the program is compiled.
 */
#ifndef MVM_ARENA_H
#define MVM_ARENA_H

#include <stddef.h>

struct mvm_arena_block;

struct mvm_arena {
    struct mvm_arena_block *head;
};

/* clang-format off */
#define MVM_ARENA_INIT {NULL}
/* clang-format on */

/* Zeroed memory aligned for any object, or NULL when out of memory. */
void *mvm_arena_alloc(struct mvm_arena *a, size_t size);

/* Free every block; the arena may be reused afterwards. */
void mvm_arena_free(struct mvm_arena *a);

#endif
