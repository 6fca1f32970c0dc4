/*
 * The frame of a LuaJIT trace, read from its machine code with the facts of
 * its backend (trace_isa_x64.c, trace_isa_arm64.c).
 *
 * The stack pointer moves only where the backend adjusts it: a root trace's
 * first instruction takes spadjust; a side trace starts with its parent's
 * adjustment and, after reloading what the parent spilled, may grow it; a
 * trace that does not loop gives the adjustment back right before its final
 * jump. Nothing else in a trace touches the stack pointer: C calls pass
 * their arguments in registers and in space the adjustment reserved. So
 * CFA - sp is known at every instruction. A stable LuaJIT always emits those
 * instructions; if one is missing where expected (a backend this does not
 * know), the rules fall back to what LuaJIT's own GDBJIT build says: the
 * trace's adjustment everywhere. layout_probe.c checks the model on the
 * running VM before any rule is published.
 */
#include "trace_frame.h"

#include <string.h>

/* The first stack growth by `delta` in [0, limit): the offset after it. */
static size_t find_growth(const trace_isa *isa, const uint8_t *code, size_t limit, int64_t *delta)
{
    for (size_t at = 0; at + isa->step <= limit; at += isa->step) {
        int64_t imm;
        size_t len = isa->sp_add_at(code, limit, at, &imm);
        if (len && imm < 0 && (*delta == 0 || -imm == *delta)) {
            *delta = -imm;
            return at + len;
        }
    }
    return 0;
}

/* The release before the final jump: its offset in *at and its amount
 * (0: none). */
static uint32_t tail_release(const trace_isa *isa, const uint8_t *code, size_t size, size_t *at)
{
    size_t jump = isa->tail_jump_at(code, size);
    *at = size;
    if (jump == size)
        return 0;
    for (size_t len = isa->step; len <= 7 && len <= jump; len += isa->step) {
        int64_t imm;
        if (isa->sp_add_at(code, jump, jump - len, &imm) == len && imm > 0 && imm <= UINT16_MAX + 16) {
            *at = jump;
            return (uint32_t)imm;
        }
    }
    return 0;
}

/* A release the trace's adjustment explains: to a trace, or (plus what
 * BC_JLOOP took) to the interpreter. Sets where it applies. */
static void take_release(trace_frame *f, size_t at, uint32_t released)
{
    if (released == f->spadjust || released == f->spadjust + f->isa->jloop_adjust) {
        f->restored_at = at;
        f->restored_cfa = f->isa->base + f->spadjust - released;
    }
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

static void read_root(const uint8_t *code, size_t size, trace_frame *f)
{
    int64_t imm = 0;
    size_t len = f->isa->sp_add_at(code, size, 0, &imm);
    f->spadjust = len && imm < 0 ? (uint32_t)-imm : 0;
    f->adjusted_at = f->spadjust ? len : 0;
    size_t at;
    uint32_t released = tail_release(f->isa, code, size, &at);
    if (released && at >= f->adjusted_at)
        take_release(f, at, released); /* else it loops, or links with nothing to release */
}

static void read_side(const uint8_t *code, size_t size, uint32_t parent, trace_frame *f)
{
    size_t at;
    uint32_t released = tail_release(f->isa, code, size, &at);
    int64_t delta = 0;
    if (f->isa->tail_names_spadjust) {
        f->spadjust = released ? released : parent;
        delta = (int64_t)f->spadjust - parent;
        f->exact = delta >= 0 && (released || parent == 0);
        if (f->exact && delta > 0) {
            f->adjusted_at = find_growth(f->isa, code, at, &delta);
            f->exact = f->adjusted_at != 0;
        }
    } else {
        f->adjusted_at = find_growth(f->isa, code, at, &delta);
        f->spadjust = parent + (uint32_t)delta;
        f->exact = f->spadjust <= UINT16_MAX;
    }
    if (f->exact && released) {
        take_release(f, at, released);
        f->exact = f->restored_at == at;
    }
    if (!f->exact)
        make_approximate(f, size);
}

void trace_frame_read(const trace_isa *isa, const uint8_t *code, size_t size, int64_t parent_spadjust,
                      trace_frame *out)
{
    memset(out, 0, sizeof *out);
    out->isa = isa;
    out->restored_at = size;
    out->restored_cfa = isa->base;
    out->exact = 1;
    if (parent_spadjust >= 0 && parent_spadjust <= UINT16_MAX) { /* GCtrace.spadjust: 16 bits */
        out->entry_adjust = (uint32_t)parent_spadjust;
        read_side(code, size, (uint32_t)parent_spadjust, out);
    } else if (parent_spadjust == TRACE_PARENT_UNKNOWN) {
        read_side(code, size, 0, out);
        make_approximate(out, size); /* where the parent's frame ends is unknown */
    } else {
        read_root(code, size, out);
    }
}

uint32_t trace_frame_cfa_offset(const trace_frame *f, size_t offset)
{
    if (offset >= f->restored_at)
        return f->restored_cfa;
    return f->isa->base + (offset < f->adjusted_at ? f->entry_adjust : f->spadjust);
}

/* One row per place CFA - sp changes: entry, after the trace's own
 * adjustment, after the tail gives it back. */
static int build(jf_cfi *cfi, const trace_frame *f, size_t size)
{
    int rc = jf_cfi_begin_fde(cfi, 0, size);
    uint32_t current = trace_frame_cfa_offset(f, 0);
    rc = rc ? rc : jf_cfi_def_cfa(cfi, JF_DWARF_SP, current);
    for (size_t i = 0; !rc && i < f->isa->n_saved; i++)
        rc = jf_cfi_offset(cfi, f->isa->saved[i].reg, f->isa->saved[i].offset);
    const size_t changes[] = {f->adjusted_at, f->restored_at};
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
    if (frame->isa != trace_isa_host())
        return JF_ENOTSUP;
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

const trace_isa *trace_isa_host(void)
{
#if defined(__x86_64__)
    return &trace_isa_x64;
#elif defined(__aarch64__)
    return &trace_isa_arm64;
#else
    return NULL;
#endif
}
