/*
 * Reading another process's published region table (src/pub_layout.h,
 * docs/formats.md) from its memory. The target is untrusted: every size,
 * offset, count and string it holds is checked against bounds the caller
 * chooses, every loop is bounded, and nothing is ever written into the
 * target. One read of a table has one budget: the bytes it copies and
 * decodes (max_bytes, 256 MiB by default) and a deadline checked inside
 * the read; a table over either is refused with a one-line reason. What
 * many slots share (the same heap offset and length) is decoded once
 * (table_shared.h), so the cost follows the distinct bytes. Memory is read
 * through a callback so that the fuzzer can feed tables from a buffer.
 */
#ifndef JFT_TABLE_READER_H
#define JFT_TABLE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copy len bytes at the target's addr into buf; 0, or -1 if unreadable. */
typedef int (*tr_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

typedef struct tr_limits {
    uint32_t max_entries;  /* live slots read at most (more: JFT_TR_TOO_BIG) */
    uint32_t max_ring;     /* removed-ring slots read at most */
    uint32_t max_heap;     /* string bytes read at most */
    uint32_t max_string;   /* a longer name or file is cut */
    unsigned max_attempts; /* reads of the whole table before settling for slot-by-slot proofs */
    double seconds;        /* deadline for everything, checked inside the read */
    uint64_t max_bytes;    /* bytes copied and decoded in one read (0: TR_DEFAULT_BYTES) */
} tr_limits;

#define TR_DEFAULT_BYTES ((uint64_t)256 << 20)
/* clang-format off */
#define TR_LIMITS_DEFAULT {1u << 20, 1u << 16, 256u << 20, 4096, 64, 10.0, TR_DEFAULT_BYTES}
/* clang-format on */

typedef struct tr_line {
    uint32_t offset; /* from the region's start */
    uint32_t line;
    char *file; /* NULL: the region's file */
} tr_line;

/* name, file, lines (with its files) and unwind are shared blocks
 * (table_shared.h: many regions may hold the same one); free a region with
 * tr_region_free, never field by field (ts_aux of lines: the bytes it and
 * the files first decoded with it take). Names and files are safe text
 * (text_safe.h): each unsafe character and each leading space reads '?'. */
typedef struct tr_region {
    uint64_t start, size;
    char *name; /* never empty */
    char *file; /* NULL if none */
    uint32_t line;
    uint64_t removed_ns; /* removed regions: when (CLOCK_MONOTONIC) */
    tr_line *lines;      /* the line table, NULL if none (or unsound: left out) */
    size_t n_lines;
    uint64_t published_ns;               /* CLOCK_MONOTONIC, a lower bound of when it was published */
    uint64_t published_gen, removed_gen; /* live for table generations [published_gen, removed_gen);
                                          * removed_gen 0 while live */
    /* The unwinding_data of a jitdump CODE_UNWINDING_INFO for this region,
     * as src/sink_jitdump.c writes it: .eh_frame then .eh_frame_hdr
     * (JF_EH_LAYOUT_PERF_JITDUMP) for a load of `size` bytes; unwind_hdr_len
     * is the .eh_frame_hdr part. NULL/0: no CFI, or what the table held was
     * unsound. */
    uint8_t *unwind;
    uint32_t unwind_len;
    uint32_t unwind_hdr_len;
} tr_region;

typedef struct tr_snapshot {
    tr_region *live; /* sorted by start, no duplicates */
    size_t n_live;
    tr_region *removed; /* oldest first */
    size_t n_removed;
    uint32_t pid;   /* the writer's, as the table says */
    uint32_t flags; /* JF_PUB_INCOMPLETE */
    uint64_t dropped;
    uint64_t generation;
    int consistent;           /* 1: no change during the read that was kept */
    unsigned attempts;        /* reads of the whole table made */
    size_t torn;              /* slots that changed during the whole read */
    size_t reread;            /* of those, proven by reading each alone (slot, its strings, slot again) */
    size_t unproven;          /* live slots left out: never seen the same twice */
    size_t unproven_removed;  /* removed-ring slots left out likewise */
    uint32_t *unproven_slots; /* the first n_unproven_slots of the live ones (at most TR_UNPROVEN_LIST) */
    size_t n_unproven_slots;
} tr_snapshot;

#define TR_UNPROVEN_LIST 1024

/* Read the table whose mapping starts at base and is map_size bytes long.
 * 0 with *out filled (free with tr_snapshot_free), or -1 with a reason in
 * err. The whole table is read again while it changes under the read, a
 * few times (max_attempts, and a tenth of the deadline at most); when no
 * read saw it unchanged, the last read is kept with out->consistent 0: each
 * slot that changed during it is read again alone until it is seen stable
 * (its strings read between two identical even copies of the slot), and
 * those never seen stable are counted in unproven. Every region listed is
 * one the target held at some moment of the read. */
int tr_read_table(tr_read_fn read, void *ctx, uint64_t base, uint64_t map_size, const tr_limits *limits,
                  tr_snapshot *out, char *err, size_t err_cap);

void tr_snapshot_free(tr_snapshot *s);

/* Drop r's references (its fields are then cleared). */
void tr_region_free(tr_region *r);

/* Where process pid's table is mapped, from /proc/PID/maps (bounded): the
 * mapping named "jitframes-regions" (a named anonymous mapping, or an
 * earlier build's memfd), else an unnamed anonymous one that starts with the
 * table's signature and a header giving the mapping's size (on a
 * kernel that cannot name anonymous mappings: at most 4096 such
 * mappings are probed, reading 128 bytes of each, which needs ptrace
 * rights). 0, or -1 with a reason. */
int tr_find_table(pid_t pid, uint64_t *base, uint64_t *size, char *err, size_t err_cap);

/* tr_find_table then tr_read_table on process pid, finding the table
 * again when a read fails because it moved (the writer grows it into a
 * new mapping when full), at most 4 times. 0, or -1 with a reason. */
int tr_read_pid(pid_t pid, const tr_limits *limits, tr_snapshot *out, char *err, size_t err_cap);

/* A tr_read_fn for a live process (ctx: a pid_t *): process_vm_readv, or
 * /proc/PID/mem where that is refused. Both need ptrace rights. */
int tr_read_process(void *ctx, uint64_t addr, void *buf, size_t len);

/* How many of s's live regions start at or before pc (they are sorted). */
size_t tr_live_at_or_before(const tr_snapshot *s, uint64_t pc);

/* The region of `s` (live first, then the newest removed one) that holds pc
 * (the newest removal first); NULL if none. */
const tr_region *tr_lookup(const tr_snapshot *s, uint64_t pc);

#endif
