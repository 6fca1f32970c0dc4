/*
 * The unwind sink under a libgcc keyed by each table's first pc (GCC 13+),
 * emulated by fake_btree_unwinder.c, which is the unwinder in this
 * program's global scope. There, a table registered while another with the
 * same first pc is live is dropped, and deregistering an unknown table
 * aborts: the sink must recognise it at start-up (exactly one drop: its own
 * probe) and replace tables old-first, so that regions registered singly, in
 * batches, out of order and unregistered at random never hit either case,
 * and every live region's FDE is found through the fake's _Unwind_Find_FDE.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"
#include "many_regions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int fake_btree_drops(void);
size_t fake_btree_entries(void);
const void *_Unwind_Find_FDE(void *pc, void **bases);

enum { N = 2000, REGION_SIZE = 16, BATCH = 50 };

static uint8_t *code;
static jf_cfi *cfi;
static char live[N];

static jf_region region(size_t i)
{
    static char names[N][MANY_NAME];
    return many_region(code, REGION_SIZE, cfi, names, "btree", i);
}

static void check_lookups(void)
{
    for (size_t i = 0; i < N; i++) {
        const void *func = fde_function(_Unwind_Find_FDE, code + i * REGION_SIZE + 4);
        if (live[i] && func != code + i * REGION_SIZE)
            fail_msg("region %zu: not found", i);
        if (!live[i] && func)
            fail_msg("region %zu: found after unregistering", i);
    }
    assert_int_equal(fake_btree_drops(), 1);
}

static void btree_libgcc_is_never_given_a_duplicate_start(void **state)
{
    (void)state;
    code = mmap(NULL, N * REGION_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(code != MAP_FAILED);
    assert_int_equal(jf_cfi_new(&cfi), 0);
    assert_int_equal(jf_cfi_add_frameless(cfi, 0, REGION_SIZE, 8), 0);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_UNWIND;
    assert_int_equal(jf_init(&cfg), 0);
    /* The probe's second table was dropped, and nothing is left registered. */
    assert_int_equal(fake_btree_drops(), 1);
    assert_int_equal(fake_btree_entries(), 0);

    static size_t order[N];
    static jf_region batch[BATCH];
    shuffle_indexes(order, N, 7);
    for (size_t k = 0; k < N; k += 2) { /* half singly, out of order */
        jf_region r = region(order[k]);
        assert_int_equal(jf_register(&r), 0);
        live[order[k]] = 1;
    }
    check_lookups();
    for (size_t k = 1; k < N; k += 2 * BATCH) { /* the rest in batches inside existing ranges */
        size_t n = 0;
        for (size_t j = k; j < N && n < BATCH; j += 2) {
            batch[n++] = region(order[j]);
            live[order[j]] = 1;
        }
        assert_int_equal(jf_register_batch(batch, n), 0);
    }
    check_lookups();
    shuffle_indexes(order, N, 8);
    for (size_t k = 0; k < N; k++) {
        assert_int_equal(jf_unregister(code + order[k] * REGION_SIZE), 0);
        live[order[k]] = 0;
        if (k % 500 == 0)
            check_lookups();
    }
    check_lookups();
    assert_int_equal(fake_btree_entries(), 0);
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(cfi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(btree_libgcc_is_never_given_a_duplicate_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
