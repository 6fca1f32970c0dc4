/*
 * The jitdump sink across processes and under faults: SIGKILL durability,
 * fork (the child writes its own dump, never the parent's), RLIMIT_FSIZE
 * with SIGXFSZ at its default action, a symlink at the path, and — in
 * private mount namespaces — a read-only directory, a noexec directory and
 * a full disk; SIGKILLs all through start-up never leave a dump without a
 * complete header. Scenarios run in children that report through their exit
 * status; the dumps are then read back by the parent.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dump_parse.h"
#include "jitframes.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* In a child: report the failed line through the exit status. */
#define CHECK(cond)                                                                                        \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            fprintf(stderr, "child check failed at line %d: %s (%s)\n", __LINE__, #cond, jf_last_error()); \
            _exit(100);                                                                                    \
        }                                                                                                  \
    } while (0)

static uint8_t code_area[1 << 20] __attribute__((aligned(64)));

static const char *name_of(int i)
{
    static char name[64];
    snprintf(name, sizeof name, "proc_fn_%06d", i);
    return name;
}

/* Region i: `size` bytes at code_area + i * stride, with a line table and,
 * every other region, unwind rules. */
static int register_region(int i, size_t size, size_t stride, jf_cfi *cfi)
{
    jf_line lines[2] = {{0, 1, NULL}, {size / 2, 2, NULL}};
    jf_region r = JF_REGION_INIT;
    r.addr = code_area + (size_t)i * stride;
    r.size = size;
    r.name = name_of(i);
    r.file = "proc.mj";
    r.lines = lines;
    r.n_lines = 2;
    r.cfi = (i % 2 && cfi) ? cfi : NULL;
    return jf_register(&r);
}

static jf_cfi *small_cfi(size_t size)
{
    jf_cfi *cfi;
    if (jf_cfi_new(&cfi) || jf_cfi_begin_fde(cfi, 0, size))
        return NULL;
    return cfi;
}

static void init_in(const char *dir, int expect)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = dir;
    int rc = jf_init(&cfg);
    /* A sink that cannot start: initialised all the same (JF_ESINK), the
     * sink's own code in the message. */
    int as_expected = expect ? rc == JF_ESINK && strstr(jf_last_error(), jf_strerror(expect)) : rc == 0;
    if (!as_expected)
        fprintf(stderr, "jf_init: %s (%s)\n", jf_strerror(rc), jf_last_error());
    CHECK(as_expected);
}

/* Wait for pid with a bounded number of polls (20 s). */
static int wait_child(pid_t pid)
{
    int status = 0;
    for (int i = 0; i < 20000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("child %ld did not finish in 20 s", (long)pid);
    return status;
}

/* Load a dump that must also pass `jitframes check`. */
static void load_checked(const char *path, dump_file *d)
{
    char msg[4096];
    if (dump_tool_check(path, msg, sizeof msg) == 1)
        fail_msg("jitframes check %s: %s", path, msg);
    assert_int_equal(dump_load(path, d), 0);
}

static void assert_exited_zero(int status)
{
    if (WIFSIGNALED(status))
        fail_msg("child killed by signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip();
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void run_in_child(void (*scenario)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        scenario();
        _exit(0);
    }
    assert_exited_zero(wait_child(pid));
}

/* Every CODE_LOAD of d names proc_fn_<first..first+count-1> in order, each
 * complete, the code equal to the live bytes. */
static void assert_loads(const dump_file *d, int first, int count, size_t size, size_t stride)
{
    int k = first;
    for (size_t i = 0; i < d->n_records; i++) {
        if (d->records[i].id != ID_LOAD)
            continue;
        dump_load_info l;
        assert_int_equal(dump_code_load(&d->records[i], &l), 0);
        assert_string_equal(l.name, name_of(k));
        assert_int_equal(l.code_size, size + JF_JITDUMP_NONCE_SIZE);
        assert_memory_equal(l.code, code_area + (size_t)k * stride, size);
        k++;
    }
    assert_int_equal(k - first, count);
}

/* ---- SIGKILL ---------------------------------------------------------- */

static void sigkill_loses_no_registered_group(void **state)
{
    (void)state;
    enum { N = 300, SIZE = 48, STRIDE = 128 };
    for (size_t i = 0; i < sizeof code_area; i++)
        code_area[i] = (uint8_t)(i * 7);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        init_in(test_dir, 0);
        jf_cfi *cfi = small_cfi(SIZE);
        CHECK(cfi);
        for (int i = 0; i < N; i++)
            CHECK(register_region(i, SIZE, STRIDE, cfi) == 0);
        CHECK(write(ready[1], "r", 1) == 1);
        for (int i = 0; i < 2000; i++) /* bounded: the parent kills us long before */
            usleep(10000);
        _exit(1);
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    kill(pid, SIGKILL);
    int status = wait_child(pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    dump_file d;
    load_checked(dump_path(test_dir, (long)pid), &d);
    assert_loads(&d, 0, N, SIZE, STRIDE);
    assert_int_equal(dump_count(&d, ID_DEBUG), N);
    assert_int_equal(dump_count(&d, ID_UNWIND), N / 2);
    assert_int_equal(dump_count(&d, ID_CLOSE), 0);
    /* Not trimmed: the reserved tail is there, and zero. */
    assert_true(d.file_size > d.records_end);
    assert_true(d.tail_is_zero);
    dump_free(&d);
}

/* Nanoseconds on the monotonic clock. */
static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A child that starts the jitdump sink, registers one region and idles. */
static pid_t start_child(int ready_fd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        init_in(test_dir, 0);
        CHECK(register_region(0, 48, 128, NULL) == 0);
        CHECK(ready_fd < 0 || write(ready_fd, "r", 1) == 1);
        for (int i = 0; i < 2000; i++) /* bounded: the parent kills us */
            usleep(10000);
        _exit(1);
    }
    return pid;
}

/* How long a child takes from fork to its region registered (the slowest
 * of a few), in ns. */
static long long start_up_time(void)
{
    long long slowest = 0;
    for (int i = 0; i < 5; i++) {
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        long long t0 = now_ns();
        pid_t pid = start_child(ready[1]);
        close(ready[1]);
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        long long took = now_ns() - t0;
        close(ready[0]);
        kill(pid, SIGKILL);
        wait_child(pid);
        unlink(dump_path(test_dir, (long)pid));
        slowest = took > slowest ? took : slowest;
    }
    return slowest;
}

/* A dump a reader may see must start with a complete header naming its
 * writer: -1 if there is none, 0 if complete, else 1 (its size in *size). */
static int header_state(long pid, long long *size)
{
    const char *path = dump_path(test_dir, pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint8_t h[40];
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 ? read(fd, h, sizeof h) : -1;
    close(fd);
    *size = (long long)st.st_size;
    return n == (ssize_t)sizeof h && dump_u32(h) == 0x4A695444u && dump_u32(h + 8) == 40 &&
                   dump_u32(h + 20) == (uint32_t)pid
               ? 0
               : 1;
}

static void sigkill_during_start_never_leaves_a_dump_without_header(void **state)
{
    (void)state;
    enum { KILLS = 150 };
    /* Kills spread evenly over twice the start-up: most land inside it
     * (creating the file, reserving, mapping, writing the header). */
    long long span = 2 * start_up_time();
    int none = 0, complete = 0, broken = 0;
    for (int k = 0; k < KILLS; k++) {
        long long delay = span * k / KILLS, t0 = now_ns();
        pid_t pid = start_child(-1);
        while (now_ns() - t0 < delay)
            ;
        kill(pid, SIGKILL);
        wait_child(pid);
        long long size = 0;
        int verdict = header_state((long)pid, &size);
        none += verdict < 0;
        complete += verdict == 0;
        if (verdict > 0) {
            broken++;
            fprintf(stderr, "kill %d after %lld us: jit-%ld.dump of %lld bytes lacks a complete header\n", k,
                    delay / 1000, (long)pid, size);
        }
        unlink(dump_path(test_dir, (long)pid));
    }
    fprintf(stderr, "%d kills over %lld us: %d left no dump, %d a complete header, %d a broken one\n", KILLS,
            span / 1000, none, complete, broken);
    assert_int_equal(broken, 0);
    assert_true(complete > 0 && none > 0); /* the kills did span the start */
}

/* ---- fork --------------------------------------------------------------- */

/* Count /proc/self/maps lines mapping `path` r-x. */
static int marker_count(const char *path)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return -1;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, maps))
        n += strstr(line, path) && strstr(line, " r-xp ");
    fclose(maps);
    return n;
}

static void fork_child_starts_its_own_dump(void **state)
{
    (void)state;
    enum { SIZE = 32, STRIDE = 64 };
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = test_dir;
    assert_int_equal(jf_init(&cfg), 0);
    assert_int_equal(register_region(0, SIZE, STRIDE, NULL), 0);
    char parent_path[4096];
    snprintf(parent_path, sizeof parent_path, "%s", dump_path(test_dir, (long)getpid()));

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char own[4096];
        snprintf(own, sizeof own, "%s", dump_path(test_dir, (long)getpid()));
        CHECK(access(own, F_OK) == 0);
        CHECK(marker_count(own) == 1);
        CHECK(marker_count(parent_path) == 0);
        CHECK(register_region(1, SIZE, STRIDE, NULL) == 0);
        CHECK(jf_shutdown() == 0);
        _exit(0);
    }
    assert_exited_zero(wait_child(pid));
    assert_int_equal(register_region(2, SIZE, STRIDE, NULL), 0);
    assert_int_equal(jf_shutdown(), 0);

    dump_file d;
    load_checked(parent_path, &d);
    assert_int_equal(dump_u32(d.data + 20), (uint32_t)getpid());
    int k = 0;
    static const int parent_regions[2] = {0, 2};
    for (size_t i = 0; i < d.n_records; i++) {
        dump_load_info l;
        if (d.records[i].id != ID_LOAD)
            continue;
        assert_int_equal(dump_code_load(&d.records[i], &l), 0);
        assert_true(k < 2);
        assert_string_equal(l.name, name_of(parent_regions[k++]));
        assert_int_equal(l.pid, (uint32_t)getpid());
    }
    assert_int_equal(k, 2);
    dump_free(&d);

    load_checked(dump_path(test_dir, (long)pid), &d);
    assert_int_equal(dump_u32(d.data + 20), (uint32_t)pid);
    assert_loads(&d, 0, 2, SIZE, STRIDE); /* the inherited region replayed, then its own */
    for (size_t i = 0; i < d.n_records; i++) {
        dump_load_info l;
        if (d.records[i].id == ID_LOAD && dump_code_load(&d.records[i], &l) == 0)
            assert_int_equal(l.pid, (uint32_t)pid);
    }
    assert_int_equal(d.records[d.n_records - 1].id, ID_CLOSE);
    dump_free(&d);
}

/* ---- faults --------------------------------------------------------------- */

/* Register regions until one fails; returns how many succeeded and the
 * error. The host must survive (no SIGXFSZ, no SIGBUS). */
static int register_until_failure(size_t size, int cap, int *error)
{
    jf_cfi *cfi = small_cfi(size);
    CHECK(cfi);
    for (int i = 0; i < cap; i++) {
        int rc = register_region(i, size, size, cfi);
        if (rc) {
            *error = rc;
            jf_cfi_free(cfi);
            return i;
        }
    }
    *error = 0;
    jf_cfi_free(cfi);
    return cap;
}

/* After a failure: the sink is disabled, registering still works, and the
 * dump holds exactly the regions that were accepted, all complete. */
static void check_after_failure(int accepted)
{
    struct jf_stats st = JF_STATS_INIT;
    CHECK(jf_stats(&st) == 0);
    CHECK(st.sink[1].failed == 1 && st.sink[1].enabled == 0);
    CHECK((jf_enabled_sinks() & JF_SINK_JITDUMP) == 0);
    jf_region later = JF_REGION_INIT;
    later.addr = code_area + sizeof code_area - 64;
    later.size = 64;
    later.name = "after_failure";
    CHECK(jf_register(&later) == 0);
    dump_file d;
    char msg[4096];
    CHECK(dump_tool_check(dump_path(test_dir, (long)getpid()), msg, sizeof msg) != 1);
    CHECK(dump_load(dump_path(test_dir, (long)getpid()), &d) == 0);
    CHECK(dump_count(&d, ID_LOAD) == (size_t)accepted);
    for (size_t i = 0; i < d.n_records; i++) {
        dump_load_info l;
        if (d.records[i].id == ID_LOAD)
            CHECK(dump_code_load(&d.records[i], &l) == 0);
    }
    CHECK(d.tail_is_zero);
    dump_free(&d);
    CHECK(jf_shutdown() == 0);
}

static void fsize_limit_scenario(void)
{
    struct rlimit lim = {96 * 1024, 96 * 1024};
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    signal(SIGXFSZ, SIG_DFL);
    init_in(test_dir, 0);
    int error;
    int accepted = register_until_failure(1024, 1000, &error);
    CHECK(error == JF_EFBIG);
    CHECK(accepted > 10);
    check_after_failure(accepted);
    struct stat st;
    CHECK(stat(dump_path(test_dir, (long)getpid()), &st) == 0);
    CHECK(st.st_size <= 96 * 1024);
}

static void rlimit_fsize_is_efbig_not_sigxfsz(void **state)
{
    (void)state;
    run_in_child(fsize_limit_scenario);
}

static void symlink_at_the_path_is_refused(void **state)
{
    (void)state;
    char victim[512], link_path[4096];
    snprintf(victim, sizeof victim, "%s/victim", test_dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious", f);
    fclose(f);
    snprintf(link_path, sizeof link_path, "%s", dump_path(test_dir, (long)getpid()));
    assert_int_equal(symlink(victim, link_path), 0);
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_JITDUMP;
    cfg.dump_dir = test_dir;
    assert_int_equal(jf_init(&cfg), JF_ESINK);
    assert_non_null(strstr(jf_last_error(), "symbolic link"));
    assert_non_null(strstr(jf_last_error(), "JF_EUNSAFE"));
    assert_int_equal(jf_enabled_sinks(), 0);
    assert_int_equal(jf_shutdown(), 0);
    struct stat st;
    assert_int_equal(stat(victim, &st), 0);
    assert_int_equal(st.st_size, 8);
    unlink(link_path);
}

/* In a child: a private mount namespace with a fresh tmpfs on test_dir.
 * Exits 77 (skip) if namespaces are not available to us. */
static void mount_private_tmpfs(unsigned long flags, const char *options)
{
    if (unshare(CLONE_NEWNS) != 0) {
        fprintf(stderr, "skip: unshare(CLONE_NEWNS): %s (needs root)\n", strerror(errno));
        _exit(77);
    }
    CHECK(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    CHECK(mount("tmpfs", test_dir, "tmpfs", flags, options) == 0);
}

static void readonly_scenario(void)
{
    mount_private_tmpfs(MS_RDONLY, "size=1m");
    init_in(test_dir, JF_EACCES);
    CHECK(strstr(jf_last_error(), test_dir) != NULL);
    CHECK(jf_enabled_sinks() == 0);
    CHECK(register_region(0, 64, 64, NULL) == 0); /* host carries on */
    CHECK(jf_shutdown() == 0);
}

static void readonly_dir_is_a_clear_error(void **state)
{
    (void)state;
    run_in_child(readonly_scenario);
}

static void noexec_scenario(void)
{
    mount_private_tmpfs(MS_NOEXEC, "size=1m");
    init_in(test_dir, JF_EACCES);
    CHECK(strstr(jf_last_error(), "noexec") != NULL);
    CHECK(access(dump_path(test_dir, (long)getpid()), F_OK) != 0); /* nothing left behind */
    CHECK(jf_shutdown() == 0);
}

static void noexec_dir_is_a_clear_error(void **state)
{
    (void)state;
    run_in_child(noexec_scenario);
}

static void disk_full_scenario(void)
{
    mount_private_tmpfs(0, "size=128k");
    init_in(test_dir, 0);
    int error;
    int accepted = register_until_failure(2048, 500, &error);
    CHECK(error == JF_ENOSPC);
    CHECK(accepted > 10);
    check_after_failure(accepted);
}

static void disk_full_is_enospc_not_sigbus(void **state)
{
    (void)state;
    run_in_child(disk_full_scenario);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sigkill_loses_no_registered_group, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(sigkill_during_start_never_leaves_a_dump_without_header, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(fork_child_starts_its_own_dump, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(rlimit_fsize_is_efbig_not_sigxfsz, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(symlink_at_the_path_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(readonly_dir_is_a_clear_error, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(noexec_dir_is_a_clear_error, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(disk_full_is_enospc_not_sigbus, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
