/*
 * LuaJIT 2.1's arm64 backend, as trace_frame.c needs it (lj_asm_arm64.h,
 * lj_emit_arm64.h, vm_arm64.dasc, lj_frame.h):
 * - the stack pointer moves only by `sub sp, sp, #imm` (a root trace's
 *   first instruction, a side trace's growth after its reloads) and by the
 *   `add sp, sp, #imm` before the final jump of a trace that does not loop
 *   (asm_tail_fixup: `b target`, or `ldr x30, [...]; br x30` to reach a far
 *   interpreter). The release is the trace's spadjust, plus the 16 bytes
 *   BC_JLOOP took when the jump goes back to the interpreter;
 * - the VM entry took a 208-byte frame (CFRAME_SIZE) and stored its frame
 *   record {x29, x30} at the top; BC_JLOOP took 16 bytes more (SPS_FIXED):
 *   CFA = sp + 224 + the trace's adjustment. Only the frame record is
 *   described: where x19-x28 and d8-d15 go in that frame changed between
 *   LuaJIT versions, the record did not.
 */
#include "trace_isa.h"

static uint32_t insn_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* `add sp, sp, #imm{, lsl #12}` (0x910003ff) and `sub sp, sp, ...` (0xd10003ff). */
static size_t sp_add_at(const uint8_t *code, size_t size, size_t at, int64_t *imm)
{
    if (size - at < 4)
        return 0;
    uint32_t insn = insn_at(code + at);
    uint32_t op = insn & 0xff8003ffu; /* keeps sf/op/S, the shift bit 22, Rn, Rd */
    if ((op & ~(1u << 22)) != 0x910003ffu && (op & ~(1u << 22)) != 0xd10003ffu)
        return 0;
    int64_t value = (int64_t)((insn >> 10) & 0xfffu) << ((insn >> 22) & 1u ? 12 : 0);
    *imm = (insn & 0x40000000u) ? -value : value;
    return 4;
}

static size_t tail_jump_at(const uint8_t *code, size_t size)
{
    if (size < 4 || size % 4)
        return size;
    uint32_t last = insn_at(code + size - 4);
    if ((last & 0xfc000000u) == 0x14000000u) /* b imm26 */
        return size - 4;
    if (last == 0xd61f03c0u && size >= 8 && /* br x30, after ldr x30, [xN, #imm] */
        (insn_at(code + size - 8) & 0xffc0001fu) == 0xf940001eu)
        return size - 8;
    return size;
}

/* DWARF: x29 29, x30 (the return address) 30. */
static const struct trace_saved_reg saved[] = {{30, -8}, {29, -16}};

const trace_isa trace_isa_arm64 = {
    .name = "arm64",
    .base = 224,
    .jloop_adjust = 16,
    .step = 4,
    .sp_add_at = sp_add_at,
    .tail_jump_at = tail_jump_at,
    .tail_names_spadjust = 0,
    .saved = saved,
    .n_saved = sizeof saved / sizeof saved[0],
};
