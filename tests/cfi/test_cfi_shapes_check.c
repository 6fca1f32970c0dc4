/*
 * Host half of the cross-architecture shape test (see shapes_guest.c): for
 * every machine state the guest recorded, unwind one frame with the rules
 * libdw reads from the CFI that jf_cfi_add_standard_frame /
 * jf_cfi_add_frameless build for that architecture, and require the caller's
 * sp (the CFA, and the sp register as gdb and libgcc unwind it), return
 * address and frame pointer at the call.
 * A deliberately wrong description must fail (negative control).
 * ppc64le and s390x have no frame record: their standard frame must be
 * JF_ENOTSUP, and the negative control is a frameless description with the
 * wrong offset. s390x's CFA is the caller's sp + 160.
 *
 * Usage: test_cfi_shapes_check aarch64|riscv64|ppc64le|s390x < guest-output
 */
#include "cfi_view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 16
#define MAX_STATES 64

typedef struct state {
    char name[16];
    size_t at; /* the instruction's byte offset */
    uint64_t sp, fp, ra;
    uint64_t entry_sp, entry_fp, entry_ra;
    uint64_t words[WORDS];
} state;

/* One architecture: DWARF numbers and where the guest's functions change state. */
typedef struct target {
    const char *name;
    jf__cfi_arch arch;
    uint16_t machine;
    unsigned sp, fp, ra;
    size_t framed_size, after_push, after_fp_set, epilogue_start, after_pop; /* 0: none */
    size_t wrong_epilogue_start; /* one instruction early: sp not yet at the record */
    size_t frameless_size, after_sub, after_add;
    size_t insns;     /* instructions recorded in all (framed + frameless) */
    int64_t cfa_bias; /* CFA - caller's sp: s390x's register save area */
} target;

static const target targets[] = {
    {"aarch64", JF_CFI_ARCH_AARCH64, 183, 31, 29, 30, 28, 4, 8, 20, 24, 16, 20, 4, 16, 12, 0},
    {"riscv64", JF_CFI_ARCH_RISCV64, 243, 2, 8, 1, 44, 4, 16, 28, 40, 24, 20, 4, 16, 16, 0},
    {"ppc64le", JF_CFI_ARCH_PPC64LE, 21, 1, 31, 65, 0, 0, 0, 0, 0, 0, 20, 4, 16, 5, 0},
    {"s390x", JF_CFI_ARCH_S390X, 22, 15, 11, 14, 0, 0, 0, 0, 0, 0, 16, 4, 14, 5, 160},
};

static int build_framed(jf_cfi *c, const target *t, int wrong)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.end = t->framed_size, f.after_push = t->after_push, f.after_fp_set = t->after_fp_set;
    f.epilogue_start = wrong ? t->wrong_epilogue_start : t->epilogue_start, f.after_pop = t->after_pop;
    return jf_cfi_add_standard_frame(c, &f);
}

/* The frameless shape moves the stack pointer by 48 (`wrong`: described as 32). */
static int build_frameless(jf_cfi *c, const target *t, int wrong)
{
    int64_t entry = t->cfa_bias; /* the CFA offset at entry */
    int rc = jf_cfi_add_frameless(c, 0, t->after_sub, entry);
    if (!rc)
        rc = jf_cfi_add_frameless(c, t->after_sub, t->after_add, entry + (wrong ? 32 : 48));
    if (!rc)
        rc = jf_cfi_add_frameless(c, t->after_add, t->frameless_size, entry);
    return rc;
}

static uint64_t reg_value(const target *t, const state *s, unsigned reg, int *ok)
{
    if (reg == t->sp)
        return s->sp;
    if (reg == t->fp)
        return s->fp;
    if (reg == t->ra)
        return s->ra;
    *ok = 0;
    return 0;
}

/* The caller's value of reg per the rule, from the recorded registers and stack. */
static int recover(const target *t, const state *s, Dwarf_Frame *frame, unsigned reg, uint64_t cfa,
                   uint64_t *v)
{
    int64_t at = 0;
    int okr = 1, rule = frame_rule(frame, reg, &at);
    if (rule == FRAME_RULE_SAME) {
        *v = reg_value(t, s, reg, &okr);
        return okr ? 0 : -1;
    }
    uint64_t addr = cfa + (uint64_t)at;
    int ok = rule == FRAME_RULE_AT && addr >= s->sp && addr < s->sp + 8 * WORDS && (addr - s->sp) % 8 == 0;
    if (!ok)
        return -1;
    *v = s->words[(addr - s->sp) / 8];
    return 0;
}

/* The caller's sp as gdb and libgcc recover it. Without a rule for sp they
 * take the CFA where it is the caller's sp (cfa_bias 0), but on s390x
 * (CFA = sp + 160) the same value: libgcc derives sp from the CFA only on
 * targets with EH_RETURN_STACKADJ_RTX, which s390 lacks, and gdb's s390
 * unwinder counts r15 among the call-saved registers. So s390x code that
 * moves r15 must describe it, as gcc does. */
static int recover_sp(const target *t, const state *s, Dwarf_Frame *frame, uint64_t cfa, uint64_t *v)
{
    int64_t at = 0;
    int rule = frame_rule(frame, t->sp, &at);
    if (rule == FRAME_RULE_SAME) {
        *v = t->cfa_bias ? s->sp : cfa;
        return 0;
    }
    if (rule == FRAME_RULE_VAL) {
        *v = cfa + (uint64_t)at;
        return 0;
    }
    return recover(t, s, frame, t->sp, cfa, v);
}

/* 0 if unwinding state s at code_addr + its offset gives back the entry state. */
static int check_state(const target *t, Dwarf_CFI *dcfi, uint64_t code_addr, const state *s, int quiet)
{
    Dwarf_Frame *frame;
    char why[128] = "";
    if (dwarf_cfi_addrframe(dcfi, code_addr + s->at, &frame) != 0) {
        snprintf(why, sizeof why, "no unwind info");
    } else {
        unsigned reg = 0;
        int64_t off = 0;
        int ok = 1;
        uint64_t cfa = 0, ra = 0, fp = 0, sp = 0;
        if (frame_cfa(frame, &reg, &off) == 0)
            cfa = reg_value(t, s, reg, &ok) + (uint64_t)off;
        if (frame_cfa(frame, &reg, &off) != 0 || !ok || cfa - (uint64_t)t->cfa_bias != s->entry_sp)
            snprintf(why, sizeof why, "CFA %#" PRIx64 ", caller's sp %#" PRIx64, cfa, s->entry_sp);
        else if (recover(t, s, frame, t->ra, cfa, &ra) != 0 || ra != s->entry_ra)
            snprintf(why, sizeof why, "return address %#" PRIx64 ", expected %#" PRIx64, ra, s->entry_ra);
        else if (recover(t, s, frame, t->fp, cfa, &fp) != 0 || fp != s->entry_fp)
            snprintf(why, sizeof why, "caller's fp %#" PRIx64 ", expected %#" PRIx64, fp, s->entry_fp);
        else if (recover_sp(t, s, frame, cfa, &sp) != 0 || sp != s->entry_sp)
            snprintf(why, sizeof why,
                     "caller's sp as gdb and libgcc take it %#" PRIx64 ", expected %#" PRIx64, sp,
                     s->entry_sp);
        free(frame);
    }
    if (why[0] && !quiet)
        fprintf(stderr, "FAIL %s %s offset %zu: %s\n", t->name, s->name, s->at, why);
    return why[0] ? -1 : 0;
}

/* Check every recorded state of function `name` against one description. */
static int check_function(const target *t, const state *states, size_t n, const char *name, jf_cfi *cfi,
                          size_t size, int quiet, size_t *checked)
{
    const uint64_t code_addr = 0x400000;
    cfi_view v;
    int bad = 0;
    if (cfi_view_open(&v, cfi, t->machine, code_addr, size, code_addr + 0x10000) != 0) {
        cfi_view_close(&v);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(states[i].name, name) != 0)
            continue;
        (*checked)++;
        bad += check_state(t, v.cfi, code_addr, &states[i], quiet) != 0;
    }
    cfi_view_close(&v);
    return bad;
}

static size_t read_states(state *states, size_t max)
{
    size_t n = 0;
    char line[1024];
    while (n < max && fgets(line, sizeof line, stdin)) {
        state *s = &states[n];
        int used = 0;
        if (sscanf(line, "%15s %zu %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 "%n",
                   s->name, &s->at, &s->sp, &s->fp, &s->ra, &s->entry_sp, &s->entry_fp, &s->entry_ra,
                   &used) != 8)
            continue;
        const char *p = line + used;
        for (int i = 0; i < WORDS; i++) {
            char *end;
            s->words[i] = strtoull(p, &end, 16);
            p = end;
        }
        n++;
    }
    return n;
}

static jf_cfi *new_cfi(const target *t)
{
    jf_cfi *c = NULL;
    if (jf__cfi_new_arch(t->arch, &c) != 0)
        fprintf(stderr, "jf__cfi_new_arch: %s\n", jf_last_error());
    return c;
}

/* The descriptions: the framed shape (JF_ENOTSUP without a frame record),
 * the frameless one, and the negative control's wrong one. 0 or -1. */
static int build_all(const target *t, jf_cfi *framed, jf_cfi *frameless, jf_cfi *wrong)
{
    if (build_frameless(frameless, t, 0) != 0)
        return -1;
    if (t->framed_size == 0) {
        if (build_framed(framed, t, 0) != JF_ENOTSUP) {
            fprintf(stderr, "FAIL %s: the standard frame is not JF_ENOTSUP\n", t->name);
            return -1;
        }
        return build_frameless(wrong, t, 1);
    }
    return build_framed(framed, t, 0) || build_framed(wrong, t, 1) ? -1 : 0;
}

int main(int argc, char **argv)
{
    const target *t = NULL;
    for (size_t i = 0; argc > 1 && i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(argv[1], targets[i].name) == 0)
            t = &targets[i];
    if (!t) {
        fprintf(stderr, "usage: %s aarch64|riscv64|ppc64le|s390x < guest-output\n", argv[0]);
        return 2;
    }
    static state states[MAX_STATES];
    size_t n = read_states(states, MAX_STATES), checked = 0;
    int bad = 0;
    jf_cfi *framed = new_cfi(t), *frameless = new_cfi(t), *wrong = new_cfi(t);
    if (!framed || !frameless || !wrong || build_all(t, framed, frameless, wrong) != 0) {
        fprintf(stderr, "FAIL building the descriptions: %s\n", jf_last_error());
        return 1;
    }
    if (t->framed_size)
        bad += check_function(t, states, n, "framed", framed, t->framed_size, 0, &checked);
    bad += check_function(t, states, n, "frameless", frameless, t->frameless_size, 0, &checked);
    size_t want = t->insns, ignored = 0;
    if (checked != want) {
        fprintf(stderr, "FAIL %s: %zu states recorded, expected %zu\n", t->name, checked, want);
        bad++;
    }
    /* The negative control: the wrong epilogue, or (no framed shape) the
     * wrong frameless offset, must be caught. */
    const char *control = t->framed_size ? "framed" : "frameless";
    size_t control_size = t->framed_size ? t->framed_size : t->frameless_size;
    int caught = check_function(t, states, n, control, wrong, control_size, 1, &ignored);
    if (caught == 0) {
        fprintf(stderr, "FAIL %s: negative control: a wrong %s description was not caught\n", t->name,
                control);
        bad++;
    }
    jf_cfi_free(framed);
    jf_cfi_free(frameless);
    jf_cfi_free(wrong);
    if (bad)
        return 1;
    printf("%s: every instruction of the %s unwinds to its caller (%zu states); wrong CFI caught at %d\n",
           t->name, t->framed_size ? "framed and frameless shapes" : "frameless shape", checked, caught);
    return 0;
}
