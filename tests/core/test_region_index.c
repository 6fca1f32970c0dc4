/* The registry's index of live regions checked against a plain reference array under
 * random inserts and removals, dense pages and sparse ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "region_index.h"
#include "test_random.h"

enum { KEYS = 20000 };

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t next_random(void)
{
    return test_random_next(&rng_state);
}

typedef struct fixture {
    jf__live *lives; /* one per key; lives[i].start = keys[i] */
    unsigned char *present;
} fixture;

static jf__live *live_at(fixture *f, size_t i)
{
    return &f->lives[i];
}

static int count_visit(jf__live *r, void *ctx)
{
    (void)r;
    (*(size_t *)ctx)++;
    return 0;
}

/* Key i: a mix of dense runs (1-byte and 16-byte regions packed in one
 * page), strided runs and scattered addresses. */
static uintptr_t key_of(size_t i)
{
    const uintptr_t base = 0x7f0000000000u;
    switch (i % 4) {
    case 0: return base + i / 4;                      /* 1-byte regions: one page holds 4096 */
    case 1: return base + 0x10000000u + 16 * (i / 4); /* dense trampolines */
    case 2: return base + 0x20000000u + 208 * (i / 4);
    default: return base + 0x40000000u + ((uintptr_t)(i * 2654435761u) & 0x3ffffff0u);
    }
}

static void check_against_reference(jf__region_index *t, fixture *f)
{
    size_t expected = 0;
    for (size_t i = 0; i < KEYS; i++) {
        jf__live *found = jf__region_index_find(t, key_of(i));
        if (f->present[i]) {
            expected++;
            assert_ptr_equal(found, live_at(f, i));
        } else {
            assert_null(found);
        }
    }
    assert_int_equal(t->count, expected);
    size_t visited = 0;
    jf__region_index_foreach(t, count_visit, &visited);
    assert_int_equal(visited, expected);
}

static void random_inserts_and_removals_match_a_reference(void **state)
{
    (void)state;
    fixture f;
    f.lives = calloc(KEYS, sizeof *f.lives + 8);
    f.present = calloc(KEYS, 1);
    assert_non_null(f.lives);
    assert_non_null(f.present);
    /* Keys must be distinct for the reference to hold. */
    for (size_t i = 0; i < KEYS; i++)
        f.lives[i].start = key_of(i);
    jf__region_index t = {0};
    for (int round = 0; round < 6; round++) {
        for (size_t op = 0; op < 3 * KEYS; op++) {
            size_t i = (size_t)(next_random() % KEYS);
            if (next_random() % 3 != 0 || round == 0) {
                int rc = jf__region_index_insert(&t, live_at(&f, i));
                assert_int_equal(rc, f.present[i] ? JF_EEXIST : 0);
                f.present[i] = 1;
            } else {
                jf__live *gone = jf__region_index_remove(&t, key_of(i));
                assert_ptr_equal(gone, f.present[i] ? live_at(&f, i) : NULL);
                f.present[i] = 0;
            }
        }
        check_against_reference(&t, &f);
    }
    /* Remove everything: the directory empties completely. */
    for (size_t i = 0; i < KEYS; i++)
        if (f.present[i])
            assert_ptr_equal(jf__region_index_remove(&t, key_of(i)), live_at(&f, i));
    assert_int_equal(t.count, 0);
    assert_int_equal(t.used_pages, 0);
    jf__region_index_clear(&t);
    free(f.lives);
    free(f.present);
}

static void empty_table_finds_nothing(void **state)
{
    (void)state;
    jf__region_index t = {0};
    assert_null(jf__region_index_find(&t, 0x1000));
    assert_null(jf__region_index_remove(&t, 0x1000));
    size_t visited = 0;
    assert_int_equal(jf__region_index_foreach(&t, count_visit, &visited), 0);
    assert_int_equal(visited, 0);
    jf__region_index_clear(&t);
}

static int stop_at_second(jf__live *r, void *ctx)
{
    (void)r;
    return ++*(int *)ctx == 2 ? 42 : 0;
}

static void foreach_stops_when_asked(void **state)
{
    (void)state;
    jf__live lives[3];
    memset(lives, 0, sizeof lives);
    jf__region_index t = {0};
    for (int i = 0; i < 3; i++) {
        lives[i].start = 0x5000 + 0x1000 * (uintptr_t)i;
        assert_int_equal(jf__region_index_insert(&t, &lives[i]), 0);
    }
    int seen = 0;
    assert_int_equal(jf__region_index_foreach(&t, stop_at_second, &seen), 42);
    assert_int_equal(seen, 2);
    jf__region_index_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_inserts_and_removals_match_a_reference),
        cmocka_unit_test(empty_table_finds_nothing),
        cmocka_unit_test(foreach_stops_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
