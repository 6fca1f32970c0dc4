/*
 * Error codes and the thread-local last-error message.
 */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];

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
    case JF_EINTERNAL: return "JF_EINTERNAL: internal error in jitframes (a bug: please report it)";
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
