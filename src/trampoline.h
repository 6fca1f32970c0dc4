/*
 * Internal view of the trampoline arenas, for tests and benchmarks.
 */
#ifndef JF_TRAMPOLINE_H
#define JF_TRAMPOLINE_H

#include "jitframes.h"

/* How trampolines created now would be laid out. */
typedef struct jf__trampoline_layout {
    const char *arch;   /* template architecture, NULL if none */
    size_t code_size;   /* bytes of one copy of the template */
    size_t stride;      /* bytes from one copy to the next */
    unsigned variants;  /* code blocks sharing one data block */
    size_t block;       /* bytes per block */
    size_t per_group;   /* trampolines per arena group */
    size_t group_bytes; /* bytes mapped per group (code + data) */
} jf__trampoline_layout;

/* Layout for trampolines created with `align` (0: default) while the sinks
 * in `sinks` are enabled. Returns 0 or a JF_E* code with the message set. */
int jf__trampoline_layout_for(unsigned sinks, size_t align, jf__trampoline_layout *out);

/* The data slot of a live trampoline (holding its target), NULL if `entry`
 * is not one. */
void *jf__trampoline_slot_of(jf_fn entry);

#endif
