/* Eight threads registering 10,000 regions each: 80,000 intact lines, no
 * line torn or interleaved with another (run under TSan too). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

enum { THREADS = 8, PER_THREAD = 10000, TOTAL = THREADS * PER_THREAD };
#define FAKE_BASE ((uintptr_t)0x7c0000000000ull)

static uintptr_t addr_of(int index)
{
    return FAKE_BASE + 32 * (uintptr_t)index;
}

typedef struct worker {
    pthread_t thread;
    int id;
    int failures;
    int use_batches;
} worker;

static void *register_many(void *arg)
{
    worker *w = arg;
    char name[64];
    for (int i = 0; i < PER_THREAD; i++) {
        int index = w->id * PER_THREAD + i;
        snprintf(name, sizeof name, "thread%d_region%05d_%d", w->id, i, index);
        jf_region r = JF_REGION_INIT;
        r.addr = (const void *)addr_of(index);
        r.size = 32;
        r.name = name;
        w->failures += jf_register(&r) != 0;
    }
    return NULL;
}

/* Parse every line and check each index appears once with its own name. */
static void assert_every_line_intact(const char *data, size_t len)
{
    char why[300];
    long lines = map_validate(data, len, why, sizeof why);
    if (lines < 0)
        fail_msg("malformed map: %s", why);
    assert_int_equal(lines, TOTAL);
    unsigned char *seen = calloc(TOTAL, 1);
    assert_non_null(seen);
    for (const char *p = data; *p;) {
        if (*p == '\n') { /* reserved space not used */
            p++;
            continue;
        }
        unsigned long addr, size;
        int t, i, index, consumed = 0;
        if (sscanf(p, "%lx %lx thread%d_region%d_%d%n", &addr, &size, &t, &i, &index, &consumed) != 5 ||
            p[consumed] != '\n')
            fail_msg("unexpected line: %.80s", p);
        if (index < 0 || index >= TOTAL || index != t * PER_THREAD + i || addr != addr_of(index) ||
            size != 32 || seen[index])
            fail_msg("wrong or repeated line: %.80s", p);
        seen[index] = 1;
        p += consumed + 1;
    }
    free(seen);
}

static void eight_threads_write_80000_intact_lines(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){.id = t};
        assert_int_equal(pthread_create(&workers[t].thread, NULL, register_many, &workers[t]), 0);
    }
    int failures = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(workers[t].thread, NULL);
        failures += workers[t].failures;
    }
    assert_int_equal(failures, 0);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, TOTAL);
    assert_int_equal(st.sink[0].regions, TOTAL);
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    assert_every_line_intact(data, len);
    assert_int_equal(st.sink[0].bytes, map_strip_padding(data, len));
    free(data);
}

/* ---- lifecycle calls racing with registrations -------------------------- */

static atomic_int stop_toggling;

static void *toggle_sink(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000 && !atomic_load(&stop_toggling); i++) {
        jf_disable(JF_SINK_PERFMAP);
        jf_enable(JF_SINK_PERFMAP);
        struct jf_stats st = JF_STATS_INIT;
        jf_stats(&st);
        (void)jf_enabled_sinks();
    }
    return NULL;
}

static void *init_and_shutdown(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000 && !atomic_load(&stop_toggling); i++) {
        if (test_init_with(0) == 0)
            jf_shutdown();
    }
    return NULL;
}

static void toggling_and_extra_references_race_safely_with_registrations(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    atomic_store(&stop_toggling, 0);
    pthread_t toggler, refcounter;
    assert_int_equal(pthread_create(&toggler, NULL, toggle_sink, NULL), 0);
    assert_int_equal(pthread_create(&refcounter, NULL, init_and_shutdown, NULL), 0);
    worker workers[2];
    for (int t = 0; t < 2; t++) {
        workers[t] = (worker){.id = t};
        assert_int_equal(pthread_create(&workers[t].thread, NULL, register_many, &workers[t]), 0);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(workers[t].thread, NULL);
        assert_int_equal(workers[t].failures, 0);
    }
    atomic_store(&stop_toggling, 1);
    pthread_join(toggler, NULL);
    pthread_join(refcounter, NULL);
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    /* Replays may repeat lines; every line is still whole. */
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    char why[300];
    if (map_validate(data, len, why, sizeof why) < 0)
        fail_msg("malformed map: %s", why);
    free(data);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, 2 * PER_THREAD);
}

int main(void)
{
    unsetenv("JITFRAMES");
    test_reset(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(eight_threads_write_80000_intact_lines, test_reset),
        cmocka_unit_test_teardown(toggling_and_extra_references_race_safely_with_registrations, test_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
