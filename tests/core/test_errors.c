/* Error codes, jf_strerror, the thread-local last error and jf_parse_sinks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "jitframes.h"

static const struct {
    int code;
    const char *name;
} all_codes[] = {
    {JF_OK, "JF_OK"},           {JF_EINVAL, "JF_EINVAL"},
    {JF_ENOMEM, "JF_ENOMEM"},   {JF_ENOTINIT, "JF_ENOTINIT"},
    {JF_EEXIST, "JF_EEXIST"},   {JF_ENOENT, "JF_ENOENT"},
    {JF_EUNSAFE, "JF_EUNSAFE"}, {JF_EACCES, "JF_EACCES"},
    {JF_ENOSPC, "JF_ENOSPC"},   {JF_EFBIG, "JF_EFBIG"},
    {JF_EIO, "JF_EIO"},         {JF_EDISABLED, "JF_EDISABLED"},
    {JF_ENOTSUP, "JF_ENOTSUP"}, {JF_ERANGE, "JF_ERANGE"},
    {JF_ESINK, "JF_ESINK"},     {JF_EINTERNAL, "JF_EINTERNAL"},
};
enum { N_CODES = sizeof all_codes / sizeof all_codes[0] };

static void strerror_names_every_code(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CODES; i++) {
        const char *s = jf_strerror(all_codes[i].code);
        size_t n = strlen(all_codes[i].name);
        assert_non_null(s);
        assert_int_equal(strncmp(s, all_codes[i].name, n), 0);
        assert_true(s[n] == ':' && strlen(s) > n + 2);
        for (size_t k = 0; k < i; k++)
            assert_string_not_equal(s, jf_strerror(all_codes[k].code));
    }
}

static void strerror_of_unknown_code_says_unknown(void **state)
{
    (void)state;
    const int unknown[] = {1, -16, -1000, 12345, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = jf_strerror(unknown[i]);
        assert_non_null(s);
        assert_non_null(strstr(s, "unknown"));
    }
}

static void version_string_is_the_headers(void **state)
{
    (void)state;
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", JF_VERSION_MAJOR, JF_VERSION_MINOR, JF_VERSION_PATCH);
    assert_string_equal(jf_version_string(), expect);
}

/* jf_sink_name gives, for each sink bit, the word jf_parse_sinks reads back
 * as that bit; NULL for anything but one known bit; no jf_init needed, and
 * the thread's last error is kept. */
static void sink_name_is_the_word_parse_sinks_reads(void **state)
{
    (void)state;
    static const char *const words[JF_SINK_COUNT] = {"perfmap", "jitdump", "gdb", "unwind"};
    unsigned bits = 0;
    assert_int_equal(jf_parse_sinks("junk", &bits), JF_EINVAL);
    char kept[256];
    snprintf(kept, sizeof kept, "%s", jf_last_error());
    for (int i = 0; i < JF_SINK_COUNT; i++)
        assert_string_equal(jf_sink_name(1u << i), words[i]);
    assert_null(jf_sink_name(0));
    assert_string_equal(jf_last_error(), kept);
    for (int i = 0; i < JF_SINK_COUNT; i++) {
        const char *name = jf_sink_name(1u << i);
        assert_non_null(name);
        assert_int_equal(jf_parse_sinks(name, &bits), 0);
        assert_int_equal(bits, 1u << i);
    }
    assert_string_equal(jf_sink_name(JF_SINK_GDB), "gdb");
    assert_null(jf_sink_name(0));
    assert_null(jf_sink_name(1u << JF_SINK_COUNT)); /* no sink has this bit */
    assert_null(jf_sink_name(0x80000000u));
    assert_null(jf_sink_name(JF_SINK_PERFMAP | JF_SINK_GDB)); /* several bits */
    assert_null(jf_sink_name(JF_SINK_ALL));
    assert_null(jf_sink_name(~0u));
}

static void parse_sinks_reads_every_word(void **state)
{
    (void)state;
    unsigned bits = 99;
    assert_int_equal(jf_parse_sinks("perfmap", &bits), 0);
    assert_int_equal(bits, JF_SINK_PERFMAP);
    assert_int_equal(jf_parse_sinks("jitdump,gdb", &bits), 0);
    assert_int_equal(bits, JF_SINK_JITDUMP | JF_SINK_GDB);
    assert_int_equal(jf_parse_sinks("unwind,perfmap,unwind", &bits), 0);
    assert_int_equal(bits, JF_SINK_UNWIND | JF_SINK_PERFMAP);
    assert_int_equal(jf_parse_sinks("all", &bits), 0);
    assert_int_equal(bits, JF_SINK_ALL);
    assert_int_equal(jf_parse_sinks("", &bits), 0);
    assert_int_equal(bits, 0);
    assert_int_equal(jf_parse_sinks(",perfmap,,", &bits), 0);
    assert_int_equal(bits, JF_SINK_PERFMAP);
}

static void parse_sinks_forgives_spaces_and_case(void **state)
{
    (void)state;
    unsigned bits = 0;
    assert_int_equal(jf_parse_sinks("perfmap, jitdump", &bits), 0);
    assert_int_equal(bits, JF_SINK_PERFMAP | JF_SINK_JITDUMP);
    assert_int_equal(jf_parse_sinks(" PERFMAP ,\tGdb ", &bits), 0);
    assert_int_equal(bits, JF_SINK_PERFMAP | JF_SINK_GDB);
    assert_int_equal(jf_parse_sinks("1", &bits), 0);
    assert_int_equal(bits, JF_SINK_ALL);
    assert_int_equal(jf_parse_sinks("ALL", &bits), 0);
    assert_int_equal(bits, JF_SINK_ALL);
    assert_int_equal(jf_parse_sinks("perf map", &bits), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "'perf map'"));
    assert_int_equal(jf_parse_sinks("10", &bits), JF_EINVAL);
}

static void parse_sinks_rejects_unknown_words(void **state)
{
    (void)state;
    unsigned bits = 0x55;
    assert_int_equal(jf_parse_sinks("perfmap,perfmapx", &bits), JF_EINVAL);
    assert_int_equal(bits, 0x55); /* untouched on error */
    assert_non_null(strstr(jf_last_error(), "'perfmapx'"));
    assert_int_equal(jf_parse_sinks("perf", &bits), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "'perf'"));
    assert_int_equal(jf_parse_sinks("perfmap,0", &bits), JF_EINVAL);
    assert_int_equal(jf_parse_sinks(NULL, &bits), JF_EINVAL);
    assert_int_equal(jf_parse_sinks("perfmap", NULL), JF_EINVAL);
    /* A success clears the previous message. */
    assert_int_equal(jf_parse_sinks("gdb", &bits), 0);
    assert_string_equal(jf_last_error(), "");
}

static void parse_sinks_keeps_huge_words_short_in_the_message(void **state)
{
    (void)state;
    char word[2000];
    memset(word, 'x', sizeof word - 1);
    word[sizeof word - 1] = '\0';
    unsigned bits;
    assert_int_equal(jf_parse_sinks(word, &bits), JF_EINVAL);
    assert_true(strlen(jf_last_error()) < 300);
    assert_non_null(strstr(jf_last_error(), "unknown sink"));
}

static void *fail_in_other_thread(void *arg)
{
    unsigned bits;
    int *rc = arg;
    *rc = jf_parse_sinks("from-the-other-thread", &bits);
    return (void *)(strstr(jf_last_error(), "from-the-other-thread") != NULL ? (void *)1 : NULL);
}

static void last_error_is_per_thread(void **state)
{
    (void)state;
    unsigned bits;
    assert_int_equal(jf_parse_sinks("mine", &bits), JF_EINVAL);
    pthread_t t;
    int other_rc = 0;
    void *other_saw_its_own = NULL;
    assert_int_equal(pthread_create(&t, NULL, fail_in_other_thread, &other_rc), 0);
    assert_int_equal(pthread_join(t, &other_saw_its_own), 0);
    assert_int_equal(other_rc, JF_EINVAL);
    assert_non_null(other_saw_its_own);
    assert_non_null(strstr(jf_last_error(), "'mine'"));
    assert_null(strstr(jf_last_error(), "other-thread"));
}

static void *read_fresh_thread_error(void *arg)
{
    (void)arg;
    return (void *)(jf_last_error()[0] == '\0' ? (void *)1 : NULL);
}

static void last_error_starts_empty_in_a_new_thread(void **state)
{
    (void)state;
    unsigned bits;
    assert_int_equal(jf_parse_sinks("junk", &bits), JF_EINVAL);
    pthread_t t;
    void *empty = NULL;
    assert_int_equal(pthread_create(&t, NULL, read_fresh_thread_error, NULL), 0);
    assert_int_equal(pthread_join(t, &empty), 0);
    assert_non_null(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strerror_names_every_code),
        cmocka_unit_test(strerror_of_unknown_code_says_unknown),
        cmocka_unit_test(version_string_is_the_headers),
        cmocka_unit_test(parse_sinks_reads_every_word),
        cmocka_unit_test(parse_sinks_forgives_spaces_and_case),
        cmocka_unit_test(parse_sinks_rejects_unknown_words),
        cmocka_unit_test(parse_sinks_keeps_huge_words_short_in_the_message),
        cmocka_unit_test(sink_name_is_the_word_parse_sinks_reads),
        cmocka_unit_test(last_error_is_per_thread),
        cmocka_unit_test(last_error_starts_empty_in_a_new_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
