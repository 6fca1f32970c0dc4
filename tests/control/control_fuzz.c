/* Hostile clients against a running process's control channel: connect and
 * close, short and long garbage, a valid magic with random fields, 1 MiB of
 * noise, a client that stalls mid-request, a burst of idle connections.
 * Each must be answered with an error or closed; the process stays alive
 * and its sinks and regions stay as they were (checked with a status every
 * 50 attempts and at the end).
 * Usage: control_fuzz PID [ATTEMPTS [SEED]]; exit 0 if all held. */
#define _GNU_SOURCE
#include "control_client.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { BURST = 20, CHECK_EVERY = 50 };

static pid_t target;
static jf__ctl_reply before;
static long answered, closed, failures;

static void status(jf__ctl_reply *r)
{
    jf__ctl_request req = {JF_CTL_VERSION, JF_CTL_STATUS, 0};
    jfc_error err;
    if (jfc_request(target, &req, r, &err) != 0 || r->status != 0) {
        fprintf(stderr, "FAIL: status: %s\n", err.msg);
        exit(1);
    }
}

static void check_unchanged(const char *after)
{
    jf__ctl_reply now;
    status(&now);
    if (now.enabled != before.enabled || now.live_regions != before.live_regions) {
        fprintf(stderr, "FAIL: after %s: sinks 0x%x regions %llu, were 0x%x %llu\n", after, now.enabled,
                (unsigned long long)now.live_regions, before.enabled,
                (unsigned long long)before.live_regions);
        failures++;
    }
}

/* Send bytes; the reply must be an error, or the connection closed. */
static void attempt(const char *what, const uint8_t *bytes, size_t len)
{
    static jf__ctl_reply r;
    jfc_error err;
    long size = jfc_exchange_raw(target, bytes, len, &r, &err);
    if (size < 0) {
        fprintf(stderr, "FAIL: %s (%zu bytes): %s\n", what, len, err.msg);
        failures++;
    } else if (size == 0) {
        closed++;
    } else if (r.status == 0) {
        fprintf(stderr, "FAIL: %s (%zu bytes) was obeyed\n", what, len);
        failures++;
    } else {
        answered++;
    }
}

static void random_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rand() >> 7);
}

/* A request with the right magic and random fields that does not decode. */
static size_t invalid_with_magic(uint8_t *buf)
{
    jf__ctl_request parsed;
    do {
        random_bytes(buf, JF_CTL_REQUEST_SIZE);
        memcpy(buf, "jfrq", 4);
        if (rand() & 1)
            buf[4] = 1, buf[5] = 0; /* version 1: the fields after it are checked */
    } while (jf__ctl_decode_request(buf, &parsed) == 0);
    return JF_CTL_REQUEST_SIZE + (size_t)(rand() % 3 == 0) * (size_t)(rand() % 64);
}

static void one_round(long i, uint8_t *buf)
{
    switch (i % 4) {
    case 0: attempt("nothing", buf, 0); break;
    case 1: {
        size_t n = 1 + (size_t)rand() % (JF_CTL_REQUEST_SIZE - 1);
        random_bytes(buf, n);
        attempt("short garbage", buf, n);
        break;
    }
    case 2: {
        size_t n = JF_CTL_REQUEST_SIZE + (size_t)rand() % 200;
        do
            random_bytes(buf, n);
        while (memcmp(buf, "jfrq", 4) == 0);
        attempt("long garbage", buf, n);
        break;
    }
    default: attempt("invalid fields", buf, invalid_with_magic(buf));
    }
}

/* Half a request, then silence: answered (an error) once its time is up. */
static void stalled_client(void)
{
    jfc_error err;
    int fd = jfc_connect(target, &err);
    if (fd < 0 || send(fd, "jfrq\1", 5, MSG_NOSIGNAL) != 5) {
        fprintf(stderr, "FAIL: stalled client: %s\n", err.msg);
        failures++;
    } else {
        uint8_t header[JF_CTL_REPLY_HEADER_SIZE];
        ssize_t n = recv(fd, header, sizeof header, MSG_WAITALL); /* the tool's 10 s timeout applies */
        if (n == (ssize_t)sizeof header && jf__ctl_reply_size(header) && (int8_t)header[11] < 0)
            answered++;
        else if (n == 0)
            closed++;
        else {
            fprintf(stderr, "FAIL: stalled client got %zd bytes\n", n);
            failures++;
        }
    }
    if (fd >= 0)
        close(fd);
}

static void burst_of_idle_connections(void)
{
    int fds[BURST];
    jfc_error err;
    for (int i = 0; i < BURST; i++)
        fds[i] = jfc_connect(target, &err);
    for (int i = 0; i < BURST; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: control_fuzz PID [ATTEMPTS [SEED]]\n");
        return 2;
    }
    target = (pid_t)atol(argv[1]);
    long attempts = argc > 2 ? atol(argv[2]) : 2000;
    srand(argc > 3 ? (unsigned)atol(argv[3]) : 1u);
    status(&before);
    static uint8_t buf[1 << 20];
    for (long i = 0; i < attempts; i++) {
        one_round(i, buf);
        if (i % CHECK_EVERY == CHECK_EVERY - 1)
            check_unchanged("garbage");
    }
    random_bytes(buf, sizeof buf);
    buf[0] = 'x';
    attempt("1 MiB of noise", buf, sizeof buf);
    stalled_client();
    burst_of_idle_connections();
    check_unchanged("the stalled and idle clients");
    if (kill(target, 0) != 0) {
        fprintf(stderr, "FAIL: the process is gone\n");
        failures++;
    }
    printf("control_fuzz: %ld attempts: %ld answered with an error, %ld closed, %ld failures\n", attempts + 2,
           answered, closed, failures);
    return failures ? 1 : 0;
}
