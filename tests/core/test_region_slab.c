/* The registry's record allocator (src/region_slab.c): records freed in any
 * order are reused in address order, a chunk at a time, so the records of a
 * run of registrations after a random-order churn stay together; records of
 * every class keep their bytes; a header written over is not followed.
 * Not built under AddressSanitizer, where every record comes from malloc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "region.h"
#include "region_slab.h"
#include "test_random.h"

enum {
    SIZE = 100,         /* a record of the 128-byte class (with its header) */
    N = 3 * 2045 + 500, /* a little over three chunks of that class */
    RUN = 2000,         /* consecutive allocations looked at together */
    CHUNK_PAGES = 64,   /* a chunk is 256 KiB */
};

static void *records[N];

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static size_t next_random(size_t below)
{
    return (size_t)(test_random_next(&rng_state) % below);
}

static void allocate_all(void)
{
    for (size_t i = 0; i < N; i++)
        assert_non_null(records[i] = jf__slab_alloc(SIZE));
}

static void free_all_in_random_order(void)
{
    static size_t order[N];
    for (size_t i = 0; i < N; i++)
        order[i] = i;
    for (size_t i = N - 1; i > 0; i--) {
        size_t j = next_random(i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < N; i++)
        jf__slab_free(records[order[i]]);
}

/* Every record allocated, freed in a random order, allocated again. */
static void churn_then_allocate(void)
{
    allocate_all();
    free_all_in_random_order();
    allocate_all();
}

static void free_all(void)
{
    for (size_t i = 0; i < N; i++)
        jf__slab_free(records[i]);
}

/* Allocations that go down in address: one per change of chunk when the
 * records are reused in address order; about every other one when they
 * come back in the order they were freed. */
static void records_freed_in_random_order_are_reused_in_address_order(void **state)
{
    (void)state;
    churn_then_allocate();
    size_t descents = 0;
    for (size_t i = 1; i < N; i++)
        descents += (uintptr_t)records[i] < (uintptr_t)records[i - 1];
    free_all();
    assert_true(descents <= 8);
}

static size_t distinct_pages(void *const *p, size_t n)
{
    static uintptr_t seen[RUN];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t page = (uintptr_t)p[i] >> 12;
        size_t j = 0;
        while (j < k && seen[j] != page)
            j++;
        if (j == k)
            seen[k++] = page;
    }
    return k;
}

/* 2,000 records after a random-order churn lie in at most two chunks (128
 * pages), not across the ~200 pages the churn left free. */
static void records_after_a_churn_lie_in_few_pages(void **state)
{
    (void)state;
    churn_then_allocate();
    size_t most = 0;
    for (size_t at = 0; at + RUN <= N; at += RUN) {
        size_t pages = distinct_pages(records + at, RUN);
        most = pages > most ? pages : most;
    }
    free_all();
    assert_true(most <= 2 * CHUNK_PAGES);
}

/* Records of every class, and larger ones (malloc), each filled with its
 * own byte, are intact after others were freed and allocated around them. */
static void records_of_every_class_keep_their_bytes(void **state)
{
    (void)state;
    static const size_t sizes[] = {8, 100, 120, 150, 250, 300, 500, 1000, 1016, 5000};
    enum { EACH = 300, KINDS = sizeof sizes / sizeof sizes[0] };
    static unsigned char *rec[KINDS][EACH];
    for (int round = 0; round < 2; round++) {
        for (size_t k = 0; k < KINDS; k++)
            for (size_t i = 0; i < EACH; i++) {
                if (round == 1 && i % 2 == 0)
                    continue; /* the odd ones were freed: allocate them again */
                assert_non_null(rec[k][i] = jf__slab_alloc(sizes[k]));
                memset(rec[k][i], (int)(k * 31 + i), sizes[k]);
            }
        for (size_t k = 0; k < KINDS; k++)
            for (size_t i = 0; i < EACH; i++)
                for (size_t b = 0; b < sizes[k]; b++)
                    assert_int_equal(rec[k][i][b], (unsigned char)(k * 31 + i));
        for (size_t k = 0; k < KINDS; k++)
            for (size_t i = 1; i < EACH; i += 2)
                jf__slab_free(rec[k][i]);
    }
    for (size_t k = 0; k < KINDS; k++)
        for (size_t i = 0; i < EACH; i += 2)
            jf__slab_free(rec[k][i]);
}

/* A region with a name of up to 15 bytes and nothing else is a 64-byte
 * slot: a fresh process pays a page per 64 of them, not per 32. */
static void a_short_name_only_record_takes_64_bytes(void **state)
{
    (void)state;
    enum { RECORDS = 200 };
    static void *p[RECORDS];
    size_t apart_64 = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        assert_non_null(p[i] = jf__slab_alloc(sizeof(jf__live) + 15 + 1));
        apart_64 += i > 0 && (uintptr_t)p[i] - (uintptr_t)p[i - 1] == 64;
    }
    for (size_t i = 0; i < RECORDS; i++)
        jf__slab_free(p[i]);
    assert_true(apart_64 >= RECORDS - 2); /* a chunk may end among them */
}

/* A record whose header the host wrote over is leaked, not freed into
 * some other chunk's bitmap; the allocator goes on working. */
static void a_header_written_over_is_not_followed(void **state)
{
    (void)state;
    unsigned char *p = jf__slab_alloc(SIZE);
    assert_non_null(p);
    memset(p - 8, 0x7f, 8); /* the slot's header: class 127, index past any chunk */
    jf__slab_free(p);
    void *q = jf__slab_alloc(SIZE);
    assert_non_null(q);
    assert_ptr_not_equal(q, p);
    jf__slab_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(records_freed_in_random_order_are_reused_in_address_order),
        cmocka_unit_test(records_after_a_churn_lie_in_few_pages),
        cmocka_unit_test(records_of_every_class_keep_their_bytes),
        cmocka_unit_test(a_header_written_over_is_not_followed),
        cmocka_unit_test(a_short_name_only_record_takes_64_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
