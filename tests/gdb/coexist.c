/*
 * Two JIT libraries in one process, each with its own GDB JIT descriptor:
 * libjitframes.so (used here) and gdb_otherjit (its own jitframes copy).
 * main_jit_fn (ours) calls other_jit_fn (theirs), which traps.
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!other || code == MAP_FAILED)
        return 2;
    memcpy(code, main_code, sizeof main_code);
    if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
        return 2;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = JF_SINK_GDB;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    jf_cfi *cfi = NULL;
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.end = sizeof main_code;
    f.after_push = 1;
    f.after_fp_set = 4;
    f.epilogue_start = 6;
    f.after_pop = 7;
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = sizeof main_code;
    r.name = "main_jit_fn";
    if (jf_init(&cfg) || jf_cfi_new(&cfi) || jf_cfi_add_standard_frame(cfi, &f))
        return 2;
    r.cfi = cfi;
    if (jf_register(&r))
        return 2;
    jf_cfi_free(cfi);
    int rc = (int)call_jit(code, other);
    __asm__ volatile("" : "+r"(rc));
    printf("coexist: done\n");
    return rc;
}
