/*
 * Naming one pc from a published region table in another process's memory,
 * the way an eBPF program does at sample time (tools/ebpf/jitframes_sample.py
 * is its twin, step for step): a bounded binary search over the live array,
 * a bounded walk back over tombstones, the entry's sequence lock checked
 * around its fields and name. A handful of small reads, no allocation.
 */
#ifndef JFT_TABLE_LOOKUP_H
#define JFT_TABLE_LOOKUP_H

#include "table_reader.h"

enum { TR_NAME_MAX = 128 }; /* a longer name is cut (as the eBPF program cuts it) */

typedef enum tr_lookup_result {
    TR_FOUND = 0,    /* hit filled */
    TR_NOT_FOUND,    /* no live region holds pc (the ring may: resolve afterwards) */
    TR_BUSY,         /* the writer was changing the table or the entry: try again */
    TR_UNREADABLE,   /* no table, or one that breaks its own rules */
} tr_lookup_result;

typedef struct tr_hit {
    uint64_t start, size;
    uint32_t line;
    char name[TR_NAME_MAX]; /* NUL-terminated, control characters replaced */
    uint64_t generation;    /* the header's, when the lookup began */
    uint64_t ring_written;  /* removals so far then: what to resolve TR_NOT_FOUND against */
} tr_hit;

/* Look pc up in the table mapped at base (map_size bytes) of the target. */
tr_lookup_result tr_lookup_pc(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size, uint64_t pc,
                              tr_hit *hit);

#endif
