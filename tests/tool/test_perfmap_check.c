/*
 * `jitframes check` on perf maps: valid maps pass, and every kind of defect
 * is reported on the right line with the right message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap_reader.h"

typedef struct bad_map {
    const char *text;
    uint64_t line;
    const char *message; /* substring of the expected message */
} bad_map;

static const bad_map bad_maps[] = {
    {"1000 10 a", 1, "last line has no trailing newline"},
    {"1000 10 a\n2000 10 b", 2, "last line has no trailing newline"},
    {"#1000 10 a\n", 1, "unexpected byte 0x23 in start address"}, /* one '#' is no hiding */
    {"1000 10 a\n##10 a", 2, "unexpected byte 0x23"},             /* nor an unterminated one */
    {" 1000 10 a\n", 1, "line starts with a space"},
    {"1000  10 a\n", 1, "more than one space between fields"},
    {"1000 10  a\n", 1, "more than one space between size and name"},
    {"0x1000 10 a\n", 1, "start address has a 0x prefix"},
    {"1000 0X10 a\n", 1, "size has a 0x prefix"},
    {"10AB 10 a\n", 1, "uppercase hex digit 'A' in start address"},
    {"1000 1F a\n", 1, "uppercase hex digit 'F' in size"},
    {"1000\t10 a\n", 1, "tab in start address"},
    {"1000 10\ta\n", 1, "tab in size"},
    {"1000 1g a\n", 1, "unexpected byte 0x67 in size"},
    {"1000 10 a\tb\n", 1, "control character 0x09 in name at byte 1"},
    {"1000 10 ab\r\n", 1, "control character 0x0d in name at byte 2"},
    {"1000 10 a\033[31m\n", 1, "control character 0x1b"},
    {"1000 10 a\x7f\n", 1, "control character 0x7f"},
    {"1000 10 a\xff\n", 1, "invalid UTF-8 (byte 0xff) in name at byte 1"},
    {"1000 10 a\xc3\n", 1, "invalid UTF-8 (byte 0xc3)"},
    {"1000 10 \xc0\xaf\n", 1, "invalid UTF-8 (byte 0xc0)"},
    {"1000 10 \xed\xa0\x80\n", 1, "invalid UTF-8 (byte 0xed)"},
    {"1000 10 \xf4\x90\x80\x80\n", 1, "invalid UTF-8 (byte 0xf4)"},
    {"1000 0 a\n", 1, "size is 0"},
    {"1000 10 \n", 1, "empty name"},
    {"1000 10\n", 1, "line ends after the size"},
    {"1000\n", 1, "line ends after the start address"},
    {"10000000000000000 10 a\n", 1, "start address does not fit in 64 bits"},
    {"ffffffffffffff00 200 a\n", 1, "wraps past the end of the address space"},
    {"1000 10 a\n1008 10 b\n", 2, "overlaps line 1 (1000-1010)"},
    {"1000 10 a\n1000 10 b\n", 2, "overlaps line 1"},
    {"1000 10 a\n1000 8 a\n", 2, "overlaps line 1"},
    {"1000 10 a\n3000 10 c\n1008 10 b\n", 3, "region 1008-1018 overlaps line 1"},
    {"2000 10 a\n1000 10 b\n1000 10 b\n1008 1 c\n", 4, "overlaps line 2"},
    {"1000 100 a\n3000 10 b\n1080 10 c\n", 3, "overlaps line 1"},
    /* the first problem in file order wins, whatever its kind */
    {"1000 10 a\n1000 20 b\nZZ\n", 2, "overlaps line 1"},
    {"1000 10 a\nZZ\n1000 20 b\n", 2, "unexpected byte 0x5a in start address"},
};

static void every_defect_is_reported_on_its_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_maps / sizeof bad_maps[0]; i++) {
        const bad_map *b = &bad_maps[i];
        jft_error err = {0};
        int rc = pm_check((const uint8_t *)b->text, strlen(b->text), NULL, &err);
        if (rc != -1 || err.where != b->line || !strstr(err.msg, b->message)) {
            print_error("case %zu: rc %d, line %llu, message \"%s\"; expected line %llu, \"%s\"\n", i, rc,
                        (unsigned long long)err.where, err.msg, (unsigned long long)b->line, b->message);
            fail();
        }
    }
}

typedef struct good_map {
    const char *text;
    uint64_t entries, duplicates, padding, unpublished;
} good_map;

static const good_map good_maps[] = {
    {"", 0, 0, 0, 0},
    {"1000 10 a\n", 1, 0, 0, 0},
    {"7f12abcd0000 40 py::foo:/src/app.py\n7f12abcd0040 40 bar baz\n", 2, 0, 0, 0},
    {"1000 10 a\n1010 10 b\n", 2, 0, 0, 0},                               /* adjacent is fine */
    {"2000 10 b\n1000 10 a\n", 2, 0, 0, 0},                               /* any order */
    {"1000 10 a\n1000 10 a\n", 2, 1, 0, 0},                               /* an exact repeat is harmless */
    {"0000000000001000 10 a\n", 1, 0, 0, 0},                              /* leading zeros */
    {"1000 10 h\xc3\xa9llo \xe2\x82\xac \xf0\x9d\x84\x9e\n", 1, 0, 0, 0}, /* UTF-8 */
    {"ffffffffffffff00 f0 top\n", 1, 0, 0, 0},
    /* space a writer reserved and has not used (blank lines: every reader
     * skips them), anywhere in the file */
    {"\n", 0, 0, 1, 0},
    {"1000 10 a\n\n\n\n", 1, 0, 3, 0},
    {"1000 10 a\n\n\n2000 10 b\n\n", 2, 0, 3, 0},
    /* a line its writer was killed before publishing: "##" then anything */
    {"1000 10 a\n########\n\n\n", 1, 0, 2, 1},
    {"1000 10 a\n##00000 10 b####\n\n", 1, 0, 1, 1},
    {"##\n1000 10 a\n", 1, 0, 0, 1},
};

static void valid_maps_pass(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof good_maps / sizeof good_maps[0]; i++) {
        const good_map *g = &good_maps[i];
        jft_error err = {0};
        pm_summary s;
        int rc = pm_check((const uint8_t *)g->text, strlen(g->text), &s, &err);
        if (rc != 0 || s.entries != g->entries || s.duplicates != g->duplicates || s.padding != g->padding ||
            s.unpublished != g->unpublished) {
            print_error("case %zu: rc %d (%s), %llu entries, %llu duplicates, %llu padding, "
                        "%llu unpublished\n",
                        i, rc, err.msg, (unsigned long long)s.entries, (unsigned long long)s.duplicates,
                        (unsigned long long)s.padding, (unsigned long long)s.unpublished);
            fail();
        }
    }
}

static void count_entry(void *ctx, const pm_entry *e)
{
    pm_entry *last = ctx;
    *last = *e;
    last->line += 1000; /* mark that we were called */
}

static void parse_reports_fields(void **state)
{
    (void)state;
    const char *text = "1000 10 a\n7fffdeadbeef 123 \xc3\xa9t\xc3\xa9 x\n";
    pm_entry last = {0};
    jft_error err = {0};
    assert_int_equal(pm_parse((const uint8_t *)text, strlen(text), count_entry, &last, &err), 0);
    assert_int_equal(last.line, 1002);
    assert_int_equal(last.start, 0x7fffdeadbeefULL);
    assert_int_equal(last.size, 0x123);
    assert_int_equal(last.name_len, strlen("\xc3\xa9t\xc3\xa9 x"));
    assert_memory_equal(last.name, "\xc3\xa9t\xc3\xa9 x", last.name_len);
}

/* The overlap search must stay fast on big maps (1M lines, no overlap, and
 * one overlap at the very end). */
static void big_maps_are_checked_quickly(void **state)
{
    (void)state;
    enum { N = 200000 };
    size_t cap = (size_t)N * 32;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t len = 0;
    for (unsigned i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "%x 10 f%u\n", 0x100000u + (i * 7919u % N) * 0x10u, i);
    jft_error err = {0};
    pm_summary s;
    assert_int_equal(pm_check((const uint8_t *)text, len, &s, &err), 0);
    assert_int_equal(s.entries, N);
    len += (size_t)snprintf(text + len, cap - len, "%x 20 late\n", 0x100008u);
    assert_int_equal(pm_check((const uint8_t *)text, len, &s, &err), -1);
    assert_int_equal(err.where, N + 1);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_defect_is_reported_on_its_line),
        cmocka_unit_test(valid_maps_pass),
        cmocka_unit_test(parse_reports_fields),
        cmocka_unit_test(big_maps_are_checked_quickly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
