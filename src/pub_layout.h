/*
 * The published table's layout (docs/formats.md, "The published region
 * table"): what a process that called jf_init keeps in a mapping named
 * "jitframes-regions" so that another process (a profiler, a debugger, an
 * eBPF program) can read its live regions from memory. Shared by the writer
 * (src/published.c) and the readers (tools/table_reader.c). Everything is in
 * the writer's byte order; every position is an offset from the start of
 * the mapping, never a pointer, so a reader needs no relocation.
 */
#ifndef JF_PUB_LAYOUT_H
#define JF_PUB_LAYOUT_H

#include <stdint.h>

#define JF_PUB_SIGNATURE "JFREGTBL" /* 8 bytes, no NUL; written last */
#define JF_PUB_NAME "jitframes-regions" /* memfd name, or the anonymous VMA's name */
enum { JF_PUB_VERSION = 1 };

/* pub_header.flags */
enum {
    JF_PUB_INCOMPLETE = 1u, /* some regions could not be published (table full, no memory) */
};

/* pub_entry.flags */
enum {
    JF_PUB_EMPTY = 0u,   /* never used, or cleared by compaction */
    JF_PUB_LIVE = 1u,    /* a live region */
    JF_PUB_REMOVED = 2u, /* a tombstone in the live array; a removed region in the ring */
};

/* The first 128 bytes of the mapping. Fields a writer changes after
 * publication: generation, flags, entries_used, live_count, ring_written,
 * heap_used, dropped (each an aligned store). */
typedef struct pub_header {
    char signature[8];       /* JF_PUB_SIGNATURE once the table is ready */
    uint32_t version;        /* JF_PUB_VERSION */
    uint32_t header_size;    /* sizeof(pub_header): entries start at or after it */
    uint32_t entry_size;     /* sizeof(pub_entry) */
    uint32_t flags;          /* JF_PUB_INCOMPLETE */
    uint64_t generation;     /* odd while the writer changes the table; +2 per change */
    uint32_t pid;            /* the writer's pid (a forked child makes its own table) */
    uint32_t clock_id;       /* the clock of removed_ns: 1 = CLOCK_MONOTONIC */
    uint64_t created_ns;     /* CLOCK_REALTIME when published */
    uint64_t map_size;       /* bytes of the whole mapping */
    uint32_t entries_off;    /* live array: entries_capacity pub_entry, sorted by start */
    uint32_t entries_capacity;
    uint32_t entries_used;   /* slots in use, tombstones included */
    uint32_t live_count;
    uint32_t ring_off;       /* removed ring: ring_capacity pub_entry */
    uint32_t ring_capacity;
    uint64_t ring_written;   /* removals so far; the newest is at (ring_written - 1) % ring_capacity */
    uint64_t heap_off;       /* strings: NUL-terminated, referenced by offset from heap_off */
    uint32_t heap_capacity;
    uint32_t heap_used;
    uint64_t dropped;        /* registrations not published */
    uint8_t reserved[128 - 112];
} pub_header;

/* One region (64 bytes). seq is a per-entry sequence lock: even when the
 * entry is stable, odd while the writer changes it; a reader keeps an entry
 * only if it read the same even seq before and after its fields and strings. */
typedef struct pub_entry {
    uint32_t seq;
    uint32_t flags;      /* JF_PUB_LIVE, JF_PUB_REMOVED or JF_PUB_EMPTY */
    uint64_t start;
    uint64_t size;
    uint32_t name_off;   /* from heap_off; name_len bytes then a NUL */
    uint32_t name_len;
    uint32_t file_off;   /* from heap_off; file_len == 0: no file */
    uint32_t file_len;
    uint32_t line;       /* first line, 0 if none */
    uint32_t lines_len;  /* bytes of the line table (pub_lines), 0 if none */
    uint64_t removed_ns; /* ring only: when the region was removed (clock_id) */
    uint32_t lines_off;  /* from heap_off: the line table */
    uint32_t reserved;   /* 0 in version 1 (CFI: a later version) */
} pub_entry;

/* A line table in the heap: this header, n_lines pub_line, then the file
 * names they point at (NUL-terminated). Offsets are from the table's start. */
typedef struct pub_lines {
    uint32_t n_lines;
} pub_lines;

typedef struct pub_line {
    uint32_t offset;   /* from the region's start */
    uint32_t line;
    uint32_t file_off; /* from the pub_lines header; file_len 0: the region's file */
    uint32_t file_len;
} pub_line;

_Static_assert(sizeof(pub_header) == 128, "pub_header is 128 bytes");
_Static_assert(sizeof(pub_entry) == 64, "pub_entry is 64 bytes");

/* How far back from the last entry starting at or before a pc a lookup
 * walks over tombstones before giving up (the eBPF lookup's bound too). */
enum { JF_PUB_WALK_BACK = 16 };

#endif
