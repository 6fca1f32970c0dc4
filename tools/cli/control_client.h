/*
 * The client side of the control channel (src/control.c): find a process's
 * socket from outside, by its pid as this side sees it, and make one
 * request. Used by `jitframes enable|disable|status`, the tests and the
 * benchmark.
 */
#ifndef JFT_CONTROL_CLIENT_H
#define JFT_CONTROL_CLIENT_H

#include "control_wire.h"

#include <sys/types.h>

/* Why no reply came back: the tool's exit status tells them apart. */
enum jfc_failure {
    JFC_NO_PROCESS = 1, /* no process with that pid */
    JFC_NO_CHANNEL,     /* it has no control channel (not started with JITFRAMES_CONTROL=1) */
    JFC_UNREACHABLE,    /* /proc unreadable, another network namespace we cannot enter, I/O error */
};

typedef struct jfc_error {
    int kind; /* enum jfc_failure */
    char msg[600];
} jfc_error;

/* PID's control socket name (abstract, without its leading NUL, e.g.
 * "jitframes/1.0123456789abcdef"; the first if several: a child just
 * forked may still hold its parent's): 0, or -1 with *err. The name is that
 * of a listening socket among PID's own descriptors (/proc/PID/fd), looked
 * up by inode in PID's network namespace (entered first when it differs
 * and we may: root), so PID may run in its own pid and mount namespaces.
 * When PID's descriptors cannot be listed (another user's process), names
 * carrying PID are tried (jfc_connect then checks who answers). */
int jfc_find_socket(pid_t pid, char *name, size_t cap, jfc_error *err);

/* A connected socket to PID's channel (entering PID's network namespace
 * with setns() first if it differs from ours: that needs root), checked to
 * belong to PID (SO_PEERCRED): the descriptor, or -1 with *err. */
int jfc_connect(pid_t pid, jfc_error *err);

/* One request: 0 with *reply (reply->status is the process's answer), or
 * -1 with *err. */
int jfc_request(pid_t pid, const jf__ctl_request *req, jf__ctl_reply *reply, jfc_error *err);

/* Send `len` raw bytes as a request on a fresh connection and read what
 * comes back (for the tests' malformed requests): the reply's size (0: the
 * process closed without one), or -1 with *err. */
long jfc_exchange_raw(pid_t pid, const void *bytes, size_t len, jf__ctl_reply *reply, jfc_error *err);

#endif
