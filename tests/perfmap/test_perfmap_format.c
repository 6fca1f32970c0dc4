/* What reaches /tmp/perf-<pid>.map: exact lines, sanitised names, batches,
 * late enabling, statistics, and enabling through $JITFRAMES. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

static unsigned char code[1 << 16];

/* The map's entries, checked to be strictly well-formed with `lines` lines
 * (blank lines, the space the writer reserved, removed). */
static char *read_valid_map(long lines)
{
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    char why[300] = "";
    long n = map_validate(data, len, why, sizeof why);
    if (n < 0)
        fail_msg("malformed map: %s", why);
    assert_int_equal(n, lines);
    map_strip_padding(data, len);
    return data;
}

/* Register one region and return the exact map line it produced. */
static void assert_name_written_as(const char *name, const char *expected)
{
    jf_region r = test_region(code, 0x2a, name);
    assert_int_equal(jf_register(&r), 0);
    char *data = read_valid_map(1);
    char want[5000];
    map_format_line(want, sizeof want, (uintptr_t)code, 0x2a, expected);
    assert_string_equal(data, want);
    free(data);
    assert_int_equal(jf_unregister(code), 0);
    map_remove(getpid());
    assert_int_equal(jf_disable(JF_SINK_PERFMAP), 0);
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
}

static void line_is_lowercase_hex_single_spaces_and_newline(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region r = test_region(code + 0xab, 0xbeef, "plain name");
    assert_int_equal(jf_register(&r), 0);
    char *data = read_valid_map(1);
    char want[128];
    snprintf(want, sizeof want, "%lx beef plain name\n", (unsigned long)(uintptr_t)(code + 0xab));
    assert_string_equal(data, want);
    free(data);
}

static void control_characters_in_names_become_question_marks(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    assert_name_written_as("a\nb", "a?b");
    assert_name_written_as("forged\n1000 10 evil", "forged?1000 10 evil");
    assert_name_written_as("tab\there", "tab?here");
    assert_name_written_as("cr\rlf\n", "cr?lf?");
    assert_name_written_as("\x01\x1f\x7f", "???");
    assert_name_written_as("nel\xc2\x85"
                           "c1\xc2\x9f"
                           " nbsp\xc2\xa0",
                           "nel?c1? nbsp\xc2\xa0"); /* C1 */
    assert_name_written_as("\n", "?");
    /* bidirectional controls: U+202E, U+2066, U+200F, U+061C; U+2010 kept */
    assert_name_written_as("rlo\xe2\x80\xae"
                           "fsi\xe2\x81\xa6"
                           "rlm\xe2\x80\x8f"
                           "alm\xd8\x9c"
                           "-\xe2\x80\x90",
                           "rlo?fsi?rlm?alm?-\xe2\x80\x90");
    assert_name_written_as("inner  spaces kept ", "inner  spaces kept ");
    assert_name_written_as("  leading", "??leading"); /* not a second separator */
    assert_name_written_as(" ", "?");
}

static void invalid_utf8_becomes_one_question_mark_per_byte(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    assert_name_written_as("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d",
                           "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d");
    assert_name_written_as("bad\xff", "bad?");
    assert_name_written_as("\xc0\xaf", "??");           /* overlong '/' */
    assert_name_written_as("\xed\xa0\x80x", "???x");    /* surrogate */
    assert_name_written_as("\xf4\x90\x80\x80", "????"); /* above U+10FFFF */
    assert_name_written_as("cut\xe2\x82", "cut??");     /* truncated at the end */
    assert_name_written_as("\x80lone", "?lone");        /* stray continuation */
}

static void huge_name_is_cut_at_a_character_boundary(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    /* "x" then 2-byte characters: the JF_NAME_MAX cut falls inside one. */
    size_t n = 1u << 20;
    char *name = malloc(n + 1);
    assert_non_null(name);
    name[0] = 'x';
    for (size_t i = 1; i + 1 < n; i += 2) {
        name[i] = '\xc3';
        name[i + 1] = '\xa9';
    }
    name[n - 1] = '\0';
    jf_region r = test_region(code, 16, name);
    assert_int_equal(jf_register(&r), 0);
    char *data = read_valid_map(1);
    const char *written = strchr(strchr(data, ' ') + 1, ' ') + 1;
    size_t written_len = strlen(written) - 1; /* without the newline */
    assert_true(written_len <= JF_NAME_MAX);
    assert_int_equal(written_len, JF_NAME_MAX - 1);
    assert_memory_equal(written, name, written_len);
    free(data);
    free(name);
}

static void bad_input_writes_nothing(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region bad[] = {test_region(code, 16, NULL), test_region(code, 16, ""), test_region(code, 0, "zero"),
                       test_region(NULL, 16, "null")};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(jf_register(&bad[i]), JF_EINVAL);
    jf_region batch[3] = {test_region(code, 16, "one"), test_region(code + 16, 16, "two"),
                          test_region(code + 32, 0, "three")};
    assert_int_equal(jf_register_batch(batch, 3), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "region 2"));
    jf_region ok = test_region(code, 16, "ok");
    assert_int_equal(jf_register(&ok), 0);
    assert_int_equal(jf_register(&ok), JF_EEXIST);
    assert_int_equal(jf_unregister(code + 1), JF_ENOENT);
    assert_int_equal(jf_unregister(code), 0); /* the map cannot express it */
    char *data = read_valid_map(1);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "ok"));
    free(data);
}

static void batch_writes_one_line_per_region_in_order(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    /* Enough lines to need several writes of the sink's line buffer. */
    enum { N = 2000 };
    static jf_region batch[N];
    static char names[N][64];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "batch_%04d_%.*s", i, 20 + i % 20,
                 "padpadpadpadpadpadpadpadpadpadpadpadpadpad");
        batch[i] = test_region(code + 32 * i, 32, names[i]);
    }
    assert_int_equal(jf_register_batch(batch, N), 0);
    char *data = read_valid_map(N);
    const char *p = data;
    for (int i = 0; i < N; i++) {
        char want[128];
        map_format_line(want, sizeof want, (uintptr_t)(code + 32 * i), 32, names[i]);
        assert_int_equal(strncmp(p, want, strlen(want)), 0);
        p += strlen(want);
    }
    free(data);
}

static void regions_registered_before_enabling_are_replayed(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(0), 0);
    jf_region a = test_region(code, 16, "early_a");
    jf_region b = test_region(code + 16, 16, "early_b");
    jf_region gone = test_region(code + 32, 16, "early_gone");
    assert_int_equal(jf_register(&a), 0);
    assert_int_equal(jf_register(&b), 0);
    assert_int_equal(jf_register(&gone), 0);
    assert_int_equal(jf_unregister(code + 32), 0);
    assert_null(map_read(getpid(), NULL)); /* nothing written while off */

    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    assert_int_equal(jf_enabled_sinks(), JF_SINK_PERFMAP);
    jf_region c = test_region(code + 48, 16, "late_c");
    assert_int_equal(jf_register(&c), 0);
    char *data = read_valid_map(3);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "early_a"));
    assert_true(map_has_line(data, (uintptr_t)code + 16, 16, "early_b"));
    assert_true(map_has_line(data, (uintptr_t)code + 48, 16, "late_c"));
    assert_int_equal(map_count_name(data, "early_gone"), 0);
    free(data);
}

static void a_second_init_can_enable_the_sink_late(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(0), 0);
    jf_region a = test_region(code, 16, "before_second_init");
    assert_int_equal(jf_register(&a), 0);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    char *data = read_valid_map(1);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "before_second_init"));
    free(data);
}

static void disabled_sink_writes_nothing_and_stays_appendable(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region a = test_region(code, 16, "while_on");
    assert_int_equal(jf_register(&a), 0);
    assert_int_equal(jf_disable(JF_SINK_PERFMAP), 0);
    assert_int_equal(jf_enabled_sinks(), 0);
    jf_region b = test_region(code + 16, 16, "while_off");
    assert_int_equal(jf_register(&b), 0);
    char *data = read_valid_map(1);
    free(data);
    /* Enabling again appends (never truncates) and replays what is live. */
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    data = map_read(getpid(), NULL);
    assert_non_null(data);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "while_on"));
    assert_true(map_has_line(data, (uintptr_t)code + 16, 16, "while_off"));
    free(data);
}

static void stats_count_regions_and_bytes(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.sink[0].enabled, 1);
    assert_int_equal(st.sink[0].failed, 0);
    assert_int_equal(st.sink[0].regions, 0);
    jf_region batch[3] = {test_region(code, 16, "s1"), test_region(code + 16, 16, "s2"),
                          test_region(code + 32, 16, "s3")};
    assert_int_equal(jf_register_batch(batch, 3), 0);
    jf_region one = test_region(code + 48, 16, "s4");
    assert_int_equal(jf_register(&one), 0);
    assert_int_equal(jf_register(&one), JF_EEXIST);
    assert_int_equal(jf_unregister(code), 0);
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    len = map_strip_padding(data, len); /* bytes counts lines, not reserved space */
    free(data);
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.live_regions, 3);
    assert_int_equal(st.sink[0].regions, 4);
    assert_int_equal(st.sink[0].bytes, len);
    assert_int_equal(st.sink[0].errors, 0);
    for (int i = 1; i < JF_SINK_COUNT; i++) {
        assert_int_equal(st.sink[i].enabled, 0);
        assert_int_equal(st.sink[i].regions, 0);
    }
    /* Shutdown forgets the counts. */
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.sink[0].regions, 0);
    assert_int_equal(st.live_regions, 0);
}

static void env_variable_enables_perfmap_for_init_null(void **state)
{
    (void)state;
    setenv("JITFRAMES", "perfmap", 1);
    int rc = jf_init(NULL);
    unsetenv("JITFRAMES");
    assert_int_equal(rc, 0);
    assert_int_equal(jf_enabled_sinks(), JF_SINK_PERFMAP);
    jf_region a = test_region(code, 16, "from_env");
    assert_int_equal(jf_register(&a), 0);
    char *data = read_valid_map(1);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "from_env"));
    free(data);
}

static void reinit_after_shutdown_appends_to_our_map(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region a = test_region(code, 16, "first_life");
    assert_int_equal(jf_register(&a), 0);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region b = test_region(code, 16, "second_life");
    assert_int_equal(jf_register(&b), 0);
    char *data = read_valid_map(2);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "first_life"));
    assert_true(map_has_line(data, (uintptr_t)code, 16, "second_life"));
    free(data);
}

static void map_is_created_mode_0600(void **state)
{
    (void)state;
    mode_t old = umask(0);
    int rc = test_init_with(JF_SINK_PERFMAP);
    umask(old);
    assert_int_equal(rc, 0);
    char path[64];
    struct stat st;
    assert_int_equal(lstat(map_path(path, sizeof path, getpid()), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_uid, geteuid());
}

int main(void)
{
    unsetenv("JITFRAMES");
    test_reset(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(line_is_lowercase_hex_single_spaces_and_newline, test_reset),
        cmocka_unit_test_teardown(control_characters_in_names_become_question_marks, test_reset),
        cmocka_unit_test_teardown(invalid_utf8_becomes_one_question_mark_per_byte, test_reset),
        cmocka_unit_test_teardown(huge_name_is_cut_at_a_character_boundary, test_reset),
        cmocka_unit_test_teardown(bad_input_writes_nothing, test_reset),
        cmocka_unit_test_teardown(batch_writes_one_line_per_region_in_order, test_reset),
        cmocka_unit_test_teardown(regions_registered_before_enabling_are_replayed, test_reset),
        cmocka_unit_test_teardown(a_second_init_can_enable_the_sink_late, test_reset),
        cmocka_unit_test_teardown(disabled_sink_writes_nothing_and_stays_appendable, test_reset),
        cmocka_unit_test_teardown(stats_count_regions_and_bytes, test_reset),
        cmocka_unit_test_teardown(env_variable_enables_perfmap_for_init_null, test_reset),
        cmocka_unit_test_teardown(reinit_after_shutdown_appends_to_our_map, test_reset),
        cmocka_unit_test_teardown(map_is_created_mode_0600, test_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
