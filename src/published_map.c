/*
 * Making the published table's mapping (see published_map.h). Sparse: the
 * pages of a mapping are allocated on first touch, so the large
 * reservation costs address space, not memory.
 *
 * Every table is a private anonymous mapping, named
 * "[anon:jitframes-regions]" where the kernel names anonymous mappings
 * (5.17+, CONFIG_ANON_VMA_NAME), else unnamed: readers then find it by its
 * header (the signature and the mapping's size). A
 * memfd would be named on every kernel, but a fresh shared page costs the
 * kernel twice what an anonymous one does (3.2 against 1.7 us, populated
 * 256 KiB at a time on the reference VM): a process of 16,000 regions paid
 * ~1.4 ms for its first table's 447 memfd pages, more than half of what
 * it spent registering. The first table is in 4 KiB pages (the many small
 * processes keep a few pages resident; src/published.c advises it
 * MADV_HUGEPAGE as a whole once the process passes 16,384 regions or 8 MiB
 * of heap); a grown table asks for transparent huge pages (MADV_HUGEPAGE)
 * from the start: 1,000,000 registrations touch ~60 huge pages instead of
 * ~27,000 small ones (bench_table_fresh). MADV_DONTFORK: a forked child
 * makes its own table.
 */
#define _GNU_SOURCE
#include "published_map.h"

#include "pub_layout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif
#ifndef PR_SET_VMA_ANON_NAME
#define PR_SET_VMA_ANON_NAME 0
#endif

void *jf__pub_map_create(size_t size, int grown, char *why, size_t why_cap)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(why, why_cap, "no mapping of %zu bytes for the published table: %s", size, strerror(errno));
        return NULL;
    }
    /* The name and the advice cover the whole mapping, so it stays one
     * mapping (one line in /proc/PID/maps, of the table's size, as readers
     * expect). Either may fail (an older kernel, no THP): the table works
     * without them. 4 KiB pages for the first table even where THP is
     * "always": a process with 10 regions must not pay for 2 MiB pages. */
    (void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size, (unsigned long)JF_PUB_NAME);
    (void)madvise(p, size, grown ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    (void)madvise(p, size,
                  MADV_DONTFORK); /* a child after fork() makes its own table: the parent's would lie */
    return p;
}

void jf__pub_map_destroy(void *base, size_t size)
{
    if (base)
        munmap(base, size);
}
