/*
 * Labelling the frames of a stack walk for the unwind tests: each pc becomes
 * the name of a known function or JIT region, and the test checks that the
 * expected names appear in order (innermost first), other frames ignored.
 */
#ifndef FRAMES_H
#define FRAMES_H

#include "jit_code.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MAX_FRAMES = 64 };

typedef struct frame_walk {
    void *pcs[MAX_FRAMES];
    int n;
} frame_walk;

/* Fill w with glibc backtrace(). */
void walk_with_backtrace(frame_walk *w);

/* Fill w with _Unwind_Backtrace from `scope` (a dlopen handle or
 * RTLD_DEFAULT). Returns -1 if that scope has no _Unwind_Backtrace. */
int walk_with_unwind_backtrace(frame_walk *w, void *scope);

/* Name of the frame at pc: a JIT function's label, else the symbol dladdr
 * finds (the test programs export theirs), else "?". */
const char *frame_name(const void *pc, const jit_function *jit, const char *jit_label,
                       const jit_function *tramp, const char *tramp_label);

/* 1 if `expected` (n names) appear in that order in the walk. Prints the
 * walk to stderr under `title`. */
int walk_has_in_order(const frame_walk *w, const char *title, const char *const *expected, int n,
                      const jit_function *jit, const jit_function *tramp);

/* 1 if `name` appears anywhere in the walk. */
int walk_has(const frame_walk *w, const char *name, const jit_function *jit, const jit_function *tramp);

/* The file defining symbol `name` in scope (for "which unwinder is this"). */
const char *library_of(void *scope, const char *name);

#ifdef __cplusplus
}
#endif

#endif
