/*
 * The CFI that src/host/cfi-extract takes from each architecture's template
 * equals what libdw reads from the assembled template, at every pc.
 *
 * For each architecture, the input is a program linking src/arch/<arch>.S
 * as assembled (the step programs): libdw reads its .eh_frame directly. (The
 * unlinked object is not a fair oracle on riscv64: binutils 2.40 leaves the
 * FDE's range and some advances to relocations there, so libdw would read
 * zeros; linking resolves them, and nothing can relax the template.) The
 * other side is the generated header taken through the runtime's own path:
 * jf__cfi_from_raw, jf__cfi_emit, wrapped in a minimal ELF for libdw.
 * At every pc both must give the same row range, CFA rule and rule for every
 * register. The code bytes must match too, apart from the slot reference.
 * A negative control corrupts one CFA instruction and expects a mismatch.
 *
 * Usage: test_template_cfi ARCH=PROGRAM...
 */
#include "cfi.h"

#include <elfutils/libdw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_wrap.h"
#include "template_aarch64.h"
#include "template_ppc64le.h"
#include "template_riscv64.h"
#include "template_s390x.h"
#include "template_x86_64.h"

#define TEMPLATE_SYMBOL "jitframes_trampoline_template"
enum { MAX_REG = 66 }; /* ppc64le's return address column is 65 (LR) */

static const jf__template *const templates[] = {&jf__template_x86_64, &jf__template_aarch64,
                                                &jf__template_riscv64, &jf__template_ppc64le,
                                                &jf__template_s390x};

static int failures;

static void fail(const char *arch, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *arch, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", arch);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

/* One libdw row, reduced to comparable numbers. */
typedef struct row {
    uint64_t start, end; /* relative to the template */
    int ra;
    size_t n_cfa;
    Dwarf_Op cfa[4];
    int reg_rc[MAX_REG];
    size_t reg_n[MAX_REG];
    int reg_null[MAX_REG];
    Dwarf_Op reg[MAX_REG][4];
} row;

static int read_row(Dwarf_CFI *cfi, uint64_t base, uint64_t pc, row *r)
{
    Dwarf_Frame *frame;
    memset(r, 0, sizeof *r);
    if (dwarf_cfi_addrframe(cfi, base + pc, &frame) != 0)
        return -1;
    Dwarf_Addr start, end;
    bool signal;
    r->ra = dwarf_frame_info(frame, &start, &end, &signal);
    r->start = start - base;
    r->end = end - base;
    Dwarf_Op *ops;
    if (dwarf_frame_cfa(frame, &ops, &r->n_cfa) == 0 && r->n_cfa <= 4)
        memcpy(r->cfa, ops, r->n_cfa * sizeof *ops);
    for (int reg = 0; reg < MAX_REG; reg++) {
        Dwarf_Op mem[3], *rops = NULL;
        r->reg_rc[reg] = dwarf_frame_register(frame, reg, mem, &rops, &r->reg_n[reg]);
        r->reg_null[reg] = rops == NULL;
        if (r->reg_rc[reg] == 0 && rops && r->reg_n[reg] <= 4)
            memcpy(r->reg[reg], rops, r->reg_n[reg] * sizeof *rops);
    }
    free(frame);
    return 0;
}

static int same_ops(const Dwarf_Op *a, const Dwarf_Op *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].atom != b[i].atom || a[i].number != b[i].number || a[i].number2 != b[i].number2)
            return 0;
    return 1;
}

/* Compare two rows; returns a description of the first difference or NULL. */
static const char *row_difference(const row *a, const row *b, int *reg_out)
{
    if (a->start != b->start || a->end != b->end)
        return "row range";
    if (a->ra != b->ra)
        return "return address column";
    if (a->n_cfa != b->n_cfa || !same_ops(a->cfa, b->cfa, a->n_cfa))
        return "CFA rule";
    for (int reg = 0; reg < MAX_REG; reg++) {
        *reg_out = reg;
        if (a->reg_rc[reg] != b->reg_rc[reg] || a->reg_n[reg] != b->reg_n[reg] ||
            a->reg_null[reg] != b->reg_null[reg] || !same_ops(a->reg[reg], b->reg[reg], a->reg_n[reg]))
            return "register rule";
    }
    return NULL;
}

/* The linked program: its ELF, the template's address and bytes. */
typedef struct linked {
    int fd;
    Elf *elf;
    uint64_t addr, size;
    const uint8_t *code;
} linked;

static int find_template(linked *l)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(l->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *name;
            if (gelf_getsym(data, (int)i, &sym) && (name = elf_strptr(l->elf, sh.sh_link, sym.st_name)) &&
                strcmp(name, TEMPLATE_SYMBOL) == 0) {
                l->addr = sym.st_value;
                l->size = sym.st_size;
                Elf_Scn *text = elf_getscn(l->elf, sym.st_shndx);
                GElf_Shdr tsh;
                Elf_Data *td = text ? elf_getdata(text, NULL) : NULL;
                if (!td || !gelf_getshdr(text, &tsh) || l->addr < tsh.sh_addr ||
                    l->addr + l->size > tsh.sh_addr + td->d_size)
                    return -1;
                l->code = (const uint8_t *)td->d_buf + (l->addr - tsh.sh_addr);
                return 0;
            }
        }
    }
    return -1;
}

/* Bytes of the template outside the relocated slot reference match. */
static void check_code(const jf__template *t, const linked *l)
{
    if (l->size != t->code_size) {
        fail(t->arch, "linked template has %llu bytes, the header %zu", (unsigned long long)l->size,
             t->code_size);
        return;
    }
    for (size_t i = 0; i < t->code_size; i++) {
        int relocated = (i >= t->slot.at && i < t->slot.at + 4) ||
                        (t->slot.at_lo && i >= t->slot.at_lo && i < t->slot.at_lo + 4);
        if (!relocated && l->code[i] != t->code[i]) {
            fail(t->arch, "code byte %zu differs: linked 0x%02x, header 0x%02x", i, l->code[i], t->code[i]);
            return;
        }
    }
}

/* libdw over the runtime's emitted image of the header's CFI. */
typedef struct emitted {
    uint8_t *image, *elf;
    Elf *e;
    Dwarf_CFI *cfi;
} emitted;

static int emit_from_header(const jf__template *t, const uint8_t *fde_insns, uint64_t base, emitted *out)
{
    memset(out, 0, sizeof *out);
    jf__raw_cie cie = {(uint32_t)t->cie.code_align, (int32_t)t->cie.data_align, (uint32_t)t->cie.ra_register,
                       t->cie.insns, t->cie.n_insns};
    struct jf_cfi *cfi = jf__cfi_from_raw(&cie, fde_insns, t->n_fde_insns, 0, t->code_size);
    if (!cfi) {
        fail(t->arch, "jf__cfi_from_raw: %s", jf_last_error());
        return -1;
    }
    size_t cap = jf__cfi_max_image_size(cfi);
    out->image = malloc(cap);
    out->elf = malloc(cap + 1024);
    jf__eh_image img;
    uint64_t image_addr = base - 0x100000;
    int rc = jf__cfi_emit(cfi, JF_EH_LAYOUT_ABSOLUTE, base, t->code_size, image_addr, out->image, cap, &img);
    jf_cfi_free(cfi);
    if (rc) {
        fail(t->arch, "jf__cfi_emit: %s", jf_last_error());
        return -1;
    }
    elf_wrap_input in = {t->elf_machine, base, t->code_size, image_addr, out->image, img.eh_frame_size,
                         img.hdr_size,   1};
    size_t n = elf_wrap(&in, out->elf, cap + 1024);
    out->e = n ? elf_memory((char *)out->elf, n) : NULL;
    out->cfi = out->e ? dwarf_getcfi_elf(out->e) : NULL;
    if (!out->cfi) {
        fail(t->arch, "libdw cannot read the emitted CFI: %s", dwarf_errmsg(-1));
        return -1;
    }
    return 0;
}

static void emitted_free(emitted *e)
{
    if (e->cfi)
        dwarf_cfi_end(e->cfi);
    if (e->e)
        elf_end(e->e);
    free(e->image);
    free(e->elf);
}

/* Compare at every pc; returns the number of pcs that differ. */
static int compare_every_pc(const jf__template *t, const linked *l, const uint8_t *fde_insns, int quiet)
{
    Dwarf_CFI *orig = dwarf_getcfi_elf(l->elf);
    if (!orig) {
        fail(t->arch, "libdw cannot read the program's .eh_frame: %s", dwarf_errmsg(-1));
        return 1;
    }
    const uint64_t base = 0x40000000;
    emitted em;
    int differing = 0;
    if (emit_from_header(t, fde_insns, base, &em) == 0) {
        static row a, b;
        for (uint64_t pc = 0; pc < t->code_size; pc++) {
            int reg = -1;
            const char *diff = NULL;
            if (read_row(orig, l->addr, pc, &a) != 0)
                diff = "libdw finds no row in the assembled template";
            else if (read_row(em.cfi, base, pc, &b) != 0)
                diff = "libdw finds no row in the extracted CFI";
            else
                diff = row_difference(&a, &b, &reg);
            if (diff) {
                differing++;
                if (!quiet)
                    fail(t->arch, "pc %llu: %s differs (register %d)", (unsigned long long)pc, diff, reg);
            }
        }
    } else {
        differing = 1;
    }
    emitted_free(&em);
    dwarf_cfi_end(orig);
    return differing;
}

static void check_arch(const jf__template *t, const char *path)
{
    linked l = {.fd = open(path, O_RDONLY)};
    l.elf = l.fd >= 0 ? elf_begin(l.fd, ELF_C_READ, NULL) : NULL;
    if (!l.elf || find_template(&l) != 0) {
        fail(t->arch, "cannot read %s or find " TEMPLATE_SYMBOL " in it", path);
        goto done;
    }
    check_code(t, &l);
    if (compare_every_pc(t, &l, t->fde_insns, 0) == 0)
        printf("ok %s: %zu pcs, CFA and %d register rules equal\n", t->arch, t->code_size, MAX_REG);

    /* Negative control: bump the first def_cfa_offset operand (0x0e N). */
    uint8_t *bad = malloc(t->n_fde_insns);
    memcpy(bad, t->fde_insns, t->n_fde_insns);
    size_t k = 0;
    while (k + 1 < t->n_fde_insns && bad[k] != 0x0e)
        k++;
    if (k + 1 >= t->n_fde_insns) {
        fail(t->arch, "negative control: no def_cfa_offset in the FDE");
    } else {
        bad[k + 1] = (uint8_t)(bad[k + 1] + 8);
        if (compare_every_pc(t, &l, bad, 1) == 0)
            fail(t->arch, "negative control: corrupted CFI still compared equal");
        else
            printf("ok %s: negative control detected\n", t->arch);
    }
    free(bad);
done:
    if (l.elf)
        elf_end(l.elf);
    if (l.fd >= 0)
        close(l.fd);
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    int checked = 0;
    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        for (size_t k = 0; eq && k < sizeof templates / sizeof templates[0]; k++) {
            if (strncmp(argv[i], templates[k]->arch, (size_t)(eq - argv[i])) == 0 &&
                strlen(templates[k]->arch) == (size_t)(eq - argv[i])) {
                check_arch(templates[k], eq + 1);
                checked++;
            }
        }
    }
    if (checked != argc - 1 || checked == 0) {
        printf("usage: %s ARCH=PROGRAM... (ARCH: x86_64, aarch64, riscv64, ppc64le, s390x)\n", argv[0]);
        return 2;
    }
    return failures ? 1 : 0;
}
