/* Printing a decoded .eh_frame: CIEs, FDEs and the CFA rule of every pc
 * range (shared by the jitdump and symfile dumps). */
#include "eh_frame_print.h"

#include <inttypes.h>

typedef struct row_printer {
    FILE *out;
    uint32_t mach;
} row_printer;

static void print_reg(FILE *out, uint32_t mach, uint64_t reg)
{
    const char *name = ehf_register_name(mach, reg);
    if (name)
        fputs(name, out);
    else
        fprintf(out, "r%" PRIu64, reg);
}

static void print_rule(FILE *out, uint32_t mach, const ehf_rule *rule)
{
    switch (rule->kind) {
    case EHF_RULE_UNDEFINED: fputs("=undefined", out); break;
    case EHF_RULE_SAME_VALUE: fputs("=same", out); break;
    case EHF_RULE_OFFSET: fprintf(out, "=[cfa%+" PRId64 "]", rule->value); break;
    case EHF_RULE_VAL_OFFSET: fprintf(out, "=cfa%+" PRId64, rule->value); break;
    case EHF_RULE_REGISTER:
        fputc('=', out);
        print_reg(out, mach, (uint64_t)rule->value);
        break;
    case EHF_RULE_EXPRESSION: fputs("=[expr]", out); break;
    default: fputs("=expr", out); break;
    }
}

static void print_row(void *ctx, const ehf_fde *fde, const ehf_row *row)
{
    (void)fde;
    row_printer *p = ctx;
    fprintf(p->out, "        [0x%" PRIx64 ", 0x%" PRIx64 ")  cfa=", (uint64_t)row->start, (uint64_t)row->end);
    if (row->cfa_is_expression) {
        fputs("expr", p->out);
    } else {
        print_reg(p->out, p->mach, row->cfa_reg);
        fprintf(p->out, "%+" PRId64, row->cfa_offset);
    }
    for (uint64_t r = 0; r < EHF_MAX_REGS; r++) {
        if (row->regs[r].kind == EHF_RULE_UNSPECIFIED)
            continue;
        fputs("  ", p->out);
        print_reg(p->out, p->mach, r);
        print_rule(p->out, p->mach, &row->regs[r]);
    }
    fputc('\n', p->out);
}

void ehf_print_table(FILE *out, uint32_t mach, const uint8_t *data, size_t len, const ehf_layout *layout,
                     const ehf_table *t)
{
    for (size_t i = 0; i < t->n_cies; i++) {
        const ehf_cie *c = &t->cies[i];
        fprintf(out,
                "    CIE @%" PRIu64 " (%" PRIu64 " bytes): version %u, \"%s\", code_align %" PRIu64
                ", data_align %" PRId64 ", return address ",
                c->offset, c->size, c->version, c->augmentation, c->code_align, c->data_align);
        print_reg(out, mach, c->ra_reg);
        fprintf(out, ", FDE encoding 0x%02x\n", c->fde_encoding);
    }
    row_printer p = {out, mach};
    for (size_t i = 0; i < t->n_fdes; i++) {
        const ehf_fde *f = &t->fdes[i];
        fprintf(out,
                "    FDE @%" PRIu64 " (%" PRIu64 " bytes, CIE @%" PRIu64 "): code [0x%" PRIx64 ", 0x%" PRIx64
                ")\n",
                f->offset, f->size, t->cies[f->cie].offset, (uint64_t)f->pc_begin,
                (uint64_t)f->pc_begin + f->pc_range);
        jft_error err = {0};
        if (ehf_rows(data, len, layout, t, i, print_row, &p, &err))
            fprintf(out, "        (%s)\n", err.msg);
    }
}
