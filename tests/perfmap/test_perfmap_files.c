/* The perf map lives in /tmp, where anyone can plant a file under our name:
 * symlinks, foreign files, FIFOs and hard links are refused and left alone;
 * a stale map of a dead process with our pid is replaced; a map another
 * writer in this process already writes is appended to, never truncated. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

static unsigned char code[256];
static char scratch_dir[64];
static char map[64];

static int setup(void **state)
{
    (void)state;
    test_reset(NULL);
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/jf-files-XXXXXX");
    if (!mkdtemp(scratch_dir))
        return -1;
    map_path(map, sizeof map, getpid());
    return 0;
}

static int teardown(void **state)
{
    test_reset(state);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static char *slurp(const char *path)
{
    static char buf[16384];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* The file's lines without the blank ones (space the library reserved). */
static char *slurp_lines(const char *path)
{
    char *buf = slurp(path);
    if (buf)
        map_strip_padding(buf, strlen(buf));
    return buf;
}

static void set_mtime_hours_ago(const char *path, int fd, int hours)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= hours * 3600;
    t[1] = t[0];
    if (fd >= 0)
        assert_int_equal(futimens(fd, t), 0);
    else
        assert_int_equal(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

/* The sink refused to start: `code` returned, the library still usable. */
static void assert_refused(int rc, int code_expected, const char *message_part)
{
    assert_int_equal(rc, code_expected);
    if (!strstr(jf_last_error(), message_part))
        fail_msg("message '%s' lacks '%s'", jf_last_error(), message_part);
    assert_int_equal(jf_enabled_sinks() & JF_SINK_PERFMAP, 0);
    struct jf_stats st = JF_STATS_INIT;
    assert_int_equal(jf_stats(&st), 0);
    assert_int_equal(st.sink[0].enabled, 0);
    assert_int_equal(st.sink[0].failed, 1);
    assert_int_equal(st.sink[0].errors, 1);
    jf_region r = test_region(code, 16, "after_refusal");
    assert_int_equal(jf_register(&r), 0); /* the host keeps running */
}

static void symlink_is_refused_and_its_target_untouched(void **state)
{
    (void)state;
    char target[128];
    snprintf(target, sizeof target, "%s/precious", scratch_dir);
    write_file(target, "precious content\n", 0644);
    assert_int_equal(symlink(target, map), 0);

    assert_refused(test_init_with(JF_SINK_PERFMAP), JF_EUNSAFE, "symbolic link");
    assert_string_equal(slurp(target), "precious content\n");
    struct stat st;
    assert_int_equal(lstat(map, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);

    /* Once the link is gone, enabling again retries and replays. */
    assert_int_equal(unlink(map), 0);
    assert_int_equal(jf_enable(JF_SINK_PERFMAP), 0);
    char *data = map_read(getpid(), NULL);
    assert_non_null(data);
    assert_true(map_has_line(data, (uintptr_t)code, 16, "after_refusal"));
    free(data);
    assert_string_equal(slurp(target), "precious content\n");
}

static void dangling_symlink_is_refused_and_nothing_created(void **state)
{
    (void)state;
    char target[128];
    snprintf(target, sizeof target, "%s/would-be-created", scratch_dir);
    assert_int_equal(symlink(target, map), 0);
    assert_refused(test_init_with(JF_SINK_PERFMAP), JF_EUNSAFE, "symbolic link");
    assert_int_equal(access(target, F_OK), -1);
}

static void file_of_another_user_is_refused_and_untouched(void **state)
{
    (void)state;
    if (geteuid() != 0)
        fail_msg("this test must run as root (it chowns a file to nobody); CI does");
    write_file(map, "1000 10 someone_elses\n", 0644);
    assert_int_equal(chown(map, 65534, 65534), 0);
    set_mtime_hours_ago(map, -1, 5); /* even though it looks stale */

    assert_refused(test_init_with(JF_SINK_PERFMAP), JF_EUNSAFE, "owned by uid 65534");
    assert_string_equal(slurp(map), "1000 10 someone_elses\n");
    struct stat st;
    assert_int_equal(lstat(map, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_mode & 0777, 0644);
}

static void fifo_is_refused_without_blocking(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(map, 0600), 0);
    assert_refused(test_init_with(JF_SINK_PERFMAP), JF_EUNSAFE, "not a regular file");
}

static void directory_is_refused(void **state)
{
    (void)state;
    assert_int_equal(mkdir(map, 0700), 0);
    int rc = test_init_with(JF_SINK_PERFMAP);
    rmdir(map);
    assert_int_equal(rc, JF_EUNSAFE);
}

static void hard_link_is_refused_and_untouched(void **state)
{
    (void)state;
    char other[128];
    snprintf(other, sizeof other, "%s/other-name", scratch_dir);
    write_file(other, "1000 10 linked\n", 0600);
    assert_int_equal(link(other, map), 0);
    set_mtime_hours_ago(map, -1, 5);
    assert_refused(test_init_with(JF_SINK_PERFMAP), JF_EUNSAFE, "hard links");
    assert_string_equal(slurp(other), "1000 10 linked\n");
}

static void stale_map_of_a_dead_process_is_replaced(void **state)
{
    (void)state;
    write_file(map, "dead beef from_a_dead_process\n", 0644);
    set_mtime_hours_ago(map, -1, 2);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region r = test_region(code, 16, "ours");
    assert_int_equal(jf_register(&r), 0);
    char want[128];
    map_format_line(want, sizeof want, (uintptr_t)code, 16, "ours");
    assert_string_equal(slurp_lines(map), want);
    struct stat st;
    assert_int_equal(lstat(map, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

static void map_of_another_writer_in_this_process_is_appended_to(void **state)
{
    (void)state;
    /* The host's own perf map writer, opened before jf_init. Its mtime is
     * made old so only "open in this process" can save it. */
    int host_fd = open(map, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    assert_true(host_fd >= 0);
    const char *host_line = "1000 20 host_runtime_function\n";
    assert_int_equal(write(host_fd, host_line, strlen(host_line)), (ssize_t)strlen(host_line));
    set_mtime_hours_ago(NULL, host_fd, 3);

    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region r = test_region(code, 16, "ours");
    assert_int_equal(jf_register(&r), 0);
    const char *host_line2 = "2000 20 host_again\n";
    assert_int_equal(write(host_fd, host_line2, strlen(host_line2)), (ssize_t)strlen(host_line2));
    close(host_fd);

    char want[256], ours[128];
    map_format_line(ours, sizeof ours, (uintptr_t)code, 16, "ours");
    snprintf(want, sizeof want, "%s%s%s", host_line, ours, host_line2);
    assert_string_equal(slurp_lines(map), want);
}

static void map_this_process_wrote_and_closed_is_appended_to(void **state)
{
    (void)state;
    write_file(map, "3000 30 written_earlier_by_us\n", 0600);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    jf_region r = test_region(code, 16, "ours");
    assert_int_equal(jf_register(&r), 0);
    char want[256], ours[128];
    map_format_line(ours, sizeof ours, (uintptr_t)code, 16, "ours");
    snprintf(want, sizeof want, "3000 30 written_earlier_by_us\n%s", ours);
    assert_string_equal(slurp_lines(map), want);
}

typedef struct log_record {
    int calls;
    int level;
    char last[512];
} log_record;

static void record_log(void *ctx, int level, const char *message)
{
    log_record *rec = ctx;
    rec->calls++;
    rec->level = level;
    snprintf(rec->last, sizeof rec->last, "%s", message);
}

static void refusal_is_reported_to_the_log_callback(void **state)
{
    (void)state;
    log_record rec = {0};
    jf_set_log_callback(record_log, &rec);
    assert_int_equal(symlink("/nonexistent", map), 0);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), JF_EUNSAFE);
    assert_int_equal(rec.calls, 1);
    assert_int_equal(rec.level, JF_LOG_ERROR);
    assert_non_null(strstr(rec.last, "perfmap"));
    assert_non_null(strstr(rec.last, "symbolic link"));
}

/* Run jf_init(NULL) with JITFRAMES=perfmap and a planted symlink, with
 * stderr captured; returns what was printed. */
static char *stderr_of_refused_init(const char *log_setting)
{
    static char out[1024];
    char path[128];
    snprintf(path, sizeof path, "%s/stderr", scratch_dir);
    int cap = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(cap >= 0);
    int saved = dup(2);
    assert_int_equal(symlink("/nonexistent", map), 0);
    setenv("JITFRAMES", "perfmap", 1);
    if (log_setting)
        setenv("JITFRAMES_LOG", log_setting, 1);
    fflush(stderr);
    dup2(cap, 2);
    int rc = jf_init(NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    assert_int_equal(rc, JF_ESINK); /* initialised; the perf map refused */
    ssize_t n = pread(cap, out, sizeof out - 1, 0);
    close(cap);
    out[n > 0 ? n : 0] = '\0';
    test_reset(NULL);
    return out;
}

static void jitframes_log_prints_to_stderr_only_when_asked(void **state)
{
    (void)state;
    assert_string_equal(stderr_of_refused_init(NULL), "");
    assert_string_equal(stderr_of_refused_init("0"), "");
    const char *out = stderr_of_refused_init("1");
    assert_non_null(strstr(out, "jitframes: the perfmap sink could not start"));
    assert_non_null(strstr(out, "symbolic link"));
    assert_non_null(strstr(stderr_of_refused_init("error"), "symbolic link"));
}

int main(void)
{
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(symlink_is_refused_and_its_target_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(dangling_symlink_is_refused_and_nothing_created, setup, teardown),
        cmocka_unit_test_setup_teardown(file_of_another_user_is_refused_and_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_is_refused_without_blocking, setup, teardown),
        cmocka_unit_test_setup_teardown(directory_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(hard_link_is_refused_and_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_map_of_a_dead_process_is_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(map_of_another_writer_in_this_process_is_appended_to, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(map_this_process_wrote_and_closed_is_appended_to, setup, teardown),
        cmocka_unit_test_setup_teardown(refusal_is_reported_to_the_log_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(jitframes_log_prints_to_stderr_only_when_asked, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
