/*
 * Two JIT libraries in one process, each with its own GDB JIT descriptor:
 * libjitframes.so (used here) and gdb_otherjit (its own jitframes copy).
 * main_jit_fn (ours) calls other_jit_fn (theirs), which traps.
 */
#define _GNU_SOURCE
#include "jit_install.h"

#include <stdio.h>

void *other_jit_setup(void);
long call_jit(void *code, void *arg);

/* x86_64: push rbp; mov rbp,rsp; call *rdi; pop rbp; ret */
static const uint8_t main_code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};

__attribute__((noinline)) long call_jit(void *code, void *arg)
{
    long v = ((long (*)(void *))code)(arg);
    __asm__ volatile("" ::: "memory");
    return v;
}

int main(void)
{
    void *other = other_jit_setup();
    void *code = jit_install_framed(main_code, sizeof main_code, 6, "main_jit_fn");
    if (!other || !code)
        return 2;
    int rc = (int)call_jit(code, other);
    __asm__ volatile("" : "+r"(rc));
    printf("coexist: done\n");
    return rc;
}
