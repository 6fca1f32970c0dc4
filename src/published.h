/*
 * The published table: every live region (and a ring of recently removed
 * ones) kept in a named shared mapping that another process can read
 * (layout: pub_layout.h, docs/formats.md). Always on while the library is
 * initialised; never fails the host: when the table cannot be made or is
 * full, registration goes on and jf_published_table() says why.
 * Not thread-safe: the registry lock serialises every call.
 */
#ifndef JF_PUBLISHED_H
#define JF_PUBLISHED_H

#include "region.h"

#include <stddef.h>
#include <stdint.h>

/* Make the table (first jf_init); a failure is remembered, not returned. */
void jf__pub_start(void);

/* Unmap the table (last jf_shutdown). */
void jf__pub_stop(void);

/* In a child after fork(): the parent's mapping was not inherited
 * (MADV_DONTFORK); forget it without touching it. jf__pub_start then makes
 * the child's own, and the registry adds the inherited regions. */
void jf__pub_forget_after_fork(void);

/* jf_published_table's answer (the registry holds its lock around it). */
int jf__pub_status(const void **addr, size_t *size);

/* Registrations the table could not hold since jf__pub_start (jf_stats'
 * table_dropped): memory ran out and the table could not grow. */
uint64_t jf__pub_dropped(void);

/* Publish regions just inserted into the registry. */
void jf__pub_add(jf__live *const *regions, size_t n);

/* Unpublish regions just removed: they go to the removed ring. */
void jf__pub_remove(jf__live *const *regions, size_t n);

/* Regions moved: each was at old_starts[i], now at regions[i]->start. */
void jf__pub_move(jf__live *const *regions, const uintptr_t *old_starts, size_t n);

#endif
