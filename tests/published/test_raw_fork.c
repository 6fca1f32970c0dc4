/* A child made by a raw fork system call (syscall(SYS_fork) or clone
 * without the libc wrapper: no pthread_atfork handler runs, and the
 * table's MADV_DONTFORK mapping is absent) registers and unregisters, and
 * gets its own table, perf map, jitdump and gdb descriptor, as a child of
 * fork() does; the parent's stay untouched. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dump_parse.h"
#include "gdb_jit_view.h"
#include "jitframes.h"
#include "map_util.h"
#include "process_mark.h"
#include "table_reader.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static uint8_t code[4096] __attribute__((aligned(64)));

/* fork as the system call alone: glibc's fork() wrapper is what runs the
 * atfork handlers. */
static pid_t raw_fork(void)
{
#ifdef SYS_fork
    pid_t pid = (pid_t)syscall(SYS_fork);
#else
    pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
    if (pid == 0) { /* a crash kills the child: cmocka's handlers would run the next test in it */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGABRT, SIG_DFL);
    }
    return pid;
}

static int reg(size_t off, const char *name)
{
    jf_region r = test_region(code + off, 64, name);
    return jf_register(&r);
}

/* This process's table as another process reads it: live names. */
static int read_table(tr_snapshot *s)
{
    pid_t self = getpid();
    uint64_t base, size;
    char err[256];
    if (tr_find_table(self, &base, &size, err, sizeof err) != 0)
        return -1;
    if (tr_read_table(tr_read_process, &self, base, size, NULL, s, err, sizeof err) != 0)
        return -1;
    return s->consistent && s->pid == (uint32_t)self ? 0 : -1;
}

static int table_has(const tr_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->n_live; i++)
        if (strcmp(s->live[i].name, name) == 0)
            return 1;
    return 0;
}

/* CODE_LOAD records in the dump of pid naming `name`; -1: no dump. */
static long dump_loads_named(long pid, const char *name)
{
    dump_file d;
    if (dump_load(dump_path(test_dir, pid), &d) != 0)
        return -1;
    long n = 0;
    for (size_t i = 0; i < d.n_records; i++) {
        dump_load_info info;
        if (d.records[i].id == ID_LOAD && dump_code_load(&d.records[i], &info) == 0 &&
            strcmp(info.name, name) == 0)
            n++;
    }
    dump_free(&d);
    return n;
}

/* What the raw child checks; its exit status says which check failed. */
static int child_body(void)
{
    if (reg(64, "child_only") != 0 || jf_unregister(code + 64) != 0 || reg(128, "child_again") != 0)
        return 10;
    tr_snapshot s;
    if (read_table(&s) != 0)
        return 11;
    int table_ok = s.n_live == 2 && table_has(&s, "inherited") && table_has(&s, "child_again");
    tr_snapshot_free(&s);
    if (!table_ok)
        return 12;
    char *map = map_read(getpid(), NULL);
    int map_ok = map && map_count_name(map, "inherited") == 1 && map_count_name(map, "child_only") == 1 &&
                 map_count_name(map, "child_again") == 1;
    free(map);
    if (!map_ok)
        return 13;
    if (dump_loads_named(getpid(), "inherited") != 1 || dump_loads_named(getpid(), "child_again") != 1)
        return 14;
    if (!__jit_debug_descriptor.first_entry)
        return 15;
    return jf_shutdown() == 0 ? 0 : 16;
}

static void raw_fork_child_registers_into_its_own_table_map_and_dump(void **state)
{
    (void)state;
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    c.sinks = JF_SINK_PERFMAP | JF_SINK_JITDUMP | JF_SINK_GDB;
    c.dump_dir = test_dir;
    assert_int_equal(jf_init(&c), 0);
    assert_int_equal(reg(0, "inherited"), 0);
    const void *parent_table = jf_region_table;
    pid_t child = raw_fork();
    if (child == 0)
        _exit(child_body());
    assert_true(child > 0);
    int status = test_wait_child(child, 120);
    if (status != -1 && WIFSIGNALED(status))
        fail_msg("the raw fork child was killed by signal %d", WTERMSIG(status));
    assert_true(status != -1 && WIFEXITED(status));
    map_remove(child);
    assert_int_equal(WEXITSTATUS(status), 0);

    /* The parent's own: its table, map and dump hold only its region. */
    assert_ptr_equal(jf_region_table, parent_table);
    tr_snapshot s;
    assert_int_equal(read_table(&s), 0);
    assert_int_equal(s.n_live, 1);
    assert_true(table_has(&s, "inherited"));
    tr_snapshot_free(&s);
    char *map = map_read(getpid(), NULL);
    assert_non_null(map);
    assert_int_equal(map_count_name(map, "inherited"), 1);
    assert_int_equal(map_count_name(map, "child_only"), 0);
    assert_int_equal(map_count_name(map, "child_again"), 0);
    free(map);
    assert_int_equal(dump_loads_named(getpid(), "child_only"), 0);
    assert_int_equal(dump_loads_named(getpid(), "inherited"), 1);
    assert_int_equal(jf_unregister(code), 0);
    assert_int_equal(jf_shutdown(), 0);
    map_remove(getpid());
}

/* The same child when the parent's library was shut down before the fork:
 * nothing to rebuild, and a later jf_init in the child works. */
static void raw_fork_child_of_a_shut_down_library_can_start_it_again(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(0), 0);
    assert_int_equal(reg(0, "before_shutdown"), 0);
    assert_int_equal(jf_shutdown(), 0);
    pid_t child = raw_fork();
    if (child == 0) {
        if (test_init_with(0) != 0 || reg(0, "child_fresh") != 0)
            _exit(10);
        tr_snapshot s;
        int ok = read_table(&s) == 0 && s.n_live == 1 && table_has(&s, "child_fresh");
        if (ok)
            tr_snapshot_free(&s);
        _exit(ok && jf_shutdown() == 0 ? 0 : 11);
    }
    int status = test_wait_child(child, 120);
    if (status != -1 && WIFSIGNALED(status))
        fail_msg("the raw fork child was killed by signal %d", WTERMSIG(status));
    assert_true(status != -1 && WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A kernel without MADV_WIPEONFORK (before 4.14): no mark page, the pid
 * tells the child apart. Simulated by hiding the page. */
static void raw_fork_child_is_found_by_its_pid_without_wipeonfork(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    assert_int_equal(reg(0, "inherited"), 0);
    uint8_t *page = jf__process_mark_page;
    assert_non_null(page); /* this kernel has it: the fallback is what is tested here */
    jf__process_mark_page = NULL;
    pid_t child = raw_fork();
    if (child == 0) {
        if (reg(64, "child_only") != 0)
            _exit(10);
        tr_snapshot s;
        int ok = read_table(&s) == 0 && s.n_live == 2 && table_has(&s, "child_only");
        char *map = map_read(getpid(), NULL);
        ok = ok && map && map_count_name(map, "inherited") == 1 && map_count_name(map, "child_only") == 1;
        _exit(ok ? 0 : 11);
    }
    int status = test_wait_child(child, 120);
    jf__process_mark_page = page;
    map_remove(child);
    if (status != -1 && WIFSIGNALED(status))
        fail_msg("the raw fork child was killed by signal %d", WTERMSIG(status));
    assert_true(status != -1 && WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char *map = map_read(getpid(), NULL);
    assert_non_null(map);
    assert_int_equal(map_count_name(map, "child_only"), 0);
    free(map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(raw_fork_child_registers_into_its_own_table_map_and_dump, test_reset),
        cmocka_unit_test_teardown(raw_fork_child_of_a_shut_down_library_can_start_it_again, test_reset),
        cmocka_unit_test_teardown(raw_fork_child_is_found_by_its_pid_without_wipeonfork, test_reset),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
