/*
 * Telling a child that no atfork handler ran in (a raw fork or clone
 * system call, without libc's fork()) from the process that set the
 * library up: such a child has no copy of the MADV_DONTFORK table and
 * shares the parent's files until the registry rebuilds them.
 */
#ifndef JF_PROCESS_MARK_H
#define JF_PROCESS_MARK_H

#include <stddef.h>
#include <stdint.h>

/* Mark this process as the one whose state the library holds: at set-up
 * and in the atfork child handler. */
void jf__process_mark(void);

/* The mark's page (process_mark.c); NULL before the first mark, or where
 * the kernel refuses MADV_WIPEONFORK. */
extern uint8_t *jf__process_mark_page;

/* jf__process_unmarked without the page: compares pids. */
int jf__process_unmarked_by_pid(void);

/* 1 in a child made since the last mark without the atfork handlers; 0 in
 * the marked process, or before any mark. Inline: two loads and a compare
 * on every entry point (a call cost 17 instructions per registration). */
static inline int jf__process_unmarked(void)
{
    uint8_t *page = __atomic_load_n(&jf__process_mark_page, __ATOMIC_ACQUIRE);
    if (__builtin_expect(page != NULL, 1))
        return __atomic_load_n(page, __ATOMIC_RELAXED) == 0;
    return jf__process_unmarked_by_pid();
}

#endif
