/*
 * The frame of a LuaJIT trace (x64), read from its machine code.
 *
 * Facts from LuaJIT 2.1's x64 backend (lj_asm.c, lj_asm_x86.h, lj_frame.h,
 * lj_gdbjit.c; the same in 2.0):
 * - The stack pointer only moves in two places. A root trace's first
 *   instruction is `add rsp, -spadjust` (emitted last, code being generated
 *   backwards); a side trace starts with its parent's adjustment and, after
 *   reloading what the parent spilled, grows it with `add rsp, -delta`. A
 *   trace that does not loop ends with `add rsp, spadjust; jmp target`
 *   (the target, a trace or the interpreter, sets its own). Nothing else in
 *   a trace touches rsp: C calls pass their arguments in registers and in
 *   space reserved by the adjustment.
 * - CFA = rsp + CFRAME_SIZE_JIT (96) + the adjustment in force; the return
 *   address at CFA - 8 is the VM entry's (into lua_pcall...); the VM saved
 *   rbp, rbx, r15, r14 below it and BC_JLOOP saved r12, r13 in the frame.
 *   layout_probe.c checks this against the running VM.
 * A stable LuaJIT always emits those instructions; if one is missing where
 * expected (another LuaJIT's backend) the rules fall back to what LuaJIT's
 * own GDBJIT build says: the trace's adjustment everywhere.
 */
#include "trace_frame.h"

#include <string.h>

enum {
    CFRAME_SIZE_JIT = 96,
    JMP_REL32 = 0xe9,
    JMP_LEN = 5,
};

/* `add rsp, imm8` (48 83 c4 ib) or `add rsp, imm32` (48 81 c4 id) at p:
 * its length, and the immediate in *imm; 0 when the bytes are not that. */
static size_t add_rsp_at(const uint8_t *p, size_t avail, int32_t *imm)
{
    if (avail >= 4 && p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xc4) {
        *imm = (int8_t)p[3];
        return 4;
    }
    if (avail >= 7 && p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xc4) {
        uint32_t u;
        memcpy(&u, p + 3, sizeof u); /* little-endian host: x64 */
        *imm = (int32_t)u;
        return 7;
    }
    return 0;
}

/* The adjustment the tail gives back before its final jump (0: none). */
static uint32_t tail_release(const uint8_t *code, size_t size, size_t *at)
{
    *at = size;
    if (size < JMP_LEN || code[size - JMP_LEN] != JMP_REL32)
        return 0;
    int32_t imm;
    size_t end = size - JMP_LEN;
    for (size_t len = 4; len <= 7; len += 3)
        if (end >= len && add_rsp_at(code + end - len, len, &imm) == len && imm > 0) {
            *at = end;
            return (uint32_t)imm;
        }
    return 0;
}

/* First `add rsp, -delta` in [0, limit): the offset after it, 0 if none. */
static size_t find_grow(const uint8_t *code, size_t limit, uint32_t delta)
{
    int32_t imm;
    for (size_t i = 0; i < limit; i++) {
        size_t len = add_rsp_at(code + i, limit - i, &imm);
        if (len && imm < 0 && (uint32_t)-(int64_t)imm == delta)
            return i + len;
    }
    return 0;
}

static void read_root(const uint8_t *code, size_t size, trace_frame *f)
{
    int32_t imm;
    size_t len = add_rsp_at(code, size, &imm);
    f->entry_adjust = 0;
    f->spadjust = len && imm < 0 ? (uint32_t)-(int64_t)imm : 0;
    f->adjusted_at = f->spadjust ? len : 0;
    f->exact = 1;
    size_t at;
    uint32_t released = tail_release(code, size, &at);
    if (f->spadjust && released == f->spadjust && at >= f->adjusted_at)
        f->restored_at = at; /* else it loops (or links with no adjustment) */
}

/* LuaJIT GDBJIT's rules: the trace's adjustment throughout. */
static void make_approximate(trace_frame *f, size_t size)
{
    f->spadjust = f->spadjust >= f->entry_adjust ? f->spadjust : f->entry_adjust;
    f->entry_adjust = f->spadjust;
    f->adjusted_at = 0;
    f->restored_at = size;
    f->exact = 0;
}

static void read_side(const uint8_t *code, size_t size, uint32_t parent, trace_frame *f)
{
    size_t at;
    uint32_t released = tail_release(code, size, &at);
    f->entry_adjust = parent;
    f->spadjust = released ? released : parent;
    f->exact = f->spadjust >= parent && (released || parent == 0);
    if (released)
        f->restored_at = at;
    if (f->exact && f->spadjust > parent) {
        f->adjusted_at = find_grow(code, at, f->spadjust - parent);
        f->exact = f->adjusted_at != 0;
    }
    if (!f->exact)
        make_approximate(f, size);
}

int trace_frame_supported(void)
{
#if defined(__x86_64__)
    return 1;
#else
    return 0;
#endif
}

void trace_frame_read(const uint8_t *code, size_t size, int64_t parent_spadjust,
                      trace_frame *out)
{
    memset(out, 0, sizeof *out);
    out->restored_at = size;
    if (parent_spadjust >= 0 && parent_spadjust <= UINT16_MAX) /* GCtrace.spadjust: 16 bits */
        read_side(code, size, (uint32_t)parent_spadjust, out);
    else if (parent_spadjust == TRACE_PARENT_UNKNOWN) {
        read_side(code, size, 0, out);
        make_approximate(out, size); /* where it grows is unknown */
    } else
        read_root(code, size, out);
}

uint32_t trace_frame_cfa_offset(const trace_frame *f, size_t offset)
{
    if (offset >= f->restored_at)
        return CFRAME_SIZE_JIT;
    return CFRAME_SIZE_JIT + (offset < f->adjusted_at ? f->entry_adjust : f->spadjust);
}

#if defined(__x86_64__)
/* Where the VM entry and BC_JLOOP saved the callee-saved registers: DWARF
 * number and offset from the CFA (lj_gdbjit.c's x64 FDE). */
static const struct {
    unsigned reg;
    int offset;
} saved[] = {{6, -16}, {3, -24}, {15, -32}, {14, -40}, {13, -72}, {12, -80}};

/* One row per place the adjustment changes: entry, after the trace's own
 * adjustment, after the tail gives it back. */
static int build(jf_cfi *cfi, const trace_frame *f, size_t size)
{
    int rc = jf_cfi_begin_fde(cfi, 0, size);
    rc = rc ? rc : jf_cfi_def_cfa(cfi, JF_DWARF_SP, trace_frame_cfa_offset(f, 0));
    for (size_t i = 0; !rc && i < sizeof saved / sizeof saved[0]; i++)
        rc = jf_cfi_offset(cfi, saved[i].reg, saved[i].offset);
    const size_t changes[] = {f->adjusted_at, f->restored_at};
    uint32_t current = trace_frame_cfa_offset(f, 0);
    for (size_t i = 0; !rc && i < 2; i++) {
        if (changes[i] == 0 || changes[i] >= size || trace_frame_cfa_offset(f, changes[i]) == current)
            continue;
        current = trace_frame_cfa_offset(f, changes[i]);
        rc = jf_cfi_advance_to(cfi, changes[i]);
        rc = rc ? rc : jf_cfi_def_cfa_offset(cfi, current);
    }
    return rc;
}

int trace_frame_cfi(const trace_frame *frame, size_t size, jf_cfi **out)
{
    *out = NULL;
    jf_cfi *cfi;
    int rc = jf_cfi_new(&cfi);
    if (rc)
        return rc;
    rc = build(cfi, frame, size);
    if (rc) {
        jf_cfi_free(cfi);
        return rc;
    }
    *out = cfi;
    return 0;
}
#else
int trace_frame_cfi(const trace_frame *frame, size_t size, jf_cfi **out)
{
    (void)frame;
    (void)size;
    *out = NULL;
    return JF_ENOTSUP;
}
#endif
