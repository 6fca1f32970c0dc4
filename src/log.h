/*
 * Diagnostics: library code never prints on its own; messages go to the
 * host's callback (jf_set_log_callback) or to stderr when $JITFRAMES_LOG asks.
 */
#ifndef JF_LOG_H
#define JF_LOG_H

#include "error.h"

/* Send a diagnostic (JF_LOG_* level) to the callback or stderr. */
void jf__log(int level, const char *fmt, ...) JF_PRINTF(2, 3);

/* Read $JITFRAMES_LOG (called once at first init). */
void jf__log_configure_from_env(void);

/* Hold the log lock across fork() (registry atfork handlers only). */
void jf__log_lock_for_fork(void);
void jf__log_unlock_after_fork(void);

#endif
