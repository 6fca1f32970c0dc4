/*
 * The listener thread's loop: one poll() over the stop signal, the
 * listening socket and every connection still waiting for its request.
 * No connection is ever waited for alone, so none can hold up another:
 * each accepted one is non-blocking, read as soon as its request arrives
 * (one arriving in pieces: below) and answered at once when its 16 bytes
 * are in, or when its own deadline passes. At most PENDING_MAX wait at a time; a newer one replaces the
 * oldest of the same peer process, or else the oldest of all (answered
 * with an error), so what a flood of connections costs is bounded per
 * connection, and a process flooding the channel only displaces its own
 * connections: another's request is answered as soon as its bytes are in.
 * Accepting is limited per round so that the connections already accepted
 * are read first.
 *
 * A client sends its 16 bytes at once, and they arrive at once. One whose
 * request arrives in pieces is not watched for each piece: it is looked at
 * again PATIENCE_MS later (and so on until its deadline), so a sender of
 * one byte at a time wakes the thread once per PATIENCE_MS, not per byte,
 * and, answered no sooner, opens at most one connection per PATIENCE_MS:
 * the accept, credentials and reply each costs are what bound the host's
 * loss (bench_control: the host's work under 1,000 idle connections and
 * 50 one-byte senders).
 *
 * Idle, the thread sleeps in poll() with no timeout. Out of descriptors or
 * memory, accepting pauses for BACKOFF_MS (the pending connections are still
 * served) instead of spinning.
 */
#define _GNU_SOURCE
#include "control.h"
#include "log.h"
#include "sys.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    PENDING_MAX = 128,
    ADMITTING = PENDING_MAX,
    ACCEPTS_PER_ROUND = 16,
    BACKOFF_MS = 1000,
    PATIENCE_MS = 100
};

static jf__ctl_conn pending[PENDING_MAX];
/* When to look again at a connection whose request came in part; 0: it is
 * watched by poll(). The thread's own. */
static uint64_t next_look[PENDING_MAX];
/* Each pending connection's descriptor + 1 (0: none; zero-initialised, so
 * a child forked before the thread ever ran closes nothing): a child forked
 * meanwhile closes its copies. Cleared before the thread closes one, so a
 * child never closes a descriptor number that was reused. */
static int held[PENDING_MAX + 1]; /* [ADMITTING]: the one being accepted */

/* The loop's own state: the thread's, never shared. */
typedef struct loop_state {
    int listen_fd, wake_fd;
    uint64_t accept_resumes_ns; /* 0: accepting */
    int warned;
} loop_state;

static void release(int slot)
{
    close(__atomic_exchange_n(&held[slot], 0, __ATOMIC_SEQ_CST) - 1);
    pending[slot].fd = -1;
    next_look[slot] = 0;
}

/* Read what a pending connection sent: answered, or waiting for the rest
 * of its request (looked at again PATIENCE_MS later), or for all of it. */
static void read_from(int slot)
{
    if (!jf__control_receive(&pending[slot]))
        release(slot);
    else if (pending[slot].got)
        next_look[slot] = jf__monotonic_ns() + (uint64_t)PATIENCE_MS * 1000000u;
}

/* The slot for a new connection from `pid`: a free one, else that peer's
 * own oldest (a process flooding the channel displaces its own
 * connections, not another's), else the oldest of all, answered and
 * closed first. */
static int slot_for(pid_t pid)
{
    int oldest = -1, own_oldest = -1;
    for (int i = 0; i < PENDING_MAX; i++) {
        if (pending[i].fd < 0)
            return i;
        if (oldest < 0 || pending[i].deadline_ns < pending[oldest].deadline_ns)
            oldest = i;
        if (pending[i].pid == pid &&
            (own_oldest < 0 || pending[i].deadline_ns < pending[own_oldest].deadline_ns))
            own_oldest = i;
    }
    int victim = own_oldest >= 0 ? own_oldest : oldest;
    char why[128];
    snprintf(why, sizeof why, "dropped unanswered: a newer connection took its place (%d wait at most)",
             PENDING_MAX);
    jf__control_give_up(&pending[victim], why);
    release(victim);
    return victim;
}

/* A new connection: refused at once, or answered at once if its request is
 * already in, or left waiting. */
static void take(int fd)
{
    jf__ctl_conn c = {.fd = fd};
    __atomic_store_n(&held[ADMITTING], fd + 1, __ATOMIC_SEQ_CST);
    if (jf__control_admit(&c)) {
        int slot = slot_for(c.pid);
        pending[slot] = c;
        __atomic_store_n(&held[slot], fd + 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&held[ADMITTING], 0, __ATOMIC_SEQ_CST);
        read_from(slot);
        return;
    }
    close(__atomic_exchange_n(&held[ADMITTING], 0, __ATOMIC_SEQ_CST) - 1);
}

static void accept_some(loop_state *s)
{
    for (int i = 0; i < ACCEPTS_PER_ROUND; i++) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            take(fd);
            continue;
        }
        if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
            return;
        if (!s->warned++)
            jf__log(JF_LOG_WARNING, "control channel: accept: %s", strerror(errno));
        s->accept_resumes_ns = jf__monotonic_ns() + (uint64_t)BACKOFF_MS * 1000000u;
        return;
    }
}

/* The poll set: stop signal, listener (unless paused), pending ones (their
 * slots in slots[]). Returns its size. */
static int watch_list(loop_state *s, struct pollfd *p, int *slots)
{
    int n = 0;
    p[n++] = (struct pollfd){.fd = s->wake_fd, .events = POLLIN};
    if (s->accept_resumes_ns && jf__monotonic_ns() >= s->accept_resumes_ns)
        s->accept_resumes_ns = 0;
    p[n++] = (struct pollfd){.fd = s->accept_resumes_ns ? -1 : s->listen_fd, .events = POLLIN};
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i].fd >= 0 && !next_look[i]) {
            slots[n] = i;
            p[n++] = (struct pollfd){.fd = pending[i].fd, .events = POLLIN};
        }
    return n;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
    return !a || (b && b < a) ? b : a;
}

/* Until the nearest deadline or look (or the end of a pause); -1: none. */
static int poll_timeout_ms(const loop_state *s)
{
    uint64_t next = s->accept_resumes_ns;
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i].fd >= 0)
            next = earliest(earliest(next, pending[i].deadline_ns), next_look[i]);
    if (!next)
        return -1;
    uint64_t now = jf__monotonic_ns();
    return next <= now ? 0 : (int)((next - now + 999999u) / 1000000u);
}

static void serve_ready(const struct pollfd *p, const int *slots, int n)
{
    for (int k = 2; k < n; k++)
        if (p[k].revents)
            read_from(slots[k]);
}

/* The connections whose request came in part, when their look is due. */
static void look_again(void)
{
    uint64_t now = jf__monotonic_ns();
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i].fd >= 0 && next_look[i] && next_look[i] <= now) {
            next_look[i] = 0;
            read_from(i);
        }
}

static void expire_late(void)
{
    uint64_t now = jf__monotonic_ns();
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i].fd >= 0 && pending[i].deadline_ns <= now) {
            jf__control_expire(&pending[i]);
            release(i);
        }
}

static void drop_all(const char *why)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (pending[i].fd >= 0) {
            jf__control_give_up(&pending[i], why);
            release(i);
        }
}

/* Poll failed (ENOMEM): wait for a stop, at most BACKOFF_MS; 1 if stopping. */
static int back_off(int wake_fd)
{
    struct pollfd p = {.fd = wake_fd, .events = POLLIN};
    return poll(&p, 1, BACKOFF_MS) > 0;
}

void jf__control_listen(int listen_fd, int wake_fd)
{
    static struct pollfd p[2 + PENDING_MAX]; /* only this thread runs the loop */
    static int slots[2 + PENDING_MAX];
    loop_state s = {.listen_fd = listen_fd, .wake_fd = wake_fd};
    jf__control_peer_refresh();
    for (int i = 0; i < PENDING_MAX; i++)
        pending[i].fd = -1;
    for (;;) {
        int n = watch_list(&s, p, slots);
        if (poll(p, (nfds_t)n, poll_timeout_ms(&s)) < 0) {
            if (errno != EINTR && back_off(wake_fd))
                break;
            continue;
        }
        if (p[0].revents)
            break;
        serve_ready(p, slots, n);
        look_again();
        expire_late();
        if (p[1].revents & POLLIN)
            accept_some(&s);
        else if (p[1].revents) /* never for a listening socket: no spin if so */
            s.accept_resumes_ns = jf__monotonic_ns() + (uint64_t)BACKOFF_MS * 1000000u;
    }
    drop_all("control channel stopping");
}

void jf__control_close_inherited(void)
{
    for (int i = 0; i <= PENDING_MAX; i++) {
        int fd = __atomic_exchange_n(&held[i], 0, __ATOMIC_SEQ_CST) - 1;
        if (fd >= 0)
            close(fd);
    }
}
