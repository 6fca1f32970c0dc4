/*
 * The published table's layout (docs/formats.md, "The published region
 * table"): what a process that called jf_init keeps in a mapping named
 * "jitframes-regions" so that another process (a profiler, a debugger, an
 * eBPF program) can read its live regions from memory. Shared by the writer
 * (src/published.c) and the readers (tools/readers/table_reader.c). Everything is in
 * the writer's byte order; every position is an offset from the start of
 * the mapping, never a pointer, so a reader needs no relocation.
 */
#ifndef JF_PUB_LAYOUT_H
#define JF_PUB_LAYOUT_H

#include <stdint.h>

#define JF_PUB_SIGNATURE "JFREGTBL"     /* 8 bytes, no NUL; written last */
#define JF_PUB_NAME "jitframes-regions" /* the anonymous VMA's name (an earlier build's memfd's) */
enum { JF_PUB_VERSION = 2 };

/* jf__pub_header.flags */
enum {
    JF_PUB_INCOMPLETE =
        1u, /* some regions could not be published (memory ran out: the table could not grow) */
};

/* jf__pub_entry.flags */
enum {
    JF_PUB_EMPTY = 0u,   /* a free slot of the live array (never used, or freed) */
    JF_PUB_LIVE = 1u,    /* a live region */
    JF_PUB_REMOVED = 2u, /* a removed region in the ring */
};

/* The first 128 bytes of the mapping. Fields a writer changes after
 * publication: generation, flags, entries_used, live_count, ring_written,
 * heap_used, dropped (each an aligned store). */
typedef struct jf__pub_header {
    char signature[8];    /* JF_PUB_SIGNATURE once the table is ready */
    uint32_t version;     /* JF_PUB_VERSION */
    uint32_t header_size; /* sizeof(jf__pub_header): entries start at or after it */
    uint32_t entry_size;  /* sizeof(jf__pub_entry) */
    uint32_t flags;       /* JF_PUB_INCOMPLETE */
    uint64_t generation;  /* odd while the writer changes the table; +2 per change */
    uint32_t pid;         /* the writer's pid (a forked child makes its own table) */
    uint32_t clock_id;    /* the clock of published_ns, removed_ns: 1 = CLOCK_MONOTONIC */
    uint64_t created_ns;  /* CLOCK_REALTIME when published */
    uint64_t map_size;    /* bytes of the whole mapping */
    uint32_t entries_off; /* live array: entries_capacity jf__pub_entry, in no order */
    uint32_t entries_capacity;
    uint32_t entries_used; /* slots ever used (free ones included): readers read [0, entries_used) */
    uint32_t live_count;
    uint32_t ring_off; /* removed ring: ring_capacity jf__pub_entry */
    uint32_t ring_capacity;
    uint64_t ring_written; /* removals so far; the newest is at (ring_written - 1) % ring_capacity */
    uint64_t heap_off;     /* one block per entry (its name, file, line table, unwind description;
                              * a shared description: one block many entries name), referenced by
                              * offset from heap_off; a removed entry's stays until its ring slot
                              * is reused */
    uint32_t heap_capacity;
    uint32_t heap_used; /* end of the blocks made so far (free ones included): read [0, heap_used) */
    uint64_t dropped;   /* registrations not published (jf_stats: table_dropped) */
    uint8_t reserved[128 - 112];
} jf__pub_header;

/* One region (96 bytes). seq is a per-entry sequence lock: even when the
 * entry is stable, odd while the writer changes it; a reader keeps an entry
 * only if it read the same even seq before and after its fields and strings.
 * A region keeps its slot from registration to removal (a move rewrites it
 * in place), so the live array is in no order: readers sort what they read. */
typedef struct jf__pub_entry {
    uint32_t seq;
    uint32_t flags; /* JF_PUB_LIVE, JF_PUB_REMOVED or JF_PUB_EMPTY */
    uint64_t start;
    uint64_t size;
    uint32_t name_off; /* from heap_off; name_len bytes then a NUL */
    uint32_t name_len;
    uint32_t file_off; /* from heap_off; file_len == 0: no file */
    uint32_t file_len;
    uint32_t line;          /* first line, 0 if none */
    uint32_t lines_len;     /* bytes of the line table (jf__pub_lines), 0 if none */
    uint32_t lines_off;     /* from heap_off: the line table */
    uint32_t cfi_len;       /* bytes of the unwind description (jf__pub_cfi), 0 if none */
    uint32_t cfi_off;       /* from heap_off: the unwind description */
    uint32_t block_class;   /* the writer's own, readers ignore it: its heap block's size class */
    uint64_t published_gen; /* the header's (even) generation once this entry was published */
    uint64_t published_ns;  /* CLOCK_MONOTONIC_COARSE then: a lower bound of the precise clock,
                             * never before an earlier removal's removed_ns */
    uint64_t removed_gen;   /* ring only: the generation once it was removed; 0 in the live array */
    uint64_t removed_ns;    /* ring only: when it was removed (clock_id): not before the call, at
                             * most about a microsecond after it (src/tick_clock.h) */
} jf__pub_entry;

/* A line table in the heap: this header, n_lines jf__pub_line, then the file
 * names they point at (NUL-terminated). Offsets are from the table's start. */
typedef struct jf__pub_lines {
    uint32_t n_lines;
} jf__pub_lines;

typedef struct jf__pub_line {
    uint32_t offset; /* from the region's start */
    uint32_t line;
    uint32_t file_off; /* from the jf__pub_lines header; file_len 0: the region's file */
    uint32_t file_len;
} jf__pub_line;

/* An unwind description in the heap (what jf_cfi holds, not yet laid out
 * for a place): this header, the CIE's initial instructions
 * (cie_insns_len bytes), then n_fdes times a jf__pub_fde followed by its
 * fde insns_len bytes of DWARF CFA instructions. Packed, no padding:
 * readers copy fields out. The CIE is version 1, augmentation "zR". */
typedef struct jf__pub_cfi {
    uint32_t code_align;
    int32_t data_align;
    uint32_t ra_reg;
    uint32_t cie_insns_len;
    uint32_t n_fdes;
} jf__pub_cfi;

typedef struct jf__pub_fde {
    uint32_t start, end; /* region offsets */
    uint32_t insns_len;
} jf__pub_fde;

_Static_assert(sizeof(jf__pub_header) == 128, "jf__pub_header is 128 bytes");
_Static_assert(sizeof(jf__pub_entry) == 96, "jf__pub_entry is 96 bytes");

#endif
