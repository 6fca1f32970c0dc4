/* libFuzzer target over the control channel's request handling: each input
 * is sent as one client's bytes over a socketpair and answered by the
 * library's own jf__control_admit and jf__control_receive, as the listener
 * calls them (the peer is this process: obeyed). The
 * reply must always be a well-formed reply whose status is 0 exactly when
 * the input's first 16 bytes are a valid status request. Valid enable and
 * disable requests are skipped (they would write files). The input is also
 * fed to the client's reply decoder. */
#define _GNU_SOURCE
#include "control.h"
#include "control_wire.h"
#include "jitframes.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int initialised;

static void setup(void)
{
    jf_config c = JF_CONFIG_INIT;
    c.flags = JF_CONFIG_IGNORE_ENV;
    if (jf_init(&c) != 0)
        abort();
    initialised = 1;
}

/* What the listener does with one connection: admit it, then read until it
 * is answered. All the input is already there (and then EOF), so each call
 * makes progress; more calls than bytes would be a loop that never ends. */
static void answer(int fd, size_t sent)
{
    jf__ctl_conn c = {.fd = fd, .deadline_ns = UINT64_MAX};
    if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        abort();
    if (jf__control_admit(&c) != 1)
        __builtin_trap(); /* this process is always obeyed */
    for (size_t calls = 0; jf__control_receive(&c) == 1; calls++)
        if (calls > sent + 2)
            __builtin_trap();
}

static size_t read_reply(int fd, uint8_t *buf)
{
    size_t got = 0;
    ssize_t n;
    while (got < JF_CTL_REPLY_MAX && (n = read(fd, buf + got, JF_CTL_REPLY_MAX - got)) > 0)
        got += (size_t)n;
    return got;
}

static void serve(const uint8_t *data, size_t size, int expect_ok)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    size_t n = size > 4096 ? 4096 : size; /* fits the socket buffer: never blocks */
    if (n && send(sv[0], data, n, MSG_NOSIGNAL) != (ssize_t)n)
        abort();
    shutdown(sv[0], SHUT_WR);
    answer(sv[1], n);
    close(sv[1]);
    static uint8_t buf[JF_CTL_REPLY_MAX];
    static jf__ctl_reply r;
    size_t got = read_reply(sv[0], buf);
    close(sv[0]);
    if (got < JF_CTL_REPLY_HEADER_SIZE || jf__ctl_reply_size(buf) != got ||
        jf__ctl_decode_reply(buf, got, &r) != 0)
        __builtin_trap();
    if ((r.status == 0) != expect_ok)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!initialised)
        setup();
    jf__ctl_request req;
    int valid = size >= JF_CTL_REQUEST_SIZE && jf__ctl_decode_request(data, &req) == 0;
    if (!valid || req.op == JF_CTL_STATUS)
        serve(data, size, valid);
    if (size >= JF_CTL_REPLY_HEADER_SIZE) {
        size_t whole = jf__ctl_reply_size(data);
        static jf__ctl_reply r;
        if (whole && whole <= size)
            (void)jf__ctl_decode_reply(data, whole, &r);
    }
    return 0;
}
