/* jitframes integration: trampolines named "mvm:<function>" (see jit.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "jit.h"

#include "vm.h"

#include <jitframes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* $JITFRAMES asks for at least one sink. */
static int jit_requested(void)
{
    const char *env = getenv("JITFRAMES");
    return env && *env;
}

/* Started in standby (JITFRAMES_CONTROL=1): the trampolines are made with no
 * sink on; the library keeps them and writes them out when `jitframes
 * enable` or `jitframes record` turns a sink on from outside. */
static int standby_requested(void)
{
    const char *env = getenv("JITFRAMES_CONTROL");
    return env && *env && strcmp(env, "0") != 0;
}

/* The library publishes its regions in memory (`jitframes record PID`
 * reads them from outside, nothing switched on): the names can be seen. */
static int table_published(void)
{
    const void *addr;
    size_t size;
    int rc = jf_published_table(&addr, &size);
    return rc == 0 || rc == JF_ERANGE;
}

static void jit_why(char *why, size_t why_size, const char *what, int rc)
{
    const char *detail = jf_last_error();
    snprintf(why, why_size, "%s: %s%s%s", what, jf_strerror(rc), *detail ? ": " : "", detail);
}

#ifdef MVM_HAVE_TRAMPOLINES
static void jit_destroy(jf_fn entry)
{
    jf_trampoline_destroy(entry);
}
#else
static void jit_destroy(jf_fn entry)
{
    (void)entry;
}
#endif

/* Put every function back on direct calls. */
static void jit_reset_entries(struct mvm_jit *jit, struct mvm_program *prog)
{
    for (uint32_t i = 0; i < prog->n_functions; i++) {
        struct mvm_function *f = &prog->functions[i];
        if (f->entry != mvm_eval_function && jit->n_trampolines > 0) {
            jit_destroy((jf_fn)f->entry);
            jit->n_trampolines--;
        }
        f->entry = mvm_eval_function;
    }
}

#ifdef MVM_HAVE_TRAMPOLINES
static int jit_create_trampoline(struct mvm_function *f, const char *file, char *why, size_t why_size)
{
    size_t size = strlen(f->name) + sizeof "mvm:";
    char *name = malloc(size);
    if (!name) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    snprintf(name, size, "mvm:%s", f->name);
    jf_trampoline_options opts = JF_TRAMPOLINE_OPTIONS_INIT;
    opts.file = file;
    opts.line = f->pos.line;
    jf_fn entry = NULL;
    int rc = jf_trampoline_create((jf_fn)mvm_eval_function, name, &opts, &entry);
    if (rc < 0)
        jit_why(why, why_size, "trampoline creation failed", rc);
    else
        f->entry = (mvm_eval_fn)entry;
    free(name);
    return rc < 0 ? -1 : 0;
}

static int jit_create_all(struct mvm_jit *jit, struct mvm_program *prog, const char *file, char *why,
                          size_t why_size)
{
    char *abs = realpath(file, NULL); /* so perf and debuggers find the source from anywhere */
    int rc = 0;
    for (uint32_t i = 0; i < prog->n_functions && rc == 0; i++) {
        rc = jit_create_trampoline(&prog->functions[i], abs ? abs : file, why, why_size);
        if (rc == 0)
            jit->n_trampolines++;
    }
    free(abs);
    return rc;
}
#else
static int jit_create_all(struct mvm_jit *jit, struct mvm_program *prog, const char *file, char *why,
                          size_t why_size)
{
    (void)jit, (void)prog, (void)file;
    snprintf(why, why_size, "this libjitframes was built without trampolines");
    return -1;
}
#endif

enum mvm_jit_status mvm_jit_attach(struct mvm_jit *jit, struct mvm_program *prog, const char *file, char *why,
                                   size_t why_size)
{
    memset(jit, 0, sizeof *jit);
    int rc = jf_init(NULL);
    if (rc < 0 && rc != JF_ESINK) {
        jit_why(why, why_size, "jf_init failed", rc);
        return MVM_JIT_FAILED;
    }
    jit->initialised = 1;
    /* Some sinks run: go on with them, and say what is missing. */
    if (rc == JF_ESINK)
        jit_why(why, why_size, "some sinks are off", rc);
    /* Only the published table to see them: made if possible, silently
     * direct calls if not (nobody asked for them). */
    int table_only = 0;
    if (jf_enabled_sinks() == 0 && !standby_requested()) {
        if (jit_requested()) {
            snprintf(why, why_size, "no jitframes sink could start");
            return MVM_JIT_FAILED;
        }
        if (!table_published())
            return MVM_JIT_OFF;
        table_only = 1;
    }
    if (jit_create_all(jit, prog, file, why, why_size) < 0) {
        jit_reset_entries(jit, prog);
        if (table_only) {
            why[0] = '\0';
            return MVM_JIT_OFF;
        }
        return MVM_JIT_FAILED;
    }
    return MVM_JIT_ON;
}

void mvm_jit_detach(struct mvm_jit *jit, struct mvm_program *prog)
{
    jit_reset_entries(jit, prog);
    if (jit->initialised)
        jf_shutdown();
    jit->initialised = 0;
}
