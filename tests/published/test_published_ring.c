/*
 * The published table's ring of removals grows with its slots. A process of
 * its own: the table must start at its first size (a table kept from an
 * earlier jf_init in the same process keeps its grown size).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"
#include "pub_layout.h"
#include "table_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void read_own(tr_snapshot *s)
{
    pid_t self = getpid();
    char err[256];
    if (tr_read_pid(self, NULL, s, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* The ring of removals grows with the table: after one growth (131,072
 * slots to 1,048,576) it holds 32,768 removals, the last 16,384 from before
 * the growth still among them in order, so a reader between two reads of
 * a large table misses none of a burst twice the first ring (the ring once
 * stayed at 4096 whatever the table's size). */
static void the_ring_grows_with_the_slots_and_keeps_its_removals(void **state)
{
    (void)state;
    enum {
        SLOTS = 1 << 17,
        GROWN = SLOTS * 8,
        RING = 16384,
        RING_GROWN = 32768,
        EARLY = 20000,
        BURST = 40000,
        SMALL = 16
    };
    uint8_t *many = calloc(SLOTS + EARLY + BURST + 1, SMALL);
    assert_non_null(many);
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&c), 0);
    char name[32];
    for (size_t i = 0; i <= SLOTS + EARLY + BURST;
         i++) { /* more than the first table's slots live: it grows */
        jf_region r = JF_REGION_INIT;
        r.addr = many + i * SMALL;
        r.size = SMALL;
        snprintf(name, sizeof name, "r_%zu", i);
        r.name = name;
        assert_int_equal(jf_register(&r), 0);
        if (i + 1 == EARLY) /* removals before the growth: the first ring wraps */
            for (size_t k = 0; k < EARLY; k++)
                assert_int_equal(jf_unregister(many + k * SMALL), 0);
    }
    const jf__pub_header *h = (const jf__pub_header *)jf_region_table;
    assert_int_equal(h->entries_capacity, GROWN);
    assert_int_equal(h->ring_capacity, RING_GROWN);
    tr_snapshot s;
    read_own(&s);
    assert_int_equal(s.n_removed, RING); /* the last RING of the EARLY removals, kept by the growth */
    for (size_t k = 0; k < s.n_removed; k++) {
        snprintf(name, sizeof name, "r_%zu", EARLY - RING + k);
        assert_string_equal(s.removed[k].name, name);
    }
    tr_snapshot_free(&s);
    for (size_t k = EARLY; k < EARLY + BURST; k++)
        assert_int_equal(jf_unregister(many + k * SMALL), 0);
    read_own(&s);
    assert_int_equal(s.n_removed, RING_GROWN);
    for (size_t k = 0; k < s.n_removed; k++) { /* oldest first: the ring wrapped over the early ones */
        snprintf(name, sizeof name, "r_%zu", EARLY + BURST - RING_GROWN + k);
        assert_string_equal(s.removed[k].name, name);
    }
    tr_snapshot_free(&s);
    assert_int_equal(jf_shutdown(), 0);
    free(many);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_ring_grows_with_the_slots_and_keeps_its_removals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
