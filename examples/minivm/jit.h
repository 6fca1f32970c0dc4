/*
 * jitframes integration: one trampoline per interpreted function.
 *
 * With jitframes on, every interpreted function gets a trampoline: a tiny
 * native function, created by libjitframes, that calls mvm_eval_function with
 * the same arguments. Calls go through it, so a profiler or debugger sees one
 * native frame per interpreted call, named after the interpreted function.
 *
 * Naming convention: "mvm:<function>" (e.g. "mvm:fib", "mvm:main"). The
 * prefix keeps interpreted names apart from native symbols (the interpreted
 * main is "mvm:main", the C one "main") and makes them easy to grep. Each
 * trampoline also carries the program file (absolute path) and the line of
 * `fn NAME(`.
 *
 * When: the trampolines are created at load, before main() runs, if jf_init
 * enables at least one sink ($JITFRAMES, e.g. JITFRAMES=perfmap). With no
 * sink requested nothing would see the names, so calls stay direct.
 *
 * Fallback: if jf_init or any trampoline creation fails (no executable memory
 * allowed, a bad $JITFRAMES, a library built without trampolines), every
 * function is called directly, exactly as with --no-jitframes; the driver
 * prints a one-line warning.
 */
#ifndef MVM_JIT_H
#define MVM_JIT_H

#include "program.h"

#include <stddef.h>

enum mvm_jit_status {
    MVM_JIT_OFF,    /* nothing could see the trampolines (no sink, no published table), or
                       they could not be made with only the table to see them: direct calls */
    MVM_JIT_ON,     /* every function is entered through its trampoline (why: a
                       sink that could not start, or "") */
    MVM_JIT_FAILED, /* requested but unavailable (see why): direct calls */
};

struct mvm_jit {
    int initialised; /* jf_init succeeded and needs a jf_shutdown */
    uint32_t n_trampolines;
};

/* Give each function of prog a trampoline, or leave them all direct. */
enum mvm_jit_status mvm_jit_attach(struct mvm_jit *jit, struct mvm_program *prog, const char *file, char *why,
                                   size_t why_size);

/* Destroy the trampolines (the run must be over) and release jitframes. */
void mvm_jit_detach(struct mvm_jit *jit, struct mvm_program *prog);

#endif
