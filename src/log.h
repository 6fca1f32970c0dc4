/*
 * Diagnostics: library code never prints on its own; messages go to the
 * host's callback (jf_set_log_callback) or to stderr when $JITFRAMES_LOG asks.
 */
#ifndef JF_LOG_H
#define JF_LOG_H

#include "error.h"

#include <stdint.h>

/* Send a diagnostic (JF_LOG_* level) to the callback or stderr. */
void jf__log(int level, const char *fmt, ...) JF_PRINTF(2, 3);

/* For a diagnostic anyone outside can repeat at will (a control channel
 * peer): counts it in *seen and sends only the 1st, 2nd, 4th, 8th...,
 * each with the count so far, so a flood of them writes a logarithmic
 * number of lines. */
void jf__log_sampled(uint64_t *seen, int level, const char *fmt, ...) JF_PRINTF(3, 4);

/* Read $JITFRAMES_LOG (called once at first init). */
void jf__log_configure_from_env(void);

/* Hold the log lock across fork() (registry atfork handlers only). */
void jf__log_lock_for_fork(void);
void jf__log_unlock_after_fork(void);

#endif
