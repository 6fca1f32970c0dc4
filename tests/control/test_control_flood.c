/* The control channel under floods from peers it obeys (this process's own
 * uid): a status request is answered while 1,000 idle connections and 50
 * slow senders (one byte at a time) are held open, where one listener
 * thread serving connections in turn took 11 s; and thousands of
 * malformed and valid requests write a logarithmic number of log lines,
 * not one each; a request sent one byte at a time wakes the listener a
 * few times, not once per byte (what makes slow senders cheap for the
 * host: bench/bench_control measures the host's work under them). Threads: the listener answers while this one floods (run
 * under TSan: label threads). The answer's latency is measured by
 * bench/bench_control; here the bound is generous (a busy machine). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <glob.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_client.h"
#include "jitframes.h"

enum {
    IDLE = 1000,
    SLOW = 50,
    CONNECT_RETRIES = 4000, /* a full backlog: 1 ms apart, for all connections together */
    MALFORMED = 2000,
    VALID = 2000,
    ANSWER_BOUND_MS = 2000, /* 20x the 100 ms required: a busy 2-core machine */
    PIECE_GAP_US = 3000,    /* between the bytes of a request sent in pieces */
    PIECE_WAKES_MAX = 5,    /* of 15 pieces: the listener looks again, not per byte */
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int start_channel(void)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV | JF_CONFIG_CONTROL;
    return jf_init(&c);
}

/* Retries left (a full backlog): shared by every connection opened. */
static int retries = CONNECT_RETRIES;

/* A non-blocking connection to the channel named `name`, retried while
 * the backlog is full; -1 if it stays full beyond the retries left. */
static int open_connection(const char *name)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    memcpy(addr.sun_path + 1, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    while (retries-- > 0) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&addr, len) == 0)
            return fd;
        int e = errno;
        close(fd);
        if (e != EAGAIN)
            return -1;
        usleep(1000);
    }
    return -1;
}

/* Whether a whole, successful reply comes on fd within 4x the bound. */
static int successful_reply(int fd, uint8_t in[JF_CTL_REPLY_MAX])
{
    double t0 = now_ms();
    size_t got = 0, want = JF_CTL_REPLY_HEADER_SIZE;
    while (got < want && now_ms() - t0 < 4 * ANSWER_BOUND_MS) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n = poll(&p, 1, 100) == 1 ? recv(fd, in + got, want - got, 0) : -1;
        if (n == 0)
            break;
        got += n > 0 ? (size_t)n : 0;
        if (got == JF_CTL_REPLY_HEADER_SIZE && want == JF_CTL_REPLY_HEADER_SIZE)
            want = jf__ctl_reply_size(in);
    }
    static jf__ctl_reply reply;
    return got >= JF_CTL_REPLY_HEADER_SIZE && got == want && jf__ctl_decode_reply(in, got, &reply) == 0 &&
           reply.status == 0;
}

/* A status request on a fresh connection to `name`: milliseconds until
 * its whole reply, successful, is in; -1 if none came within 4x the bound. */
static double timed_status(const char *name)
{
    double t0 = now_ms();
    int fd = open_connection(name);
    uint8_t out[JF_CTL_REQUEST_SIZE], in[JF_CTL_REPLY_MAX];
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    jf__ctl_encode_request(&req, out);
    if (fd < 0 || send(fd, out, sizeof out, MSG_NOSIGNAL) != (ssize_t)sizeof out)
        return -1;
    int ok = successful_reply(fd, in);
    double took = now_ms() - t0;
    close(fd);
    return ok ? took : -1;
}

static void allow_descriptors(rlim_t want)
{
    struct rlimit r;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &r), 0);
    if (r.rlim_cur < want) {
        r.rlim_cur = want < r.rlim_max ? want : r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

static void status_answered_while_1000_idle_and_50_slow_connections_wait(void **state)
{
    (void)state;
    allow_descriptors(IDLE + SLOW + 256);
    assert_int_equal(start_channel(), 0);
    char name[108];
    jfc_error err;
    assert_int_equal(jfc_find_socket(getpid(), name, sizeof name, &err), 0);
    static int idle[IDLE], slow[SLOW];
    int opened = 0;
    /* A backlog that stays full ends the opening: the channel is stuck. */
    retries = CONNECT_RETRIES;
    memset(idle, -1, sizeof idle);
    memset(slow, -1, sizeof slow);
    for (int i = 0; i < IDLE && (i == 0 || idle[i - 1] >= 0); i++)
        opened += (idle[i] = open_connection(name)) >= 0;
    for (int i = 0; i < SLOW && opened == IDLE + i; i++) {
        slow[i] = open_connection(name);
        if (slow[i] >= 0 && send(slow[i], "jfrq", 1, MSG_NOSIGNAL) == 1)
            opened++;
    }
    for (int i = 0; i < SLOW; i++) /* one more byte each: still incomplete */
        if (slow[i] >= 0)
            (void)send(slow[i], "f", 1, MSG_NOSIGNAL);
    retries = CONNECT_RETRIES;
    double took = timed_status(name);
    print_message("status answered in %.1f ms with %d connections open\n", took, opened);
    if (opened != IDLE + SLOW)
        fail_msg("only %d of %d connections could be opened: the channel accepts no more", opened,
                 IDLE + SLOW);
    assert_true(took >= 0 && took < ANSWER_BOUND_MS);
    /* And through the tool's client code (which lists this process's
     * 1,000 descriptors to find the socket: slower here). */
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    jf__ctl_reply reply;
    if (jfc_request(getpid(), &req, &reply, &err) != 0)
        fail_msg("status through the client: %s", err.msg);
    assert_int_equal(reply.status, 0);
    for (int i = 0; i < IDLE; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    for (int i = 0; i < SLOW; i++)
        if (slow[i] >= 0)
            close(slow[i]);
    assert_int_equal(jf_shutdown(), 0);
}

/* /proc/self/task/<tid>/status of the listener thread (named jf-control;
 * a sanitizer may run threads of its own). */
static void listener_status_path(char *out, size_t cap)
{
    glob_t g;
    int found = 0;
    assert_int_equal(glob("/proc/self/task/*/comm", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char comm[32] = "";
        FILE *f = fopen(g.gl_pathv[i], "r");
        if (f && fgets(comm, sizeof comm, f) && strcmp(comm, "jf-control\n") == 0 && !found++)
            snprintf(out, cap, "%.*sstatus", (int)(strlen(g.gl_pathv[i]) - strlen("comm")), g.gl_pathv[i]);
        if (f)
            fclose(f);
    }
    globfree(&g);
    assert_int_equal(found, 1);
}

/* How many times the thread went to sleep (and so was woken since). */
static long voluntary_switches(const char *status_path)
{
    FILE *f = fopen(status_path, "r");
    char line[256];
    long n = -1;
    while (f && n < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) != 1)
            n = -1;
    if (f)
        fclose(f);
    assert_true(n >= 0);
    return n;
}

/* Until the peer has read all fd sent (a Unix socket's unread bytes are
 * charged to the sender: SIOCOUTQ); 0 if it has not after 4 s. */
static int wait_until_read(int fd)
{
    int unread = 1;
    for (int i = 0; i < 4000 && unread; i++)
        if (ioctl(fd, SIOCOUTQ, &unread) != 0 || (unread && usleep(1000) != 0))
            return 0;
    return !unread;
}

static void request_sent_one_byte_at_a_time_wakes_the_listener_a_few_times_not_per_byte(void **state)
{
    (void)state;
    assert_int_equal(start_channel(), 0);
    char name[108], status_path[300];
    jfc_error err;
    assert_int_equal(jfc_find_socket(getpid(), name, sizeof name, &err), 0);
    listener_status_path(status_path, sizeof status_path);
    retries = CONNECT_RETRIES;
    int fd = open_connection(name);
    assert_true(fd >= 0);
    uint8_t out[JF_CTL_REQUEST_SIZE], in[JF_CTL_REPLY_MAX];
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    jf__ctl_encode_request(&req, out);
    assert_int_equal(send(fd, out, 1, MSG_NOSIGNAL), 1);
    assert_true(wait_until_read(fd)); /* the first piece is read at once */
    long before = voluntary_switches(status_path);
    for (int i = 1; i < JF_CTL_REQUEST_SIZE; i++) {
        assert_int_equal(send(fd, out + i, 1, MSG_NOSIGNAL), 1);
        usleep(PIECE_GAP_US);
    }
    long wakes = voluntary_switches(status_path) - before;
    int answered = successful_reply(fd, in);
    close(fd);
    print_message("%d pieces woke the listener %ld times\n", JF_CTL_REQUEST_SIZE - 1, wakes);
    assert_true(answered);
    assert_true(wakes <= PIECE_WAKES_MAX);
    assert_int_equal(jf_shutdown(), 0);
}

static int log_lines;

static void count_line(void *ctx, int level, const char *msg)
{
    (void)ctx;
    (void)level;
    if (strstr(msg, "control channel:"))
        __atomic_add_fetch(&log_lines, 1, __ATOMIC_RELAXED);
}

static void request_floods_log_a_logarithmic_number_of_lines(void **state)
{
    (void)state;
    jf_set_log_callback(count_line, NULL);
    assert_int_equal(start_channel(), 0);
    static const uint8_t malformed[JF_CTL_REQUEST_SIZE] = {'x', 'f', 'r', 'q', 1};
    jf__ctl_reply reply;
    jfc_error err;
    for (int i = 0; i < MALFORMED; i++)
        if (jfc_exchange_raw(getpid(), malformed, sizeof malformed, &reply, &err) <= 0 || reply.status == 0)
            fail_msg("malformed request %d: not refused (%s)", i, err.msg);
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    for (int i = 0; i < VALID; i++)
        if (jfc_request(getpid(), &req, &reply, &err) != 0 || reply.status != 0)
            fail_msg("status %d: %s", i, err.msg);
    assert_int_equal(jf_shutdown(), 0);
    jf_set_log_callback(NULL, NULL);
    int lines = __atomic_load_n(&log_lines, __ATOMIC_RELAXED);
    print_message("%d requests: %d log lines\n", MALFORMED + VALID, lines);
    /* 1st, 2nd, 4th... of each kind: 11 + 11 for 2,000 + 2,000. */
    assert_true(lines >= 2);
    assert_true(lines <= 24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_answered_while_1000_idle_and_50_slow_connections_wait),
        cmocka_unit_test(request_floods_log_a_logarithmic_number_of_lines),
        cmocka_unit_test(request_sent_one_byte_at_a_time_wakes_the_listener_a_few_times_not_per_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
