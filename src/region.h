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
 * What a region has beyond its place and name: its source position, line
 * table and unwind rules, and the notes of the sinks that keep a handle per
 * region (gdb: its symfile; unwind: its image). Owned by its jf__live and
 * made with it when the region has any of the first four, else when a sink
 * first sets its note (jf__live_detail_make), so a region with a name alone
 * (what a JIT registers when it has no source position to give) is a
 * 64-byte record. (A trampoline has its template's rules: a detail too.)
 */
typedef struct jf__live_detail {
    const char *file; /* NULL if none */
    jf_line *lines;   /* owned copy, file pointers point into owned storage */
    size_t n_lines;
    struct jf_cfi *cfi; /* owned copy or NULL */
    void *gdb_symfile;  /* the gdb sink's note, NULL until it sets it */
    void *unwind_image; /* the unwind sink's note, likewise */
    uint32_t line;
    uint32_t file_len; /* strlen(file), 0 if none (the published table needs it) */
} jf__live_detail;

/*
 * A registered region, owned by the registry. Immutable once registered,
 * so sinks may read it without copying while the registry lock is held —
 * except `start`, which jf_move changes (under the lock, between the sinks'
 * remove and add, or before their move), a sink's own note of where it
 * keeps the region (jitdump_note here, the gdb and unwind sinks' in the
 * detail: each read and written by that sink alone, under the lock, 0 or
 * NULL until it sets it), and pub_slot, the published table's, likewise.
 * (LuaJIT keeps T->gdbjit_entry the same way.) Kept small: 40 bytes and the
 * name, in a slab slot (src/region_slab.h), every page of which a fresh
 * process pays for.
 */
typedef struct jf__live {
    uintptr_t start;
    size_t size;
    jf__live_detail *detail; /* NULL: a name alone (jf__live_about reads it either way) */
    uintptr_t jitdump_note;  /* the jitdump sink's: its code index << 1 | has an unwind record */
    uint32_t pub_slot;       /* the published table's slot + 1, 0 if unpublished (src/published.c) */
    uint32_t name_len;       /* strlen(name) */
    char name[];             /* sanitised */
} jf__live;

/* A region's detail, or an empty one (no file, lines, rules or notes): for
 * reading, without a test at every field. */
extern const jf__live_detail jf__no_detail;
static inline const jf__live_detail *jf__live_about(const jf__live *r)
{
    return r->detail ? r->detail : &jf__no_detail;
}

/* r's detail, made (empty) if it has none, for a sink to set its note in;
 * NULL when out of memory (last error set). Registry lock held. */
jf__live_detail *jf__live_detail_make(jf__live *r);

/* Indices of jf_stats.sink[]: bit 1u << index. */
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
