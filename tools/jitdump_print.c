/*
 * `jitframes dump` for jitdumps: every record decoded, the unwinding info
 * down to the CFA rule of every pc range (code offsets).
 */
#include "jitdump_reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct printer {
    FILE *out;
    uint32_t elf_mach;
} printer;

static const char *machine_name(uint32_t m)
{
    switch (m) {
    case 3: return "i386";
    case 40: return "arm";
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 243: return "riscv";
    default: return "?";
    }
}

static void print_header(void *ctx, const jd_header *h)
{
    printer *p = ctx;
    p->elf_mach = h->elf_mach;
    fprintf(p->out,
            "header: %s-endian, version %u, size %u, elf_mach %u (%s), reserved %u, pid %u, "
            "timestamp %" PRIu64 ", flags 0x%" PRIx64 "\n",
            h->big_endian ? "big" : "little", h->version, h->total_size, h->elf_mach,
            machine_name(h->elf_mach), h->reserved, h->pid, h->timestamp, h->flags);
}

static void print_reg(FILE *out, uint32_t mach, uint64_t reg)
{
    const char *name = ehf_register_name(mach, reg);
    if (name)
        fputs(name, out);
    else
        fprintf(out, "r%" PRIu64, reg);
}

static void print_row(void *ctx, const ehf_fde *fde, const ehf_row *row)
{
    (void)fde;
    printer *p = ctx;
    fprintf(p->out, "        [0x%" PRIx64 ", 0x%" PRIx64 ")  cfa=", (uint64_t)row->start, (uint64_t)row->end);
    if (row->cfa_is_expression) {
        fputs("expr", p->out);
    } else {
        print_reg(p->out, p->elf_mach, row->cfa_reg);
        fprintf(p->out, "%+" PRId64, row->cfa_offset);
    }
    for (uint64_t r = 0; r < EHF_MAX_REGS; r++) {
        const ehf_rule *rule = &row->regs[r];
        if (rule->kind == EHF_RULE_UNSPECIFIED)
            continue;
        fputs("  ", p->out);
        print_reg(p->out, p->elf_mach, r);
        switch (rule->kind) {
        case EHF_RULE_UNDEFINED: fputs("=undefined", p->out); break;
        case EHF_RULE_SAME_VALUE: fputs("=same", p->out); break;
        case EHF_RULE_OFFSET: fprintf(p->out, "=[cfa%+" PRId64 "]", rule->value); break;
        case EHF_RULE_VAL_OFFSET: fprintf(p->out, "=cfa%+" PRId64, rule->value); break;
        case EHF_RULE_REGISTER:
            fputc('=', p->out);
            print_reg(p->out, p->elf_mach, (uint64_t)rule->value);
            break;
        case EHF_RULE_EXPRESSION: fputs("=[expr]", p->out); break;
        default: fputs("=expr", p->out); break;
        }
    }
    fputc('\n', p->out);
}

static void print_unwind(printer *p, const jd_unwind *u)
{
    fprintf(p->out, "    unwinding_size %" PRIu64 " (.eh_frame %" PRIu64 ", .eh_frame_hdr %" PRIu64
            "), mapped_size %" PRIu64 "\n", u->unwinding_size, u->eh_frame_size, u->eh_frame_hdr_size,
            u->mapped_size);
    const ehf_table *t = u->table;
    if (!t)
        return;
    for (size_t i = 0; i < t->n_cies; i++) {
        const ehf_cie *c = &t->cies[i];
        fprintf(p->out, "    CIE @%" PRIu64 " (%" PRIu64 " bytes): version %u, \"%s\", code_align %" PRIu64
                ", data_align %" PRId64 ", return address ", c->offset, c->size, c->version,
                c->augmentation, c->code_align, c->data_align);
        print_reg(p->out, p->elf_mach, c->ra_reg);
        fprintf(p->out, ", FDE encoding 0x%02x\n", c->fde_encoding);
    }
    for (size_t i = 0; i < t->n_fdes; i++) {
        const ehf_fde *f = &t->fdes[i];
        fprintf(p->out, "    FDE @%" PRIu64 " (%" PRIu64 " bytes, CIE @%" PRIu64 "): code [0x%" PRIx64
                ", 0x%" PRIx64 ")\n", f->offset, f->size, t->cies[f->cie].offset, (uint64_t)f->pc_begin,
                (uint64_t)f->pc_begin + f->pc_range);
        jft_error err = {0};
        if (ehf_rows(u->eh_frame, (size_t)u->eh_frame_size, &u->layout, t, i, print_row, p, &err))
            fprintf(p->out, "        (%s)\n", err.msg);
    }
}

static void print_record(void *ctx, const jd_record *r, uint32_t elf_mach)
{
    printer *p = ctx;
    p->elf_mach = elf_mach;
    fprintf(p->out, "0x%08" PRIx64 " #%" PRIu64 " %s size %u ts %" PRIu64 "\n", r->offset, r->index,
            jd_record_name(r->id), r->total_size, r->timestamp);
    switch (r->id) {
    case JD_CODE_LOAD: {
        const jd_load *l = &r->u.load;
        fprintf(p->out, "    pid %u tid %u vma 0x%" PRIx64 " code_addr 0x%" PRIx64 " code_size %" PRIu64
                " code_index %" PRIu64 " name \"%s\"\n", l->pid, l->tid, l->vma, l->code_addr,
                l->code_size, l->code_index, l->name ? l->name : "");
        break;
    }
    case JD_CODE_MOVE: {
        const jd_move *m = &r->u.move;
        fprintf(p->out, "    pid %u tid %u vma 0x%" PRIx64 " 0x%" PRIx64 " -> 0x%" PRIx64 " code_size %" PRIu64
                " code_index %" PRIu64 "\n", m->pid, m->tid, m->vma, m->old_code_addr, m->new_code_addr,
                m->code_size, m->code_index);
        break;
    }
    case JD_CODE_DEBUG_INFO: {
        const jd_debug *d = &r->u.debug;
        fprintf(p->out, "    code_addr 0x%" PRIx64 ", %" PRIu64 " entries\n", d->code_addr, d->nr_entry);
        for (uint64_t i = 0; d->lines && i < d->nr_entry; i++)
            fprintf(p->out, "      0x%" PRIx64 " (+0x%" PRIx64 ")  %s:%u%s\n", d->lines[i].addr,
                    d->lines[i].addr - d->code_addr, d->lines[i].file ? d->lines[i].file : "?",
                    d->lines[i].lineno, d->lines[i].discrim ? " (discriminator)" : "");
        break;
    }
    case JD_CODE_UNWINDING_INFO:
        print_unwind(p, &r->u.unwind);
        break;
    default:
        break;
    }
}

int jd_dump(const uint8_t *buf, size_t len, void *out_file, jd_summary *summary, jft_error *err)
{
    printer p = {out_file, 0};
    jd_visitor v = {print_header, print_record};
    return jd_walk(buf, len, &v, &p, 1, summary, err);
}
