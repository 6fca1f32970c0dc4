/* Name sanitising at every length a word-at-a-time check has edges at:
 * names of 0 to 40 bytes, each with a bad byte at every position, in
 * buffers of exactly their size (AddressSanitizer sees a read past the NUL)
 * and written into buffers of exactly len + 1 bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "jitframes.h"
#include "name.h"

enum { LONGEST = 40 };

/* name (len bytes of 'a'..'z' then a NUL, with `bad` at position `at` if
 * at < len) sanitised: checked against `expected` at every byte. */
static void check_one(size_t len, size_t at, char bad, const char *expected)
{
    char *name = malloc(len + 1), *out = malloc(len + 1);
    assert_non_null(name);
    assert_non_null(out);
    for (size_t i = 0; i < len; i++)
        name[i] = (char)('a' + i % 26);
    if (at < len)
        name[at] = bad;
    name[len] = '\0';
    size_t written = jf__sanitize_name(out, name, strlen(name));
    assert_int_equal(written, strlen(expected));
    assert_memory_equal(out, expected, written + 1);
    free(name);
    free(out);
}

/* The same name with '?' where the bad byte was. */
static void expected_for(char *want, size_t len, size_t at)
{
    for (size_t i = 0; i < len; i++)
        want[i] = i == at ? '?' : (char)('a' + i % 26);
    want[len] = '\0';
}

static void printable_names_are_copied_whole_at_every_length(void **state)
{
    (void)state;
    char want[LONGEST + 1];
    for (size_t len = 0; len <= LONGEST; len++) {
        expected_for(want, len, LONGEST);
        check_one(len, LONGEST, 0, want);
    }
}

static void a_bad_byte_is_replaced_at_every_position_of_every_length(void **state)
{
    (void)state;
    static const char bad[] = {'\n', '\t', '\x01', '\x7f', (char)0x80, (char)0xff};
    char want[LONGEST + 1];
    for (size_t len = 1; len <= LONGEST; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t b = 0; b < sizeof bad; b++) {
                expected_for(want, len, at);
                check_one(len, at, bad[b], want);
            }
}

static void a_leading_space_is_replaced_at_every_length(void **state)
{
    (void)state;
    char want[LONGEST + 1];
    for (size_t len = 1; len <= LONGEST; len++) {
        expected_for(want, len, 0);
        check_one(len, 0, ' ', want);
    }
}

static void an_inner_space_and_utf8_are_kept(void **state)
{
    (void)state;
    check_one(12, 5, ' ', "abcde ghijkl");
    const char *utf8 = "f\xc3\xa9te \xe2\x82\xac 12345678";
    char out[32];
    assert_int_equal(jf__sanitize_name(out, utf8, strlen(utf8)), strlen(utf8));
    assert_string_equal(out, utf8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printable_names_are_copied_whole_at_every_length),
        cmocka_unit_test(a_bad_byte_is_replaced_at_every_position_of_every_length),
        cmocka_unit_test(a_leading_space_is_replaced_at_every_length),
        cmocka_unit_test(an_inner_space_and_utf8_are_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
