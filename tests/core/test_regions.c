#define _GNU_SOURCE
/* Validation of caller regions and batches, duplicates, unregistration and
 * the live-region count. No sink is enabled here (the perf map tests check
 * what reaches the file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "jitframes.h"
#include "map_util.h"

static unsigned char code[4096];

static uint64_t live_count(void)
{
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    return st.live_regions;
}

static int setup(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    return jf_init(&cfg);
}

static int teardown(void **state)
{
    (void)state;
    return jf_shutdown();
}

static void null_region_is_einval(void **state)
{
    (void)state;
    assert_int_equal(jf_register(NULL), JF_EINVAL);
    assert_true(strlen(jf_last_error()) > 0);
}

static void null_and_empty_names_are_einval(void **state)
{
    (void)state;
    jf_region r = test_region(code, 16, NULL);
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "name"));
    r.name = "";
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "name"));
    assert_int_equal(live_count(), 0);
}

static void size_zero_is_einval(void **state)
{
    (void)state;
    jf_region r = test_region(code, 0, "empty");
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "size is 0"));
    assert_int_equal(live_count(), 0);
}

static void null_address_is_einval(void **state)
{
    (void)state;
    jf_region r = test_region(NULL, 16, "nowhere");
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "NULL"));
    assert_int_equal(live_count(), 0);
}

static void wrapping_range_is_einval(void **state)
{
    (void)state;
    jf_region r = test_region((const void *)(UINTPTR_MAX - 15), 32, "wraps");
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "wrap"));
    r.size = SIZE_MAX;
    r.addr = code;
    assert_int_equal(jf_register(&r), JF_EINVAL);
    /* The highest range that does not wrap is fine. */
    r.addr = (const void *)(UINTPTR_MAX - 31);
    r.size = 31;
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(jf_unregister(r.addr), 0);
}

static void bad_struct_size_is_einval(void **state)
{
    (void)state;
    jf_region r = test_region(code, 16, "sized");
    r.struct_size = 0;
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "struct_size"));
    r.struct_size = 1u << 20;
    assert_int_equal(jf_register(&r), JF_EINVAL);
    assert_int_equal(live_count(), 0);
}

static void huge_name_is_accepted(void **state)
{
    (void)state;
    size_t n = 1u << 20;
    char *name = malloc(n + 1);
    assert_non_null(name);
    memset(name, 'n', n);
    name[n] = '\0';
    jf_region r = test_region(code, 16, name);
    assert_int_equal(jf_register(&r), 0);
    free(name);
    assert_int_equal(live_count(), 1);
    assert_int_equal(jf_unregister(code), 0);
}

static void duplicate_start_is_eexist_and_keeps_the_first(void **state)
{
    (void)state;
    jf_region r = test_region(code, 16, "first");
    assert_int_equal(jf_register(&r), 0);
    jf_region again = test_region(code, 32, "second");
    assert_int_equal(jf_register(&again), JF_EEXIST);
    assert_non_null(strstr(jf_last_error(), "already"));
    assert_int_equal(live_count(), 1);
    assert_int_equal(jf_unregister(code), 0);
    /* The address is free again. */
    assert_int_equal(jf_register(&again), 0);
    assert_int_equal(jf_unregister(code), 0);
}

static void unregister_unknown_is_enoent(void **state)
{
    (void)state;
    assert_int_equal(jf_unregister(code + 8), JF_ENOENT);
    assert_non_null(strstr(jf_last_error(), "no live region"));
    assert_int_equal(jf_unregister(NULL), JF_ENOENT);
    jf_region r = test_region(code, 16, "inside");
    assert_int_equal(jf_register(&r), 0);
    /* Only the start address names a region. */
    assert_int_equal(jf_unregister(code + 1), JF_ENOENT);
    assert_int_equal(jf_unregister(code), 0);
    assert_int_equal(jf_unregister(code), JF_ENOENT);
}

static void empty_batch_is_a_noop(void **state)
{
    (void)state;
    assert_int_equal(jf_register_batch(NULL, 0), 0);
    jf_region r = test_region(code, 16, "unused");
    assert_int_equal(jf_register_batch(&r, 0), 0);
    assert_int_equal(live_count(), 0);
    assert_int_equal(jf_register_batch(NULL, 3), JF_EINVAL);
}

static void batch_with_one_bad_region_registers_nothing(void **state)
{
    (void)state;
    enum { N = 5 };
    jf_region batch[N];
    for (int i = 0; i < N; i++)
        batch[i] = test_region(code + 64 * i, 64, "ok");
    const char *names[N] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < N; i++)
        batch[i].name = names[i];

    batch[3].size = 0;
    assert_int_equal(jf_register_batch(batch, N), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "region 3"));
    assert_int_equal(live_count(), 0);

    batch[3].size = 64;
    batch[4].name = NULL;
    assert_int_equal(jf_register_batch(batch, N), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "region 4"));
    assert_int_equal(live_count(), 0);

    batch[4].name = "e";
    batch[2].struct_size = sizeof(jf_region) - 8;
    assert_int_equal(jf_register_batch(batch, N), JF_EINVAL);
    assert_non_null(strstr(jf_last_error(), "region 2"));
    assert_int_equal(live_count(), 0);

    batch[2].struct_size = sizeof(jf_region);
    assert_int_equal(jf_register_batch(batch, N), 0);
    assert_int_equal(live_count(), N);
}

static void batch_clashing_with_a_live_region_registers_nothing(void **state)
{
    (void)state;
    jf_region live = test_region(code + 128, 64, "live");
    assert_int_equal(jf_register(&live), 0);
    jf_region batch[3] = {test_region(code, 64, "x"), test_region(code + 64, 64, "y"),
                          test_region(code + 128, 64, "z")};
    assert_int_equal(jf_register_batch(batch, 3), JF_EEXIST);
    assert_non_null(strstr(jf_last_error(), "region 2"));
    assert_int_equal(live_count(), 1);
    assert_int_equal(jf_unregister(code), JF_ENOENT);
    assert_int_equal(jf_unregister(code + 64), JF_ENOENT);
    assert_int_equal(jf_unregister(code + 128), 0);
}

static void batch_with_a_duplicate_inside_registers_nothing(void **state)
{
    (void)state;
    jf_region batch[3] = {test_region(code, 64, "x"), test_region(code + 64, 64, "y"),
                          test_region(code, 32, "x again")};
    assert_int_equal(jf_register_batch(batch, 3), JF_EEXIST);
    assert_non_null(strstr(jf_last_error(), "region 2"));
    assert_int_equal(live_count(), 0);
}

static void bad_line_tables_are_einval(void **state)
{
    (void)state;
    jf_region r = test_region(code, 64, "lined");
    r.n_lines = 2;
    assert_int_equal(jf_register(&r), JF_EINVAL); /* lines NULL */
    jf_line lines[2] = {{0, 1, "a.c"}, {80, 2, "a.c"}};
    r.lines = lines;
    assert_int_equal(jf_register(&r), JF_EINVAL); /* offset outside */
    lines[0].offset = 40;
    lines[1].offset = 8;
    assert_int_equal(jf_register(&r), JF_EINVAL); /* unsorted */
    lines[0].offset = 0;
    lines[1].file = NULL;
    assert_int_equal(jf_register(&r), JF_EINVAL); /* no file anywhere */
    r.file = "b.c";
    assert_int_equal(jf_register(&r), 0);
    assert_int_equal(live_count(), 1);
}

static void caller_memory_may_be_freed_after_register(void **state)
{
    (void)state;
    char *name = strdup("transient");
    char *file = strdup("transient.c");
    jf_line *lines = calloc(1, sizeof *lines);
    assert_non_null(name);
    assert_non_null(file);
    assert_non_null(lines);
    lines[0].line = 3;
    lines[0].file = file;
    jf_region r = test_region(code, 64, name);
    r.file = file;
    r.lines = lines;
    r.n_lines = 1;
    assert_int_equal(jf_register(&r), 0);
    free(name);
    free(file);
    free(lines);
    /* ASan would report a use-after-free if the registry kept pointers. */
    assert_int_equal(jf_unregister(code), 0);
}

static void many_regions_are_counted_and_removed(void **state)
{
    (void)state;
    enum { N = 3000 };
    static unsigned char big[N * 4];
    for (int i = 0; i < N; i++) {
        jf_region r = test_region(big + 4 * i, 4, "many");
        assert_int_equal(jf_register(&r), 0);
    }
    assert_int_equal(live_count(), N);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(jf_unregister(big + 4 * i), 0);
    assert_int_equal(live_count(), N / 2);
    for (int i = 1; i < N; i += 2)
        assert_int_equal(jf_unregister(big + 4 * i), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(jf_unregister(big + 4 * i), JF_ENOENT);
    assert_int_equal(live_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(null_region_is_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(null_and_empty_names_are_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(size_zero_is_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(null_address_is_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(wrapping_range_is_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_struct_size_is_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(huge_name_is_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(duplicate_start_is_eexist_and_keeps_the_first, setup, teardown),
        cmocka_unit_test_setup_teardown(unregister_unknown_is_enoent, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_batch_is_a_noop, setup, teardown),
        cmocka_unit_test_setup_teardown(batch_with_one_bad_region_registers_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(batch_clashing_with_a_live_region_registers_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(batch_with_a_duplicate_inside_registers_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_line_tables_are_einval, setup, teardown),
        cmocka_unit_test_setup_teardown(caller_memory_may_be_freed_after_register, setup, teardown),
        cmocka_unit_test_setup_teardown(many_regions_are_counted_and_removed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
