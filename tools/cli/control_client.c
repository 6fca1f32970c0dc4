/*
 * Finding a process's control socket from outside, and talking to it.
 *
 * The process may see itself under another pid (its own pid namespace) and
 * another /tmp (its own mount namespace), so nothing it could tell us by
 * name is used to find it: its socket descriptors are listed from
 * /proc/PID/fd ("socket:[INODE]"), and those listening under an
 * "@jitframes/" name are found by inode among the listening sockets of
 * PID's network namespace, as sock_diag reports them (exact names with
 * their lengths). Abstract names live per network namespace, so a client
 * in another one enters PID's first (setns, root only). In another user
 * namespace, where our uid may have no mapping (the host's root outside a
 * container), the connection is made from a child that enters it and takes
 * its root's uid (or the process's), if we may. /proc/PID/net/unix
 * is read only without sock_diag or that namespace; there a name holding a
 * newline spills into what looks like a line of its own, so its lines only
 * propose candidates. Every candidate is tried, however many (a cap is
 * what anyone who binds look-alike names could fill), within one shared
 * timeout. Whoever answers is checked with SO_PEERCRED: its pid,
 * translated into our pid namespace by the kernel, must be PID.
 */
#define _GNU_SOURCE
#include "control_client.h"
#include "unix_listeners.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NO_CHANNEL_HINT "start it with JITFRAMES_CONTROL=1"

enum { MAX_SOCKETS = 4096, IO_TIMEOUT_S = 10 };

/* /proc/net/unix Flags of a listening socket (__SO_ACCEPTCON). */
#define UNIX_LISTENING 0x10000ul

static int fail(jfc_error *err, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(jfc_error *err, int kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->kind = kind;
    return -1;
}

/* The inodes of PID's sockets; -1 with errno if /proc/PID/fd cannot be read. */
static int socket_inodes(pid_t pid, unsigned long *inodes, int cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; n < cap && (e = readdir(d));) {
        char link[64];
        ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        if (sscanf(link, "socket:[%lu]", &inodes[n]) == 1)
            n++;
    }
    closedir(d);
    return n;
}

static int has_inode(const unsigned long *inodes, int n, unsigned long inode)
{
    for (int i = 0; i < n; i++)
        if (inodes[i] == inode)
            return 1;
    return 0;
}

/* Enter PID's network namespace if it is not ours. *unknown: we cannot
 * tell (another user's process): try ours. */
static int join_network_namespace(pid_t pid, int *unknown, jfc_error *err)
{
    char path[64];
    struct stat ours, theirs;
    snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)pid);
    *unknown = stat("/proc/self/ns/net", &ours) != 0 || stat(path, &theirs) != 0;
    if (*unknown)
        return 0;
    if (ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(err, JFC_UNREACHABLE,
                    "process %ld is in another network namespace; entering it "
                    "failed: %s (run as root)",
                    (long)pid, strerror(e));
    }
    close(fd);
    return 0;
}

/* Without PID's descriptors: a name "jitframes/PID.<tag>" (the pid the
 * process saw at start; right when we share its pid namespace). */
static int name_carries_pid(const char *name, pid_t pid)
{
    char *end;
    long named = strtol(name + strlen(JF_CTL_NAME_PREFIX), &end, 10);
    return *end == '.' && named == (long)pid;
}

/* Every name found, however many: a cap would let anyone who binds enough
 * look-alike names push the real one out. */
typedef struct candidates {
    size_t n, cap;
    char (*names)[108];
} candidates;

/* What a socket must be to be a candidate: PID's (inodes) or, with
 * n_inodes < 0, named for PID. */
typedef struct search {
    pid_t pid;
    const unsigned long *inodes;
    int n_inodes;
    candidates *c;
} search;

static int add_candidate(candidates *c, const char *name)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        void *bigger = realloc(c->names, cap * sizeof c->names[0]);
        if (!bigger)
            return -1;
        c->names = bigger;
        c->cap = cap;
    }
    snprintf(c->names[c->n++], sizeof c->names[0], "%s", name);
    return 0;
}

/* A listening abstract socket `name` (len bytes): a candidate? Nonzero
 * (stop) when out of memory. */
static int consider(unsigned long inode, const char *name, size_t len, void *arg)
{
    search *s = arg;
    size_t prefix = strlen(JF_CTL_NAME_PREFIX);
    char buf[sizeof s->c->names[0]];
    if (len <= prefix || len >= sizeof buf || memcmp(name, JF_CTL_NAME_PREFIX, prefix) != 0 ||
        memchr(name, '\0', len))
        return 0;
    memcpy(buf, name, len);
    buf[len] = '\0';
    if (s->n_inodes >= 0 ? has_inode(s->inodes, s->n_inodes, inode) : name_carries_pid(buf, s->pid))
        return add_candidate(s->c, buf) != 0;
    return 0;
}

/* Without sock_diag, or when we could not enter PID's network namespace:
 * the listening sockets of PID's network namespace from /proc/PID/net/unix.
 * A name there runs to the end of its line, and one holding a newline
 * continues on the next, which then looks like an entry of its own: every
 * well-formed line is considered, none is trusted (jfc_connect keeps only
 * the socket PID answers on). */
static int scan_unix_table(pid_t pid, search *s)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/net/unix", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int stop = 0;
    while (!stop && fgets(line, sizeof line, f)) {
        unsigned long flags, inode;
        int name_at = 0;
        if (sscanf(line, "%*x: %*x %*x %lx %*x %*x %lu @%n", &flags, &inode, &name_at) != 2 || name_at == 0)
            continue;
        size_t len = strcspn(line + name_at, "\n");
        if (flags & UNIX_LISTENING)
            stop = consider(inode, line + name_at, len, s);
    }
    fclose(f);
    return 0;
}

static int find_candidates(pid_t pid, candidates *c, int *unknown_ns, jfc_error *err)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld", (long)pid);
    if (pid <= 0 || stat(path, &st) != 0)
        return fail(err, JFC_NO_PROCESS, "no process %ld", (long)pid);
    if (join_network_namespace(pid, unknown_ns, err) != 0)
        return -1;
    static unsigned long inodes[MAX_SOCKETS];
    int n = socket_inodes(pid, inodes, MAX_SOCKETS);
    int fd_errno = errno;
    search s = {pid, inodes, n, c};
    c->n = 0;
    /* In PID's network namespace (or ours, if it is the same): ask the
     * kernel, which gives exact names; else read PID's table. */
    if ((*unknown_ns || jfc_each_abstract_listener(consider, &s) != 0) && scan_unix_table(pid, &s) != 0)
        return fail(err, JFC_UNREACHABLE, "process %ld: cannot read /proc/%ld/net/unix: %s", (long)pid,
                    (long)pid, strerror(errno));
    if (c->n)
        return 0;
    if (n < 0)
        return fail(err, JFC_UNREACHABLE,
                    "process %ld: cannot list /proc/%ld/fd (%s) and no control "
                    "socket carries its pid: run as its user or as root",
                    (long)pid, (long)pid, strerror(fd_errno));
    return fail(err, JFC_NO_CHANNEL, "process %ld does not listen: " NO_CHANNEL_HINT, (long)pid);
}

int jfc_find_socket(pid_t pid, char *name, size_t cap, jfc_error *err)
{
    candidates c = {0};
    int unknown_ns;
    int rc = find_candidates(pid, &c, &unknown_ns, err);
    if (rc == 0)
        snprintf(name, cap, "%s", c.names[0]);
    free(c.names);
    return rc;
}

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void set_timeouts(int fd, long long ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000 * 1000)};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

/* connect() waits on a full backlog for at most the send timeout: what is
 * left of the deadline shared by every candidate, so that sockets of other
 * processes (a full backlog each) cannot hold us longer than one timeout. */
static int connect_to(const char *name, long long deadline, jfc_error *err)
{
    long long wait_ms = deadline - now_ms();
    if (wait_ms <= 0)
        return fail(err, JFC_UNREACHABLE, "connect to @%s: timed out", name);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(err, JFC_UNREACHABLE, "socket: %s", strerror(errno));
    set_timeouts(fd, wait_ms);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    if (n >= sizeof addr.sun_path - 1) {
        close(fd);
        return fail(err, JFC_UNREACHABLE, "socket name too long");
    }
    memcpy(addr.sun_path + 1, name, n);
    if (connect(fd, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) !=
        0) {
        int e = errno;
        close(fd);
        return fail(err, JFC_UNREACHABLE, "connect to @%s: %s", name, strerror(e));
    }
    set_timeouts(fd, IO_TIMEOUT_S * 1000LL);
    return fd;
}

/* In PID's user namespace (we are its child now): become its root, or
 * failing that PID's own uid (read here, so as that namespace sees it). */
static int take_identity_inside(pid_t pid)
{
    (void)setgroups(0, NULL); /* may be denied there; groups are not what the process checks */
    (void)setresgid(0, 0, 0);
    if (setresuid(0, 0, 0) == 0)
        return 0;
    char path[64], line[256];
    unsigned long uid = 0;
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "re");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "Uid: %*u %lu", &uid) == 1;
    if (f)
        fclose(f);
    return found && setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) == 0 ? 0 : -1;
}

/* One byte carrying one descriptor (SCM_RIGHTS). */
typedef struct fd_message {
    char byte;
    struct iovec iov;
    struct msghdr msg;
    union { /* last: struct cmsghdr ends in a flexible array */
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
} fd_message;

static struct msghdr *fd_message_init(fd_message *m)
{
    m->byte = 0;
    m->iov = (struct iovec){&m->byte, 1};
    m->msg = (struct msghdr){.msg_iov = &m->iov,
                             .msg_iovlen = 1,
                             .msg_control = m->control.space,
                             .msg_controllen = sizeof m->control.space};
    return &m->msg;
}

static void send_descriptor(int channel, int fd)
{
    fd_message m;
    struct msghdr *msg = fd_message_init(&m);
    struct cmsghdr *c = CMSG_FIRSTHDR(msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    (void)sendmsg(channel, msg, MSG_NOSIGNAL);
}

static int receive_descriptor(int channel)
{
    fd_message m;
    struct msghdr *msg = fd_message_init(&m);
    if (recvmsg(channel, msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(msg);
    int fd = -1;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

/* PID in another user namespace, where our uid may have no mapping (the
 * host's root outside a container reads there as the overflow uid, which
 * the process obeys as no one: src/control_peer.c). Connect from a child
 * that enters that namespace and takes its root's uid or PID's: only one
 * with CAP_SYS_ADMIN over the namespace can (root, or its owner), anyone
 * else is refused by setns. The connected socket, or -1 (same namespace,
 * or not entered: connect as we are). */
static int connect_inside_user_namespace(pid_t pid, const char *name, long long deadline)
{
    char path[64];
    struct stat ours, theirs;
    snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)pid);
    int ns = open(path, O_RDONLY | O_CLOEXEC);
    int pair[2];
    if (ns < 0 || fstat(ns, &theirs) != 0 || stat("/proc/self/ns/user", &ours) != 0 ||
        (ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev) ||
        socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) {
        if (ns >= 0)
            close(ns);
        return -1;
    }
    pid_t child = fork();
    if (child == 0) {
        jfc_error ignored;
        int fd = setns(ns, CLONE_NEWUSER) == 0 && take_identity_inside(pid) == 0
                     ? connect_to(name, deadline, &ignored)
                     : -1;
        if (fd >= 0)
            send_descriptor(pair[1], fd);
        _exit(0);
    }
    close(ns);
    close(pair[1]);
    int fd = -1;
    if (child > 0 && waitpid(child, NULL, 0) == child)
        fd = receive_descriptor(pair[0]);
    close(pair[0]);
    return fd;
}

/* A connection refused where we could not compare namespaces. */
static int namespace_hint(pid_t pid, jfc_error *err)
{
    char why[sizeof err->msg];
    memcpy(why, err->msg, sizeof why); /* fail() formats into err->msg */
    return fail(err, JFC_UNREACHABLE,
                "%.300s (process %ld may be in another network namespace, which "
                "only root can enter)",
                why, (long)pid);
}

/* Does the process that listens on fd's peer have pid `pid` (as we see it)? */
static int answered_by(int fd, pid_t pid)
{
    struct ucred peer;
    socklen_t len = sizeof peer;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid == pid;
}

/* The first candidate PID answers on, or -1 with *err. */
static int connect_to_pid(pid_t pid, const candidates *c, int unknown_ns, jfc_error *err)
{
    long long deadline = now_ms() + IO_TIMEOUT_S * 1000LL;
    for (size_t i = 0; i < c->n; i++) {
        int fd = connect_inside_user_namespace(pid, c->names[i], deadline);
        if (fd < 0)
            fd = connect_to(c->names[i], deadline, err);
        if (fd >= 0 && answered_by(fd, pid))
            return fd;
        if (fd >= 0)
            close(fd);
        else if (c->n == 1 && unknown_ns)
            return namespace_hint(pid, err);
        else if (c->n == 1)
            return -1;
    }
    if (c->n == 1)
        return fail(err, JFC_NO_CHANNEL,
                    "process %ld does not listen: " NO_CHANNEL_HINT " (@%s belongs to another process)",
                    (long)pid, c->names[0]);
    return fail(err, JFC_NO_CHANNEL,
                "process %ld does not listen: " NO_CHANNEL_HINT
                " (none of the %zu sockets found for it is its own)",
                (long)pid, c->n);
}

int jfc_connect(pid_t pid, jfc_error *err)
{
    candidates c = {0};
    int unknown_ns;
    int fd = find_candidates(pid, &c, &unknown_ns, err) == 0 ? connect_to_pid(pid, &c, unknown_ns, err) : -1;
    free(c.names);
    return fd;
}

/* Read exactly len bytes (or up to EOF): the count read, -1 on error. */
static long read_full(int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = recv(fd, buf + got, len - got, 0);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return got ? (long)got : -1;
        got += (size_t)n;
    }
    return (long)got;
}

/* Read one reply: its size, 0 if the process closed without one. */
static long read_reply(int fd, pid_t pid, jf__ctl_reply *reply, jfc_error *err)
{
    static uint8_t buf[JF_CTL_REPLY_MAX];
    long got = read_full(fd, buf, JF_CTL_REPLY_HEADER_SIZE);
    if (got == 0 || (got < 0 && errno == ECONNRESET))
        return 0;
    if (got < 0)
        return fail(err, JFC_UNREACHABLE, "process %ld: no reply: %s", (long)pid, strerror(errno));
    size_t size = got == JF_CTL_REPLY_HEADER_SIZE ? jf__ctl_reply_size(buf) : 0;
    if (size == 0)
        return fail(err, JFC_UNREACHABLE, "process %ld: malformed reply (%ld bytes)", (long)pid, got);
    long rest = read_full(fd, buf + JF_CTL_REPLY_HEADER_SIZE, size - JF_CTL_REPLY_HEADER_SIZE);
    if (rest != (long)(size - JF_CTL_REPLY_HEADER_SIZE) || jf__ctl_decode_reply(buf, size, reply) != 0)
        return fail(err, JFC_UNREACHABLE, "process %ld: truncated or malformed reply", (long)pid);
    return (long)size;
}

long jfc_exchange_raw(pid_t pid, const void *bytes, size_t len, jf__ctl_reply *reply, jfc_error *err)
{
    int fd = jfc_connect(pid, err);
    if (fd < 0)
        return -1;
    /* Errors ignored: a process that refuses early closes on us (EPIPE).
     * Shutting our side tells it at once that nothing more comes. */
    if (len)
        (void)send(fd, bytes, len, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    long size = read_reply(fd, pid, reply, err);
    close(fd);
    return size;
}

int jfc_request(pid_t pid, const jf__ctl_request *req, jf__ctl_reply *reply, jfc_error *err)
{
    uint8_t buf[JF_CTL_REQUEST_SIZE];
    jf__ctl_encode_request(req, buf);
    long size = jfc_exchange_raw(pid, buf, sizeof buf, reply, err);
    if (size == 0)
        return fail(err, JFC_UNREACHABLE, "process %ld closed the connection without a reply", (long)pid);
    return size < 0 ? -1 : 0;
}
