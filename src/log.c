/*
 * Diagnostics routing. Library code never prints on its own: messages go to
 * the host's callback, or to stderr only when $JITFRAMES_LOG asks for it.
 */
#include "log.h"

#include "sys.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static jf_log_fn log_fn;
static void *log_ctx;
static int stderr_level = -1; /* -1: stderr logging off */

void jf_set_log_callback(jf_log_fn fn, void *ctx)
{
    jf__clear_error();
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_ctx = ctx;
    pthread_mutex_unlock(&log_lock);
}

/* fork() while another thread holds log_lock would leave the child's copy
 * locked forever: the registry's atfork handlers hold it across fork(). */
void jf__log_lock_for_fork(void)
{
    pthread_mutex_lock(&log_lock);
}

void jf__log_unlock_after_fork(void)
{
    pthread_mutex_unlock(&log_lock);
}

void jf__log_configure_from_env(void)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const char *v = jf__getenv("JITFRAMES_LOG");
    int level = -1;
    int known = 1;
    if (v && *v) {
        level = JF_LOG_WARNING; /* "1", and anything unknown: errors and warnings */
        known = strcmp(v, "1") == 0;
        for (int i = 0; i < 4; i++)
            if (strcasecmp(v, names[i]) == 0)
                level = i, known = 1;
        if (strcmp(v, "0") == 0)
            level = -1, known = 1;
    }
    pthread_mutex_lock(&log_lock);
    stderr_level = level;
    pthread_mutex_unlock(&log_lock);
    if (!known)
        jf__log(JF_LOG_WARNING,
                "JITFRAMES_LOG=%s is not one of error, warning, info, debug, 1, 0: "
                "logging errors and warnings",
                v);
}

static void send_message(int level, const char *msg)
{
    pthread_mutex_lock(&log_lock);
    if (log_fn)
        log_fn(log_ctx, level, msg);
    else if (level <= stderr_level)
        fprintf(stderr, "jitframes: %s\n", msg);
    pthread_mutex_unlock(&log_lock);
}

void jf__log(int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    send_message(level, msg);
}

void jf__log_sampled(uint64_t *seen, int level, const char *fmt, ...)
{
    uint64_t n = __atomic_add_fetch(seen, 1, __ATOMIC_RELAXED);
    if (n & (n - 1))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (len >= 0 && (size_t)len < sizeof msg)
        snprintf(msg + len, sizeof msg - (size_t)len, " (%llu so far)", (unsigned long long)n);
    send_message(level, msg);
}
