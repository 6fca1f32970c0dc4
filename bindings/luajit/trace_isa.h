/*
 * What trace_frame.c needs to know of one LuaJIT backend: how its traces
 * move the stack pointer, and how its VM laid out the C frame they run in.
 * One file per instruction set (trace_isa_x64.c, trace_isa_arm64.c); the
 * decoders are plain functions of bytes, so every backend is unit-tested on
 * any host.
 */
#ifndef JITFRAMES_LUA_TRACE_ISA_H
#define JITFRAMES_LUA_TRACE_ISA_H

#include <stddef.h>
#include <stdint.h>

typedef struct trace_isa {
    const char *name;
    /* CFA - sp in a trace before any adjustment of its own: the VM's C frame
     * plus what BC_JLOOP took below it. */
    uint32_t base;
    /* What BC_JLOOP took: a tail leaving for the interpreter gives it back
     * with the trace's adjustment (arm64), or not (x64: 0). */
    uint32_t jloop_adjust;
    /* Instruction alignment: where to look for an instruction. */
    size_t step;
    /* The instruction at code[at] adds an immediate to the stack pointer:
     * its length, the immediate (negative: the stack grows) in *imm; else 0. */
    size_t (*sp_add_at)(const uint8_t *code, size_t size, size_t at, int64_t *imm);
    /* Where the final jump of a trace that does not loop begins (the jump,
     * or the load + register jump for far targets); size if none. */
    size_t (*tail_jump_at)(const uint8_t *code, size_t size);
    /* Whether a side trace's tail names its adjustment exactly (x64: the
     * release is always spadjust) rather than the head (arm64, where the
     * release may include jloop_adjust and instructions never straddle). */
    int tail_names_spadjust;
    /* Registers the VM saved, as DWARF numbers and offsets from the CFA;
     * the return address first. */
    const struct trace_saved_reg {
        unsigned reg;
        int offset;
    } * saved;
    size_t n_saved;
} trace_isa;

extern const trace_isa trace_isa_x64;
extern const trace_isa trace_isa_arm64;

/* The host's backend, or NULL on a host LuaJIT's frames are not known for. */
const trace_isa *trace_isa_host(void);

#endif
