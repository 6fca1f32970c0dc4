/* The set behind the published table's free slots and free heap blocks
 * (src/lowest_set.h), checked against a plain array of flags: random adds
 * and takes always give the lowest member, at every depth of the bitmap;
 * growing keeps the members; a member added twice, or a number past the
 * capacity, changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lowest_set.h"
#include "test_random.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint32_t next_random(uint32_t below)
{
    return (uint32_t)(test_random_next(&rng_state) % below);
}

/* The lowest i with member[i], or UINT32_MAX. */
static uint32_t lowest_member(const unsigned char *member, uint32_t capacity)
{
    for (uint32_t i = 0; i < capacity; i++)
        if (member[i])
            return i;
    return UINT32_MAX;
}

/* ops random adds and takes on a set of `capacity`, each take checked. */
static void random_adds_and_takes(uint32_t capacity, uint32_t ops)
{
    jf__lowest_set s;
    assert_int_equal(jf__lowest_set_init(&s, capacity), 0);
    unsigned char *member = calloc(capacity, 1);
    assert_non_null(member);
    for (uint32_t k = 0; k < ops; k++) {
        if (next_random(3)) { /* adds outnumber takes: the set fills, then thins */
            uint32_t i = next_random(capacity);
            if (!member[i]) {
                member[i] = 1;
                jf__lowest_set_add(&s, i);
            }
        } else {
            uint32_t want = lowest_member(member, capacity);
            assert_int_equal(jf__lowest_set_take(&s), want);
            if (want != UINT32_MAX)
                member[want] = 0;
        }
    }
    for (uint32_t i = 0; i < capacity; i++) /* the rest, in order */
        if (member[i])
            assert_int_equal(jf__lowest_set_take(&s), i);
    assert_int_equal(jf__lowest_set_take(&s), UINT32_MAX);
    assert_int_equal(s.count, 0);
    free(member);
    jf__lowest_set_destroy(&s);
}

static void takes_give_the_lowest_member_at_every_depth(void **state)
{
    (void)state;
    random_adds_and_takes(1, 50);     /* one level */
    random_adds_and_takes(100, 2000); /* two */
    random_adds_and_takes(5000, 20000);
    random_adds_and_takes(300000, 600); /* four levels, sparse */
}

/* The largest capacity (five levels): members far apart come back in order. */
static void far_apart_members_of_the_largest_set_come_back_in_order(void **state)
{
    (void)state;
    jf__lowest_set s;
    const uint32_t capacity = (uint32_t)1 << 27; /* a 2 GiB heap in 16-byte steps */
    assert_int_equal(jf__lowest_set_init(&s, capacity), 0);
    assert_int_equal(s.levels, 5);
    static const uint32_t members[] = {capacity - 1, 0, 1u << 26, 4095, 4096, 262143, 262144};
    static const uint32_t sorted[] = {0, 4095, 4096, 262143, 262144, 1u << 26, capacity - 1};
    for (size_t k = 0; k < sizeof members / sizeof members[0]; k++)
        jf__lowest_set_add(&s, members[k]);
    for (size_t k = 0; k < sizeof sorted / sizeof sorted[0]; k++)
        assert_int_equal(jf__lowest_set_take(&s), sorted[k]);
    assert_int_equal(jf__lowest_set_take(&s), UINT32_MAX);
    jf__lowest_set_destroy(&s);
}

static void growing_keeps_the_members_and_adding_twice_or_past_the_capacity_changes_nothing(void **state)
{
    (void)state;
    jf__lowest_set s;
    assert_int_equal(jf__lowest_set_init(&s, 16384), 0);
    jf__lowest_set_add(&s, 9000);
    jf__lowest_set_add(&s, 70);
    jf__lowest_set_add(&s, 20000); /* past the capacity: not a member */
    assert_int_equal(s.count, 2);
    assert_int_equal(jf__lowest_set_grow(&s, 131072), 0);
    jf__lowest_set_add(&s, 100000);
    jf__lowest_set_add(&s, 20000);
    static const uint32_t sorted[] = {70, 9000, 20000, 100000};
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(jf__lowest_set_take(&s), sorted[k]);
    assert_int_equal(jf__lowest_set_take(&s), UINT32_MAX);
    jf__lowest_set_add(&s, 5);
    jf__lowest_set_add(&s, 5); /* already a member: nothing changes */
    assert_int_equal(s.count, 1);
    assert_int_equal(jf__lowest_set_take(&s), 5);
    assert_int_equal(jf__lowest_set_take(&s), UINT32_MAX);
    assert_int_equal(s.count, 0);
    jf__lowest_set_destroy(&s);
    jf__lowest_set_add(&s, 1); /* a destroyed (or never made) set holds nothing */
    assert_int_equal(jf__lowest_set_take(&s), UINT32_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takes_give_the_lowest_member_at_every_depth),
        cmocka_unit_test(far_apart_members_of_the_largest_set_come_back_in_order),
        cmocka_unit_test(growing_keeps_the_members_and_adding_twice_or_past_the_capacity_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
