/*
 * sock_diag's unix_diag dump of listening sockets (see unix_listeners.h).
 * The kernel answers in the network namespace the netlink socket was
 * created in: the caller enters the target's first.
 */
#define _GNU_SOURCE
#include "unix_listeners.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

enum { IO_TIMEOUT_S = 10 };

static int send_dump_request(int fd)
{
    struct {
        struct nlmsghdr nlh;
        struct unix_diag_req req;
    } msg = {
        .nlh = {.nlmsg_len = sizeof msg,
                .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                .nlmsg_seq = 1},
        .req = {.sdiag_family = AF_UNIX, .udiag_states = 1u << TCP_LISTEN, .udiag_show = UDIAG_SHOW_NAME},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    return sendto(fd, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) == (ssize_t)sizeof msg
               ? 0
               : -1;
}

/* One unix_diag_msg: pass its abstract name, if it has one, to fn. */
static int visit(const struct nlmsghdr *h, jfc_listener_fn fn, void *arg)
{
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
        return 0;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    int left = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
    for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
        size_t len = RTA_PAYLOAD(a);
        const char *path = RTA_DATA(a);
        /* An abstract name starts with a NUL; a path name does not. */
        if (a->rta_type == UNIX_DIAG_NAME && len > 1 && len <= sizeof(((struct sockaddr_un *)0)->sun_path) &&
            path[0] == '\0')
            return fn(m->udiag_ino, path + 1, len - 1, arg);
    }
    return 0;
}

/* Read the dump's replies until NLMSG_DONE: 0, 1 if fn stopped, -1. */
static int read_dump(int fd, jfc_listener_fn fn, void *arg)
{
    static uint8_t buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        /* NLMSG_OK and NLMSG_NEXT, without their mixed-sign comparisons. */
        for (size_t at = 0, size; n - (ssize_t)at >= (ssize_t)sizeof(struct nlmsghdr);
             at += NLMSG_ALIGN(size)) {
            struct nlmsghdr *h = (struct nlmsghdr *)(buf + at);
            size = h->nlmsg_len;
            if (size < sizeof *h || size > (size_t)n - at)
                break;
            if (h->nlmsg_type == NLMSG_DONE)
                return 0;
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                errno = h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error ? -e->error : EPROTO;
                return -1;
            }
            if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && visit(h, fn, arg))
                return 1;
        }
    }
}

int jfc_each_abstract_listener(jfc_listener_fn fn, void *arg)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -1;
    struct timeval tv = {IO_TIMEOUT_S, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int rc = send_dump_request(fd) == 0 ? read_dump(fd, fn, arg) : -1;
    int e = errno;
    close(fd);
    errno = e;
    return rc < 0 ? -1 : 0;
}
