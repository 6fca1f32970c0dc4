/*
 * The registry's record of a region (jf__live), and turning a caller's
 * jf_region into one.
 */
#ifndef JF_REGION_H
#define JF_REGION_H

#include "jitframes.h"

#include <stddef.h>
#include <stdint.h>

/*
 * A registered region, owned by the registry. Immutable once registered,
 * so sinks may read it without copying while the registry lock is held —
 * except `start`, which jf_move changes (under the lock, between the sinks'
 * remove and add, or before their move), and sink_handle[i]: sink i's own note of where it keeps the region
 * (the gdb sink's symfile, the unwind sink's image), read and written by
 * that sink alone, under the lock, NULL until it sets it, and pub_slot,
 * the published table's, likewise. (LuaJIT keeps
 * T->gdbjit_entry the same way.)
 */
typedef struct jf__live {
    uintptr_t start;
    size_t size;
    uint32_t line;
    uint32_t file_len; /* strlen(file), 0 if none (the published table needs it) */
    const char *file;  /* NULL if none */
    jf_line *lines;    /* owned copy, file pointers point into owned storage */
    size_t n_lines;
    struct jf_cfi *cfi;               /* owned copy or NULL */
    void *sink_handle[JF_SINK_COUNT]; /* indexed like jf_stats.sink[] */
    uint32_t pub_slot;                /* the published table's slot + 1, 0 if unpublished (src/published.c) */
    uint32_t name_len;                /* strlen(name) */
    char name[];                      /* sanitised */
} jf__live;

/* Indices of sink_handle[] and jf_stats.sink[]: bit 1u << index. */
enum { JF_SINK_INDEX_PERFMAP, JF_SINK_INDEX_JITDUMP, JF_SINK_INDEX_GDB, JF_SINK_INDEX_UNWIND };

/* The i-th region of a caller's array, honouring the caller's struct_size
 * (a caller built against an older header has a smaller stride). Copies the
 * known fields into *out. Returns 0 or JF_EINVAL with the message set. */
int jf__region_read(const jf_region *regions, size_t i, jf_region *out);

/* Check a region's fields (not its address's availability). `index` is used
 * in the message. Returns 0 or JF_EINVAL with the message set. */
int jf__region_validate(const jf_region *r, size_t index);

/* Make an owned, sanitised copy of a validated region; NULL on failure
 * (last error set). */
jf__live *jf__live_new(const jf_region *r);

/* Free a jf__live and everything it owns. NULL is fine. */
void jf__live_free(jf__live *r);

#endif
