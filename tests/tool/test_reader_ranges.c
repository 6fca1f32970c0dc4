/*
 * The readers' one range check (jft_fits in tools/readers/jft_common.c):
 * [off, off + len) inside [0, size), for offsets and lengths read from
 * the input, which may be anything, so the sum may wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jft_common.h"

static void a_range_fits_up_to_the_end_of_the_buffer(void **state)
{
    (void)state;
    assert_true(jft_fits(0, 0, 0));
    assert_true(jft_fits(0, 10, 10));
    assert_true(jft_fits(5, 5, 10));
    assert_true(jft_fits(10, 0, 10)); /* empty, at the end */
    assert_true(jft_fits(UINT64_MAX, 0, UINT64_MAX));
    assert_true(jft_fits(0, UINT64_MAX, UINT64_MAX));
}

static void a_range_past_the_end_does_not_fit(void **state)
{
    (void)state;
    assert_false(jft_fits(0, 1, 0));
    assert_false(jft_fits(0, 11, 10));
    assert_false(jft_fits(5, 6, 10));
    assert_false(jft_fits(10, 1, 10));
    assert_false(jft_fits(11, 0, 10)); /* empty, but beyond the end */
}

/* off + len wraps to a small number that a naive `off + len <= size` takes. */
static void a_range_whose_end_wraps_does_not_fit(void **state)
{
    (void)state;
    assert_false(jft_fits(8, UINT64_MAX - 3, 16));
    assert_false(jft_fits(UINT64_MAX, 2, 16));
    assert_false(jft_fits(1, UINT64_MAX, UINT64_MAX));
    assert_false(jft_fits(UINT64_MAX, 1, UINT64_MAX));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_range_fits_up_to_the_end_of_the_buffer),
        cmocka_unit_test(a_range_past_the_end_does_not_fit),
        cmocka_unit_test(a_range_whose_end_wraps_does_not_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
