/*
 * The control channel's socket and thread. The socket is an abstract
 * AF_UNIX name, "\0jitframes/<pid>.<random>": no file anywhere to clean
 * up or to plant, gone when its last descriptor closes, SOCK_CLOEXEC so an
 * exec leaves nothing. The random part keeps processes that share a network
 * namespace from colliding even when their pid namespaces give them the same
 * pid; the tool finds a process's socket through /proc/PID/fd, not the name.
 *
 * The thread (control_loop.c) blocks in poll() with no timeout on the
 * socket and an eventfd (the stop signal): idle, it never runs. It blocks
 * every signal, so the host's handlers never run on it and a signal is
 * never sent to it.
 */
#define _GNU_SOURCE
#include "control.h"
#include "control_wire.h"
#include "error.h"
#include "log.h"
#include "registry.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Guarded by control_lock; the listener only reads its own copy (fds). */
typedef struct channel_fds {
    int listen_fd;
    int wake_fd;
} channel_fds;

static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;
static int running;
static pthread_t listener;
static channel_fds channel = {-1, -1};
/* Connections queue here until the loop accepts them: it accepts them
 * as fast as they come, a burst waits in the backlog. */
enum { BACKLOG = 128, BIND_ATTEMPTS = 8 };

static uint64_t random_tag(void)
{
    uint64_t tag;
    if (getrandom(&tag, sizeof tag, GRND_NONBLOCK) == (ssize_t)sizeof tag)
        return tag;
    /* No entropy yet (early boot): the name only has to be unique. */
    return jf__monotonic_ns() * 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
}

/* Bind fd to a fresh abstract name; retried if another process has it. */
static int bind_abstract_name(int fd)
{
    for (int attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        int n = snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, JF_CTL_NAME_PREFIX "%ld.%016llx",
                         (long)getpid(), (unsigned long long)random_tag());
        socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
        if (bind(fd, (struct sockaddr *)&addr, len) == 0)
            return 0;
        if (errno != EADDRINUSE)
            break;
    }
    return jf__fail(jf__errno_code(errno), "control channel: cannot bind its socket: %s", strerror(errno));
}

static int open_channel(channel_fds *out)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return jf__fail(jf__errno_code(errno), "control channel: no AF_UNIX socket: %s", strerror(errno));
    int rc = bind_abstract_name(fd);
    if (rc == 0 && listen(fd, BACKLOG) != 0)
        rc = jf__fail(jf__errno_code(errno), "control channel: listen: %s", strerror(errno));
    int wake = rc ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (rc == 0 && wake < 0)
        rc = jf__fail(jf__errno_code(errno), "control channel: eventfd: %s", strerror(errno));
    if (rc) {
        close(fd);
        return rc;
    }
    *out = (channel_fds){fd, wake};
    return 0;
}

static void *listen_loop(void *arg)
{
    channel_fds fds = *(channel_fds *)arg;
    jf__control_listen(fds.listen_fd, fds.wake_fd);
    return NULL;
}

/* pthread_create with every signal blocked: the thread inherits the mask. */
static int spawn_listener(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&listener, NULL, listen_loop, &channel);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err)
        return jf__fail(jf__errno_code(err), "control channel: no thread: %s", strerror(err));
    pthread_setname_np(listener, "jf-control");
    return 0;
}

static void close_channel(void)
{
    close(channel.listen_fd);
    close(channel.wake_fd);
    channel = (channel_fds){-1, -1};
}

/* control_lock held. */
static int start_locked(void)
{
    if (running || !jf__initialised())
        return 0;
    int rc = open_channel(&channel);
    if (rc == 0 && (rc = spawn_listener()) != 0)
        close_channel();
    if (rc) {
        jf__log(JF_LOG_ERROR, "%s", jf_last_error());
        return rc;
    }
    running = 1;
    jf__log(JF_LOG_INFO, "control channel on");
    return 0;
}

int jf__control_start(void)
{
    pthread_mutex_lock(&control_lock);
    int rc = start_locked();
    pthread_mutex_unlock(&control_lock);
    return rc;
}

void jf__control_stop_if_unused(void)
{
    pthread_mutex_lock(&control_lock);
    if (running && !jf__initialised()) {
        uint64_t one = 1;
        /* An eventfd write of 1 cannot block or fail short of overflow. */
        if (write(channel.wake_fd, &one, sizeof one) == (ssize_t)sizeof one) {
            pthread_join(listener, NULL);
            close_channel();
            running = 0;
        } else { /* the thread runs on: its descriptors stay open */
            jf__log(JF_LOG_ERROR, "control channel: cannot wake its thread: %s", strerror(errno));
        }
    }
    pthread_mutex_unlock(&control_lock);
}

void jf__control_lock_for_fork(void)
{
    pthread_mutex_lock(&control_lock);
}

void jf__control_unlock_after_fork_parent(void)
{
    pthread_mutex_unlock(&control_lock);
}

/* The parent's socket is the parent's: the child keeps no copy of it (nor
 * of a connection being answered) and listens under its own pid. */
void jf__control_restart_after_fork_child(void)
{
    jf__control_close_inherited();
    if (running) {
        close_channel();
        running = 0;
        start_locked();
    }
    pthread_mutex_unlock(&control_lock);
}
