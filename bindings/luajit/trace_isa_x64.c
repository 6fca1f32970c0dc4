/*
 * LuaJIT 2.1's x64 backend, as trace_frame.c needs it (lj_asm_x86.h,
 * lj_emit_x86.h, vm_x64.dasc, lj_frame.h):
 * - the stack pointer moves only by `add rsp, imm` (emit_spsub emits a
 *   negative add): at a root trace's first byte, after a side trace's
 *   reloads, and before the final `jmp rel32` of a trace that does not loop
 *   (asm_tail_fixup, which releases exactly the trace's spadjust);
 * - the VM entry pushed rbp, rbx, r15, r14 under the return address and took
 *   40 bytes more (CFRAME_SIZE 80); BC_JLOOP took 16 more and stored r12 and
 *   r13 there: CFA = rsp + 96 (CFRAME_SIZE_JIT) + the trace's adjustment.
 */
#include "trace_isa.h"

/* `add rsp, imm8` (48 83 c4 ib) or `add rsp, imm32` (48 81 c4 id). */
static size_t sp_add_at(const uint8_t *code, size_t size, size_t at, int64_t *imm)
{
    const uint8_t *p = code + at;
    size_t avail = size - at;
    if (avail >= 4 && p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xc4) {
        *imm = (int8_t)p[3];
        return 4;
    }
    if (avail >= 7 && p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xc4) {
        uint32_t u = (uint32_t)p[3] | (uint32_t)p[4] << 8 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 24;
        *imm = (int32_t)u;
        return 7;
    }
    return 0;
}

static size_t tail_jump_at(const uint8_t *code, size_t size)
{
    enum { JMP_REL32 = 0xe9, JMP_LEN = 5 };
    return size >= JMP_LEN && code[size - JMP_LEN] == JMP_REL32 ? size - JMP_LEN : size;
}

/* DWARF: rbp 6, rbx 3, r12-r15 12-15, return address 16. */
static const struct trace_saved_reg saved[] = {
    {16, -8}, {6, -16}, {3, -24}, {15, -32}, {14, -40}, {12, -80}, {13, -88},
};

const trace_isa trace_isa_x64 = {
    .name = "x64",
    .base = 96,
    .jloop_adjust = 0,
    .step = 1,
    .sp_add_at = sp_add_at,
    .tail_jump_at = tail_jump_at,
    .tail_names_spadjust = 1,
    .saved = saved,
    .n_saved = sizeof saved / sizeof saved[0],
};
