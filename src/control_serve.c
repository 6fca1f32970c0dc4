/*
 * Reading and answering one control connection. Who asks is taken from the
 * kernel (SO_PEERCRED) when the connection is accepted, never from the
 * request: control_peer.c decides whether it is obeyed; anyone else gets a
 * refusal carrying none of the process's state at once. An obeyed peer's
 * request is one fixed-size message, read as it arrives without ever
 * waiting for it (control_loop.c waits for all connections at once, each
 * with its own deadline); anything malformed is answered with an error and
 * changes nothing. Replies are sent with MSG_NOSIGNAL | MSG_DONTWAIT: a
 * client gone away raises no SIGPIPE and one that does not read never
 * blocks us. Every diagnostic a peer can cause is sampled
 * (jf__log_sampled): a flood of requests writes a few log lines.
 */
#define _GNU_SOURCE
#include "control.h"
#include "control_wire.h"
#include "error.h"
#include "log.h"
#include "registry.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { REQUEST_DEADLINE_MS = 1000 };

static const char *const op_names[] = {"?", "status", "enable", "disable"};

/* How many of each a peer caused: the sampled logs' counters. */
static uint64_t refused, failed, answered, unsent;

static int execute(const jf__ctl_request *req)
{
    switch (req->op) {
    case JF_CTL_ENABLE: return jf_enable(req->sinks);
    case JF_CTL_DISABLE: return jf_disable(req->sinks);
    default: return 0;
    }
}

static void fill_state(jf__ctl_reply *r)
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

static void send_reply(int conn, const jf__ctl_reply *r)
{
    static uint8_t out[JF_CTL_REPLY_MAX]; /* only the listener thread answers */
    size_t len = jf__ctl_encode_reply(r, out);
    /* A short send: the client stopped reading; it sees a truncated reply. */
    if (send(conn, out, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        jf__log_sampled(&unsent, JF_LOG_DEBUG, "control channel: reply not sent: %s", strerror(errno));
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

/* The reply being built: 4.7 KiB, off the thread's stack; only the
 * listener thread answers. */
static jf__ctl_reply reply;

static void answer(const jf__ctl_conn *c, int status, const char *message, int with_state)
{
    snprintf(reply.message, sizeof reply.message, "%s", status ? message : "");
    reply.status = status;
    if (with_state)
        fill_state(&reply);
    send_reply(c->fd, &reply);
}

int jf__control_admit(jf__ctl_conn *c)
{
    reply = (jf__ctl_reply){.version = JF_CTL_VERSION};
    struct ucred peer;
    socklen_t len = sizeof peer;
    char why[JF_CTL_MESSAGE_MAX + 1];
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || len != sizeof peer) {
        answer(c, JF_EACCES, "refused: the peer's credentials cannot be read", 0);
        return 0;
    }
    if (!jf__control_peer_obeyed(peer.uid, why, sizeof why)) {
        jf__log_sampled(&refused, JF_LOG_WARNING,
                        "control channel: refused a request from uid %u (pid %ld): %s", (unsigned)peer.uid,
                        (long)peer.pid, why);
        answer(c, JF_EACCES, why, 0);
        return 0;
    }
    c->uid = peer.uid;
    c->pid = peer.pid;
    c->deadline_ns = jf__monotonic_ns() + (uint64_t)REQUEST_DEADLINE_MS * 1000000u;
    c->got = 0;
    return 1;
}

/* Answer an obeyed peer: the outcome of its request, with the process's
 * state if it was read. */
static void conclude(const jf__ctl_conn *c, const jf__ctl_request *req, int rc, const char *message,
                     int with_state)
{
    reply = (jf__ctl_reply){.version = JF_CTL_VERSION, .op = req->op};
    answer(c, rc, message, with_state);
    /* A bad request is the client's problem, not the host's: info. */
    jf__log_sampled(rc ? &failed : &answered, JF_LOG_INFO, "control channel: %s 0x%x from uid %u pid %ld: %s",
                    op_names[req->op], (unsigned)req->sinks, (unsigned)c->uid, (long)c->pid,
                    rc ? message : "done");
    tell_runtime(req->op); /* after answering: the runtime may take a while */
}

void jf__control_give_up(jf__ctl_conn *c, const char *why)
{
    jf__ctl_request none = {0};
    conclude(c, &none, JF_EIO, why, 0); /* nothing asked: no state, no registry lock */
}

/* A whole request: decode and carry it out; req stays 0 if malformed. */
static int carry_out(const jf__ctl_conn *c, jf__ctl_request *req)
{
    jf__ctl_request decoded;
    int rc = jf__ctl_decode_request(c->buf, &decoded);
    if (rc == 0) {
        *req = decoded;
        rc = execute(req);
    }
    return rc;
}

int jf__control_receive(jf__ctl_conn *c)
{
    ssize_t n = recv(c->fd, c->buf + c->got, JF_CTL_REQUEST_SIZE - c->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 1;
    if (n > 0 && (c->got += (size_t)n) < JF_CTL_REQUEST_SIZE)
        return 1;
    jf__ctl_request req = {0};
    int rc;
    if (n < 0)
        rc = jf__fail(JF_EIO, "control channel: recv: %s", strerror(errno));
    else if (n == 0)
        rc = jf__fail(JF_EINVAL, "control request too short (%zu of %d bytes)", c->got, JF_CTL_REQUEST_SIZE);
    else
        rc = carry_out(c, &req);
    conclude(c, &req, rc, jf_last_error(), 1);
    return 0;
}

void jf__control_expire(jf__ctl_conn *c)
{
    jf__fail(JF_EIO, "control request incomplete after %d ms (%zu of %d bytes)", REQUEST_DEADLINE_MS, c->got,
             JF_CTL_REQUEST_SIZE);
    jf__control_give_up(c, jf_last_error());
}
