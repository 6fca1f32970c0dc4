/*
 * A jitdump of a process's published regions, with their code bytes read
 * from its memory (`jitframes perfmap PID --jitdump FILE`): the process
 * writes nothing. Each region gets a CODE_LOAD and, with a line table (or a
 * source file and first line), a DEBUG_INFO; no unwinding info (version 1
 * of the table has no CFI).
 */
#ifndef JFT_TABLE_JITDUMP_H
#define JFT_TABLE_JITDUMP_H

#include "table_reader.h"

#include <stdio.h>

/* Write the live regions of s; code is read from pid (at most 16 MiB per
 * region, 256 MiB in all). Returns the number of regions written, or -1
 * with a reason; *skipped counts regions whose code could not be read. */
long tj_write_jitdump(FILE *out, pid_t pid, const tr_snapshot *s, size_t *skipped, char *err, size_t err_cap);

#endif
