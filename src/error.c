/*
 * Error codes, the thread-local last-error message, and diagnostics routing.
 * Library code never prints on its own: messages go to the host's callback,
 * or to stderr only when $JITFRAMES_LOG asks for it.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static _Thread_local char last_error[512];

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static jf_log_fn log_fn;
static void *log_ctx;
static int stderr_level = -1; /* -1: stderr logging off */

const char *jf_strerror(int err)
{
    switch (err) {
    case JF_OK: return "JF_OK: success";
    case JF_EINVAL: return "JF_EINVAL: invalid argument";
    case JF_ENOMEM: return "JF_ENOMEM: out of memory";
    case JF_ENOTINIT: return "JF_ENOTINIT: jitframes is not initialised";
    case JF_EEXIST: return "JF_EEXIST: a region already starts at this address";
    case JF_ENOENT: return "JF_ENOENT: no such region, file or directory";
    case JF_EUNSAFE: return "JF_EUNSAFE: refused an unsafe file";
    case JF_EACCES: return "JF_EACCES: permission denied";
    case JF_ENOSPC: return "JF_ENOSPC: no space left on device";
    case JF_EFBIG: return "JF_EFBIG: file size limit (RLIMIT_FSIZE) reached";
    case JF_EIO: return "JF_EIO: input/output error";
    case JF_EDISABLED: return "JF_EDISABLED: sink disabled after an earlier failure";
    case JF_ENOTSUP: return "JF_ENOTSUP: not supported";
    case JF_ERANGE: return "JF_ERANGE: value out of range";
    case JF_ESINK: return "JF_ESINK: initialised, but a sink could not start";
    default: return "unknown jitframes error code";
    }
}

const char *jf_last_error(void)
{
    return last_error;
}

void jf__clear_error(void)
{
    last_error[0] = '\0';
}

int jf__fail(int code, const char *fmt, ...)
{
    /* Format aside first: callers often wrap the previous message
     * (jf__fail(..., "%s", jf_last_error())), and vsnprintf must not read
     * the buffer it writes. */
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    return code;
}

int jf__errno_code(int err)
{
    switch (err) {
    case ENOMEM: return JF_ENOMEM;
    case EACCES:
    case EPERM:
    case EROFS: return JF_EACCES;
    case ENOSPC:
    case EDQUOT: return JF_ENOSPC;
    case EFBIG: return JF_EFBIG;
    case ELOOP: return JF_EUNSAFE;
    case ENOENT:
    case ENOTDIR: return JF_ENOENT;
    case EINVAL: return JF_EINVAL;
    default: return JF_EIO;
    }
}

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
    const char *v = getenv("JITFRAMES_LOG");
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
        jf__log(JF_LOG_WARNING, "JITFRAMES_LOG=%s is not one of error, warning, info, debug, 1, 0: "
                                "logging errors and warnings", v);
}

void jf__log(int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&log_lock);
    if (log_fn)
        log_fn(log_ctx, level, msg);
    else if (level <= stderr_level)
        fprintf(stderr, "jitframes: %s\n", msg);
    pthread_mutex_unlock(&log_lock);
}
