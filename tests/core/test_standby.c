/* Standby: initialised with no sink, jitframes keeps the registry and
 * writes nothing at all — no perf map, no dump, not even the dump's
 * directory; a sink enabled later gets every region still live, and none
 * that was unregistered meanwhile. */
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

enum { REGIONS = 100 };

static unsigned char code[REGIONS * 16];
static char dir[] = "/tmp/jf-standby-XXXXXX";
static char dump_dir[sizeof dir + 16];

static void standby_writes_nothing_and_replays_on_enable(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(dump_dir, sizeof dump_dir, "%s/dumps", dir); /* does not exist */
    map_remove(getpid());
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    c.sinks = 0;
    c.dump_dir = dump_dir;
    assert_int_equal(jf_init(&c), 0);
    assert_int_equal(jf_enabled_sinks(), 0);
    char name[32];
    for (int i = 0; i < REGIONS; i++) {
        snprintf(name, sizeof name, "standby_%d", i);
        jf_region r = test_region(code + 16 * i, 16, name);
        assert_int_equal(jf_register(&r), 0);
    }
    assert_int_equal(jf_unregister(code), 0); /* gone before any sink saw it */

    char path[128];
    struct stat st;
    assert_int_equal(stat(map_path(path, sizeof path, getpid()), &st), -1);
    assert_int_equal(test_dir_entries(dir), 0); /* not even the dump directory */

    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    size_t len;
    char *map = map_read(getpid(), &len);
    assert_non_null(map);
    assert_int_equal(map_count_name(map, "standby_0"), 0);
    for (int i = 1; i < REGIONS; i++) {
        snprintf(name, sizeof name, "standby_%d", i);
        assert_true(map_has_line(map, (uintptr_t)(code + 16 * i), 16, name));
    }
    free(map);
    assert_int_equal(jf_shutdown(), 0);
    map_remove(getpid());
    assert_int_equal(test_dir_entries(dir), 0);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(standby_writes_nothing_and_replays_on_enable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
