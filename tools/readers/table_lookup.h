/*
 * Naming a sampled pc from a published region table, the way an eBPF
 * profiler can (tools/ebpf/jitframes_sample.py is its twin, step for step):
 * at sample time, one bounded read of the table's header gives its
 * generation, recorded with the pc (no loop, nothing the verifier must
 * bound); afterwards, from the table read out of the process's memory (its
 * live entries and its ring of removed ones), the pc is named by the region
 * that was live at that generation. Entries are in no order (registration
 * is O(1) in any address order), so there is nothing to binary-search in
 * the kernel.
 */
#ifndef JFT_TABLE_LOOKUP_H
#define JFT_TABLE_LOOKUP_H

#include "table_reader.h"

typedef enum tr_lookup_result {
    TR_FOUND = 0,  /* *generation filled */
    TR_UNREADABLE, /* no table, or one that breaks its own rules */
} tr_lookup_result;

/* At sample time: the generation of the table mapped at base (map_size
 * bytes) of the target. Odd: a change was under way. */
tr_lookup_result tr_sample_generation(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size,
                                      uint64_t *generation);

/* Afterwards: the region of s that holds pc and was live at `generation`
 * (published at or before it, removed after it); for an odd generation
 * (sampled during a change), live just before the change, else just after.
 * NULL if none (a region removed so long before the read that the ring no
 * longer holds it is not named: never a wrong name). */
const tr_region *tr_resolve(const tr_snapshot *s, uint64_t pc, uint64_t generation);

#endif
