/* The published table makes its pages present ahead of use in 256 KiB
 * batches (MADV_POPULATE_WRITE): one system call per batch, never one per
 * registration, whether the kernel takes the call, refuses it (before
 * Linux 5.14: EINVAL) or the table has just grown (the populated part then
 * ends mid-page, and an unaligned start is refused). madvise is replaced
 * here (the library is linked statically) to count the calls and to play
 * an old kernel. Sized by counts. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The table starts at 16,384 slots and grows eightfold: 140,000 regions
 * grow it twice (the second time into 1,048,576 slots). 96-byte slots and
 * 16-byte heap blocks: 140,000 regions fill ~15.7 MiB, ~63 batches of
 * 256 KiB (+ each new mapping's). */
enum { REGIONS = 140000, CALLS_MAX = 400 };

static int old_kernel;     /* refuse MADV_POPULATE_WRITE as Linux < 5.14 does */
static unsigned populates; /* MADV_POPULATE_WRITE calls */
static unsigned refused;   /* ... the kernel refused */

int madvise(void *addr, size_t len, int advice)
{
    if (advice == MADV_POPULATE_WRITE) {
        populates++;
        if (old_kernel) {
            refused++;
            errno = EINVAL;
            return -1;
        }
    }
    long rc = syscall(SYS_madvise, addr, len, advice);
    if (rc != 0 && advice == MADV_POPULATE_WRITE)
        refused++;
    return rc == 0 ? 0 : -1;
}

static void register_many(size_t n)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&c), 0);
    uintptr_t base = (uintptr_t)1 << 40; /* never touched: standby reads no code */
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "jit_fn_%zu", i);
        jf_region r = JF_REGION_INIT;
        r.addr = (const void *)(base + i * 64);
        r.size = 64;
        r.name = name;
        assert_int_equal(jf_register(&r), 0);
    }
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.table_dropped, 0);
    jf_shutdown();
}

/* In a child (a table is kept across jf_shutdown, its pages populated):
 * register REGIONS with the table; the MADV_POPULATE_WRITE calls made and
 * refused, through *calls and *refusals. */
static void count_populates(int as_old_kernel, unsigned *calls, unsigned *refusals)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        old_kernel = as_old_kernel;
        register_many(REGIONS);
        unsigned out[2] = {populates, refused};
        _exit(write(p[1], out, sizeof out) == (ssize_t)sizeof out ? 0 : 1);
    }
    close(p[1]);
    unsigned got[2] = {0, 0};
    ssize_t k = read(p[0], got, sizeof got);
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(k, (ssize_t)sizeof got);
    *calls = got[0];
    *refusals = got[1];
}

static void a_growing_table_is_populated_by_batches_the_kernel_takes(void **state)
{
    (void)state;
    unsigned calls, refusals;
    count_populates(0, &calls, &refusals);
    printf("  %u MADV_POPULATE_WRITE calls for %d regions, %u refused\n", calls, REGIONS, refusals);
    assert_int_equal(refusals, 0); /* the copy after a growth ended mid-page: every call was refused */
    assert_true(calls > 0);
    assert_true(calls <= CALLS_MAX);
}

static void a_kernel_without_populate_costs_one_call_per_batch_not_per_registration(void **state)
{
    (void)state;
    unsigned calls, refusals;
    count_populates(1, &calls, &refusals);
    printf("  %u refused MADV_POPULATE_WRITE calls for %d regions\n", calls, REGIONS);
    assert_true(calls > 0);
    assert_true(calls <= CALLS_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_growing_table_is_populated_by_batches_the_kernel_takes),
        cmocka_unit_test(a_kernel_without_populate_costs_one_call_per_batch_not_per_registration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
