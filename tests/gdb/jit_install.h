/*
 * For the coexistence test's two JIT libraries: copy one x86_64 function
 * with a standard rbp frame (push rbp; mov rbp,rsp; ...; pop rbp; ret) into
 * its own executable page and register it, with its CFI, through the gdb
 * sink of whichever jitframes copy the includer links.
 */
#ifndef GDB_TEST_JIT_INSTALL_H
#define GDB_TEST_JIT_INSTALL_H

#include "jitframes.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* epilogue_start: offset of the `pop rbp`. Returns the code, or NULL. */
static inline void *jit_install_framed(const uint8_t *bytes, size_t size, size_t epilogue_start,
                                       const char *name)
{
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return NULL;
    memcpy(code, bytes, size);
    if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
        return NULL;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.sinks = JF_SINK_GDB;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.end = size;
    f.after_push = 1;
    f.after_fp_set = 4;
    f.epilogue_start = epilogue_start;
    f.after_pop = epilogue_start + 1;
    jf_cfi *cfi = NULL;
    if (jf_init(&cfg) || jf_cfi_new(&cfi) || jf_cfi_add_standard_frame(cfi, &f))
        return NULL;
    jf_region r = JF_REGION_INIT;
    r.addr = code;
    r.size = size;
    r.name = name;
    r.cfi = cfi;
    int rc = jf_register(&r);
    jf_cfi_free(cfi);
    return rc ? NULL : code;
}

#endif
