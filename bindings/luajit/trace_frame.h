/*
 * How to unwind through a compiled LuaJIT trace, read from its machine code.
 *
 * A trace runs inside the C frame of the VM entry that started the
 * interpreter (lj_vm_pcall and friends), its stack pointer lowered by the
 * trace's own stack adjustment: unwinding it leads straight to the C caller
 * of the VM (lua_pcall, lua_call...). The adjustment is in LuaJIT's GCtrace,
 * which the Lua API does not expose; it is read from the instructions that
 * apply it instead (trace_frame.c, with the backend's facts in
 * trace_isa_*.c), which also say exactly where in the trace it changes.
 */
#ifndef JITFRAMES_LUA_TRACE_FRAME_H
#define JITFRAMES_LUA_TRACE_FRAME_H

#include "trace_isa.h"

#include <jitframes.h>

#include <stddef.h>
#include <stdint.h>

/* What the machine code of one trace says about its frame. */
typedef struct trace_frame {
    const trace_isa *isa;
    uint32_t spadjust;     /* the trace's stack adjustment (GCtrace.spadjust) */
    uint32_t entry_adjust; /* the adjustment in force at its first byte */
    size_t adjusted_at;    /* offset where spadjust takes effect (0: at entry) */
    size_t restored_at;    /* offset where the tail gives it back (size: never) */
    uint32_t restored_cfa; /* CFA - sp from restored_at on */
    int exact;             /* 0: the instructions were not found where expected;
                              the rules are LuaJIT GDBJIT's approximation */
} trace_frame;

/* parent_spadjust values that are not a parent's adjustment. */
#define TRACE_ROOT ((int64_t)-1)           /* a root (or stitched) trace */
#define TRACE_PARENT_UNKNOWN ((int64_t)-2) /* a side trace of a trace never read */

/*
 * Read the frame of a trace from its code. A root trace adjusts the stack in
 * its first instruction; a side trace starts with its parent's adjustment
 * (parent_spadjust) and may grow it. Both give the adjustment back just
 * before the jump that ends a trace which does not loop.
 */
void trace_frame_read(const trace_isa *isa, const uint8_t *code, size_t size, int64_t parent_spadjust,
                      trace_frame *out);

/* The CFA's distance from the stack pointer at a byte offset of the trace. */
uint32_t trace_frame_cfa_offset(const trace_frame *frame, size_t offset);

/* The unwind rules of a trace with that frame, for jf_region.cfi: JF_ENOMEM,
 * or JF_ENOTSUP unless the frame's backend is the host's. Free with
 * jf_cfi_free. */
int trace_frame_cfi(const trace_frame *frame, size_t size, jf_cfi **out);

#endif
