/*
 * The control channel (JF_CONFIG_CONTROL, $JITFRAMES_CONTROL=1): a thread
 * that listens on an abstract AF_UNIX socket for enable/disable/status
 * requests from the jitframes tool. control.c owns the socket and the
 * thread; control_loop.c is the thread's loop, which keeps every pending
 * connection; control_serve.c reads and answers one connection;
 * control_peer.c decides whom to obey.
 *
 * Locking: control.c's lock is taken before the registry's, never after;
 * the listener thread takes the registry's (through jf_enable...) and never
 * control.c's, so joining it while holding control.c's lock is safe.
 */
#ifndef JF_CONTROL_H
#define JF_CONTROL_H

#include "control_wire.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Start the channel unless it runs. 0, or a JF_E* code with a message (the
 * library works on without it). Not with the registry lock held. */
int jf__control_start(void);

/* Stop the channel (close the socket, join the thread) if the library is no
 * longer initialised: the last jf_shutdown. Not with the registry lock held. */
void jf__control_stop_if_unused(void);

/* fork(): prepare takes control.c's lock (before the registry's), the
 * parent releases it, the child drops the parent's socket and starts its
 * own channel if the parent had one. */
void jf__control_lock_for_fork(void);
void jf__control_unlock_after_fork_parent(void);
void jf__control_restart_after_fork_child(void);

/* The listener thread's loop (control_loop.c): accepts, reads and answers
 * connections until wake_fd becomes readable (the channel stops). */
void jf__control_listen(int listen_fd, int wake_fd);

/* fork() child: close the parent's connections still waiting for their
 * request (control_loop.c). */
void jf__control_close_inherited(void);

/* One accepted connection whose request is being read (control_serve.c). */
typedef struct jf__ctl_conn {
    int fd;    /* non-blocking; -1: a free slot */
    uid_t uid; /* the peer's, from SO_PEERCRED */
    pid_t pid;
    uint64_t deadline_ns; /* jf__monotonic_ns() by which the request must be in */
    size_t got;
    uint8_t buf[JF_CTL_REQUEST_SIZE];
} jf__ctl_conn;

/* Just accepted (c->fd set): 1 if the peer is obeyed and its request is
 * awaited, 0 if it was refused (answered: close it). */
int jf__control_admit(jf__ctl_conn *c);

/* c->fd is readable (or hung up): read what is there. 1 to wait for more,
 * 0 once answered (close it). Never blocks. */
int jf__control_receive(jf__ctl_conn *c);

/* Answer c with an error (dropped for a newer one, the channel stops);
 * close it after. jf__control_expire: its time is up. */
void jf__control_give_up(jf__ctl_conn *c, const char *why);
void jf__control_expire(jf__ctl_conn *c);

/* Whether a peer whose effective uid reads as peer_uid here is obeyed
 * (control_peer.c): 1, or 0 with the reason in why. */
int jf__control_peer_obeyed(uid_t peer_uid, char *why, size_t cap);

/* Read the overflow uid (/proc/sys/kernel/overflowuid) again: when the
 * listener starts. */
void jf__control_peer_refresh(void);

#endif
