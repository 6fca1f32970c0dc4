/*
 * The CFI assembler against an independent reader: every program below is
 * built with the jf_cfi API for x86_64, aarch64 and riscv64, emitted in both
 * layouts, wrapped into a small ELF file and handed to elfutils' libdw. At
 * EVERY pc of the region, libdw's CFA rule and register rules must equal the
 * expectations written by hand next to each program; pcs outside the FDEs
 * must have no unwind information at all.
 *
 * Usage: test_cfi_oracle [OUTDIR]   (OUTDIR: also write each ELF file there,
 * for the readelf / llvm-dwarfdump check in check_cfi_tools.sh)
 */
#include "cfi.h"
#include "cfi_view.h"
#include "elf_wrap.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the test knows about each architecture, written independently of cfi.c. */
typedef struct arch_t {
    const char *name;
    jf__cfi_arch arch;
    uint16_t machine;
    unsigned sp, fp, ra, callee_saved;
    int64_t entry_cfa; /* CFA = SP + entry_cfa at entry */
    int ra_in_cie;     /* x86_64: RA at CFA-8 from the CIE */
    int push_saves;    /* the frame push itself stores FP/RA */
    int64_t fp_cfa;    /* CFA = FP + fp_cfa in a standard frame */
    size_t unit;       /* code alignment */
} arch_t;

static const arch_t arches[] = {
    {"x86_64", JF_CFI_ARCH_X86_64, 62, 7, 6, 16, 3, 8, 1, 1, 16, 1},
    {"aarch64", JF_CFI_ARCH_AARCH64, 183, 31, 29, 30, 19, 0, 0, 1, 16, 4},
    {"riscv64", JF_CFI_ARCH_RISCV64, 243, 2, 8, 1, 9, 0, 0, 0, 0, 1},
};

/* ---- expectations ------------------------------------------------------ */

enum { RULE_DEFAULT = 0, RULE_SAME = FRAME_RULE_SAME, RULE_AT = FRAME_RULE_AT, RULE_VAL = FRAME_RULE_VAL };
#define MAX_REGS 8
#define MAX_ROWS 32
#define MAX_FDES 4

typedef struct row {
    size_t from;
    unsigned cfa_reg;
    int64_t cfa_off;
    int kind[MAX_REGS];
    int64_t at[MAX_REGS];
} row;

typedef struct fde_expect {
    size_t start, end;
    row rows[MAX_ROWS];
    size_t n_rows;
} fde_expect;

typedef struct program {
    const char *name;
    const arch_t *a;
    jf_cfi *cfi;
    size_t size;
    unsigned regs[MAX_REGS]; /* registers whose rules are checked */
    size_t n_regs;
    fde_expect fdes[MAX_FDES];
    size_t n_fdes;
} program;

static int failures;
static int quiet; /* negative controls: count failures, print nothing */

static void fail(const program *p, const char *fmt, ...)
{
    va_list ap;
    if (quiet) {
        failures++;
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s/%s: ", p->a->name, p->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (++failures > 40) {
        fprintf(stderr, "too many failures\n");
        exit(1);
    }
}

#define OK(p, call)                                                      \
    do {                                                                 \
        int rc_ = (call);                                                \
        if (rc_ != 0)                                                    \
            fail(p, "%s returned %d (%s)", #call, rc_, jf_last_error()); \
    } while (0)

static size_t reg_index(program *p, unsigned reg)
{
    for (size_t i = 0; i < p->n_regs; i++)
        if (p->regs[i] == reg)
            return i;
    p->regs[p->n_regs] = reg;
    return p->n_regs++;
}

/* Expect a new FDE [start, end) in the entry state. */
static void fde(program *p, size_t start, size_t end)
{
    fde_expect *f = &p->fdes[p->n_fdes++];
    f->start = start;
    f->end = end;
    f->n_rows = 1;
    memset(&f->rows[0], 0, sizeof f->rows[0]);
    f->rows[0].from = start;
    f->rows[0].cfa_reg = p->a->sp;
    f->rows[0].cfa_off = p->a->entry_cfa;
}

/* Expect the state from `from` on to be the previous row's, changed below. */
static row *at_pc(program *p, size_t from)
{
    fde_expect *f = &p->fdes[p->n_fdes - 1];
    row *r = &f->rows[f->n_rows];
    *r = f->rows[f->n_rows - 1];
    r->from = from;
    f->n_rows++;
    return r;
}

static row *cur(program *p)
{
    fde_expect *f = &p->fdes[p->n_fdes - 1];
    return &f->rows[f->n_rows - 1];
}

static void cfa(program *p, unsigned reg, int64_t off)
{
    cur(p)->cfa_reg = reg;
    cur(p)->cfa_off = off;
}

static void saved_at(program *p, unsigned reg, int64_t off)
{
    size_t i = reg_index(p, reg);
    cur(p)->kind[i] = RULE_AT;
    cur(p)->at[i] = off;
}

static void value_at(program *p, unsigned reg, int64_t off)
{
    size_t i = reg_index(p, reg);
    cur(p)->kind[i] = RULE_VAL;
    cur(p)->at[i] = off;
}

static void rule(program *p, unsigned reg, int kind)
{
    cur(p)->kind[reg_index(p, reg)] = kind;
}

/* ---- the programs ------------------------------------------------------ */

static void frame_saves_expected(program *p)
{
    saved_at(p, p->a->fp, -16);
    saved_at(p, p->a->ra, -8);
}

/* Expected rows of a standard frame's prologue (the FDE already expected). */
static void expect_prologue(program *p, size_t after_push, size_t after_fp_set)
{
    const arch_t *a = p->a;
    reg_index(p, a->fp), reg_index(p, a->ra);
    at_pc(p, after_push), cfa(p, a->sp, 16);
    if (a->push_saves)
        frame_saves_expected(p);
    at_pc(p, after_fp_set), cfa(p, a->fp, a->fp_cfa);
    frame_saves_expected(p);
}

/* Standard frame with an epilogue. */
static void prog_framed(program *p)
{
    const arch_t *a = p->a;
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 0, f.end = 64, f.after_push = 4, f.after_fp_set = 8, f.epilogue_start = 48, f.after_pop = 56;
    p->size = 64;
    OK(p, jf_cfi_add_standard_frame(p->cfi, &f));
    fde(p, 0, 64);
    expect_prologue(p, 4, 8);
    at_pc(p, 48), cfa(p, a->sp, 16);
    at_pc(p, 56), cfa(p, a->sp, a->entry_cfa);
    rule(p, a->fp, RULE_DEFAULT);
    rule(p, a->ra, RULE_DEFAULT);
}

/* Standard frame without epilogue, in a larger region (the rest uncovered). */
static void prog_framed_open(program *p)
{
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 8, f.end = 40, f.after_push = 12, f.after_fp_set = 24;
    p->size = 48;
    OK(p, jf_cfi_add_standard_frame(p->cfi, &f));
    fde(p, 8, 40);
    expect_prologue(p, 12, 24);
}

static void prog_frameless(program *p)
{
    const arch_t *a = p->a;
    p->size = 64;
    OK(p, jf_cfi_add_frameless(p->cfi, 0, 48, 40));
    OK(p, jf_cfi_add_frameless(p->cfi, 48, 64, a->entry_cfa)); /* no rule needed */
    fde(p, 0, 48);
    reg_index(p, a->fp), reg_index(p, a->ra);
    cfa(p, a->sp, 40);
    fde(p, 48, 64);
}

/* Several FDEs added out of order, with gaps between them. */
static void prog_multi(program *p)
{
    const arch_t *a = p->a;
    p->size = 100;
    OK(p, jf_cfi_add_frameless(p->cfi, 80, 96, 48));
    jf_standard_frame f = JF_STANDARD_FRAME_INIT;
    f.start = 0, f.end = 32, f.after_push = 4, f.after_fp_set = 8;
    OK(p, jf_cfi_add_standard_frame(p->cfi, &f));
    OK(p, jf_cfi_add_frameless(p->cfi, 32, 64, 24));
    fde(p, 0, 32);
    expect_prologue(p, 4, 8);
    fde(p, 32, 64), cfa(p, a->sp, 24);
    fde(p, 80, 96), cfa(p, a->sp, 48);
}

/* remember/restore state, same_value, val_offset, restore, nested. */
static void prog_state(program *p)
{
    const arch_t *a = p->a;
    jf_cfi *c = p->cfi;
    p->size = 64;
    OK(p, jf_cfi_begin_fde(c, 0, 64));
    OK(p, jf_cfi_advance_to(c, 4));
    OK(p, jf_cfi_def_cfa_offset(c, 16));
    OK(p, jf_cfi_offset(c, a->fp, -16));
    OK(p, jf_cfi_advance_to(c, 8));
    OK(p, jf_cfi_remember_state(c));
    OK(p, jf_cfi_advance_to(c, 12));
    OK(p, jf_cfi_def_cfa_offset(c, 48));
    OK(p, jf_cfi_offset(c, a->callee_saved, -24));
    OK(p, jf_cfi_advance_to(c, 16));
    OK(p, jf_cfi_val_offset(c, a->callee_saved, -32));
    OK(p, jf_cfi_advance_to(c, 20));
    OK(p, jf_cfi_restore_state(c));
    OK(p, jf_cfi_advance_to(c, 24));
    OK(p, jf_cfi_remember_state(c));
    OK(p, jf_cfi_same_value(c, a->fp));
    OK(p, jf_cfi_advance_to(c, 28));
    OK(p, jf_cfi_remember_state(c));
    OK(p, jf_cfi_restore(c, a->fp));
    OK(p, jf_cfi_def_cfa(c, a->fp, 32));
    OK(p, jf_cfi_advance_to(c, 32));
    OK(p, jf_cfi_restore_state(c));
    OK(p, jf_cfi_advance_to(c, 36));
    OK(p, jf_cfi_restore_state(c));
    OK(p, jf_cfi_advance_to(c, 40));
    OK(p, jf_cfi_def_cfa(c, a->sp, a->entry_cfa));
    OK(p, jf_cfi_restore(c, a->fp));

    fde(p, 0, 64);
    reg_index(p, a->fp), reg_index(p, a->callee_saved);
    at_pc(p, 4), cfa(p, a->sp, 16), saved_at(p, a->fp, -16);
    at_pc(p, 12), cfa(p, a->sp, 48), saved_at(p, a->callee_saved, -24);
    at_pc(p, 16), value_at(p, a->callee_saved, -32);
    at_pc(p, 20), cfa(p, a->sp, 16), rule(p, a->callee_saved, RULE_DEFAULT);
    at_pc(p, 24), rule(p, a->fp, RULE_SAME);
    at_pc(p, 28), rule(p, a->fp, RULE_DEFAULT), cfa(p, a->fp, 32);
    at_pc(p, 32), rule(p, a->fp, RULE_SAME), cfa(p, a->sp, 16);
    at_pc(p, 36), saved_at(p, a->fp, -16);
    at_pc(p, 40), cfa(p, a->sp, a->entry_cfa), rule(p, a->fp, RULE_DEFAULT);
}

/* Every advance form, multi-byte LEB128s, extended and _sf opcodes. */
static void prog_large(program *p)
{
    const arch_t *a = p->a;
    jf_cfi *c = p->cfi;
    size_t u = a->unit;
    size_t l1 = 10 * u, l2 = l1 + 200 * u, l3 = l2 + 5000 * u, l4 = l3 + 100000 * u;
    p->size = l4 + 16 * u;
    OK(p, jf_cfi_begin_fde(c, 0, p->size));
    OK(p, jf_cfi_advance_to(c, l1)); /* advance_loc */
    OK(p, jf_cfi_def_cfa_offset(c, 1 << 20));
    OK(p, jf_cfi_offset(c, 70, -16));      /* offset_extended */
    OK(p, jf_cfi_offset(c, a->fp, -8000)); /* multi-byte factored offset */
    OK(p, jf_cfi_advance_to(c, l2));       /* advance_loc1 */
    OK(p, jf_cfi_offset(c, a->fp, 16));    /* offset_extended_sf */
    OK(p, jf_cfi_def_cfa_offset(c, -16));  /* def_cfa_offset_sf */
    OK(p, jf_cfi_advance_to(c, l3));       /* advance_loc2 */
    OK(p, jf_cfi_def_cfa(c, a->fp, -32));  /* def_cfa_sf */
    OK(p, jf_cfi_offset(c, 100, 8));       /* reg >= 64, negative factored */
    OK(p, jf_cfi_advance_to(c, l4));       /* advance_loc4 */
    OK(p, jf_cfi_def_cfa(c, a->sp, 300));
    OK(p, jf_cfi_restore(c, 70)); /* restore_extended */
    OK(p, jf_cfi_same_value(c, 100));

    fde(p, 0, p->size);
    reg_index(p, a->fp), reg_index(p, 70), reg_index(p, 100);
    at_pc(p, l1), cfa(p, a->sp, 1 << 20), saved_at(p, 70, -16), saved_at(p, a->fp, -8000);
    at_pc(p, l2), saved_at(p, a->fp, 16), cfa(p, a->sp, -16);
    at_pc(p, l3), cfa(p, a->fp, -32), saved_at(p, 100, 8);
    at_pc(p, l4), cfa(p, a->sp, 300), rule(p, 70, RULE_DEFAULT), rule(p, 100, RULE_SAME);
}

/* Raw instruction bytes (the trampoline path): gcc's x86_64 output for a
 * framed function, and equivalent hand-assembled bytes elsewhere. */
static void prog_raw(program *p)
{
    const arch_t *a = p->a;
    uint8_t cie[8], fde_insns[16];
    size_t n_cie = 0, n = 0;
    int64_t da = a->arch == JF_CFI_ARCH_RISCV64 ? -4 : -8;
    cie[n_cie++] = 0x0c, cie[n_cie++] = (uint8_t)a->sp, cie[n_cie++] = (uint8_t)a->entry_cfa;
    if (a->ra_in_cie)
        cie[n_cie++] = (uint8_t)(0x80 | a->ra), cie[n_cie++] = 1;
    cie[n_cie++] = 0;                           /* a nop, as assemblers pad */
    fde_insns[n++] = (uint8_t)(0x40 | 1);       /* advance 1 unit */
    fde_insns[n++] = 0x0e, fde_insns[n++] = 16; /* def_cfa_offset 16 */
    fde_insns[n++] = (uint8_t)(0x80 | a->fp), fde_insns[n++] = (uint8_t)(-16 / da);
    fde_insns[n++] = (uint8_t)(0x40 | 3);                   /* advance 3 units */
    fde_insns[n++] = 0x0d, fde_insns[n++] = (uint8_t)a->fp; /* def_cfa_register fp */
    fde_insns[n++] = (uint8_t)(0x40 | 6);                   /* advance 6 units */
    fde_insns[n++] = 0x0c, fde_insns[n++] = (uint8_t)a->sp, fde_insns[n++] = (uint8_t)a->entry_cfa;
    fde_insns[n++] = 0, fde_insns[n++] = 0;
    jf__raw_cie rc = {(uint32_t)a->unit, (int32_t)da, a->ra, cie, n_cie};
    size_t u = a->unit;
    p->size = 15 * u;
    jf_cfi_free(p->cfi);
    p->cfi = jf__cfi_from_raw(&rc, fde_insns, n, 0, p->size);
    if (!p->cfi) {
        fail(p, "jf__cfi_from_raw: %s", jf_last_error());
        return;
    }
    fde(p, 0, p->size);
    reg_index(p, a->fp), reg_index(p, a->ra);
    at_pc(p, u), cfa(p, a->sp, 16), saved_at(p, a->fp, -16);
    at_pc(p, 4 * u), cfa(p, a->fp, 16);
    at_pc(p, 10 * u), cfa(p, a->sp, a->entry_cfa);
}

typedef void (*program_fn)(program *p);
static const struct {
    const char *name;
    program_fn fn;
} programs[] = {
    {"framed", prog_framed},
    {"framed_open", prog_framed_open},
    {"frameless", prog_frameless},
    {"multi", prog_multi},
    {"state", prog_state},
    {"large", prog_large},
    {"raw", prog_raw},
};

/* ---- checking with libdw ------------------------------------------------- */

static const fde_expect *fde_at(const program *p, size_t pc)
{
    for (size_t i = 0; i < p->n_fdes; i++)
        if (pc >= p->fdes[i].start && pc < p->fdes[i].end)
            return &p->fdes[i];
    return NULL;
}

static const row *row_at(const fde_expect *f, size_t pc)
{
    const row *r = &f->rows[0];
    for (size_t i = 1; i < f->n_rows; i++)
        if (f->rows[i].from <= pc)
            r = &f->rows[i];
    return r;
}

/* Compare one register at one pc; RULE_DEFAULT means "as at the FDE's first pc". */
static void check_reg(const program *p, Dwarf_CFI *dcfi, uint64_t base, const fde_expect *f, const row *r,
                      size_t i, Dwarf_Frame *frame, size_t pc, const char *what)
{
    int64_t got_at = 0, want_at = r->at[i];
    int got = frame_rule(frame, p->regs[i], &got_at);
    int want = r->kind[i];
    if (want == RULE_DEFAULT) {
        Dwarf_Frame *entry;
        if (dwarf_cfi_addrframe(dcfi, base + f->start, &entry) != 0) {
            fail(p, "%s: no frame at FDE start", what);
            return;
        }
        want = frame_rule(entry, p->regs[i], &want_at);
        free(entry);
    }
    if (got != want || ((got == RULE_AT || got == RULE_VAL) && got_at != want_at))
        fail(p, "%s pc %zu reg %u: rule %d at %" PRId64 ", expected %d at %" PRId64, what, pc, p->regs[i],
             got, got_at, want, want_at);
}

static void check_pc(const program *p, Dwarf_CFI *dcfi, uint64_t base, size_t pc, const char *what)
{
    Dwarf_Frame *frame = NULL;
    int found = dwarf_cfi_addrframe(dcfi, base + pc, &frame) == 0;
    const fde_expect *f = fde_at(p, pc);
    if (!f) {
        if (found)
            fail(p, "%s pc %zu: unwind info where none was described", what, pc);
        free(frame);
        return;
    }
    if (!found) {
        fail(p, "%s pc %zu: libdw finds no frame: %s", what, pc, dwarf_errmsg(-1));
        return;
    }
    const row *r = row_at(f, pc);
    unsigned reg = 0;
    int64_t off = 0;
    if (frame_cfa(frame, &reg, &off) != 0 || reg != r->cfa_reg || off != r->cfa_off)
        fail(p, "%s pc %zu: CFA r%u%+" PRId64 ", expected r%u%+" PRId64, what, pc, reg, off, r->cfa_reg,
             r->cfa_off);
    for (size_t i = 0; i < p->n_regs; i++)
        check_reg(p, dcfi, base, f, r, i, frame, pc, what);
    free(frame);
}

/* The entry state comes from our CIE: check it against the ABI directly. */
static void check_entry_state(const program *p, Dwarf_CFI *dcfi, uint64_t base, const char *what)
{
    Dwarf_Frame *frame;
    int64_t at = 0;
    if (dwarf_cfi_addrframe(dcfi, base + p->fdes[0].start, &frame) != 0)
        return; /* reported by check_pc */
    int ra = frame_rule(frame, p->a->ra, &at);
    if (p->a->ra_in_cie ? !(ra == RULE_AT && at == -8) : ra == RULE_AT)
        fail(p, "%s: return address rule at entry is %d at %" PRId64, what, ra, at);
    free(frame);
}

static void write_file(const char *dir, const char *name, const uint8_t *buf, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

/* Negative controls corrupt the image between emission and checking. */
static void (*corrupt)(uint8_t *img, const jf__eh_image *out);

/* Emit p in one layout, wrap it, check every pc with libdw. */
static void check_layout(const program *p, jf__eh_layout layout, int with_hdr, const char *outdir)
{
    uint64_t code_addr = layout == JF_EH_LAYOUT_ABSOLUTE ? 0x10000000 : 0;
    uint64_t code_size = p->size + (layout == JF_EH_LAYOUT_ABSOLUTE ? 0 : 8); /* jitdump nonce */
    /* absolute: put the image below the code, so pc-relative fields are positive */
    uint64_t image_addr = layout == JF_EH_LAYOUT_ABSOLUTE ? 0x0ff00000 : (code_size + 7) & ~(uint64_t)7;
    const char *what = layout == JF_EH_LAYOUT_ABSOLUTE ? (with_hdr ? "absolute+hdr" : "absolute")
                                                       : (with_hdr ? "perf+hdr" : "perf");
    size_t cap = jf__cfi_max_image_size(p->cfi);
    uint8_t *img = malloc(cap), *elf = malloc(cap + 1024);
    jf__eh_image out;
    int rc = jf__cfi_emit(p->cfi, layout, code_addr, code_size, image_addr, img, cap, &out);
    if (rc != 0) {
        fail(p, "%s: emit: %s", what, jf_last_error());
        goto done;
    }
    if (corrupt)
        corrupt(img, &out);
    elf_wrap_input in = {p->a->machine, code_addr,         code_size,    image_addr,
                         img,           out.eh_frame_size, out.hdr_size, with_hdr};
    size_t n = elf_wrap(&in, elf, cap + 1024);
    if (outdir) {
        char name[128];
        snprintf(name, sizeof name, "%s-%s-%s.elf", p->a->name, p->name, what);
        write_file(outdir, name, elf, n);
    }
    Elf *e = elf_memory((char *)elf, n);
    Dwarf_CFI *dcfi = e ? dwarf_getcfi_elf(e) : NULL;
    if (!dcfi) {
        fail(p, "%s: libdw cannot read the CFI: %s", what, dwarf_errmsg(-1));
    } else {
        check_entry_state(p, dcfi, code_addr, what);
        for (size_t pc = 0; pc < p->size + 8; pc++)
            check_pc(p, dcfi, code_addr, pc, what);
        dwarf_cfi_end(dcfi);
    }
    if (e)
        elf_end(e);
done:
    free(img);
    free(elf);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* x86_64 "framed": the operand of the FDE's first def_cfa_offset (16). */
static void corrupt_first_cfa_offset(uint8_t *img, const jf__eh_image *out)
{
    (void)out;
    img[4 + rd32(img) + 17 + 2] += 8;
}

/* The first .eh_frame_hdr row's start. */
static void corrupt_first_hdr_row(uint8_t *img, const jf__eh_image *out)
{
    img[out->eh_frame_size + 12] += 4;
}

/* The checks must be able to fail: corrupt one byte of a correct image and
 * expect libdw to disagree with the expectations somewhere. */
static void negative_control(const char *what, void (*corruption)(uint8_t *, const jf__eh_image *),
                             int with_hdr)
{
    program *p = calloc(1, sizeof *p);
    p->name = what;
    p->a = &arches[0];
    if (jf__cfi_new_arch(p->a->arch, &p->cfi) == 0) {
        prog_framed(p);
        int before = failures;
        quiet = 1, corrupt = corruption;
        check_layout(p, JF_EH_LAYOUT_ABSOLUTE, with_hdr, NULL);
        quiet = 0, corrupt = NULL;
        int detected = failures - before;
        failures = before;
        if (!detected)
            fail(p, "negative control: the corruption went unnoticed");
    }
    jf_cfi_free(p->cfi);
    free(p);
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : NULL;
    elf_version(EV_CURRENT);
    for (size_t ai = 0; ai < sizeof arches / sizeof arches[0]; ai++) {
        for (size_t pi = 0; pi < sizeof programs / sizeof programs[0]; pi++) {
            program *p = calloc(1, sizeof *p);
            p->name = programs[pi].name;
            p->a = &arches[ai];
            if (jf__cfi_new_arch(p->a->arch, &p->cfi) != 0) {
                fail(p, "jf__cfi_new_arch: %s", jf_last_error());
                free(p);
                continue;
            }
            programs[pi].fn(p);
            if (p->cfi && jf__cfi_validate(p->cfi, p->size) != 0)
                fail(p, "validate: %s", jf_last_error());
            else if (p->cfi) {
                check_layout(p, JF_EH_LAYOUT_ABSOLUTE, 1, outdir);
                check_layout(p, JF_EH_LAYOUT_ABSOLUTE, 0, outdir);
                check_layout(p, JF_EH_LAYOUT_PERF_JITDUMP, 1, outdir);
                check_layout(p, JF_EH_LAYOUT_PERF_JITDUMP, 0, outdir);
            }
            jf_cfi_free(p->cfi);
            free(p);
        }
    }
    negative_control("corrupt-rule", corrupt_first_cfa_offset, 0);
    negative_control("corrupt-hdr-row", corrupt_first_hdr_row, 1);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("all CFI programs match libdw at every pc (3 architectures, 2 layouts, with and without hdr)\n");
    return 0;
}
