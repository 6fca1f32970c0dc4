/* The control channel inside one process: who starts it (JF_CONFIG_CONTROL,
 * JITFRAMES_CONTROL), that the last jf_shutdown joins its thread and leaves
 * no socket or descriptor, requests and their errors, the wire format, and
 * fork: the child answers under its own pid, and after exec nothing of the
 * channel is left; idle, the listener thread sleeps and is never woken. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control_client.h"
#include "jitframes.h"
#include "map_util.h"

/* The listener's thread id (its comm is "jf-control"), 0 if none. */
static pid_t listener_tid(void)
{
    DIR *d = opendir("/proc/self/task");
    pid_t tid = 0;
    for (struct dirent *e; d && !tid && (e = readdir(d));) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && strcmp(comm, "jf-control\n") == 0)
            tid = (pid_t)atol(e->d_name);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return tid;
}

static int listens(pid_t pid)
{
    char name[108];
    jfc_error err;
    return jfc_find_socket(pid, name, sizeof name, &err) == 0;
}

static int init_control(unsigned flags)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = flags;
    return jf_init(&c);
}

static jf__ctl_reply ask(pid_t pid, uint16_t op, uint32_t sinks)
{
    jf__ctl_request req = {JF_CTL_VERSION, op, sinks};
    jf__ctl_reply reply;
    jfc_error err;
    if (jfc_request(pid, &req, &reply, &err) != 0)
        fail_msg("request to %ld: %s", (long)pid, err.msg);
    return reply;
}

static void flag_starts_a_listener_and_last_shutdown_joins_it(void **state)
{
    (void)state;
    int fds = test_dir_entries("/proc/self/fd");
    assert_false(listens(getpid()));
    assert_int_equal(init_control(JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL), 0);
    assert_int_equal(init_control(JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL), 0); /* idempotent */
    assert_true(listens(getpid()));
    assert_true(listener_tid() > 0);
    jf__ctl_reply r = ask(getpid(), JF_CTL_STATUS, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.pid, getpid());
    assert_int_equal(r.uid, geteuid());
    assert_int_equal(r.enabled, 0);
    assert_int_equal(r.lib_version[0], JF_VERSION_MAJOR);
    assert_string_equal(r.dump_dir, "/tmp");
    assert_int_equal(jf_shutdown(), 0); /* one reference left: still listening */
    assert_true(listens(getpid()));
    assert_int_equal(jf_shutdown(), 0);
    assert_false(listens(getpid()));
    assert_int_equal(listener_tid(), 0); /* joined */
    assert_int_equal(test_dir_entries("/proc/self/fd"), fds);
}

static void environment_word_asks_for_it_unless_ignored(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        unsigned flags;
        int listens;
    } cases[] = {
        {"1", 0, 1}, {"0", 0, 0}, {"", 0, 0}, {"yes", 0, 0}, {"1", JF_CONFIG_IGNORE_ENV, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("JITFRAMES_CONTROL", cases[i].value, 1);
        assert_int_equal(init_control(cases[i].flags), 0);
        if (listens(getpid()) != cases[i].listens)
            fail_msg("JITFRAMES_CONTROL='%s' flags %u: listens %d", cases[i].value, cases[i].flags,
                     !cases[i].listens);
        assert_int_equal(jf_shutdown(), 0);
        assert_false(listens(getpid()));
    }
    unsetenv("JITFRAMES_CONTROL");
    jf_config c = JF_CONFIG_INIT;
    c.flags = 0x80; /* no such flag */
    assert_int_equal(jf_init(&c), JF_EINVAL);
}

static void requests_enable_disable_and_refuse_bad_sinks(void **state)
{
    (void)state;
    static unsigned char code[64];
    map_remove(getpid());
    assert_int_equal(init_control(JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL), 0);
    jf_region reg = test_region(code, 16, "ctl_in_process");
    assert_int_equal(jf_register(&reg), 0);
    jf__ctl_reply r = ask(getpid(), JF_CTL_ENABLE, JF_SINK_PERFMAP);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.enabled, JF_SINK_PERFMAP);
    assert_int_equal(r.live_regions, 1);
    assert_int_equal(r.regions[0], 1);
    assert_int_equal(jf_enabled_sinks(), JF_SINK_PERFMAP);
    char *map = map_read(getpid(), NULL);
    assert_non_null(map);
    assert_true(map_has_line(map, (uintptr_t)code, 16, "ctl_in_process"));
    free(map);

    /* Bits outside JF_SINK_ALL: an error, nothing changes. */
    uint8_t raw[JF_CTL_REQUEST_SIZE];
    jf__ctl_request bad = {JF_CTL_VERSION, JF_CTL_DISABLE, 0x10};
    jf__ctl_encode_request(&bad, raw);
    jfc_error err;
    assert_true(jfc_exchange_raw(getpid(), raw, sizeof raw, &r, &err) > 0);
    assert_int_equal(r.status, JF_EINVAL);
    assert_non_null(strstr(r.message, "unknown sink bits 0x10"));
    assert_int_equal(jf_enabled_sinks(), JF_SINK_PERFMAP);

    r = ask(getpid(), JF_CTL_DISABLE, JF_SINK_PERFMAP);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.enabled, 0);
    assert_int_equal(jf_shutdown(), 0);
    map_remove(getpid());
}

static void wire_round_trip_and_rejects(void **state)
{
    (void)state;
    uint8_t raw[JF_CTL_REQUEST_SIZE];
    jf__ctl_request in = {JF_CTL_VERSION, JF_CTL_ENABLE, JF_SINK_JITDUMP | JF_SINK_GDB}, out;
    jf__ctl_encode_request(&in, raw);
    assert_memory_equal(raw, "jfrq", 4);
    assert_int_equal(jf__ctl_decode_request(raw, &out), 0);
    assert_int_equal(out.op, JF_CTL_ENABLE);
    assert_int_equal(out.sinks, JF_SINK_JITDUMP | JF_SINK_GDB);
    raw[4] = 2; /* version 2 */
    assert_int_equal(jf__ctl_decode_request(raw, &out), JF_ENOTSUP);
    raw[4] = 1;
    raw[6] = 9; /* op */
    assert_int_equal(jf__ctl_decode_request(raw, &out), JF_EINVAL);
    raw[6] = JF_CTL_ENABLE;
    raw[15] = 1; /* reserved */
    assert_int_equal(jf__ctl_decode_request(raw, &out), JF_EINVAL);

    static jf__ctl_reply r, back;
    static uint8_t buf[JF_CTL_REPLY_MAX];
    r = (jf__ctl_reply){
        .version = JF_CTL_VERSION, .op = 3, .status = JF_EACCES, .pid = 7, .live_regions = (uint64_t)1 << 40};
    r.bytes[3] = 99;
    snprintf(r.message, sizeof r.message, "no");
    memset(r.dump_dir, 'd', JF_CTL_DIR_MAX); /* the longest directory */
    size_t len = jf__ctl_encode_reply(&r, buf);
    assert_int_equal(len, JF_CTL_REPLY_MAX - JF_CTL_MESSAGE_MAX + 2);
    assert_int_equal(jf__ctl_reply_size(buf), len);
    assert_int_equal(jf__ctl_decode_reply(buf, len, &back), 0);
    assert_int_equal(back.status, JF_EACCES);
    assert_int_equal(back.live_regions, (uint64_t)1 << 40);
    assert_int_equal(back.bytes[3], 99);
    assert_string_equal(back.message, "no");
    assert_int_equal(strlen(back.dump_dir), JF_CTL_DIR_MAX);
    assert_int_not_equal(jf__ctl_decode_reply(buf, len - 1, &back), 0);
    buf[12]++; /* size no longer matches the texts */
    assert_int_equal(jf__ctl_reply_size(buf), 0);
}

/* Is any socket of pid's a jitframes control socket, or any name of pid's? */
static int channel_traces(pid_t pid)
{
    char path[64], line[512], prefix[64];
    snprintf(prefix, sizeof prefix, "@" JF_CTL_NAME_PREFIX "%ld.", (long)pid);
    snprintf(path, sizeof path, "/proc/%ld/net/unix", (long)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int traces = 0;
    while (fgets(line, sizeof line, f))
        traces += strstr(line, prefix) != NULL;
    fclose(f);
    return traces + listens(pid);
}

static void forked_child_answers_itself_and_exec_leaves_nothing(void **state)
{
    (void)state;
    assert_int_equal(init_control(JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL), 0);
    int go[2], exec_done[2];
    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    assert_int_equal(pipe2(exec_done, O_CLOEXEC), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* fork() has returned: the atfork handler has started our channel. */
        close(go[1]);
        close(exec_done[0]);
        char c = 'r';
        if (write(exec_done[1], &c, 1) == 1 && read(go[0], &c, 1) == 1) /* the parent has asked us */
            execl("/bin/sleep", "sleep", "60", (char *)NULL);
        _exit(127); /* also when the parent failed and went away */
    }
    close(go[0]);
    close(exec_done[1]);
    char c;
    assert_int_equal(read(exec_done[0], &c, 1), 1);
    jf__ctl_reply r = ask(child, JF_CTL_STATUS, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.pid, child);
    r = ask(getpid(), JF_CTL_STATUS, 0);
    assert_int_equal(r.pid, getpid());
    /* Its own name, and found by its fds; the socket it accepted for our
     * request may still be listed under its name until it is closed just
     * after the reply: wait for that (capped). */
    for (int i = 0; i < 1000 && channel_traces(child) > 2; i++)
        usleep(10000);
    assert_int_equal(channel_traces(child), 2);

    assert_int_equal(write(go[1], "x", 1), 1);
    assert_int_equal(read(exec_done[0], &c, 1), 0); /* EOF: exec closed its copy */
    /* The kernel releases a socket closed by exec when the task next
     * returns to user space, maybe after our EOF: wait for that (capped). */
    for (int i = 0; i < 1000 && channel_traces(child) != 0; i++)
        usleep(10000);
    assert_int_equal(channel_traces(child), 0);
    jfc_error err;
    char name[108];
    assert_int_equal(jfc_find_socket(child, name, sizeof name, &err), -1);
    assert_int_equal(err.kind, JFC_NO_CHANNEL);
    assert_true(listens(getpid())); /* the parent's channel is untouched */
    kill(child, SIGKILL);
    int status = test_wait_child(child, 30);
    assert_true(status != -1 && WIFSIGNALED(status));
    close(go[1]);
    close(exec_done[0]);
    assert_int_equal(jf_shutdown(), 0);
}

typedef struct thread_sample {
    char state;
    unsigned long long ticks;    /* utime + stime */
    unsigned long long switches; /* voluntary context switches */
} thread_sample;

static thread_sample sample_thread(pid_t tid)
{
    thread_sample s = {0, 0, 0};
    char path[64], line[1024];
    unsigned long long utime, stime;
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", (long)tid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    const char *after_comm = strrchr(line, ')');
    assert_non_null(after_comm);
    /* Fields 3 (state) and 14, 15 (utime, stime) of proc(5). */
    assert_int_equal(sscanf(after_comm + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &s.state,
                            &utime, &stime),
                     3);
    s.ticks = utime + stime;
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", (long)tid);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        sscanf(line, "voluntary_ctxt_switches: %llu", &s.switches);
    fclose(f);
    return s;
}

/* Idle, the listener sleeps in poll() with no timeout: over a second it
 * stays asleep, is never woken and uses no CPU. Numbers, not time, are
 * compared; bench_control measures a whole idle process over 10 s. */
static void idle_listener_sleeps_and_never_wakes(void **state)
{
    (void)state;
    assert_int_equal(init_control(JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL), 0);
    jf__ctl_reply r = ask(getpid(), JF_CTL_STATUS, 0); /* it has served once, and sleeps again */
    assert_int_equal(r.status, 0);
    pid_t tid = listener_tid();
    assert_true(tid > 0);
    /* The reply came before the listener closed the connection and went
     * back to poll(): wait until it sleeps there (capped). */
    thread_sample before = sample_thread(tid);
    for (int i = 0; i < 1000 && before.state != 'S'; i++) {
        usleep(1000);
        before = sample_thread(tid);
    }
    usleep(1000); /* 'S' is seen in poll() or on the log lock: let the latter pass */
    before = sample_thread(tid);
    sleep(1);
    thread_sample after = sample_thread(tid);
    printf("idle listener %ld over 1 s: state %c, %llu CPU ticks in all, %llu voluntary switches in all, "
           "%llu during the second\n",
           (long)tid, after.state, after.ticks, after.switches, after.switches - before.switches);
    assert_int_equal(after.state, 'S');
    assert_int_equal(after.switches, before.switches);
    assert_int_equal(after.ticks, before.ticks);
    assert_int_equal(jf_shutdown(), 0);
    assert_int_equal(listener_tid(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flag_starts_a_listener_and_last_shutdown_joins_it),
        cmocka_unit_test(environment_word_asks_for_it_unless_ignored),
        cmocka_unit_test(requests_enable_disable_and_refuse_bad_sinks),
        cmocka_unit_test(wire_round_trip_and_rejects),
        cmocka_unit_test(forked_child_answers_itself_and_exec_leaves_nothing),
        cmocka_unit_test(idle_listener_sleeps_and_never_wakes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
