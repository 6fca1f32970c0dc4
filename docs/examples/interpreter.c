/*
 * docs/guide.md, "Interpreters": one trampoline per interpreted function, so
 * each interpreted call is a native frame with the function's name. The
 * interpreter calls the trampoline instead of its eval function; if no
 * trampoline can be had (no executable memory, unsupported architecture) it
 * calls eval directly and works the same.
 * Run: JITFRAMES=perfmap ./interpreter
 */
#include <jitframes.h>

#include <stdio.h>

typedef struct function {
    const char *name;
    int first_line;
    long (*entry)(struct function *f, long arg); /* the trampoline, or eval */
} function;

/* The eval function: register arguments only (see jitframes.h). */
static long eval(function *f, long arg)
{
    return arg <= 1 ? arg : f->entry(f, arg - 1) + f->entry(f, arg - 2); /* fib */
}

static void attach(function *f)
{
    f->entry = eval;
    jf_trampoline_options opts = JF_TRAMPOLINE_OPTIONS_INIT;
    opts.file = "fib.script";
    opts.line = (uint32_t)f->first_line;
    jf_fn entry;
    char name[64];
    snprintf(name, sizeof name, "script:%s", f->name);
    int rc = jf_trampoline_create((jf_fn)eval, name, &opts, &entry);
    if (rc == 0)
        f->entry = (long (*)(function *, long))entry;
    else /* JF_EACCES, JF_ENOTSUP...: direct calls */
        fprintf(stderr, "no trampoline for %s: %s\n", f->name, jf_last_error());
}

int main(void)
{
    int rc = jf_init(NULL);
    if (rc != 0 && rc != JF_ESINK) {
        fprintf(stderr, "jf_init: %s\n", jf_last_error());
        return 1;
    }
    function fib = {"fib", 1, eval};
    attach(&fib);
    long result = fib.entry(&fib, 20);
    printf("fib(20) = %ld\n", result);
    if (fib.entry != eval)
        jf_trampoline_destroy((jf_fn)fib.entry); /* no thread may still call it */
    jf_shutdown();
    return result == 6765 ? 0 : 1;
}
