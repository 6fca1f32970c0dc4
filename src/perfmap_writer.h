/*
 * The perf map's file: lines stored through a shared mapping into space
 * reserved with O_APPEND writes of newlines, so a line costs no system call
 * and never lands on another writer's bytes (see perfmap_writer.c).
 */
#ifndef JF_PERFMAP_WRITER_H
#define JF_PERFMAP_WRITER_H

#include <stddef.h>

/* Filler byte of reserved space: perf, bcc and bpftrace skip blank lines. */
#define JF_PMW_FILLER '\n'
/* Byte a line's span holds until the line is published: a line starting
 * with two of them is skipped by bcc and bpftrace and gives perf a symbol of
 * size 0 at address 0, which no sample can hit. */
#define JF_PMW_HIDDEN '#'

/* Open dir/name safely (see safe_file.h) and resume our own reserved space
 * if this process wrote the file before and nobody cut it since. Returns 0
 * or a JF_E* code with the message set. */
int jf__pmw_open(const char *dir, const char *name);

/* Is the file open? */
int jf__pmw_is_open(void);

/* Make room for `lines` lines of `bytes` bytes in all (newlines included),
 * growing the file if needed. Returns 0, or a JF_E* code with the message
 * set (JF_EFBIG: RLIMIT_FSIZE; JF_ENOSPC...): then nothing was written. */
int jf__pmw_reserve(size_t bytes, size_t lines);

/* Store one line (text[n - 1] == '\n') in room made by jf__pmw_reserve:
 * it becomes visible to readers whole, with one aligned 8-byte store. */
void jf__pmw_put_line(const char *text, size_t n);

/* Unmap and close; the file keeps its reserved tail (blank lines) and the
 * space is remembered for a later jf__pmw_open in this process. */
void jf__pmw_close(void);

/* In a child after fork(): drop the parent's mapping and descriptor without
 * writing to them, and forget the parent's file. Allocates nothing. */
void jf__pmw_forget(void);

#endif
