/*
 * The process mark (process_mark.h): a byte in a private page the kernel
 * wipes in every child (MADV_WIPEONFORK, Linux 4.14+), however the child
 * was made, so the check on every call is a load, not a getpid() system
 * call (glibc caches no pid since 2.25). Where the kernel refuses the
 * advice, the pid it was marked in is compared instead.
 */
#define _GNU_SOURCE
#include "process_mark.h"

#include "sys.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

uint8_t *jf__process_mark_page; /* 1 in the marked process, 0 in any child */
static pid_t marked_pid;        /* without WIPEONFORK */
static int marked;

static uint8_t *make_mark_page(void)
{
    size_t len = jf__page_size();
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (madvise(p, len, MADV_WIPEONFORK) != 0) {
        munmap(p, len);
        return NULL;
    }
    return p;
}

void jf__process_mark(void)
{
    uint8_t *page = __atomic_load_n(&jf__process_mark_page, __ATOMIC_ACQUIRE);
    if (!page && !__atomic_load_n(&marked, __ATOMIC_RELAXED)) {
        page = make_mark_page();
        if (page)
            __atomic_store_n(&jf__process_mark_page, page, __ATOMIC_RELEASE);
    }
    if (page)
        __atomic_store_n(page, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&marked_pid, getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&marked, 1, __ATOMIC_RELEASE);
}

int jf__process_unmarked_by_pid(void)
{
    return __atomic_load_n(&marked, __ATOMIC_ACQUIRE) &&
           getpid() != __atomic_load_n(&marked_pid, __ATOMIC_RELAXED);
}
