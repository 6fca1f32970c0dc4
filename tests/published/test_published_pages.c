/*
 * The published table's pages: a small process keeps its table in a few
 * 4 KiB pages (the table is in every process), a process that grew its
 * table gets it in transparent huge pages (a fresh 4 KiB page cost the
 * kernel more than a whole registration), and the grown table is still
 * one mapping that readers find and read whole, that a forked child does
 * not inherit. Each case runs in a child of its own (a table outlives
 * jf_shutdown). Sized by counts.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"
#include "table_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SMALL = 10, GROWN = 60000, BIG = 140000, REGION = 64 };

/* What /proc/self/smaps says of the mapping that starts at `start`. */
typedef struct pages {
    int found;
    unsigned long size_kb, rss_kb, anon_huge_kb;
    int huge_advised; /* VmFlags "hg": MADV_HUGEPAGE */
} pages;

static pages pages_of(const void *start)
{
    pages p = {0};
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2) { /* a mapping's first line ("Rss:" is no number) */
            in = lo == (uintptr_t)start;
            p.found |= in;
            continue;
        }
        if (!in)
            continue;
        sscanf(line, "Size: %lu kB", &p.size_kb);
        sscanf(line, "Rss: %lu kB", &p.rss_kb);
        sscanf(line, "AnonHugePages: %lu kB", &p.anon_huge_kb);
        if (strncmp(line, "VmFlags:", 8) == 0)
            p.huge_advised = strstr(line, " hg") != NULL;
    }
    if (f)
        fclose(f);
    return p;
}

/* Whether the kernel gives huge pages to MADV_HUGEPAGE mappings:
 * transparent_hugepage/enabled is [always] or [madvise]. */
static int thp_for_advised(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char buf[128] = "";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
    }
    return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

static int thp_in_kernel(void)
{
    return access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0;
}

static void init_standby(void)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    if (jf_init(&c) != 0)
        _exit(90);
}

/* Register regions [from, to) at never-touched addresses, "r_<i>". */
static void register_range(size_t from, size_t to)
{
    char name[32];
    for (size_t i = from; i < to; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = (const void *)(((uintptr_t)1 << 40) + i * REGION);
        r.size = REGION;
        snprintf(name, sizeof name, "r_%zu", i);
        r.name = name;
        if (jf_register(&r) != 0)
            _exit(91);
    }
}

static const void *table(size_t *size)
{
    const void *addr = NULL;
    if (jf_published_table(&addr, size) != 0)
        _exit(92);
    return addr;
}

/* Run fn in a child; its exit status (0: passed). */
static int in_child(int (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fn();
        fflush(stdout);
        _exit(rc);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* ---- A small process ----------------------------------------------------- */

static int small_process(void)
{
    init_standby();
    register_range(0, SMALL);
    size_t size;
    pages p = pages_of(table(&size));
    printf("  %d regions: table of %zu KiB, %lu KiB resident, %lu KiB in huge pages, huge advised: %d\n",
           SMALL, size >> 10, p.rss_kb, p.anon_huge_kb, p.huge_advised);
    if (!p.found)
        return 1;
    if (p.huge_advised || p.anon_huge_kb)
        return 2;
    return p.rss_kb <= 1024 ? 0 : 3; /* a header page and a 256 KiB batch of slots and of heap */
}

static void a_small_process_keeps_its_table_in_a_few_small_pages(void **state)
{
    (void)state;
    int rc = in_child(small_process);
    if (rc == 2)
        fail_msg("a 10-region process's table is in huge pages: every process would pay 2 MiB pages");
    assert_int_equal(rc, 0);
}

/* ---- A grown table ------------------------------------------------------- */

/* Register n regions: the table grows or not as `grown` says (1), is one
 * mapping of its size (2), advised MADV_HUGEPAGE where the kernel has THP
 * (3), with at least 2 MiB in huge pages where they are given to advised
 * mappings (4). */
static int huge_pages_after(size_t n, int grown)
{
    init_standby();
    size_t first_size, size;
    const void *first = table(&first_size);
    register_range(0, n);
    const void *now = table(&size);
    pages p = pages_of(now);
    printf("  %zu regions: table of %zu KiB (first %zu KiB), %lu KiB resident, %lu KiB in huge pages, "
           "advised %d\n",
           n, size >> 10, first_size >> 10, p.rss_kb, p.anon_huge_kb, p.huge_advised);
    if ((now != first && size > first_size) != grown)
        return 1;
    if (!p.found || p.size_kb * 1024 != size)
        return 2;
    if (thp_in_kernel() && !p.huge_advised)
        return 3;
    return thp_for_advised() && p.anon_huge_kb < 2048 ? 4 : 0;
}

/* 140,000 regions grow the table once (1,048,576 slots): over 15 MiB
 * touched. At least one 2 MiB page is asked, not most of them: a
 * fragmented machine may fall back to 4 KiB pages for some. */
static int big_table(void)
{
    return huge_pages_after(BIG, 1);
}

static void a_grown_table_is_in_huge_pages(void **state)
{
    (void)state;
    int rc = in_child(big_table);
    if (rc == 3)
        fail_msg("the grown table is not advised MADV_HUGEPAGE");
    if (rc == 4)
        fail_msg("the grown table has no huge page");
    assert_int_equal(rc, 0);
}

/* A process past the 16,384 regions a small one has proved big: its first
 * table (131,072 slots) stays where it is, advised MADV_HUGEPAGE as a
 * whole, and the slots it touches from then on come in huge pages: 60,000
 * regions touch ~4 MiB of slots past the first 16,384, so at least one
 * whole 2 MiB page whatever the mapping's alignment. */
static int past_a_small_process(void)
{
    return huge_pages_after(GROWN, 0);
}

static void sixty_thousand_regions_take_huge_pages_in_the_first_table(void **state)
{
    (void)state;
    int rc = in_child(past_a_small_process);
    if (rc == 1)
        fail_msg("60,000 regions grew the first table (131,072 slots)");
    if (rc == 3)
        fail_msg("the first table of a process past 16,384 regions is not advised MADV_HUGEPAGE");
    if (rc == 4)
        fail_msg("the slots touched after the advice are not in huge pages");
    assert_int_equal(rc, 0);
}

/* The reader finds the grown table (named, or by its signature where the
 * kernel cannot name an anonymous mapping) as one mapping of the table's
 * size, and reads every region right. */
static int grown_read_whole(void)
{
    init_standby();
    register_range(0, BIG);
    size_t size;
    const void *addr = table(&size);
    uint64_t base, found_size;
    char err[256];
    if (tr_find_table(getpid(), &base, &found_size, err, sizeof err) != 0) {
        printf("  %s\n", err);
        return 1;
    }
    if (base != (uintptr_t)addr || found_size != size)
        return 2;
    tr_snapshot s;
    if (tr_read_pid(getpid(), NULL, &s, err, sizeof err) != 0) {
        printf("  %s\n", err);
        return 3;
    }
    int ok = s.consistent && s.n_live == BIG;
    char name[32];
    for (size_t i = 0; ok && i < BIG; i++) { /* sorted by start: region i is the i-th */
        snprintf(name, sizeof name, "r_%zu", i);
        ok = s.live[i].start == ((uintptr_t)1 << 40) + i * REGION && strcmp(s.live[i].name, name) == 0;
    }
    tr_snapshot_free(&s);
    return ok ? 0 : 4;
}

static void the_reader_reads_a_grown_table_whole(void **state)
{
    (void)state;
    int rc = in_child(grown_read_whole);
    if (rc == 1 || rc == 2)
        fail_msg("tr_find_table did not find the grown table as one mapping (%d)", rc);
    assert_int_equal(rc, 0);
}

/* ---- fork ---------------------------------------------------------------- */

/* A forked child does not inherit the parent's grown (private) table: the
 * address is unmapped in the child (MADV_DONTFORK; else a copy of the
 * parent's pages would stay there), which makes its own table holding the
 * regions it inherited; what the child registers is not in the parent's. */
static int fork_child_view(void)
{
    init_standby();
    register_range(0, BIG);
    size_t parent_size;
    const void *parent_table = table(&parent_size);
    int p[2];
    if (pipe(p) != 0)
        return 10;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        jf_region r = JF_REGION_INIT;
        r.addr = (const void *)((uintptr_t)1 << 41);
        r.size = REGION;
        r.name = "child_only";
        if (jf_register(&r) != 0)
            _exit(11);
        size_t size;
        const void *own = table(&size);
        /* The parent's address is unmapped in the child (ENOMEM), or the
         * child's own new table took the vacant place. */
        unsigned char v;
        uintptr_t at = (uintptr_t)parent_table, lo = (uintptr_t)own;
        int inherited = mincore((void *)parent_table, 4096, &v) == 0 && !(at >= lo && at < lo + size);
        tr_snapshot s;
        char err[256];
        int ok = !inherited && own != NULL && tr_read_pid(getpid(), NULL, &s, err, sizeof err) == 0;
        if (ok) {
            ok = s.n_live == BIG + 1 && strcmp(s.live[BIG].name, "child_only") == 0;
            tr_snapshot_free(&s);
        }
        char done = ok ? 'y' : (inherited ? 'i' : 'n');
        _exit(write(p[1], &done, 1) == 1 ? 0 : 12);
    }
    close(p[1]);
    char got = 0;
    if (read(p[0], &got, 1) != 1)
        got = '?';
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (got != 'y')
        return got == 'i' ? 13 : 14;
    tr_snapshot s;
    char err[256];
    if (tr_read_pid(getpid(), NULL, &s, err, sizeof err) != 0)
        return 15;
    int ok = s.n_live == BIG && table(&parent_size) == parent_table;
    for (size_t i = 0; ok && i < s.n_live; i++)
        ok = strcmp(s.live[i].name, "child_only") != 0;
    tr_snapshot_free(&s);
    return ok ? 0 : 16;
}

static void a_fork_child_has_its_own_table_not_the_parents_grown_one(void **state)
{
    (void)state;
    int rc = in_child(fork_child_view);
    if (rc == 13)
        fail_msg("the child inherited the parent's table mapping");
    if (rc == 14)
        fail_msg("the child's own table is not the inherited regions plus its own");
    if (rc == 16)
        fail_msg("the parent's table changed with the child's registration");
    assert_int_equal(rc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_small_process_keeps_its_table_in_a_few_small_pages),
        cmocka_unit_test(a_grown_table_is_in_huge_pages),
        cmocka_unit_test(sixty_thousand_regions_take_huge_pages_in_the_first_table),
        cmocka_unit_test(the_reader_reads_a_grown_table_whole),
        cmocka_unit_test(a_fork_child_has_its_own_table_not_the_parents_grown_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
