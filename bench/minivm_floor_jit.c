/*
 * A stand-in for examples/minivm/jit.c, for bench_minivm only: every
 * interpreted call goes through the trampoline template as assembled and
 * linked into this executable's .text (its slot in .data holds
 * mvm_eval_function), instead of through a per-function arena copy.
 *
 * This is the floor of what a trampoline costs minivm: the same instructions
 * (endbr64, frame record, indirect call), without anything jitframes adds at
 * run time (arena placement, per-copy slots, registration). Comparing it
 * with direct calls shows how much of the trampoline ratio is inherent to
 * keeping one native frame per interpreted call.
 */
#include "jit.h"
#include "vm.h"

#include <stdio.h>

/* The template as assembled (src/arch/<arch>.S); it calls what the slot holds. */
void jitframes_trampoline_template(void);
void *jitframes_trampoline_slot;

enum mvm_jit_status mvm_jit_attach(struct mvm_jit *jit, struct mvm_program *prog, const char *file, char *why,
                                   size_t why_size)
{
    (void)file, (void)why, (void)why_size;
    jit->initialised = 0;
    jit->n_trampolines = 0;
    /* One slot, one target: every function's entry is the linked template. */
    jitframes_trampoline_slot = (void *)mvm_eval_function;
    for (uint32_t i = 0; i < prog->n_functions; i++)
        prog->functions[i].entry = (mvm_eval_fn)(void *)jitframes_trampoline_template;
    return MVM_JIT_ON;
}

void mvm_jit_detach(struct mvm_jit *jit, struct mvm_program *prog)
{
    (void)jit;
    for (uint32_t i = 0; i < prog->n_functions; i++)
        prog->functions[i].entry = mvm_eval_function;
}
