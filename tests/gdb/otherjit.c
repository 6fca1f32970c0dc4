/*
 * A second JIT library for the coexistence test: a shared object with its
 * own private copy of jitframes (linked statically, -Bsymbolic), so it has
 * its own __jit_debug_descriptor next to the one in libjitframes.so.
 */
#define _GNU_SOURCE
#include "jit_install.h"

__attribute__((visibility("default"))) void *other_jit_setup(void);

/* x86_64: push rbp; mov rbp,rsp; int3; pop rbp; ret */
static const uint8_t other_code[] = {0x55, 0x48, 0x89, 0xe5, 0xcc, 0x5d, 0xc3};

/* Map, describe and register other_jit_fn; returns its address or NULL. */
void *other_jit_setup(void)
{
    return jit_install_framed(other_code, sizeof other_code, 5, "other_jit_fn");
}
