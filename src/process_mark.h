/*
 * Telling a child that no atfork handler ran in (a raw fork or clone
 * system call, without libc's fork()) from the process that set the
 * library up: such a child has no copy of the MADV_DONTFORK table and
 * shares the parent's files until the registry rebuilds them.
 */
#ifndef JF_PROCESS_MARK_H
#define JF_PROCESS_MARK_H

/* Mark this process as the one whose state the library holds: at set-up
 * and in the atfork child handler. */
void jf__process_mark(void);

/* 1 in a child made since the last mark without the atfork handlers; 0 in
 * the marked process, or before any mark. A load and a compare. */
int jf__process_unmarked(void);

#endif
