/*
 * A perf map written by the library itself passes `jitframes check`:
 * single regions, a batch, nasty names (newline, tab, CR, ESC, invalid
 * UTF-8, a 1 MiB name), and a replay after late enabling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitframes.h"
#include "perfmap_reader.h"

static char map_name[64];

static uint8_t *read_map(size_t *len)
{
    FILE *f = fopen(map_name, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static int setup(void **state)
{
    (void)state;
    snprintf(map_name, sizeof map_name, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map_name);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    while (jf_shutdown() == 0) {
    }
    unlink(map_name);
    return 0;
}

static void register_one(uintptr_t addr, size_t size, const char *name)
{
    jf_region r = JF_REGION_INIT;
    r.addr = (const void *)addr;
    r.size = size;
    r.name = name;
    assert_int_equal(jf_register(&r), 0);
}

static void library_map_passes_check(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    assert_int_equal(jf_init(&cfg), 0);
    /* Regions registered before the sink is on are replayed when it starts. */
    register_one(0x10000, 0x40, "before_enabling");
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);

    static const char *const nasty[] = {
        "line\nbreak",
        "tab\there",
        "cr\rhere",
        "esc\033[31mred",
        "bad\xff\xfeutf8",
        "truncated\xc3",
        "caf\xc3\xa9 \xe2\x82\xac",
        "spaces in name",
        "del\x7f",
    };
    for (size_t i = 0; i < sizeof nasty / sizeof nasty[0]; i++)
        register_one(0x20000 + i * 0x100, 0x80, nasty[i]);

    size_t big = 1 << 20;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    memset(huge, 'x', big);
    huge[big] = '\0';
    register_one(0x30000, 0x10, huge);
    free(huge);

    jf_region batch[64];
    char names[64][32];
    for (int i = 0; i < 64; i++) {
        jf_region r = JF_REGION_INIT;
        snprintf(names[i], sizeof names[i], "batch_%d", i);
        r.addr = (const void *)(uintptr_t)(0x40000 + i * 0x20);
        r.size = 0x20;
        r.name = names[i];
        batch[i] = r;
    }
    assert_int_equal(jf_register_batch(batch, 64), 0);
    assert_int_equal(jf_shutdown(), 0);

    size_t len = 0;
    uint8_t *map = read_map(&len);
    assert_non_null(map);
    jft_error err = {0};
    pm_summary s;
    int rc = pm_check(map, len, &s, &err);
    if (rc)
        print_error("%s:%llu: %s\n", map_name, (unsigned long long)err.where, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s.entries, 1 + 9 + 1 + 64);
    assert_int_equal(s.duplicates, 0);
    free(map);
}

/* Negative control: the same check rejects the map once it is damaged. */
static void damaged_library_map_fails_check(void **state)
{
    (void)state;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_PERFMAP;
    assert_int_equal(jf_init(&cfg), 0);
    register_one(0x50000, 0x40, "first");
    register_one(0x50040, 0x40, "second");
    assert_int_equal(jf_shutdown(), 0);
    size_t len = 0;
    uint8_t *map = read_map(&len);
    assert_non_null(map);
    /* The last entry's newline gone (the blank lines after it are space the
     * library reserved and did not use). */
    while (len > 0 && map[len - 1] == '\n')
        len--;
    assert_true(len > 2);
    jft_error err = {0};
    assert_int_equal(pm_check(map, len, NULL, &err), -1);
    uint64_t last_line = 1; /* the line "second" is on (a blank line may precede it) */
    for (size_t i = 0; i < len; i++)
        last_line += map[i] == '\n';
    assert_int_equal(err.where, last_line);
    assert_non_null(strstr(err.msg, "no trailing newline"));
    free(map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(library_map_passes_check, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_library_map_fails_check, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
