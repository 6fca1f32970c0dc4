/* Process-level behaviour of the perf map: SIGKILL durability, fork,
 * RLIMIT_FSIZE with SIGXFSZ at its default action, and registrations under a
 * storm of signals. Children report through their exit status. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jitframes.h"
#include "map_util.h"

/* Regions are never dereferenced: fake, distinct addresses are enough. */
#define FAKE_BASE ((uintptr_t)0x7a0000000000ull)

static const char *name_of(int i)
{
    static char names[64];
    snprintf(names, sizeof names, "proc_region_%06d", i);
    return names;
}

static int register_fake(int i)
{
    jf_region r = JF_REGION_INIT;
    r.addr = (const void *)(FAKE_BASE + 64 * (uintptr_t)i);
    r.size = 64;
    r.name = name_of(i);
    return jf_register(&r);
}

/* Does map `data` hold exactly the regions [first, first+count) (any order)? */
static void assert_map_holds(const char *data, size_t len, int first, int count)
{
    char why[300];
    long lines = map_validate(data, len, why, sizeof why);
    if (lines < 0)
        fail_msg("malformed map: %s", why);
    assert_int_equal(lines, count);
    for (int i = first; i < first + count; i++)
        if (!map_has_line(data, FAKE_BASE + 64 * (uintptr_t)i, 64, name_of(i)))
            fail_msg("line for region %d is missing", i);
}

static int wait_child(pid_t pid)
{
    int status = test_wait_child(pid, 10);
    if (status == -1)
        fail_msg("child %ld did not finish in 10 s", (long)pid);
    return status;
}

static void assert_exited_zero(int status)
{
    if (WIFSIGNALED(status))
        fail_msg("child killed by signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("child check %d failed", WEXITSTATUS(status));
}

/* ---- SIGKILL ------------------------------------------------------------ */

static void sigkill_right_after_registering_loses_no_line(void **state)
{
    (void)state;
    enum { SINGLES = 3000, BATCH = 2000 };
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (test_init_with(JF_SINK_PERFMAP) != 0)
            _exit(1);
        for (int i = 0; i < SINGLES; i++)
            if (register_fake(i) != 0)
                _exit(2);
        static jf_region batch[BATCH];
        static char names[BATCH][64];
        for (int i = 0; i < BATCH; i++) {
            snprintf(names[i], sizeof names[i], "%s", name_of(SINGLES + i));
            batch[i] = (jf_region)JF_REGION_INIT;
            batch[i].addr = (const void *)(FAKE_BASE + 64 * (uintptr_t)(SINGLES + i));
            batch[i].size = 64;
            batch[i].name = names[i];
        }
        if (jf_register_batch(batch, BATCH) != 0)
            _exit(3);
        raise(SIGKILL);
        _exit(4);
    }
    int status = wait_child(pid);
    size_t len = 0;
    char *data = map_read(pid, &len);
    map_remove(pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_non_null(data);
    assert_map_holds(data, len, 0, SINGLES + BATCH);
    free(data);
}

/* ---- fork --------------------------------------------------------------- */

/* In the child: the map of this pid holds exactly [0, count). */
static int child_map_holds(int count)
{
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    if (!data)
        return 0;
    char why[300];
    int ok = map_validate(data, len, why, sizeof why) == count;
    for (int i = 0; ok && i < count; i++)
        ok = map_has_line(data, FAKE_BASE + 64 * (uintptr_t)i, 64, name_of(i));
    free(data);
    return ok;
}

static void fork_child_gets_its_own_map_and_parent_map_is_untouched(void **state)
{
    (void)state;
    enum { INHERITED = 150, OWN = 40 };
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    for (int i = 0; i < INHERITED; i++)
        assert_int_equal(register_fake(i), 0);
    size_t before_len = 0;
    char *before = map_read(getpid(), &before_len);
    assert_non_null(before);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!child_map_holds(INHERITED))
            _exit(1);
        for (int i = INHERITED; i < INHERITED + OWN; i++)
            if (register_fake(i) != 0)
                _exit(2);
        if (!child_map_holds(INHERITED + OWN))
            _exit(3);
        if (jf_enabled_sinks() != JF_SINK_PERFMAP)
            _exit(4);
        jf_shutdown();
        _exit(0);
    }
    int status = wait_child(pid);
    size_t child_len = 0;
    char *child_map = map_read(pid, &child_len);
    map_remove(pid);
    assert_exited_zero(status);
    assert_non_null(child_map);
    assert_map_holds(child_map, child_len, 0, INHERITED + OWN);

    size_t after_len = 0;
    char *after = map_read(getpid(), &after_len);
    assert_non_null(after);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);

    /* The parent goes on writing its own map only. */
    assert_int_equal(register_fake(INHERITED + OWN), 0);
    free(after);
    after = map_read(getpid(), &after_len);
    assert_non_null(after);
    assert_int_equal(map_strip_padding(after, after_len),
                     map_strip_padding(before, before_len) + strlen("7a0000000000 40 proc_region_000000\n"));
    assert_true(
        map_has_line(after, FAKE_BASE + 64 * (uintptr_t)(INHERITED + OWN), 64, name_of(INHERITED + OWN)));
    free(before);
    free(after);
    free(child_map);
}

static void forked_grandchild_gets_a_map_too(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(register_fake(i), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pid_t grandchild = fork();
        if (grandchild < 0)
            _exit(1);
        if (grandchild == 0)
            _exit(child_map_holds(10) ? 0 : 1);
        int status = 0;
        waitpid(grandchild, &status, 0);
        map_remove(grandchild);
        map_remove(getpid());
        _exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2);
    }
    assert_exited_zero(wait_child(pid));
    map_remove(pid);
}

static void fork_with_the_sink_off_creates_no_child_map(void **state)
{
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    assert_int_equal(register_fake(0), 0);
    assert_int_equal(jf_disable(JF_SINK_PERFMAP), 0);
    /* A map at the child's pid older than this is a dead process's (pids are
     * reused): not the child's doing. A second of slack covers the coarse
     * clock file times use. */
    time_t before = time(NULL) - 1;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(jf_enabled_sinks() == 0 ? 0 : 1);
    assert_exited_zero(wait_child(pid));
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)pid);
    struct stat st;
    int written_by_child = stat(path, &st) == 0 && st.st_mtime >= before;
    map_remove(pid);
    assert_false(written_by_child);
}

static atomic_int stop_logging_churn;

static void ignore_log(void *ctx, int level, const char *message)
{
    (void)ctx;
    (void)level;
    (void)message;
}

static void *churn_log_callback(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_logging_churn)) {
        jf_set_log_callback(ignore_log, NULL);
        jf_set_log_callback(NULL, NULL);
    }
    return NULL;
}

static void fork_while_another_thread_holds_the_log_lock_does_not_hang_the_child(void **state)
{
    /* The child takes the log lock at once: it must find it free. */
    (void)state;
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    atomic_store(&stop_logging_churn, 0);
    pthread_t churn;
    assert_int_equal(pthread_create(&churn, NULL, churn_log_callback, NULL), 0);
    int failures = 0;
    for (int i = 0; i < 200 && !failures; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            jf_set_log_callback(ignore_log, NULL);
            _exit(jf_enabled_sinks() == JF_SINK_PERFMAP ? 0 : 1);
        }
        int status = test_wait_child(pid, 5);
        map_remove(pid);
        failures += status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    atomic_store(&stop_logging_churn, 1);
    pthread_join(churn, NULL);
    assert_int_equal(failures, 0);
}

/* ---- RLIMIT_FSIZE ------------------------------------------------------- */

enum { FSIZE_LIMIT = 2000 };

static void set_file_size_limit(rlim_t bytes)
{
    struct rlimit lim;
    getrlimit(RLIMIT_FSIZE, &lim);
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
}

static void file_size_limit_is_efbig_and_the_host_survives(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        if (test_init_with(JF_SINK_PERFMAP) != 0)
            _exit(1);
        set_file_size_limit(FSIZE_LIMIT);
        int failed_at = -1;
        for (int i = 0; i < 500; i++) {
            int rc = register_fake(i);
            if (rc != 0 && failed_at >= 0)
                _exit(2); /* reported once, then the sink is off */
            if (rc != 0 && (rc != JF_EFBIG || !strstr(jf_last_error(), "RLIMIT_FSIZE")))
                _exit(3);
            if (rc != 0)
                failed_at = i;
        }
        struct jf_stats st = JF_STATS_INIT;
        jf_stats(&st);
        if (failed_at <= 0 || !st.sink[0].failed || st.sink[0].regions != (uint64_t)failed_at)
            _exit(4);
        _exit(child_map_holds(failed_at) ? 0 : 5);
    }
    int status = wait_child(pid);
    size_t len = 0;
    char *data = map_read(pid, &len);
    map_remove(pid);
    assert_exited_zero(status);
    assert_non_null(data);
    assert_true(len <= FSIZE_LIMIT && len > FSIZE_LIMIT - 64);
    char why[300];
    assert_true(map_validate(data, len, why, sizeof why) > 0);
    free(data);
}

static void limit_lowered_to_the_current_size_is_efbig_without_a_signal(void **state)
{
    /* The hardest case: the file ends exactly at the limit, where a write
     * would raise SIGXFSZ instead of writing short. Lines still go into the
     * space reserved before (stores inside the file raise nothing); the
     * first registration that needs the file to grow is JF_EFBIG. */
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        if (test_init_with(JF_SINK_PERFMAP) != 0)
            _exit(1);
        for (int i = 0; i < 10; i++)
            if (register_fake(i) != 0)
                _exit(2);
        struct stat st;
        char path[64];
        if (stat(map_path(path, sizeof path, getpid()), &st) != 0)
            _exit(3);
        /* Right after the limit drops: no grace period in which a write
         * could still raise SIGXFSZ. */
        set_file_size_limit((rlim_t)st.st_size);
        int i = 10, rc;
        while ((rc = register_fake(i)) == 0 && i < 100000)
            i++;
        if (rc != JF_EFBIG || i <= 10)
            _exit(4);
        struct stat after;
        if (stat(path, &after) != 0 || after.st_size != st.st_size)
            _exit(5);
        _exit(child_map_holds(i) ? 0 : 6);
    }
    int status = wait_child(pid);
    map_remove(pid);
    assert_exited_zero(status);
}

static void file_size_limit_kills_a_naive_writer(void **state)
{
    /* Negative control: the same limit really raises SIGXFSZ. */
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/jf-fsize-%ld", (long)getpid());
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        set_file_size_limit(FSIZE_LIMIT);
        static char block[FSIZE_LIMIT];
        for (int i = 0; i < 3; i++)
            (void)!write(fd, block, sizeof block);
        _exit(0);
    }
    int status = wait_child(pid);
    unlink(path);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGXFSZ);
}

static void batch_over_the_size_limit_writes_none_of_it(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        if (test_init_with(JF_SINK_PERFMAP) != 0 || register_fake(0) != 0)
            _exit(1);
        set_file_size_limit(FSIZE_LIMIT);
        enum { N = 200 }; /* ~7 KB of lines: more than the space reserved so far */
        static jf_region batch[N];
        static char names[N][64];
        for (int i = 0; i < N; i++) {
            snprintf(names[i], sizeof names[i], "%s", name_of(1 + i));
            batch[i] = (jf_region)JF_REGION_INIT;
            batch[i].addr = (const void *)(FAKE_BASE + 64 * (uintptr_t)(1 + i));
            batch[i].size = 64;
            batch[i].name = names[i];
        }
        if (jf_register_batch(batch, N) != JF_EFBIG)
            _exit(2);
        _exit(child_map_holds(1) ? 0 : 3);
    }
    int status = wait_child(pid);
    map_remove(pid);
    assert_exited_zero(status);
}

/* ---- signals interrupting writes ---------------------------------------- */

static atomic_long signals_handled;
static atomic_int storm_done;

static void count_signal(int sig)
{
    (void)sig;
    atomic_fetch_add(&signals_handled, 1);
}

static void install_interrupting_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_signal;
    sa.sa_flags = 0; /* no SA_RESTART: blocking calls fail with EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

static void *signal_storm(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    while (!atomic_load(&storm_done)) {
        pthread_kill(target, SIGUSR1);
        usleep(50);
    }
    return NULL;
}

static void registrations_survive_a_signal_storm(void **state)
{
    (void)state;
    enum { N = 20000 };
    install_interrupting_handler();
    atomic_store(&signals_handled, 0);
    atomic_store(&storm_done, 0);
    assert_int_equal(test_init_with(JF_SINK_PERFMAP), 0);
    pthread_t self = pthread_self(), storm;
    assert_int_equal(pthread_create(&storm, NULL, signal_storm, &self), 0);
    /* Registering takes ~0.1 us: go on until the storm has really hit. */
    int failures = 0, n = 0;
    while (n < N || (atomic_load(&signals_handled) <= 20 && n < 50 * N))
        failures += register_fake(n++) != 0;
    atomic_store(&storm_done, 1);
    pthread_join(storm, NULL);
    signal(SIGUSR1, SIG_DFL);
    assert_int_equal(failures, 0);
    assert_true(atomic_load(&signals_handled) > 20);
    size_t len = 0;
    char *data = map_read(getpid(), &len);
    assert_non_null(data);
    assert_map_holds(data, len, 0, n);
    free(data);
}

int main(void)
{
    unsetenv("JITFRAMES");
    unsetenv("JITFRAMES_LOG");
    test_reset(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(sigkill_right_after_registering_loses_no_line, test_reset),
        cmocka_unit_test_teardown(fork_child_gets_its_own_map_and_parent_map_is_untouched, test_reset),
        cmocka_unit_test_teardown(forked_grandchild_gets_a_map_too, test_reset),
        cmocka_unit_test_teardown(fork_with_the_sink_off_creates_no_child_map, test_reset),
        cmocka_unit_test_teardown(fork_while_another_thread_holds_the_log_lock_does_not_hang_the_child,
                                  test_reset),
        cmocka_unit_test_teardown(file_size_limit_is_efbig_and_the_host_survives, test_reset),
        cmocka_unit_test_teardown(limit_lowered_to_the_current_size_is_efbig_without_a_signal, test_reset),
        cmocka_unit_test_teardown(file_size_limit_kills_a_naive_writer, test_reset),
        cmocka_unit_test_teardown(batch_over_the_size_limit_writes_none_of_it, test_reset),
        cmocka_unit_test_teardown(registrations_survive_a_signal_storm, test_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
