/*
 * A second JIT library for the coexistence test: a shared object with its
 * own private copy of jitframes (linked statically, -Bsymbolic), so it has
 * its own __jit_debug_descriptor next to the one in libjitframes.so.
 */
#define _GNU_SOURCE
#include "jitframes.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((visibility("default"))) void *other_jit_setup(void);

/* x86_64: push rbp; mov rbp,rsp; int3; pop rbp; ret */
static const uint8_t other_code[] = {0x55, 0x48, 0x89, 0xe5, 0xcc, 0x5d, 0xc3};

/* Map, describe and register other_jit_fn; returns its address or NULL. */
void *other_jit_setup(void)
{
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return NULL;
    memcpy(code, other_code, sizeof other_code);
    if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
        return NULL;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = JF_SINK_GDB;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    jf_cfi *cfi = NULL;
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.end = sizeof other_code;
    f.after_push = 1;
    f.after_fp_set = 4;
    f.epilogue_start = 5;
    f.after_pop = 6;
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = sizeof other_code;
    r.name = "other_jit_fn";
    if (jf_init(&cfg) || jf_cfi_new(&cfi) || jf_cfi_add_standard_frame(cfi, &f))
        return NULL;
    r.cfi = cfi;
    int rc = jf_register(&r);
    jf_cfi_free(cfi);
    return rc ? NULL : code;
}
