/*
 * Error reporting inside the library: every failure sets the calling
 * thread's last error (jf_last_error) and returns a JF_E* code.
 */
#ifndef JF_ERROR_H
#define JF_ERROR_H

#include "jitframes.h"

#include <assert.h>

#if defined(__GNUC__)
#define JF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JF_PRINTF(f, a)
#endif

/* Record `code` with a formatted message as the calling thread's last error;
 * returns `code` so callers can `return jf__fail(...)`. */
int jf__fail(int code, const char *fmt, ...) JF_PRINTF(2, 3);

/* A state the code rules out was reached: a bug of ours. Debug builds stop
 * there (assert); release builds record the message and return
 * JF_EINTERNAL, and the host runs on. The format must be a literal. */
#define jf__internal(...) \
    (assert(!"jitframes: internal error"), jf__fail(JF_EINTERNAL, "internal: " __VA_ARGS__))

/* Forget the calling thread's last error (start of every API call). */
void jf__clear_error(void);

/* Map an errno value from a file operation to a JF_E* code. */
int jf__errno_code(int err);

#endif
