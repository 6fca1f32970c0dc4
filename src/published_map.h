/*
 * The mapping that holds the published table, made the way OpenTelemetry's
 * process-context specification lets its own be made (OTEP #4719): an
 * anonymous mapping named JF_PUB_NAME with PR_SET_VMA_ANON_NAME, so
 * /proc/PID/maps shows it (where the kernel cannot name it, unnamed:
 * readers find it by its header; never a memfd, whose pages cost twice as
 * much); a grown table in transparent huge pages where the kernel has them
 * (MADV_HUGEPAGE); MADV_DONTFORK, so a forked child does not inherit a
 * table that no longer describes it.
 */
#ifndef JF_PUBLISHED_MAP_H
#define JF_PUBLISHED_MAP_H

#include <stddef.h>

/* A zeroed, readable and writable mapping of `size` bytes whose pages cost
 * memory only once touched; NULL with the reason in `why` (and the last
 * error set). `grown`: the table has grown (the process proved big), so
 * huge pages (2 MiB touched at once) are worth it; else 4 KiB pages. */
void *jf__pub_map_create(size_t size, int grown, char *why, size_t why_cap);

void jf__pub_map_destroy(void *base, size_t size);

#endif
