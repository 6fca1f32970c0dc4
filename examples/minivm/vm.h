/*
 * The evaluator: runs compiled bytecode.
 *
 * mvm_eval_function runs one interpreted function to completion. Every
 * interpreted call goes through the callee's `entry` pointer: normally the
 * eval function itself, or a jitframes trampoline calling it (jit.c), which
 * gives each interpreted function its own named native frame. So the native
 * stack mirrors the interpreted one: eval, trampoline "mvm:fib", eval, ...
 *
 * Runtime errors (integer overflow, division by zero, the call depth limit,
 * a missing program argument) stop the run: the failing frame records the
 * error in vm->diag and sets vm->failed; each caller returns as soon as it
 * sees vm->failed after a call, adding itself to the error's call trace.
 */
#ifndef MVM_VM_H
#define MVM_VM_H

#include "diag.h"
#include "program.h"

#include <stdint.h>
#include <stdio.h>

/* Default limit on nested interpreted calls; each one uses a native frame too. */
#define MVM_DEFAULT_MAX_DEPTH 10000u

struct mvm_vm {
    const struct mvm_program *prog;
    int64_t *stack; /* the value stack: max_depth frames of the largest function */
    uint32_t depth; /* interpreted calls in progress */
    uint32_t max_depth;
    int failed; /* a runtime error is unwinding the run */
    struct mvm_diag *diag;
    FILE *out;           /* where print writes */
    const int64_t *argv; /* program arguments (argc(), arg(i)) */
    uint32_t argc;
};

/*
 * Prepare a run: allocates a value stack big enough for max_depth frames of
 * the program's largest function (max_depth is lowered if that would exceed
 * 16 Mi slots). Returns 0 or -1 (out of memory).
 */
int mvm_vm_init(struct mvm_vm *vm, const struct mvm_program *prog, uint32_t max_depth, struct mvm_diag *diag,
                FILE *out, const int64_t *argv, uint32_t argc);
void mvm_vm_free(struct mvm_vm *vm);

/* Run main(). Returns 0, or -1 with the runtime error in vm->diag. */
int mvm_vm_run(struct mvm_vm *vm, int64_t *result);

/* Run `fn` with its arguments in args[0..n_params) of vm's value stack; see program.h. */
int64_t mvm_eval_function(struct mvm_vm *vm, const struct mvm_function *fn, int64_t *args);

#endif
