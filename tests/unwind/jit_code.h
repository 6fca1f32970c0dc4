/*
 * Small machine-code functions for the unwind tests, written into
 * anonymous executable memory (as a JIT would), each with its unwind rules
 * built through the public CFI assembler:
 *  - a frameless function (x86_64, aarch64, riscv64, ppc64le, s390x): the stack adjusted
 *    around an indirect call of its first argument with its second
 *  - a framed trampoline-like function (x86_64 only; NULL elsewhere):
 *    push %rbp; mov %rsp,%rbp; call ...
 * Both have the signature of jit_call_fn and return what the callback returns.
 */
#ifndef JIT_CODE_H
#define JIT_CODE_H

#include "jitframes.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef long (*jit_callback)(long);
typedef long (*jit_call_fn)(jit_callback cb, long arg);

typedef struct jit_function {
    jit_call_fn fn;    /* the generated functions */
    jit_callback call; /* a jitframes trampoline: same signature as its target */
    const void *addr;
    size_t size;
    jf_cfi *cfi; /* owned; registered copies are made by jitframes */
} jit_function;

/* 1 on x86_64, aarch64, riscv64, ppc64le and s390x, where the generated code runs. */
int jit_supported(void);

/* Write both functions into one fresh executable mapping. Returns 0 or -1
 * (message on stderr). */
int jit_make(jit_function *frameless, jit_function *framed);

/* jf_init with exactly `sinks` (environment ignored); the frameless function
 * registered as "jit_frameless"; a jitframes trampoline "jit_trampoline"
 * calling tramp_target (jf_trampoline_create). Returns 0 or -1 (message on
 * stderr). */
int jit_setup(unsigned sinks, jit_callback tramp_target, jit_function *frameless, jit_function *tramp);

/* Bytes of a trampoline's code that frames can return into (the templates
 * in src/arch/). */
#if defined(__x86_64__)
#define JIT_TRAMPOLINE_CODE 16
#elif defined(__powerpc64__)
#define JIT_TRAMPOLINE_CODE 64
#elif defined(__s390x__)
#define JIT_TRAMPOLINE_CODE 26
#else
#define JIT_TRAMPOLINE_CODE 48
#endif

/* Move f as a compacting JIT would: copy its code into a fresh executable
 * mapping, jf_move it there, and make the old page inaccessible (code still
 * run from it faults). f then describes the new copy. Returns 0 or -1
 * (message on stderr). */
int jit_relocate(jit_function *f);

/* A jf_region for f with the given name. */
jf_region jit_region(const jit_function *f, const char *name);

/* 1 if pc lies inside f. */
int jit_contains(const jit_function *f, const void *pc);

#ifdef __cplusplus
}
#endif

#endif
