/*
 * Making the published table's mapping (see published_map.h). Sparse: a
 * memfd's pages, like anonymous ones, are allocated on first touch, so the
 * large reservation costs address space, not memory.
 *
 * The first table is a shared memfd in 4 KiB pages: the same resident
 * memory as before for the many small processes. A grown table (a process
 * past 16,384 regions, or a heap past its first 8 MiB) is a private
 * anonymous mapping with MADV_HUGEPAGE: shmem never gets transparent huge
 * pages (Debian's shmem_enabled is "never"), and a fresh shared 4 KiB page
 * cost the kernel more than a whole registration (1,000,000 registrations
 * with the perf map: 256 against 134 ns without the table, ~27,000 table
 * pages; in 2 MiB pages ~60 faults; bench_table_fresh). The fork semantics
 * do not change: the mapping is MADV_DONTFORK either way.
 */
#define _GNU_SOURCE
#include "published_map.h"

#include "pub_layout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif
#ifndef PR_SET_VMA_ANON_NAME
#define PR_SET_VMA_ANON_NAME 0
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif

/* A shared mapping of a fresh memfd named JF_PUB_NAME; MAP_FAILED if the
 * kernel or the limits refuse. The fd is closed: the mapping keeps the file. */
static void *map_memfd(size_t size, int *err)
{
    /* Growing a file past RLIMIT_FSIZE raises SIGXFSZ, which kills a host
     * that does not ignore it: then the anonymous mapping it is. */
    struct rlimit fsize;
    if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY && fsize.rlim_cur < size) {
        *err = EFBIG;
        return MAP_FAILED;
    }
    int fd = memfd_create(JF_PUB_NAME, MFD_CLOEXEC);
    if (fd < 0) {
        *err = errno;
        return MAP_FAILED;
    }
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    *err = errno;
    close(fd);
    return p;
}

/* An anonymous mapping (a grown table; the first one without memfd: old
 * kernel, seccomp), named where the kernel can (5.17+,
 * CONFIG_ANON_VMA_NAME): "[anon:jitframes-regions]". The advice covers the
 * whole mapping, so it stays one mapping (one line in /proc/PID/maps, of
 * the table's size, as readers expect). Without THP the advice fails and
 * the pages are 4 KiB. */
static void *map_anonymous(size_t size, int huge, int *err)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    *err = errno;
    if (p == MAP_FAILED)
        return p;
    (void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size, (unsigned long)JF_PUB_NAME);
#ifdef MADV_HUGEPAGE
    if (huge)
        (void)madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

void *jf__pub_map_create(size_t size, int grown, char *why, size_t why_cap)
{
    int memfd_err = 0, anon_err = 0;
    void *p = MAP_FAILED;
    if (grown)
        p = map_anonymous(size, 1, &anon_err);
    if (p == MAP_FAILED)
        p = map_memfd(size, &memfd_err);
    if (p == MAP_FAILED && !grown)
        p = map_anonymous(size, 0, &anon_err);
    if (p == MAP_FAILED) {
        snprintf(why, why_cap, "no mapping of %zu bytes for the published table: memfd: %s; anonymous: %s",
                 size, strerror(memfd_err), strerror(anon_err));
        return NULL;
    }
    /* A child after fork() makes its own table; the parent's would lie. */
    (void)madvise(p, size, MADV_DONTFORK);
    return p;
}

void jf__pub_map_destroy(void *base, size_t size)
{
    if (base)
        munmap(base, size);
}
