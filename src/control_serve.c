/*
 * Answering one control connection. Who asks is taken from the kernel
 * (SO_PEERCRED), never from the request: only this process's effective uid
 * and root are obeyed; anyone else gets a refusal carrying none of the
 * process's state, and the refusal is logged. The request is one fixed-size
 * message read within a deadline, so a client that stalls or trickles
 * bytes holds the thread for at most REQUEST_DEADLINE_MS; anything
 * malformed is answered with an error and changes nothing. Replies are sent
 * with MSG_NOSIGNAL | MSG_DONTWAIT: a client gone away raises no SIGPIPE
 * and one that does not read never blocks us.
 */
#define _GNU_SOURCE
#include "control.h"
#include "control_wire.h"
#include "error.h"
#include "log.h"
#include "registry.h"
#include "sys.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { REQUEST_DEADLINE_MS = 1000 };

static const char *const op_names[] = {"?", "status", "enable", "disable"};

static int peer_obeyed(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

/* The 1st, 2nd, 4th, 8th... refusal is logged: a flood cannot fill the log. */
static void log_refusal(const struct ucred *peer)
{
    static uint64_t refusals;
    uint64_t n = ++refusals;
    if ((n & (n - 1)) == 0)
        jf__log(JF_LOG_WARNING, "control channel: refused a request from uid %u (pid %ld): only uid %u "
                                "or root are obeyed (%llu refused so far)",
                (unsigned)peer->uid, (long)peer->pid, (unsigned)geteuid(), (unsigned long long)n);
}

/* Read exactly JF_CTL_REQUEST_SIZE bytes before the deadline. */
static int read_request(int conn, int wake_fd, uint8_t *buf)
{
    uint64_t deadline = jf__monotonic_ns() + (uint64_t)REQUEST_DEADLINE_MS * 1000000u;
    size_t got = 0;
    while (got < JF_CTL_REQUEST_SIZE) {
        uint64_t now = jf__monotonic_ns();
        if (now >= deadline)
            return jf__fail(JF_EIO, "control request incomplete after %d ms (%zu of %d bytes)",
                            REQUEST_DEADLINE_MS, got, JF_CTL_REQUEST_SIZE);
        struct pollfd p[2] = {{.fd = conn, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
        int wait_ms = (int)((deadline - now + 999999u) / 1000000u);
        if (poll(p, 2, wait_ms) < 0 && errno != EINTR)
            return jf__fail(JF_EIO, "control channel: poll: %s", strerror(errno));
        if (p[1].revents)
            return jf__fail(JF_EIO, "control channel stopping");
        if (!p[0].revents)
            continue;
        ssize_t n = recv(conn, buf + got, JF_CTL_REQUEST_SIZE - got, MSG_DONTWAIT);
        if (n == 0)
            return jf__fail(JF_EINVAL, "control request too short (%zu of %d bytes)", got, JF_CTL_REQUEST_SIZE);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return jf__fail(JF_EIO, "control channel: recv: %s", strerror(errno));
        if (n > 0)
            got += (size_t)n;
    }
    return 0;
}

static int execute(const jf_ctl_request *req)
{
    switch (req->op) {
    case JF_CTL_ENABLE: return jf_enable(req->sinks);
    case JF_CTL_DISABLE: return jf_disable(req->sinks);
    default: return 0;
    }
}

static void fill_state(jf_ctl_reply *r)
{
    struct jf_stats st = JF_STATS_INIT;
    jf_stats(&st);
    r->pid = (uint32_t)getpid();
    r->uid = (uint32_t)geteuid();
    r->live_regions = st.live_regions;
    for (int i = 0; i < JF_SINK_COUNT; i++) {
        r->enabled |= st.sink[i].enabled ? 1u << i : 0;
        r->failed |= st.sink[i].failed ? 1u << i : 0;
        r->regions[i] = st.sink[i].regions;
        r->bytes[i] = st.sink[i].bytes;
        r->errors[i] = st.sink[i].errors;
    }
    r->lib_version[0] = JF_VERSION_MAJOR;
    r->lib_version[1] = JF_VERSION_MINOR;
    r->lib_version[2] = JF_VERSION_PATCH;
    jf__dump_dir(r->dump_dir, sizeof r->dump_dir);
}

static void send_reply(int conn, const jf_ctl_reply *r)
{
    static uint8_t out[JF_CTL_REPLY_MAX]; /* only the listener thread answers */
    size_t len = jf__ctl_encode_reply(r, out);
    /* A short send: the client stopped reading; it sees a truncated reply. */
    if (send(conn, out, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        jf__log(JF_LOG_DEBUG, "control channel: reply not sent: %s", strerror(errno));
}

/* The runtime's callback (jf_set_control_callback). Two atomics, not a
 * lock: a lock held by the listener across a fork() would stay locked in
 * the child. ctx is published before fn. */
static jf_control_fn control_fn;
static void *control_ctx;

void jf_set_control_callback(jf_control_fn fn, void *ctx)
{
    jf__clear_error();
    __atomic_store_n(&control_fn, (jf_control_fn)NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&control_ctx, ctx, __ATOMIC_RELEASE);
    __atomic_store_n(&control_fn, fn, __ATOMIC_RELEASE);
}

/* After an obeyed request that may have changed the sinks. */
static void tell_runtime(int op)
{
    jf_control_fn fn = __atomic_load_n(&control_fn, __ATOMIC_ACQUIRE);
    if (fn && (op == JF_CTL_ENABLE || op == JF_CTL_DISABLE))
        fn(__atomic_load_n(&control_ctx, __ATOMIC_ACQUIRE), jf_enabled_sinks());
}

void jf__control_serve(int conn, int wake_fd)
{
    static jf_ctl_reply reply; /* 4.7 KiB: off the thread's stack */
    reply = (jf_ctl_reply){.version = JF_CTL_VERSION};
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || len != sizeof peer) {
        reply.status = jf__fail(JF_EACCES, "refused: the peer's credentials cannot be read");
    } else if (!peer_obeyed(peer.uid)) {
        log_refusal(&peer);
        reply.status = jf__fail(JF_EACCES, "refused: uid %u is neither this process's uid (%u) nor root",
                                (unsigned)peer.uid, (unsigned)geteuid());
    } else {
        uint8_t buf[JF_CTL_REQUEST_SIZE];
        jf_ctl_request req = {0};
        int rc = read_request(conn, wake_fd, buf);
        if (rc == 0 && (rc = jf__ctl_decode_request(buf, &req)) == 0)
            reply.op = req.op;
        if (rc == 0)
            rc = execute(&req);
        reply.status = rc;
        snprintf(reply.message, sizeof reply.message, "%s", rc ? jf_last_error() : "");
        fill_state(&reply);
        /* A bad request is the client's problem, not the host's: info. */
        jf__log(JF_LOG_INFO, "control channel: %s 0x%x from uid %u pid %ld: %s",
                op_names[reply.op], (unsigned)req.sinks, (unsigned)peer.uid, (long)peer.pid,
                rc ? reply.message : "done");
    }
    if (reply.status && !reply.message[0])
        snprintf(reply.message, sizeof reply.message, "%s", jf_last_error());
    send_reply(conn, &reply);
    tell_runtime(reply.op); /* after answering: the runtime may take a while */
}
