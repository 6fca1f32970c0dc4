/*
 * The control channel (JF_CONFIG_CONTROL, $JITFRAMES_CONTROL=1): a thread
 * that listens on an abstract AF_UNIX socket for enable/disable/status
 * requests from the jitframes tool. control.c owns the socket and the
 * thread; control_serve.c answers one connection.
 *
 * Locking: control.c's lock is taken before the registry's, never after;
 * the listener thread takes the registry's (through jf_enable...) and never
 * control.c's, so joining it while holding control.c's lock is safe.
 */
#ifndef JF_CONTROL_H
#define JF_CONTROL_H

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

/* Answer one accepted connection (control_serve.c). wake_fd becomes
 * readable when the channel is stopping: waiting for the client ends. */
void jf__control_serve(int conn, int wake_fd);

#endif
