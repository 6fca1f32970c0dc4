/*
 * Making the published table's mapping (see published_map.h). Sparse: the
 * pages of a mapping are allocated on first touch, so the large
 * reservation costs address space, not memory.
 *
 * The first table is a private anonymous mapping in 4 KiB pages, named
 * "[anon:jitframes-regions]" (kernels with CONFIG_ANON_VMA_NAME, 5.17+):
 * the same resident memory as before for the many small processes, and a
 * fresh anonymous page costs the kernel half what a memfd's does (1.7
 * against 3.2 us populated 256 KiB at a time on the reference VM: a
 * process of 16,000 regions paid ~1.4 ms for its first table's 447 memfd
 * pages). Where the kernel cannot name an anonymous mapping it is a memfd
 * named JF_PUB_NAME, which every kernel shows by name, and without memfd
 * an unnamed anonymous mapping that readers find by its signature. A grown
 * table (a process past 16,384 regions, or a heap past its first 8 MiB) is
 * a private anonymous mapping with MADV_HUGEPAGE: shmem never gets
 * transparent huge pages (Debian's shmem_enabled is "never"), and a fresh
 * shared 4 KiB page cost the kernel more than a whole registration
 * (1,000,000 registrations with the perf map: 256 against 134 ns without
 * the table, ~27,000 table pages; in 2 MiB pages ~60 faults;
 * bench_table_fresh). The fork semantics do not depend on the kind: the
 * mapping is MADV_DONTFORK either way.
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

/* An anonymous mapping, named where the kernel can (5.17+,
 * CONFIG_ANON_VMA_NAME): "[anon:jitframes-regions]"; *named says whether it
 * is. The advice covers the whole mapping, so it stays one mapping (one
 * line in /proc/PID/maps, of the table's size, as readers expect). Without
 * THP the advice fails and the pages are 4 KiB either way. */
static void *map_anonymous(size_t size, int huge, int *named, int *err)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    *err = errno;
    *named = 0;
    if (p == MAP_FAILED)
        return p;
    *named = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size, (unsigned long)JF_PUB_NAME) == 0;
    /* 4 KiB pages for the first table even where THP is "always": a
     * process with 10 regions must not pay for 2 MiB pages. */
    (void)madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return p;
}

/* The first table: anonymous if the kernel names it, else a memfd (named
 * by its file), else anonymous and unnamed. */
static void *map_first(size_t size, int *memfd_err, int *anon_err)
{
    int named;
    void *p = map_anonymous(size, 0, &named, anon_err);
    if (p == MAP_FAILED || named)
        return p;
    munmap(p, size);
    p = map_memfd(size, memfd_err);
    return p != MAP_FAILED ? p : map_anonymous(size, 0, &named, anon_err);
}

/* A grown table: anonymous in huge pages (named or not), else a memfd. */
static void *map_grown(size_t size, int *memfd_err, int *anon_err)
{
    int named;
    void *p = map_anonymous(size, 1, &named, anon_err);
    return p != MAP_FAILED ? p : map_memfd(size, memfd_err);
}

void *jf__pub_map_create(size_t size, int grown, char *why, size_t why_cap)
{
    int memfd_err = 0, anon_err = 0;
    void *p = grown ? map_grown(size, &memfd_err, &anon_err) : map_first(size, &memfd_err, &anon_err);
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
