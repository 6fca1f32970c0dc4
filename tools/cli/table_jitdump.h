/*
 * A jitdump of a process's published regions, with their code bytes read
 * from its memory: the process writes nothing. Each region gets, in order, a
 * CODE_UNWINDING_INFO (when the table holds its unwind data), a DEBUG_INFO
 * (with a line table, or a source file and first line) and a CODE_LOAD
 * whose code is followed by an 8-byte nonce, as src/sink_jitdump.c writes them (so
 * that identical code in two regions never shares a build-id in perf).
 * Used by `jitframes perfmap PID --jitdump FILE` (one snapshot) and by its
 * --follow mode, which `jitframes record` runs (table_follow.c).
 */
#ifndef JFT_TABLE_JITDUMP_H
#define JFT_TABLE_JITDUMP_H

#include "table_reader.h"

#include <stdio.h>

/* A region to write: code NULL when it could not be read (the CODE_LOAD then
 * holds zeros: perf names samples in it, perf annotate shows no real
 * instructions); ts its CODE_LOAD's timestamp (CLOCK_MONOTONIC); unwind_ok 0
 * to leave its unwind data out. */
typedef struct tj_entry {
    const tr_region *r;
    const uint8_t *code;
    uint64_t ts;
    int unwind_ok;
} tj_entry;

/* Write the header and the entries, in order, for process pid (the pid
 * perf knows it by). Line tables and unwind data take TJ_TOTAL_MAX bytes
 * at most in all, and each fits in a record `jitframes check` holds
 * (JD_MAX_HELD_RECORD_SIZE): past either, a region keeps its first line and
 * goes without unwind data (many regions of a table may share one large
 * line table: the output must not grow with their count times its size).
 * Returns the number written, or -1 with a reason. */
long tj_write_entries(FILE *out, pid_t pid, const tj_entry *v, size_t n, char *err, size_t err_cap);

/* Write the live regions of s; code is read from pid (at most 16 MiB per
 * region, 256 MiB in all). Returns the number of regions written, or -1
 * with a reason; *skipped counts regions whose code could not be read. */
long tj_write_jitdump(FILE *out, pid_t pid, const tr_snapshot *s, size_t *skipped, char *err, size_t err_cap);

/* Bounds on the code kept from a target. */
#define TJ_CODE_MAX ((uint64_t)16 << 20)   /* per region */
#define TJ_TOTAL_MAX ((uint64_t)256 << 20) /* in all */

/* Whether r's unwind data may go with it: the mapping perf makes for it
 * (code, nonce, unwind data) must not reach next_start, where another
 * region's code begins (0: none). */
int tj_unwind_fits(const tr_region *r, uint64_t next_start);

/* Where the mapping perf makes for r with its unwind data ends. */
uint64_t tj_unwind_end(const tr_region *r);

#endif
