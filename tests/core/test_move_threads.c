/* Threads moving regions (jf_move and jf_move_batch) while others register
 * and unregister, with every sink on: no call fails, every region ends where
 * its thread last put it (and nowhere else), the live count is exact, and the
 * jitdump passes `jitframes check` (every CODE_MOVE names a live load's index
 * and old address). Also run under TSan (label "threads"). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dump_parse.h"
#include "jitframes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MOVERS = 2, REGISTRARS = 2, REGIONS = 8, ROUNDS = 300, SIZE = 48, SLOT = 256 };
/* Each mover owns two banks of REGIONS slots and shuttles its regions
 * between them; each registrar owns a range of its own. */
static uint8_t mover_area[MOVERS][2][REGIONS * SLOT] __attribute__((aligned(64)));
static uint8_t registrar_area[REGISTRARS][ROUNDS * SLOT] __attribute__((aligned(64)));
static jf_cfi *shared_cfi;
static char dir[32];

static jf_region region_at(const uint8_t *addr, const char *name)
{
    jf_region r = JF_REGION_INIT;
    r.addr = addr;
    r.size = SIZE;
    r.name = name;
    r.cfi = shared_cfi;
    return r;
}

/* Round i moves every region to the other bank: one at a time on odd
 * rounds, as one batch on even ones. */
static void *moving_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        const uint8_t *from = mover_area[t][i % 2], *to = mover_area[t][(i + 1) % 2];
        jf_region_move moves[REGIONS];
        for (int k = 0; k < REGIONS; k++)
            moves[k] = (jf_region_move){from + k * SLOT, to + k * SLOT};
        if (i % 2 == 0) {
            if (jf_move_batch(moves, REGIONS) != 0)
                return (void *)jf_last_error();
        } else {
            for (int k = 0; k < REGIONS; k++)
                if (jf_move(moves[k].from, moves[k].to) != 0)
                    return (void *)jf_last_error();
        }
    }
    return NULL;
}

static void *registering_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    char name[32];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(name, sizeof name, "reg_%d_%d", t, i);
        jf_region r = region_at(registrar_area[t] + i * SLOT, name);
        if (jf_register(&r) != 0)
            return (void *)jf_last_error();
        if (i % 3 == 0 && jf_unregister(r.addr) != 0)
            return (void *)jf_last_error();
    }
    return NULL;
}

static void moves_and_registrations_race(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/jf-movet-XXXXXX");
    assert_non_null(mkdtemp(dir));
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    c.sinks = JF_SINK_ALL;
    c.dump_dir = dir;
    assert_int_equal(jf_init(&c), 0);
    assert_int_equal(jf_cfi_new(&shared_cfi), 0);
#if defined(__x86_64__)
    assert_int_equal(jf_cfi_add_frameless(shared_cfi, 0, SIZE, 8), 0);
#else
    assert_int_equal(jf_cfi_add_frameless(shared_cfi, 0, SIZE, 0), 0);
#endif
    char name[32];
    for (int t = 0; t < MOVERS; t++)
        for (int k = 0; k < REGIONS; k++) {
            snprintf(name, sizeof name, "moved_%d_%d", t, k);
            jf_region r = region_at(mover_area[t][0] + k * SLOT, name);
            assert_int_equal(jf_register(&r), 0);
        }

    pthread_t threads[MOVERS + REGISTRARS];
    for (int t = 0; t < MOVERS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, moving_thread, (void *)(intptr_t)t), 0);
    for (int t = 0; t < REGISTRARS; t++)
        assert_int_equal(pthread_create(&threads[MOVERS + t], NULL, registering_thread, (void *)(intptr_t)t),
                         0);
    for (int t = 0; t < MOVERS + REGISTRARS; t++) {
        void *err;
        assert_int_equal(pthread_join(threads[t], &err), 0);
        if (err)
            fail_msg("thread %d: %s", t, (const char *)err);
    }

    /* ROUNDS is even: every region is back in bank 0, and not in bank 1. */
    for (int t = 0; t < MOVERS; t++)
        for (int k = 0; k < REGIONS; k++) {
            assert_int_equal(jf_move(mover_area[t][0] + k * SLOT, mover_area[t][0] + k * SLOT), 0);
            assert_int_equal(jf_unregister(mover_area[t][1] + k * SLOT), JF_ENOENT);
        }
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    int registered = REGISTRARS * (ROUNDS - (ROUNDS + 2) / 3);
    assert_int_equal(st.live_regions, MOVERS * REGIONS + registered);
    for (int i = 0; i < JF_SINK_COUNT; i++)
        assert_int_equal(st.sink[i].errors, 0);
    assert_int_equal(jf_shutdown(), 0);
    jf_cfi_free(shared_cfi);

    dump_file d;
    assert_int_equal(dump_load(dump_path(dir, getpid()), &d), 0);
    assert_int_equal(dump_count(&d, ID_MOVE), (size_t)MOVERS * REGIONS * ROUNDS);
    dump_free(&d);
    assert_dump_checks(dump_path(dir, getpid()));
    unlink(dump_path(dir, getpid()));
    rmdir(dir);
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moves_and_registrations_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
