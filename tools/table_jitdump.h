/*
 * A jitdump of a process's published regions, with their code bytes read
 * from its memory (`jitframes perfmap PID --jitdump FILE`): the process
 * writes nothing. Version 1 of the table gives names and first lines, so
 * each region gets a CODE_LOAD and, with a source file, a one-entry
 * DEBUG_INFO; no unwinding info (the table has no CFI yet).
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
