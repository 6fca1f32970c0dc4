/*
 * Shared internals: error reporting, logging and the live-region record.
 * Every src/ file may include this; nothing here is public.
 */
#ifndef JF_INTERNAL_H
#define JF_INTERNAL_H

#include "jitframes.h"

#include <stdarg.h>
#include <stdint.h>

#if defined(__GNUC__)
#define JF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JF_PRINTF(f, a)
#endif

/* Record `code` with a formatted message as the calling thread's last error;
 * returns `code` so callers can `return jf__fail(...)`. */
int jf__fail(int code, const char *fmt, ...) JF_PRINTF(2, 3);

/* Forget the calling thread's last error (start of every API call). */
void jf__clear_error(void);

/* Map an errno value from a file operation to a JF_E* code. */
int jf__errno_code(int err);

/* Send a diagnostic to the log callback or, if $JITFRAMES_LOG asks, stderr. */
void jf__log(int level, const char *fmt, ...) JF_PRINTF(2, 3);

/* Hold the log lock across fork() (registry atfork handlers only). */
void jf__log_lock_for_fork(void);
void jf__log_unlock_after_fork(void);

/* jf_register_batch, also telling whether the regions went into the
 * registry (*inserted = 1) even when a sink then failed and disabled itself. */
int jf__register_batch(const jf_region *regions, size_t n, int *inserted);

/* Read $JITFRAMES_LOG (called once at first init). */
void jf__log_configure_from_env(void);

/* Copy `name` into dst (capacity cap >= 1) replacing control characters and
 * invalid UTF-8 with '?', cutting at JF_NAME_MAX bytes on a character
 * boundary. Returns the length written (dst is NUL-terminated). */
size_t jf__sanitize_name(char *dst, size_t cap, const char *name);

/* Bytes jf__sanitize_name needs for `name`, terminator included. */
size_t jf__sanitized_name_size(const char *name);

/*
 * A registered region, owned by the registry. Immutable once registered,
 * so sinks may read it without copying while the registry lock is held.
 */
typedef struct jf_live {
    uintptr_t start;
    size_t size;
    uint64_t group;      /* batch id: regions registered in one call share it */
    uint32_t line;
    const char *file;    /* NULL if none */
    jf_line *lines;      /* owned copy, file pointers point into owned storage */
    size_t n_lines;
    struct jf_cfi *cfi;  /* owned copy or NULL */
    char name[];         /* sanitised */
} jf_live;

#endif
