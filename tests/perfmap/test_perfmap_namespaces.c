/* Faults that need their own /tmp: each child enters a private mount
 * namespace and mounts a tmpfs of its choosing over /tmp (read-only, not
 * writable for `nobody`, or tiny), so the faults are real even as root.
 * Without root the children try an unprivileged user namespace. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

#define FAKE_BASE ((uintptr_t)0x7b0000000000ull)
#define NOBODY 65534

/* Child exit codes beyond the checks' own. */
enum { CHILD_NO_NAMESPACE = 90, CHILD_NO_MOUNT = 91, CHILD_NO_SETUID = 92 };

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A private mount namespace (as root, or inside a new user namespace). */
static int enter_mount_namespace(void)
{
    if (unshare(CLONE_NEWNS) == 0)
        return 0;
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return -1;
    char map[64];
    snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
    if (write_text("/proc/self/uid_map", map) != 0)
        return -1;
    write_text("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
    return write_text("/proc/self/gid_map", map);
}

/* In a child: a fresh tmpfs on /tmp with these options. Exits on failure. */
static void private_tmp(unsigned long flags, const char *options)
{
    if (enter_mount_namespace() != 0)
        _exit(CHILD_NO_NAMESPACE);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", "/tmp", "tmpfs", flags, options) != 0)
        _exit(CHILD_NO_MOUNT);
}

static int run_child(void (*body)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = test_wait_child(pid, 10);
    if (status == -1)
        fail_msg("child did not finish in 10 s");
    if (WIFSIGNALED(status))
        fail_msg("child killed by signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    if (code == CHILD_NO_NAMESPACE)
        fail_msg("cannot create a mount namespace: run as root (CI does) or allow user namespaces");
    if (code == CHILD_NO_MOUNT)
        fail_msg("cannot mount a tmpfs on /tmp in the private namespace");
    if (code == CHILD_NO_SETUID)
        fail_msg("cannot switch to uid %d: this check must run as root (CI does)", NOBODY);
    return code;
}

static int register_fake(int i)
{
    char name[64];
    snprintf(name, sizeof name, "ns_region_%06d_padded_to_a_longer_name", i);
    jf_region r = JF_REGION_INIT;
    r.addr = (const void *)(FAKE_BASE + 64 * (uintptr_t)i);
    r.size = 64;
    r.name = name;
    return jf_register(&r);
}

static int log_calls;
static int disabled_logs;

static void count_log(void *ctx, int level, const char *message)
{
    (void)ctx;
    if (level > JF_LOG_WARNING) /* where sinks write, at info: not a failure */
        return;
    log_calls++;
    disabled_logs += strstr(message, "perfmap sink disabled") != NULL;
}

/* The checks every "cannot open" child makes: the error, the sink off and
 * failed, the host's registrations still fine. */
static void expect_start_refused(int code_expected, const char *message_part)
{
    jf_set_log_callback(count_log, NULL);
    int rc = test_init_with(JF_SINK_PERFMAP);
    if (rc != code_expected)
        _exit(1);
    char path[64];
    if (!strstr(jf_last_error(), message_part) ||
        !strstr(jf_last_error(), map_path(path, sizeof path, getpid())))
        _exit(2);
    if (jf_enabled_sinks() != 0 || log_calls != 1)
        _exit(3);
    for (int i = 0; i < 100; i++)
        if (register_fake(i) != 0)
            _exit(4);
    struct jf_stats st = JF_STATS_INIT;
    if (jf_stats(&st) != 0 || !st.sink[0].failed || st.sink[0].enabled || st.live_regions != 100)
        _exit(5);
    if (access(path, F_OK) == 0)
        _exit(6);
    if (jf_shutdown() != 0)
        _exit(7);
}

/* ---- unwritable directory ----------------------------------------------- */

static void read_only_tmp_body(void)
{
    private_tmp(MS_RDONLY, "size=64k");
    expect_start_refused(JF_EACCES, "/tmp is on a read-only file system");
}

static void read_only_tmp_is_eacces_and_the_host_goes_on(void **state)
{
    (void)state;
    assert_int_equal(run_child(read_only_tmp_body), 0);
}

static void become_nobody(void)
{
    if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
        setresuid(NOBODY, NOBODY, NOBODY) != 0)
        _exit(CHILD_NO_SETUID);
}

static void tmp_not_writable_for_nobody_body(void)
{
    private_tmp(0, "size=64k,mode=0755");
    become_nobody();
    expect_start_refused(JF_EACCES, "no permission to write in /tmp");
}

static void tmp_writable_for_nobody_body(void)
{
    private_tmp(0, "size=64k,mode=1777");
    become_nobody();
    if (test_init_with(JF_SINK_PERFMAP) != 0 || register_fake(0) != 0)
        _exit(1);
    char *data = map_read(getpid(), NULL);
    _exit(data && strstr(data, "ns_region_000000") ? 0 : 2);
}

static void directory_not_writable_for_us_is_eacces(void **state)
{
    (void)state;
    assert_int_equal(run_child(tmp_not_writable_for_nobody_body), 0);
    /* Control: the same setup with a writable /tmp works, so the failure
     * above comes from the directory's permissions. */
    assert_int_equal(run_child(tmp_writable_for_nobody_body), 0);
}

/* ---- disk full ---------------------------------------------------------- */

enum { TINY_TMP = 16 * 1024 };

static void full_disk_body(void)
{
    private_tmp(0, "size=16k,mode=1777");
    jf_set_log_callback(count_log, NULL);
    if (test_init_with(JF_SINK_PERFMAP) != 0)
        _exit(1);
    int failed_at = -1;
    for (int i = 0; i < 2000; i++) {
        int rc = register_fake(i);
        if (rc == 0)
            continue;
        if (failed_at >= 0 || rc != JF_ENOSPC)
            _exit(2); /* one failure, then the sink is off */
        failed_at = i;
    }
    if (failed_at <= 0 || log_calls != 1 || disabled_logs != 1)
        _exit(3);
    struct jf_stats st = JF_STATS_INIT;
    jf_stats(&st);
    if (!st.sink[0].failed || st.sink[0].errors != 1 || st.sink[0].regions != (uint64_t)failed_at ||
        st.live_regions != 2000)
        _exit(4);
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    char why[300];
    if (!data || len > TINY_TMP || map_validate(data, len, why, sizeof why) != failed_at)
        _exit(5);
    /* Every line that made it in is complete and in order. */
    for (int i = 0; i < failed_at; i++) {
        char name[64];
        snprintf(name, sizeof name, "ns_region_%06d_padded_to_a_longer_name", i);
        if (!map_has_line(data, FAKE_BASE + 64 * (uintptr_t)i, 64, name))
            _exit(6);
    }
    /* Room again (and fewer live regions): enabling retries and replays. */
    for (int i = 100; i < 2000; i++)
        if (jf_unregister((const void *)(FAKE_BASE + 64 * (uintptr_t)i)) != 0)
            _exit(7);
    if (truncate(map_path(why, sizeof why, getpid()), 0) != 0 || jf_enable(JF_SINK_PERFMAP) != 0)
        _exit(8);
    free(data);
    data = map_read(getpid(), &len);
    _exit(data && map_validate(data, len, why, sizeof why) == 100 ? 0 : 9);
}

static void full_disk_is_enospc_once_and_leaves_whole_lines(void **state)
{
    (void)state;
    assert_int_equal(run_child(full_disk_body), 0);
}

int main(void)
{
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_only_tmp_is_eacces_and_the_host_goes_on),
        cmocka_unit_test(directory_not_writable_for_us_is_eacces),
        cmocka_unit_test(full_disk_is_enospc_once_and_leaves_whole_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
