/* Threads and unwind descriptions (include/jitframes.h, "Threads"): several
 * threads each build descriptions of their own at the same time and register
 * regions with them, while every thread also registers regions with one
 * description built beforehand and asks jf_jitdump_footprint about it. No
 * call fails and nothing is left registered. Run under TSan too (label
 * "threads"), which reports any shared state the builder would touch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jitframes.h"

#include <pthread.h>

enum { THREADS = 4, ROUNDS = 200, SIZE = 64 };
static uint8_t area[THREADS][2][SIZE] __attribute__((aligned(64)));
static jf_cfi *shared;

/* Every kind of builder call, as a JIT describing a small function would. */
static int build(jf_cfi **out)
{
    jf_cfi *c;
    int rc = jf_cfi_new(&c);
    rc = rc ? rc : jf_cfi_begin_fde(c, 0, 32);
    rc = rc ? rc : jf_cfi_advance_to(c, 4);
    rc = rc ? rc : jf_cfi_remember_state(c);
    rc = rc ? rc : jf_cfi_def_cfa_offset(c, 32);
    rc = rc ? rc : jf_cfi_offset(c, JF_DWARF_FP, -16);
    rc = rc ? rc : jf_cfi_advance_to(c, 8);
    rc = rc ? rc : jf_cfi_restore_state(c);
    rc = rc ? rc : jf_cfi_add_frameless(c, 32, SIZE, 16);
    if (rc != 0) {
        jf_cfi_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int register_at(const uint8_t *addr, const jf_cfi *cfi)
{
    jf_region r = JF_REGION_INIT;
    r.addr = addr;
    r.size = SIZE;
    r.name = "threaded";
    r.cfi = cfi;
    int rc = jf_register(&r);
    return rc ? rc : jf_unregister(addr);
}

static void *build_and_register(void *arg)
{
    uint8_t(*mine)[SIZE] = area[(intptr_t)arg];
    for (int i = 0; i < ROUNDS; i++) {
        jf_cfi *own;
        if (build(&own) != 0)
            return (void *)jf_last_error();
        int rc = register_at(mine[0], own);
        jf_cfi_free(own);
        rc = rc ? rc : register_at(mine[1], shared);
        if (rc != 0 || jf_jitdump_footprint(SIZE, shared) == 0)
            return (void *)jf_last_error();
    }
    return NULL;
}

static void descriptions_are_built_in_parallel_and_shared_once_built(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&cfg), 0);
    assert_int_equal(build(&shared), 0);
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, build_and_register, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *failure;
        assert_int_equal(pthread_join(t[i], &failure), 0);
        if (failure)
            fail_msg("thread %d: %s", i, (const char *)failure);
    }
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, 0);
    jf_cfi_free(shared);
    assert_int_equal(jf_shutdown(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(descriptions_are_built_in_parallel_and_shared_once_built),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
