/* The published table's removal clock (src/tick_clock.h), against
 * clock_gettime around every reading: never before the clock, never more
 * than a few microseconds after it, never backwards, and extrapolating
 * (not reading the clock) for most readings where the kernel keeps its
 * time with the cycle counter; a zeroed clock sets itself up at its first
 * reading. Sized by counts: 20,000 readings, with
 * pauses that make it read the clock again and measure its rate anew. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include "tick_clock.h"

enum {
    READINGS = 20000,
    PAUSE_EVERY = 100,  /* readings */
    LATE_MAX_NS = 5000, /* the header promises about 1 us; a busy machine's brackets are wider */
};

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* 0.3 to 12 ms: past an extrapolation's reach now and then. */
static void pause_for(unsigned k)
{
    struct timespec t = {0, (long)(300000u + (k * 2654435761u) % 11700000u)};
    nanosleep(&t, NULL);
}

static void readings_bound_the_clock_and_never_go_back(void **state)
{
    (void)state;
    jf__tick_clock c;
    jf__tick_clock_init(&c);
    uint64_t previous = 0, latest_late = 0;
    for (unsigned k = 0; k < READINGS; k++) {
        if (k % PAUSE_EVERY == 0)
            pause_for(k / PAUSE_EVERY);
        uint64_t before = monotonic_ns();
        uint64_t v = jf__tick_clock_now(&c);
        uint64_t after = monotonic_ns();
        if (v < before || v > after + LATE_MAX_NS)
            fail_msg("reading %u: %llu not in [%llu, %llu + %d]", k, (unsigned long long)v,
                     (unsigned long long)before, (unsigned long long)after, LATE_MAX_NS);
        assert_true(v >= previous);
        previous = v;
        if (v > after && v - after > latest_late)
            latest_late = v - after;
    }
    uint64_t extrapolated = READINGS - c.real_readings;
    print_message("%llu readings extrapolated, %llu real; at most %llu ns after the clock\n",
                  (unsigned long long)extrapolated, (unsigned long long)c.real_readings,
                  (unsigned long long)latest_late);
    if (c.usable) {
        /* A real reading at least every pause, a few more for the rate. */
        assert_true(extrapolated >= READINGS / 2);
        assert_true(c.real_readings >= READINGS / PAUSE_EVERY / 2);
    } else {
        print_message("the kernel does not keep time with a cycle counter here: every reading is real\n");
        assert_int_equal(c.real_readings, READINGS);
    }
}

/* A zeroed clock (the table's, a static) is set up by its first reading,
 * as jf__tick_clock_init sets one up. */
static void a_zeroed_clock_sets_itself_up_when_first_read(void **state)
{
    (void)state;
    jf__tick_clock set_up, zeroed = {0};
    jf__tick_clock_init(&set_up);
    uint64_t before = monotonic_ns();
    uint64_t v = jf__tick_clock_now(&zeroed);
    assert_true(v >= before && v <= monotonic_ns());
    assert_int_equal(zeroed.set_up, 1);
    assert_int_equal(zeroed.usable, set_up.usable);
    assert_int_equal(zeroed.real_readings, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readings_bound_the_clock_and_never_go_back),
        cmocka_unit_test(a_zeroed_clock_sets_itself_up_when_first_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
