/*
 * A stand-in for the subset of cmocka's API the trampoline tests use, for
 * cross builds (Debian has no cmocka for riscv64 in this release). Same
 * names and semantics: a failed assertion ends the current test, the group
 * runner returns the number of failed tests.
 */
#ifndef JF_CROSS_CMOCKA_H
#define JF_CROSS_CMOCKA_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
    const char *name;
    CMUnitTestFunction test_func;
};

#define cmocka_unit_test(f) \
    {                       \
#f, f               \
    }

static jmp_buf cross_cmocka_jump;

static void cross_cmocka_fail(const char *file, int line, const char *what)
{
    printf("[  ERROR   ] %s:%d: %s\n", file, line, what);
    fflush(stdout);
    longjmp(cross_cmocka_jump, 1);
}

#define CROSS_CHECK(cond, what)                          \
    do {                                                 \
        if (!(cond))                                     \
            cross_cmocka_fail(__FILE__, __LINE__, what); \
    } while (0)

#define assert_true(c) CROSS_CHECK((c), #c)
#define assert_false(c) CROSS_CHECK(!(c), "!(" #c ")")
#define assert_int_equal(a, b) CROSS_CHECK((intmax_t)(a) == (intmax_t)(b), #a " == " #b)
#define assert_ptr_equal(a, b) CROSS_CHECK((const void *)(a) == (const void *)(b), #a " == " #b)
#define assert_null(p) CROSS_CHECK((p) == NULL, #p " == NULL")
#define assert_non_null(p) CROSS_CHECK((p) != NULL, #p " != NULL")
#define assert_string_equal(a, b) CROSS_CHECK(strcmp((a), (b)) == 0, #a " equals " #b)

static int cross_cmocka_run(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                            CMFixtureFunction teardown)
{
    void *state = NULL;
    if (setup && setup(&state) != 0) {
        printf("[  ERROR   ] group setup failed\n");
        return (int)n;
    }
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        printf("[ RUN      ] %s\n", tests[i].name);
        fflush(stdout);
        if (setjmp(cross_cmocka_jump) == 0) {
            tests[i].test_func(&state);
            printf("[       OK ] %s\n", tests[i].name);
        } else {
            printf("[  FAILED  ] %s\n", tests[i].name);
            failed++;
        }
    }
    if (teardown && teardown(&state) != 0)
        failed++;
    return failed;
}

#define cmocka_run_group_tests(tests, setup, teardown) \
    cross_cmocka_run((tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#endif
