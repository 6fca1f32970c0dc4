/* Reference-counted init/shutdown, calls outside init, configuration from the
 * environment, re-initialisation. No sink is enabled here. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

static const unsigned char code[64];

static int init_without_env(void)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    return jf_init(&cfg);
}

/* Every test leaves the library uninitialised. */
static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 100 && jf_shutdown() == 0; i++)
        ;
    unsetenv("JITFRAMES");
    return 0;
}

static void shutdown_without_init_is_enotinit(void **state)
{
    (void)state;
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
    assert_non_null(strstr(jf_last_error(), "jf_shutdown"));
}

static void calls_before_init_are_enotinit(void **state)
{
    (void)state;
    jf_region r = test_region(code, 16, "early");
    assert_int_equal(jf_register(&r), JF_ENOTINIT);
    assert_true(strlen(jf_last_error()) > 0);
    assert_int_equal(jf_register_batch(&r, 1), JF_ENOTINIT);
    assert_int_equal(jf_unregister(code), JF_ENOTINIT);
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), JF_ENOTINIT);
    assert_int_equal(jf_disable(JF_SINK_PERFMAP), JF_ENOTINIT);
    assert_int_equal(jf_enabled_sinks(), 0);
    /* Nothing was kept: after init the address is free. */
    assert_int_equal(init_without_env(), 0);
    assert_int_equal(jf_unregister(code), JF_ENOENT);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, 0);
}

static void init_is_reference_counted(void **state)
{
    (void)state;
    assert_int_equal(init_without_env(), 0);
    assert_int_equal(init_without_env(), 0);
    assert_int_equal(jf_init(NULL), 0);
    jf_region r = test_region(code, 16, "counted");
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(jf_shutdown(), 0);
    /* One reference left: still initialised, the region still live. */
    assert_int_equal(jf_register(&r), JF_EEXIST);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
    assert_int_equal(jf_register(&r), JF_ENOTINIT);
}

static void shutdown_forgets_regions_and_reinit_starts_fresh(void **state)
{
    (void)state;
    assert_int_equal(init_without_env(), 0);
    jf_region r = test_region(code, 16, "first life");
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(jf_shutdown(), 0);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(init_without_env(), 0);
        struct jf_stats st = JF_STATS_INIT;
        assert_int_equal(jf_stats(&st), 0);
        assert_int_equal(st.live_regions, 0);
        assert_int_equal(jf_register(&r), 0);
        assert_int_equal(jf_stats(&st), 0);
        assert_int_equal(st.live_regions, 1);
        assert_int_equal(jf_shutdown(), 0);
    }
}

static void bad_config_is_rejected_and_nothing_initialised(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.struct_size = 4;
    assert_int_equal(jf_init(&cfg), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "struct_size"));
    cfg = (jf_config)JF_CONFIG_INIT;
    cfg.sinks = 0x100;
    assert_int_equal(jf_init(&cfg), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "0x100"));
    cfg = (jf_config)JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV | 0x80;
    assert_int_equal(jf_init(&cfg), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "flags has unknown bits 0x80"));
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
}

/* One sink cannot start (its directory is missing), the other can: the
 * library is initialised, says so with its own code, and names the sink and
 * the precise cause; the call is balanced like any successful one. */
static void init_with_a_failing_sink_is_a_distinct_partial_success(void **state)
{
    (void)state;
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP | JF_SINK_JITDUMP;
    cfg.dump_dir = "/nonexistent-jitframes-dir";
    assert_int_equal(jf_init(&cfg), JF_ESINK);
    assert_non_null(strstr(jf_last_error(), "initialised, but the jitdump sink could not start"));
    /* Worded for the case, the code's text once. */
    const char *said = jf_last_error();
    assert_non_null(strstr(said, "the directory /nonexistent-jitframes-dir does not exist"));
    assert_non_null(strstr(said, "$JITFRAMES_DIR or jf_config.dump_dir"));
    assert_non_null(strstr(said, "JF_ENOENT"));
    assert_null(strstr(strstr(said, "JF_ENOENT") + 1, "JF_ENOENT"));
    assert_int_equal(jf_enabled_sinks(), JF_SINK_PERFMAP);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.sink[1].failed, 1);
    assert_int_equal(st.sink[0].enabled, 1);
    /* jf_enable reports the sink's own error. */
    assert_int_equal(jf_enable(JF_SINK_JITDUMP), JF_ENOENT);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
    unlink(map);
}

typedef struct log_capture {
    char text[4096];
} log_capture;

static void capture_log(void *ctx, int level, const char *message)
{
    log_capture *c = ctx;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%d:%s\n", level, message);
}

/* JITFRAMES_LOG=info says where each sink writes; unknown JITFRAMES and
 * JITFRAMES_LOG values are warnings (besides JF_EINVAL for the former). */
static void the_log_says_where_and_what_is_wrong(void **state)
{
    (void)state;
    log_capture c = {""};
    jf_set_log_callback(capture_log, &c);
    setenv("JITFRAMES", "perfmapp", 1);
    setenv("JITFRAMES_LOG", "verbose", 1);
    assert_int_equal(jf_init(NULL), JF_EINVAL);
    assert_non_null(strstr(c.text, "1:JITFRAMES_LOG=verbose is not one of"));
    assert_non_null(strstr(c.text, "1:JITFRAMES=perfmapp: unknown sink 'perfmapp'"));
    c.text[0] = '\0';
    setenv("JITFRAMES", "perfmap", 1);
    setenv("JITFRAMES_LOG", "info", 1);
    assert_int_equal(jf_init(NULL), 0);
    char expect[96];
    snprintf(expect, sizeof expect, "2:perfmap sink on: /tmp/perf-%ld.map", (long)getpid());
    assert_non_null(strstr(c.text, expect));
    assert_int_equal(jf_disable(JF_SINK_PERFMAP), 0);
    assert_non_null(strstr(c.text, "2:perfmap sink off (jf_disable)"));
    jf_set_log_callback(NULL, NULL);
    unsetenv("JITFRAMES_LOG");
    assert_int_equal(jf_shutdown(), 0);
    snprintf(expect, sizeof expect, "/tmp/perf-%ld.map", (long)getpid());
    unlink(expect);
}

/* After any successful call the thread's message is empty again. */
static void a_success_leaves_no_stale_message(void **state)
{
    (void)state;
    unsigned bits;
#define AFTER_A_FAILURE(call)                                        \
    do {                                                             \
        assert_int_equal(jf_parse_sinks("stale", &bits), JF_EINVAL); \
        assert_int_equal((call), 0);                                 \
        assert_string_equal(jf_last_error(), "");                    \
    } while (0)
    AFTER_A_FAILURE(init_without_env());
    AFTER_A_FAILURE(jf_enable(0));
    AFTER_A_FAILURE((int)jf_enabled_sinks());
    AFTER_A_FAILURE((int)jf_jitdump_overlaps());
    struct jf_stats st = JF_STATS_INIT;
    AFTER_A_FAILURE(jf_stats(&st));
    jf_region r = test_region(code, 16, "fresh");
    AFTER_A_FAILURE(jf_register(&r));
    AFTER_A_FAILURE(jf_unregister(code));
    jf_cfi *cfi = NULL;
    AFTER_A_FAILURE(jf_cfi_new(&cfi));
    AFTER_A_FAILURE(jf_cfi_add_frameless(cfi, 0, 16, 8));
    AFTER_A_FAILURE((jf_cfi_free(cfi), 0));
    AFTER_A_FAILURE((jf_set_log_callback(NULL, NULL), 0));
    AFTER_A_FAILURE(jf_disable(0));
    AFTER_A_FAILURE(jf_shutdown());
#undef AFTER_A_FAILURE
}

/* The struct_size convention: a caller compiled with a smaller struct (an
 * older header) gets the fields it has; one with a larger struct (a newer
 * header) keeps what this version does not know. */
static void stats_fill_what_the_caller_has(void **state)
{
    (void)state;
    assert_int_equal(init_without_env(), 0);
    _Alignas(struct jf_stats) unsigned char buf[sizeof(struct jf_stats) + 16];
    memset(buf, 0xa5, sizeof buf);
    struct jf_stats st = JF_STATS_INIT;
    size_t older = offsetof(struct jf_stats, sink) + sizeof(jf_sink_stats);
    st.struct_size = older;
    memcpy(buf, &st, sizeof st.struct_size);
    assert_int_equal(jf_stats((struct jf_stats *)(void *)buf), 0);
    for (size_t i = older; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xa5);
    size_t newer = sizeof(struct jf_stats) + 16;
    memcpy(buf, &newer, sizeof newer);
    assert_int_equal(jf_stats((struct jf_stats *)(void *)buf), 0);
    for (size_t i = sizeof(struct jf_stats); i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xa5);
    assert_int_equal(jf_shutdown(), 0);
}

static void enable_and_disable_reject_unknown_bits(void **state)
{
    (void)state;
    assert_int_equal(init_without_env(), 0);
    assert_int_equal(jf_enable(0x40), JF_EINVAL);
    assert_int_equal(jf_disable(0x40), JF_EINVAL);
    assert_int_equal(jf_enable(0), 0);
    assert_int_equal(jf_disable(0), 0);
    assert_int_equal(jf_enabled_sinks(), 0);
}

static void unknown_word_in_env_fails_init_clearly(void **state)
{
    (void)state;
    setenv("JITFRAMES", "perfmap,perfmaps", 1);
    assert_int_equal(jf_init(NULL), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "JITFRAMES"));
    assert_non_null(strstr(jf_last_error(), "'perfmaps'"));
    assert_int_equal(jf_enabled_sinks(), 0);
    assert_int_equal(jf_shutdown(), JF_ENOTINIT); /* nothing was initialised */
    /* JF_CONFIG_IGNORE_ENV does not read it. */
    assert_int_equal(init_without_env(), 0);
    assert_int_equal(jf_enabled_sinks(), 0);
}

static void empty_env_enables_nothing(void **state)
{
    (void)state;
    setenv("JITFRAMES", "", 1);
    assert_int_equal(jf_init(NULL), 0);
    assert_int_equal(jf_enabled_sinks(), 0);
}

static void env_is_read_only_by_the_first_init(void **state)
{
    (void)state;
    assert_int_equal(jf_init(NULL), 0);
    setenv("JITFRAMES", "bogus", 1);
    assert_int_equal(jf_init(NULL), 0); /* already initialised: env not read again */
    assert_int_equal(jf_shutdown(), 0);
}

static void too_long_directories_fail_init_and_leave_no_trace(void **state)
{
    (void)state;
    char long_dir[5000];
    memset(long_dir, 'd', sizeof long_dir - 1);
    long_dir[0] = '/';
    long_dir[sizeof long_dir - 1] = '\0';
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.dump_dir = long_dir;
    assert_int_equal(jf_init(&cfg), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "dump_dir"));
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
    setenv("JITFRAMES_DIR", long_dir, 1);
    assert_int_equal(jf_init(NULL), JF_EINVAL);
    unsetenv("JITFRAMES_DIR");
    assert_non_null(strstr(jf_last_error(), "JITFRAMES_DIR"));
    assert_int_equal(jf_shutdown(), JF_ENOTINIT);
    /* The next init uses the default directory, not a cut-off long one. */
    cfg.dump_dir = NULL;
    cfg.sinks = JF_SINK_JITDUMP;
    int rc = jf_init(&cfg);
    char dump[64];
    snprintf(dump, sizeof dump, "/tmp/jit-%ld.dump", (long)getpid());
    int exists = access(dump, F_OK) == 0;
    jf_shutdown();
    unlink(dump);
    assert_int_equal(rc, 0);
    assert_true(exists);
}

static void stats_need_a_struct_size(void **state)
{
    (void)state;
    assert_int_equal(jf_stats(NULL), JF_EINVAL);
    struct jf_stats st = JF_STATS_INIT;
    st.struct_size = 8;
    assert_int_equal(jf_stats(&st), JF_EINVAL);
    /* Allowed before init: everything is zero. */
    st.struct_size = sizeof st;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, 0);
    for (int i = 0; i < JF_SINK_COUNT; i++)
        assert_int_equal(st.sink[i].enabled, 0);
}

int main(void)
{
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(shutdown_without_init_is_enotinit, teardown),
        cmocka_unit_test_teardown(calls_before_init_are_enotinit, teardown),
        cmocka_unit_test_teardown(init_is_reference_counted, teardown),
        cmocka_unit_test_teardown(shutdown_forgets_regions_and_reinit_starts_fresh, teardown),
        cmocka_unit_test_teardown(bad_config_is_rejected_and_nothing_initialised, teardown),
        cmocka_unit_test_teardown(init_with_a_failing_sink_is_a_distinct_partial_success, teardown),
        cmocka_unit_test_teardown(a_success_leaves_no_stale_message, teardown),
        cmocka_unit_test_teardown(the_log_says_where_and_what_is_wrong, teardown),
        cmocka_unit_test_teardown(stats_fill_what_the_caller_has, teardown),
        cmocka_unit_test_teardown(enable_and_disable_reject_unknown_bits, teardown),
        cmocka_unit_test_teardown(unknown_word_in_env_fails_init_clearly, teardown),
        cmocka_unit_test_teardown(empty_env_enables_nothing, teardown),
        cmocka_unit_test_teardown(env_is_read_only_by_the_first_init, teardown),
        cmocka_unit_test_teardown(too_long_directories_fail_init_and_leave_no_trace, teardown),
        cmocka_unit_test_teardown(stats_need_a_struct_size, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
