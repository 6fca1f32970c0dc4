/* Eight threads register, unregister and move regions while another thread
 * reads the published table through process_vm_readv, as a profiler in
 * another process does: no entry read is ever torn (its name, file, line
 * and unwind rules — odd threads register with CFI — always belong to its
 * address and size), a read that saw the table change says so (the writers outlast every read: counted), and once
 * the writers stop the read is consistent and exact.
 * Sized by counts, not time. Also run under TSan (label "threads"). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"
#include "table_reader.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writers run until the reader is done (MAX_ROUNDS only bounds a reader
 * that never ends), so every read races them. */
enum { THREADS = 8, REGIONS = 8, SLOT = 128, READS = 60, MAX_ROUNDS = 50000000 };
/* Thread t's region k lives in bank 0 or 1 at slot k. */
static uint8_t area[THREADS][2][REGIONS * SLOT] __attribute__((aligned(64)));
/* Under TSan the reader's copies of the table are ~10x slower and eight
 * writers on two cores starve it: they yield now and then (the reads still
 * race them: most are inconsistent there). Elsewhere they never yield. */
#if defined(__SANITIZE_THREAD__)
#define WRITER_YIELDS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WRITER_YIELDS 1
#endif
#endif
#ifndef WRITER_YIELDS
#define WRITER_YIELDS 0
#endif

static int reader_done;
static int writers_running;
static unsigned long rounds_done;
static jf_cfi *cfi; /* odd threads' regions carry it; NULL where unsupported */

/* What a region's fields must say, derived from where it is and its size. */
static void expected_name(uint64_t start, uint64_t size, char *out, size_t cap, unsigned *line)
{
    uint64_t off = start - (uintptr_t)area;
    unsigned t = (unsigned)(off / sizeof area[0]);
    unsigned k = (unsigned)(off % sizeof area[0][0] / SLOT);
    snprintf(out, cap, "t%u_k%u_size%llu", t, k, (unsigned long long)size);
    *line = t * 100 + k;
}

static void register_region(unsigned t, unsigned k, int bank, size_t size)
{
    char name[64];
    unsigned line;
    const uint8_t *addr = &area[t][bank][k * SLOT];
    expected_name((uintptr_t)addr, size, name, sizeof name, &line);
    jf_region r = JF_REGION_INIT;
    r.addr = addr;
    r.size = size;
    r.name = name;
    r.file = name; /* the file too must match the entry it is read with */
    r.line = line;
    r.cfi = t % 2 ? cfi : NULL;
    assert_int_equal(jf_register(&r), 0);
}

/* Rounds cycle through: re-register with a new size, move to the other bank
 * (where the name no longer matches: skipped there, so move back at once),
 * and unregister + register. */
static void *writer(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    for (unsigned k = 0; k < REGIONS; k++)
        register_region(t, k, 0, 16);
    __atomic_add_fetch(&writers_running, 1, __ATOMIC_RELAXED);
    for (unsigned round = 0; round < MAX_ROUNDS && !__atomic_load_n(&reader_done, __ATOMIC_RELAXED);
         round++) {
        unsigned k = round % REGIONS;
        const uint8_t *at = &area[t][0][k * SLOT];
        assert_int_equal(jf_unregister(at), 0);
        register_region(t, k, 0, 16 + (round % 7) * 8);
        if (round % 5 == 0) {
            assert_int_equal(jf_move(at, &area[t][1][k * SLOT]), 0);
            assert_int_equal(jf_move(&area[t][1][k * SLOT], at), 0);
        }
        __atomic_add_fetch(&rounds_done, 1, __ATOMIC_RELAXED);
        if (WRITER_YIELDS && round % 4 == 3)
            sched_yield();
    }
    __atomic_sub_fetch(&writers_running, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* Every region of s must carry the name, file and line of its own address
 * and size (moved regions, in bank 1, carry bank 0's: allowed there). */
static void check_untorn(const tr_region *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char want[64];
        unsigned line;
        uint64_t start = v[i].start;
        uint64_t off = start - (uintptr_t)area;
        if ((off % sizeof area[0]) >= sizeof area[0][0]) /* bank 1 */
            start -= sizeof area[0][0];
        expected_name(start, v[i].size, want, sizeof want, &line);
        int want_unwind = cfi && (line / 100) % 2 == 1;
        if (strcmp(v[i].name, want) != 0 || !v[i].file || strcmp(v[i].file, want) != 0 || v[i].line != line ||
            (v[i].unwind != NULL) != want_unwind)
            fail_msg(
                "torn entry at %#llx size %llu: name %s file %s line %u unwind %u bytes (want %s, %u, %s)",
                (unsigned long long)v[i].start, (unsigned long long)v[i].size, v[i].name,
                v[i].file ? v[i].file : "-", v[i].line, v[i].unwind_len, want, line,
                want_unwind ? "unwind" : "none");
    }
}

static void readers_never_see_a_torn_entry_while_eight_threads_write(void **state)
{
    (void)state;
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&c), 0);
    if (jf_cfi_new(&cfi) == 0)
        assert_int_equal(jf_cfi_add_frameless(cfi, 0, 16, 8), 0);
    pid_t self = getpid();
    uint64_t base, size;
    char err[256];
    assert_int_equal(tr_find_table(self, &base, &size, err, sizeof err), 0);
    pthread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t), 0);
    tr_limits lim = TR_LIMITS_DEFAULT;
    lim.max_attempts = 4;
    unsigned consistent = 0, raced = 0;
    size_t seen = 0, torn = 0;
    while (__atomic_load_n(&writers_running, __ATOMIC_RELAXED) < THREADS)
        sched_yield(); /* every writer has its regions in: the reads race all eight */
    for (int i = 0; i < READS; i++) {
        tr_snapshot s;
        raced += __atomic_load_n(&writers_running, __ATOMIC_RELAXED) == THREADS;
        if (tr_read_table(tr_read_process, &self, base, size, &lim, &s, err, sizeof err) != 0)
            fail_msg("read %d: %s", i, err);
        check_untorn(s.live, s.n_live);
        check_untorn(s.removed, s.n_removed);
        consistent += (unsigned)s.consistent;
        seen += s.n_live;
        torn += s.torn;
        tr_snapshot_free(&s);
    }
    raced += __atomic_load_n(&writers_running, __ATOMIC_RELAXED) == THREADS; /* still writing at the end */
    __atomic_store_n(&reader_done, 1, __ATOMIC_RELAXED);
    for (unsigned t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    printf("%d reads (%u of them and the end raced all eight writers), %u consistent as a whole, %zu live "
           "entries "
           "checked, %zu torn copies left out; %lu writer rounds\n",
           READS, raced, consistent, seen, torn, __atomic_load_n(&rounds_done, __ATOMIC_RELAXED));
    assert_true(seen > 0);
    assert_int_equal(raced, READS + 1); /* the writers outlasted every read: no read was idle */

    tr_snapshot s;
    assert_int_equal(tr_read_table(tr_read_process, &self, base, size, NULL, &s, err, sizeof err), 0);
    assert_true(s.consistent);
    assert_int_equal(s.n_live, THREADS * REGIONS);
    check_untorn(s.live, s.n_live);
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(cfi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readers_never_see_a_torn_entry_while_eight_threads_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
