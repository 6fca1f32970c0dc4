/*
 * 10,000 regions with unwind rules, registered in batches and singly, then
 * unregistered in random order. Asserted through jf_stats() and through the
 * unwinder itself (libgcc_s's _Unwind_Find_FDE), not by timing:
 *  - the number of tables registered with the unwinder stays bounded,
 *    however the regions arrive: neighbouring tables merge while together
 *    they hold at most 256 regions, so n live regions need at most
 *    2n/256 + 1 tables per 1 GiB code window (a batch of 10,000 is split,
 *    not one table: removing one region rebuilds only its table);
 *  - every live region's FDE is found, with the right start address, and a
 *    removed region's is not;
 *  - nothing aborts (libgcc aborts on deregistering an unknown table).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"
#include "many_regions.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { N = 10000, REGION_SIZE = 16, BATCH = 100, FULL = 256 };

static uint8_t *code;
static jf_cfi *cfi;
static find_fde_fn find_fde;
static char live[N];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
    (void)state;
    code = mmap(NULL, (size_t)N * REGION_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(code != MAP_FAILED);
    memset(code, 0xc3, (size_t)N * REGION_SIZE); /* ret */
    assert_int_equal(mprotect(code, (size_t)N * REGION_SIZE, PROT_READ | PROT_EXEC), 0);
    assert_int_equal(jf_cfi_new(&cfi), 0);
    assert_int_equal(jf_cfi_add_frameless(cfi, 0, REGION_SIZE, 8), 0);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_UNWIND;
    assert_int_equal(jf_init(&cfg), 0);
    /* The sink bound libgcc_s (the unwinder backtrace() uses): ask it. */
    void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    void *sym = dlsym(h, "_Unwind_Find_FDE");
    assert_non_null(sym);
    memcpy(&find_fde, &sym, sizeof find_fde);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    jf_shutdown();
    jf_cfi_free(cfi);
    munmap(code, (size_t)N * REGION_SIZE);
    return 0;
}

static jf_region region(size_t i)
{
    static char names[N][MANY_NAME];
    return many_region(code, REGION_SIZE, cfi, names, "jit", i);
}

static uint64_t tables(void)
{
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    return st.sink[3].objects;
}

static size_t count_live(void)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++)
        n += live[i];
    return n;
}

/* Tables allowed for `live` regions (see the top comment). */
static uint64_t table_bound(size_t n_live)
{
    uintptr_t first = (uintptr_t)code >> 30, last = ((uintptr_t)code + N * REGION_SIZE - 1) >> 30;
    uint64_t windows = last - first + 1;
    return 2 * (uint64_t)n_live / FULL + windows;
}

/* Every region's FDE is found iff it is live, and it starts at the region. */
static void check_unwinder_agrees(void)
{
    for (size_t i = 0; i < N; i++) {
        const void *func = fde_function(find_fde, code + i * REGION_SIZE + 4);
        if (live[i] && func != code + i * REGION_SIZE)
            fail_msg("region %zu: FDE for function %p, expected %p", i, func,
                     (void *)(code + i * REGION_SIZE));
        if (!live[i] && func)
            fail_msg("region %zu was unregistered but its FDE is still found", i);
    }
}

/* Unregister everything in random order, checking bound and lookups. */
static void unregister_randomly(unsigned seed)
{
    static size_t order[N];
    shuffle_indexes(order, N, seed);
    uint64_t peak = 0;
    double t0 = now();
    for (size_t k = 0; k < N; k++) {
        assert_int_equal(jf_unregister(code + order[k] * REGION_SIZE), 0);
        live[order[k]] = 0;
        uint64_t t = tables();
        peak = t > peak ? t : peak;
        if (t > table_bound(N - k - 1))
            fail_msg("%llu tables for %zu regions", (unsigned long long)t, (size_t)(N - k - 1));
        if (k % 2500 == 0)
            check_unwinder_agrees();
    }
    print_message("unregistered %d regions in random order in %.3f s, at most %llu tables\n", N, now() - t0,
                  (unsigned long long)peak);
    check_unwinder_agrees();
    assert_int_equal(tables(), 0);
}

static void batches_stay_bounded_and_exact(void **state)
{
    (void)state;
    static jf_region batch[BATCH];
    uint64_t bound = table_bound(N);
    double t0 = now();
    for (size_t b = 0; b < N / BATCH; b++) {
        for (size_t i = 0; i < BATCH; i++) {
            batch[i] = region(b * BATCH + i);
            live[b * BATCH + i] = 1;
        }
        assert_int_equal(jf_register_batch(batch, BATCH), 0);
        assert_true(tables() <= table_bound(count_live()));
    }
    print_message("%d regions in %d batches: %.3f s, %llu tables (bound %llu)\n", N, N / BATCH, now() - t0,
                  (unsigned long long)tables(), (unsigned long long)bound);
    check_unwinder_agrees();
    unregister_randomly(1);
}

static void singles_stay_bounded_and_exact(void **state)
{
    (void)state;
    uint64_t bound = table_bound(N);
    double t0 = now();
    for (size_t i = 0; i < N; i++) {
        jf_region r = region(i);
        assert_int_equal(jf_register(&r), 0);
        live[i] = 1;
        assert_true(tables() <= table_bound(i + 1));
    }
    print_message("%d regions registered singly: %.3f s, %llu tables (bound %llu)\n", N, now() - t0,
                  (unsigned long long)tables(), (unsigned long long)bound);
    check_unwinder_agrees();
    unregister_randomly(2);
}

/* One batch of N: split into full tables, not one table of N (removing a
 * region rebuilds only its table). */
static void one_big_batch_is_split(void **state)
{
    (void)state;
    static jf_region all[N];
    for (size_t i = 0; i < N; i++) {
        all[i] = region(i);
        live[i] = 1;
    }
    assert_int_equal(jf_register_batch(all, N), 0);
    assert_true(tables() <= table_bound(N));
    assert_true(tables() >= N / (2 * FULL));
    check_unwinder_agrees();
    unregister_randomly(3);
}

/* Regions arriving out of address order: even ones singly in random order,
 * then odd ones in batches of 100 whose regions all fall inside the ranges
 * of existing tables. Tables must never overlap (libgcc's lookups assume
 * it), so every lookup must still find exactly the right FDE. */
static void out_of_order_regions_stay_exact(void **state)
{
    (void)state;
    static size_t order[N];
    static jf_region batch[BATCH];
    shuffle_indexes(order, N, 4);
    for (size_t k = 0; k < N; k++) {
        if (order[k] % 2)
            continue;
        jf_region r = region(order[k]);
        assert_int_equal(jf_register(&r), 0);
        live[order[k]] = 1;
    }
    check_unwinder_agrees();
    size_t used = 0;
    for (size_t k = 0; k < N; k++) {
        if (order[k] % 2 == 0)
            continue;
        batch[used++] = region(order[k]);
        live[order[k]] = 1;
        if (used == BATCH) {
            assert_int_equal(jf_register_batch(batch, used), 0);
            used = 0;
            assert_true(tables() <= table_bound(count_live()));
        }
    }
    print_message("%d regions out of address order: %llu tables (bound %llu)\n", N,
                  (unsigned long long)tables(), (unsigned long long)table_bound(N));
    check_unwinder_agrees();
    unregister_randomly(5);
}

static long trampoline_target(long x)
{
    return x;
}

/* Trampolines are registered one by one, each with its rules: they share
 * tables too (one arena's slots are neighbours), and each is found. */
static void trampolines_share_tables(void **state)
{
    (void)state;
    enum { T = 2000 };
    static jf_fn entries[T];
    jf_fn target;
    long (*fn)(long) = trampoline_target;
    memcpy(&target, &fn, sizeof target);
    for (size_t i = 0; i < T; i++)
        assert_int_equal(jf_trampoline_create(target, "scale_trampoline", NULL, &entries[i]), 0);
    print_message("%d trampolines: %llu tables\n", T, (unsigned long long)tables());
    assert_true(tables() <= 2 * T / FULL + 2);
    for (size_t i = 0; i < T; i++) {
        const void *entry;
        memcpy(&entry, &entries[i], sizeof entry);
        if (fde_function(find_fde, (const char *)entry + 4) != entry)
            fail_msg("trampoline %zu at %p: no FDE starting there", i, entry);
    }
    for (size_t i = 0; i < T; i++)
        assert_int_equal(jf_trampoline_destroy(entries[i]), 0);
    assert_int_equal(tables(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batches_stay_bounded_and_exact), cmocka_unit_test(singles_stay_bounded_and_exact),
        cmocka_unit_test(one_big_batch_is_split),         cmocka_unit_test(out_of_order_regions_stay_exact),
        cmocka_unit_test(trampolines_share_tables),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
