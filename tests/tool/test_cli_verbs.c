/*
 * The tool's one list of verbs (tools/cli/cli_verbs.c): every verb has a
 * name, found again by it, and a part of the usage text (cli_usage.c indexes
 * the list): a verb added to the list without its usage fails here.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_verbs.h"

static void every_verb_is_found_by_its_name(void **state)
{
    (void)state;
    for (int v = 0; v < JFT_N_VERBS; v++) {
        const char *name = jft_verb_name((jft_verb)v);
        assert_non_null(name);
        assert_int_equal(jft_verb_find(name), v);
    }
    assert_int_equal(jft_verb_find("bogus"), -1);
    assert_int_equal(jft_verb_find(""), -1);
    assert_int_equal(jft_verb_find("chec"), -1);
    assert_int_equal(jft_verb_find("check dump"), -1);
}

static void names_are_joined_in_the_lists_order(void **state)
{
    (void)state;
    char buf[128];
    jft_verb_set set = JFT_VERB_BIT(JFT_VERB_REGIONS) | JFT_VERB_BIT(JFT_VERB_STATUS);
    assert_string_equal(jft_verb_names(set, '|', buf, sizeof buf), "status|regions");
    assert_string_equal(jft_verb_names(JFT_ALL_VERBS, ' ', buf, sizeof buf),
                        "check dump clean enable disable status record regions perfmap help completions");
    assert_string_equal(jft_verb_names(0, ' ', buf, sizeof buf), "");
    /* too small: whole names only, still a string */
    assert_string_equal(jft_verb_names(JFT_ALL_VERBS, ' ', buf, 16), "check dump");
    assert_string_equal(jft_verb_names(JFT_ALL_VERBS, ' ', buf, 1), "");
}

/* `jitframes VERB --help` has a synopsis line and a section for each verb. */
static void every_verb_has_its_usage(void **state)
{
    (void)state;
    for (int v = 0; v < JFT_N_VERBS; v++) {
        const char *name = jft_verb_name((jft_verb)v);
        char *text = NULL, want[64];
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        assert_non_null(out);
        jft_usage(out, name);
        fclose(out);
        snprintf(want, sizeof want, "usage: jitframes %s ", name);
        if (strncmp(text, want, strlen(want)) != 0 || !strstr(text, "\n\n") ||
            strlen(strstr(text, "\n\n")) < 200)
            fail_msg("verb %s: usage is \"%s\"", name, text);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_verb_is_found_by_its_name),
        cmocka_unit_test(names_are_joined_in_the_lists_order),
        cmocka_unit_test(every_verb_has_its_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
